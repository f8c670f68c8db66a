"""Randomized Riemannian submanifold descent (RSDM) for orthogonality constraints."""

import numbers
import warnings

import numpy as np

from .._core.problem import FiniteSumProblem
from .._core.registry import register_method
from .._core.result import OracleError, Status
from .._core.run import Algorithm, State, run
from .._core.stopping import CommonStop, Criterion, verdict
from ..validation import check_choice, check_int, check_limits, check_real, check_rng
from ..manifolds import Grassmann, Stiefel
from ..manifolds import qr_retraction
from ._rsdm_kernels import block_delta, block_gradient, exact_block, haar_frame
from .._core.line_search import armijo as armijo_test
from .._core.line_search import backtracking

#: the method, and its block building blocks: the block gradient, a Haar-random orthonormal
#: frame and the exact minimizer of an affine block cost
__all__ = ["rsdm", "block_gradient", "haar_frame", "exact_block"]

_ROUNDING = 8 * np.finfo(float).eps
#: Feasibility is measured every this many steps ...
ORTHO_EVERY = 2000
#: ... and restored by a sign-fixed QR only when ``||XᵀX - I||_F`` exceeds this.
ORTHO_TOL = 1e-10


def _step_rule(step):
    """``"armijo"``, ``"exact"``, a positive constant, or a schedule ``step(k) -> float``."""
    if isinstance(step, str):
        check_choice("step", step, ("armijo", "exact"))
        return step
    if callable(step):
        return step
    if isinstance(step, numbers.Real) and not isinstance(step, bool):
        return check_real("step", step, low=0.0, low_open=True, high=np.inf, high_open=True)
    raise TypeError(f"step must be 'armijo', 'exact', a positive number or a callable "
                    f"k -> step, got {type(step).__name__}")


def _scheduled(step, k):
    """``step(k)`` of a user schedule as a positive float, else an
    :class:`~jitopt.OracleError` naming ``step`` (a run reports it as ``ORACLE_ERROR``)."""
    try:
        value = step(k)
    except Exception as err:
        raise OracleError(f"The step schedule step({k}) raised an exception") from err
    real = isinstance(value, numbers.Real) and not isinstance(value, bool)
    eta = float(value) if real else np.nan
    if not (np.isfinite(eta) and eta > 0):
        raise OracleError(f"The step schedule step({k}) must return a positive finite "
                          f"number, got {value!r}")
    return eta


@register_method("rsdm", tol_option="gtol", manifolds=(Stiefel, Grassmann), doc=dict(
    unit="block step",
    history=" (``stationarity`` NaN between checks, ``fun`` NaN where the cost is not known: "
            "stochastic variant)",
    disp="at each stationarity check",
    rng="Seed of the samplings (and of the random start); same seed, same result. The "
        "default ``None`` is the seed 0, so that two runs with the same arguments take the "
        "same steps; pass another seed (or a Generator) for another sampling."))
def rsdm(problem, x0=None, *, r=None, sampling="permutation", step="armijo",
         batch_size=None, gtol=1e-6, f_target=None, maxiter=100_000, max_time=np.inf,
         check_every=100, stall_steps=1000, stall_tol=1e-15, initial_step=None,
         sufficient_decrease=1e-4, contraction=0.5, min_step=1e-12, callback=None,
         history=False, disp=False, rng=None):
    r"""Randomized Riemannian submanifold descent (RSDM) on O(n), Stiefel and Grassmann.

    Each step moves the point :math:`X \in \mathrm{St}(n, p)` by a rotation acting on a
    random :math:`r`-dimensional subspace of :math:`\mathbb R^n`: with
    :math:`P \in \mathbb R^{r\times n}` of orthonormal rows and the Euclidean gradient
    :math:`G = \nabla f(X)`,

    .. math::

        \Omega &= \mathrm{skew}\big((PG)(PX)^\top\big), \\
        Y &= \big(I_r + \tfrac\eta2\Omega\big)^{-1}\big(I_r - \tfrac\eta2\Omega\big), \\
        X^+ &= X + P^\top (Y - I_r)\,PX,

    i.e. one Riemannian gradient step, from the identity, on the small group
    :math:`O(r)` for :math:`Y \mapsto f\big((I + P^\top(Y - I)P)X\big)`, with the Cayley
    retraction (the paper's code uses the QR retraction; any retraction of :math:`O(r)` is
    valid, and :math:`Y - I_r = -\eta(I_r + \tfrac\eta2\Omega)^{-1}\Omega` is computed
    without cancellation, so that small steps and their cost changes stay accurate).
    ``sampling="permutation"`` (RSDM-P) takes :math:`P` as :math:`r` random rows of the
    identity, so a step only reads and rewrites the rows :math:`I` of :math:`X` and needs only the rows
    :math:`G_I` of the gradient: :math:`O(r^3 + r^2 p)` per step plus the row-block oracle
    (``problem.egrad_rows``; without it the full gradient is computed and its rows taken).
    ``sampling="orthogonal"`` (RSDM-O) draws :math:`P` from the Haar measure (QR of a
    Gaussian :math:`n\times r`): :math:`O(npr)` per step plus a full gradient. No step
    factorises an :math:`n\times p` matrix. In expectation over either sampling,
    :math:`\mathbb E[P^\top \Omega P] = \frac{r(r-1)}{n(n-1)}\,\mathrm{skew}(GX^\top)`.

    Every step multiplies :math:`X` by an exactly orthogonal matrix, so
    :math:`X^\top X = I` holds to rounding (checked every ``ORTHO_EVERY`` steps and
    restored by a QR only when the drift exceeds ``ORTHO_TOL``; the count is
    ``result.n_reorth``), and since :math:`Y \in SO(r)` the determinant is preserved for
    :math:`p = n`: **the iterates never leave the connected component of** ``x0``. A
    minimizer with the other sign of :math:`\det` (of :math:`O(n)`) is unreachable; start
    from a point with that sign (flip one column of ``x0``) to search that component.

    Parameters
    ----------
    problem : jitopt.Problem
        On :class:`~jitopt.manifolds.Stiefel`, :class:`~jitopt.manifolds.Orthogonal` or
        :class:`~jitopt.manifolds.Grassmann` (the same iteration: rotations act on the left,
        the Grassmann quotient on the right). Its optional row-block oracle
        (``egrad_rows``, ``cost_change``) lets a permutation step compute only :math:`r`
        rows of the gradient and update the cost incrementally; ``block_affine`` enables
        ``step="exact"``. A
        :class:`~jitopt.FiniteSumProblem` with ``batch_size`` runs the stochastic variant.
    x0 : array_like, optional
        Starting point (random from ``rng`` if omitted); must be orthonormal to 1e-8.
    r : int, optional
        Block size, ``2 <= r <= n``; default ``max(2, n // 4)``. Iterations scale like
        :math:`(n/r)^2` and a step's cost like :math:`r^2 p`.
    sampling : {"permutation", "orthogonal"}
        Random coordinate rows (RSDM-P) or Haar-random subspace (RSDM-O).
    step : "armijo", "exact", float or callable
        ``"armijo"`` (default): backtracking on the sampled block until
        :math:`f(X^+) \le f(X) - c\,\eta\,\|\Omega\|_F^2`, halving :math:`\eta` and
        doubling it after a step accepted at the first trial. A number: the fixed step
        :math:`\eta` (the paper's rule). A callable: the schedule ``eta_k = step(k)``
        (e.g. ``lambda k: 0.5 / np.sqrt(k + 1)`` for the stochastic variant).
        ``"exact"`` (a variant, not the paper's step; permutation sampling and a problem
        with the ``block_affine`` oracle, i.e. a cost affine in a rotation of a row block:
        :math:`f(X') = f(X) + \langle L_I, U - I\rangle` for :math:`X'_I = UX_I`): the
        minimizer over the whole block, :math:`X_I \leftarrow U^* X_I` with
        :math:`U^* = WV^\top` from the SVD :math:`-L_I = W\Sigma V^\top` (for
        :math:`p = n` in :math:`SO(r)`: the smallest singular pair flipped when
        :math:`\det WV^\top = -1`). Never increases the cost, needs no step size, costs
        an :math:`r\times r` SVD per step; see the theory page for when it pays off.
    batch_size : int, optional
        With a :class:`~jitopt.FiniteSumProblem`: the gradient of each step is the mean
        over a minibatch of this many samples drawn without replacement (needs a fixed step
        or a schedule). Default: full gradients.
    gtol : float
        Stop when the Riemannian gradient norm is at most ``gtol`` (0 disables the test).
        When a step computes the full Euclidean gradient anyway (no row-block oracle, or
        ``sampling="orthogonal"``), its norm is tested at every step at the cost of a
        projection. With the row-block oracle, the full gradient is evaluated every
        ``check_every`` steps, and only once an estimate at no extra cost says it may
        pass: :math:`\big(\tfrac{n(n-1)}{r(r-1)}\,\overline{\|\Omega\|_F^2}\big)^{1/2}
        \le 2\,` ``gtol``, the mean over the blocks since the last check (the expectation
        of :math:`\|\Omega\|_F^2` is :math:`\tfrac{r(r-1)}{n(n-1)}\|\mathrm{skew}(GX^\top)\|_F^2`,
        and :math:`\|\operatorname{grad} f\|/\sqrt2 \le \|\mathrm{skew}(GX^\top)\|_F \le
        \|\operatorname{grad} f\|`).
    f_target : float, optional
        Stop (successfully, ``Status.TARGET``) when the cost is at most this value (checked every step when the
        cost is known there; in the stochastic variant, at the checks).
    maxiter : int
        Maximum number of block steps.
    max_time : float
        Maximum wall-clock seconds.
    check_every : int
        Steps between full-gradient checks (each costs a full gradient).
    stall_steps : int
        With ``step="armijo"``, ``gtol > 0`` and no ``cost_change`` oracle (so that the
        Armijo test compares two costs): stop with ``Status.SMALL_STEP`` ("the cost
        stalled") when the cost, known at the checks, fell by at most ``stall_tol``
        :math:`\cdot\max(1, |f|)` over the last ``stall_steps`` steps and the gradient
        norm is still above ``gtol`` (0: never). This ends the runs whose ``gtol`` lies below
        the rounding floor of the Armijo test (:math:`\|\operatorname{grad} f\|^2
        \lesssim L\epsilon|f|`).
    stall_tol : float
        The relative decrease of the stall test.
    initial_step : float, optional
        First Armijo trial step; default :math:`1/\|\Omega_0\|_F`.
    sufficient_decrease : float
        Armijo constant :math:`c \in (0, 1)`.
    contraction : float
        Backtracking factor in :math:`(0, 1)`.
    min_step : float
        A block whose trial step :math:`\eta\|\Omega\|_F` falls below this without passing
        the Armijo test is skipped (the point is left unchanged).
    {common options}

    Returns
    -------
    OptimizeResult
        ``x, fun, stationarity, success, status, message, nit, nfev, njev, nifo, time``, plus
        ``n_reorth`` (re-orthonormalisations done) and ``orthogonality``
        (:math:`\|X^\top X - I\|_F` at the end); ``history`` if asked for.

    References
    ----------
    A. Han, P.-L. Poirion and A. Takeda, "Efficient Optimization with Orthogonality
    Constraint: a Randomized Riemannian Submanifold Method", Proceedings of the 42nd
    International Conference on Machine Learning (ICML), PMLR 267 (2025), 21814-21843.

    Examples
    --------
    >>> import numpy as np, jitopt
    >>> problem = jitopt.problems.pca(jitopt.problems.spectrum_matrix(40, rng=0), p=20)
    >>> res = jitopt.solvers.rsdm(problem, r=10, gtol=1e-8, rng=1)
    >>> bool(res.success), bool(abs(res.fun - problem.fopt) < 1e-9 * abs(problem.fopt))
    (True, True)
    """
    M = problem.manifold
    if getattr(M, "k", 1) != 1:
        raise TypeError(f"rsdm takes one copy of a manifold, got {M!r} with k = {M.k} copies: "
                        f"use rgd or rlbfgs, or one rsdm run per copy")
    n, p = M.shape
    if n < 2:
        raise ValueError(f"rsdm needs n >= 2 (a rotation block of size r >= 2), got n={n}")
    r = max(2, n // 4) if r is None else check_int("r", r, 2, n)
    check_choice("sampling", sampling, ("permutation", "orthogonal"))
    step = _step_rule(step)
    armijo = step == "armijo"
    exact = step == "exact"
    stochastic = batch_size is not None
    if exact and not (problem.has_block_affine and sampling == "permutation"
                      and batch_size is None):
        raise ValueError("step='exact' needs sampling='permutation', full (not minibatch) "
                         "costs and a problem with the block_affine oracle (a cost affine in "
                         "a rotation of a row block, such as jitopt.problems.linear_cost or "
                         "procrustes)")
    if stochastic:
        if not isinstance(problem, FiniteSumProblem):
            raise TypeError("batch_size needs a jitopt.FiniteSumProblem, got "
                            f"{type(problem).__name__}")
        batch_size = check_int("batch_size", batch_size, 1, problem.n_samples)
        if armijo:  # (step="exact" is refused above)
            raise ValueError("step='armijo' needs exact costs: with batch_size give a fixed "
                             "step or a schedule step(k)")
    gtol, f_target, maxiter, max_time = check_limits(gtol, f_target, maxiter, max_time)
    check_every = check_int("check_every", check_every, low=1)
    initial_step = None if initial_step is None else check_real(
        "initial_step", initial_step, low=0.0, low_open=True)
    c = check_real("sufficient_decrease", sufficient_decrease, 0.0, 1.0, True, True)
    shrink = check_real("contraction", contraction, 0.0, 1.0, True, True)
    min_step = check_real("min_step", min_step, low=0.0)
    stall_steps = check_int("stall_steps", stall_steps, low=0)
    stall_tol = check_real("stall_tol", stall_tol, low=0.0)
    rng = check_rng(0 if rng is None else rng)
    x = M.random_point(rng) if x0 is None else M.validate_point(x0, "x0")
    if sampling == "permutation" and step != "exact" and not stochastic \
            and not problem.has_egrad_rows:
        warnings.warn("rsdm: the problem has no row-block oracle (egrad_rows), so every "
                      "block step computes a full gradient; rgd (or rlbfgs) makes better "
                      "use of it", RuntimeWarning, stacklevel=3)

    want_f = f_target is not None or history or callback is not None or disp
    method = SubmanifoldDescent(
        r, sampling == "permutation", step, batch_size, want_f, gtol, f_target, check_every,
        initial_step, c, shrink, min_step, rng)
    stop = CommonStop("gtol", gtol, f_target, maxiter, max_time)
    if stall_steps and armijo and not method.tracks(problem) and gtol > 0:
        stop = CostStall(method, stall_steps, stall_tol, check_every, gtol) | stop
    return run(problem, method, x, stop=stop, callback=callback, history=history, disp=disp,
               disp_every=check_every)


class SubmanifoldDescent(Algorithm):
    """One RSDM step per iteration: a random block (``r`` rows, or an ``r``-frame), its
    gradient, and a rotation of the block by the step rule (``"armijo"``, ``"exact"``, a
    constant or a schedule). Exact values of the cost and the gradient norm are computed
    only at the checks (every ``check_every`` steps, when the estimate says the gradient
    may pass) and when the run ends; NaN stands for them in between."""

    inplace = True

    def __init__(self, r, rows_mode, rule, batch_size, want_f, gtol, f_target, check_every,
                 initial_step, sufficient_decrease, contraction, min_step, rng):
        self.r, self.rows_mode, self.rule, self.batch_size = r, rows_mode, rule, batch_size
        self.want_f, self.gtol, self.f_target = want_f, gtol, f_target
        self.check_every, self.alpha, self.c = check_every, initial_step, sufficient_decrease
        self.shrink, self.min_step, self.rng = contraction, min_step, rng
        self.armijo, self.exact = rule == "armijo", rule == "exact"
        self.stochastic = batch_size is not None
        self.n_reorth = 0
        self.est_sum, self.est_n = 0.0, 0  # the block-gradient estimate of ||grad f||^2

    def tracks(self, problem):
        """Whether the cost is followed by incremental updates (``cost_change``)."""
        return self.rows_mode and problem.has_egrad_rows and not self.stochastic \
            and problem.has_cost_change

    def fields(self, x, nit):
        p = x.shape[1]
        return {"n_reorth": self.n_reorth,
                "orthogonality": float(np.linalg.norm(x.T @ x - np.eye(p)))}

    def start(self, problem, x):
        self.problem, M = problem, problem.manifold
        n, p = M.shape
        self.use_rows = self.rows_mode and problem.has_egrad_rows and not self.stochastic
        self.track = self.tracks(problem)
        # the cost is needed at every step
        self.need_f = not self.stochastic and (self.armijo or self.want_f)
        self.special = p == n  # rotations of SO(r) keep det X on O(n)
        self.full_checks = self.gtol > 0 or (self.stochastic and self.want_f)
        self.exact_norms = not self.use_rows and not self.stochastic  # full gradient each step
        self.scale = n * (n - 1) / (self.r * (self.r - 1))  # of the block-gradient estimate
        f, gnorm = self.full_state(x)
        return State(x, f, gnorm, self.measure)

    def full_state(self, x):
        """``(f(x), ||grad f(x)||)`` from one full oracle call."""
        M = self.problem.manifold
        fx, eg = self.problem.cost_and_egrad(x)
        return fx, M.norm(x, M.euclidean_to_riemannian_gradient(x, eg))

    def finish(self, s, ended, budget):
        if np.isnan(s.fun + s.stationarity):
            s.fun, s.stationarity = self.full_state(s.x)
        return ended

    def step(self, s, budget):
        x, n = s.x, s.x.shape[0]
        if self.rows_mode:
            rows, frame = self.rng.choice(n, self.r, replace=False), None
            xb = x[rows]
        else:
            rows, frame = None, haar_frame(self.rng.standard_normal((n, self.r)))
            xb = frame @ x
        if self.exact:  # the minimizer over the rotations of the block, in closed form
            if self.need_f and np.isnan(s.fun):
                s.fun = self.problem.cost(x)
            lb = np.ascontiguousarray(self.problem.block_affine(x, rows), dtype=np.float64)
            u, df = exact_block(lb, self.special)
            new = u @ xb if df < 0.0 else None  # df >= 0: the block is already optimal
        else:
            gb = self.block_gradient(s, rows, frame)
            if self.exact_norms and self.gtol > 0 and s.stationarity <= self.gtol:
                return verdict(Status.CONVERGED, s, tol_name="gtol", tol=self.gtol)
            new, df = self.gradient_step(s, rows, frame, xb, gb)
        if new is not None:
            if self.rows_mode:
                x[rows] = new
            else:
                s.x = new
            s.fun = s.fun + df if df is not None else np.nan
        s.nit += 1
        s.stationarity = np.nan
        self.exact_values(s, budget)
        return None

    def block_gradient(self, s, rows, frame):
        """The Euclidean gradient's block (``rows`` of it, or its ``frame`` projection); with
        a full gradient at hand, the state's gradient norm too."""
        problem, x = self.problem, s.x
        if self.use_rows:
            gb = problem.egrad_rows(x, rows)
            if self.need_f and np.isnan(s.fun):
                s.fun = problem.cost(x)
            return gb
        if self.stochastic:
            batch = self.rng.choice(problem.n_samples, self.batch_size, replace=False)
            eg = problem.egrad(x, batch)
        elif self.need_f and np.isnan(s.fun):
            s.fun, eg = problem.cost_and_egrad(x)
        else:
            eg = problem.egrad(x)
        if self.exact_norms and self.gtol > 0:
            M = problem.manifold
            s.stationarity = M.norm(x, M.euclidean_to_riemannian_gradient(x, eg))
        return eg[rows] if self.rows_mode else frame @ eg

    def gradient_step(self, s, rows, frame, xb, gb):
        """``(new rows or point, cost change or None)`` of the step along the block
        gradient; ``(None, None)`` when the Armijo search finds no decrease."""
        problem, x, f = self.problem, s.x, s.fun
        omega = block_gradient(gb, xb)
        w2 = float(np.vdot(omega, omega))
        self.est_sum, self.est_n = self.est_sum + w2, self.est_n + 1

        def trial(eta):  # the new rows (permutation) or the new point (orthogonal)
            d = block_delta(omega, eta, xb)
            return d, (xb + d if self.rows_mode else x + frame.T @ d)

        def change(d, new):  # f(trial point) - f(x)
            if self.track:
                return problem.cost_change(x, rows, d, gb)
            if self.rows_mode:
                xt = x.copy()
                xt[rows] = new
                return problem.cost(xt) - f
            return problem.cost(new) - f

        if not self.armijo:
            eta = _scheduled(self.rule, s.nit) if callable(self.rule) else self.rule
            d, new = trial(eta)
            return new, (change(d, new) if self.track and self.need_f else None)
        if not w2 > 0.0:
            return None, None
        if self.alpha is None:
            self.alpha = 1.0 / np.sqrt(w2)
        # an incremental change is exact; a difference of two costs is not
        rounding = 0.0 if self.track else _ROUNDING * abs(f)

        def armijo_trial(eta):
            d, new = trial(eta)
            return change(d, new), new

        eta, out, backtracks = backtracking(
            armijo_trial, armijo_test(0.0, w2, self.c, rounding), self.alpha, self.shrink,
            self.min_step / np.sqrt(w2))
        if out is None:  # no decrease above rounding: skip the block
            return None, None
        df, new = out
        # after a decrease at the first trial that rounding cannot explain, the next block
        # tries a longer step
        grow = backtracks == 0 and df <= -self.c * eta * w2
        self.alpha = eta / self.shrink if grow else eta
        return new, df

    def exact_values(self, s, budget):
        """Restore feasibility when it drifted, and compute the exact cost and gradient norm
        when the run may end here or at a check whose estimate says the gradient may pass."""
        x = s.x
        if s.nit % ORTHO_EVERY == 0:
            drift = np.linalg.norm(x.T @ x - np.eye(x.shape[1]))
            if drift > ORTHO_TOL:  # a sign-fixed QR keeps det X
                s.x = qr_retraction(x, np.zeros_like(x))
                self.n_reorth += 1
                s.fun = np.nan
        ending = (budget.iterations(s) <= 0 or budget.seconds() <= 0
                  or (self.f_target is not None and s.fun <= self.f_target))
        at_check = s.nit % self.check_every == 0
        if at_check and self.use_rows and self.est_n and not ending:
            may_pass = np.sqrt(self.scale * self.est_sum / self.est_n) <= 2.0 * self.gtol
            self.est_sum, self.est_n = 0.0, 0
        else:
            may_pass = True
        if ending or (self.full_checks and at_check and may_pass):
            s.fun, s.stationarity = self.full_state(s.x)


class CostStall(Criterion):
    r"""``SMALL_STEP`` when the cost, known at the checks, fell by at most ``stall_tol``
    :math:`\cdot\max(1, |f|)` over the last ``stall_steps`` steps while the gradient norm is
    above ``gtol`` (``CONVERGED`` when it is not): the block steps reached their rounding
    floor."""

    def __init__(self, method, stall_steps, stall_tol, check_every, gtol):
        self.method, self.stall_tol, self.check_every, self.gtol = method, stall_tol, \
            check_every, gtol
        self.back = max(1, stall_steps // check_every)
        self.checked = []  # the cost at the checks

    def __call__(self, s, watch):
        f = s.fun
        if s.nit == 0 or s.nit % self.check_every or not np.isfinite(f):
            return None
        self.checked.append(f)
        back = self.back
        fell = self.checked[-back - 1] - f if len(self.checked) > back else np.inf
        if fell > self.stall_tol * max(1.0, abs(f)):
            return None
        if not s.stationarity <= self.gtol:
            s.fun, s.stationarity = self.method.full_state(s.x)
        if s.stationarity <= self.gtol:
            return verdict(Status.CONVERGED, s, tol_name="gtol", tol=self.gtol)
        return Status.SMALL_STEP, (
            f"The cost stalled: it fell by {self.checked[-back - 1] - s.fun:.3e} over the "
            f"last {back * self.check_every} steps (stall_tol * max(1, |f|) = "
            f"{self.stall_tol * max(1.0, abs(s.fun)):.3e}); Riemannian gradient norm "
            f"{s.stationarity:.3e} > gtol = {self.gtol:.3g}, below the rounding floor of the "
            f"block steps.")
