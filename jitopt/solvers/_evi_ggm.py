r"""``method="ggm"`` of :func:`jitopt.solvers.evi`: the Gordon–Greenwald–Marks
:math:`\Phi`-regret loop, its learners' state and the reweighting of its iterates."""

import numpy as np

from .._core.result import NonFiniteOracle, OracleError, Status
from ..problems import AffineOperator, NormalFormOperator
from . import _evi_kernels as _k
from ._evi_cg import ColumnGeneration
from ._evi_gap import no_mixture, report

__all__ = ["ggm"]

_DELTA = 1e-9  # the perturbation of the fixed-point solve


class _State:
    """The arrays of the learners (see :mod:`jitopt.solvers._evi_kernels`)."""

    def __init__(self, dom, alce, learner, weighting, op_kind):
        n = dom.off.shape[0] - 1
        dy = dom.dy
        if dom.box:
            nq = dy * (2 * dy + 2)
            poff = np.zeros(1, np.int64)
        else:
            sizes = np.diff(dom.off)
            poff = np.zeros(n * n + 1, np.int64)
            for i in range(n):
                for j in range(n):
                    poff[i * n + j + 1] = poff[i * n + j] + sizes[i] * sizes[j]
            nq = int(poff[-1])
        self.ip = np.array([dom.kind, int(alce), learner, n, dy, op_kind, weighting, 0], np.int64)
        self.off, self.poff = dom.off, poff
        self.Q, self.P, self.S = np.zeros(nq), np.zeros(nq), np.zeros(nq)
        self.Ql, self.Pl, self.Sl = np.zeros(n * n), np.zeros(n * n), np.zeros(n * n)
        self.aux = np.zeros(1)
        self.K, self.c = np.zeros((dy, dy)), np.zeros(dy)
        self.u = dom.interior()
        self.M, self.Fbar, self.sacc = np.zeros((dy, dy)), np.zeros(dy), np.zeros(2)

    def learner_args(self):
        return (self.ip, self.off, self.poff, self.Q, self.P, self.Ql, self.Pl, self.S, self.Sl,
                self.aux)


def _structure(operator):
    """The compiled operator's kind and data (``OP_EXTERNAL`` for a Python callable)."""
    if isinstance(operator, AffineOperator):
        return _k.OP_AFFINE, operator.A, operator.b, np.zeros((1, 1)), np.zeros(2, np.int64)
    if isinstance(operator, NormalFormOperator):
        return (_k.OP_NORMAL_FORM, np.zeros((1, 1)), np.zeros(1), operator.U,
                operator.offsets)
    return _k.OP_EXTERNAL, np.zeros((1, 1)), np.zeros(1), np.zeros((1, 1)), np.zeros(2, np.int64)


def ggm(problem, dom, y0, tol, ce, learner, linear_weights, maxiter, max_time, check_every,
        reweight, reweight_max, monitor):
    """Run the regret loop; returns ``(status, nit, fp_residual, mixture)`` with ``mixture``
    ``(Y, Fy, Fx, weights, report)`` in internal coordinates, or None without any round."""
    op_kind, A, bvec, U, xoff = _structure(problem.operator)
    st = _State(dom, not ce, learner, int(linear_weights), op_kind)
    largs = st.learner_args()
    Ys, Fs, FXs = [], [], []
    ysum = np.zeros(dom.dy)  # the weighted sum of the iterates, for the mixture's mean
    nit, fp_res, status = 0, 0.0, None

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

    if monitor.iteration(0, dom.to_x(dom.interior() if y0 is None else y0), np.nan, np.nan):
        return Status.CALLBACK, 0, 0.0, None
    if y0 is not None and maxiter > 0 and monitor.elapsed() < max_time:
        # the first round plays y0 (the learners' first strategies are uniform)
        y = np.empty(dom.dy)
        _k.propose(*largs, st.K, st.c, st.u, _DELTA, y)
        y = np.ascontiguousarray(y0)
        fy, fx = python_round(y, 1)
        _k.observe(*largs, y, fy, st.M, st.Fbar, st.sacc)
        Ys.append(y[None, :].copy())
        Fs.append(fy[None, :])
        FXs.append(fx[None, :])
        ysum += y
        nit = 1
    rw_best, next_rw = None, 2 * check_every
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
        nr = min(check_every - nit % check_every, maxiter - nit)
        Yb, Fb, rb = np.empty((nr, dom.dy)), np.empty((nr, dom.dy)), np.zeros(nr)
        FXb = np.empty((nr, dom.d))
        if op_kind != _k.OP_EXTERNAL:
            done = _k.run_rounds(nr, *largs, st.K, st.c, st.u, _DELTA, dom.shift, dom.T, A,
                                 bvec, U, xoff, st.M, st.Fbar, st.sacc, Yb, Fb, FXb, rb)
            problem.counts.nfev += done + (done < nr)
            if done < nr:
                raise NonFiniteOracle(f"The oracle operator returned a non-finite value (NaN "
                                      f"or inf) in round {nit + done + 1}")
        else:
            y = np.empty(dom.dy)
            for r in range(nr):
                rb[r] = _k.propose(*largs, st.K, st.c, st.u, _DELTA, y)
                Fb[r], FXb[r] = python_round(y, nit + r + 1)
                _k.observe(*largs, y, Fb[r], st.M, st.Fbar, st.sacc)
                Yb[r] = y
        Ys.append(Yb)
        Fs.append(Fb)
        FXs.append(FXb)
        t = np.arange(nit + 1, nit + nr + 1, dtype=float) if linear_weights else np.ones(nr)
        ysum += t @ Yb
        fp_res = max(fp_res, float(rb.max(initial=0.0)))
        nit += nr
        gaps_now = np.empty((3, dom.nblocks))
        _k.gaps(dom.kind, dom.off, st.M, st.Fbar, st.sacc[0], st.sacc[1], gaps_now)
        gap = float(gaps_now[1 if ce else 0].sum())
        if monitor.iteration(nit, dom.to_x(ysum / st.sacc[1]), gap, gap,
                             gap_con=float(gaps_now[2].sum())):
            status = Status.CALLBACK
        elif gap <= tol:
            status = Status.CONVERGED
        elif reweight and nit >= next_rw:
            next_rw = 2 * nit
            rw_best = reweighted(np.vstack(Ys), np.vstack(Fs), np.vstack(FXs))
            if rw_best[4].gap <= tol:
                status = Status.CONVERGED
    if nit == 0:
        return status, 0, 0.0, None
    Y, Fy, Fx = np.vstack(Ys), np.vstack(Fs), np.vstack(FXs)
    t = np.arange(1, Y.shape[0] + 1, dtype=float)
    w = t / t.sum() if linear_weights else np.full(Y.shape[0], 1.0 / Y.shape[0])
    best = (Y, Fy, Fx, w, report(dom, Y, Fy, Fx, w, ce))
    if rw_best is not None and rw_best[4].gap < best[4].gap:
        best = rw_best
    elif reweight and Y.shape[0] > 1 and best[4].gap > 0:
        cand = reweighted(Y, Fy, Fx)
        if cand[4].gap < best[4].gap:
            best = cand
    if cg is not None and status == Status.MAXITER and best[4].gap > tol:
        # the rounds are spent: one long column generation over all iterates
        cand = cg.run(Y, Fy, Fx, tol, cg.LONG * reweight_max,
                      lambda: monitor.elapsed() >= max_time)
        if cand[4].gap < best[4].gap:
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
    """The reweighting LP over at most ``reweight_max`` evenly spaced iterates."""
    idx = np.unique(np.linspace(0, Y.shape[0] - 1, min(reweight_max, Y.shape[0])).astype(int))
    Yr, Fr, FXr = Y[idx], Fy[idx], Fx[idx]
    lam = dom.reweight(dom.to_x(Yr), FXr) if dom.lift else dom.reweight(Yr, Fr, ce=ce)
    return Yr, Fr, FXr, lam, report(dom, Yr, Fr, FXr, lam, ce)
