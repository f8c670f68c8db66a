"""The reference solver rgd and the built-in problems with known optima."""

import numpy as np
import pytest

import jitopt
from jitopt import problems
from jitopt.manifolds import Orthogonal


def rel_gap(res, problem):
    return abs(res.fun - problem.fopt) / abs(problem.fopt)


@pytest.mark.parametrize("manifold", ["stiefel", "grassmann"])
@pytest.mark.parametrize("step", ["bb", "armijo"])
def test_rgd_reaches_pca_optimum(manifold, step):
    problem = problems.pca(problems.spectrum_matrix(100, rng=0), 5, manifold=manifold)
    # the monotone Armijo test meets the rounding of the cost (|f| = 456) near a gradient
    # norm of 1e-5 and then wanders there (see rgd's docstring): its tolerance stays above
    gtol = 1e-7 if step == "bb" else 1e-4
    res = jitopt.solvers.rgd(problem, rng=1, gtol=gtol, step=step, maxiter=5000)
    assert res.success, res.message
    assert rel_gap(res, problem) <= 1e-8
    # the subspace is the top eigenspace: principal angles to the known minimizer vanish
    s = np.linalg.svd(problem.xopt.T @ res.x, compute_uv=False)
    assert np.all(s > 1 - 1e-6)
    problem.manifold.check_point(res.x, atol=1e-12)


def test_rgd_fixed_step():
    """step=alpha: x <- R_x(-alpha grad f(x)) with no line search, as written out; with
    alpha below 1/L it reaches the top eigenspace."""
    A = problems.spectrum_matrix(40, rng=3)  # eigenvalues 1..100: L = 2 * 100 for -tr(XᵀAX)
    problem = problems.pca(A, 4)
    M = problem.manifold
    x = M.random_point(4)
    res = jitopt.solvers.rgd(problem, x, step=0.004, maxiter=7, gtol=0.0)
    for _ in range(7):
        x = M.retraction(x, -0.004 * problem.rgrad(x))
    np.testing.assert_allclose(res.x, x, rtol=0, atol=1e-13)
    assert res.nit == 7 and res.nfev == 8
    res = jitopt.solvers.rgd(problem, rng=5, step=0.004, gtol=1e-8, maxiter=20000)
    assert res.success, res.message
    assert rel_gap(res, problem) <= 1e-10
    # far too long a step: no line search stops it, the cost goes up
    up = jitopt.solvers.rgd(problem, rng=5, step=10.0, maxiter=3, gtol=0.0, history=True)
    assert np.max(np.diff(up.history["fun"])) > 0


@pytest.mark.parametrize("special", [False, True])
def test_rgd_reaches_procrustes_closed_form(special):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((12, 6))
    b = a @ Orthogonal(6).random_point(3) + 0.3 * rng.standard_normal((12, 6))
    problem = problems.procrustes(a, b, special=special)
    # start in the component of the known optimum (retractions keep det X)
    x0 = Orthogonal(6).random_point(4)
    if np.linalg.det(x0) * np.linalg.det(problem.xopt) < 0:
        x0[:, 0] *= -1
    res = jitopt.solvers.rgd(problem, x0, gtol=1e-10)
    assert res.success
    assert res.fun == pytest.approx(problem.fopt, rel=1e-12, abs=1e-10)
    np.testing.assert_allclose(res.x, problem.xopt, atol=1e-8)
    assert np.linalg.det(res.x) == pytest.approx(np.linalg.det(x0), abs=1e-12)


def test_procrustes_special_differs_from_orthogonal_when_det_flips():
    # A = I, B = diag(1, 1, -1): O(3) optimum is B itself (f* = 0); SO(3) must flip a sign
    a, b = np.eye(3), np.diag([1.0, 1.0, -1.0])
    assert problems.procrustes(a, b).fopt == pytest.approx(0.0, abs=1e-14)
    p_so = problems.procrustes(a, b, special=True)
    assert p_so.fopt == pytest.approx(4.0)
    res = jitopt.solvers.rgd(p_so, Orthogonal(3, special=True).random_point(0), gtol=1e-10)
    assert res.fun == pytest.approx(4.0, rel=1e-10)


def test_rgd_reaches_brockett_optimum():
    a = problems.spectrum_matrix(30, rng=5)
    problem = problems.brockett(a, [4.0, 3.0, 2.0, 1.0])
    res = jitopt.solvers.rgd(problem, rng=0, gtol=1e-8, maxiter=20000)
    assert res.success
    assert rel_gap(res, problem) <= 1e-10
    # columns are the eigenvectors of the 4 smallest eigenvalues, in order, up to sign
    np.testing.assert_allclose(np.abs(np.sum(res.x * problem.xopt, axis=0)), 1.0, atol=1e-6)


@pytest.mark.parametrize("retraction", ["qr", "polar", "cayley"])
def test_rgd_with_each_stiefel_retraction(retraction):
    a = problems.spectrum_matrix(40, rng=1)
    problem = problems.pca(a, 3)
    problem.manifold = jitopt.manifolds.Stiefel(40, 3, retraction=retraction)
    res = jitopt.solvers.rgd(problem, rng=2, gtol=1e-8)
    assert res.success and rel_gap(res, problem) <= 1e-12


def test_rgd_on_spd_and_sphere():
    # Karcher mean of two commuting SPD matrices: exp(½(log A + log B))
    d = jitopt.manifolds.SPD(3)
    q = Orthogonal(3).random_point(0)
    a = (q * [1.0, 2.0, 5.0]) @ q.T
    b = (q * [4.0, 0.5, 1.0]) @ q.T
    mean = (q * np.sqrt([4.0, 1.0, 5.0])) @ q.T

    def cost(x):
        return 0.5 * (d.dist(x, a) ** 2 + d.dist(x, b) ** 2)

    def egrad(x):
        # the Riemannian gradient is -(log_x a + log_x b); return its Euclidean form
        xi = np.linalg.inv(x)
        rg = -(d.log(x, a) + d.log(x, b))
        return xi @ rg @ xi

    res = jitopt.solvers.rgd(jitopt.Problem(d, cost, egrad), np.eye(3), gtol=1e-10)
    assert res.success
    np.testing.assert_allclose(res.x, mean, atol=1e-9)


def test_stopping_rules():
    problem = problems.pca(problems.spectrum_matrix(50, rng=0), 4)
    r = jitopt.solvers.rgd(problem, rng=0, maxiter=5)
    assert r.status == jitopt.Status.MAXITER and r.nit == 5 and not r.success
    r = jitopt.solvers.rgd(problem, rng=0, max_time=0.0)
    assert r.status == jitopt.Status.MAXTIME and r.nit == 0
    r = jitopt.solvers.rgd(problem, rng=0, gtol=0.0, step="armijo", maxiter=100000,
                           min_step=1e-3)
    assert r.status == jitopt.Status.SMALL_STEP and not r.success
    r = jitopt.solvers.rgd(problem, rng=0, maxiter=0)
    assert r.nit == 0 and r.nfev == 1


def test_same_seed_same_result_and_input_not_modified():
    problem = problems.pca(problems.spectrum_matrix(30, rng=0), 2)
    r1 = jitopt.solvers.rgd(problem, rng=7, maxiter=30)
    r2 = jitopt.solvers.rgd(problem, rng=7, maxiter=30)
    np.testing.assert_array_equal(r1.x, r2.x)
    x0 = problem.manifold.random_point(1)
    keep = x0.copy()
    jitopt.solvers.rgd(problem, x0, maxiter=10)
    np.testing.assert_array_equal(x0, keep)


def test_rgd_bad_options():
    problem = problems.pca(np.diag([3.0, 2.0, 1.0]), 1)
    with pytest.raises(ValueError, match="step"):
        jitopt.solvers.rgd(problem, step="newton")
    for bad in (0.0, -1.0, np.nan, np.inf):
        with pytest.raises(ValueError, match="step"):
            jitopt.solvers.rgd(problem, step=bad)
    for bad in (True, [0.1]):
        with pytest.raises(TypeError, match="step"):
            jitopt.solvers.rgd(problem, step=bad)
    with pytest.raises(ValueError, match="initial_step"):
        jitopt.solvers.rgd(problem, step=0.1, initial_step=0.1)
    with pytest.raises(ValueError, match="contraction"):
        jitopt.solvers.rgd(problem, contraction=1.0)
    with pytest.raises(TypeError, match="maxiter"):
        jitopt.solvers.rgd(problem, maxiter=1.5)
    with pytest.raises(TypeError, match="problem"):
        jitopt.solvers.rgd(lambda x: 0.0)
    with pytest.raises(TypeError, match="rng"):
        jitopt.solvers.rgd(problem, rng="seed")


@pytest.mark.parametrize("make", ["pca", "grassmann", "procrustes", "brockett"])
def test_builtin_problems_known_optimum_and_gradient(make):
    rng = np.random.default_rng(0)
    a = problems.spectrum_matrix(9, rng=1)
    if make == "pca":
        problem = problems.pca(a, 3)
    elif make == "grassmann":
        problem = problems.pca(a, 3, manifold="grassmann")
    elif make == "procrustes":
        problem = problems.procrustes(rng.standard_normal((11, 9)), rng.standard_normal((11, 9)))
    else:
        problem = problems.brockett(a, [3.0, 2.0, 1.0])
    assert problem.cost(problem.xopt) == pytest.approx(problem.fopt, rel=1e-12)
    # the Euclidean gradient against central differences in the ambient space
    x = problem.manifold.random_point(2)
    d = rng.standard_normal(x.shape)
    h = 1e-6
    fd = (problem.cost(x + h * d) - problem.cost(x - h * d)) / (2 * h)
    assert np.sum(problem.egrad(x) * d) == pytest.approx(fd, rel=1e-7)
    # the known optimum is stationary and no random point beats it
    assert problem.manifold.norm(problem.xopt, problem.rgrad(problem.xopt)) < 1e-10
    assert all(problem.cost(problem.manifold.random_point(s)) >= problem.fopt for s in range(20))


def test_builtin_problems_bad_input():
    with pytest.raises(ValueError, match="A must be symmetric"):
        problems.pca(np.arange(9.0).reshape(3, 3), 1)
    with pytest.raises(ValueError, match="p must be in"):
        problems.pca(np.eye(3), 4)
    with pytest.raises(ValueError, match="A must be a square"):
        problems.pca(np.ones((3, 2)), 1)
    with pytest.raises(ValueError, match="manifold"):
        problems.pca(np.eye(3), 1, manifold="sphere")
    with pytest.raises(ValueError, match="mu must be strictly decreasing"):
        problems.brockett(np.eye(3), [1.0, 2.0])
    with pytest.raises(ValueError, match="same shape"):
        problems.procrustes(np.ones((3, 2)), np.ones((3, 3)))
    a = np.diag([3.0, 2.0, 1.0])
    keep = a.copy()
    problems.pca(a, 1)
    np.testing.assert_array_equal(a, keep)


def test_tour_rows_have_small_errors():
    from jitopt import tour
    from jitopt.__main__ import run

    lines = []
    rows = run([tour.rgd], stream=lines.append)
    assert len(rows) == 1 and "rgd" in lines[2]
    method, _, summary, error, _, _ = rows[0]
    assert method == "rgd" and "converged" in summary and error < 1e-10
