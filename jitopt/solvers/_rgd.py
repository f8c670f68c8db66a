"""Riemannian gradient descent with a (non)monotone Armijo line search or a fixed step."""

import numbers

import numpy as np

from .._core.registry import register_method
from .._core.result import Status
from .._core.run import Algorithm, State, run
from .._core.stopping import CommonStop, verdict
from ..validation import check_choice, check_limits, check_real, check_rng
from .._core.line_search import armijo, backtracking

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
    {common options}

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
    x = M.random_point(check_rng(rng)) if x0 is None else M.validate_point(x0, "x0")
    rule = FixedStep(alpha) if fixed else Backtracking(initial_step, c, shrink, eta,
                                                       barzilai_borwein=step == "bb")
    return run(problem, GradientDescent(rule, min_step), x,
               stop=CommonStop("gtol", gtol, f_target, maxiter, max_time),
               callback=callback, history=history, disp=disp)


class GradientDescent(Algorithm):
    r""":math:`x_{k+1} = R_{x_k}(-\alpha_k \operatorname{grad} f(x_k))` with the step of
    ``rule`` (:class:`FixedStep` or :class:`Backtracking`)."""

    def __init__(self, rule, min_step):
        self.rule, self.min_step = rule, min_step

    def start(self, problem, x):
        self.problem, M = problem, problem.manifold
        # With a fused oracle every trial point also gets its gradient (shared work);
        # without one, trial points get the cost only and the accepted point its gradient.
        self.fused = problem.has_cost_and_egrad
        f, g = problem.cost_and_rgrad(x)
        s = State(x, f, M.norm(x, g), self.measure, g=g)
        self.rule.begin(s)
        return s

    def trial(self, s, alpha):
        """``(f, egrad or None, x)`` at the step ``alpha`` along ``-grad f``."""
        x = self.problem.manifold.retraction(s.x, -alpha * s.g)
        if self.fused:
            return self.problem.cost_and_egrad(x) + (x,)
        return self.problem.cost(x), None, x

    def step(self, s, budget):
        out = self.rule.search(self, s)
        if out is None:
            return verdict(Status.SMALL_STEP, s, min_step=self.min_step)
        f, egrad, x = out
        M = self.problem.manifold
        if egrad is None:
            egrad = self.problem.egrad(x)
        g = M.euclidean_to_riemannian_gradient(x, egrad)
        s.nit += 1
        self.rule.accepted(M, s, x, f, g)
        s.x, s.fun, s.g, s.stationarity = x, f, g, M.norm(x, g)
        return None


class FixedStep:
    """The step ``alpha`` at every iteration, no line search."""

    def __init__(self, alpha):
        self.alpha = alpha

    def begin(self, s):
        pass

    def search(self, method, s):
        return method.trial(s, self.alpha)

    def accepted(self, M, s, x, f, g):
        pass


class Backtracking:
    r"""Armijo backtracking against the Zhang–Hager reference value :math:`C_k`
    (:math:`\eta = 0`: the monotone test), from a first trial step that is the
    Barzilai–Borwein quotient or grows by ``1/contraction`` after a step accepted at once."""

    def __init__(self, initial_step, sufficient_decrease, contraction, nonmonotone,
                 barzilai_borwein):
        self.initial_step, self.c, self.shrink = initial_step, sufficient_decrease, contraction
        self.eta, self.bb = nonmonotone, barzilai_borwein

    def begin(self, s):
        if self.initial_step is None:
            self.alpha = 1.0 / s.stationarity if s.stationarity > 0 else 1.0
        else:
            self.alpha = self.initial_step
        self.ref, self.q = s.fun, 1.0  # the reference value C_k and its weight Q_k
        self.backtracks = 0

    def search(self, method, s):
        # the rounding allowance keeps the test from failing on cost differences at the
        # level of floating-point noise once the gradient is tiny
        gnorm = s.stationarity
        accept = armijo(self.ref, gnorm * gnorm, self.c, _ROUNDING * abs(self.ref))
        self.alpha, out, self.backtracks = backtracking(
            lambda alpha: method.trial(s, alpha), accept, self.alpha, self.shrink,
            method.min_step / gnorm)
        return out

    def accepted(self, M, s, x, f, g):
        if self.bb:
            g_moved = M.transport(s.x, x, s.g)  # transports are linear: s moves with g
            step = -self.alpha * g_moved
            y = g - g_moved
            sy = M.inner_product(x, step, y)
            if sy > 0:
                if s.nit % 2:
                    self.alpha = M.inner_product(x, step, step) / sy
                else:
                    self.alpha = sy / M.inner_product(x, y, y)
            self.alpha = min(max(self.alpha, 1e-20), 1e20)
        elif self.backtracks == 0:
            self.alpha /= self.shrink
        q = self.eta * self.q + 1.0
        self.ref = (self.eta * self.q * self.ref + f) / q
        self.q = q
