r"""``reweight="cg"`` of :func:`jitopt.solvers.evi`: the reweighting LP over all iterates by
row and column generation, with new points at the fixed points of its dual deviations."""

import numpy as np

from . import _domains
from ._gap import report

__all__ = ["ColumnGeneration"]


def _packed(val, idx):
    """The nonzeros of the dense rows ``val`` (with column indices ``idx``, same shape) in
    HiGHS's packed form: ``(count, row starts, indices, values)``."""
    nz = val != 0
    starts = np.r_[0, np.cumsum(nz.sum(1))[:-1]].astype(np.int32)
    return int(nz.sum()), starts, idx[nz].astype(np.int32), val[nz]


class ColumnGeneration:
    r"""``reweight="cg"``: the reweighting LP over all iterates, solved by row and column
    generation, plus new points, the fixed points of its dual deviations.

    The restricted LP :math:`\min_{\lambda \in \Delta_C} \sum_k \lambda_k s_k - \sum_g v_g`,
    :math:`v_g \le \sum_k \lambda_k L_{ke}` for the active experts :math:`e` of each group
    :math:`g` (:meth:`EVIDomain.experts`), keeps a few columns :math:`C` and expert rows. Rows:
    the ``ROWS`` most violated experts of every group whose constraints the LP's
    :math:`\lambda` violates. Once none is, its dual is the worst deviation :math:`\phi^*`
    for :math:`\lambda`; columns: the ``ADD`` iterates with the smallest
    :math:`\langle F(x_k), x_k - \phi^*(x_k)\rangle` below the LP value, and one new point, a
    fixed point :math:`x^*` of :math:`\phi^*`, where that value is 0 (the good-enough
    response of the ellipsoid against hope); zero-weight columns leave when there are many.
    The state persists between calls, including one HiGHS model of the restricted LP that
    each re-solve warm-starts from its last basis (dual simplex after new rows, primal
    simplex after new columns only).

    Parameters
    ----------
    problem : jitopt.problems.VIProblem
        Its operator is called (and counted) at each new point.
    dom : EVIDomain
        The internal form of ``problem.domain`` (a box, a simplex, or a product of simplices
        with ``ce=True``).
    ce : bool
        Per-block linear deviations (correlated equilibria) instead of all affine ones.

    Attributes
    ----------
    pool_y, pool_f : ndarray
        The points of the last :meth:`run` (internal coordinates) and their operator values
        times ``unit``: the new points generated so far, then the iterates.
    unit : float
        The scale of the LP: one over the largest operator value of the first call's
        iterates (HiGHS's tolerances are absolute; the weights do not depend on it).
    columns : ndarray of int
        The pool indices of the columns of the restricted LP.
    rows : ndarray of int
        The experts (of :meth:`EVIDomain.experts`) with a row in the restricted LP.
    fp_res : float
        The largest fixed-point residual of the new points.

    Examples
    --------
    :func:`jitopt.solvers.evi` makes one with ``reweight="cg"``; on rock-paper-scissors the
    mixture's mean is the uniform equilibrium:

    >>> import numpy as np, jitopt
    >>> from jitopt.problems import AffineOperator, VIProblem
    >>> from jitopt.sets import Simplex
    >>> from jitopt.solvers import ColumnGeneration, EVIDomain
    >>> A = np.array([[0.0, -1.0, 1.0], [1.0, 0.0, -1.0], [-1.0, 1.0, 0.0]])
    >>> problem = VIProblem(AffineOperator(A), Simplex(), dim=3)
    >>> ColumnGeneration(problem, EVIDomain(Simplex(), dim=3), ce=False).columns.size
    0
    >>> res = jitopt.solvers.evi(problem, reweight="cg", tol=1e-4, rng=0)
    >>> bool(res.success), np.round(res.x, 3)
    (True, array([0.333, 0.333, 0.333]))
    """

    ADD = 20  # iterates priced in per LP
    ROWS = 3  # violated rows added per group and LP
    LONG = 8  # the last call, once the rounds are spent, may solve LONG * budget LPs

    def __init__(self, problem, dom, ce):
        self.problem, self.dom, self.ce = problem, dom, ce
        self.group, self.p, self.q, self.alpha, self.beta, self.ng = dom.experts(ce)
        self.first = np.flatnonzero(np.r_[True, self.group[1:] != self.group[:-1]])
        self.G = (np.zeros((0, dom.dy)), np.zeros((0, dom.dy)), np.zeros((0, dom.d)))
        self.fp_res = 0.0
        # one HiGHS model for all calls: columns v_1..v_ng (free, cost -1), then lambda over
        # self.columns (indices into the pool [generated; iterates]); rows sum(lambda) = 1, then
        # one row per active expert, in the order self.rows
        import highspy

        self.highspy = highspy
        self.h = getattr(highspy, "_Highs", highspy.Highs)()  # the base class prints no banner
        self.h.setOptionValue("output_flag", False)
        ng = self.ng
        self.h.addCols(ng, -np.ones(ng), np.full(ng, -np.inf), np.full(ng, np.inf), 0,
                       np.zeros(ng, np.int32), np.zeros(0, np.int32), np.zeros(0))
        self.h.addRows(1, np.ones(1), np.ones(1), 0, np.zeros(1, np.int32),
                       np.zeros(0, np.int32), np.zeros(0))
        self.columns = np.zeros(0, np.int64)
        self.rows = np.zeros(0, np.int64)
        self.active = np.zeros(self.group.size, bool)  # the experts with a row
        self.dual = True  # rows were added since the last solve: dual simplex, else primal
        self.pool_y = self.pool_f = None  # the pool (internal points, scaled values)
        self.unit = None

    def _vals(self, Y, Fy, lam):
        """The experts' values on the mixture and the group minima."""
        M = (Fy * lam[:, None]).T @ Y
        vals = self.alpha * (lam @ Fy)[self.p] + self.beta * M[self.p, self.q]
        return vals, np.minimum.reduceat(vals, self.first)

    def _argmins(self, vals, mins):
        hit = np.flatnonzero(vals <= mins[self.group])
        return hit[np.unique(self.group[hit], return_index=True)[1]]

    def _L(self, k, e):
        """The restricted LP's coefficients ``L[k, e]`` (pool points ``k``, experts ``e``)."""
        y = self.pool_y[np.ix_(k, self.q[e])]
        return self.pool_f[np.ix_(k, self.p[e])] * (self.alpha[e] + self.beta[e] * y)

    def _add_rows(self, new):
        """Rows :math:`v_{g_e} - \\sum_k \\lambda_k L_{ke} \\le 0` for the experts ``new``."""
        ng, nc = self.ng, self.columns.size
        L = -self._L(self.columns, new).T  # (rows, columns)
        idx = np.hstack([self.group[new][:, None], ng + np.tile(np.arange(nc), (new.size, 1))])
        val = np.hstack([np.ones((new.size, 1)), L])
        self.h.addRows(new.size, np.full(new.size, -np.inf), np.zeros(new.size),
                       *_packed(val, idx))
        self.active[new] = True
        self.rows = np.concatenate([self.rows, new])
        self.dual = True

    def _add_cols(self, add):
        """Columns :math:`\\lambda_k \\ge 0` for the pool points ``add``."""
        e = self.rows
        val = np.hstack([np.ones((add.size, 1)), -self._L(add, e)])  # (columns, rows)
        idx = np.tile(np.arange(e.size + 1), (add.size, 1))
        s = np.einsum("kj,kj->k", self.pool_f[add], self.pool_y[add])
        self.h.addCols(add.size, s, np.zeros(add.size), np.full(add.size, np.inf),
                       *_packed(val, idx))
        self.columns = np.concatenate([self.columns, add])

    def _drop_cols(self, keep):
        """Remove the columns not in the boolean mask ``keep``."""
        drop = np.flatnonzero(~keep)
        self.h.deleteCols(drop.size, (self.ng + drop).astype(np.int32))
        self.columns = self.columns[keep]

    def solve(self):
        """Solve the restricted LP from the previous basis (once more from scratch if that
        fails); its weights, value, ``v`` and the normalised row duals :math:`\\pi` (one
        distribution over the active experts of each group), None if HiGHS does not find
        its optimum within ``LP_PIVOTS`` pivots per row and column, a ``RuntimeError`` if
        it fails otherwise."""
        h, status = self.h, self.highspy.HighsModelStatus
        h.setOptionValue("simplex_strategy", 1 if self.dual else 4)
        h.setOptionValue("simplex_iteration_limit",
                         _domains.LP_PIVOTS * (h.getNumRow() + h.getNumCol()))
        self.dual = False
        h.run()
        if h.getModelStatus() != status.kOptimal:
            h.clearSolver()  # the warm start failed (seen on degenerate LPs): start afresh
            h.run()
        if h.getModelStatus() == status.kIterationLimit:
            return None
        if h.getModelStatus() != status.kOptimal:
            raise RuntimeError("the reweighting LP failed: "
                               f"{h.modelStatusToString(h.getModelStatus())}")
        sol = h.getSolution()
        x, dual = np.asarray(sol.col_value), np.asarray(sol.row_dual)
        lam = np.maximum(x[self.ng:], 0.0)
        pi = np.zeros(self.group.size)
        pi[self.rows] = np.maximum(-dual[1:], 0.0)
        tot = np.add.reduceat(pi, self.first)
        pi /= np.where(tot > 0, tot, 1.0)[self.group]
        return lam / lam.sum(), float(h.getInfo().objective_function_value), x[:self.ng], pi

    def _deviation(self, pi):
        d = self.dom.dy
        K, c = np.zeros((d, d)), np.zeros(d)
        np.add.at(K, (self.p, self.q), pi * self.beta)
        np.add.at(c, self.p, pi * self.alpha)
        return K, c

    def run(self, Yit, Fit, FXit, tol, budget, stop=None):
        """Up to ``budget`` restricted LPs over the iterates ``Yit`` (internal coordinates),
        their values ``Fit`` (internal) and ``FXit`` (original), fewer if ``stop()`` turns
        true or an LP reaches the pivot bound; returns the best mixture ``(Y, Fy, Fx,
        weights, report)``, None if the first LP reached the bound."""
        dom, T = self.dom, Yit.shape[0]
        if self.unit is None:
            top = float(np.abs(Fit).max(initial=0.0))
            self.unit = 1.0 / top if 0.0 < top < np.inf else 1.0
        # the pool: the points generated so far, then the iterates
        pF, pX = np.vstack([self.G[1], Fit]), np.vstack([self.G[2], FXit])
        self.pool_y, self.pool_f = np.vstack([self.G[0], Yit]), pF * self.unit
        ng0 = self.G[0].shape[0]
        if self.columns.size == 0:
            start = ng0 + np.unique(np.linspace(0, T - 1, min(50, T)).astype(np.int64))
            vals, mins = self._vals(self.pool_y[start], self.pool_f[start],
                                    np.full(start.size, 1.0 / start.size))
            self._add_rows(self._argmins(vals, mins))
            self._add_cols(start)
        s_pool = np.einsum("kj,kj->k", self.pool_f, self.pool_y)
        best = None
        for it in range(budget):
            if it and stop is not None and stop():
                break
            cols = self.columns
            sol = self.solve()
            if sol is None:  # the pivot bound: the call ends with its best LP so far
                break
            lam, val, v, pi = sol
            vals, mins = self._vals(self.pool_y[cols], self.pool_f[cols], lam)
            gap = float(lam @ s_pool[cols]) - float(mins.sum())
            if best is None or gap < best[0]:
                keep = lam > 0
                best = (gap, cols[keep], lam[keep])
            if gap <= tol * self.unit:
                break
            scale = 1e-12 * (1.0 + abs(val))
            new = np.flatnonzero(~self.active & (vals < v[self.group] - scale))
            if new.size:  # row generation: lambda is not optimal over the columns yet
                new = new[np.lexsort((vals[new], self.group[new]))]  # by group, then value
                start = np.flatnonzero(np.r_[True, np.diff(self.group[new]) != 0])
                rank = np.arange(new.size) - np.repeat(start, np.diff(np.r_[start, new.size]))
                new = new[rank < self.ROWS]  # the most violated rows of each group
                self._add_rows(new)
            elif cols.size > np.count_nonzero(lam) + 4 * self.ADD:  # drop unused columns
                self._drop_cols(lam > 0)
            K, c = self._deviation(pi)
            add = np.zeros(0, np.int64)
            if new.size == 0:  # pricing: the iterates that beat the LP value under phi*
                red = s_pool - np.einsum("kj,kj->k", self.pool_f, self.pool_y @ K.T + c) - val
                red[self.columns] = np.inf
                add = np.argsort(red)[:self.ADD]
                add = add[red[add] < -scale]
            if new.size == 0:  # the good-enough response to phi*: a fixed point
                y = np.empty(dom.dy)
                res = dom.solve_fixed_point(K, c, not dom.box, y)
                fx = self.problem.F(dom.to_x(y))
                self.fp_res = max(self.fp_res, res)
                k = self.G[0].shape[0]
                fy = dom.f_to_y(fx)
                self.G = (np.vstack([self.G[0], y]), np.vstack([self.G[1], fy]),
                          np.vstack([self.G[2], fx]))
                self.pool_y = np.vstack([self.pool_y[:k], y, self.pool_y[k:]])
                self.pool_f = np.vstack([self.pool_f[:k], fy * self.unit, self.pool_f[k:]])
                pF, pX = np.vstack([pF[:k], fy, pF[k:]]), np.vstack([pX[:k], fx, pX[k:]])
                s_pool = np.einsum("kj,kj->k", self.pool_f, self.pool_y)
                self.columns = np.where(self.columns >= k, self.columns + 1, self.columns)
                best = (best[0], np.where(best[1] >= k, best[1] + 1, best[1]), best[2])
                add = np.concatenate([np.where(add >= k, add + 1, add), [k]])
            if add.size == 0 and new.size == 0:
                break  # nothing new to add
            if add.size:
                self._add_cols(add)
        if best is None:
            return None
        # the next call's pool has the same generated points first, then the iterates
        idx, lam = best[1], best[2]
        Y, Fy, Fx = self.pool_y[idx], pF[idx], pX[idx]
        return Y, Fy, Fx, lam, report(dom, Y, Fy, Fx, lam, self.ce)
