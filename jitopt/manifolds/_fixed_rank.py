"""Matrices of a fixed rank, as a submanifold of the m×n matrices."""

import numpy as np

from ..validation import as_c_float as _c
from . import _kernels as K
from ._base import Manifold
from ._oblique import _sizes

__all__ = ["FixedRankEmbedded"]


class FixedRankEmbedded(Manifold):
    r"""The :math:`m\times n` real matrices of rank :math:`k`, with the Frobenius metric of
    the embedding (Vandereycken 2013).

    Points and tangent vectors are dense :math:`m\times n` arrays, so Euclidean gradients
    apply as they are; the thin factors :math:`X = U\,\mathrm{diag}(s)\,V^\top` of the
    points the manifold has produced are kept (a small cache), so that no operation
    computes an :math:`m\times n` SVD after the first. At :math:`X`, tangent vectors are
    :math:`Z = UMV^\top + U_pV^\top + UV_p^\top` with :math:`U^\top U_p = 0`,
    :math:`V^\top V_p = 0`; the projection is
    :math:`P_X(Z) = UU^\top Z + ZVV^\top - UU^\top ZVV^\top`; the retraction is the metric
    projection, the rank-:math:`k` truncated SVD of :math:`X + Z`, computed in
    :math:`O((m+n)k^2)` from the QR factors of :math:`[U, U_p]` and :math:`[V, V_p]` and
    the SVD of a :math:`2k\times 2k` core (second order, Absil & Malick 2012); the
    transport projects. No ``exp``/``log`` (no closed form). :meth:`factors` and
    :meth:`from_factors` convert from and to pymanopt's triple ``(u, s, vt)``.

    Parameters
    ----------
    m, n : int
        The matrix shape.
    k : int
        The rank, ``1 <= k <= min(m, n)``.

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.manifolds import FixedRankEmbedded
    >>> M = FixedRankEmbedded(5, 4, 2)
    >>> x = M.random_point(rng=0)
    >>> u, s, vt = M.factors(x)
    >>> int(np.linalg.matrix_rank(x)), bool(np.allclose((u * s) @ vt, x))
    (2, True)
    """

    @property
    def typical_dist(self):
        return float(self.dim)  # unbounded; as Manopt

    def __init__(self, m, n, k):
        m, n = _sizes("FixedRankEmbedded", m, n, ("m", "n"))
        k, _ = _sizes("FixedRankEmbedded", k, 1, ("k", "k"))
        if k > min(m, n):
            raise ValueError(f"FixedRankEmbedded needs k <= min(m, n), got m={m}, n={n}, "
                             f"k={k}")
        self.m, self.n, self.k = m, n, k
        super().__init__(f"FixedRankEmbedded({m}, {n}, {k})", (m, n), (m + n - k) * k)
        self._cache = []
        self._start = None  # the last validated start, with its factors

    # -- factors ------------------------------------------------------------------------

    def from_factors(self, u, s, vt):
        """The matrix :math:`U\\,\\mathrm{diag}(s)\\,V^\\top` (its factors are kept)."""
        u, s, vt = (np.array(a, dtype=float) for a in (u, s, vt))
        if u.shape != (self.m, self.k) or s.shape != (self.k,) or vt.shape != (self.k, self.n):
            raise ValueError(f"factors of {self} must have shapes {(self.m, self.k)}, "
                             f"{(self.k,)} and {(self.k, self.n)}, got {u.shape}, "
                             f"{s.shape} and {vt.shape}")
        x = (u * s) @ vt
        self._remember(x, u, s, vt)
        return x

    def factors(self, x):
        """The thin SVD factors ``(u, s, vt)`` of the rank-``k`` matrix ``x``, ``s`` descending."""
        x = np.asarray(x)
        known = self._cached_factors(x)
        if known is not None:
            return known
        u, s, vt = np.linalg.svd(x, full_matrices=False)
        u, s, vt = u[:, :self.k].copy(), s[:self.k].copy(), vt[:self.k].copy()
        self._remember(x, u, s, vt)
        return u, s, vt

    def _cached_factors(self, x):
        """The factors of ``x`` if the cache has them (the entry moves to the front: least
        recently used entries go first)."""
        for j, entry in enumerate(self._cache):
            if np.array_equal(entry[0], x):
                self._cache.insert(0, self._cache.pop(j))
                return entry[1:]
        if self._start is not None and np.array_equal(self._start[0], x):
            return self._start[1:]
        return None

    def validate_point(self, x, name="x0", atol=None):
        """:meth:`~jitopt.manifolds.Manifold.validate_point`; the factors of the point are
        kept apart from the cache, so that runs from the same start use the same factors
        (the same iterates, bit for bit)."""
        y = super().validate_point(x, name, atol)
        self._start = (np.array(y, copy=True),) + self.factors(y)
        return y

    def _remember(self, x, u, s, vt):
        self._cache = [(np.array(x, copy=True), u, s, vt)] + self._cache[:3]

    def _parts(self, x, z):
        """(U, s, V, M, Up, Vp) of a tangent vector z at x."""
        u, s, vt = self.factors(x)
        v = vt.T
        zv, ztu = z @ v, z.T @ u
        mid = u.T @ zv
        return u, s, v, mid, zv - u @ mid, ztu - v @ mid.T

    @staticmethod
    def _assemble(left, u, vt, right):
        """:math:`L V^\top + U R^\top` as one product (one m x n array made)."""
        return np.hstack((left, u)) @ np.vstack((vt, right.T))

    # -- the interface --------------------------------------------------------------------

    def projection(self, x, u):
        # P(Z) = ZVV^T + U Vp^T, ZV = Up + UM
        uu, _, v, mid, up, vp = self._parts(x, np.asarray(u, dtype=float))
        return self._assemble(up + uu @ mid, uu, v.T, vp)

    def euclidean_to_riemannian_hessian(self, x, egrad, ehess, u):
        # P(H) plus the curvature term (I - UU^T) G Vp S^-1 V^T + U ((I - VV^T) G^T Up S^-1)^T
        uu, s, v, _, up, vp = self._parts(x, np.asarray(u, dtype=float))
        h = np.asarray(ehess, dtype=float)
        gvp = (egrad @ vp) / s
        left = h @ v + gvp - uu @ (uu.T @ gvp)
        right = h.T @ uu + (egrad.T @ up) / s
        return self._assemble(left, uu, v.T, right - v @ (v.T @ right))

    def retraction(self, x, u):
        uu, s, v, mid, up, vp = self._parts(x, np.asarray(u, dtype=float))
        k = self.k
        qu, ru = np.linalg.qr(np.hstack([uu, up]))
        qv, rv = np.linalg.qr(np.hstack([v, vp]))
        core = np.zeros((2 * k, 2 * k))
        core[:k, :k] = np.diag(s) + mid
        core[:k, k:] = core[k:, :k] = np.eye(k)
        w, sig, zt = np.linalg.svd(ru @ core @ rv.T)
        if not sig[k - 1] > 0.0:
            raise ValueError("the retraction step dropped the rank below k")
        return self.from_factors(qu @ w[:, :k], sig[:k], (qv @ zt.T[:, :k]).T)

    def random_point(self, rng=None):
        rng = np.random.default_rng(rng)
        u = K.qr_retraction(rng.standard_normal((self.m, self.k)), np.zeros((self.m, self.k)))
        v = K.qr_retraction(rng.standard_normal((self.n, self.k)), np.zeros((self.n, self.k)))
        s = np.sort(rng.uniform(1.0, 2.0, self.k))[::-1]
        return self.from_factors(u, s, v.T)

    def closest_point(self, x):
        """The nearest rank-``k`` matrix: the truncated SVD (Eckart–Young)."""
        u, s, vt = np.linalg.svd(_c(x), full_matrices=False)
        return self.from_factors(u[:, :self.k], s[:self.k], vt[:self.k])

    def _off_manifold(self, x, atol):
        known = self._cached_factors(x)  # made from its factors: rank k up to rounding
        s = known[1] if known is not None else np.linalg.svd(x, compute_uv=False)
        scale = max(1.0, float(s[0]))
        if s[self.k - 1] <= 1e-14 * scale:
            return f"rank below {self.k} (singular value {self.k}: {s[self.k - 1]:.3e})"
        if self.k < len(s) and s[self.k] > atol * scale:
            return (f"rank above {self.k}: singular value {self.k + 1} is {s[self.k]:.3e} "
                    f"> atol = {atol:g} (relative)")
        return ""
