r"""Online adaptive-sampling proximal DCA for stochastic nonsmooth difference-of-convex problems
whose data distribution drifts over time: the sample-size rules and the loop.

The problem types (:class:`~jitopt.problems.DCProblem`, :class:`~jitopt.problems.StreamProblem`,
the DC penalties) are in :mod:`jitopt.problems`; the proximal subproblem solvers in
:class:`~jitopt.dc.ProxSubproblem`.
"""

import math
import sys
import warnings

import numpy as np

from .._core.registry import register_method
from .._core.result import Status
from .._core.run import Algorithm, State, run
from .._core.stopping import Criterion, MaxIter, MaxSamples, MaxTime
from ..validation import check_array, check_choice, check_int, check_real, check_rng
from ..problems import DCProblem
from ._subproblem import ProxSubproblem

__all__ = ["online_dca", "ProxSubproblem", "adaptive_sizes", "norm_test_sizes",
           "half_variance"]

_HUGE = 2 ** 62
#: the most samples one iteration may draw: a larger batch cannot be allocated
MAX_BATCH = 2 ** 31
_MEASURE = "criticality mu*||x_{t+1} - x_t||"


# --------------------------------------------------------------------------------------
# sample-size rules
# --------------------------------------------------------------------------------------

def _ceil_int(v, cap=_HUGE):
    return int(min(math.ceil(v), cap)) if np.isfinite(v) else cap


def _power(t, a):
    """``t ** a``, the largest float where it overflows (so that ``0 * _power`` is 0)."""
    try:
        return float(t) ** a
    except OverflowError:
        return sys.float_info.max


def adaptive_sizes(R, A, B, a, b, with_h):
    r"""The smallest :math:`(N_g, N_h)` (least :math:`N_g + N_h`, rounded up) with
    :math:`A N_g^{-a} + B N_h^{-b} \le R`: condition 1 of the paper's adaptive rule.

    The Lagrange conditions give :math:`N_g = (\lambda a A)^{1/(a+1)}`,
    :math:`N_h = (\lambda b B)^{1/(b+1)}`; a bisection on :math:`\log\lambda` makes the
    constraint tight. Without samples for :math:`h` (``with_h`` false) :math:`N_h = 0` and
    :math:`N_g = \lceil (A/R)^{1/a}\rceil`. :math:`R \le 0` gives :math:`2^{62}`.
    """
    if R <= 0:
        return _HUGE, (_HUGE if with_h else 0)
    # (A / R)^(1 / a) in logs (a tiny step must give a huge size, not an overflow)
    ng_only = _ceil_int(math.exp(min((math.log(A) - math.log(R)) / a, 700.0)))
    if not with_h:
        return ng_only, 0
    if B == 0:
        return ng_only, 1
    lo_l, hi_l = -200.0, 200.0
    for _ in range(200):
        mid = 0.5 * (lo_l + hi_l)
        ng = math.exp((mid + math.log(a * A)) / (a + 1))
        nh = math.exp((mid + math.log(b * B)) / (b + 1))
        if A * ng ** -a + B * nh ** -b > R:
            lo_l = mid
        else:
            hi_l = mid
    ng = math.exp((hi_l + math.log(a * A)) / (a + 1))
    nh = math.exp((hi_l + math.log(b * B)) / (b + 1))
    return _ceil_int(ng), _ceil_int(nh)


def norm_test_sizes(R, V_g, V_h, with_h):
    r"""The smallest :math:`(N_g, N_h)` (least sum, rounded up) with
    :math:`V_g/N_g + V_h/N_h \le R`: :math:`N_g = \sqrt{V_g}(\sqrt{V_g} + \sqrt{V_h})/R`
    and the same with :math:`\sqrt{V_h}` first for :math:`N_h` (0 without ``with_h``)."""
    if R <= 0:
        return _HUGE, (_HUGE if with_h else 0)
    root = math.sqrt(V_g) + (math.sqrt(V_h) if with_h else 0.0)
    ng = _ceil_int(math.sqrt(V_g) * root / R)
    return ng, (_ceil_int(math.sqrt(V_h) * root / R) if with_h else 0)


def half_variance(problem, x, batch_h):
    r"""An unbiased estimate of the one-sample variance :math:`V_h` of the subgradient of
    :math:`h` at ``x``: the mean subgradients on the two halves (sizes :math:`m` and
    :math:`n - m`) of the batch differ by a vector of variance :math:`V_h(1/m + 1/(n-m))`."""
    n = batch_h[0].shape[0]
    m = n // 2
    _, y1 = problem.concave_part(x, tuple(a[:m] for a in batch_h))
    _, y2 = problem.concave_part(x, tuple(a[m:] for a in batch_h))
    return float(np.sum((y1 - y2) ** 2)) / (1.0 / m + 1.0 / (n - m))


# --------------------------------------------------------------------------------------
# the solver
# --------------------------------------------------------------------------------------

@register_method("online_dca", DCProblem, tol_option="tol", doc=dict(
    history=", and ``step``, ``n_g``, ``n_h`` (the sizes used at the iteration), ``samples`` "
            "(drawn so far) and ``gap`` (the subproblem's duality gap, NaN for cvxpy); row 0 is "
            "the start",
    rng="Passed (as a Generator) to the samplers; same seed, same result."))
def online_dca(problem, x0=None, *, mu=1.0, rule="adaptive", n0=10, n0_h=None, c_g=1.0,
               c_h=1.0, alpha_g=0.49, alpha_h=0.95, rho=0.0, schedule_g=2.1, schedule_h=1.1,
               theta=1.0, floor=0.01, subproblem_tol=1e-10, solver="auto", maxiter=1000,
               max_samples=None, max_time=np.inf, tol=1e-10, callback=None, history=False,
               disp=False, rng=None):
    r"""Online adaptive-sampling proximal DCA (ospDCA) for stochastic DC problems.

    For :math:`\min_{x\in C} g(x) - h(x)` with :math:`g, h` expectations of convex,
    possibly nonsmooth functions under laws that may drift with the iteration
    (:class:`~jitopt.problems.DCProblem`), iteration :math:`t = 1, 2, \dots` draws fresh
    samples of sizes :math:`N_{g,t}` and :math:`N_{h,t}` from the laws of iteration
    :math:`t`, takes :math:`y_t \in \partial \bar h_t(x_t)` and sets

    .. math::

        x_{t+1} = \operatorname*{argmin}_{x \in C}\; \bar g_t(x) - y_t^\top x
        + \frac{\mu}{2}\|x - x_t\|^2 .

    The next sample sizes follow ``rule``:

    * ``"adaptive"`` (the paper's Algorithm 2): the cheapest of the smallest
      :math:`(N_g, N_h)` (least :math:`N_g + N_h`, :func:`~jitopt.dc.adaptive_sizes`) with

      .. math::

          \frac{\mu}{2}\|x_{t+1} - x_t\|^2 \ge \frac{C_g}{\mu N_g^{\alpha_g}}
          + \frac{C_h}{(2\rho + \mu) N_h^{\alpha_h}}

      and the caps :math:`(\lceil (t+1)^{a}\rceil, \lceil (t+1)^{b}\rceil)`, ``a, b =
      schedule_g, schedule_h``. A large step allows few samples; near a critical point the
      caps decide. Without samples for :math:`h`, :math:`N_h = 0` and the :math:`C_h` term
      is dropped. The caps must themselves satisfy the paper's summability condition for
      the rule's exponents (:math:`\alpha_g a > 1`, :math:`\alpha_h b > 1`), which the
      defaults :math:`\alpha_g = 0.49 \in (1/2.1, 1/2)` and :math:`\alpha_h = 0.95 \in
      (1/1.1, 1)` do; other choices give a ``UserWarning`` (the authors' code uses
      :math:`\alpha_g = 0.45`, for which :math:`\lceil t^{2.1}\rceil` is not summable).
    * ``"norm_test"`` (a departure from the paper: the norm test of Byrd et al. 2012 with the
      step of the proximal method): the smallest :math:`(N_g, N_h)` (least sum,
      :func:`~jitopt.dc.norm_test_sizes`) with

      .. math::

          \frac{V_g}{N_g} + \frac{V_h}{N_h} \le R = \theta^2\mu^2\|x_{t+1} - x_t\|^2 ,

      where :math:`V_g` is the sample variance of the per-sample loss subgradients at
      :math:`x_{t+1}` and :math:`V_h` that of one sample of :math:`\partial H`
      (:func:`~jitopt.dc.half_variance`). Since the subproblem solution is :math:`1/\mu`-Lipschitz in
      its linear term, :math:`\sqrt{V_g/N_g + V_h/N_h}/\mu` bounds the first-order sampling
      error of the step, so the test keeps it below :math:`\theta` times the step. The
      sizes are then clipped to :math:`[\max(2, \lceil \phi (t+1)^a\rceil),
      \lceil (t+1)^a\rceil]` (the same with :math:`b` for :math:`h`), :math:`\phi = `
      ``floor``: for :math:`a > 2, b > 1` the lower schedule is summable, so the paper's
      convergence theorem holds for any ``floor > 0``. Needs a built-in loss.
    * ``"schedule"``: :math:`N_{g,t} = \lceil t^{a}\rceil`, :math:`N_{h,t} = \lceil
      t^{b}\rceil` (summable when :math:`a > 2, b > 1`).
    * ``"fixed"``: :math:`N_g = ` ``n0`` and :math:`N_h = ` ``n0_h`` at every iteration.

    Every accumulation point is DC-critical for the limit problem almost surely when the
    drift is summable and the sizes satisfy the rule (Ye, Cui and Wang 2025, Thm. 4.10 and
    5.3); there is no rate, so a run usually stops on ``max_samples``, ``max_time`` or
    ``maxiter``.

    Parameters
    ----------
    problem : jitopt.problems.DCProblem
    x0 : array_like, shape (d,), optional
        Starting point (zeros by default), projected onto :math:`C`.
    mu : float
        Proximal parameter :math:`\mu > 0` (constant).
    rule : {"adaptive", "norm_test", "schedule", "fixed"}
    n0, n0_h : int
        Sample sizes of the first iteration (``n0_h`` defaults to ``n0``; it is 0 when
        :math:`h` has no samples; at least 2 for ``"norm_test"``).
    c_g, c_h, alpha_g, alpha_h, rho : float
        Constants of the adaptive rule: :math:`C_g, C_h > 0`,
        :math:`\alpha_g \in (0, 1/2)`, :math:`\alpha_h \in (0, 1)` and
        :math:`\rho = \rho_g + \rho_h \ge 0` (weak-convexity moduli); for ``"adaptive"``
        :math:`\alpha_g` ``* schedule_g`` and :math:`\alpha_h` ``* schedule_h`` should exceed
        1 (a ``UserWarning`` otherwise).
    schedule_g, schedule_h : float
        Exponents of the schedule and of the caps.
    theta, floor : float
        The norm test's ratio :math:`\theta > 0` of the sampling-error bound to the step,
        and the constant :math:`\phi \in [0, 1]` of its lower schedule.
    subproblem_tol : float
        Relative duality-gap tolerance of the compiled subproblem solver.
    solver : {"auto", "numba", "cvxpy"}
        Subproblem solver (:class:`~jitopt.dc.ProxSubproblem`).
    maxiter : int
        Maximum number of iterations.
    max_samples : int, optional
        Stop (``Status.MAX_SAMPLES``) once this many samples (both parts) are drawn.
    max_time : float
        Maximum wall-clock seconds.
    tol : float
        Stop (``Status.CONVERGED``) when a step :math:`\|x_{t+1} - x_t\|` is at most
        ``tol``.
    {common options}

    Returns
    -------
    OptimizeResult
        ``x``; ``fun``, the sample estimate :math:`\bar g_t(x) - \bar h_t(x)` on the last
        batches (NaN before the first iteration); ``stationarity``, the criticality measure
        :math:`\mu\|x_{t+1} - x_t\|` of the last step (zero exactly at a DC-critical point
        of the sample problem; ``stationarity_measure`` says so); ``nit``; ``samples``,
        ``samples_g``, ``samples_h`` (drawn); ``nfev`` (evaluations of :math:`\bar g`: one
        per subproblem), ``njev`` (subgradients of :math:`\bar h`: two per iteration, two
        more with the norm test and samples for :math:`h`), ``nifo`` (samples drawn, both
        parts). ``status``: ``CONVERGED`` (a step at most ``tol``), ``MAXITER``,
        ``MAX_SAMPLES``, ``MAXTIME``, ``CALLBACK``; a sampler or user part that raises
        gives ``ORACLE_ERROR``, NaN or inf in the data ``NONFINITE``, a failed subproblem
        (cvxpy) ``INNER_FAILURE``. With ``history=True`` the common columns and ``step``,
        ``n_g``, ``n_h`` (sizes used at the iteration), ``samples`` (drawn so far) and
        ``gap`` (the subproblem's duality gap, NaN for cvxpy); row 0 is the start.

    References
    ----------
    Y. Ye, Y. Cui and J. Wang. An online adaptive sampling algorithm for stochastic
    difference-of-convex optimization with time-varying distributions. ICML 2025 (PMLR 267).

    Examples
    --------
    :math:`\min_x \frac12(x - 3)^2 + \frac12\min(1, |x|)` as a squared loss on the datum
    ``(1, 3)`` and a capped-:math:`\ell_1` penalty; its only critical point is 3:

    >>> import numpy as np, jitopt
    >>> from jitopt.problems import CappedL1, DCProblem, StreamProblem
    >>> stream = StreamProblem(lambda t, size, rng: (np.ones((size, 1)), np.full(size, 3.0)))
    >>> problem = DCProblem(stream, 1, loss="squared", penalty=CappedL1(0.5))
    >>> res = jitopt.solvers.online_dca(problem, rule="fixed", n0=1, tol=1e-12)
    >>> res.status.name, round(float(res.x[0]), 10)
    ('CONVERGED', 3.0)
    """
    mu = check_real("mu", mu, low=0.0, low_open=True)
    check_choice("rule", rule, ("adaptive", "norm_test", "schedule", "fixed"))
    n0 = check_int("n0", n0, low=1, high=MAX_BATCH)
    n0_h = n0 if n0_h is None else check_int("n0_h", n0_h, low=1, high=MAX_BATCH)
    c_g = check_real("c_g", c_g, low=0.0, low_open=True)
    c_h = check_real("c_h", c_h, low=0.0)
    alpha_g = check_real("alpha_g", alpha_g, low=0.0, high=0.5, low_open=True, high_open=True)
    alpha_h = check_real("alpha_h", alpha_h, low=0.0, high=1.0, low_open=True, high_open=True)
    rho = check_real("rho", rho, low=0.0)
    schedule_g = check_real("schedule_g", schedule_g, low=0.0, low_open=True)
    schedule_h = check_real("schedule_h", schedule_h, low=0.0, low_open=True)
    theta = check_real("theta", theta, low=0.0, low_open=True)
    floor = check_real("floor", floor, low=0.0, high=1.0)
    subproblem_tol = check_real("subproblem_tol", subproblem_tol, low=0.0, low_open=True)
    maxiter = check_int("maxiter", maxiter, low=0)
    if max_samples is not None:
        max_samples = check_int("max_samples", max_samples, low=1)
    max_time = check_real("max_time", max_time, low=0.0)
    tol = check_real("tol", tol, low=0.0)
    sub = ProxSubproblem(problem, solver, subproblem_tol)
    with_h = problem.stream.has_h
    for part, alpha, a in (("g", alpha_g, schedule_g), ("h", alpha_h, schedule_h)):
        if rule == "adaptive" and (part == "g" or with_h) and alpha * a <= 1.0:
            warnings.warn(f"alpha_{part} * schedule_{part} = {alpha} * {a} <= 1: the cap "
                          f"ceil(t^{a}) is not summable with the rule's exponent, so the "
                          f"convergence theorem (Thm. 5.3 with condition 2) does not apply",
                          UserWarning, stacklevel=3)
    if rule == "norm_test" and (n0 < 2 or (with_h and n0_h < 2)):
        raise ValueError("rule='norm_test' estimates variances and needs n0 >= 2 and "
                         "n0_h >= 2")
    if rule == "norm_test" and problem.convex is not None:
        raise ValueError("rule='norm_test' estimates the variance of a built-in loss; a user "
                         "convex part needs rule='adaptive', 'schedule' or 'fixed'")
    rng = check_rng(rng)
    d = problem.dim
    if x0 is None:
        x = np.zeros(d)
    else:
        x = check_array("x0", x0)
        if x.shape != (d,):
            raise ValueError(f"x0 must have shape ({d},), got {x.shape}")
    x = problem.project(x)
    caps = Caps(schedule_g, schedule_h, with_h)
    if rule == "adaptive":
        sizes = AdaptiveSizes(caps, c_g / mu, c_h / (2 * rho + mu), alpha_g, alpha_h, mu)
    elif rule == "norm_test":
        sizes = NormTestSizes(caps, theta * mu, floor)
    else:
        sizes = ScheduleSizes(caps) if rule == "schedule" else FixedSizes()
    first = (1, 1) if rule == "schedule" else (n0, n0_h)
    stop = (StepNorm(tol) | MaxSamples(math.inf if max_samples is None else max_samples)
            | BatchLimit() | MaxIter(maxiter) | MaxTime(max_time))
    return run(problem, OnlineDCA(sub, sizes, first, mu, rng), x, stop=stop,
               callback=callback, history=history, disp=disp)


# --------------------------------------------------------------------------------------
# the iteration, its sample-size rules and its own stopping tests
# --------------------------------------------------------------------------------------

class OnlineDCA(Algorithm):
    """One proximal DCA step per iteration on fresh batches of the sizes ``state.n_g``,
    ``state.n_h``; the next sizes from ``sizes`` (a rule below)."""

    measure = _MEASURE
    columns = ("step", "n_g", "n_h", "samples", "gap")

    def __init__(self, sub, sizes, first, mu, rng):
        self.sub, self.sizes, self.first, self.mu, self.rng = sub, sizes, first, mu, rng

    def start(self, problem, x):
        self.problem, self.stream = problem, problem.stream
        self.base = self.stream.own()
        n_g, n_h = self.first
        return State(x, float("nan"), float("nan"), self.measure,
                     extra={"n_g": 0, "n_h": 0, "samples": 0}, step=float("nan"),
                     n_g=n_g, n_h=n_h if self.stream.has_h else 0)

    def step(self, s, budget):
        problem, mu, t = self.problem, self.mu, s.nit + 1
        batch_g, batch_h = problem.draw_batches(t, s.n_g, s.n_h, self.rng)
        _, y = problem.concave_part(s.x, batch_h)
        x_new, gap, sub_val = self.sub.solve(batch_g, s.x, y, mu)
        if not (np.isfinite(x_new).all() and np.isfinite(sub_val)):
            raise FloatingPointError("the subproblem solution is not finite")
        step = float(np.linalg.norm(x_new - s.x))
        # sample estimate of f at the new point: g from the subproblem value, h re-evaluated
        g_new = sub_val + y @ x_new - 0.5 * mu * step ** 2
        h_new, _ = problem.concave_part(x_new, batch_h)
        s.extra = {"step": step, "n_g": s.n_g, "n_h": s.n_h,
                   "samples": self.fields(x_new, t)["samples"], "gap": gap}
        s.n_g, s.n_h = self.sizes.next(problem, t, step, s.n_g, s.n_h, x_new, batch_g,
                                       batch_h)
        s.x, s.fun, s.stationarity, s.step = x_new, float(g_new - h_new), mu * step, step
        s.nit = t
        return None

    def fields(self, x, nit):
        g, h = (now - then for now, then in zip(self.stream.own(), self.base))
        return {"samples": g + h, "samples_g": g, "samples_h": h}


class Caps:
    r"""The schedule :math:`(\lceil t^a\rceil, \lceil t^b\rceil)` (0 for :math:`h`
    without samples): the sizes of ``rule="schedule"`` and the caps of the others."""

    def __init__(self, a, b, with_h):
        self.a, self.b, self.with_h = a, b, with_h

    def __call__(self, t, factor=1.0):
        return (_ceil_int(factor * _power(t, self.a)),
                _ceil_int(factor * _power(t, self.b)) if self.with_h else 0)


class FixedSizes:
    """``rule="fixed"``: the sizes of the first iteration at every iteration."""

    def next(self, problem, t, step, n_g, n_h, x, batch_g, batch_h):
        return n_g, n_h


class ScheduleSizes:
    """``rule="schedule"``: the caps themselves."""

    def __init__(self, caps):
        self.caps = caps

    def next(self, problem, t, step, n_g, n_h, x, batch_g, batch_h):
        return self.caps(t + 1)


class AdaptiveSizes:
    """``rule="adaptive"``: condition 1 of the paper's rule or both caps, whichever is
    cheaper."""

    def __init__(self, caps, A, B, alpha_g, alpha_h, mu):
        self.caps, self.A, self.B, self.alpha_g, self.alpha_h = caps, A, B, alpha_g, alpha_h
        self.mu = mu

    def next(self, problem, t, step, n_g, n_h, x, batch_g, batch_h):
        cap_g, cap_h = self.caps(t + 1)
        with_h = self.caps.with_h
        ng, nh = adaptive_sizes(0.5 * self.mu * step ** 2, self.A, self.B, self.alpha_g,
                                self.alpha_h, with_h)
        ng, nh = max(ng, 1), (max(nh, 1) if with_h else 0)
        return (ng, nh) if ng + nh <= cap_g + cap_h else (cap_g, cap_h)


class NormTestSizes:
    """``rule="norm_test"``: the norm test with the sample variances at the new iterate,
    clipped to the lower schedule ``floor`` times the caps (at least 2) and the caps."""

    def __init__(self, caps, theta_mu, floor):
        self.caps, self.theta_mu, self.floor = caps, theta_mu, floor

    def next(self, problem, t, step, n_g, n_h, x, batch_g, batch_h):
        with_h = self.caps.with_h
        V_g = problem.loss_variance(batch_g, x)
        V_h = half_variance(problem, x, batch_h) if with_h else 0.0
        cap_g, cap_h = self.caps(t + 1)
        low_g, low_h = self.caps(t + 1, self.floor)
        ng, nh = norm_test_sizes((self.theta_mu * step) ** 2, V_g, V_h, with_h)
        n_g = min(max(ng, low_g, 2), cap_g)
        if with_h:
            n_h = min(max(nh, low_h, 2), cap_h)
        return n_g, n_h


class StepNorm(Criterion):
    r"""``CONVERGED`` once a step :math:`\|x_{t+1} - x_t\|` is at most ``tol``."""

    def __init__(self, tol):
        self.tol = tol

    def __call__(self, s, watch):
        if s.step <= self.tol:
            return Status.CONVERGED, ("Optimization terminated successfully: step norm "
                                      f"||x_{{t+1}} - x_t|| = {s.step:.3e} <= tol = "
                                      f"{self.tol:.3g}.")
        return None


class BatchLimit(Criterion):
    """``MAX_SAMPLES`` when the rule asks for more samples than one batch can hold (the
    sizes of the first iteration are the options ``n0``, ``n0_h``)."""

    def __call__(self, s, watch):
        if s.nit and s.n_g + s.n_h > MAX_BATCH:
            return Status.MAX_SAMPLES, (
                f"The sample-size rule asks for n_g + n_h = {s.n_g} + {s.n_h} samples at "
                f"iteration {s.nit + 1}, more than one batch can hold ({MAX_BATCH}); x is the "
                f"last iterate, {_MEASURE} {s.stationarity:.3e} (set max_samples, or lower "
                f"schedule_g/schedule_h).")
        return None
