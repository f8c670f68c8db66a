"""Symmetric positive definite matrices with the affine-invariant metric."""

import numpy as np

from ..validation import as_c_float as _c
from . import _kernels as K
from ._base import Manifold

__all__ = ["SPD"]


class SPD(Manifold):
    r"""Symmetric positive definite :math:`n\times n` matrices, affine-invariant metric.

    :math:`\langle U, V\rangle_X = \mathrm{tr}(X^{-1}UX^{-1}V)`; tangent vectors are symmetric
    matrices; the Riemannian gradient is :math:`X\,\mathrm{sym}(G)\,X`;
    :math:`\exp_X(U) = X^{1/2}\exp(X^{-1/2}UX^{-1/2})X^{1/2}`; ``transport`` is parallel
    transport :math:`EUE^\top` with :math:`E = (YX^{-1})^{1/2}`; ``dist`` is
    :math:`\|\log(X^{-1/2}YX^{-1/2})\|_F`.

    Parameters
    ----------
    n : int
        Matrix size.
    retraction : {"exp", "second_order"}
        The exponential map (default) or :math:`X + U + \tfrac12 UX^{-1}U`, which is
        cheaper and also stays positive definite.
    """

    retractions = ("exp", "second_order")

    def __init__(self, n, retraction=None):
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"SPD needs a positive integer n, got {n!r}")
        self.n = int(n)
        super().__init__(f"SPD({n})", (n, n), n * (n + 1) // 2, retraction)

    def inner_product(self, x, u, v):
        return float(K.spd_inner(_c(x), _c(u), _c(v)))

    def projection(self, x, u):
        return 0.5 * (u + u.T)

    def euclidean_to_riemannian_gradient(self, x, egrad):
        return x @ (0.5 * (egrad + egrad.T)) @ x

    def retraction(self, x, u):
        if self.retraction_name == "exp":
            return K.spd_exp(_c(x), _c(u))
        return K.spd_second_order_retraction(_c(x), _c(u))

    def exp(self, x, u):
        return K.spd_exp(_c(x), _c(u))

    def log(self, x, y):
        return K.spd_log(_c(x), _c(y))

    def dist(self, x, y):
        return float(K.spd_dist(_c(x), _c(y)))

    def transport(self, x1, x2, u):
        return K.spd_transport(_c(x1), _c(x2), _c(u))

    def random_point(self, rng=None):
        rng = np.random.default_rng(rng)
        q, _ = np.linalg.qr(rng.standard_normal(self.shape))
        w = np.exp(0.5 * rng.standard_normal(self.n))
        return (q * w) @ q.T

    def _off_manifold(self, x, atol):
        asym = float(np.linalg.norm(x - x.T))
        if asym > atol * max(1.0, float(np.linalg.norm(x))):
            return f"||X - Xᵀ||_F = {asym:.3e} (not symmetric)"
        lam = float(np.linalg.eigvalsh(0.5 * (x + x.T))[0])
        return f"smallest eigenvalue {lam:.3e} is not positive" if lam <= 0 else ""
