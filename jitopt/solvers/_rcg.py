"""Riemannian nonlinear conjugate gradient with a strong Wolfe line search."""

import numpy as np

from .._core.registry import register_method
from .._core.result import Status
from .._core.run import Algorithm, State, run
from .._core.stopping import CommonStop, Stalled, verdict
from ..validation import check_choice, check_limits, check_real, check_rng
from .._core.line_search import manifold_line, wolfe

__all__ = ["rcg"]

BETA_RULES = ("HS+", "PR+", "FR", "HZ")


def _beta(rule, M, x, g_new, gg_old, g_moved, d_moved, gnorm_old):
    """The conjugate-gradient coefficient at ``x`` (all vectors there), 0 when undefined."""
    y = g_new - g_moved
    if rule == "FR":
        beta = M.inner_product(x, g_new, g_new) / gg_old
    elif rule == "PR+":
        beta = max(0.0, M.inner_product(x, g_new, y) / gg_old)
    else:
        dy = M.inner_product(x, d_moved, y)
        if dy == 0.0:
            return 0.0
        if rule == "HS+":
            beta = max(0.0, M.inner_product(x, g_new, y) / dy)
        else:  # Hager-Zhang, with its lower bound
            yy = M.inner_product(x, y, y)
            beta = (M.inner_product(x, y, g_new)
                    - 2.0 * yy * M.inner_product(x, d_moved, g_new) / dy) / dy
            eta = -1.0 / (M.norm(x, d_moved) * min(0.01, gnorm_old))
            beta = max(beta, eta)
    return beta if np.isfinite(beta) else 0.0


@register_method("rcg", tol_option="gtol",
                 doc=dict(history=", and ``step`` and ``beta`` (:math:`t_k, \\beta_k`)"))
def rcg(problem, x0=None, *, beta="HS+", restart_threshold=np.inf, c1=1e-4, c2=0.1,
        approximate=True, gtol=1e-6, f_target=None, maxiter=1000, max_time=np.inf,
        min_step=1e-12, callback=None, history=False, disp=False, rng=None):
    r"""Riemannian nonlinear conjugate gradient.

    Iterates :math:`x_{k+1} = R_{x_k}(t_k d_k)` with a strong Wolfe step :math:`t_k`
    (the line search of :doc:`/theory/riemannian`, :math:`c_2 = 0.1`, first trial
    :math:`t_{k-1}\langle g_{k-1}, d_{k-1}\rangle/\langle g_k, d_k\rangle`) and

    .. math::

        d_{k+1} = -g_{k+1} + \beta_k\, T d_k, \qquad y = g_{k+1} - T g_k,

    with :math:`T` the manifold's transport from :math:`x_k` to :math:`x_{k+1}` and
    :math:`\beta_k` one of Hestenes–Stiefel :math:`\max(0, \langle g_{k+1}, y\rangle /
    \langle Td_k, y\rangle)` (``"HS+"``, default), Polak–Ribière
    :math:`\max(0, \langle g_{k+1}, y\rangle/\|g_k\|^2)` (``"PR+"``), Fletcher–Reeves
    :math:`\|g_{k+1}\|^2/\|g_k\|^2` (``"FR"``) or Hager–Zhang (``"HZ"``, with its lower
    bound :math:`-1/(\|Td_k\|\min(0.01, \|g_k\|))`). :math:`\beta_k = 0` (a restart) when
    it is not finite, or with Powell's test :math:`|\langle g_{k+1}, Tg_k\rangle| \ge
    \nu\|g_{k+1}\|^2` (``restart_threshold`` :math:`\nu`, off by default). A direction
    that is not a descent direction is replaced by :math:`-g_k`; a line search with no
    decrease along :math:`-g_k` stops with ``Status.SMALL_STEP``.

    Parameters
    ----------
    problem : jitopt.Problem
        Manifold and oracles; each line-search trial calls the fused ``cost_and_egrad``.
    x0 : array_like, optional
        Starting point (a random point drawn with ``rng`` if omitted).
    beta : {"HS+", "PR+", "FR", "HZ"}
        The rule for :math:`\beta_k`.
    restart_threshold : float
        Powell's restart threshold :math:`\nu > 0` (``inf``: no Powell restarts).
    c1, c2 : float
        Wolfe constants, :math:`0 < c_1 < c_2 < 1` (strong curvature test).
    approximate : bool
        Also accept the approximate Wolfe conditions of Hager and Zhang.
    gtol : float
        Stop when the Riemannian gradient norm is at most ``gtol``.
    f_target : float, optional
        Also stop (successfully, ``Status.TARGET``) when the cost is at most this.
    maxiter : int
        Maximum number of iterations.
    max_time : float
        Maximum wall-clock seconds.
    min_step : float
        Stop with ``Status.SMALL_STEP`` when an accepted step :math:`t_k\|d_k\|` is below
        this and did not lower the cost.
    {common options}

    Returns
    -------
    OptimizeResult
        ``x, fun, success, status, message, nit, nfev, njev, nifo, time``,
        ``stationarity`` (the Riemannian gradient norm at ``x``), ``n_restarts`` (steps
        along :math:`-g`) and ``history`` if asked for.

    References
    ----------
    H. Sato, "Riemannian conjugate gradient methods: general framework and specific
    algorithms with convergence analyses", SIAM J. Optim. 32(4) (2022). W. W. Hager and
    H. Zhang, "A new conjugate gradient method with guaranteed descent and an efficient
    line search", SIAM J. Optim. 16(1) (2005). J. Nocedal and S. J. Wright, *Numerical
    Optimization*, 2nd ed., Springer (2006), Ch. 5.

    Examples
    --------
    >>> import numpy as np, jitopt
    >>> problem = jitopt.problems.pca(np.diag([5.0, 4.0, 1.0, 0.5]), p=2)
    >>> res = jitopt.solvers.rcg(problem, rng=0)
    >>> bool(res.success), round(res.fun, 8)
    (True, -9.0)
    """
    check_choice("beta", beta, BETA_RULES)
    restart_threshold = check_real("restart_threshold", restart_threshold, low=0.0,
                                   low_open=True)
    c1 = check_real("c1", c1, 0.0, 1.0, True, True)
    c2 = check_real("c2", c2, c1, 1.0, True, True)
    gtol, f_target, maxiter, max_time = check_limits(gtol, f_target, maxiter, max_time)
    min_step = check_real("min_step", min_step, low=0.0)
    M = problem.manifold
    x = M.random_point(check_rng(rng)) if x0 is None else M.validate_point(x0, "x0")
    return run(problem, ConjugateGradient(beta, restart_threshold, c1, c2, approximate,
                                          min_step), x,
               stop=Stalled(min_step, gtol) | CommonStop("gtol", gtol, f_target, maxiter,
                                                         max_time),
               callback=callback, history=history, disp=disp)


class ConjugateGradient(Algorithm):
    r""":math:`d_{k+1} = -\operatorname{grad} f(x_{k+1}) + \beta_k \mathcal{T}(d_k)` with
    a strong Wolfe step along :math:`d_k`; a restart along :math:`-\operatorname{grad} f`
    when :math:`d_k` is not a descent direction or its search fails."""

    columns = ("step", "beta")

    def __init__(self, beta, restart_threshold, c1, c2, approximate, min_step):
        self.beta, self.restart_threshold = beta, restart_threshold
        self.c1, self.c2, self.approximate, self.min_step = c1, c2, approximate, min_step
        self.n_restarts = 0

    def fields(self, x, nit):
        return {"n_restarts": self.n_restarts}

    def start(self, problem, x):
        self.problem, M = problem, problem.manifold
        self.reach = M.max_step
        f, g = problem.cost_and_rgrad(x)
        gnorm = M.norm(x, g)
        return State(x, f, gnorm, self.measure, g=g, d=-g, stalled=False,
                     t_prev=1.0 / gnorm if gnorm > 0 else 1.0, slope_prev=None)

    def step(self, s, budget):
        M, x, g, gnorm = self.problem.manifold, s.x, s.g, s.stationarity
        while True:
            d = s.d
            slope = M.inner_product(x, g, d)
            steepest = False
            if not (slope < -1e-12 * gnorm * M.norm(x, d)):
                d, slope, steepest = -g, -gnorm * gnorm, True
                self.n_restarts += 1
            t0 = s.t_prev if s.slope_prev is None else s.t_prev * s.slope_prev / slope
            t, out, _ = wolfe(manifold_line(self.problem, x, d), s.fun, slope, t0, c1=self.c1,
                              c2=self.c2, strong=True, approximate=self.approximate,
                              max_step=self.reach / M.norm(x, d))
            if out is not None:
                break
            if steepest or np.array_equal(d, -g):
                return verdict(Status.SMALL_STEP, s, min_step=self.min_step)
            s.d, s.slope_prev, s.t_prev = -g, None, 1.0 / gnorm  # retry along -g
            self.n_restarts += 1
        f_new, _, x_new, eg, g_new = out
        g_moved, d_moved = M.transport(x, x_new, g), M.transport(x, x_new, d)
        gnorm_new = M.norm(x_new, g_new)
        if abs(M.inner_product(x_new, g_new, g_moved)) >= \
                self.restart_threshold * gnorm_new ** 2:
            b = 0.0
        else:
            b = _beta(self.beta, M, x_new, g_new, gnorm * gnorm, g_moved, d_moved, gnorm)
        s.stalled = t * M.norm(x, d) < self.min_step and f_new >= s.fun
        s.t_prev, s.slope_prev = t, slope
        s.x, s.fun, s.g, s.stationarity = x_new, f_new, g_new, gnorm_new
        s.d = -g_new + b * d_moved
        s.nit += 1
        s.extra = {"step": t, "beta": b}
        return None
