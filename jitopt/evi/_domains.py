r"""The internal form of an EVI domain: the coordinates of the learners, fixed points of
affine self-maps, the closed-form and LP gaps, the reweighting LPs, the deviation experts
of the column generation and a full-dimensional description for the ellipsoid.

:class:`EVIDomain` turns a domain of :class:`jitopt.problems.VIProblem` (a
:class:`jitopt.sets.Simplex`, a bounded :class:`jitopt.sets.Box`,
:class:`jitopt.sets.ProductOfSimplices` or :class:`jitopt.sets.Polytope`) into the internal
coordinates of the learners (see :mod:`jitopt.evi._kernels`): ``x = shift + T y``
with ``y`` in a product of standard simplices or in the unit box. A polytope is lifted to
barycentric coordinates over its vertices, ``x = V y`` with ``y`` in a simplex: every affine
self-map of ``X`` is ``V Y`` on those coordinates for a column-stochastic ``Y``, so a
swap-regret learner on the lift controls the Phi_LIN regret on ``X``. Projections and
membership are those of the sets themselves.
"""

import numpy as np

from ..sets import Polytope, ProductOfSimplices, Simplex
from . import _kernels as _k

#: simplex pivots allowed per row and column of a reweighting LP: a deterministic bound on
#: its work (HiGHS can cycle on degenerate LPs)
LP_PIVOTS = 50

__all__ = ["EVIDomain", "deviation_lp", "block_experts"]


def block_experts(off, pairs):
    r"""The experts :math:`y \mapsto y_b e_a` (:math:`a` in block :math:`i`) of the linear maps
    from block :math:`j` into block :math:`i` of a product of simplices with block offsets
    ``off``, one group per column :math:`b` of block :math:`j`, for the blocks ``(i, j)`` in
    ``pairs``: integer arrays ``group, p, q`` (one entry per expert, grouped contiguously)
    and the index in ``pairs`` of each group."""
    ps, qs, pair = [], [], []
    for k, (i, j) in enumerate(pairs):
        for b in range(off[j], off[j + 1]):
            ps.append(np.arange(off[i], off[i + 1]))
            qs.append(np.full(off[i + 1] - off[i], b))
            pair.append(k)
    group = np.repeat(np.arange(len(ps)), [a.size for a in ps])
    return group, np.concatenate(ps), np.concatenate(qs), np.array(pair, dtype=np.int64)


def deviation_lp(A, b, M, Fbar):
    r"""Minimise :math:`\langle M, K\rangle + \langle \bar F, c\rangle` over the affine self-maps
    :math:`x \mapsto Kx + c` of :math:`\{Ax \le b\}`, written (paper Thm D.1) as
    :math:`\{(K, c, V) : VA = AK,\ Vb + Ac \le b,\ V \ge 0\}`. Returns ``(value, K, c)``."""
    import scipy.sparse as sp
    from scipy.optimize import linprog

    m, d = A.shape
    nK, nc, nV = d * d, d, m * m
    # equalities (VA - AK)[i, q] = sum_l V[i,l] A[l,q] - sum_p A[i,p] K[p,q] = 0
    Iq = sp.identity(d, format="csr")
    Im = sp.identity(m, format="csr")
    eq_V = sp.kron(Im, sp.csr_matrix(A.T))  # row (i,q), col (i,l): A[l,q]
    eq_K = -sp.kron(sp.csr_matrix(A), Iq)  # row (i,q), col (p,q): A[i,p]
    A_eq = sp.hstack([eq_K, sp.csr_matrix((m * d, nc)), eq_V]).tocsr()
    # inequalities sum_l V[i,l] b_l + (A c)_i <= b_i
    ub_V = sp.kron(Im, sp.csr_matrix(b[None, :]))
    A_ub = sp.hstack([sp.csr_matrix((m, nK)), sp.csr_matrix(A), ub_V]).tocsr()
    cost = np.concatenate([M.ravel(), Fbar, np.zeros(nV)])
    bounds = [(None, None)] * (nK + nc) + [(0, None)] * nV
    r = linprog(cost, A_ub=A_ub, b_ub=b, A_eq=A_eq, b_eq=np.zeros(m * d), bounds=bounds,
                method="highs")
    if r.status != 0:
        raise RuntimeError(f"the deviation LP failed: {r.message}")
    return r.fun, r.x[:nK].reshape(d, d), r.x[nK:nK + nc]


class EVIDomain:
    r"""The internal form of the domain of a :class:`~jitopt.problems.VIProblem`.

    Parameters
    ----------
    domain : jitopt.sets.Simplex, Box, ProductOfSimplices or Polytope
        A domain accepted by :class:`~jitopt.problems.VIProblem` (``problem.domain``).
    dim : int, optional
        The dimension (``problem.dim``), for a set that does not fix it.

    Attributes
    ----------
    d : int
        Dimension of the original points ``x``.
    dy : int
        Dimension of the internal coordinates ``y`` (the number of vertices on a polytope).
    shift, T : ndarray
        ``x = shift + T y``; the operator in internal coordinates is ``T^T F(x)``, so inner
        products, and hence all gaps, are the same in both.
    off : ndarray of int64
        Block offsets of ``y`` (one block for a simplex, a box or a polytope).
    box : bool
        Whether ``y`` lives in the unit box (else in a product of simplices).
    lift : bool
        Whether the domain is a polytope lifted to its vertices (the gaps then need LPs).
    A, b : ndarray
        An H-description :math:`\{A x \le b\}` of the domain.
    lower, upper : ndarray or None
        The bounds of a box.

    Examples
    --------
    A box is mapped to the unit box, :math:`x = \text{shift} + T y`:

    >>> from jitopt.sets import Box, Simplex
    >>> from jitopt.solvers import EVIDomain
    >>> dom = EVIDomain(Box([-1.0, 0.0], [1.0, 2.0]))
    >>> dom.d, dom.dy, dom.box, dom.shift, dom.T.diagonal()
    (2, 2, True, array([-1.,  0.]), array([2., 2.]))
    >>> EVIDomain(Simplex(), dim=3).off
    array([0, 3])
    """

    def __init__(self, domain, dim=None):
        self.lift, self.lower, self.upper = False, None, None
        self.radius = 1.0
        if isinstance(domain, ProductOfSimplices):
            self._product(domain.sizes, 1.0, "product of simplices")
        elif isinstance(domain, Polytope):
            V = domain.vertices()
            self._set(_k.KIND_PRODUCT, domain.dim, [0, V.shape[0]], np.zeros(domain.dim), V.T,
                      domain.A, domain.b, "polytope")
            self.lift = True
        else:
            d = domain.dim if domain.dim is not None else dim
            lo, hi, fpar, _, _ = domain.kernel_args(d)
            if isinstance(domain, Simplex):
                self._product((d,), float(fpar[0]), "simplex")
            else:
                self._set(_k.KIND_BOX, d, [0, d], lo, np.diag(hi - lo),
                          np.vstack([np.eye(d), -np.eye(d)]), np.concatenate([hi, -lo]), "box")
                self.lower, self.upper = lo.copy(), hi.copy()
        self.box = self.kind == _k.KIND_BOX

    def _set(self, kind, d, off, shift, T, A, b, name):
        self.kind, self.d = kind, d
        self.off = np.ascontiguousarray(off, dtype=np.int64)
        self.shift = np.ascontiguousarray(shift, dtype=float)
        self.T = np.ascontiguousarray(T, dtype=float)
        self.dy = self.T.shape[1]
        self.A, self.b, self.name = A, b, name

    def _product(self, sizes, radius, name):
        off = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        d = int(off[-1])
        rows, rhs = [-np.eye(d)], [np.zeros(d)]
        for i in range(len(sizes)):
            e = np.zeros(d)
            e[off[i]:off[i + 1]] = 1.0
            rows += [e[None, :], -e[None, :]]
            rhs += [[radius], [-radius]]
        self._set(_k.KIND_PRODUCT, d, off, np.zeros(d), radius * np.eye(d), np.vstack(rows),
                  np.concatenate(rhs), name)
        self.radius = radius

    @property
    def nblocks(self):
        """Number of blocks of the closed-form gaps (players on a product of simplices)."""
        return 1 if self.box else self.off.shape[0] - 1

    # -- coordinates -----------------------------------------------------------------------

    def to_x(self, Y):
        """Original points of internal ones (rows)."""
        return self.shift + Y @ self.T.T

    def to_y(self, X):
        """Internal coordinates of original points (closed-form domains only)."""
        if self.box:
            return (X - self.lower) / (self.upper - self.lower)
        return X / self.radius

    def clip(self, y):
        """Internal coordinates with rounding errors removed (a new array): clipped to the
        unit box, or nonnegative blocks summing to one."""
        if self.box:
            return np.clip(y, 0.0, 1.0)
        y = np.maximum(y, 0.0)
        return y / np.repeat(np.add.reduceat(y, self.off[:-1]), np.diff(self.off))

    def f_to_y(self, Fx):
        """Operator values in internal coordinates, ``Fx @ T``."""
        return Fx @ self.T

    def interior(self):
        """An interior point in internal coordinates (barycentre of every block)."""
        if self.box:
            return np.full(self.dy, 0.5)
        u = np.empty(self.dy)
        for i in range(self.off.shape[0] - 1):
            lo, hi = self.off[i], self.off[i + 1]
            u[lo:hi] = 1.0 / (hi - lo)
        return u

    def random_point(self, rng):
        """A random point in internal coordinates: uniform on the box, Dirichlet(1) on each
        simplex block (``rng`` a :class:`numpy.random.Generator`)."""
        if self.box:
            return rng.random(self.dy)
        y = np.empty(self.dy)
        for i in range(self.off.shape[0] - 1):
            lo, hi = self.off[i], self.off[i + 1]
            y[lo:hi] = rng.dirichlet(np.ones(hi - lo))
        return y

    # -- oracles ---------------------------------------------------------------------------

    def fixed_point(self, K, c):
        r"""A fixed point in ``X`` of ``x -> K x + c``, an affine self-map of ``X`` (original
        coordinates): an LP on a polytope, else the perturbed solve
        :math:`(I - (1-\delta)K) y = (1-\delta)c + \delta u` in internal coordinates
        (:math:`\delta = 10^{-9}`, :math:`u` the barycentre), whose residual
        :math:`\|Kx + c - x\|` is at most :math:`\delta \operatorname{diam} X`."""
        K = np.ascontiguousarray(K, dtype=float)
        c = np.ascontiguousarray(c, dtype=float)
        if self.lift:
            from scipy.optimize import linprog

            d = self.d
            r = linprog(np.zeros(d), A_ub=self.A, b_ub=self.b, A_eq=K - np.eye(d), b_eq=-c,
                        bounds=(None, None), method="highs")
            if r.status != 0:
                raise ValueError("the map has no fixed point in X: it is not a self-map of X")
            return r.x
        # to internal coordinates: y -> Ky y + cy with x = shift + S y (S diagonal or r I)
        s = np.diag(self.T).copy()
        Ky = K * s[None, :] / s[:, None]
        cy = (c + K @ self.shift - self.shift) / s
        y = np.empty(self.dy)
        self.solve_fixed_point(np.ascontiguousarray(Ky), cy, False, y)
        return self.to_x(y)

    def solve_fixed_point(self, K, c, blockdiag, y):
        r"""``y`` <- the fixed point of :math:`y \mapsto K y + c` in internal coordinates by
        the perturbed solve of the compiled loop (one solve per diagonal block when
        ``blockdiag``); returns its residual."""
        d = self.dy
        return _k.kernel(_k.fixed_point, d * d)(
            K, c, self.interior(), _k.DELTA, self.off, self.kind, blockdiag, np.empty((d, d)),
            np.empty(d + 5, np.int32), y)

    # -- gaps ------------------------------------------------------------------------------

    def closed_gaps(self, Y, Fy, w):
        """(3, nblocks) array of per-block gaps (:meth:`gaps`) of the mixture of the points
        ``Y`` with operator values ``Fy`` (internal coordinates) and weights ``w`` (any
        positive scale)."""
        M = (Fy * w[:, None]).T @ Y
        return self.gaps(M, w @ Fy, float(np.einsum("k,kj,kj->", w, Fy, Y)), float(w.sum()))

    def gaps(self, M, Fbar, s, W):
        r"""Closed-form gaps of a mixture from its sums (internal coordinates)
        :math:`M = \sum_k w_k f_k y_k^\top`, :math:`\bar F = \sum_k w_k f_k`,
        :math:`s = \sum_k w_k \langle f_k, y_k\rangle` and total weight :math:`W`.

        Returns a (3, nblocks) array. Product of simplices: rows Phi_LIN (ALCE), per-block
        linear (CE) and constant (CCE) gaps of each block :math:`i`,
        :math:`s_i - \min_j \sum_b \min_a M_{ij}[a,b]`, the term :math:`j = i` and
        :math:`s_i - \min_a \bar F_i[a]`. Box: Phi_LIN twice, then the constant gap.
        """
        if self.box:
            lin = np.minimum(np.minimum(Fbar, 0.0),
                             np.minimum(M.min(axis=1, initial=0.0),
                                        (Fbar[:, None] - M).min(axis=1, initial=0.0))).sum()
            con = np.minimum(Fbar, 0.0).sum()
            return np.array([[s - lin], [s - lin], [s - con]]) / W
        starts = self.off[:-1]
        # G[i, j] = sum over columns b of block j of the least M[a, b] over rows a of block i
        G = np.add.reduceat(np.minimum.reduceat(M, starts, axis=0), starts, axis=1)
        si = np.add.reduceat(np.diagonal(M), starts)
        return np.vstack([si - G.min(axis=1), si - np.diagonal(G),
                          si - np.minimum.reduceat(Fbar, starts)]) / W

    def lp_gaps(self, X, Fx, w):
        """``(Gap_LIN, Gap_CON)`` in original coordinates by the LP of Thm D.1 and an LP over X."""
        from scipy.optimize import linprog

        w = w / w.sum()
        M = (Fx * w[:, None]).T @ X
        Fbar = w @ Fx
        s = float(np.einsum("k,kj,kj->", w, Fx, X))
        val, _, _ = deviation_lp(self.A, self.b, M, Fbar)
        r = linprog(Fbar, A_ub=self.A, b_ub=self.b, bounds=(None, None), method="highs")
        if r.status != 0:
            raise RuntimeError(f"the linear minimisation over the domain failed: {r.message}")
        return s - val, s - r.fun

    # -- reweighting -----------------------------------------------------------------------

    def reweight(self, Y, Fy, ce=False):
        r"""Weights :math:`\lambda \in \Delta_T` minimising the gap of
        :math:`\sum_t \lambda_t \delta_{y_t}` (one HiGHS LP), or None when HiGHS stops at
        its bound of ``LP_PIVOTS`` pivots per row and column. ``Y, Fy`` are internal
        coordinates, except on a polytope where they are original points and values.
        ``ce=True`` minimises the per-block linear (CE) gap on a product of simplices."""
        import scipy.sparse as sp

        top = float(np.abs(Fy).max(initial=0.0))
        if 0.0 < top < np.inf:  # HiGHS's tolerances are absolute; the weights are scale-free
            Fy = Fy / top
        T = Y.shape[0]
        s = np.einsum("kj,kj->k", Fy, Y)
        if self.lift:
            return _reweight_polytope(self.A, self.b, Y, Fy, s)
        rows = []
        if self.box:
            d = self.d
            nv = d
            for r in range(d):
                exprs = [Fy[:, r]] + [Fy[:, r] * Y[:, j] for j in range(d)] + \
                        [Fy[:, r] * (1.0 - Y[:, j]) for j in range(d)]
                for e in exprs:  # v_r <= sum_k lam_k e_k
                    row = np.zeros(T + nv)
                    row[:T] = -e
                    row[T + r] = 1.0
                    rows.append(row)
            cost = np.concatenate([s, -np.ones(nv)])
            bounds = [(0, None)] * T + [(None, 0)] * nv
        else:
            off = self.off
            n = off.shape[0] - 1
            pairs = [(i, j) for i in range(n) for j in range(n) if not ce or i == j]
            ntau = sum(off[j + 1] - off[j] for _, j in pairs)
            nvar = T + n + ntau
            pos = T + n
            for i, j in pairs:
                vrow = np.zeros(nvar)
                vrow[T + i] = 1.0
                for b in range(off[j], off[j + 1]):
                    vrow[pos] = -1.0
                    for a in range(off[i], off[i + 1]):  # tau_ijb <= sum_k lam_k f_a y_b
                        row = np.zeros(nvar)
                        row[:T] = -Fy[:, a] * Y[:, b]
                        row[pos] = 1.0
                        rows.append(row)
                    pos += 1
                rows.append(vrow)
            cost = np.concatenate([s, -np.ones(n), np.zeros(ntau)])
            bounds = [(0, None)] * T + [(None, None)] * (n + ntau)
        A_ub = sp.csr_matrix(np.array(rows))
        A_eq = sp.csr_matrix(np.concatenate([np.ones(T), np.zeros(len(cost) - T)])[None, :])
        return _weights_lp(cost, A_ub, A_eq, bounds, T)

    # -- deviation experts (for column generation) -----------------------------------------

    def experts(self, ce=False):
        r"""The deviation polytope as a product of simplices of *experts*, in internal
        coordinates (closed-form domains; ``ce=True``: per-block maps on a product of
        simplices).

        Expert :math:`e` belongs to group :math:`g_e` and is the coordinate map
        :math:`y \mapsto \alpha_e + \beta_e y_{q_e}` written into output coordinate
        :math:`p_e`; a deviation is one distribution :math:`\pi_g` over the experts of each
        group, :math:`\phi(y)_p = \sum_{e : p_e = p} \pi_e (\alpha_e + \beta_e y_{q_e})`.
        Box: group :math:`r` (a row) holds :math:`0, 1, y_j, 1 - y_j`; simplex blocks: group
        :math:`b` (a column of block :math:`i`) holds :math:`y \mapsto y_b e_a`, :math:`a` in
        block :math:`i`. The expert's value on a mixture is
        :math:`\alpha_e \bar F_{p_e} + \beta_e M_{p_e q_e}`, and
        :math:`\operatorname{Gap} = s - \sum_g \min_{e \in g} (\ldots)` (the closed forms
        of :meth:`closed_gaps`).

        Returns
        -------
        (group, p, q, alpha, beta, ngroups)
            Integer arrays ``group, p, q``, float arrays ``alpha, beta`` (one entry per
            expert, grouped contiguously) and the number of groups.
        """
        if self.lift or (not self.box and not ce and self.off.shape[0] > 2):
            raise ValueError("deviation experts exist for the box, the simplex and, with "
                             "per-block deviations, a product of simplices")
        d = self.dy
        if self.box:
            j = np.arange(d)
            p = np.repeat(j, 2 * d + 2)
            q = np.tile(np.concatenate([[0, 0], j, j]), d)
            alpha = np.tile(np.concatenate([[0.0, 1.0], np.zeros(d), np.ones(d)]), d)
            beta = np.tile(np.concatenate([[0.0, 0.0], np.ones(d), -np.ones(d)]), d)
            return np.repeat(j, 2 * d + 2), p, q, alpha, beta, d
        group, p, q, _ = block_experts(self.off, [(i, i) for i in range(self.nblocks)])
        return group, p, q, np.zeros(q.size), np.ones(q.size), d

    # -- full-dimensional description (for the ellipsoid) -----------------------------------

    def intrinsic(self):
        """``(A', b', x0, B)`` with ``X = {x0 + B z : A' z <= b'}`` full-dimensional in z."""
        if self.lift:
            return self.A, self.b, np.zeros(self.d), np.eye(self.d)
        if self.box:
            d = self.d
            return (np.vstack([np.eye(d), -np.eye(d)]), np.concatenate([self.upper, -self.lower]),
                    np.zeros(d), np.eye(d))
        off, r = self.off, self.radius
        n = off.shape[0] - 1
        dz = self.d - n
        Ablocks, bl = [], []
        x0 = np.zeros(self.d)
        B = np.zeros((self.d, dz))
        zpos = 0
        for i in range(n):
            m = off[i + 1] - off[i]
            x0[off[i + 1] - 1] = r
            for a in range(m - 1):
                B[off[i] + a, zpos + a] = 1.0
                B[off[i + 1] - 1, zpos + a] = -1.0
            blk = np.zeros((m, dz))
            blk[:m - 1, zpos:zpos + m - 1] = -np.eye(m - 1)
            blk[m - 1, zpos:zpos + m - 1] = 1.0
            Ablocks.append(blk)
            bl.append(np.concatenate([np.zeros(m - 1), [r]]))
            zpos += m - 1
        return np.vstack(Ablocks), np.concatenate(bl), x0, B


def _reweight_polytope(A, b, X, Fx, s):
    r"""min over lambda, Y (m x d), z >= 0 of s.lam + b.z s.t. A^T Y = -M(lam),
    A^T z = -Fbar(lam), z b^T - Y A^T >= 0 (the dual of Thm D.1)."""
    import scipy.sparse as sp

    T, d = X.shape
    m = A.shape[0]
    nY = m * d
    # A^T Y + M(lam) = 0 : row (p, q): sum_i A[i,p] Y[i,q] + sum_k lam_k F_k[p] x_k[q]
    eqY = sp.kron(sp.csr_matrix(A.T), sp.identity(d))
    eqL = np.einsum("kp,kq->pqk", Fx, X).reshape(d * d, T)
    A_eq1 = sp.hstack([sp.csr_matrix(eqL), eqY, sp.csr_matrix((d * d, m))])
    A_eq2 = sp.hstack([sp.csr_matrix(Fx.T), sp.csr_matrix((d, nY)), sp.csr_matrix(A.T)])
    A_eq3 = sp.csr_matrix(np.concatenate([np.ones(T), np.zeros(nY + m)])[None, :])
    A_eq = sp.vstack([A_eq1, A_eq2, A_eq3]).tocsr()
    b_eq = np.concatenate([np.zeros(d * d + d), [1.0]])
    # (Y A^T)[i,l] - z_i b_l <= 0 : row (i,l)
    ubY = sp.kron(sp.identity(m), sp.csr_matrix(A))
    ubz = -sp.kron(sp.identity(m), sp.csr_matrix(b[:, None]))
    A_ub = sp.hstack([sp.csr_matrix((m * m, T)), ubY, ubz]).tocsr()
    cost = np.concatenate([s, np.zeros(nY), b])
    bounds = [(0, None)] * T + [(None, None)] * nY + [(0, None)] * m
    return _weights_lp(cost, A_ub, A_eq, bounds, T, b_eq)


def _weights_lp(cost, A_ub, A_eq, bounds, T, b_eq=(1.0,)):
    """The first ``T`` variables, normalised, of the LP min cost.x s.t. A_ub x <= 0,
    A_eq x = b_eq, within ``LP_PIVOTS`` pivots per row and column (None beyond)."""
    from scipy.optimize import linprog

    limit = LP_PIVOTS * (A_ub.shape[0] + A_eq.shape[0] + len(cost))
    r = linprog(cost, A_ub=A_ub, b_ub=np.zeros(A_ub.shape[0]), A_eq=A_eq, b_eq=b_eq,
                bounds=bounds, method="highs", options={"maxiter": limit})
    if r.status == 1:  # the iteration limit
        return None
    if r.status != 0:
        raise RuntimeError(f"the reweighting LP failed: {r.message}")
    lam = np.maximum(r.x[:T], 0.0)
    return lam / lam.sum()
