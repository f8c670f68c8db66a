"""Matrices of a fixed rank, as a submanifold of the m×n matrices."""

import numpy as np

from ..validation import as_c_float as _c, check_rng
from . import _kernels as K
from ._base import AmbientFrame, Manifold
from ._oblique import _sizes
from ._stiefel import qr_retraction

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
    transport projects. The points the manifold makes (random points, retractions,
    :meth:`from_factors`) are read-only: they are kept with their factors as they are, and
    found again by identity. :meth:`tangent_chart` gives the isometric coordinates
    :math:`(M, U_p, V_p)` of a tangent space, in which :func:`~jitopt.solvers.rtr` and
    :func:`~jitopt.solvers.rlbfgs` work.
    No ``exp``/``log`` (no closed form). :meth:`factors` and :meth:`from_factors` convert
    from and to pymanopt's triple ``(u, s, vt)``.

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
        """The matrix :math:`U\\,\\mathrm{diag}(s)\\,V^\\top`, read-only (it is kept with its
        factors)."""
        u, s, vt = (np.array(a, dtype=float) for a in (u, s, vt))
        if u.shape != (self.m, self.k) or s.shape != (self.k,) or vt.shape != (self.k, self.n):
            raise ValueError(f"factors of {self} must have shapes {(self.m, self.k)}, "
                             f"{(self.k,)} and {(self.k, self.n)}, got {u.shape}, "
                             f"{s.shape} and {vt.shape}")
        x = (u * s) @ vt
        x.flags.writeable = False  # kept in the cache as it is: read-only
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
        keys = [entry[0] for entry in self._cache]
        j = next((j for j, key in enumerate(keys) if key is x), None)  # a point made here
        if j is None:
            j = next((j for j, key in enumerate(keys) if np.array_equal(key, x)), None)
        if j is not None:
            self._cache.insert(0, self._cache.pop(j))
            return self._cache[0][1:]
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
        """Keep the factors of ``x``: a read-only array of its own (made here) as it is,
        else a copy."""
        own = not x.flags.writeable and x.base is None
        key = x if own else np.array(x, copy=True)
        self._cache = [(key, u, s, vt)] + self._cache[:3]

    def pair_frame(self, isometric):
        """The coordinates of the tangent charts
        (:class:`ChartFrame`), whose transport is the
        manifold's."""
        return ChartFrame(self)

    def tangent_chart(self, x):
        r"""Isometric coordinates of the tangent space at ``x``
        :math:`= U\mathrm{diag}(s)V^\top`: the tangent vector :math:`UMV^\top + U_pV^\top +
        UV_p^\top` is the flat vector :math:`(M, U_p, V_p)` of :math:`(m+n+k)k` numbers, in
        which the metric is the dot product. The chart's ``of(z)`` gives the coordinates of
        the projection of an ambient ``z``, ``tangent(w)`` the :math:`m\times n` tangent
        vector of ``w``, ``hessian_of(egrad, h, w)`` the coordinates of the Riemannian
        Hessian from the Euclidean gradient and Hessian product, and ``retraction(w)`` the
        retraction along ``w``, ``transport_from(u, v, w)`` the coordinates here of the
        transport of coordinates from the chart of singular bases ``u``, ``v`` (and
        ``moved_from(chart, w)`` from another chart);
        :func:`~jitopt.solvers.rtr` runs its inner solver on these coordinates, and
        :func:`~jitopt.solvers.rlbfgs` keeps its pairs in them. Coordinates belong to the
        chart they were made in (a point's factors computed again may change sign).

        Examples
        --------
        >>> import numpy as np
        >>> from jitopt.manifolds import FixedRankEmbedded
        >>> M = FixedRankEmbedded(6, 5, 2)
        >>> x = M.random_point(rng=0)
        >>> chart = M.tangent_chart(x)
        >>> u, v = M.random_tangent_vector(x, rng=1), M.random_tangent_vector(x, rng=2)
        >>> wu, wv = chart.of(u), chart.of(v)
        >>> wu.size, bool(np.isclose(wu @ wv, M.inner_product(x, u, v)))
        (26, True)
        >>> bool(np.allclose(chart.tangent(wu), u))
        True
        """
        return TangentChart(self, x)

    # -- the interface --------------------------------------------------------------------

    def projection(self, x, u):
        chart = TangentChart(self, x)
        return chart.tangent(chart.of(np.asarray(u, dtype=float)))

    def euclidean_to_riemannian_hessian(self, x, egrad, ehess, u):
        chart = TangentChart(self, x)
        w = chart.of(np.asarray(u, dtype=float))
        return chart.tangent(chart.hessian_of(np.asarray(egrad, dtype=float),
                                              np.asarray(ehess, dtype=float), w))

    def retraction(self, x, u):
        chart = TangentChart(self, x)
        return chart.retraction(chart.of(np.asarray(u, dtype=float)))

    def random_point(self, rng=None):
        rng = check_rng(rng)
        u = qr_retraction(rng.standard_normal((self.m, self.k)), np.zeros((self.m, self.k)))
        v = qr_retraction(rng.standard_normal((self.n, self.k)), np.zeros((self.n, self.k)))
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


class TangentChart:
    r"""Isometric coordinates of the tangent space of :class:`FixedRankEmbedded` at
    :math:`X = U\,\mathrm{diag}(s)\,V^\top`.

    The tangent vector :math:`UMV^\top + U_pV^\top + UV_p^\top` (:math:`U^\top U_p = 0`,
    :math:`V^\top V_p = 0`) has the coordinates :math:`w = (M, U_p, V_p)`, flattened:
    :math:`(m + n + k)k` numbers instead of :math:`mn`. The three parts are orthogonal in
    the Frobenius product, so the metric is the dot product of the coordinates, and the
    inner solver of :func:`~jitopt.solvers.rtr` runs on them. The coordinates of the
    projection of an ambient :math:`Z` need :math:`ZV` and :math:`Z^\top U` only; the
    Riemannian Hessian, in coordinates, is

    .. math::

        M_H = U^\top H V, \quad U_{p,H} = (I - UU^\top)(HV + GV_pS^{-1}), \quad
        V_{p,H} = (I - VV^\top)(H^\top U + G^\top U_pS^{-1})

    for the Euclidean gradient :math:`G` and Hessian product :math:`H` (with the curvature
    terms of Vandereycken 2013), and the retraction needs no :math:`m\times n`
    product but the point it returns.

    Parameters
    ----------
    manifold : FixedRankEmbedded
    x : numpy.ndarray
        A point of ``manifold``.

    Examples
    --------
    See :meth:`FixedRankEmbedded.tangent_chart`.
    """

    def __init__(self, manifold, x):
        self.manifold, self.x = manifold, x
        self.u, self.s, self.vt = manifold.factors(x)
        self.v = np.ascontiguousarray(self.vt.T)
        k, m = manifold.k, manifold.m
        self._cut = (k * k, k * k + m * k)
        self.size = (manifold.m + manifold.n + k) * k

    def _split(self, w):
        k, (a, b) = self.manifold.k, self._cut
        return w[:a].reshape(k, k), w[a:b].reshape(-1, k), w[b:].reshape(-1, k)

    @staticmethod
    def _join(mid, up, vp):
        return np.concatenate((mid.ravel(), up.ravel(), vp.ravel()))

    def inner(self, w1, w2):
        """The metric: the dot product of the coordinates."""
        return float(np.dot(w1, w2))

    def zero(self):
        """The coordinates of the zero vector."""
        return np.zeros(self.size)

    def of(self, z):
        """The coordinates of the projection of the ambient ``z`` onto the tangent space
        (those of ``z`` itself when it is tangent)."""
        zv, utz = z @ self.v, self.u.T @ z
        mid = self.u.T @ zv
        return self._join(mid, zv - self.u @ mid, utz.T - self.v @ mid.T)

    def transport_from(self, u, v, w):
        r"""The coordinates here of the projections of the tangent vectors of coordinates
        ``w`` (along the last axis) at a point of singular bases ``u``, ``v``
        (:math:`m\times k`, :math:`n\times k`, or stacks of them that broadcast against
        the leading axes of ``w``): the manifold's transport, from the factored form
        :math:`[U_oM + U_p, U_o][V_o, V_p]^\top` of each vector, in :math:`O((m+n)k^2)`
        with no :math:`m\times n` product."""
        lead, k, (a, b) = np.shape(w)[:-1], self.manifold.k, self._cut
        mid, up = w[..., :a].reshape(lead + (k, k)), w[..., a:b].reshape(lead + (-1, k))
        vp_t = np.swapaxes(w[..., b:].reshape(lead + (-1, k)), -1, -2)
        vt = np.swapaxes(v, -1, -2)
        cross_v, cross_u = vt @ self.v, self.u.T @ u  # V_o^T V, U^T U_o
        vp_v = vp_t @ self.v
        zv = u @ (mid @ cross_v + vp_v) + up @ cross_v  # Z V
        core = cross_u @ mid + self.u.T @ up  # U^T Z = core V_o^T + cross_u V_p^T
        new_mid = core @ cross_v + cross_u @ vp_v  # U^T Z V
        up_new = zv - self.u @ new_mid
        vp_new = (np.swapaxes(core @ vt + cross_u @ vp_t, -1, -2)
                  - self.v @ np.swapaxes(new_mid, -1, -2))
        return np.concatenate((new_mid.reshape(lead + (-1,)), up_new.reshape(lead + (-1,)),
                               vp_new.reshape(lead + (-1,))), axis=-1)

    def moved_from(self, chart, w):
        """:meth:`transport_from` the point of the chart ``chart``."""
        return self.transport_from(chart.u, chart.v, w)

    def tangent(self, w):
        r"""The tangent vector (an :math:`m\times n` array) of the coordinates ``w``, as
        one product :math:`[U_p + UM, U][V, V_p]^\top`."""
        mid, up, vp = self._split(w)
        return np.hstack((up + self.u @ mid, self.u)) @ np.vstack((self.vt, vp.T))

    def hessian_of(self, egrad, h, w):
        """The coordinates of the Riemannian Hessian applied to the tangent vector of
        coordinates ``w``, from the Euclidean gradient and ``h``, the Euclidean Hessian
        applied to it."""
        _, up, vp = self._split(w)
        u, v, s = self.u, self.v, self.s
        hv = h @ v
        left = hv + (egrad @ vp) / s
        right_t = u.T @ h + (up.T @ egrad) / s[:, None]
        return self._join(u.T @ hv, left - u @ (u.T @ left), right_t.T - v @ (right_t @ v).T)

    def gradient(self, egrad):
        """The coordinates of the Riemannian gradient (the projection of ``egrad``)."""
        return self.of(egrad)

    def hessian(self, egrad, ehess):
        """``w ->`` the coordinates of the Riemannian Hessian applied to the tangent vector
        of coordinates ``w``, for ``ehess(x, z)``, the Euclidean Hessian product."""
        return lambda w: self.hessian_of(egrad, ehess(self.x, self.tangent(w)), w)

    def reproject(self, w):
        """``w`` (coordinates do not leave the tangent space)."""
        return w

    def retraction(self, w):
        r"""The metric retraction of :class:`FixedRankEmbedded` from ``x`` along the tangent
        vector of coordinates ``w``: the rank-``k`` truncated SVD of :math:`X + Z`, from
        the QR factors of :math:`[U, U_p]`, :math:`[V, V_p]` and a :math:`2k\times 2k`
        core."""
        mid, up, vp = self._split(w)
        u, s, vt = K.fixed_rank_retraction(self.u, self.s, self.v, mid, up, vp)
        if not s[-1] > 0.0:
            raise ValueError("the retraction step dropped the rank below k")
        return self.manifold.from_factors(u, s, vt)


class ChartFrame(AmbientFrame):
    """The tangent charts of the fixed-rank matrices, each kept for its point until
    :meth:`forget` drops it: coordinates are in one chart, and a point's singular vectors,
    computed again, may change sign."""

    ambient, charts = False, True

    def __init__(self, M):
        self.M, self.flat = M, True
        self._charts = {}  # id -> (point, chart): the charts in use

    def chart(self, x):
        key, chart = self._charts.get(id(x), (None, None))
        if key is not x:
            chart = self.M.tangent_chart(x)
            self._charts[id(x)] = (x, chart)
        return chart

    def forget(self, keep):
        self._charts = {id(keep): self._charts[id(keep)]} if id(keep) in self._charts else {}

    def to(self, x, u):
        return self.chart(x).of(u)

    def back(self, x, w):
        return self.chart(x).tangent(w)

    def move(self, x, y, w):
        """The transport of ``w`` (coordinates along the last axis)."""
        return self.chart(y).moved_from(self.chart(x), w)

    def line(self, problem, x, dw):
        r""":math:`\varphi(t) = f(R_x(t d))` along the direction of coordinates ``dw``:
        ``phi(t) -> (f, slope, y, egrad, gw)`` with ``gw`` the coordinates at :math:`y` of
        the Riemannian gradient and the slope :math:`\langle \operatorname{grad} f(y),
        T_{x\to y} d\rangle`."""
        chart = self.chart(x)

        def phi(t):
            y = chart.retraction(t * dw)
            f, eg = problem.cost_and_egrad(y)
            here = self.chart(y)
            gw = here.gradient(eg)
            return f, float(np.dot(gw, here.moved_from(chart, dw))), y, eg, gw
        return phi
