"""Euclidean space and the unit sphere."""

import numpy as np

from ._base import Manifold

__all__ = ["Euclidean", "Sphere"]


def _shape_from(shape, cls):
    if len(shape) == 0:
        raise TypeError(f"{cls} needs at least one dimension, e.g. {cls}(3) or {cls}(3, 2)")
    for s in shape:
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 1:
            raise ValueError(f"{cls} dimensions must be positive integers, got {shape}")
    return tuple(int(s) for s in shape)


class Euclidean(Manifold):
    """Euclidean space of arrays of a given shape, e.g. ``Euclidean(3)`` or ``Euclidean(3, 2)``.

    Retraction and exponential map are ``x + u``; transport is the identity.
    """

    def __init__(self, *shape):
        shape = _shape_from(shape, "Euclidean")
        dims = ", ".join(map(str, shape))
        super().__init__(f"Euclidean({dims})", shape, int(np.prod(shape)))

    def projection(self, x, u):
        return np.array(u, dtype=float)

    def euclidean_to_riemannian_gradient(self, x, egrad):
        return egrad

    def transport(self, x1, x2, u):
        return u

    def retraction(self, x, u):
        return x + u

    exp = retraction

    def log(self, x, y):
        return y - x

    def dist(self, x, y):
        return float(np.linalg.norm(y - x))

    def random_point(self, rng=None):
        return np.random.default_rng(rng).standard_normal(self.shape)


class Sphere(Manifold):
    r"""The unit sphere :math:`\{x : \|x\|_F = 1\}` in the space of arrays of a given shape.

    Parameters
    ----------
    *shape : int
        ``Sphere(n)`` for vectors, ``Sphere(m, n)`` for matrices of unit Frobenius norm.
    retraction : {"projection", "exp"}
        ``"projection"`` (default) normalises ``x + u``; ``"exp"`` follows the great circle.
    """

    retractions = ("projection", "exp")

    def __init__(self, *shape, retraction=None):
        shape = _shape_from(shape, "Sphere")
        dims = ", ".join(map(str, shape))
        super().__init__(f"Sphere({dims})", shape, int(np.prod(shape)) - 1, retraction)

    def projection(self, x, u):
        return u - np.vdot(x, u) * x

    def retraction(self, x, u):
        if self.retraction_name == "exp":
            return self.exp(x, u)
        y = x + u
        return y / np.linalg.norm(y)

    def exp(self, x, u):
        t = np.linalg.norm(u)
        if t == 0.0:
            return np.array(x, dtype=float)
        y = np.cos(t) * x + (np.sin(t) / t) * u
        return y / np.linalg.norm(y)

    def log(self, x, y):
        u = self.projection(x, y - x)
        nu = np.linalg.norm(u)
        if nu == 0.0:
            return np.zeros(self.shape)
        return self.dist(x, y) * u / nu

    def dist(self, x, y):
        # atan2 form: accurate for nearby and for nearly antipodal points
        return float(np.arctan2(np.linalg.norm(y - np.vdot(x, y) * x), np.vdot(x, y)))

    def random_point(self, rng=None):
        x = np.random.default_rng(rng).standard_normal(self.shape)
        return x / np.linalg.norm(x)

    def _off_manifold(self, x, atol):
        err = abs(float(np.linalg.norm(x)) - 1.0)
        return f"| ||x|| - 1 | = {err:.3e} > atol = {atol:g}" if err > atol else ""
