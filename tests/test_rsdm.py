"""Tests of RSDM, the randomized Riemannian submanifold method, and the row-block oracle."""

import itertools

import numpy as np
import pytest
import scipy.linalg
import scipy.optimize

import jitopt
from jitopt import FiniteSumProblem, Problem, Status
from jitopt.manifolds import Euclidean, Grassmann, Orthogonal, Stiefel
from jitopt.problems import linear_cost, pca, procrustes
from jitopt.solvers import block_gradient, exact_block, haar_frame
from jitopt.solvers import rsdm


def haar(n, rng):
    q, r = np.linalg.qr(rng.standard_normal((n, n)))
    return q * np.sign(np.diag(r))


def gapped_matrix(n, p, rng):
    """Symmetric A with top-p eigenvalues in [2, 3] and the rest in [0, 1]."""
    d = np.r_[np.linspace(3.0, 2.0, p), np.linspace(1.0, 0.0, n - p)]
    q = haar(n, rng)
    a = (q * d) @ q.T
    return 0.5 * (a + a.T), q[:, :p]


def skew(m):
    return 0.5 * (m - m.T)


def point_and_gradient(n, p, seed):
    rng = np.random.default_rng(seed)
    x = Stiefel(n, p).random_point(rng)
    return x, rng.standard_normal((n, p))


# -- the expected RSDM direction ------------------------------------------------------------


def test_expected_direction_permutation_exact():
    """Averaged over all r-subsets, Pᵀ Ω P = r(r-1)/(n(n-1)) skew(G Xᵀ) exactly."""
    n, p, r = 5, 3, 2
    x, g = point_and_gradient(n, p, 0)
    total = np.zeros((n, n))
    subsets = list(itertools.combinations(range(n), r))
    for rows in subsets:
        rows = np.array(rows)
        omega = block_gradient(np.ascontiguousarray(g[rows]), np.ascontiguousarray(x[rows]))
        total[np.ix_(rows, rows)] += omega
    expected = r * (r - 1) / (n * (n - 1)) * skew(g @ x.T)
    np.testing.assert_allclose(total / len(subsets), expected, rtol=0, atol=1e-14)


@pytest.mark.parametrize("sampling", ["permutation", "orthogonal"])
def test_expected_direction_monte_carlo(sampling):
    """E[Pᵀ Ω P] = r(r-1)/(n(n-1)) skew(G Xᵀ): Monte Carlo, 20 000 draws, 2 %."""
    n, p, r, draws = 5, 3, 4, 20000
    x, g = point_and_gradient(n, p, 1)
    rng = np.random.default_rng(2)
    total = np.zeros((n, n))
    for _ in range(draws):
        if sampling == "permutation":
            frame = np.eye(n)[rng.choice(n, r, replace=False)]
        else:
            frame = haar_frame(rng.standard_normal((n, r)))
        omega = block_gradient(frame @ g, frame @ x)
        total += frame.T @ omega @ frame
    expected = r * (r - 1) / (n * (n - 1)) * skew(g @ x.T)
    err = np.linalg.norm(total / draws - expected) / np.linalg.norm(expected)
    assert err <= 0.02


def test_one_step_matches_formula():
    """A permutation step is X[I] <- Cayley(η Ω) X[I] with Ω = skew(G_I X_Iᵀ), other rows
    untouched (rows drawn from the same seeded generator)."""
    n, p, r, eta = 9, 4, 3, 0.3
    A, _ = gapped_matrix(n, p, np.random.default_rng(3))
    problem = pca(A, p)
    x0 = Stiefel(n, p).random_point(4)
    res = rsdm(problem, x0, r=r, step=eta, maxiter=1, gtol=0, rng=5)
    rows = np.random.default_rng(5).choice(n, r, replace=False)
    g = -2.0 * A @ x0
    omega = skew(g[rows] @ x0[rows].T)
    y = np.linalg.solve(np.eye(r) + eta / 2 * omega, np.eye(r) - eta / 2 * omega)
    expected = x0.copy()
    expected[rows] = y @ x0[rows]
    np.testing.assert_allclose(res.x, expected, rtol=0, atol=1e-13)
    others = np.setdiff1d(np.arange(n), rows)
    assert np.array_equal(res.x[others], x0[others])


def test_full_block_is_the_cayley_step():
    """r = n with permutation sampling is the full Cayley step of Wen & Yin on O(n)."""
    n, eta = 7, 0.2
    rng = np.random.default_rng(6)
    problem = linear_cost(rng.standard_normal((n, n)))
    x0 = Orthogonal(n).random_point(7)
    res = rsdm(problem, x0, r=n, step=eta, maxiter=1, gtol=0, rng=8)
    w = skew(problem.egrad(x0) @ x0.T)
    expected = np.linalg.solve(np.eye(n) + eta / 2 * w, (np.eye(n) - eta / 2 * w) @ x0)
    np.testing.assert_allclose(res.x, expected, rtol=0, atol=1e-12)


# -- invariants ------------------------------------------------------------------------------


@pytest.mark.parametrize("sampling", ["permutation", "orthogonal"])
def test_orthogonality_and_det_over_20000_steps(sampling):
    n = 8
    rng = np.random.default_rng(9)
    problem = procrustes(rng.standard_normal((12, n)), rng.standard_normal((12, n)))
    x0 = Orthogonal(n).random_point(10)
    x0[:, 0] *= np.sign(np.linalg.det(x0))  # det +1 ...
    x0[:, 1] *= -1.0  # ... then -1, the component without the identity
    res = rsdm(problem, x0, r=3, sampling=sampling, step=0.01, maxiter=20000, gtol=0,
               rng=11)
    assert res.nit == 20000
    assert res.n_reorth == 0  # no re-orthonormalisation: the steps alone kept it
    assert np.linalg.norm(res.x.T @ res.x - np.eye(n)) < 1e-12
    assert res.orthogonality < 1e-12
    assert abs(np.linalg.det(res.x) - (-1.0)) < 1e-12


def test_user_array_untouched_and_reproducible():
    A, _ = gapped_matrix(20, 4, np.random.default_rng(12))
    problem = pca(A, 4)
    x0 = Stiefel(20, 4).random_point(13)
    keep = x0.copy()
    r1 = rsdm(problem, x0, r=5, maxiter=300, rng=14)
    r2 = rsdm(problem, x0, r=5, maxiter=300, rng=14)
    assert np.array_equal(x0, keep)
    assert np.array_equal(r1.x, r2.x) and r1.fun == r2.fun


def test_armijo_is_monotone():
    A, _ = gapped_matrix(30, 5, np.random.default_rng(15))
    res = rsdm(pca(A, 5), r=6, maxiter=500, gtol=0, history=True, rng=16)
    fun = res.history["fun"]
    assert np.all(np.diff(fun) <= 1e-12 * np.abs(fun[1:]))
    assert fun[-1] < fun[0]


# -- known optima ----------------------------------------------------------------------------


@pytest.mark.parametrize("sampling", ["permutation", "orthogonal"])
def test_pca_top_eigenspace(sampling):
    n, p = 200, 10
    A, v = gapped_matrix(n, p, np.random.default_rng(17))
    problem = pca(A, p)
    # orthogonal sampling compares two full costs (|f| = 25), whose rounding stalls the
    # Armijo steps near a gradient norm of 1e-6; the row blocks' changes are exact
    gtol = 1e-7 if sampling == "permutation" else 1e-5
    res = rsdm(problem, r=50, sampling=sampling, gtol=gtol, maxiter=20000, rng=18)
    assert res.success, res.message
    assert (res.fun - problem.fopt) / abs(problem.fopt) <= 1e-8
    # the eigengap is 1: the distance of the subspaces is below the gradient norm
    assert np.linalg.norm(res.x @ res.x.T - v @ v.T) <= max(gtol, 1e-6)
    assert res.orthogonality <= 1e-12


def test_pca_complement_takes_the_same_steps():
    """pca(-A, n - p) from the complement Z0 of X0: the same block gradients and cost
    changes, so the same steps; f_Z = f_X + tr A along the run and at the optima."""
    n, p = 30, 20
    A, v = gapped_matrix(n, p, np.random.default_rng(23))
    x0 = Stiefel(n, p).random_point(24)
    z0 = np.linalg.qr(x0, mode="complete")[0][:, p:]
    top, bottom = pca(A, p), pca(-A, n - p)
    assert abs(bottom.fopt - (top.fopt + np.trace(A))) <= 1e-12 * abs(top.fopt)
    a = rsdm(top, x0, r=8, maxiter=60, gtol=0, history=True, rng=25)
    b = rsdm(bottom, z0, r=8, maxiter=60, gtol=0, history=True, rng=25)
    np.testing.assert_allclose(b.history["fun"], a.history["fun"] + np.trace(A),
                               rtol=0, atol=1e-10 * abs(top.fopt))
    assert np.linalg.norm(a.x.T @ b.x) <= 1e-10  # Z stays the complement of X
    res = rsdm(bottom, z0, r=8, gtol=1e-9, maxiter=50000, rng=26)
    assert res.success, res.message
    assert np.linalg.norm(res.x @ res.x.T - (np.eye(n) - v @ v.T)) <= 1e-6


def test_grassmann_pca():
    n, p = 40, 6
    A, v = gapped_matrix(n, p, np.random.default_rng(19))
    problem = pca(A, p, manifold="grassmann")
    res = rsdm(problem, r=10, gtol=1e-9, maxiter=50000, rng=20)
    assert res.success, res.message
    assert abs(res.fun - problem.fopt) / abs(problem.fopt) <= 1e-10
    assert problem.manifold.dist(res.x, v) <= 1e-7


def _procrustes_other_component(rng, x0_seed, n=12):
    """A Procrustes problem on O(n) and a start x0 in the component of O(n) without the
    global optimum; returns (problem, x0, σ_min, f*, X*) with that component's optimum
    (the last singular pair of AᵀB flipped)."""
    A = rng.standard_normal((30, n))
    B = A @ haar(n, rng) + 0.1 * rng.standard_normal((30, n))
    problem = procrustes(A, B)
    u, s, vt = np.linalg.svd(A.T @ B)
    x0 = Orthogonal(n).random_point(x0_seed)
    if np.linalg.det(x0) * np.linalg.det(u @ vt) > 0:
        x0[:, 0] *= -1.0
    d = np.r_[np.ones(n - 1), -1.0]
    f_comp = np.sum(A * A) + np.sum(B * B) - 2.0 * np.sum(s * d)
    return problem, x0, s[-1], f_comp, (u * d) @ vt


def test_procrustes_restricted_to_start_component():
    """From a start with det = -det(UVᵀ) the reachable optimum flips the last singular pair."""
    problem, x0, s_min, f_comp, x_comp = _procrustes_other_component(
        np.random.default_rng(21), 22)
    res = rsdm(problem, x0, r=4, gtol=1e-8, maxiter=50000, rng=23)
    assert res.success, res.message
    assert abs(res.fun - f_comp) / abs(f_comp) <= 1e-10
    np.testing.assert_allclose(res.x, x_comp, atol=1e-7)
    assert res.fun > problem.fopt + s_min  # not the unreachable global optimum
    assert np.sign(np.linalg.det(res.x)) == np.sign(np.linalg.det(x0))


@pytest.mark.parametrize("sampling", ["permutation", "orthogonal"])
def test_linear_cost_on_special_orthogonal(sampling):
    n = 20
    rng = np.random.default_rng(24)
    u, v = haar(n, rng), haar(n, rng)
    C = (u * np.r_[np.linspace(3.0, 2.0, n - 1), 1.0]) @ v.T
    if np.linalg.det(C) > 0:
        C[:, 0] *= -1.0  # the O(n) optimum polar(C) then has det -1
    problem = linear_cost(C, special=True)
    uu, s, vvt = np.linalg.svd(C)
    assert np.isclose(problem.fopt, -s[:-1].sum() + s[-1])
    res = rsdm(problem, r=5, sampling=sampling, step=0.5, gtol=1e-9, maxiter=50000, rng=25)
    assert res.success, res.message
    assert abs(res.fun - problem.fopt) / abs(problem.fopt) <= 1e-10
    np.testing.assert_allclose(res.x, problem.xopt, atol=1e-8)
    assert np.linalg.det(res.x) > 0


def test_linear_cost_on_stiefel():
    rng = np.random.default_rng(26)
    C = rng.standard_normal((15, 4))
    problem = linear_cost(C)
    u, s, vt = np.linalg.svd(C, full_matrices=False)
    assert isinstance(problem.manifold, Stiefel) and np.isclose(problem.fopt, -s.sum())
    res = rsdm(problem, r=4, gtol=1e-9, maxiter=50000, rng=27)
    assert res.success, res.message
    np.testing.assert_allclose(res.x, u @ vt, atol=1e-8)


def test_stochastic_finite_sum_pca():
    """Minibatch RSDM with a decaying step on a finite-sum PCA approaches the optimum."""
    n, p, m = 10, 2, 400
    rng = np.random.default_rng(28)
    Z = rng.standard_normal((m, n)) * np.r_[3.0, 2.5, np.full(n - 2, 0.5)]
    Z = Z @ haar(n, rng)
    cov = Z.T @ Z / m
    fopt = -np.linalg.eigvalsh(cov)[::-1][:p].sum()

    def cost(x, idx):
        zx = Z[idx] @ x
        return -np.sum(zx * zx) / len(idx)

    def egrad(x, idx):
        return -2.0 * Z[idx].T @ (Z[idx] @ x) / len(idx)

    problem = FiniteSumProblem(Grassmann(n, p), cost, egrad, m)
    x0 = Grassmann(n, p).random_point(29)
    f0 = problem.cost(x0)
    res = rsdm(problem, x0, r=4, batch_size=20, step=lambda k: 0.05 / np.sqrt(1 + k / 200),
               gtol=0, maxiter=4000, check_every=1000, rng=30)
    assert res.nit == 4000
    assert (res.fun - fopt) / abs(fopt) <= 1e-2 * (f0 - fopt) / abs(fopt)
    assert res.nifo == 4000 * 20 + 2 * m  # minibatches + full gradients at start, end


# -- the row-block oracle ----------------------------------------------------------------


def _problems():
    rng = np.random.default_rng(31)
    A, _ = gapped_matrix(30, 7, rng)
    yield pca(A, 7), Stiefel(30, 7)
    yield procrustes(rng.standard_normal((40, 25)), rng.standard_normal((40, 25))), \
        Orthogonal(25)
    yield linear_cost(rng.standard_normal((30, 30)), special=True), Orthogonal(30)
    yield linear_cost(rng.standard_normal((30, 6))), Stiefel(30, 6)


@pytest.mark.parametrize("case", range(4))
def test_row_block_oracle_matches_full_oracle(case):
    problem, M = list(_problems())[case]
    rng = np.random.default_rng(32)
    x = M.random_point(rng)
    n = x.shape[0]
    for r in (2, 5, n):
        rows = rng.choice(n, r, replace=False)
        g = problem.egrad(x)
        gi = problem.egrad_rows(x, rows)
        np.testing.assert_allclose(gi, g[rows], rtol=0, atol=1e-10 * np.abs(g).max())
        # a rotation of the rows (the kind of update RSDM makes), and a plain perturbation
        y = haar(r, rng)
        for delta in (y @ x[rows] - x[rows], 1e-3 * rng.standard_normal((r, x.shape[1]))):
            x2 = x.copy()
            x2[rows] += delta
            exact = problem.cost(x2) - problem.cost(x)
            inc = problem.cost_change(x, rows, delta, gi)
            assert abs(inc - exact) <= 1e-10 * max(1.0, abs(problem.cost(x)))


def test_row_oracle_and_full_oracle_give_the_same_iterates():
    A, _ = gapped_matrix(25, 5, np.random.default_rng(33))
    with_rows = pca(A, 5)
    plain = Problem(with_rows.manifold, with_rows.cost, cost_and_egrad=with_rows.cost_and_egrad)
    x0 = Stiefel(25, 5).random_point(34)
    # (Armijo decisions at the rounding level may differ later on: compare its first steps)
    for step, steps in (("armijo", 40), (0.05, 400)):
        a = rsdm(with_rows, x0, r=6, step=step, maxiter=steps, gtol=0, rng=35)
        b = rsdm(plain, x0, r=6, step=step, maxiter=steps, gtol=0, rng=35)
        np.testing.assert_allclose(a.x, b.x, atol=1e-10)
        assert abs(a.fun - b.fun) <= 1e-10 * abs(a.fun)
    assert a.njev >= 400 and b.njev >= 400


# -- the exact block step (costs affine in a rotation of the block) -------------------------


def _exact_cases():
    """(problem, start, rows seed): linear cost on St(9, 4) (steps in O(r)), Procrustes on
    O(7) (steps in SO(r): det X is kept) and a linear cost on SO(8)."""
    rng = np.random.default_rng(41)
    yield linear_cost(rng.standard_normal((9, 4))), Stiefel(9, 4).random_point(42)
    yield procrustes(rng.standard_normal((10, 7)), rng.standard_normal((10, 7))), \
        Orthogonal(7).random_point(43)
    yield linear_cost(rng.standard_normal((8, 8)), special=True), \
        Orthogonal(8, special=True).random_point(44)


def _rotations_2d(m=20000):
    """A fine grid of O(2): the rotations, then the reflections."""
    t = np.linspace(0.0, 2.0 * np.pi, m, endpoint=False)
    c, s = np.cos(t), np.sin(t)
    rot = np.stack([np.stack([c, -s], -1), np.stack([s, c], -1)], -2)
    ref = np.stack([np.stack([c, s], -1), np.stack([s, -c], -1)], -2)
    return rot, ref


@pytest.mark.parametrize("case", range(3))
def test_exact_step_is_the_block_minimizer_r2(case):
    """One exact step with r = 2 equals the best of a 20 000-point grid of O(2) (of SO(2)
    when p = n), the cost evaluated in full at every grid point."""
    problem, x0 = list(_exact_cases())[case]
    n, p = x0.shape
    rows = np.random.default_rng(45).choice(n, 2, replace=False)
    res = rsdm(problem, x0, r=2, step="exact", maxiter=1, gtol=0, rng=45)
    rot, ref = _rotations_2d()
    grid = rot if p == n else np.concatenate([rot, ref])
    x = x0.copy()
    best = np.inf
    for u in grid:
        x[rows] = u @ x0[rows]
        best = min(best, problem.cost(x))
    # the grid spacing is 3e-4 rad: its best is above the minimum by O(1e-7) at most
    assert res.fun <= best + 1e-12 and res.fun >= best - 1e-6 * abs(best)
    others = np.setdiff1d(np.arange(n), rows)
    assert np.array_equal(res.x[others], x0[others])
    if p == n:
        assert np.isclose(np.linalg.det(res.x), np.linalg.det(x0), rtol=0, atol=1e-13)


@pytest.mark.parametrize("case", range(3))
def test_exact_step_is_the_block_minimizer_r3(case):
    """r = 3: no local search over the rotations of the block (exponential coordinates,
    BFGS from 6 random starts, both components when p < n) finds a lower cost."""
    problem, x0 = list(_exact_cases())[case]
    n, p = x0.shape
    rows = np.random.default_rng(46).choice(n, 3, replace=False)
    res = rsdm(problem, x0, r=3, step="exact", maxiter=1, gtol=0, rng=46)
    x = x0.copy()

    def block_cost(w, flip):
        u = scipy.linalg.expm(np.array([[0, w[0], w[1]], [-w[0], 0, w[2]],
                                        [-w[1], -w[2], 0]])) @ flip
        x[rows] = u @ x0[rows]
        return problem.cost(x)

    rng = np.random.default_rng(47)
    flips = [np.eye(3)] if p == n else [np.eye(3), np.diag([1.0, 1.0, -1.0])]
    best = min(scipy.optimize.minimize(block_cost, rng.uniform(-np.pi, np.pi, 3), args=(f,),
                                       method="BFGS").fun for f in flips for _ in range(6))
    assert res.fun <= best + 1e-10 * abs(best)
    assert res.fun >= best - 1e-6 * abs(best)  # the search does find the minimum


def test_exact_step_against_scipy_orthogonal_procrustes():
    """The unconstrained (O(r)) block minimizer of <L, U> is scipy's orthogonal Procrustes
    solution for ||U - (-L)||; the SO(r) one flips the smallest singular pair."""
    rng = np.random.default_rng(48)
    for r in (2, 5, 12):
        lb = rng.standard_normal((r, r))
        u, change = exact_block(lb, False)
        ref, _ = scipy.linalg.orthogonal_procrustes(np.eye(r), -lb)
        np.testing.assert_allclose(u, ref, atol=1e-12)
        assert np.isclose(change, np.sum(lb * (u - np.eye(r))), rtol=1e-12)
        us, _ = exact_block(lb, True)
        w, sv, vt = np.linalg.svd(-lb)
        d = np.r_[np.ones(r - 1), np.sign(np.linalg.det(w @ vt))]
        np.testing.assert_allclose(us, (w * d) @ vt, atol=1e-12)
        assert np.isclose(np.linalg.det(us), 1.0, atol=1e-12)
        assert np.sum(lb * us) >= np.sum(lb * u) - 1e-12  # the O(r) minimum is lower


def test_exact_step_monotone_orthogonal_and_det():
    """The true cost never increases (checked at every step), orthogonality stays at
    rounding over 20 000 exact steps and det X = -1 is kept on O(n)."""
    n = 8
    rng = np.random.default_rng(49)
    problem = procrustes(rng.standard_normal((12, n)), rng.standard_normal((12, n)))
    x0 = Orthogonal(n).random_point(50)
    x0[:, 0] *= -np.sign(np.linalg.det(x0))
    costs = []
    rsdm(problem, x0, r=3, step="exact", maxiter=300, gtol=0, rng=51,
         callback=lambda xk: costs.append(problem.cost(xk)))
    assert len(costs) == 300
    assert np.all(np.diff(costs) <= 1e-13 * abs(costs[0]))
    res = rsdm(problem, x0, r=3, step="exact", maxiter=20000, gtol=0, rng=52)
    assert res.nit == 20000 and res.n_reorth == 0
    assert res.orthogonality < 1e-12
    assert abs(np.linalg.det(res.x) + 1.0) < 1e-12
    # the tracked cost (f(x0) plus the exact block changes) is the cost of every iterate
    errors = []

    def compare(intermediate_result):
        errors.append(intermediate_result.fun - problem.cost(intermediate_result.x))

    rsdm(problem, x0, r=3, step="exact", maxiter=2000, gtol=0, f_target=-np.inf,
         callback=compare, rng=53)
    assert len(errors) == 2000 and np.max(np.abs(errors)) <= 1e-12 * abs(costs[0])


@pytest.mark.parametrize("case", ["procrustes", "so", "stiefel"])
def test_exact_step_reaches_the_optimum(case):
    """Exact steps reach the closed-form optima: Procrustes restricted to the start's det
    component, the linear cost on SO(n) (det -1 global optimum) and on St(n, p)."""
    rng = np.random.default_rng(54)
    if case == "procrustes":
        problem, x0, _, fopt, xopt = _procrustes_other_component(rng, 55)
    elif case == "so":
        n = 20
        u, v = haar(n, rng), haar(n, rng)
        C = (u * np.r_[np.linspace(3.0, 2.0, n - 1), 1.0]) @ v.T
        if np.linalg.det(C) > 0:
            C[:, 0] *= -1.0
        problem = linear_cost(C, special=True)
        x0, fopt, xopt = None, problem.fopt, problem.xopt
    else:
        C = rng.standard_normal((15, 4))
        problem = linear_cost(C)
        x0, fopt, xopt = None, problem.fopt, problem.xopt
    res = rsdm(problem, x0, r=5 if case != "stiefel" else 4, step="exact", gtol=1e-9,
               maxiter=50000, rng=56)
    assert res.success, res.message
    assert abs(res.fun - fopt) / abs(fopt) <= 1e-10
    np.testing.assert_allclose(res.x, xopt, atol=1e-7)


def test_block_affine_oracle_matches_the_cost():
    """f(x') - f(x) = <L_I, U - I> for rotations U of either det sign, and the exact step's
    reported change is the true one."""
    rng = np.random.default_rng(57)
    for problem, x in list(_exact_cases()):
        n = x.shape[0]
        f0 = problem.cost(x)
        for r in (2, 4, n):
            rows = rng.choice(n, r, replace=False)
            lb = problem.block_affine(x, rows)
            for u in (haar(r, rng), haar(r, rng) @ np.diag(np.r_[np.ones(r - 1), -1.0])):
                x2 = x.copy()
                x2[rows] = u @ x[rows]
                assert abs(problem.cost(x2) - f0 - np.sum(lb * (u - np.eye(r)))) <= \
                    1e-12 * max(1.0, abs(f0))
            u, change = exact_block(np.ascontiguousarray(lb), x.shape[1] == n)
            x2 = x.copy()
            x2[rows] = u @ x[rows]
            assert abs(problem.cost(x2) - f0 - change) <= 1e-12 * max(1.0, abs(f0))
            assert change <= 0.0


# -- interface -------------------------------------------------------------------------------


def test_minimize_method_and_nonfinite():
    A, _ = gapped_matrix(12, 3, np.random.default_rng(36))
    problem = pca(A, 3)
    x0 = Stiefel(12, 3).random_point(40)
    res = jitopt.minimize(lambda x: -np.sum(x * (A @ x)), x0, jac=lambda x: -2.0 * A @ x,
                          method="rsdm", manifold=Stiefel(12, 3), tol=1e-6,
                          options={"r": 4, "maxiter": 20000, "rng": 37})
    assert res.success and abs(res.fun - problem.fopt) <= 1e-8 * abs(problem.fopt)

    calls = {"n": 0}

    def cost_and_egrad(x):
        calls["n"] += 1
        g = -2.0 * A @ x
        if calls["n"] > 3:
            g[0, 0] = np.nan
        return -np.sum(x * (A @ x)), g

    bad = Problem(Stiefel(12, 3), None, cost_and_egrad=cost_and_egrad)
    res = rsdm(bad, r=4, step=0.1, maxiter=100, rng=38)
    assert not res.success and res.status == Status.NONFINITE
    assert "non-finite" in res.message


def test_bad_input():
    A, _ = gapped_matrix(10, 3, np.random.default_rng(39))
    problem = pca(A, 3)
    with pytest.raises(ValueError, match="r must be in"):
        rsdm(problem, r=1)
    with pytest.raises(ValueError, match="r must be in"):
        rsdm(problem, r=11)
    with pytest.raises(TypeError, match="r must be an integer"):
        rsdm(problem, r=2.5)
    x_bad = np.ones((10, 3))
    with pytest.raises(ValueError, match="x0 is not a point"):
        rsdm(problem, x_bad)
    with pytest.raises(ValueError, match="x0 must have shape"):
        rsdm(problem, np.eye(10))
    with pytest.raises(ValueError, match="1 <= p <= n"):
        Grassmann(3, 5)
    with pytest.raises(ValueError, match="sampling must be one of"):
        rsdm(problem, sampling="gauss")
    with pytest.raises(ValueError, match="step must be in"):
        rsdm(problem, step=-1.0)
    with pytest.raises(ValueError, match="step must be one of"):
        rsdm(problem, step="wolfe")
    with pytest.raises(TypeError, match="batch_size needs a jitopt.FiniteSumProblem"):
        rsdm(problem, batch_size=4)
    with pytest.raises(TypeError, match="'rsdm' takes a Problem on Stiefel, Grassmann, got one "
                                        "on Euclidean"):
        rsdm(Problem(Euclidean(3), lambda x: 0.0, lambda x: x))
    with pytest.raises(TypeError, match="problem must be a Problem"):
        rsdm(A)
    with pytest.raises(TypeError, match="rsdm takes one copy"):
        rsdm(Problem(Stiefel(6, 2, k=3), lambda x: 0.0, lambda x: 0 * x))
    res = rsdm(problem, step=lambda k: 0.0, maxiter=3)  # a fault after the start: a result
    assert res.status == Status.ORACLE_ERROR and "step(0) must return" in res.message
    with pytest.raises(ValueError, match="cost_change needs egrad_rows"):
        Problem(Stiefel(10, 3), lambda x: 0.0, lambda x: x, cost_change=lambda *a: 0.0)
    wrong = Problem(Stiefel(10, 3), problem.cost, cost_and_egrad=problem.cost_and_egrad,
                    egrad_rows=lambda x, rows: np.zeros((3, 3)))
    res = rsdm(wrong, r=4, maxiter=2)
    assert res.status == Status.ORACLE_ERROR
    assert "egrad_rows must return an array of shape" in res.message
    with pytest.raises(ValueError, match="special=True needs a square C"):
        linear_cost(np.ones((5, 3)), special=True)
    with pytest.raises(ValueError, match="step='exact' needs"):
        rsdm(problem, step="exact")  # PCA is not affine in a block rotation
    lin = linear_cost(np.random.default_rng(40).standard_normal((10, 3)))
    with pytest.raises(ValueError, match="step='exact' needs"):
        rsdm(lin, step="exact", sampling="orthogonal")
    with pytest.raises(TypeError, match="block_affine must be callable"):
        Problem(Stiefel(10, 3), lambda x: 0.0, lambda x: x, block_affine=3)
    wrong = Problem(Stiefel(10, 3), lin.cost, lin.egrad,
                    block_affine=lambda x, rows: np.zeros((3, len(rows))))
    res = rsdm(wrong, r=4, step="exact", maxiter=2)
    assert res.status == Status.ORACLE_ERROR
    assert "block_affine must return an array of shape" in res.message
    nan = Problem(Stiefel(10, 3), lin.cost, lin.egrad,
                  block_affine=lambda x, rows: np.full((len(rows), len(rows)), np.nan))
    res = rsdm(nan, r=4, step="exact", maxiter=5)
    assert res.status == Status.NONFINITE and not res.success


def test_tour_entry():
    from jitopt.tour import rsdm as tour

    method, _, summary, error, _ = tour()
    assert method == "rsdm" and summary.startswith("converged") and error <= 1e-10


# -- defaults that stop -------------------------------------------------------------------

def _default_cases():
    rng = np.random.default_rng(60)
    A, _ = gapped_matrix(200, 10, rng)
    yield "pca St(200, 10)", pca(A, 10)
    A, _ = gapped_matrix(40, 6, rng)
    yield "pca Gr(40, 6)", pca(A, 6, manifold="grassmann")
    A = rng.standard_normal((30, 12))
    yield "procrustes SO(12)", procrustes(A, A @ haar(12, rng)
                                          + 0.1 * rng.standard_normal((30, 12)), special=True)
    yield "linear St(15, 4)", linear_cost(rng.standard_normal((15, 4)))
    # pymanopt's PCA example: 3 features, 2 components, 1000 samples (a cost of size 1e3)
    z = rng.standard_normal((1000, 3)) * np.array([1.0, 0.6, 0.3])
    yield "pca St(3, 2), |f| ~ 1e3", pca(z.T @ z, 2)
    c = z.T @ z
    yield "the same, user oracles", Problem(
        Stiefel(3, 2), lambda x: -np.sum(x * (c @ x)), lambda x: -2.0 * c @ x,
        fopt=-np.linalg.eigvalsh(c)[-2:].sum())


@pytest.mark.filterwarnings("ignore:rsdm. the problem has no row-block oracle")
@pytest.mark.parametrize("name, problem", list(_default_cases()),
                         ids=[n for n, _ in _default_cases()])
def test_defaults_stop_within_5000_steps_with_a_status_that_says_why(name, problem):
    res = rsdm(problem)
    assert res.nit <= 5000, (res.status, res.message)
    assert res.status in (Status.CONVERGED, Status.TARGET, Status.SMALL_STEP), res.message
    if res.status == Status.SMALL_STEP:
        assert "stalled" in res.message and res.stationarity > 1e-6
    else:
        assert res.stationarity <= 1e-6
    assert abs(res.fun - problem.fopt) / abs(problem.fopt) <= 1e-8


def test_default_rng_gives_the_same_steps_and_f_target_stops():
    problem = pca(gapped_matrix(40, 6, np.random.default_rng(61))[0], 6)
    a, b = rsdm(problem), rsdm(problem)
    assert a.nit == b.nit and np.array_equal(a.x, b.x)
    res = rsdm(problem, f_target=problem.fopt + 1e-3)
    assert res.status == Status.TARGET and res.fun <= problem.fopt + 1e-3 and res.nit < a.nit


@pytest.mark.filterwarnings("ignore:rsdm. the problem has no row-block oracle")
def test_stall_is_reported_when_gtol_is_below_the_rounding_floor():
    z = np.random.default_rng(62).standard_normal((1000, 3)) * np.array([1.0, 0.6, 0.3])
    c = z.T @ z
    problem = Problem(Stiefel(3, 2), lambda x: -np.sum(x * (c @ x)), lambda x: -2.0 * c @ x,
                      fopt=-np.linalg.eigvalsh(c)[-2:].sum())
    res = rsdm(problem, gtol=1e-14)
    assert res.status == Status.SMALL_STEP and "stalled" in res.message
    assert abs(res.fun - problem.fopt) / abs(problem.fopt) <= 1e-12
    assert res.nit <= 5000


def test_warning_without_a_row_block_oracle():
    c = np.diag([3.0, 2.0, 1.0])
    problem = Problem(Stiefel(3, 2), lambda x: -np.sum(x * (c @ x)), lambda x: -2.0 * c @ x)
    with pytest.warns(RuntimeWarning, match="rgd"):
        res = rsdm(problem)
    assert res.success and abs(res.fun + 5.0) <= 1e-10
