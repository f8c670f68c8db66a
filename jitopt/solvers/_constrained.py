"""The outer loop shared by the constrained methods (``ralm``, ``repm``): a sequence of
penalized problems, each solved by an unconstrained Riemannian method warm-started at the
last point, with the KKT residual and the constraint violation tested after each.

A *penalty* strategy (the augmented Lagrangian of ``ralm``, the smoothed exact penalty of
``repm``) sets its parameters at the start (``start(problem, x, egrad, g, h)``, with the
cost's gradient and the constraints at the starting point), gives the penalized cost
through ``value(g, h)`` and ``weights(g, h)`` (the multiplier estimates whose Lagrangian
gradient is the penalized gradient), updates its parameters after each solve (``update``,
told whether the KKT test is unmet; it returns whether the curvature of the penalized cost
changed, else the next solve keeps the inner memory), caps the next inner tolerance
(``eps_cap()``), says whether its penalty reached its cap (``capped``), and names its
history columns (``columns``, ``extra()``), its result fields (``fields()``) and what to
change when the run stalls (``advice()``)."""

import math

import numpy as np

from .._core.problem import Problem
from .._core.registry import get_method
from .._core.result import Status
from .._core.run import Algorithm, State
from .._core.stopping import Criterion, verdict
from ..validation import check_int, check_real, check_rng
from ._rlbfgs import Sequence

__all__ = ["Outer", "KKTStop", "checked_setup"]

#: the options of the inner solver that the outer loop sets itself
_OUTER_SET = ("gtol", "maxiter", "max_time", "callback", "history", "disp")


def checked_setup(problem, x0, inner, inner_maxiter, inner_options, eps, eps_min, eps_steps,
                  min_step, ctol, rng):
    """The checked start and inner solver of a constrained method: ``(x, inner)``,
    ``inner.solve(problem, x, keep, gtol, maxiter, max_time)`` solving one penalized
    problem; every error names its argument."""
    method = get_method(inner)
    if not method.takes(Problem(problem.manifold, lambda x: 0.0, lambda x: x)):
        raise ValueError(f"inner must name a method that takes a jitopt.Problem on "
                         f"{problem.manifold!r} (rlbfgs, rcg, rtr, rgd), got {inner!r}")
    check_int("inner_maxiter", inner_maxiter, low=1)
    if inner_options is None:
        inner_options = {}
    if not isinstance(inner_options, dict):
        raise TypeError(f"inner_options must be a dict or None, got "
                        f"{type(inner_options).__name__}")
    for key in inner_options:
        if key in _OUTER_SET or key not in method.options:
            raise ValueError(f"inner_options: {key!r} is not an option of {method.name!r} "
                             f"that the outer loop leaves to the user ({_OUTER_SET} are set "
                             f"by it)")
    check_real("eps", eps, low=0.0, low_open=True)
    check_real("eps_min", eps_min, low=0.0)
    check_int("eps_steps", eps_steps, low=1)
    check_real("min_step", min_step, low=0.0)
    check_real("ctol", ctol, low=0.0)
    M = problem.manifold
    x = M.random_point(check_rng(rng)) if x0 is None else M.validate_point(x0, "x0")
    return x, (Sequence(inner_options) if method.name == "rlbfgs" else
               Restarted(method.solver, inner_options))


class Restarted:
    """An unconstrained method on the sequence of penalized problems, each solve a new run
    from the last point (``keep`` is ignored); ``rlbfgs`` keeps its memory instead
    (:class:`~jitopt.solvers._rlbfgs.Sequence`)."""

    def __init__(self, solver, options):
        self.solver, self.options = solver, dict(options)

    def solve(self, problem, x, keep, gtol, maxiter, max_time):
        return self.solver(problem, x, gtol=gtol, maxiter=maxiter, max_time=max_time,
                           **self.options)


def penalized(problem, penalty):
    """The plain :class:`~jitopt.Problem` of the penalized cost :math:`f + P(g(x), h(x))`
    with the penalty's current parameters, its gradient :math:`\\nabla f + \\sum_i w_i
    \\nabla g_i + \\sum_j v_j \\nabla h_j`, :math:`(w, v)` the penalty's weights (one
    evaluation of every oracle per point)."""
    objective = problem.objective

    def cost(x):
        g, h = problem.constraints(x)
        return objective.cost(x) + penalty.value(g, h)

    def cost_and_egrad(x):
        f, gf = objective.cost_and_egrad(x)
        g, h = problem.constraints(x)
        w, v = penalty.weights(g, h)
        return f + penalty.value(g, h), gf + problem.constraint_vjp(x, w, v)

    return Problem(problem.manifold, cost, lambda x: cost_and_egrad(x)[1],
                   cost_and_egrad=cost_and_egrad)


class Outer(Algorithm):
    """Outer iterations: solve the penalized problem from the last point to the gradient
    tolerance ``eps`` (lowered geometrically from ``eps`` to ``eps_min`` in ``eps_steps``
    iterations, and at once to the penalty's ``eps_cap()`` when that is lower), measure the
    KKT residual with the penalty's multiplier estimates, update the penalty; a stall (a
    step below ``min_step`` with ``eps`` at ``eps_min``, and the penalty unchanged when the
    violation exceeds ``ctol``) or a penalty at its cap ends the run, ``INFEASIBLE`` when
    the constraints are still violated beyond ``ctol``."""

    measure = "KKT residual"
    #: a fault returns the last iterate, the most feasible one, not the one of least cost
    inplace = True

    def __init__(self, problem, penalty, inner, inner_maxiter, eps, eps_min, eps_steps,
                 min_step, gtol, ctol):
        self.penalty, self.inner, self.inner_maxiter = penalty, inner, inner_maxiter
        self.min_step, self.keep = min_step, False
        self.gtol, self.ctol = gtol, ctol
        self.eps, self.eps_min = eps, min(eps_min, eps)
        self.theta_eps = (self.eps_min / eps) ** (1.0 / eps_steps) if self.eps_min > 0 else 0.0
        self.columns = ("lagrangian_gradient_norm", "max_violation", "complementarity", "eps",
                        "inner_nit") + penalty.columns
        self.base = problem.counts.own()[4:]
        self.problem, self.inner_nit = problem, 0
        self.last = {"lagrangian_gradient_norm": math.nan, "max_violation": math.nan,
                     "complementarity": math.nan, "ineq_multipliers": np.zeros(0),
                     "eq_multipliers": np.zeros(0)}

    def fields(self, x, nit):
        ncev, ncjev = (now - then for now, then in zip(self.problem.counts.own()[4:],
                                                       self.base))
        return {**self.last, **self.penalty.fields(), "inner_nit": self.inner_nit,
                "ncev": ncev, "ncjev": ncjev}

    def measure_at(self, x, g, h, values=None):
        """``(fun, kkt residual, extra)`` at ``x`` (where the constraints are ``g, h``, and
        the cost and its gradient ``values`` if given) with the penalty's multiplier
        estimates, kept for the result's fields."""
        problem = self.problem
        f, gf = problem.objective.cost_and_egrad(x) if values is None else values
        w, v = self.penalty.weights(g, h)
        kkt = problem.kkt(x, w, v, values=(f, gf, g, h))
        parts = ("lagrangian_gradient_norm", "max_violation", "complementarity")
        self.last = {**{k: kkt[k] for k in parts}, "ineq_multipliers": w.copy(),
                     "eq_multipliers": v.copy()}
        extra = {**{k: kkt[k] for k in parts}, "eps": self.eps, "inner_nit": self.inner_nit,
                 **self.penalty.extra()}
        return f, kkt["kkt_residual"], extra

    def start(self, problem, x):
        g, h = problem.constraints(x)
        values = problem.objective.cost_and_egrad(x)
        self.penalty.start(problem, x, values[1], g, h)
        self.inner_problem = penalized(problem, self.penalty)
        f, r, extra = self.measure_at(x, g, h, values)
        return State(x, f, r, self.measure, extra=extra)

    def step(self, s, budget):
        at_floor = self.eps <= self.eps_min
        res = self.inner.solve(self.inner_problem, s.x, self.keep, self.eps, self.inner_maxiter,
                               max(budget.seconds(), 0.0))
        if "fault" in res:
            raise res.fault  # the outer run reports the oracle's fault
        self.inner_nit += res.nit
        moved = float(np.linalg.norm(res.x - s.x))
        s.x = res.x
        g, h = self.problem.constraints(s.x)
        # the KKT parts with the multiplier estimates of the solve's parameters, then the update
        s.fun, s.stationarity, s.extra = self.measure_at(s.x, g, h)
        violation = s.extra["max_violation"]
        # the next solve keeps the inner memory when the penalty's curvature is unchanged
        self.keep = not self.penalty.update(
            g, h, violation, unmet=s.stationarity > self.gtol or violation > self.ctol)
        self.eps = max(self.eps_min, min(self.theta_eps * self.eps, self.penalty.eps_cap()))
        s.nit += 1
        # no move with eps at its floor; not while the violation is above ctol and the
        # penalty just grew (the next solve differs: the violation was out of its reach)
        stalled = at_floor and moved < self.min_step and (violation <= self.ctol or self.keep)
        if violation > self.ctol and (stalled or self.penalty.capped()):
            s.verdict = verdict(Status.INFEASIBLE, s, violation=violation, ctol=self.ctol)
        elif stalled:
            status, message = verdict(Status.SMALL_STEP, s, min_step=self.min_step)
            s.verdict = status, message + self.penalty.advice()
        return None


class KKTStop(Criterion):
    """The tests of a constrained run, in order: ``CONVERGED`` (KKT residual at most
    ``gtol`` and violation at most ``ctol``), a verdict of the step (``INFEASIBLE``,
    ``SMALL_STEP``), ``TARGET`` (cost at most ``f_target`` at a point within ``ctol``),
    ``MAXITER``, ``MAXTIME``; every message names the violation."""

    def __init__(self, gtol, ctol, f_target, maxiter, max_time):
        self.gtol, self.ctol, self.maxiter, self.max_time = gtol, ctol, maxiter, max_time
        self.f_target = -math.inf if f_target is None else f_target

    def __call__(self, s, watch):
        parts = s.extra
        violation = parts["max_violation"]
        feasible = violation <= self.ctol
        if s.stationarity <= self.gtol and feasible:
            return Status.CONVERGED, (
                f"Optimization terminated successfully: KKT residual {s.stationarity:.2e} "
                f"<= gtol = {self.gtol:.3g} (Lagrangian gradient "
                f"{parts['lagrangian_gradient_norm']:.2e}, constraint violation "
                f"{violation:.2e} <= ctol = {self.ctol:.3g}, complementarity "
                f"{parts['complementarity']:.2e}).")
        if s.verdict is not None:
            return s.verdict
        if s.fun <= self.f_target and feasible:
            return verdict(Status.TARGET, s, f_target=self.f_target)
        if s.nit >= self.maxiter:
            ended = verdict(Status.MAXITER, s, maxiter=self.maxiter)
        elif watch.elapsed() >= self.max_time:
            ended = verdict(Status.MAXTIME, s, max_time=self.max_time)
        else:
            return None
        return ended[0], f"{ended[1]} Constraint violation {violation:.2e}."

    def iterations_left(self, s):
        return self.maxiter - s.nit

    def seconds_left(self, watch):
        return self.max_time - watch.elapsed()
