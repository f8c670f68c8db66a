"""Matrices with unit-norm columns or rows, and low-rank PSD factors: Oblique, Elliptope,
PSDFixedRank."""

import numpy as np

from ..validation import as_c_float as _c, check_rng
from . import _kernels as K
from ._base import Manifold

__all__ = ["Oblique", "Elliptope", "PSDFixedRank"]


def _sizes(cls, a, b, names, low=1):
    for name, v in zip(names, (a, b)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"{cls}: {name} must be an int, got {type(v).__name__}")
        if v < low:
            raise ValueError(f"{cls}: {name} must be at least {low}, got {v}")
    return int(a), int(b)


def _unit_error(norms, what, atol):
    err = np.abs(norms - 1.0)
    j = int(np.argmax(err))
    return f"| ||{what} {j}|| - 1 | = {err[j]:.3e} > atol = {atol:g}" if err[j] > atol else ""


def _rank_error(y):
    s = np.linalg.svd(y, compute_uv=False)
    return f"Y has rank below {y.shape[1]} (smallest singular value {s[-1]:.3e})" \
        if s[-1] <= 1e-14 * max(s[0], 1e-300) else ""


class Oblique(Manifold):
    r"""The oblique manifold of :math:`m\times n` matrices with unit-norm columns.

    A product of :math:`n` spheres :math:`S^{m-1}` with the Frobenius metric: the projection
    is :math:`U - X\,\mathrm{diag}(\mathrm{coldot}(X, U))`, the retraction normalises the
    columns of :math:`X + U` (the metric projection, second order), ``exp``, ``log`` and
    ``dist`` act column by column, transport projects.

    Parameters
    ----------
    m, n : int
        Column length and number of columns.

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.manifolds import Oblique
    >>> M = Oblique(3, 4)
    >>> x = M.random_point(rng=0)
    >>> np.round(np.linalg.norm(x, axis=0), 12)
    array([1., 1., 1., 1.])
    """

    def __init__(self, m, n):
        m, n = _sizes("Oblique", m, n, ("m", "n"))
        self.m, self.n = m, n
        super().__init__(f"Oblique({m}, {n})", (m, n), (m - 1) * n)

    def projection(self, x, u):
        return u - x * np.sum(x * u, axis=0)

    def euclidean_to_riemannian_hessian(self, x, egrad, ehess, u):
        return self.projection(x, ehess - u * np.sum(x * egrad, axis=0))

    def retraction(self, x, u):
        return K.normalize_columns(_c(x + u))

    def exp(self, x, u):
        t = np.linalg.norm(u, axis=0)
        y = np.cos(t) * x + u * (np.sin(t) / np.where(t == 0.0, 1.0, t))
        return K.normalize_columns(_c(y))

    def _angles(self, x, y):
        c = np.sum(x * y, axis=0)
        return np.arctan2(np.linalg.norm(y - c * x, axis=0), c)

    def log(self, x, y):
        u = self.projection(x, y - x)
        nu = np.linalg.norm(u, axis=0)
        return u * (self._angles(x, y) / np.where(nu == 0.0, 1.0, nu))

    def dist(self, x, y):
        return float(np.linalg.norm(self._angles(x, y)))

    def random_point(self, rng=None):
        return K.normalize_columns(check_rng(rng).standard_normal(self.shape))

    def closest_point(self, x):
        """The nearest point: ``x`` with each column normalised."""
        return K.normalize_columns(_c(x))

    def _off_manifold(self, x, atol):
        return _unit_error(np.linalg.norm(x, axis=0), "column", atol)


class _Factor(Manifold):
    """Shared by Elliptope and PSDFixedRank: a point Y stands for the class {YQ : Q ∈ O(k)}."""

    def _vertical_part(self, y, u):
        """Ω skew with Yᵀ(U - YΩ) symmetric: U - YΩ is the horizontal part of U."""
        y = _c(y)
        ytu = y.T @ _c(u)
        return K.lyap_sym(y.T @ y, ytu - ytu.T)

    def transport(self, x1, x2, u):
        return self.projection(x2, u)


class Elliptope(_Factor):
    r"""Rank-:math:`k` correlation matrices :math:`X = YY^\top`, :math:`\mathrm{diag}(X) = 1`,
    as the quotient of :math:`n\times k` matrices :math:`Y` with unit-norm rows by
    :math:`Y \sim YQ`, :math:`Q \in O(k)` (Journée, Bach, Absil & Sepulchre 2010).

    Tangent vectors are horizontal lifts: the row-wise projection
    :math:`\eta = U - \mathrm{diag}(\mathrm{rowdot}(Y, U))Y`, then :math:`\eta - Y\Omega` with
    :math:`(Y^\top Y)\Omega + \Omega(Y^\top Y) = Y^\top\eta - \eta^\top Y` (a :math:`k\times k`
    symmetric Lyapunov solve). The retraction normalises the rows of :math:`Y + U`; costs
    must satisfy :math:`f(YQ) = f(Y)`. No ``exp``/``log`` (no closed form).

    Parameters
    ----------
    n, k : int
        ``1 <= k <= n``; the Burer–Monteiro rank for an SDP with :math:`n` constraints is
        :math:`k` with :math:`k(k+1)/2 > n`.

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.manifolds import Elliptope
    >>> y = Elliptope(5, 3).random_point(rng=0)
    >>> np.round(np.diag(y @ y.T), 12)
    array([1., 1., 1., 1., 1.])
    """

    def __init__(self, n, k):
        n, k = _sizes("Elliptope", n, k, ("n", "k"))
        if k > n:
            raise ValueError(f"Elliptope needs k <= n, got n={n}, k={k}")
        self.n, self.k = n, k
        super().__init__(f"Elliptope({n}, {k})", (n, k), n * (k - 1) - k * (k - 1) // 2)

    def _row_projection(self, y, u):
        return u - y * np.sum(y * u, axis=1)[:, None]

    def projection(self, x, u):
        eta = self._row_projection(x, u)
        return eta - x @ self._vertical_part(x, eta)

    def euclidean_to_riemannian_hessian(self, x, egrad, ehess, u):
        return self.projection(x, ehess - u * np.sum(x * egrad, axis=1)[:, None])

    def retraction(self, x, u):
        return K.normalize_columns(_c((x + u).T)).T.copy()

    def random_point(self, rng=None):
        y = check_rng(rng).standard_normal(self.shape)
        return self.closest_point(y)

    def closest_point(self, x):
        """The nearest point: ``x`` with each row normalised."""
        return K.normalize_columns(_c(np.asarray(x).T)).T.copy()

    def _off_manifold(self, x, atol):
        # no rank condition: the solutions of Burer–Monteiro problems often have rank < k
        return _unit_error(np.linalg.norm(x, axis=1), "row", atol)


class PSDFixedRank(_Factor):
    r"""Positive semidefinite :math:`n\times n` matrices of rank :math:`k`, :math:`X = YY^\top`,
    as the quotient of full-rank :math:`n\times k` matrices by :math:`Y \sim YQ`,
    :math:`Q \in O(k)`, with the Euclidean metric on :math:`Y` (Journée et al. 2010).

    The horizontal projection is :math:`U - Y\Omega` with :math:`(Y^\top Y)\Omega +
    \Omega(Y^\top Y) = Y^\top U - U^\top Y`; the retraction and the exponential map are
    :math:`Y + U`; ``log`` aligns by Procrustes, :math:`\log_Y Z = ZQ - Y` with :math:`Q`
    the polar factor of :math:`Z^\top Y`, and ``dist`` is its norm (the Bures–Wasserstein
    distance between :math:`YY^\top` and :math:`ZZ^\top`). Costs must satisfy
    :math:`f(YQ) = f(Y)`.

    Parameters
    ----------
    n, k : int
        ``1 <= k <= n``.

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.manifolds import PSDFixedRank
    >>> M = PSDFixedRank(4, 2)
    >>> y = M.random_point(rng=0)
    >>> q = np.array([[0.0, -1.0], [1.0, 0.0]])
    >>> round(M.dist(y, y @ q), 12)
    0.0
    """

    def __init__(self, n, k):
        n, k = _sizes("PSDFixedRank", n, k, ("n", "k"))
        if k > n:
            raise ValueError(f"PSDFixedRank needs k <= n, got n={n}, k={k}")
        self.n, self.k = n, k
        super().__init__(f"PSDFixedRank({n}, {k})", (n, k), n * k - k * (k - 1) // 2)

    def projection(self, x, u):
        return u - x @ self._vertical_part(x, u)

    def euclidean_to_riemannian_hessian(self, x, egrad, ehess, u):
        return self.projection(x, ehess)

    def retraction(self, x, u):
        return x + u

    exp = retraction

    def log(self, x, y):
        w, _, pt = np.linalg.svd(y.T @ x)
        return y @ (w @ pt) - x

    def dist(self, x, y):
        return float(np.linalg.norm(self.log(x, y)))

    def random_point(self, rng=None):
        return check_rng(rng).standard_normal(self.shape)

    def _off_manifold(self, x, atol):
        return _rank_error(x)
