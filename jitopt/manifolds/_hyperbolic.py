"""The Poincaré ball model of hyperbolic space."""

import numpy as np

from ..validation import check_rng
from ._base import Manifold
from ._oblique import _sizes

__all__ = ["PoincareBall"]

#: points stay at least this far inside the unit sphere (1 - ||x||^2 stays accurate)
_MARGIN = 1e-10


def _mobius_add(x, y):
    xy, xx, yy = x @ y, x @ x, y @ y
    return ((1.0 + 2.0 * xy + yy) * x + (1.0 - xx) * y) / (1.0 + 2.0 * xy + xx * yy)


def _gyration(a, b, w):
    """gyr[a, b] w for curvature -1."""
    ab, aw, bw, aa, bb = a @ b, a @ w, b @ w, a @ a, b @ b
    alpha = -aw * bb + bw + 2.0 * ab * bw
    beta = -bw * aa - aw
    return w + 2.0 * (alpha * a + beta * b) / (1.0 + 2.0 * ab + aa * bb)


def _inside(y):
    """``y`` pulled back radially to norm at most 1 - margin."""
    r = np.linalg.norm(y)
    return y * ((1.0 - _MARGIN) / r) if r > 1.0 - _MARGIN else y


class PoincareBall(Manifold):
    r"""Hyperbolic space of dimension :math:`n` (curvature :math:`-1`) in the Poincaré ball
    :math:`\{x \in \mathbb R^n : \|x\| < 1\}`.

    Metric :math:`\lambda_x^2\,u^\top v` with :math:`\lambda_x = 2/(1 - \|x\|^2)`, so
    :math:`\operatorname{grad} f = G/\lambda_x^2`. With Möbius addition :math:`\oplus`:
    :math:`\exp_x(u) = x \oplus \tanh(\lambda_x\|u\|/2)\,u/\|u\|`,
    :math:`\log_x(y) = (2/\lambda_x)\,\mathrm{artanh}(\|w\|)\,w/\|w\|` with
    :math:`w = (-x)\oplus y`, :math:`\mathrm{dist}(x, y) = 2\,\mathrm{artanh}\|(-x)\oplus y\|`
    (accurate for nearby points too), and the transport is the parallel one,
    :math:`(\lambda_x/\lambda_y)\,\mathrm{gyr}[y, -x]\,u`. Points stay at least
    :math:`10^{-10}` inside the unit sphere: a step beyond is pulled back radially.

    Parameters
    ----------
    n : int
        Dimension.
    retraction : {"exp", "projection"}
        The exponential map (default), or :math:`x + u` pulled back into the ball (first
        order, cheaper).

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.manifolds import PoincareBall
    >>> M = PoincareBall(1)
    >>> bool(np.isclose(M.dist(np.zeros(1), np.array([0.5])), 2 * np.arctanh(0.5)))
    True
    """

    retractions = ("exp", "projection")

    def __init__(self, n, retraction=None):
        n, _ = _sizes("PoincareBall", n, 1, ("n", "n"))
        self.n = n
        super().__init__(f"PoincareBall({n})", (n,), n, retraction)

    @staticmethod
    def _lambda(x):
        return 2.0 / (1.0 - x @ x)

    def inner_product(self, x, u, v):
        return float(self._lambda(x) ** 2 * (u @ v))

    def projection(self, x, u):
        return np.array(u, dtype=float)

    def euclidean_to_riemannian_gradient(self, x, egrad):
        return egrad / self._lambda(x) ** 2

    def euclidean_to_riemannian_hessian(self, x, egrad, ehess, u):
        lam = self._lambda(x)
        return ((egrad @ x) * u - (x @ u) * egrad - (egrad @ u) * x + ehess / lam) / lam

    def retraction(self, x, u):
        if self.retraction_name == "exp":
            return self.exp(x, u)
        return _inside(x + u)

    def exp(self, x, u):
        nu = np.linalg.norm(u)
        if nu == 0.0:
            return np.array(x, dtype=float)
        return _inside(_mobius_add(x, np.tanh(0.5 * self._lambda(x) * nu) * (u / nu)))

    def log(self, x, y):
        w = _mobius_add(-x, y)
        nw = np.linalg.norm(w)
        if nw == 0.0:
            return np.zeros(self.shape)
        return (2.0 / self._lambda(x)) * np.arctanh(nw) * (w / nw)

    def dist(self, x, y):
        return float(2.0 * np.arctanh(np.linalg.norm(_mobius_add(-x, y))))

    def transport(self, x1, x2, u):
        return (self._lambda(x1) / self._lambda(x2)) * _gyration(x2, -x1, u)

    def random_point(self, rng=None):
        v = check_rng(rng).standard_normal(self.n) / np.sqrt(self.n)
        nv = np.linalg.norm(v)
        return np.tanh(nv) * v / nv

    def closest_point(self, x):
        """``x`` pulled back radially to norm at most :math:`1 - 10^{-10}`."""
        return _inside(np.asarray(x, dtype=float))

    def _off_manifold(self, x, atol):
        r = float(np.linalg.norm(x))
        return f"||x|| = {r:.6g} is not below 1" if r >= 1.0 else ""
