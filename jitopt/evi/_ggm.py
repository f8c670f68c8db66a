r"""``method="ggm"`` of :func:`jitopt.solvers.evi`: the Gordon–Greenwald–Marks
:math:`\Phi`-regret loop, its learners' state and the reweighting of its iterates."""

import numpy as np

from .._core.result import NonFiniteOracle, OracleError, Status
from .._core.run import Algorithm, State
from .._core.stopping import Criterion, verdict
from ..problems import OP_EXTERNAL
from . import _kernels as _k
from ._cg import ColumnGeneration
from ._domains import block_experts
from ._gap import no_mixture, report, result_message

__all__ = ["RegretLearning", "Reweighting"]

#: the first reweighting comes before its round ``2 * check_every`` at the first gap check
#: within this factor of ``tol`` (chosen on the defaults battery: 15 to 25 did as well, 10
#: started too late on one game and 30 too early)
EARLY_GAP = 20.0
_PIECE = 100  # rounds per call of the uncompiled loop


class _State:
    """The arrays of the learners (see :mod:`jitopt.evi._kernels`)."""

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
    """The compiled operator's code and data, ``(code, A, b, U, offsets)``: its
    ``kernel_args()``, or ``OP_EXTERNAL`` for a Python callable."""
    kernel_args = getattr(operator, "kernel_args", None)
    if kernel_args is not None:
        return kernel_args()
    return OP_EXTERNAL, np.zeros((1, 1)), np.zeros(1), np.zeros((1, 1)), np.zeros(2, np.int64)


def next_check(nit, check_every):
    """The round of the gap check after round ``nit``: rounds 1, 2, 4, ... below
    ``check_every``, then its multiples."""
    if 0 < 2 * nit < check_every:
        return 2 * nit
    return 1 if nit == 0 else (nit // check_every + 1) * check_every


class RegretLearning(Algorithm):
    """The regret loop: each step plays the rounds up to the next gap check (compiled for the
    built-in operators), and the state is the mean of the iterates with its certified gap.
    At the end (``finish``) the result is the mixture of the best check, or a better one
    from the reweighting."""

    columns = ("gap_con",)
    final_row = True

    def __init__(self, dom, y0, ce, learner, linear_weights, check_every, reweight,
                 reweight_max, limits, measure):
        self.dom, self.y0, self.ce, self.learner = dom, y0, ce, learner
        self.linear_weights, self.check_every = linear_weights, check_every
        self.reweight, self.reweight_max, self.limits = reweight, reweight_max, limits
        self.tol, self.measure = limits["tol"], measure
        self.result = None  # the result's mixture fields, once finished

    def start(self, problem, x):
        self.problem, dom = problem, self.dom
        self.op_kind, *self.op_data = _structure(problem.operator)
        self.st = _State(dom, self.ce, self.learner, int(self.linear_weights), self.op_kind)
        # the work of a round, which decides whether its kernels run compiled
        self.work = self.st.Q.size + dom.dy * (dom.dy + dom.d) + sum(
            np.size(a) for a in self.op_data)
        self.Ys, self.Fs, self.FXs = [], [], []
        self.ysum = np.zeros(dom.dy)  # the weighted sum of the iterates, for the mean
        self.fp_res = 0.0
        self.best_gap, self.best_nit = np.inf, 0  # the best gap check: a prefix of the rounds
        self.rw_best, self.next_rw, self.tried = None, 2 * self.check_every, False
        self.cg = ColumnGeneration(problem, dom, self.ce) if self.reweight == "cg" else None
        return State(dom.to_x(dom.interior() if self.y0 is None else self.y0), np.nan,
                     np.nan, self.measure)

    def fields(self, x, nit):
        """The mixture fields: the result's, or for a fault those of the rounds up to the
        check ``nit``."""
        if self.result is not None:
            return self.result
        if nit == 0:
            return no_mixture(self.dom.d)
        Y, Fy, Fx = (np.vstack(a)[:nit] for a in (self.Ys, self.Fs, self.FXs))
        t = np.arange(1, nit + 1, dtype=float) if self.linear_weights else np.ones(nit)
        return {"points": self.dom.to_x(Y), "weights": t / t.sum(), "fp_residual": self.fp_res,
                **report(self.dom, Y, Fy, Fx, t / t.sum(), self.ce)}

    def python_round(self, y, k):
        """The operator at round ``k``'s point, in both coordinates (a fault names ``k``)."""
        try:
            fx = self.problem.F(self.dom.to_x(y))
        except OracleError as err:
            raise type(err)(f"{err} in round {k}") from err.__cause__
        return np.ascontiguousarray(self.dom.f_to_y(fx)), fx

    def observe(self, y, fy):
        st = self.st
        _k.kernel(_k.observe, self.work)(*st.learner_args(), st.loss, y, fy, st.M, st.Fbar,
                                         st.sacc)

    def step(self, s, budget):
        dom, st, nit = self.dom, self.st, s.nit
        largs = st.learner_args()
        nr = min(next_check(nit, self.check_every) - nit, budget.iterations(s))
        Yb, Fb, rb = np.empty((nr, dom.dy)), np.empty((nr, dom.dy)), np.zeros(nr)
        FXb = np.empty((nr, dom.d))
        done = 0
        if nit == 0 and self.y0 is not None:
            # the first round plays y0 (the learners' first strategies are uniform)
            _k.kernel(_k.propose, self.work)(*largs, st.K, st.c)
            Yb[0] = self.y0
            Fb[0], FXb[0] = self.python_round(Yb[0], 1)
            self.observe(Yb[0], Fb[0])
            done = 1
        if self.op_kind != OP_EXTERNAL:
            while done < nr:
                run_rounds = _k.kernel(_k.run_rounds, self.work)
                # (uncompiled, a piece of rounds at a time: the budget is checked between)
                m = nr - done if run_rounds is _k.run_rounds else min(nr - done, _PIECE)
                k = run_rounds(m, *largs, st.loss, st.K, st.c, st.u, _k.DELTA, dom.off, st.W,
                               st.iw, dom.shift, dom.T, *self.op_data, st.M, st.Fbar, st.sacc,
                               Yb[done:], Fb[done:], FXb[done:], rb[done:])
                self.problem.counts.add(nfev=k + (k < m))
                if k < m:
                    raise NonFiniteOracle(f"The oracle operator returned a non-finite value "
                                          f"(NaN or inf) in round {nit + done + k + 1}")
                done += m
        else:
            for r in range(done, nr):
                _k.kernel(_k.propose, self.work)(*largs, st.K, st.c)
                rb[r] = dom.solve_fixed_point(st.K, st.c, bool(st.ip[_k.I_BLOCKDIAG]), Yb[r])
                Fb[r], FXb[r] = self.python_round(Yb[r], nit + r + 1)
                self.observe(Yb[r], Fb[r])
        self.Ys.append(Yb)
        self.Fs.append(Fb)
        self.FXs.append(FXb)
        t = np.arange(nit + 1, nit + nr + 1, dtype=float) if self.linear_weights else \
            np.ones(nr)
        self.ysum += t @ Yb
        self.fp_res = max(self.fp_res, float(rb.max(initial=0.0)))
        s.nit = nit = nit + nr
        gaps_now = dom.gaps(st.M, st.Fbar, st.sacc[0], st.sacc[1])
        gap = float(gaps_now[1 if self.ce else 0].sum())
        if gap < self.best_gap:
            self.best_gap, self.best_nit = gap, nit
        s.x, s.fun, s.stationarity = dom.to_x(self.ysum / st.sacc[1]), gap, gap
        s.extra = {"gap_con": float(gaps_now[2].sum())}
        return None

    def reweighted(self, Y, Fy, Fx):
        """The reweighted mixture of the iterates, or None when the LP reached its bound."""
        if self.cg is not None:
            return self.cg.run(Y, Fy, Fx, self.tol, self.reweight_max)
        return _reweighted(self.dom, Y, Fy, Fx, self.ce, self.reweight_max)

    def finish(self, s, ended, budget):
        status, nit, tol = ended[0], s.nit, self.tol
        if nit == 0:
            self.result = no_mixture(self.dom.d)
            return status, result_message(status, s, self.limits)
        Y, Fy, Fx = np.vstack(self.Ys), np.vstack(self.Fs), np.vstack(self.FXs)
        # the mixture of the best gap check (the last one unless the gap grew since)
        n = self.best_nit if self.best_nit else nit
        t = np.arange(1, n + 1, dtype=float) if self.linear_weights else np.ones(n)
        w = t / t.sum()
        best = (Y[:n], Fy[:n], Fx[:n], w, report(self.dom, Y[:n], Fy[:n], Fx[:n], w, self.ce))
        if self.rw_best is not None and self.rw_best[4].gap < best[4].gap:
            best = self.rw_best
        elif self.reweight and Y.shape[0] > 1 and best[4].gap > tol:
            cand = self.reweighted(Y, Fy, Fx)
            if cand is not None and cand[4].gap < best[4].gap:
                best = cand
        cg = self.cg
        if cg is not None and status == Status.MAXITER and best[4].gap > tol:
            # the rounds are spent: one long column generation over all iterates
            cand = cg.run(Y, Fy, Fx, tol, cg.LONG * self.reweight_max,
                          lambda: budget.seconds() <= 0)
            if cand is not None and cand[4].gap < best[4].gap:
                best = cand
        if cg is not None:
            self.fp_res = max(self.fp_res, cg.fp_res)
        Yb, _, _, w, rep = best
        if status == Status.CONVERGED and rep.gap > tol:
            status = Status.MAXITER  # only on a polytope, where the check used an upper bound
        if rep.gap <= tol and status in (Status.MAXITER, Status.MAXTIME):
            status = Status.CONVERGED
        keep = w > 0
        X = self.dom.to_x(Yb[keep])
        w = w[keep] / w[keep].sum()
        s.x, s.fun, s.stationarity, s.extra = w @ X, rep.gap, rep.gap, {"gap_con": rep.gap_con}
        self.result = {"points": X, "weights": w, "fp_residual": self.fp_res, **rep}
        return status, result_message(status, s, self.limits)


class Reweighting(Criterion):
    """``CONVERGED`` when the reweighted iterates certify ``tol``: the reweighting LP runs
    from round ``2 * check_every`` each time the rounds have doubled, or earlier at the
    first gap check within :data:`EARLY_GAP` times ``tol``."""

    def __init__(self, method):
        self.method = method

    def __call__(self, s, watch):
        m = self.method
        if not (s.nit >= m.next_rw or (not m.tried and s.stationarity <= EARLY_GAP * m.tol)):
            return None
        m.next_rw, m.tried = max(m.next_rw, 2 * s.nit), True
        cand = m.reweighted(np.vstack(m.Ys), np.vstack(m.Fs), np.vstack(m.FXs))
        if cand is None:  # the (first) LP reached its pivot bound
            return None
        m.rw_best = cand
        if cand[4].gap <= m.tol:
            return verdict(Status.CONVERGED, s, tol_name="tol", tol=m.tol)
        return None


def _reweighted(dom, Y, Fy, Fx, ce, reweight_max):
    """The reweighting LP over at most ``reweight_max`` evenly spaced iterates (None when
    it reached its pivot bound)."""
    idx = np.unique(np.linspace(0, Y.shape[0] - 1, min(reweight_max, Y.shape[0])).astype(int))
    Yr, Fr, FXr = Y[idx], Fy[idx], Fx[idx]
    lam = dom.reweight(dom.to_x(Yr), FXr) if dom.lift else dom.reweight(Yr, Fr, ce=ce)
    if lam is None:
        return None
    return Yr, Fr, FXr, lam, report(dom, Yr, Fr, FXr, lam, ce)
