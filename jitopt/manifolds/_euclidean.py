"""Euclidean space and the unit sphere."""

import math

import numpy as np

from ..validation import check_rng
from ._base import Manifold
from ._kernels import SPHERE

__all__ = ["Euclidean", "Sphere"]


def _check_k(k, cls):
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"{cls}: k (the number of copies) must be a positive integer, "
                         f"got {k!r}")
    return int(k)


def _shape_from(shape, cls):
    if len(shape) == 0:
        raise TypeError(f"{cls} needs at least one dimension, e.g. {cls}(3) or {cls}(3, 2)")
    for s in shape:
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 1:
            raise ValueError(f"{cls} dimensions must be positive integers, got {shape}")
    return tuple(int(s) for s in shape)


class _Flat:
    """The geometry of a linear space: straight lines are the geodesics."""

    linear = True

    def retraction(self, x, u):
        return x + u

    exp = retraction

    def log(self, x, y):
        return y - x

    def dist(self, x, y):
        return float(np.linalg.norm(y - x))


class Euclidean(_Flat, Manifold):
    """Euclidean space of arrays of a given shape, e.g. ``Euclidean(3)`` or ``Euclidean(3, 2)``.

    Retraction and exponential map are ``x + u``; transport is the identity.

    Parameters
    ----------
    *shape : int
        The shape of the points (or one tuple of it).

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.manifolds import Euclidean
    >>> m = Euclidean(3, 2)
    >>> m.shape, m.dim
    ((3, 2), 6)
    >>> m.retraction(np.zeros((3, 2)), np.ones((3, 2)))[0]
    array([1., 1.])
    """

    def __init__(self, *shape):
        shape = _shape_from(shape, "Euclidean")
        dims = ", ".join(map(str, shape))
        super().__init__(f"Euclidean({dims})", shape, int(np.prod(shape)))

    def projection(self, x, u):
        return np.array(u, dtype=float)

    def euclidean_to_riemannian_gradient(self, x, egrad):
        return egrad

    def euclidean_to_riemannian_hessian(self, x, egrad, ehess, u):
        return ehess

    #: the Wolfe searches try any step length
    max_step = math.inf

    def transport(self, x1, x2, u):
        return u

    def random_point(self, rng=None):
        return check_rng(rng).standard_normal(self.shape)


class Sphere(Manifold):
    r"""The unit sphere :math:`\{x : \|x\|_F = 1\}` in the space of arrays of a given shape,
    or ``k`` copies of it.

    Parameters
    ----------
    *shape : int
        ``Sphere(n)`` for vectors, ``Sphere(m, n)`` for matrices of unit Frobenius norm.
    k : int
        Number of copies: points of shape ``shape`` for ``k=1`` (default), ``(k, *shape)``
        for ``k > 1``, each slice on the sphere (the product metric).
    retraction : {"projection", "exp"}
        ``"projection"`` (default) normalises ``x + u``; ``"exp"`` follows the great circle.
        Where ``x + u = 0`` (``u = -x``) the projection retraction takes the exponential
        map instead, so that it always returns a point of the sphere; a NaN in ``u`` raises
        a ``ValueError``.

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.manifolds import Sphere
    >>> M = Sphere(3, k=2)
    >>> x = M.random_point(rng=0)
    >>> M.shape, np.round(np.linalg.norm(x, axis=1), 12)
    ((2, 3), array([1., 1.]))
    """

    retractions = ("projection", "exp")

    @property
    def kernel_code(self):
        return SPHERE if len(self.shape) == 1 and self.retraction_name == "projection" else None

    @property
    def typical_dist(self):
        return float(np.pi)

    def __init__(self, *shape, retraction=None, k=1):
        shape = _shape_from(shape, "Sphere")
        self.k = _check_k(k, "Sphere")
        dims = ", ".join(map(str, shape))
        copies = f", k={self.k}" if self.k > 1 else ""
        lead = (self.k,) if self.k > 1 else ()
        self._axes = tuple(range(1, len(shape) + 1))
        super().__init__(f"Sphere({dims}{copies})", lead + shape,
                         self.k * (int(np.prod(shape)) - 1), retraction)

    def copies(self, k):
        if self.k != 1:
            return None
        return Sphere(*self.shape, retraction=self.retraction_name, k=k)

    def normal_coordinates(self):
        """:meth:`Manifold.normal_coordinates`: the normal part of ``w`` is :math:`cx`, for
        the sphere of vectors."""
        if len(self.shape) != 1 or not (self.flat_metric and self.projection_transport):
            return None
        return (lambda x, w: (w @ x).reshape(-1, 1)), 1

    def _dot(self, a, b):
        """<a, b>, per copy (keeping the axes to broadcast) when k > 1."""
        if self.k == 1:
            return np.vdot(a, b)
        return (a * b).sum(axis=self._axes, keepdims=True)

    def _norms(self, a):
        if self.k == 1:
            return np.linalg.norm(a)
        return np.sqrt(self._dot(a, a))

    def projection(self, x, u):
        return u - self._dot(x, u) * x

    def euclidean_to_riemannian_hessian(self, x, egrad, ehess, u):
        return self.projection(x, ehess) - self._dot(x, egrad) * u

    def _hessian_operator(self, x, egrad, ehess):
        c = self._dot(x, egrad)
        return lambda u: self.projection(x, ehess(x, u)) - c * u

    def retraction(self, x, u):
        if self.retraction_name == "exp":
            return self.exp(x, u)
        y = x + u
        n = self._norms(y)
        if np.all(n > 0.0):
            return y / n
        if np.isnan(n).any():
            raise ValueError("u must be a finite tangent vector, got NaN entries")
        # u = -x: x + u is 0; there (and only there) the exponential map is used
        if self.k == 1:
            return self.exp(x, u)
        return np.where(n > 0.0, y / np.where(n > 0.0, n, 1.0), self.exp(x, u))

    def exp(self, x, u):
        t = self._norms(u)
        if np.isnan(t).any():
            raise ValueError("u must be a finite tangent vector, got NaN entries")
        if self.k == 1:
            if t == 0.0:
                return np.array(x, dtype=float)
            y = np.cos(t) * x + (np.sin(t) / t) * u
        else:
            y = np.cos(t) * x + (np.sin(t) / np.where(t == 0.0, 1.0, t)) * u
        return y / self._norms(y)

    def log(self, x, y):
        if self.k > 1:  # one product per copy: u = y - <x, y> x, its norm and the angle
            c = self._dot(x, y)
            u = y - c * x
            nu = self._norms(u)
            return np.arctan2(nu, c) / np.where(nu == 0.0, 1.0, nu) * u
        u = self.projection(x, y - x)
        nu = self._norms(u)
        if nu == 0.0:
            return np.zeros(self.shape)
        return self.dist(x, y) * u / nu

    def _angles(self, x, y):
        # atan2 form: accurate for nearby and for nearly antipodal points
        c = self._dot(x, y)
        return np.arctan2(self._norms(y - c * x), c)

    def dist(self, x, y):
        if self.k == 1:
            return float(self._angles(x, y))
        return float(np.sqrt(np.sum(self._angles(x, y) ** 2)))

    def random_point(self, rng=None):
        x = check_rng(rng).standard_normal(self.shape)
        return x / self._norms(x)

    def closest_point(self, x):
        """The nearest point of the sphere: ``x`` normalised (per copy)."""
        return np.asarray(x, dtype=float) / self._norms(x)

    def _off_manifold(self, x, atol):
        err = np.abs(np.ravel(self._norms(x)) - 1.0)
        i = int(np.argmax(err))
        where = f" (copy {i})" if self.k > 1 else ""
        return (f"| ||x|| - 1 | = {err[i]:.3e} > atol = {atol:g}{where}"
                if err[i] > atol else "")
