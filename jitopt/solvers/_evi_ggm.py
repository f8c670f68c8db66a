r"""``method="ggm"`` of :func:`jitopt.solvers.evi`: the Gordon–Greenwald–Marks
:math:`\Phi`-regret loop, its learners' state and the reweighting of its iterates."""

import numpy as np

from .._core.result import NonFiniteOracle, OracleError, Status
from ..problems import AffineOperator, NormalFormOperator
from . import _evi_kernels as _k
from ._evi_cg import ColumnGeneration
from ._evi_domains import block_experts
from ._evi_gap import no_mixture, report

__all__ = ["ggm"]

#: the first reweighting comes before its round ``2 * check_every`` at the first gap check
#: within this factor of ``tol`` (chosen on the defaults battery: 15 to 25 did as well, 10
#: started too late on one game and 30 too early)
EARLY_GAP = 20.0


class _State:
    """The arrays of the learners (see :mod:`jitopt.solvers._evi_kernels`)."""

    def __init__(self, dom, ce, learner, weighting, op_kind):
        n = dom.nblocks
        alce = not dom.box and not ce and n > 1  # all affine maps: the regret circuit
        if dom.box:  # one group per row, over the experts 0, 1, y_j, 1 - y_j
            group = np.repeat(np.arange(dom.dy), 2 * dom.dy + 2)
            p = q = np.zeros(0, np.int64)
            src = np.full(dom.dy, -1)
        else:
            pairs = [(i, j) for i in range(n) for j in range(n) if alce or i == j]
            group, p, q, pair = block_experts(dom.off, pairs)
            # the source of a group of the block (i, j): lambda_i's entry j, after the experts
            src = q.size + pair if alce else np.full(pair.size, -1)
        ns = src.size  # the groups with a map; the sources, n groups of n, come after them
        if alce:
            group = np.concatenate([group, ns + np.repeat(np.arange(n), n)])
        ne = group.size
        self.gstart = np.searchsorted(group, np.arange(ns + (n if alce else 0) + 1)).astype(
            np.int64)
        self.src = src.astype(np.int64)
        self.p, self.q = np.zeros(ne, np.int64), np.zeros(ne, np.int64)
        self.p[:p.size], self.q[:q.size] = p, q
        self.ip = np.array([dom.kind, learner, ns, int(not dom.box and not alce),
                            np.diff(self.gstart).max(initial=1), op_kind, weighting, 0], np.int64)
        self.Q, self.P, self.S, self.loss = (np.zeros(ne) for _ in range(4))
        self.aux = np.zeros(1)
        dy = dom.dy
        self.K, self.c = np.zeros((dy, dy)), np.zeros(dy)
        self.u = dom.interior()
        self.W, self.iw = np.empty((dy, dy)), np.empty(dy + 5, np.int32)  # for LAPACK
        self.M, self.Fbar, self.sacc = np.zeros((dy, dy)), np.zeros(dy), np.zeros(2)

    def learner_args(self):
        return (self.ip, self.gstart, self.p, self.q, self.src, self.Q, self.P, self.S,
                self.aux)



def _structure(operator):
    """The compiled operator's kind and data (``OP_EXTERNAL`` for a Python callable)."""
    if isinstance(operator, AffineOperator):
        return _k.OP_AFFINE, operator.A, operator.b, np.zeros((1, 1)), np.zeros(2, np.int64)
    if isinstance(operator, NormalFormOperator):
        return (_k.OP_NORMAL_FORM, np.zeros((1, 1)), np.zeros(1), operator.U,
                operator.offsets)
    return _k.OP_EXTERNAL, np.zeros((1, 1)), np.zeros(1), np.zeros((1, 1)), np.zeros(2, np.int64)


def next_check(nit, check_every):
    """The round of the gap check after round ``nit``: rounds 1, 2, 4, ... below
    ``check_every``, then its multiples."""
    if 0 < 2 * nit < check_every:
        return 2 * nit
    return 1 if nit == 0 else (nit // check_every + 1) * check_every


def ggm(problem, dom, y0, tol, ce, learner, linear_weights, maxiter, max_time, check_every,
        reweight, reweight_max, monitor):
    """Run the regret loop; returns ``(status, nit, fp_residual, mixture)`` with ``mixture``
    ``(Y, Fy, Fx, weights, report)`` in internal coordinates, or None without any round."""
    op_kind, A, bvec, U, xoff = _structure(problem.operator)
    st = _State(dom, ce, learner, int(linear_weights), op_kind)
    largs = st.learner_args()
    Ys, Fs, FXs = [], [], []
    ysum = np.zeros(dom.dy)  # the weighted sum of the iterates, for the mixture's mean
    nit, fp_res, status = 0, 0.0, None
    best_gap, best_nit = np.inf, 0  # the best gap check: a prefix of the iterates

    def fields(x, nit):
        """The mixture of a fault result: the rounds up to check ``nit``, mean ``x``."""
        if nit == 0:
            return no_mixture(dom.d)
        Y, Fy, Fx = (np.vstack(a)[:nit] for a in (Ys, Fs, FXs))
        t = np.arange(1, nit + 1, dtype=float) if linear_weights else np.ones(nit)
        return {"points": dom.to_x(Y), "weights": t / t.sum(), "fp_residual": fp_res,
                **report(dom, Y, Fy, Fx, t / t.sum(), ce)}

    monitor.fields = fields
    def python_round(y, k):
        """The operator at round ``k``'s point, in both coordinates (a fault names ``k``)."""
        try:
            fx = problem.F(dom.to_x(y))
        except OracleError as err:
            raise type(err)(f"{err} in round {k}") from err.__cause__
        return np.ascontiguousarray(dom.f_to_y(fx)), fx

    def observe(y, fy):
        _k.observe(*largs, st.loss, y, fy, st.M, st.Fbar, st.sacc)

    if monitor.iteration(0, dom.to_x(dom.interior() if y0 is None else y0), np.nan, np.nan):
        return Status.CALLBACK, 0, 0.0, None
    rw_best, next_rw, tried = None, 2 * check_every, False
    cg = ColumnGeneration(problem, dom, ce) if reweight == "cg" else None

    def reweighted(Y, Fy, Fx):
        if cg is not None:
            return cg.run(Y, Fy, Fx, tol, reweight_max)
        return _reweighted(dom, Y, Fy, Fx, ce, reweight_max)

    while status is None:
        if nit >= maxiter:
            status = Status.MAXITER
            break
        if monitor.elapsed() >= max_time:
            status = Status.MAXTIME
            break
        nr = min(next_check(nit, check_every), maxiter) - nit
        Yb, Fb, rb = np.empty((nr, dom.dy)), np.empty((nr, dom.dy)), np.zeros(nr)
        FXb = np.empty((nr, dom.d))
        done = 0
        if nit == 0 and y0 is not None:
            # the first round plays y0 (the learners' first strategies are uniform)
            _k.propose(*largs, st.K, st.c)
            Yb[0] = y0
            Fb[0], FXb[0] = python_round(Yb[0], 1)
            observe(Yb[0], Fb[0])
            done = 1
        if op_kind != _k.OP_EXTERNAL:
            k = _k.run_rounds(nr - done, *largs, st.loss, st.K, st.c, st.u, _k.DELTA, dom.off,
                              st.W, st.iw, dom.shift, dom.T, A, bvec, U, xoff, st.M, st.Fbar,
                              st.sacc, Yb[done:], Fb[done:], FXb[done:], rb[done:])
            problem.counts.nfev += k + (k < nr - done)
            if k < nr - done:
                raise NonFiniteOracle(f"The oracle operator returned a non-finite value (NaN "
                                      f"or inf) in round {nit + done + k + 1}")
        else:
            for r in range(done, nr):
                _k.propose(*largs, st.K, st.c)
                rb[r] = dom.solve_fixed_point(st.K, st.c, bool(st.ip[_k.I_BLOCKDIAG]), Yb[r])
                Fb[r], FXb[r] = python_round(Yb[r], nit + r + 1)
                observe(Yb[r], Fb[r])
        Ys.append(Yb)
        Fs.append(Fb)
        FXs.append(FXb)
        t = np.arange(nit + 1, nit + nr + 1, dtype=float) if linear_weights else np.ones(nr)
        ysum += t @ Yb
        fp_res = max(fp_res, float(rb.max(initial=0.0)))
        nit += nr
        gaps_now = dom.gaps(st.M, st.Fbar, st.sacc[0], st.sacc[1])
        gap = float(gaps_now[1 if ce else 0].sum())
        if gap < best_gap:
            best_gap, best_nit = gap, nit
        if monitor.iteration(nit, dom.to_x(ysum / st.sacc[1]), gap, gap,
                             gap_con=float(gaps_now[2].sum())):
            status = Status.CALLBACK
        elif gap <= tol:
            status = Status.CONVERGED
        elif reweight and (nit >= next_rw or (not tried and gap <= EARLY_GAP * tol)):
            next_rw, tried = max(next_rw, 2 * nit), True
            cand = reweighted(np.vstack(Ys), np.vstack(Fs), np.vstack(FXs))
            if cand is not None:  # None: the (first) LP reached its pivot bound
                rw_best = cand
                if rw_best[4].gap <= tol:
                    status = Status.CONVERGED
    if nit == 0:
        return status, 0, 0.0, None
    Y, Fy, Fx = np.vstack(Ys), np.vstack(Fs), np.vstack(FXs)
    # the mixture of the best gap check (the last one unless the gap grew since)
    n = best_nit if best_nit else nit
    t = np.arange(1, n + 1, dtype=float) if linear_weights else np.ones(n)
    w = t / t.sum()
    best = (Y[:n], Fy[:n], Fx[:n], w, report(dom, Y[:n], Fy[:n], Fx[:n], w, ce))
    if rw_best is not None and rw_best[4].gap < best[4].gap:
        best = rw_best
    elif reweight and Y.shape[0] > 1 and best[4].gap > tol:
        cand = reweighted(Y, Fy, Fx)
        if cand is not None and cand[4].gap < best[4].gap:
            best = cand
    if cg is not None and status == Status.MAXITER and best[4].gap > tol:
        # the rounds are spent: one long column generation over all iterates
        cand = cg.run(Y, Fy, Fx, tol, cg.LONG * reweight_max,
                      lambda: monitor.elapsed() >= max_time)
        if cand is not None and cand[4].gap < best[4].gap:
            best = cand
    if cg is not None:
        fp_res = max(fp_res, cg.fp_res)
    gap = best[4].gap
    if status == Status.CONVERGED and gap > tol:
        status = Status.MAXITER  # only on a polytope, where the check used an upper bound
    if gap <= tol and status in (Status.MAXITER, Status.MAXTIME):
        status = Status.CONVERGED
    return status, nit, fp_res, best


def _reweighted(dom, Y, Fy, Fx, ce, reweight_max):
    """The reweighting LP over at most ``reweight_max`` evenly spaced iterates (None when
    it reached its pivot bound)."""
    idx = np.unique(np.linspace(0, Y.shape[0] - 1, min(reweight_max, Y.shape[0])).astype(int))
    Yr, Fr, FXr = Y[idx], Fy[idx], Fx[idx]
    lam = dom.reweight(dom.to_x(Yr), FXr) if dom.lift else dom.reweight(Yr, Fr, ce=ce)
    if lam is None:
        return None
    return Yr, Fr, FXr, lam, report(dom, Yr, Fr, FXr, lam, ce)
