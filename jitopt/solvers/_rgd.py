"""Riemannian gradient descent with a (non)monotone Armijo line search or a fixed step."""

import numbers

import numpy as np

from .._core.registry import register_method
from .._core.result import Monitor, Status
from ..validation import check_choice, check_limits, check_real, check_rng
from ._line_search import armijo, backtracking

__all__ = ["rgd"]

_ROUNDING = 8 * np.finfo(float).eps


@register_method("rgd", tol_option="gtol")
def rgd(problem, x0=None, *, gtol=1e-6, f_target=None, maxiter=1000, max_time=np.inf,
        min_step=1e-12,
        step="bb", initial_step=None, sufficient_decrease=1e-4, contraction=0.5,
        nonmonotone=0.85, callback=None, history=False, disp=False, rng=None):
    r"""Riemannian gradient descent with backtracking line search.

    Iterates :math:`x_{k+1} = R_{x_k}(-\alpha_k \operatorname{grad} f(x_k))`, with
    :math:`R` the manifold's retraction and :math:`\alpha_k` accepted by the Armijo test

    .. math::

        f(x_{k+1}) \le C_k - c\,\alpha_k\,\|\operatorname{grad} f(x_k)\|^2 ,

    halving :math:`\alpha_k` until it holds. With ``step="bb"`` (default) the first trial
    step is a Riemannian Barzilai–Borwein step, alternating
    :math:`\langle s,s\rangle/\langle s,y\rangle` and
    :math:`\langle s,y\rangle/\langle y,y\rangle` with :math:`s` the transported last step
    and :math:`y` the difference of the gradient and the transported previous gradient, and
    :math:`C_k` is the Zhang–Hager nonmonotone reference value
    (:math:`C_{k+1} = (\eta Q_k C_k + f_{k+1})/Q_{k+1}`, :math:`Q_{k+1} = \eta Q_k + 1`),
    as in Wen & Yin (2013) and Iannazzo & Porcelli (2018). With ``step="armijo"`` the test
    is monotone (:math:`C_k = f(x_k)`) and the first trial step grows by ``1/contraction``
    after a step accepted without backtracking (pymanopt's adaptive rule). A number
    ``step=alpha`` gives the fixed step :math:`\alpha_k = \alpha` with no line search (the
    baseline of many papers; the cost may then increase).

    A monotone test needs each step to lower the cost by more than its rounding error
    (about :math:`\epsilon_{\text{mach}}|f|` times a modest factor), which fails once
    :math:`\|\operatorname{grad} f\|^2 \lesssim L\,\epsilon_{\text{mach}} |f|`
    (:math:`L` the Lipschitz constant of the gradient): ``step="armijo"`` then stops with
    ``status=3`` (small step) near :math:`\|\operatorname{grad} f\| \approx 10^{-5}` on a
    PCA problem with :math:`|f| \approx 10^3`. The nonmonotone ``step="bb"`` reaches
    gradient norms orders of magnitude smaller; use it for tight tolerances.

    Parameters
    ----------
    problem : jitopt.Problem
        Manifold and oracles.
    x0 : array_like, optional
        Starting point on the manifold (a random point drawn with ``rng`` if omitted).
    gtol : float
        Stop when the Riemannian gradient norm is at most ``gtol`` (``tol`` in
        :func:`jitopt.minimize`).
    f_target : float, optional
        Also stop (successfully, ``Status.TARGET``) when the cost is at most ``f_target``.
    maxiter : int
        Maximum number of iterations.
    max_time : float
        Maximum wall-clock seconds.
    min_step : float
        Stop (``success=False``) when a trial step's length :math:`\alpha\|\operatorname{grad}
        f\|` falls below this without passing the Armijo test.
    step : "bb", "armijo" or float
        Initial trial step rule, or a fixed step, see above.
    initial_step : float, optional
        First trial step :math:`\alpha_0`; default :math:`1/\|\operatorname{grad} f(x_0)\|`
        (a first step of unit length). Not with a fixed step.
    sufficient_decrease : float
        Armijo constant :math:`c \in (0, 1)`.
    contraction : float
        Backtracking factor in :math:`(0, 1)`.
    nonmonotone : float
        :math:`\eta \in [0, 1)` of the nonmonotone reference value (``step="bb"`` only;
        0 gives the monotone test).
    callback : callable, optional
        ``callback(intermediate_result)`` (an :class:`~jitopt.OptimizeResult` with ``x, fun,
        stationarity, nit``) or ``callback(xk)``; raise :class:`StopIteration` to stop.
    history : bool
        Record per-iteration arrays in ``result.history``.
    disp : bool
        Print progress.
    rng : int or numpy.random.Generator, optional
        Seed for the random starting point.

    Returns
    -------
    OptimizeResult
        ``x, fun, success, status, message, nit, nfev, njev, nifo, time``,
        ``stationarity`` (the Riemannian gradient norm at ``x``) and ``history`` if asked
        for.

    References
    ----------
    Z. Wen and W. Yin, "A feasible method for optimization with orthogonality constraints",
    Math. Program. 142 (2013). B. Iannazzo and M. Porcelli, "The Riemannian
    Barzilai–Borwein method with nonmonotone line search and the matrix geometric mean
    computation", IMA J. Numer. Anal. 38 (2018). N. Boumal, "An introduction to optimization
    on smooth manifolds", Cambridge University Press (2023), Ch. 4.

    Examples
    --------
    >>> import numpy as np, jitopt
    >>> A = np.diag([5.0, 4.0, 1.0, 0.5])
    >>> problem = jitopt.problems.pca(A, p=2)
    >>> res = jitopt.solvers.rgd(problem, rng=0)
    >>> bool(res.success), round(res.fun, 8)
    (True, -9.0)
    """
    gtol, f_target, maxiter, max_time = check_limits(gtol, f_target, maxiter, max_time)
    min_step = check_real("min_step", min_step, low=0.0)
    fixed = isinstance(step, numbers.Real) and not isinstance(step, bool)
    if fixed:
        alpha = check_real("step", step, low=0.0, low_open=True, high=np.inf, high_open=True)
        if initial_step is not None:
            raise ValueError("initial_step has no effect with a fixed step: give one or the "
                             "other")
    elif isinstance(step, str):
        check_choice("step", step, ("bb", "armijo"))
    else:
        raise TypeError(f"step must be 'bb', 'armijo' or a positive number, got "
                        f"{type(step).__name__}")
    if not fixed and initial_step is not None:
        initial_step = check_real("initial_step", initial_step, low=0.0, low_open=True)
    c = check_real("sufficient_decrease", sufficient_decrease, 0.0, 1.0, True, True)
    shrink = check_real("contraction", contraction, 0.0, 1.0, True, True)
    eta = check_real("nonmonotone", nonmonotone, 0.0, 1.0, high_open=True)
    if step == "armijo":
        eta = 0.0
    M = problem.manifold
    if x0 is None:
        x = M.random_point(check_rng(rng))
    else:
        x = M.validate_point(x0, "x0")
    # With a fused oracle every trial point also gets its gradient (shared work); without
    # one, trial points get the cost only and the accepted point its gradient.
    fused = problem.has_cost_and_egrad

    monitor = Monitor(problem, callback, history, disp, x0=x, gtol=gtol, f_target=f_target,
                      maxiter=maxiter, max_time=max_time, min_step=min_step)
    f, egrad = problem.cost_and_egrad(x)
    g = M.euclidean_to_riemannian_gradient(x, egrad)
    gnorm = M.norm(x, g)
    nit = 0

    def stop(status):
        return monitor.result(x, f, gnorm, nit, status)

    if monitor.iteration(0, x, f, gnorm):
        return stop(Status.CALLBACK)
    if not fixed:
        alpha = (1.0 / gnorm if gnorm > 0 else 1.0) if initial_step is None else initial_step
    ref, q = f, 1.0  # nonmonotone reference value C_k and its weight Q_k

    def trial(alpha):
        x_new = M.retraction(x, -alpha * g)
        if fused:
            return problem.cost_and_egrad(x_new) + (x_new,)
        return problem.cost(x_new), None, x_new

    while True:
        status = monitor.limit_reached(nit, f, gnorm)
        if status is not None:
            return stop(status)

        # the step alpha along d = -g: fixed, or backtracked until the Armijo test holds;
        # the rounding allowance keeps the test from failing on cost differences at the
        # level of floating-point noise once the gradient is tiny
        if fixed:
            f_new, egrad_new, x_new = trial(alpha)
            backtracks = 0
        else:
            accept = armijo(ref, gnorm * gnorm, c, _ROUNDING * abs(ref))
            alpha, out, backtracks = backtracking(trial, accept, alpha, shrink,
                                                  min_step / gnorm)
            if out is None:
                return stop(Status.SMALL_STEP)
            f_new, egrad_new, x_new = out
        if not fused:
            egrad_new = problem.egrad(x_new)
        g_new = M.euclidean_to_riemannian_gradient(x_new, egrad_new)
        gnorm_new = M.norm(x_new, g_new)
        nit += 1

        if step == "bb":
            g_moved = M.transport(x, x_new, g)  # transports are linear: s moves with g
            s = -alpha * g_moved
            y = g_new - g_moved
            sy = M.inner_product(x_new, s, y)
            if sy > 0:
                if nit % 2:
                    alpha = M.inner_product(x_new, s, s) / sy
                else:
                    alpha = sy / M.inner_product(x_new, y, y)
            alpha = min(max(alpha, 1e-20), 1e20)
        elif step == "armijo" and backtracks == 0:
            alpha /= shrink

        x, f, g, gnorm = x_new, f_new, g_new, gnorm_new
        q_new = eta * q + 1.0
        ref = (eta * q * ref + f) / q_new
        q = q_new
        if monitor.iteration(nit, x, f, gnorm):
            return stop(Status.CALLBACK)
