r"""Expected variational inequalities (EVIs): the Phi_LIN regret loop of Gordon, Greenwald and
Marks, the certified gap of a finite mixture, and an ellipsoid-against-hope reference solver.

Given a domain :math:`X \subset \mathbb R^d` (convex, compact) and any bounded operator
:math:`F : X \to \mathbb R^d` (monotone or not, even discontinuous), an
:math:`\varepsilon`-EVI solution for the deviations :math:`\Phi` is a distribution
:math:`\mu` over :math:`X` with

.. math::

    \operatorname{Gap}_\Phi(\mu) = \sup_{\phi \in \Phi}
    \mathbb E_{x \sim \mu} \langle F(x), x - \phi(x) \rangle \le \varepsilon,

(Zhang, Anagnostides, Tewolde, Berker, Farina, Conitzer and Sandholm, *Expected variational
inequalities*, ICML 2025). With :math:`\Phi` the affine self-maps of :math:`X` this is
computable in polynomial time for every bounded :math:`F`.
"""

import math

import highspy
import numpy as np

from .._core.problem import OracleCounts
from .._core.result import Monitor, OptimizeResult, Status
from .._validation import check_choice, check_int, check_real, check_rng
from . import _evi_kernels as _k
from ..sets import Polytope, ProductOfSimplices
from ._evi_domains import make_domain

__all__ = ["VIProblem", "AffineOperator", "ProductOfSimplices", "Polytope", "evi", "evi_gap"]

_LEARNERS = {"rm+": _k.LEARNER_RMP, "prm+": _k.LEARNER_PRMP, "hedge": _k.LEARNER_HEDGE}


class AffineOperator:
    r"""The affine operator :math:`F(x) = A x + b` (evaluated inside the compiled loop).

    Parameters
    ----------
    A : array_like, shape (d, d)
    b : array_like, shape (d,), optional
        Zero by default.
    """

    def __init__(self, A, b=None):
        A = np.array(A, dtype=float, ndmin=2)
        if A.ndim != 2 or A.shape[0] != A.shape[1]:
            raise ValueError(f"A must be a square matrix, got shape {A.shape}")
        b = np.zeros(A.shape[0]) if b is None else np.array(b, dtype=float).ravel()
        if b.shape != (A.shape[0],):
            raise ValueError(f"b must have shape ({A.shape[0]},), got {b.shape}")
        if not (np.isfinite(A).all() and np.isfinite(b).all()):
            raise ValueError("A and b must be finite")
        self.A, self.b = np.ascontiguousarray(A), b
        self.dim = A.shape[0]

    def __call__(self, x):
        return self.A @ x + self.b

    def _evi_structure(self):
        return _k.OP_AFFINE, self.A, self.b, np.zeros((1, 1)), np.zeros(2, np.int64)


class VIProblem:
    r"""A variational inequality: an operator :math:`F : X \to \mathbb R^d` and a domain
    :math:`X`.

    Parameters
    ----------
    operator : callable or AffineOperator
        ``operator(x) -> ndarray of shape (d,)``. A Python callable (or a Numba-jitted
        function) is called once per round between the compiled learner steps; an
        :class:`AffineOperator` (and the operators of :mod:`jitopt.games`) run inside the
        compiled loop.
    domain : jitopt.sets.Simplex, Box, ProductOfSimplices or Polytope
        The compact convex set :math:`X` (a box needs finite bounds).
    dim : int, optional
        The dimension, for a set that does not fix it (``jitopt.sets.Simplex()``).

    Attributes
    ----------
    counts : jitopt.OracleCounts
        ``nfev`` counts operator evaluations.
    """

    def __init__(self, operator, domain, *, dim=None):
        if not callable(operator):
            raise TypeError(f"operator must be callable, got {type(operator).__name__}")
        if dim is None:
            dim = getattr(operator, "dim", None)
        self.domain = domain
        self._dom = make_domain(domain, dim)
        self.dim = self._dom.d
        op_dim = getattr(operator, "dim", None)
        if op_dim is not None and op_dim != self.dim:
            raise ValueError(f"the operator has dimension {op_dim}, the domain {self.dim}")
        self.operator = operator
        self.counts = OracleCounts()

    def F(self, x):
        """The operator at ``x`` (a copy), counted; raises ``ValueError`` on a wrong shape."""
        self.counts.nfev += 1
        f = np.array(self.operator(np.array(x, dtype=float)), dtype=float)
        if f.shape != (self.dim,):
            raise ValueError(f"the operator must return an array of shape ({self.dim},), "
                             f"got shape {f.shape}")
        return f

    def __repr__(self):
        return f"VIProblem(dim={self.dim}, domain={self._dom.name})"


def _check_problem(problem):
    if not isinstance(problem, VIProblem):
        raise TypeError(f"problem must be a VIProblem, got {type(problem).__name__}")


def _mixture(problem, points, weights, fvals):
    dom = problem._dom
    X = np.array(points, dtype=float, ndmin=2)
    if X.ndim != 2 or X.shape[1] != dom.d:
        raise ValueError(f"points must have shape (k, {dom.d}), got {np.shape(points)}")
    k = X.shape[0]
    w = np.full(k, 1.0 / k) if weights is None else np.array(weights, dtype=float).ravel()
    if w.shape != (k,) or (w < 0).any() or not w.sum() > 0 or not np.isfinite(w).all():
        raise ValueError(f"weights must be {k} nonnegative numbers with a positive sum")
    for x in X:
        if not dom.contains(x, 1e-7):
            raise ValueError("every point must lie in the domain")
    if fvals is None:
        Fx = np.array([problem.F(x) for x in X])
    else:
        Fx = np.array(fvals, dtype=float, ndmin=2)
        if Fx.shape != X.shape:
            raise ValueError(f"fvals must have shape {X.shape}, got {Fx.shape}")
    if not np.isfinite(Fx).all():
        raise ValueError("the operator values at the points must be finite")
    return X, w / w.sum(), Fx


def evi_gap(problem, points, weights=None, fvals=None, *, method="closed-form"):
    r"""Certified gaps of the mixture :math:`\mu = \sum_k w_k \delta_{x_k}`.

    With :math:`M = \sum_k w_k F(x_k) x_k^\top`, :math:`\bar F = \sum_k w_k F(x_k)` and
    :math:`s = \sum_k w_k \langle F(x_k), x_k\rangle`,
    :math:`\operatorname{Gap}_{LIN} = s - \min_{(K,c)} \langle M, K\rangle + \langle \bar F,
    c\rangle` over the affine self-maps :math:`x \mapsto Kx + c` of :math:`X`, and
    :math:`\operatorname{Gap}_{CON} = s - \min_{x' \in X} \langle \bar F, x'\rangle`.

    Closed forms: on a simplex :math:`s - \sum_b \min_a M_{ab}`; on :math:`[0,1]^d`
    :math:`s - \sum_r \min(0, \bar F_r, \min_j M_{rj}, \min_j \bar F_r - M_{rj})` (other boxes
    are rescaled); on a product of simplices the sum over blocks :math:`i` of
    :math:`s_i - \min_j \sum_b \min_a M_{ij}[a, b]` (Fujii's lemma: a linear map into block
    :math:`i` is a mixture of maps reading a single block :math:`j`). On a polytope, and with
    ``method="lp"`` on any domain, the LP of the paper's Thm D.1 (HiGHS).

    Parameters
    ----------
    problem : VIProblem
    points : array_like, shape (k, d)
    weights : array_like, shape (k,), optional
        Uniform by default; normalised.
    fvals : array_like, shape (k, d), optional
        The operator values at the points (evaluated when omitted).
    method : {"closed-form", "lp"}

    Returns
    -------
    OptimizeResult
        ``gap`` (Phi_LIN), ``gap_con`` (constant deviations) and, on a product of simplices,
        per-block arrays ``gap_alce``, ``gap_ce``, ``gap_cce`` (``gap`` is the sum of
        ``gap_alce``; ``gap_ce`` is the correlated-equilibrium regret of each block).
    """
    _check_problem(problem)
    check_choice("method", method, ("closed-form", "lp"))
    X, w, Fx = _mixture(problem, points, weights, fvals)
    dom = problem._dom
    if method == "lp" or dom.lift:
        lin, con = dom.lp_gaps(X, Fx, w)
        return OptimizeResult(gap=float(lin), gap_con=float(con))
    return _closed_report(dom, dom.to_y(X), dom.f_to_y(Fx), w)


def _closed_report(dom, Y, Fy, w):
    g = dom.closed_gaps(Y, Fy, w)
    out = OptimizeResult(gap=float(g[0].sum()), gap_con=float(g[2].sum()))
    if dom.name == "product of simplices":
        out.update(gap_alce=g[0].copy(), gap_ce=g[1].copy(), gap_cce=g[2].copy())
    return out


def _random_point(dom, rng):
    """A random point in internal coordinates."""
    if dom.kind == _k.KIND_BOX:
        return rng.random(dom.dy)
    y = np.empty(dom.dy)
    for i in range(dom.off.shape[0] - 1):
        lo, hi = dom.off[i], dom.off[i + 1]
        y[lo:hi] = rng.dirichlet(np.ones(hi - lo))
    return y


class _State:
    """The arrays of the learners (see :mod:`jitopt.solvers._evi_kernels`)."""

    def __init__(self, dom, alce, learner, weighting, op_kind):
        n = dom.off.shape[0] - 1
        dy = dom.dy
        if dom.kind == _k.KIND_BOX:
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


def evi(problem, x0=None, *, tol=1e-3, deviations="linear", method="ggm", learner="rm+",
        weighting="linear", maxiter=20000, check_every=50, reweight=False, reweight_max=None,
        maxtime=None, callback=None, history=False, disp=False, rng=None):
    r"""Solve an expected variational inequality: a finite mixture of points with certified
    gap at most ``tol``.

    ``method="ggm"``: the Gordon–Greenwald–Marks :math:`\Phi`-regret loop (Gordon, Greenwald
    and Marks, ICML 2008, as used by Zhang et al., *Expected variational inequalities*,
    ICML 2025, Thm 4.3). Each round an
    external-regret learner over the affine self-maps of :math:`X` proposes :math:`(K_t, c_t)`,
    the round's point is a fixed point :math:`x_t = K_t x_t + c_t` in :math:`X`, and the
    learner is charged the linear loss :math:`(K, c) \mapsto \langle F(x_t), K x_t + c\rangle`.
    Then :math:`\operatorname{Gap}(\frac1T\sum_t \delta_{x_t}) \le \operatorname{Reg}_T / T`.
    The learners: on a simplex one learner per column of a column-stochastic :math:`K`
    (Blum–Mansour); on a product of simplices the regret circuit for
    :math:`\operatorname{conv}_j\{x \mapsto S x_j\}` per block; on a box one learner per row
    over the experts :math:`\{0, 1, x_j, 1 - x_j\}`; on a polytope a column-stochastic learner
    on barycentric coordinates over the vertices. Every simplex learner is regret
    matching+ (``"rm+"``), predictive regret matching+ (``"prm+"``) or Hedge.

    ``method="eah"``: the ellipsoid against hope (Zhang et al. 2025, Alg. 1), a slow
    reference for :math:`d \le 4`: the ellipsoid method on the infeasible program "find
    :math:`(K, c)` with :math:`\langle F(x), Kx + c - x\rangle \le -\varepsilon` for all
    :math:`x`", cut by the fixed points of its centres, then one LP for the weights.

    Parameters
    ----------
    problem : VIProblem
    x0 : array_like, optional
        The first point (a random point of :math:`X` when ``rng`` is given, else the first
        fixed point of the uniform learners).
    tol : float
        Target gap :math:`\varepsilon > 0` (of the deviations chosen below).
    deviations : {"linear", "ce"}
        ``"linear"``: all affine self-maps (:math:`\Phi_{LIN}`; on a game, anonymous linear
        correlated equilibria, ALCE). ``"ce"``: per-block maps on a product of simplices
        (correlated equilibria).
    method : {"ggm", "eah"}
    learner : {"rm+", "prm+", "hedge"}
    weighting : {"linear", "uniform"}
        Weights of the iterates (round ``t`` weighs ``t`` or 1) in the mixture and in the
        learners' losses.
    maxiter : int
        Maximum rounds (ellipsoid steps for ``"eah"``).
    check_every : int
        Rounds between gap checks (the check is :math:`O(d^2)` from running sums).
    reweight : {False, True, "cg"}
        ``True``: also try the LP that minimises the gap over the weights of (at most
        ``reweight_max``, evenly spaced) iterates, after ``2 * check_every`` rounds, then
        each time the number of rounds doubles, and at the end; its weights are kept when
        they lower the gap, and the run stops as soon as that gap is at most ``tol``.
        ``"cg"`` (box, simplex, product of simplices with ``deviations="ce"``): on the same
        schedule, up to ``reweight_max`` restricted LPs of a row and column generation over
        all iterates, which also adds fixed points of the LP's dual (worst) deviations as
        new points, in the spirit of the ellipsoid against hope (one operator call each; the
        returned mixture may contain them). The restricted LPs are one HiGHS model
        (``highspy``), re-solved from the previous basis as rows and columns enter; if the
        rounds run out above ``tol``, one last call may solve ``8 * reweight_max`` of them.
        A departure from the paper, documented in the theory page.
    reweight_max : int, optional
        The most iterates in the LP of ``reweight=True`` (default 400), or the restricted
        LPs per call of ``"cg"`` (default 25).
    maxtime : float, optional
        Wall-clock limit in seconds.
    callback, history, disp, rng
        As for every jitopt solver, at every gap check: the callback receives the last point,
        the history records ``fun`` = gap and ``grad_norm`` = constant-deviation gap.

    Returns
    -------
    OptimizeResult
        ``points`` (k, d), ``weights`` (k,), ``gap`` (the certified gap of ``deviations``),
        ``gap_lin``, ``gap_con``, on a product of simplices the per-block arrays
        ``gap_alce``, ``gap_ce``, ``gap_cce``; ``x`` the mean :math:`\mathbb E_\mu x`, ``fun``
        the gap, ``nit`` rounds, ``nfev`` operator calls, ``fp_residual`` the largest
        fixed-point residual, ``status``, ``success``, ``message``.
    """
    _check_problem(problem)
    tol = check_real("tol", tol, 0.0, low_open=True)
    check_choice("deviations", deviations, ("linear", "ce"))
    check_choice("method", method, ("ggm", "eah"))
    check_choice("learner", learner, tuple(_LEARNERS))
    check_choice("weighting", weighting, ("linear", "uniform"))
    maxiter = check_int("maxiter", maxiter, 1)
    check_every = check_int("check_every", check_every, 1)
    if reweight not in (False, True, "cg"):
        raise ValueError(f'reweight must be False, True or "cg", got {reweight!r}')
    if reweight_max is None:
        reweight_max = 25 if reweight == "cg" else 400
    reweight_max = check_int("reweight_max", reweight_max, 2)
    if maxtime is not None:
        maxtime = check_real("maxtime", maxtime, 0.0, low_open=True)
    dom = problem._dom
    if deviations == "ce" and (dom.kind != _k.KIND_PRODUCT or dom.lift):
        raise ValueError('deviations="ce" needs a simplex or a product of simplices domain')
    if reweight == "cg" and (dom.lift or (dom.kind == _k.KIND_PRODUCT and deviations == "linear"
                                          and dom.off.shape[0] > 2)):
        raise ValueError('reweight="cg" needs a box, a simplex or a product of simplices with '
                         'deviations="ce"')
    gen = None if rng is None else check_rng(rng)
    y0 = None
    if x0 is not None:
        x0 = np.array(x0, dtype=float)
        if x0.shape != (dom.d,) or not np.isfinite(x0).all() or not dom.contains(x0, 1e-9):
            raise ValueError(f"x0 must be a point of the domain of shape ({dom.d},)")
        if dom.lift:
            raise ValueError("x0 is not supported on a polytope (the start is a vertex mixture)")
        y0 = dom.to_y(x0)
        _k.clean(dom.kind, dom.off, y0)
    elif gen is not None:
        y0 = _random_point(dom, gen)
    monitor = Monitor(problem, callback, history, disp)
    if method == "eah":
        return _eah(problem, dom, tol, deviations, maxiter, check_every, maxtime, monitor)
    return _ggm(problem, dom, y0, tol, deviations, _LEARNERS[learner],
                1 if weighting == "linear" else 0, maxiter, check_every, reweight,
                reweight_max, maxtime, monitor)


def _ggm(problem, dom, y0, tol, deviations, learner, weighting, maxiter, check_every,
         reweight, reweight_max, maxtime, monitor):
    structure = getattr(problem.operator, "_evi_structure", None)
    op_kind, A, bvec, U, xoff = structure() if structure else (
        _k.OP_EXTERNAL, np.zeros((1, 1)), np.zeros(1), np.zeros((1, 1)), np.zeros(2, np.int64))
    alce = deviations == "linear"
    st = _State(dom, alce, learner, weighting, op_kind)
    largs = st.learner_args()
    delta = 1e-9
    Ys, Fs, FXs = [], [], []
    nit, fp_res, status, message = 0, 0.0, None, None
    gap_row = 0 if alce else 1

    def python_round(y):
        f = problem.F(dom.to_x(y))
        if not np.isfinite(f).all():
            return None, None
        return np.ascontiguousarray(dom.f_to_y(f)), f

    if y0 is not None:  # the first round plays y0 (learners uniform)
        y = np.empty(dom.dy)
        _k.propose(*largs, st.K, st.c, st.u, delta, y)
        y = np.ascontiguousarray(y0)
        fy, fx = python_round(y)
        if fy is None:
            status = Status.NONFINITE
        else:
            _k.observe(*largs, y, fy, st.M, st.Fbar, st.sacc)
            Ys.append(y[None, :].copy())
            Fs.append(fy[None, :])
            FXs.append(fx[None, :])
            nit = 1
    rw_best, next_rw = None, 2 * check_every
    cg = _ColumnGeneration(problem, dom, not alce, gap_row) if reweight == "cg" else None

    def reweighted(Y, Fy, Fx):
        if cg is not None:
            return cg.run(Y, Fy, Fx, tol, reweight_max)
        return _reweighted(dom, Y, Fy, Fx, alce, reweight_max, gap_row)
    while status is None:
        if nit >= maxiter:
            status = Status.MAXITER
            break
        nr = min(check_every - nit % check_every, maxiter - nit)
        Yb, Fb, rb = np.empty((nr, dom.dy)), np.empty((nr, dom.dy)), np.zeros(nr)
        FXb = np.empty((nr, dom.d))
        if op_kind != _k.OP_EXTERNAL:
            done = _k.run_rounds(nr, *largs, st.K, st.c, st.u, delta, dom.shift, dom.T, A, bvec,
                                 U, xoff, st.M, st.Fbar, st.sacc, Yb, Fb, FXb, rb)
            problem.counts.nfev += done + (done < nr)
        else:
            done = 0
            y = np.empty(dom.dy)
            for r in range(nr):
                rb[r] = _k.propose(*largs, st.K, st.c, st.u, delta, y)
                fy, fx = python_round(y)
                if fy is None:
                    break
                _k.observe(*largs, y, fy, st.M, st.Fbar, st.sacc)
                Yb[r], Fb[r], FXb[r] = y, fy, fx
                done += 1
        Ys.append(Yb[:done])
        Fs.append(Fb[:done])
        FXs.append(FXb[:done])
        fp_res = max(fp_res, float(rb[:done].max(initial=0.0)))
        nit += done
        if done < nr:
            status = Status.NONFINITE
            break
        nb = 1 if dom.kind == _k.KIND_BOX else dom.off.shape[0] - 1
        gaps_now = np.empty((3, nb))
        _k.gaps(dom.kind, dom.off, st.M, st.Fbar, st.sacc[0], st.sacc[1], gaps_now)
        gap = float(gaps_now[gap_row].sum())
        if monitor.iteration(nit, dom.to_x(Yb[done - 1]), gap, float(gaps_now[2].sum())):
            status = Status.CALLBACK
        elif gap <= tol:
            status = Status.CONVERGED
        elif reweight and nit >= next_rw:
            next_rw = 2 * nit
            rw_best = reweighted(np.vstack(Ys), np.vstack(Fs), np.vstack(FXs))
            if rw_best[4].gap <= tol:
                status = Status.CONVERGED
        if status is None and maxtime is not None and monitor.elapsed() > maxtime:
            status = Status.MAXTIME
    Y = np.vstack(Ys) if Ys else np.empty((0, dom.dy))
    Fy = np.vstack(Fs) if Fs else np.empty((0, dom.dy))
    Fx = np.vstack(FXs) if FXs else np.empty((0, dom.d))
    if Y.shape[0] == 0:
        return monitor.result(np.full(dom.d, np.nan), np.nan, np.nan, 0, status,
                              points=np.empty((0, dom.d)), weights=np.empty(0), gap=np.nan,
                              gap_lin=np.nan, gap_con=np.nan, fp_residual=0.0)
    t = np.arange(1, Y.shape[0] + 1, dtype=float)
    w = t / t.sum() if weighting == 1 else np.full(Y.shape[0], 1.0 / Y.shape[0])
    rep = _report(dom, Y, Fy, Fx, w, gap_row)
    iterates = (Y, Fy, Fx)
    if rw_best is not None and rw_best[4].gap < rep.gap:
        Y, Fy, Fx, w, rep = rw_best
    elif reweight and Y.shape[0] > 1 and rep.gap > 0 and status != Status.NONFINITE:
        cand = reweighted(Y, Fy, Fx)
        if cand[4].gap < rep.gap:
            Y, Fy, Fx, w, rep = cand
    if cg is not None and status == Status.MAXITER and rep.gap > tol:
        # the rounds are spent: one long column generation over all iterates
        cand = cg.run(*iterates, tol, cg.LONG * reweight_max,
                      lambda: maxtime is not None and monitor.elapsed() > maxtime)
        if cand[4].gap < rep.gap:
            Y, Fy, Fx, w, rep = cand
    if status == Status.CONVERGED and rep.gap > tol:
        status = Status.MAXITER  # only on a polytope, where the check used an upper bound
    if rep.gap <= tol and status in (Status.MAXITER, Status.MAXTIME):
        status = Status.CONVERGED
    keep = w > 0
    X = dom.to_x(Y[keep])
    if cg is not None:
        fp_res = max(fp_res, cg.fp_res)
    message = (f"Certified gap {rep.gap:.3e} <= tol." if status == Status.CONVERGED else None)
    return monitor.result(w[keep] @ X, rep.gap, rep.gap_con, nit, status, message, points=X,
                          weights=w[keep] / w[keep].sum(), fp_residual=fp_res, **rep)


def _reweighted(dom, Y, Fy, Fx, alce, reweight_max, gap_row):
    """The reweighting LP over at most ``reweight_max`` evenly spaced iterates."""
    idx = np.unique(np.linspace(0, Y.shape[0] - 1, min(reweight_max, Y.shape[0])).astype(int))
    Yr, Fr, FXr = Y[idx], Fy[idx], Fx[idx]
    lam = dom.reweight(dom.to_x(Yr), FXr) if dom.lift else dom.reweight(Yr, Fr, ce=not alce)
    return Yr, Fr, FXr, lam, _report(dom, Yr, Fr, FXr, lam, gap_row)


def _packed(val, idx):
    """The nonzeros of the dense rows ``val`` (with column indices ``idx``, same shape) in
    HiGHS's packed form: ``(count, row starts, indices, values)``."""
    nz = val != 0
    starts = np.r_[0, np.cumsum(nz.sum(1))[:-1]].astype(np.int32)
    return int(nz.sum()), starts, idx[nz].astype(np.int32), val[nz]


class _ColumnGeneration:
    r"""``reweight="cg"``: the reweighting LP over all iterates, solved by row and column
    generation, plus new points, the fixed points of its dual deviations.

    The restricted LP :math:`\min_{\lambda \in \Delta_C} \sum_k \lambda_k s_k - \sum_g v_g`,
    :math:`v_g \le \sum_k \lambda_k L_{ke}` for the active experts :math:`e` of each group
    :math:`g` (:meth:`Domain.experts`), keeps a few columns :math:`C` and expert rows. Rows:
    the ``ROWS`` most violated experts of every group whose constraints the LP's
    :math:`\lambda` violates. Once none is, its dual is the worst deviation :math:`\phi^*`
    for :math:`\lambda`; columns: the ``ADD`` iterates with the smallest
    :math:`\langle F(x_k), x_k - \phi^*(x_k)\rangle` below the LP value, and one new point, a
    fixed point :math:`x^*` of :math:`\phi^*`, where that value is 0 (the good-enough
    response of the ellipsoid against hope); zero-weight columns leave when there are many.
    The state persists between calls, including one HiGHS model of the restricted LP that
    each re-solve warm-starts from its last basis (dual simplex after new rows, primal
    simplex after new columns only).
    """

    ADD = 20  # iterates priced in per LP
    ROWS = 3  # violated rows added per group and LP
    LONG = 8  # the last call, once the rounds are spent, may solve LONG * budget LPs

    def __init__(self, problem, dom, ce, gap_row):
        self.problem, self.dom, self.gap_row = problem, dom, gap_row
        self.group, self.p, self.q, self.alpha, self.beta, self.ng = dom.experts(ce)
        self.first = np.flatnonzero(np.r_[True, self.group[1:] != self.group[:-1]])
        self.G = (np.zeros((0, dom.dy)), np.zeros((0, dom.dy)), np.zeros((0, dom.d)))
        self.fp_res = 0.0
        # one HiGHS model for all calls: columns v_1..v_ng (free, cost -1), then lambda over
        # self.cols (indices into the pool [generated; iterates]); rows sum(lambda) = 1, then
        # one row per active expert, in the order self.rows
        self.h = getattr(highspy, "_Highs", highspy.Highs)()  # the base class prints no banner
        self.h.setOptionValue("output_flag", False)
        ng = self.ng
        self.h.addCols(ng, -np.ones(ng), np.full(ng, -np.inf), np.full(ng, np.inf), 0,
                       np.zeros(ng, np.int32), np.zeros(0, np.int32), np.zeros(0))
        self.h.addRows(1, np.ones(1), np.ones(1), 0, np.zeros(1, np.int32),
                       np.zeros(0, np.int32), np.zeros(0))
        self.cols = np.zeros(0, np.int64)
        self.rows = np.zeros(0, np.int64)
        self.active = np.zeros(self.group.size, bool)  # the experts with a row
        self.dual = True  # rows were added since the last solve: dual simplex, else primal
        self.pY = self.pF = None  # the pool (internal points and values)

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
        return self.pF[np.ix_(k, self.p[e])] * (self.alpha[e] + self.beta[e] * self.pY[np.ix_(
            k, self.q[e])])

    def _add_rows(self, new):
        """Rows :math:`v_{g_e} - \\sum_k \\lambda_k L_{ke} \\le 0` for the experts ``new``."""
        ng, nc = self.ng, self.cols.size
        L = -self._L(self.cols, new).T  # (rows, columns)
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
        s = np.einsum("kj,kj->k", self.pF[add], self.pY[add])
        self.h.addCols(add.size, s, np.zeros(add.size), np.full(add.size, np.inf),
                       *_packed(val, idx))
        self.cols = np.concatenate([self.cols, add])

    def _drop_cols(self, keep):
        """Remove the columns not in the boolean mask ``keep``."""
        drop = np.flatnonzero(~keep)
        self.h.deleteCols(drop.size, (self.ng + drop).astype(np.int32))
        self.cols = self.cols[keep]

    def _lp(self):
        """Solve the restricted LP from the previous basis; its weights, value, ``v`` and the
        normalised row duals :math:`\\pi` (one distribution over the active experts of each
        group)."""
        h = self.h
        h.setOptionValue("simplex_strategy", 1 if self.dual else 4)
        self.dual = False
        h.run()
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
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
        true; returns the best mixture ``(Y, Fy, Fx, weights, report)``."""
        dom, T = self.dom, Yit.shape[0]
        # the pool: the points generated so far, then the iterates
        self.pY, self.pF = np.vstack([self.G[0], Yit]), np.vstack([self.G[1], Fit])
        pX = np.vstack([self.G[2], FXit])
        ng0 = self.G[0].shape[0]
        if self.cols.size == 0:
            start = ng0 + np.unique(np.linspace(0, T - 1, min(50, T)).astype(np.int64))
            vals, mins = self._vals(self.pY[start], self.pF[start],
                                    np.full(start.size, 1.0 / start.size))
            self._add_rows(self._argmins(vals, mins))
            self._add_cols(start)
        s_pool = np.einsum("kj,kj->k", self.pF, self.pY)
        best, fp_ok = None, True
        for it in range(budget):
            if it and stop is not None and stop():
                break
            cols = self.cols
            lam, val, v, pi = self._lp()
            vals, mins = self._vals(self.pY[cols], self.pF[cols], lam)
            gap = float(lam @ s_pool[cols]) - float(mins.sum())
            if best is None or gap < best[0]:
                keep = lam > 0
                best = (gap, cols[keep], lam[keep])
            if gap <= tol:
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
                red = s_pool - np.einsum("kj,kj->k", self.pF, self.pY @ K.T + c) - val
                red[self.cols] = np.inf
                add = np.argsort(red)[:self.ADD]
                add = add[red[add] < -scale]
            if fp_ok and new.size == 0:  # the good-enough response to phi*: a fixed point
                y = np.empty(dom.dy)
                res = _k.fixed_point(K, c, dom.interior(), 1e-9, dom.off, dom.kind,
                                     dom.kind == _k.KIND_PRODUCT, y)
                fx = self.problem.F(dom.to_x(y))
                fp_ok = bool(np.isfinite(fx).all())
                if fp_ok:
                    self.fp_res = max(self.fp_res, res)
                    k = self.G[0].shape[0]
                    fy = dom.f_to_y(fx)
                    self.G = (np.vstack([self.G[0], y]), np.vstack([self.G[1], fy]),
                              np.vstack([self.G[2], fx]))
                    self.pY = np.vstack([self.pY[:k], y, self.pY[k:]])
                    self.pF = np.vstack([self.pF[:k], fy, self.pF[k:]])
                    pX = np.vstack([pX[:k], fx, pX[k:]])
                    s_pool = np.einsum("kj,kj->k", self.pF, self.pY)
                    self.cols = np.where(self.cols >= k, self.cols + 1, self.cols)
                    best = (best[0], np.where(best[1] >= k, best[1] + 1, best[1]), best[2])
                    add = np.concatenate([np.where(add >= k, add + 1, add), [k]])
            if add.size == 0 and new.size == 0:
                break  # nothing new to add
            if add.size:
                self._add_cols(add)
        # the next call's pool has the same generated points first, then the iterates
        idx, lam = best[1], best[2]
        Y, Fy, Fx = self.pY[idx], self.pF[idx], pX[idx]
        return Y, Fy, Fx, lam, _report(dom, Y, Fy, Fx, lam, self.gap_row)


def _report(dom, Y, Fy, Fx, w, gap_row):
    """Gaps of a mixture (internal coordinates; original ones and an LP on a polytope)."""
    if dom.lift:
        lin, con = dom.lp_gaps(dom.to_x(Y), Fx, w)
        return OptimizeResult(gap=float(lin), gap_lin=float(lin), gap_con=float(con))
    rep = _closed_report(dom, Y, Fy, w)
    rep["gap_lin"] = rep["gap"]
    if gap_row == 1:
        rep["gap"] = float(rep["gap_ce"].sum()) if "gap_ce" in rep else rep["gap"]
    return rep


# ------------------------------------------------------------------------------------------
# ellipsoid against hope (reference)
# ------------------------------------------------------------------------------------------

def _eah(problem, dom, tol, deviations, maxiter, check_every, maxtime, monitor):
    if deviations != "linear":
        raise ValueError('method="eah" supports deviations="linear" only')
    Ah, bh, x0, B = dom.intrinsic()
    dz = B.shape[1]
    if dz > 4:
        raise ValueError(f'method="eah" is a reference for intrinsic dimension <= 4, got {dz}')
    verts = Polytope(Ah, bh).vertices()  # vertices of the full-dimensional description
    zc = verts.mean(axis=0)
    n = dz * dz + dz
    diam = max(np.abs(verts - zc).max(), 1e-12)
    R = 4.0 * math.sqrt(n) * (1.0 + np.abs(verts).max()) * (1.0 + diam * np.abs(Ah).sum(1).max()
                                                           / max(np.min(bh - Ah @ zc), 1e-12))
    yc = np.concatenate([np.zeros(dz * dz), zc])
    Pm = (R * R) * np.eye(n)
    X, Fx = [], []
    status = None
    nit = 0
    best = OptimizeResult(gap=np.inf)
    while status is None:
        if nit >= maxiter:
            status = Status.MAXITER
            break
        nit += 1
        K, c = yc[:dz * dz].reshape(dz, dz), yc[dz * dz:]
        viol = Ah @ (K @ verts.T + c[:, None]) - bh[:, None]
        i, v = np.unravel_index(int(np.argmax(viol)), viol.shape)
        if viol[i, v] > 0:  # (K, c) is not a self-map: cut a_i^T (K' z_v + c') <= b_i
            g = np.concatenate([np.outer(Ah[i], verts[v]).ravel(), Ah[i]])
        else:  # good-enough response: a fixed point z of (K, c)
            z = _fixed_point_full(K, c, zc)
            x = x0 + B @ z
            f = problem.F(x)
            if not np.isfinite(f).all():
                status = Status.NONFINITE
                break
            X.append(x)
            Fx.append(f)
            fz = B.T @ f
            g = np.concatenate([np.outer(fz, z).ravel(), fz])
            if len(X) % check_every == 0:
                best = _eah_weights(problem, dom, X, Fx, best)
                if monitor.iteration(nit, x, best.gap, best.gap_con):
                    status = Status.CALLBACK
                elif best.gap <= tol:
                    status = Status.CONVERGED
        Pg = Pm @ g
        gPg = float(g @ Pg)
        if not gPg > 1e-300:
            status = Status.SMALL_STEP
            break
        yc = yc - Pg / ((n + 1) * math.sqrt(gPg))
        Pm = (n * n / (n * n - 1.0)) * (Pm - (2.0 / (n + 1)) * np.outer(Pg, Pg) / gPg)
        if status is None and maxtime is not None and monitor.elapsed() > maxtime:
            status = Status.MAXTIME
    if X and status != Status.CONVERGED and status != Status.NONFINITE:
        best = _eah_weights(problem, dom, X, Fx, best)
        if best.gap <= tol:
            status = Status.CONVERGED
    if not X:
        return monitor.result(np.full(dom.d, np.nan), np.nan, np.nan, nit, status or Status.MAXITER,
                              points=np.empty((0, dom.d)), weights=np.empty(0), gap=np.nan,
                              gap_lin=np.nan, gap_con=np.nan, fp_residual=0.0)
    pts, w = best.points, best.weights
    rep = {k: v for k, v in best.items() if k not in ("points", "weights")}
    message = f"Certified gap {best.gap:.3e} <= tol." if status == Status.CONVERGED else None
    return monitor.result(w @ pts, best.gap, best.gap_con, nit, status, message, points=pts,
                          weights=w, fp_residual=0.0, gap_lin=best.gap, **rep)


def _fixed_point_full(K, c, zc):
    """Fixed point of a self-map of a full-dimensional polytope (perturbed solve)."""
    delta = 1e-9
    d = K.shape[0]
    return np.linalg.solve(np.eye(d) - (1 - delta) * K, (1 - delta) * c + delta * zc)


def _eah_weights(problem, dom, X, Fx, best):
    Xa, Fa = np.array(X), np.array(Fx)
    if dom.lift:
        lam = dom.reweight(Xa, Fa)
        lin, con = dom.lp_gaps(Xa, Fa, lam)
        rep = OptimizeResult(gap=float(lin), gap_con=float(con))
    else:
        Y, Fy = dom.to_y(Xa), dom.f_to_y(Fa)
        lam = dom.reweight(Y, Fy)
        rep = _closed_report(dom, Y, Fy, lam)
    if rep.gap < best.gap:
        keep = lam > 0
        rep.update(points=Xa[keep], weights=lam[keep] / lam[keep].sum())
        return rep
    return best
