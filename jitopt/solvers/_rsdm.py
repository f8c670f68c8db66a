"""Randomized Riemannian submanifold descent (RSDM) for orthogonality constraints."""

import numbers
import warnings

import numpy as np

from .._core.problem import FiniteSumProblem
from .._core.registry import register_method
from .._core.result import Monitor, OracleError, Status
from ..validation import check_choice, check_int, check_limits, check_real, check_rng
from ..manifolds import Grassmann, Stiefel
from ..manifolds._stiefel import qr_retraction
from ._rsdm_kernels import block_delta, block_gradient, exact_block, haar_frame
from ._line_search import armijo as armijo_test
from ._line_search import backtracking

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


@register_method("rsdm", tol_option="gtol", manifolds=(Stiefel, Grassmann))
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
    callback : callable, optional
        ``callback(intermediate_result)`` or ``callback(xk)``, after every step; raise
        :class:`StopIteration` to stop.
    history : bool
        Record per-step arrays in ``result.history``; ``stationarity`` is NaN between checks,
        and ``fun`` is NaN where the cost is not known (stochastic variant).
    disp : bool
        Print progress at the checks.
    rng : int or numpy.random.Generator, optional
        Seed of the samplings (and of the random start); same seed, same result. The
        default ``None`` is the seed 0, so that two runs with the same arguments take the
        same steps; pass another seed (or a Generator) for another sampling.

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
    alpha = None if initial_step is None else check_real(
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

    rows_mode = sampling == "permutation"
    use_rows = rows_mode and problem.has_egrad_rows and not stochastic
    track = use_rows and problem.has_cost_change  # cost followed by incremental updates
    want_f = f_target is not None or history or callback is not None or disp
    need_f = not stochastic and (armijo or want_f)  # the cost is needed at every step
    special = p == n  # rotations of SO(r) keep det X on O(n)
    full_checks = gtol > 0 or (stochastic and want_f)
    exact_norms = not use_rows and not stochastic  # the full gradient at every step
    scale = n * (n - 1) / (r * (r - 1))  # of the block-gradient estimate of the gradient
    est_sum, est_n = 0.0, 0
    checked = []  # the cost at the checks, for the stall test

    nit = n_reorth = 0

    def fields(x, nit):
        return {"n_reorth": n_reorth,
                "orthogonality": float(np.linalg.norm(x.T @ x - np.eye(p)))}

    monitor = Monitor(problem, callback, history, disp, disp_every=check_every, inplace=True,
                      x0=x, fields=fields, gtol=gtol, f_target=f_target, maxiter=maxiter,
                      max_time=max_time, min_step=min_step)

    def full_state():
        fx, eg = problem.cost_and_egrad(x)
        return fx, M.norm(x, M.euclidean_to_riemannian_gradient(x, eg))

    def stop(status, message=None):
        nonlocal f, gnorm
        if np.isnan(f + gnorm):
            f, gnorm = full_state()
        return monitor.result(x, f, gnorm, nit, status, message, **fields(x, nit))

    f, gnorm = full_state()
    if monitor.iteration(0, x, f, gnorm):
        return stop(Status.CALLBACK)

    while True:
        status = monitor.limit_reached(nit, f, gnorm)
        if status is not None:
            return stop(status)

        # -- sample the block and the block gradient ------------------------------------
        if rows_mode:
            rows = rng.choice(n, r, replace=False)
            xb = x[rows]
        else:
            frame = haar_frame(rng.standard_normal((n, r)))
            xb = frame @ x
        if exact:  # the minimizer over the rotations of the block, in closed form
            if need_f and np.isnan(f):
                f = problem.cost(x)
            lb = np.ascontiguousarray(problem.block_affine(x, rows), dtype=np.float64)
            u, df = exact_block(lb, special)
            new = u @ xb if df < 0.0 else None  # df >= 0: the block is already optimal
        else:
            if use_rows:
                gb = problem.egrad_rows(x, rows)
                if need_f and np.isnan(f):
                    f = problem.cost(x)
            else:
                if stochastic:
                    batch = rng.choice(problem.n_samples, batch_size, replace=False)
                    eg = problem.egrad(x, batch)
                elif need_f and np.isnan(f):
                    f, eg = problem.cost_and_egrad(x)
                else:
                    eg = problem.egrad(x)
                gb = eg[rows] if rows_mode else frame @ eg
                if exact_norms and gtol > 0:  # the full gradient is at hand
                    gnorm = M.norm(x, M.euclidean_to_riemannian_gradient(x, eg))
                    if gnorm <= gtol:
                        return stop(Status.CONVERGED)
            omega = block_gradient(gb, xb)
            w2 = float(np.vdot(omega, omega))
            est_sum, est_n = est_sum + w2, est_n + 1

            def trial(eta):  # the new rows (permutation) or the new point (orthogonal)
                d = block_delta(omega, eta, xb)
                return d, (xb + d if rows_mode else x + frame.T @ d)

            def change(d, new):  # f(trial point) - f(x)
                if track:
                    return problem.cost_change(x, rows, d, gb)
                if rows_mode:
                    xt = x.copy()
                    xt[rows] = new
                    return problem.cost(xt) - f
                return problem.cost(new) - f

            def armijo_trial(eta):
                d, new = trial(eta)
                return change(d, new), new

            # -- the gradient step -------------------------------------------------------
            new = df = None
            if armijo:
                if w2 > 0.0:
                    if alpha is None:
                        alpha = 1.0 / np.sqrt(w2)
                    # an incremental change is exact; a difference of two costs is not
                    rounding = 0.0 if track else _ROUNDING * abs(f)
                    eta, out, backtracks = backtracking(
                        armijo_trial, armijo_test(0.0, w2, c, rounding), alpha, shrink,
                        min_step / np.sqrt(w2))
                    if out is not None:  # else no decrease above rounding: skip the block
                        df, new = out
                        # after a decrease at the first trial that rounding cannot explain,
                        # the next block tries a longer step
                        grow = backtracks == 0 and df <= -c * eta * w2
                        alpha = eta / shrink if grow else eta
            else:
                eta = step if not callable(step) else _scheduled(step, nit)
                d, new = trial(eta)
                if track and need_f:
                    df = change(d, new)
        if new is not None:
            if rows_mode:
                x[rows] = new
            else:
                x = new
            f = f + df if df is not None else np.nan
        nit += 1
        gnorm = np.nan

        if nit % ORTHO_EVERY == 0:
            drift = np.linalg.norm(x.T @ x - np.eye(p))
            if drift > ORTHO_TOL:  # a sign-fixed QR keeps det X
                x = qr_retraction(x, np.zeros_like(x))
                n_reorth += 1
                f = np.nan
        ending = (nit >= maxiter or monitor.elapsed() >= max_time
                  or (f_target is not None and f <= f_target))
        at_check = nit % check_every == 0
        if at_check and use_rows and est_n and not ending:
            # the full gradient only when the estimate says it may pass
            may_pass = np.sqrt(scale * est_sum / est_n) <= 2.0 * gtol
            est_sum, est_n = 0.0, 0
        else:
            may_pass = True
        if ending or (full_checks and at_check and may_pass):  # exact values to report
            f, gnorm = full_state()
        if monitor.iteration(nit, x, f, gnorm):
            return stop(Status.CALLBACK)
        if stall_steps and armijo and not track and gtol > 0 and at_check and np.isfinite(f):
            checked.append(f)
            back = max(1, stall_steps // check_every)
            if len(checked) > back and checked[-back - 1] - f <= stall_tol * max(1.0, abs(f)):
                if gnorm <= gtol:
                    return stop(Status.CONVERGED)
                f, gnorm = full_state()
                if gnorm <= gtol:
                    return stop(Status.CONVERGED)
                return stop(Status.SMALL_STEP, (
                    f"The cost stalled: it fell by {checked[-back - 1] - f:.3e} over the last "
                    f"{back * check_every} steps (stall_tol * max(1, |f|) = "
                    f"{stall_tol * max(1.0, abs(f)):.3e}); Riemannian gradient norm "
                    f"{gnorm:.3e} > gtol = {gtol:.3g}, below the rounding floor of the "
                    f"block steps."))
