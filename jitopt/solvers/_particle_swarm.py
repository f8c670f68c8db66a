"""Particle swarm optimization on a manifold (derivative-free)."""

import numpy as np

from .._core.registry import register_method
from .._core.result import Status
from .._core.run import Algorithm, State, run
from .._core.stopping import Criterion
from ..validation import check_int, check_real
from ._derivative_free import Population, checked_limits, inverse_retraction, start_points

__all__ = ["particle_swarm"]


@register_method("particle_swarm", tol_option="tol", derivative_free=True, doc=dict(
    unit="iteration (a move of the whole swarm)",
    rng="Seed of the random particles, their first velocities (random unit tangent "
        "vectors) and the draws :math:`r_1, r_2`; same seed, same result."))
def particle_swarm(problem, x0=None, *, swarm=None, swarm_size=None, inertia=None,
                   nostalgia=1.4, social=1.4, tol=1e-6, f_target=None, max_fev=None,
                   maxiter=None, max_time=np.inf, callback=None, history=False, disp=False,
                   rng=None):
    r"""Particle swarm optimization on a manifold: a cost alone, no gradient.

    Each particle :math:`i` has a position :math:`x_i`, a velocity :math:`v_i` (a tangent
    vector at :math:`x_i`) and the best position it has seen, :math:`y_i`; :math:`g` is the
    best position of the swarm. An iteration moves every particle,

    .. math::

        v_i \leftarrow w_k v_i + r_1 c_1 R_{x_i}^{-1}(y_i) + r_2 c_2 R_{x_i}^{-1}(g),
        \qquad x_i^+ = R_{x_i}(v_i),

    with :math:`r_1, r_2` uniform on :math:`[0, 1)` drawn per particle and iteration,
    transports :math:`v_i` to :math:`x_i^+` and evaluates the cost there, then updates the
    personal and swarm bests (:math:`R^{-1}` is ``log`` where the manifold has it, else the
    projection of the difference). The inertia :math:`w_k` falls linearly from 0.9 to 0.4
    over the first half of the iterations the budget allows (:math:`\min(` ``maxiter``,
    ``max_fev`` / swarm size :math:`)`), then stays at 0.4, so that the swarm settles
    within the budget. This is pymanopt's method with three differences: the cost is
    evaluated at the moved particles (pymanopt evaluates the positions before the move, so
    its bests lag one iteration), the run stops when the swarm has stopped moving, and all
    randomness comes from ``rng``. The stop is a heuristic: a swarm at rest carries no
    optimality certificate, but on multimodal costs it finds the global minimum more often
    than a local method from random starts.

    Parameters
    ----------
    problem : jitopt.Problem
        Manifold and cost; ``egrad`` is never called (``njev == 0``) and may be absent.
    x0 : array_like, optional
        A starting point that joins the swarm as its first particle; the others are random
        points drawn with ``rng``.
    swarm : sequence of array_like, optional
        The whole starting swarm instead: at least two distinct points (not with ``x0`` or
        ``swarm_size``).
    swarm_size : int, optional
        Number of particles, at least 2; default pymanopt's :math:`\min(40, 10d)`
        (:math:`d` the manifold's dimension).
    inertia : float, optional
        A constant inertia :math:`w \in [0, 1)` instead of the linear schedule.
    nostalgia, social : float
        :math:`c_1, c_2 \ge 0`, the pull towards the particle's and the swarm's best
        (pymanopt's 1.4 and 1.4).
    tol : float
        Converged (``Status.CONVERGED``) when the swarm velocity norm
        :math:`(\sum_i \|v_i\|^2)^{1/2}` (``stationarity``) is at most ``tol``. Near a
        smooth minimum costs tell points apart only down to distances of about
        :math:`\sqrt{\epsilon_{\text{mach}}} \approx 10^{-8}`, where the bests stop
        improving and the swarm keeps moving between them: a ``tol`` much below
        :math:`10^{-6}` is not reached.
    f_target : float, optional
        Also stop (successfully, ``Status.TARGET``) when the best cost is at most
        ``f_target``.
    max_fev : int, optional
        Stop (``Status.MAXITER``) once this many costs are evaluated, tested between
        iterations; default :math:`\max(10000, 2d)` (pymanopt's :math:`\max(5000, 2d)` ends
        most runs before the swarm comes to rest).
    maxiter : int, optional
        Maximum number of iterations; default pymanopt's :math:`\max(500, 4d)`.
    max_time : float
        Maximum wall-clock seconds.
    {common options}

    Returns
    -------
    OptimizeResult
        ``x`` the swarm's best point, ``fun`` its cost, ``stationarity`` the swarm velocity
        norm, ``nfev`` the cost evaluations (``njev = 0``).

    References
    ----------
    J. Kennedy and R. Eberhart, "Particle swarm optimization", Proc. ICNN (1995).
    P. B. Borckmans, M. Ishteva and P.-A. Absil, "A modified particle swarm optimization
    algorithm for the best low multilinear rank approximation of higher-order tensors",
    ANTS (2010). pymanopt's ``ParticleSwarm``.

    Examples
    --------
    >>> import numpy as np, jitopt
    >>> A = np.diag([1.0, 2.0, 3.0])
    >>> problem = jitopt.Problem(jitopt.manifolds.Sphere(3), lambda x: x @ A @ x)
    >>> res = jitopt.solvers.particle_swarm(problem, rng=0)
    >>> bool(res.success), round(res.fun, 6), res.njev
    (True, 1.0, 0)
    """
    M = problem.manifold
    tol, rng, limits, maxiter, max_fev = checked_limits(
        "particle_swarm", M, tol, f_target, max_fev, maxiter, max_time, rng, fev_floor=10000,
        iter_floor=500)
    if inertia is not None:
        inertia = check_real("inertia", inertia, 0.0, 1.0, high_open=True)
    c1 = check_real("nostalgia", nostalgia, low=0.0, high=np.inf, high_open=True)
    c2 = check_real("social", social, low=0.0, high=np.inf, high_open=True)
    if swarm is not None:
        if x0 is not None or swarm_size is not None:
            raise ValueError("give swarm, or x0 and/or swarm_size, not both")
        points = start_points(M, swarm, "swarm", 2)
    else:
        size = min(40, 10 * M.dim) if swarm_size is None else \
            check_int("swarm_size", swarm_size, low=2)
        first = M.random_point(rng) if x0 is None else M.validate_point(x0, "x0")
        points = [first] + [M.random_point(rng) for _ in range(size - 1)]
    velocities = [M.random_tangent_vector(x, rng) for x in points]
    span = max(1, min(maxiter, max_fev // len(points)) // 2)
    schedule = (lambda k: inertia) if inertia is not None else \
        (lambda k: 0.4 + 0.5 * max(0.0, 1.0 - k / span))
    return run(problem, Swarm(points, velocities, schedule, c1, c2, rng), points[0],
               stop=AtRest(tol) | limits, callback=callback, history=history, disp=disp)


class AtRest(Criterion):
    """``CONVERGED`` once the swarm velocity norm is at most ``tol``: the swarm has stopped
    moving (a heuristic, without an optimality certificate)."""

    def __init__(self, tol):
        self.tol = tol

    def __call__(self, s, watch):
        if s.stationarity <= self.tol:
            return Status.CONVERGED, (
                f"The swarm came to rest: {s.measure} {s.stationarity:.3e} <= tol = "
                f"{self.tol:.3g} (a heuristic stop, without an optimality certificate).")
        return None


class Swarm(Algorithm):
    """The moves of :func:`particle_swarm`: positions ``state.points``, velocities
    ``state.velocities``, personal bests ``state.bests`` (each stacked, one row a particle,
    moved at once by :class:`Population`) and their costs."""

    measure = "swarm velocity norm"

    def __init__(self, points, velocities, schedule, nostalgia, social, rng):
        self.points, self.velocities = np.stack(points), np.stack(velocities)
        self.schedule, self.c1, self.c2, self.rng = schedule, nostalgia, social, rng

    def start(self, problem, x):
        self.problem = problem
        self.swarm = Population(problem.manifold, len(self.points))
        costs = np.array([problem.cost(p) for p in self.points])
        s = State(x, 0.0, 0.0, self.measure, points=self.points.copy(),
                  velocities=self.velocities.copy(), bests=self.points.copy(),
                  best_costs=costs)
        self.update(s)
        return s

    def update(self, s):
        i = int(np.argmin(s.best_costs))
        s.x, s.fun = s.bests[i].copy(), float(s.best_costs[i])  # the bests change in place
        s.stationarity = self.swarm.norm(s.points, s.velocities)

    def step(self, s, budget):
        swarm, cost, x = self.swarm, self.problem.cost, s.points
        w = self.schedule(s.nit)
        r = self.rng.random((len(x), 2))
        best = np.repeat(s.x[None], len(x), axis=0)
        v = (w * s.velocities
             + (r[:, 0] * self.c1).reshape(swarm.scalars) * swarm.each(inverse_retraction, x,
                                                                       s.bests)
             + (r[:, 1] * self.c2).reshape(swarm.scalars) * swarm.each(inverse_retraction, x,
                                                                       best))
        moved = swarm.each(lambda M, a, b: M.retraction(a, b), x, v)
        s.velocities = swarm.each(lambda M, a, b, c: M.transport(a, b, c), x, moved, v)
        s.points = moved
        f = np.array([cost(p) for p in moved])
        better = f < s.best_costs
        s.bests[better], s.best_costs[better] = moved[better], f[better]
        self.update(s)
        s.nit += 1
        return None
