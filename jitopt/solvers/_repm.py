"""The Riemannian exact penalty method via smoothing (REPMS) of Liu and Boumal."""

import math

import numpy as np

from .._core.registry import register_method
from .._core.run import run
from ..problems import ConstrainedProblem
from ..validation import check_choice, check_int, check_limits, check_real
from ._constrained import KKTStop, Outer, checked_setup

__all__ = ["repm"]


@register_method("repm", ConstrainedProblem, tol_option="gtol", doc=dict(
    unit="outer iteration",
    history=", and those of :func:`ralm` with ``u`` (the smoothing of the solve)"))
def repm(problem, x0=None, *, smoothing="lqh", inner="rlbfgs", inner_maxiter=200,
         inner_options=None, rho=1.0, theta_rho=0.3, u=0.1, u_min=None, u_steps=30,
         rho_max=1e10, eps=1e-3, eps_min=None, eps_steps=30, min_step=1e-10, gtol=1e-6,
         ctol=1e-6, f_target=None, maxiter=300, max_time=np.inf, callback=None,
         history=False, disp=False, rng=None):
    r"""Riemannian exact penalty method with smoothing, for :math:`\min f(x)` over a
    manifold subject to :math:`g(x) \le 0`, :math:`h(x) = 0`.

    The exact penalty :math:`f + \rho(\sum_i \max(0, g_i) + \sum_j |h_j|)` has the
    constrained minimizers for :math:`\rho` above the multipliers but is not smooth; each
    outer iteration minimizes a smoothing of it with parameter :math:`u`,

    - ``"lqh"`` (default): :math:`\max(0, g)` by 0, :math:`g^2/(2u)` or :math:`g - u/2`
      (for :math:`g \le 0`, :math:`0 < g \le u`, :math:`g > u`), :math:`|h|` by
      :math:`\sqrt{h^2 + u^2}`;
    - ``"lse"``: :math:`\max(0, g)` by :math:`u \log(1 + e^{g/u})`, :math:`|h|` by
      :math:`u\log(e^{h/u} + e^{-h/u})`,

    with the unconstrained method ``inner`` from the last point to the gradient tolerance
    :math:`\epsilon_k`; then :math:`\rho \leftarrow \rho/\theta_\rho` if the violation
    exceeds :math:`u` (or, with :math:`u` at its floor and LQH, the KKT test fails),
    :math:`u \leftarrow \max(u_{\min}, \theta_u u)` and
    :math:`\epsilon \leftarrow \max(\epsilon_{\min}, \theta_\epsilon\epsilon)`. The
    derivatives of the smoothed terms times :math:`\rho` (:math:`\rho\,\mathrm{clip}(g/u,
    0, 1)` and :math:`\rho h/\sqrt{h^2+u^2}` for LQH, :math:`\rho\,\sigma(g/u)` and
    :math:`\rho\tanh(h/u)` for LSE) are the multiplier estimates, whose Lagrangian gradient
    is the inner gradient (:doc:`/theory/constrained`). LSE is evaluated in overflow-free
    forms.

    Parameters
    ----------
    problem : jitopt.ConstrainedProblem
        Manifold, cost and constraints.
    x0 : array_like, optional
        Starting point (random with ``rng`` if omitted); it need not be feasible.
    smoothing : {"lqh", "lse"}
        The smoothing. LQH leaves inactive inequalities with weight 0 and was the faster
        of the two in the benchmark.
    inner, inner_maxiter, inner_options
        The inner method and its options, as in :func:`ralm`.
    rho, theta_rho : float
        Initial penalty and its growth factor :math:`1/\theta_\rho`.
    u, u_min, u_steps : float, float, int
        Initial smoothing :math:`u_0`, its floor (default ``ctol``) and the number of
        outer iterations to reach it (:math:`\theta_u = (u_{\min}/u_0)^{1/u_{\text{steps}}}`).
        The violation of an active constraint settles near :math:`\mu^* u/\rho` (LQH),
        and :math:`\rho` grows while the violation exceeds :math:`u`: a floor above
        ``ctol`` would leave the violation above it.
    rho_max : float
        Cap of :math:`\rho`; reaching it with the violation above ``ctol`` ends the run
        with ``Status.INFEASIBLE``.
    eps, eps_min, eps_steps, min_step, gtol, ctol, f_target, maxiter, max_time
        As in :func:`ralm`.
    {common options}

    Returns
    -------
    OptimizeResult
        The fields of :func:`ralm` (the multipliers are the smoothed estimates above) and
        ``u``, the smoothing at the end.

    References
    ----------
    C. Liu and N. Boumal, "Simple algorithms for optimization on Riemannian manifolds
    with constraints", Appl. Math. Optim. 82, 949-981 (2020).

    Examples
    --------
    The point of the unit circle nearest to :math:`(2, 1)` with :math:`x_1 \le 0.5`: the
    constraint is active and the answer is :math:`(0.5, \sqrt{3}/2)`.

    >>> import numpy as np, jitopt
    >>> y = np.array([2.0, 1.0])
    >>> problem = jitopt.ConstrainedProblem(jitopt.manifolds.Sphere(2), lambda x: -y @ x,
    ...                                     lambda x: -y, upper=np.array([0.5, np.inf]))
    >>> res = jitopt.solvers.repm(problem, x0=np.array([0.0, 1.0]), ctol=1e-7)
    >>> res.status.name, np.round(res.x, 6)
    ('CONVERGED', array([0.5     , 0.866025]))
    """
    check_choice("smoothing", smoothing, ("lqh", "lse"))
    gtol, f_target, maxiter, max_time = check_limits(gtol, f_target, maxiter, max_time)
    eps_min = 0.1 * gtol if eps_min is None else eps_min
    x, inner_solver = checked_setup(problem, x0, inner, inner_maxiter, inner_options,
                                             eps, eps_min, eps_steps, min_step, ctol, rng)
    u = check_real("u", u, low=0.0, low_open=True)
    u_min = check_real("u_min", ctol if u_min is None else u_min, 0.0, u, True, False)
    penalty = (LQH if smoothing == "lqh" else LSE)(
        check_real("rho", rho, low=0.0, low_open=True),
        check_real("theta_rho", theta_rho, 0.0, 1.0, True, True), u, u_min,
        check_int("u_steps", u_steps, low=1), check_real("rho_max", rho_max, low=rho))
    outer = Outer(problem, penalty, inner_solver, inner_maxiter, eps, eps_min, eps_steps,
                  min_step, gtol, ctol)
    return run(problem, outer, x, stop=KKTStop(gtol, ctol, f_target, maxiter, max_time),
               callback=callback, history=history, disp=disp)


class SmoothedPenalty:
    """The penalty of :func:`repm`: :math:`\\rho` times the smoothed violations; a
    subclass gives the smoothing (``terms``: the smoothed values and their derivatives)."""

    columns = ("rho", "u")

    def __init__(self, rho, theta_rho, u, u_min, u_steps, rho_max):
        self.rho, self.theta_rho, self.u, self.u_min, self.rho_max = \
            rho, theta_rho, u, u_min, rho_max
        self.theta_u = (u_min / u) ** (1.0 / u_steps)

    def start(self, problem, x, egrad, g, h):
        pass

    def value(self, g, h):
        a, _, b, _ = self.terms(g, h)
        return self.rho * (float(np.sum(a)) + float(np.sum(b)))

    def weights(self, g, h):
        _, da, _, db = self.terms(g, h)
        return self.rho * da, self.rho * db

    def update(self, g, h, violation, unmet):
        before = self.rho, self.u
        # compared with u before its update; at the floor of u (LQH), also while the KKT
        # test fails: the violation mu* u / rho and the complementarity mu*^2 u / rho fall
        if violation > self.u or (self.raise_at_floor and self.u <= self.u_min and unmet):
            self.rho = min(self.rho / self.theta_rho, self.rho_max)
        self.u = max(self.u_min, self.theta_u * self.u)
        return (self.rho, self.u) != before

    def eps_cap(self):
        return math.inf

    def capped(self):
        return self.rho >= self.rho_max

    def advice(self):
        return (f" The smoothing u = {self.u:.3g} bounds the accuracy: a smaller u_min, or "
                f"ralm, may reach the tolerance.")

    def extra(self):
        return {"rho": self.rho, "u": self.u}

    def fields(self):
        return {"rho": self.rho, "u": self.u}


class LQH(SmoothedPenalty):
    """Linear-quadratic Huber for :math:`\\max(0, g)`, pseudo-Huber for :math:`|h|`."""

    raise_at_floor = True

    def terms(self, g, h):
        u = self.u
        gp = np.maximum(g, 0.0)
        a = np.where(gp <= u, gp * gp / (2.0 * u), gp - 0.5 * u)
        root = np.sqrt(h * h + u * u)
        return a, np.clip(g / u, 0.0, 1.0), root, h / root


class LSE(SmoothedPenalty):
    """Log-sum-exp for :math:`\\max(0, g)` and :math:`|h|`, in overflow-free forms."""

    #: a larger rho moves an active constraint to g = u logit(mu*/rho), further inside:
    #: the complementarity mu* |g| grows
    raise_at_floor = False

    def terms(self, g, h):
        u = self.u
        z, habs = g / u, np.abs(h)
        a = u * np.logaddexp(0.0, z)
        b = habs + u * np.log1p(np.exp(-2.0 * habs / u))
        return a, 0.5 * (1.0 + np.tanh(0.5 * z)), b, np.tanh(h / u)
