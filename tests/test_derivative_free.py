"""nelder_mead and particle_swarm: known optima on spheres and Stiefel from the cost alone,
a multimodal cost against a dense grid, starting simplices and swarms, seeds, budgets and
bad input."""

import numpy as np
import pytest

import jitopt
from jitopt import Status
from jitopt.manifolds import Hyperboloid, Multinomial, Sphere, Stiefel
from jitopt.solvers import nelder_mead, particle_swarm

A = np.diag([1.0, 2.0, 4.0, 7.0])
RNG = np.random.default_rng(1)
B = RNG.standard_normal((4, 4))
B = B + B.T
SOLVERS = [nelder_mead, particle_swarm]


class Calls:
    """A cost that counts its calls."""

    def __init__(self, f):
        self.f, self.n = f, 0

    def __call__(self, x):
        self.n += 1
        return self.f(x)


@pytest.mark.parametrize("method", ["nelder_mead", "particle_swarm"])
def test_minimize_without_jac_reaches_the_smallest_eigenvalue(method):
    cost = Calls(lambda x: x @ A @ x)
    res = jitopt.minimize(cost, np.full(4, 0.5), manifold=Sphere(4), method=method,
                          options={"rng": 0})
    assert res.success and res.status == Status.CONVERGED, res.message
    assert abs(res.fun - 1.0) <= 1e-10
    assert abs(abs(res.x[0]) - 1.0) <= 1e-5  # the eigenvector e_1 (|x_1| = 1)
    assert res.njev == 0 and res.nfev == cost.n


@pytest.mark.parametrize("solver", SOLVERS)
def test_stiefel_reaches_the_two_smallest_eigenvalues(solver):
    problem = jitopt.Problem(Stiefel(4, 2), lambda X: np.trace(X.T @ B @ X))
    res = solver(problem, rng=2)
    assert res.success, res.message
    assert abs(res.fun - np.linalg.eigvalsh(B)[:2].sum()) <= 1e-9
    Stiefel(4, 2).check_point(res.x, atol=1e-10)


def bumps(x):
    """Three wells of depths 1, 1.3 and 0.8 on the unit sphere of R^3."""
    centres = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, -0.6, 0.8]])
    depths = np.array([1.0, 1.3, 0.8])
    return float(-depths @ np.exp(-4.0 * np.sum((x - centres) ** 2, axis=1)))


def test_particle_swarm_finds_the_global_minimum_of_three_wells():
    t, p = np.meshgrid(np.linspace(0, np.pi, 361), np.linspace(0, 2 * np.pi, 721))
    grid = np.stack([np.sin(t) * np.cos(p), np.sin(t) * np.sin(p), np.cos(t)], -1).reshape(-1, 3)
    values = np.array([bumps(g) for g in grid])
    best = grid[np.argmin(values)]
    # from a start in the shallowest well, where a descent method stays; 40 particles
    # (the default 20 find the deepest well for about half the seeds)
    start = np.array([0.0, -0.6, 0.8])
    for seed in range(3):
        res = particle_swarm(jitopt.Problem(Sphere(3), bumps), start, swarm_size=40,
                             rng=seed)
        assert res.success, res.message
        assert res.fun <= values.min() + 1e-12  # the grid's value bounds the minimum above
        assert np.linalg.norm(res.x - best) <= 0.01  # and its point is the grid's
    local = nelder_mead(jitopt.Problem(Sphere(3), bumps), start, rng=0)
    assert local.fun > values.min() + 0.1  # the simplex method stays in its well


@pytest.mark.parametrize("solver", SOLVERS)
def test_same_seed_same_run_other_seed_other_run(solver):
    problem = jitopt.Problem(Sphere(4), lambda x: x @ A @ x)
    r1, r2, r3 = (solver(problem, rng=seed, maxiter=20) for seed in (4, 4, 5))
    np.testing.assert_array_equal(r1.x, r2.x)
    assert r1.nfev == r2.nfev and not np.array_equal(r1.x, r3.x)


def test_a_given_simplex_is_used_and_checked():
    M = Sphere(3)
    problem = jitopt.Problem(M, lambda x: x[:3] @ A[:3, :3] @ x[:3])
    simplex = [np.array([0.0, 0.6, 0.8]), np.array([0.0, 0.8, 0.6]),
               np.array([0.6, 0.0, 0.8])]
    res = nelder_mead(problem, simplex=simplex)
    assert res.success and abs(res.fun - 1.0) <= 1e-10
    first = nelder_mead(problem, simplex=simplex, maxiter=0)
    assert first.fun == min(problem.cost(v) for v in simplex)  # its best vertex
    with pytest.raises(ValueError, match=r"simplex must hold 3 points .*got 2"):
        nelder_mead(problem, simplex=simplex[:2])
    with pytest.raises(ValueError, match=r"simplex\[2\] equals simplex\[0\]"):
        nelder_mead(problem, simplex=simplex[:2] + simplex[:1])
    with pytest.raises(ValueError, match=r"simplex\[1\]"):
        nelder_mead(problem, simplex=[simplex[0], 2 * simplex[1], simplex[2]])
    with pytest.raises(ValueError, match="x0 or simplex"):
        nelder_mead(problem, simplex[0], simplex=simplex)
    with pytest.raises(TypeError, match="simplex must be a list"):
        nelder_mead(problem, simplex=3.0)


def test_a_given_swarm_is_used_and_checked():
    M = Sphere(4)
    problem = jitopt.Problem(M, lambda x: x @ A @ x)
    swarm = [M.random_point(i) for i in range(12)]
    keep = [s.copy() for s in swarm]
    res = particle_swarm(problem, swarm=swarm, rng=0)
    assert res.success and abs(res.fun - 1.0) <= 1e-10
    assert all(np.array_equal(a, b) for a, b in zip(swarm, keep))  # inputs untouched
    first = particle_swarm(problem, swarm=swarm, maxiter=0)
    assert first.fun == min(problem.cost(s) for s in swarm) and first.nfev == 12
    with pytest.raises(ValueError, match="swarm must hold at least 2 points"):
        particle_swarm(problem, swarm=swarm[:1])
    with pytest.raises(ValueError, match="not both"):
        particle_swarm(problem, swarm=swarm, swarm_size=6)


@pytest.mark.parametrize("manifold", [Sphere(4), Stiefel(4, 2), jitopt.manifolds.Grassmann(4, 2)],
                         ids=["sphere", "stiefel", "grassmann"])
def test_the_swarm_moves_at_once_as_particle_by_particle(manifold):
    # the swarm moved through the manifold of copies (batched kernels) against the same
    # swarm moved one particle at a time, from the same seed: the same particles
    cost = lambda X: float(np.sum(X * (A @ X))) if X.ndim == 2 else float(X @ A @ X)  # noqa
    looped = type(manifold).__new__(type(manifold))
    looped.__dict__.update(manifold.__dict__)
    looped.copies = lambda k: None
    assert manifold.copies(12) is not None
    runs = [particle_swarm(jitopt.Problem(M, cost), rng=4, swarm_size=12, maxiter=6,
                           history=True) for M in (manifold, looped)]
    np.testing.assert_allclose(runs[0].x, runs[1].x, atol=1e-12)
    np.testing.assert_allclose(runs[0].history["stationarity"],
                               runs[1].history["stationarity"], rtol=1e-10)
    assert runs[0].fun == pytest.approx(runs[1].fun, abs=1e-13)


def test_the_evaluation_budget_stops_the_run():
    problem = jitopt.Problem(Sphere(4), lambda x: x @ A @ x)
    res = nelder_mead(problem, rng=0, max_fev=40)
    assert res.status == Status.MAXITER and "max_fev = 40" in res.message
    assert 40 <= res.nfev <= 40 + 4  # a started iteration finishes (a shrink costs dim)
    res = particle_swarm(problem, rng=0, max_fev=100, swarm_size=10)
    assert res.status == Status.MAXITER and res.nfev == 100


@pytest.mark.parametrize("options, match", [
    ({"reflection": 0.0}, "reflection"), ({"expansion": 1.0}, "expansion"),
    ({"contraction": 1.0}, "contraction"), ({"shrink": 0.0}, "shrink"),
    ({"step": -1.0}, "step"), ({"ftol": -1.0}, "ftol"), ({"max_fev": 0}, "max_fev"),
    ({"maxiter": -1}, "maxiter")])
def test_nelder_mead_bad_options(options, match):
    with pytest.raises(ValueError, match=match):
        nelder_mead(jitopt.Problem(Sphere(3), lambda x: x[0]), **options)


@pytest.mark.parametrize("options, match", [
    ({"inertia": 1.0}, "inertia"), ({"nostalgia": -1.0}, "nostalgia"),
    ({"social": np.inf}, "social"), ({"swarm_size": 1}, "swarm_size"),
    ({"tol": -1.0}, "tol"), ({"max_fev": 0}, "max_fev")])
def test_particle_swarm_bad_options(options, match):
    with pytest.raises(ValueError, match=match):
        particle_swarm(jitopt.Problem(Sphere(3), lambda x: x[0]), **options)


def test_gradient_methods_refuse_a_cost_alone_naming_egrad():
    problem = jitopt.Problem(Sphere(3), lambda x: x[0])
    with pytest.raises(TypeError, match="'rlbfgs' needs the gradient: egrad is required"):
        jitopt.minimize(problem, method="rlbfgs")
    assert jitopt.available_methods(problem) == ("nelder_mead", "particle_swarm")
    res = jitopt.minimize(problem, np.array([0.0, 1.0, 0.0]), options={"rng": 0})
    assert abs(res.fun + 1.0) <= 1e-10 and res.njev == 0  # nelder_mead by default


def test_a_nan_cost_ends_the_run_with_the_best_point():
    calls = Calls(lambda x: np.nan if calls.n > 30 else x @ A @ x)
    for solver in SOLVERS:
        calls.n = 0
        res = solver(jitopt.Problem(Sphere(4), calls), np.full(4, 0.5), rng=0)
        assert res.status == Status.NONFINITE and not res.success
        assert np.isfinite(res.fun) and res.fun <= 0.25 * A.trace()


@pytest.mark.parametrize("manifold", [Multinomial(3), Hyperboloid(2), Stiefel(3, 2)], ids=str)
def test_nelder_mead_finds_a_target_point_on_other_manifolds(manifold):
    """The squared distance (Frobenius on Stiefel) to a point is least at that point: the
    Karcher centroid (exp and log) and the fallbacks (closest point, projection)."""
    target = manifold.random_point(7)
    problem = jitopt.Problem(manifold, lambda x: float(np.sum((x - target) ** 2)))
    res = nelder_mead(problem, rng=1)
    assert res.success, res.message
    assert np.linalg.norm(res.x - target) <= 1e-6


@pytest.mark.parametrize("solver", SOLVERS)
def test_a_bad_start_is_refused_before_the_run(solver):
    problem = jitopt.Problem(Sphere(4), lambda x: x @ A @ x)
    with pytest.raises(ValueError, match="x0 is not a point of Sphere"):
        solver(problem, np.ones(4))
    with pytest.raises(ValueError, match="x0 must have shape"):
        solver(problem, np.ones(3) / np.sqrt(3))
    with pytest.raises(TypeError, match="rng"):
        solver(problem, rng="seed")


def test_scipy_minimize_reaches_nelder_mead_without_a_gradient():
    from scipy.optimize import minimize

    cost = Calls(lambda x: x @ A @ x)
    res = minimize(cost, np.full(4, 0.5), method=jitopt.get_method("nelder_mead"),
                   options={"manifold": Sphere(4), "rng": 0})
    assert res.success and abs(res.fun - 1.0) <= 1e-10
    assert res.njev == 0 and res.nfev == cost.n
