"""The Riemannian augmented Lagrangian method (RALM) of Liu and Boumal."""

import numpy as np

from .._core.registry import register_method
from .._core.run import run
from ..problems import ConstrainedProblem
from ..validation import check_limits, check_real
from ._constrained import KKTStop, Outer, checked_setup

__all__ = ["ralm"]


@register_method("ralm", ConstrainedProblem, tol_option="gtol", doc=dict(
    unit="outer iteration",
    history=", and ``lagrangian_gradient_norm``, ``max_violation``, ``complementarity`` (the "
            "parts of the KKT residual), ``eps`` (the inner tolerance of the solve), "
            "``inner_nit`` (inner iterations so far) and ``rho`` (the penalty of the solve)"))
def ralm(problem, x0=None, *, inner="rlbfgs", inner_maxiter=200, inner_options=None,
         rho=None, theta_rho=0.3, tau=0.8, bound=20.0, rho_max=1e10, eps=1e-3, eps_min=None,
         eps_steps=30, min_step=1e-10, gtol=1e-6, ctol=1e-6, f_target=None, maxiter=300,
         max_time=np.inf, callback=None, history=False, disp=False, rng=None):
    r"""Riemannian augmented Lagrangian method for :math:`\min f(x)` over a manifold
    subject to :math:`g(x) \le 0`, :math:`h(x) = 0`.

    Each outer iteration minimizes the augmented Lagrangian

    .. math::

        L_\rho(x; \mu, \lambda) = f(x) + \frac{\rho}{2}\Big[\sum_j \big(h_j(x) +
        \tfrac{\lambda_j}{\rho}\big)^2 + \sum_i \max\big(0, \tfrac{\mu_i}{\rho} +
        g_i(x)\big)^2\Big]

    with the unconstrained method ``inner`` from the last point to the gradient tolerance
    :math:`\epsilon_k`, then, with :math:`g, h` at the new point and :math:`\sigma =
    \max(\max_i |\max(g_i, -\mu_i/\rho)|, \max_j |h_j|)` (old :math:`\mu, \rho`),

    .. math::

        \mu \leftarrow \operatorname{clip}(\mu + \rho g, 0, b), \quad
        \lambda \leftarrow \operatorname{clip}(\lambda + \rho h, -b, b), \quad
        \rho \leftarrow \rho/\theta_\rho \text{ if } k = 1 \text{ or } \sigma >
        \tau\sigma_{\text{old}},

    and :math:`\epsilon_{k+1} = \max(\epsilon_{\min}, \min(\theta_\epsilon \epsilon_k,
    \sigma))`. The multipliers start at zero. The gradient of :math:`L_\rho` is that of the
    Lagrangian at the multipliers :math:`\max(0, \mu + \rho g)` and :math:`\lambda +
    \rho h`: these are the reported multipliers, and the inner gradient norm is the
    stationarity part of the KKT residual (:doc:`/theory/constrained`).

    Parameters
    ----------
    problem : jitopt.ConstrainedProblem
        Manifold, cost and constraints; each inner trial point evaluates the cost and its
        gradient, the constraints and one weighted sum of their gradients.
    x0 : array_like, optional
        Starting point, a point of the manifold (random with ``rng`` if omitted); it need
        not be feasible.
    inner : str
        The unconstrained method of the subproblems (``"rlbfgs"``, ``"rcg"``, ``"rtr"``,
        ``"rgd"``), warm-started at the last point; ``rlbfgs`` keeps its memory from one
        solve to the next while :math:`\rho` is unchanged, the others start afresh.
    inner_maxiter : int
        Iterations of each inner solve at most.
    inner_options : dict, optional
        Further options of the inner method (not ``gtol``, ``maxiter``, ``max_time`` nor
        the observers, which the outer loop sets).
    rho : float, optional
        Initial penalty :math:`\rho_0`; by default the one whose penalty gradient at the
        start is three times the cost's, :math:`\rho_0 = 3\|\operatorname{grad}
        f(x_0)\|/\|\operatorname{grad} P(x_0)\|` with :math:`P = \tfrac12(\|g^+\|^2 +
        \|h\|^2)`, clipped to :math:`[10^{-8}, 10^8]` (1 when :math:`x_0` is feasible).
    theta_rho, tau : float
        The penalty grows to :math:`\rho/\theta_\rho` when the violation measure
        :math:`\sigma` fell by less than the factor :math:`\tau`.
    bound : float
        Bound :math:`b` of the multiplier estimates (true multipliers above it make the
        convergence rely on :math:`\rho \to \infty`).
    rho_max : float
        Cap of :math:`\rho`; reaching it with the violation above ``ctol`` ends the run
        with ``Status.INFEASIBLE``.
    eps, eps_min, eps_steps : float, float, int
        Inner tolerance :math:`\epsilon_0`, its floor (default ``0.1 * gtol``: at ``gtol``
        the KKT test is just missed) and the number of outer iterations to reach it
        geometrically (sooner when :math:`\sigma` is smaller).
    min_step : float
        The run stalls when an outer step moves ``x`` by less (Frobenius norm) with the
        inner tolerance at its floor: ``Status.INFEASIBLE`` if the violation is above
        ``ctol``, else ``Status.SMALL_STEP``.
    gtol, ctol : float
        ``Status.CONVERGED`` when the KKT residual is at most ``gtol`` and the constraint
        violation at most ``ctol``.
    f_target : float, optional
        Also stop (``Status.TARGET``) at a cost at most this with the violation within
        ``ctol``.
    maxiter : int
        Outer iterations at most.
    max_time : float
        Maximum wall-clock seconds (the inner solves included).
    {common options}

    Returns
    -------
    OptimizeResult
        ``x, fun`` (the cost :math:`f`, never :math:`L_\rho`), ``success, status,
        message, nit`` (outer iterations), ``nfev, njev, nifo`` (cost and gradient calls,
        the inner solves included), ``ncev, ncjev`` (constraint value and gradient
        calls), ``stationarity`` (the KKT residual: the largest of
        ``lagrangian_gradient_norm``, ``max_violation`` and ``complementarity``),
        ``ineq_multipliers`` :math:`\max(0, \mu + \rho g)`, ``eq_multipliers``
        :math:`\lambda + \rho h`, ``rho``, ``inner_nit`` (inner iterations in all),
        ``time`` and ``history`` if asked for.

    References
    ----------
    C. Liu and N. Boumal, "Simple algorithms for optimization on Riemannian manifolds
    with constraints", Appl. Math. Optim. 82, 949-981 (2020).

    Examples
    --------
    Nonnegative PCA of a positive matrix: the answer is its Perron vector.

    >>> import numpy as np, jitopt
    >>> A = np.array([[2.0, 1.0, 1.0], [1.0, 3.0, 1.0], [1.0, 1.0, 4.0]])
    >>> problem = jitopt.ConstrainedProblem(jitopt.manifolds.Sphere(3), lambda x: -x @ A @ x,
    ...                                     lambda x: -2 * A @ x, lower=0.0)
    >>> res = jitopt.solvers.ralm(problem, x0=np.array([0.6, -0.8, 0.0]))
    >>> res.status.name, bool(round(res.fun, 8) == round(-np.linalg.eigvalsh(A)[-1], 8))
    ('CONVERGED', True)
    >>> bool(res.max_violation <= 1e-6), bool(res.stationarity <= 1e-6)
    (True, True)
    """
    gtol, f_target, maxiter, max_time = check_limits(gtol, f_target, maxiter, max_time)
    eps_min = 0.1 * gtol if eps_min is None else eps_min
    x, inner_solver = checked_setup(problem, x0, inner, inner_maxiter, inner_options, eps,
                                    eps_min, eps_steps, min_step, ctol, rng)
    if rho is not None:
        rho = check_real("rho", rho, low=0.0, low_open=True)
    penalty = AugmentedLagrangian(rho, check_real("theta_rho", theta_rho, 0.0, 1.0, True, True),
                                  check_real("tau", tau, 0.0, 1.0, True, False),
                                  check_real("bound", bound, low=0.0, low_open=True),
                                  check_real("rho_max", rho_max, low=rho or 0.0,
                                             low_open=rho is None))
    outer = Outer(problem, penalty, inner_solver, inner_maxiter, eps, eps_min, eps_steps,
                  min_step, gtol, ctol)
    return run(problem, outer, x, stop=KKTStop(gtol, ctol, f_target, maxiter, max_time),
               callback=callback, history=history, disp=disp)


class AugmentedLagrangian:
    """The penalty of :func:`ralm`: the augmented Lagrangian with multiplier estimates
    :math:`\\mu, \\lambda` (from zero) and the penalty :math:`\\rho`."""

    columns = ("rho",)

    def __init__(self, rho, theta_rho, tau, bound, rho_max):
        self.rho0, self.theta_rho, self.tau, self.bound = rho, theta_rho, tau, bound
        self.rho_max = rho_max
        self.rho = np.nan if rho is None else rho  # set at the start (a fault may come first)

    def start(self, problem, x, egrad, g, h):
        self.mu, self.lam = np.zeros(g.size), np.zeros(h.size)
        self.old, self.k = np.inf, 0
        self.rho = self.rho0
        if self.rho is None:  # the penalty's pull three times the cost's at x0
            M = problem.manifold
            pull = M.norm(x, M.euclidean_to_riemannian_gradient(
                x, problem.constraint_vjp(x, np.maximum(g, 0.0), h)))
            cost = M.norm(x, M.euclidean_to_riemannian_gradient(x, egrad))
            self.rho = min(max(3.0 * cost / pull, 1e-8), 1e8, self.rho_max) if pull > 0 \
                else min(1.0, self.rho_max)

    def value(self, g, h):
        rho = self.rho
        a, b = h + self.lam / rho, np.maximum(0.0, self.mu / rho + g)
        return 0.5 * rho * float(a @ a + b @ b)

    def weights(self, g, h):
        return np.maximum(0.0, self.mu + self.rho * g), self.lam + self.rho * h

    def update(self, g, h, violation, unmet):
        rho = self.rho
        sigma = max(np.max(np.abs(np.maximum(g, -self.mu / rho)), initial=0.0),
                    np.max(np.abs(h), initial=0.0))
        self.mu = np.clip(self.mu + rho * g, 0.0, self.bound)
        self.lam = np.clip(self.lam + rho * h, -self.bound, self.bound)
        self.k += 1
        if self.k == 1 or sigma > self.tau * self.old:  # not enough progress
            self.rho = min(rho / self.theta_rho, self.rho_max)
        self.old = sigma
        return self.rho != rho

    def eps_cap(self):
        # no tighter than the violation measure: the KKT residual is the larger of the two
        return self.old

    def capped(self):
        return self.rho >= self.rho_max

    def advice(self):
        if np.any(self.mu >= self.bound) or np.any(np.abs(self.lam) >= self.bound):
            return (f" The multiplier estimates reached bound = {self.bound:g}: the true "
                    f"multipliers may be larger (raise bound).")
        return ""

    def extra(self):
        return {"rho": self.rho}

    def fields(self):
        return {"rho": self.rho}
