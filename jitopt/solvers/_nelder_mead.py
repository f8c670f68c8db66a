"""The Nelder–Mead simplex method on a manifold (derivative-free)."""

import numpy as np

from .._core.registry import register_method
from .._core.result import Status
from .._core.run import Algorithm, State, run
from .._core.stopping import Criterion
from ..validation import check_real
from ._derivative_free import (centroid, checked_limits, distance, inverse_retraction,
                               start_points)

__all__ = ["nelder_mead"]


@register_method("nelder_mead", tol_option="tol", derivative_free=True, doc=dict(
    history=", and ``spread`` (the cost spread of the simplex)",
    rng="Seed of the random start and of the tangent basis of the starting simplex; same "
        "seed, same result."))
def nelder_mead(problem, x0=None, *, simplex=None, step=None, reflection=1.0, expansion=2.0,
                contraction=0.5, shrink=0.5, tol=1e-8, ftol=1e-8, f_target=None,
                max_fev=None, maxiter=None, max_time=np.inf, callback=None, history=False,
                disp=False, rng=None):
    r"""Nelder–Mead simplex method on a manifold: a cost alone, no gradient.

    The simplex holds :math:`d + 1` points (:math:`d` the manifold's dimension), sorted by
    cost, :math:`x_0` the best and :math:`x_d` the worst. Each iteration takes the centroid
    :math:`c` of the best :math:`d` points and :math:`v = R_c^{-1}(x_d)`, and tries the
    reflection :math:`R_c(-\alpha v)`; if it beats the best point, the expansion
    :math:`R_c(-\gamma v)` (the better of the two replaces :math:`x_d`); if it beats only
    the second worst, it replaces :math:`x_d`; otherwise the outside contraction
    :math:`R_c(-\rho v)` (kept if no worse than the reflection, when the reflection beat
    :math:`x_d`) or the inside contraction :math:`R_c(\rho v)` (kept if better than
    :math:`x_d`); failing both, every point shrinks towards the best,
    :math:`x_i \leftarrow R_{x_0}(\sigma R_{x_0}^{-1}(x_i))`. The centroid is the Karcher
    mean (a few steps from :math:`x_0`) where the manifold has ``exp`` and ``log``, else the
    manifold's closest point to the ambient mean; :math:`R^{-1}` is ``log`` where the
    manifold has it, else the projection of the difference. This is pymanopt's and
    Manopt.jl's method; unlike pymanopt's it stops on a convergence test, takes a starting
    simplex, and draws its start from ``rng`` only.

    Meant for small dimensions (:math:`d \lesssim 10`) and costs without a gradient (a
    simulation, a black box); it has no optimality certificate.

    Parameters
    ----------
    problem : jitopt.Problem
        Manifold and cost; ``egrad`` is never called (``njev == 0``) and may be absent.
    x0 : array_like, optional
        Starting point (a random point drawn with ``rng`` if neither it nor ``simplex`` is
        given); the simplex is ``x0`` and :math:`R_{x_0}(h e_i)` for a basis :math:`e_i` of
        the tangent space, orthonormal in the manifold's metric, drawn with ``rng``.
    simplex : sequence of array_like, optional
        The starting simplex instead: :math:`d + 1` distinct points of the manifold (not
        with ``x0``).
    step : float, optional
        The edge :math:`h` of the simplex built from ``x0``; default ``0.1 *
        manifold.typical_dist``.
    reflection, expansion, contraction, shrink : float
        :math:`\alpha > 0`, :math:`\gamma > \alpha`, :math:`\rho \in (0, 1)` and
        :math:`\sigma \in (0, 1)` (pymanopt's defaults 1, 2, 1/2, 1/2).
    tol : float
        Converged (``Status.CONVERGED``) when the largest distance from the best point to
        another point (``stationarity``; the manifold's ``dist``, else the ambient distance)
        is at most ``tol`` ...
    ftol : float
        ... and the cost spread :math:`f(x_d) - f(x_0)` is at most ``ftol``.
    f_target : float, optional
        Also stop (successfully, ``Status.TARGET``) when the best cost is at most
        ``f_target``.
    max_fev : int, optional
        Stop (``Status.MAXITER``) once this many costs are evaluated; default pymanopt's
        :math:`\max(1000, 2d)`. Tested between iterations (a shrink costs :math:`d`).
    maxiter : int, optional
        Maximum number of iterations; default pymanopt's :math:`\max(2000, 4d)`.
    max_time : float
        Maximum wall-clock seconds.
    {common options}

    Returns
    -------
    OptimizeResult
        ``x`` the best point, ``fun`` its cost, ``stationarity`` the simplex size above,
        ``nfev`` the cost evaluations (``njev = 0``).

    References
    ----------
    J. A. Nelder and R. Mead, "A simplex method for function minimization", Comput. J. 7
    (1965). D. W. Dreisigmeyer, "Direct search algorithms over Riemannian manifolds",
    optimization-online (2007). pymanopt's ``NelderMead`` and Manopt.jl's ``NelderMead``.

    Examples
    --------
    The smallest eigenvalue of a symmetric matrix, from the cost alone:

    >>> import numpy as np, jitopt
    >>> A = np.diag([1.0, 2.0, 3.0])
    >>> res = jitopt.minimize(lambda x: x @ A @ x, np.ones(3) / np.sqrt(3),
    ...                       manifold=jitopt.manifolds.Sphere(3), method="nelder_mead",
    ...                       options={"rng": 0})
    >>> bool(res.success), round(res.fun, 6), res.njev
    (True, 1.0, 0)
    """
    M = problem.manifold
    tol, rng, limits, _, _ = checked_limits("nelder_mead", M, tol, f_target, max_fev, maxiter,
                                            max_time, rng, fev_floor=1000, iter_floor=2000)
    alpha = check_real("reflection", reflection, low=0.0, low_open=True)
    gamma = check_real("expansion", expansion, low=alpha, low_open=True)
    rho = check_real("contraction", contraction, 0.0, 1.0, True, True)
    sigma = check_real("shrink", shrink, 0.0, 1.0, True, True)
    ftol = check_real("ftol", ftol, low=0.0)
    if simplex is not None:
        if x0 is not None:
            raise ValueError("give x0 or simplex, not both")
        if step is not None:
            raise ValueError("step has no effect with a given simplex: give one or the other")
        vertices = start_points(M, simplex, "simplex", M.dim + 1, M.dim + 1)
    else:
        h = 0.1 * M.typical_dist if step is None else \
            check_real("step", step, low=0.0, low_open=True, high=np.inf, high_open=True)
        x = M.random_point(rng) if x0 is None else M.validate_point(x0, "x0")
        vertices = [x] + [M.retraction(x, h * e) for e in tangent_basis(M, x, rng)]
    return run(problem, NelderMead(vertices, alpha, gamma, rho, sigma), vertices[0],
               stop=Concentrated(tol, ftol) | limits, callback=callback, history=history,
               disp=disp)


def tangent_basis(M, x, rng):
    """A basis of the tangent space at ``x``, orthonormal in the manifold's metric:
    Gram–Schmidt (twice, for accuracy) on projected Gaussian draws."""
    basis = []
    for _ in range(10 * M.dim):
        u = M.projection(x, rng.standard_normal(M.shape))
        u = u / M.norm(x, u)
        for _ in range(2):
            for e in basis:
                u = u - M.inner_product(x, e, u) * e
        size = M.norm(x, u)
        if size > 1e-6:
            basis.append(u / size)
            if len(basis) == M.dim:
                return basis
    raise ValueError(f"no tangent basis at x0 found on {M!r}: is x0 a regular point?")


class Concentrated(Criterion):
    """``CONVERGED`` once the simplex size is at most ``tol`` and its cost spread at most
    ``ftol``."""

    def __init__(self, tol, ftol):
        self.tol, self.ftol = tol, ftol

    def __call__(self, s, watch):
        if s.stationarity <= self.tol and s.extra["spread"] <= self.ftol:
            return Status.CONVERGED, (
                f"Optimization terminated successfully: {s.measure} {s.stationarity:.3e} <= "
                f"tol = {self.tol:.3g} and cost spread {s.extra['spread']:.3e} <= ftol = "
                f"{self.ftol:.3g}.")
        return None


class NelderMead(Algorithm):
    """The simplex moves of :func:`nelder_mead` on the sorted vertices ``state.vertices``
    and their costs ``state.costs``."""

    measure = "simplex size (largest distance to the best vertex)"
    columns = ("spread",)

    def __init__(self, vertices, reflection, expansion, contraction, shrink):
        self.vertices = vertices
        self.alpha, self.gamma, self.rho, self.sigma = reflection, expansion, contraction, shrink

    def start(self, problem, x):
        self.problem, self.M = problem, problem.manifold
        costs = np.array([problem.cost(v) for v in self.vertices])
        s = State(x, 0.0, 0.0, self.measure, vertices=list(self.vertices), costs=costs)
        self.sort(s)
        return s

    def sort(self, s):
        order = np.argsort(s.costs, kind="stable")
        s.vertices = [s.vertices[i] for i in order]
        s.costs = s.costs[order]
        s.x, s.fun = s.vertices[0], float(s.costs[0])
        s.stationarity = max(distance(self.M, s.x, v) for v in s.vertices[1:])
        s.extra = {"spread": float(s.costs[-1] - s.costs[0])}

    def step(self, s, budget):
        M, cost, V, f = self.M, self.problem.cost, s.vertices, s.costs
        c = centroid(M, V[:-1], V[0])
        v = inverse_retraction(M, c, V[-1])
        xr = M.retraction(c, -self.alpha * v)
        fr = cost(xr)
        new = (xr, fr)
        if fr < f[0]:
            xe = M.retraction(c, -self.gamma * v)
            fe = cost(xe)
            if fe < fr:
                new = (xe, fe)
        elif fr >= f[-2]:
            outside = fr < f[-1]
            xc = M.retraction(c, (-self.rho if outside else self.rho) * v)
            fc = cost(xc)
            new = (xc, fc) if (fc <= fr if outside else fc < f[-1]) else None
        if new is None:
            for i in range(1, len(V)):
                V[i] = M.retraction(V[0], self.sigma * inverse_retraction(M, V[0], V[i]))
                f[i] = cost(V[i])
        else:
            V[-1], f[-1] = new
        self.sort(s)
        s.nit += 1
        return None
