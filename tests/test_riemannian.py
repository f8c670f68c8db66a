"""rcg, rlbfgs and rtr against known optima; the Riemannian Hessians of the manifolds; the
default method of minimize."""

import numpy as np
import pytest
import scipy.linalg

import jitopt
from jitopt import Status
from jitopt.manifolds import (SPD, Euclidean, FixedRankEmbedded, Grassmann, Orthogonal, Sphere,
                              Stiefel, Symmetric)
from jitopt.solvers import rcg, rgd, rlbfgs, rtr
from jitopt.testing import check_hessian

SOLVERS = {"rcg": rcg, "rlbfgs": rlbfgs, "rtr": rtr}


def gap(f, fopt):
    return abs(f - fopt) / max(1.0, abs(fopt))


def sym_matrix(n, low, high, seed):
    q, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((n, n)))
    lam = np.linspace(low, high, n)
    return 0.5 * ((q * lam) @ q.T + ((q * lam) @ q.T).T), lam


# -- test problems with known optima ------------------------------------------------------

def rayleigh(n=30):
    A, lam = sym_matrix(n, 1.0, 100.0, 0)
    return jitopt.Problem(Sphere(n), lambda x: x @ A @ x, lambda x: 2 * A @ x,
                          ehess=lambda x, u: 2 * A @ u, fopt=lam[0])


def pca(manifold):
    n, p = manifold.shape
    A, lam = sym_matrix(n, 1.0, 50.0, 1)
    return jitopt.Problem(manifold, None, None,
                          cost_and_egrad=lambda x: (-np.sum(x * (A @ x)), -2 * A @ x),
                          ehess=lambda x, u: -2 * A @ u, fopt=-lam[-p:].sum())


def procrustes(n=6, flip=True):
    """||AX - B||² on SO(n) with B = A R0, det R0 = -1: the optimum needs the det fix."""
    rng = np.random.default_rng(2)
    A = rng.standard_normal((2 * n, n))
    r0, _ = np.linalg.qr(rng.standard_normal((n, n)))
    if np.linalg.det(r0) > 0 and flip:
        r0[:, 0] *= -1
    B = A @ r0 + 0.1 * rng.standard_normal((2 * n, n))
    u, s, vt = np.linalg.svd(A.T @ B)
    dfix = np.ones(n)
    dfix[-1] = np.sign(np.linalg.det(u @ vt))
    fopt = np.sum(A * A) + np.sum(B * B) - 2 * np.sum(s * dfix)
    AtA, AtB = A.T @ A, A.T @ B
    return jitopt.Problem(Orthogonal(n, special=True), None, None,
                          cost_and_egrad=lambda x: (np.sum((A @ x - B) ** 2),
                                                    2 * (AtA @ x - AtB)),
                          ehess=lambda x, u: 2 * AtA @ u, fopt=fopt)


def karcher(n=4, k=5):
    rng = np.random.default_rng(3)
    q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    logs = 0.7 * rng.standard_normal((k, n))
    mats = [(q * np.exp(a)) @ q.T for a in logs]
    fopt = 0.5 * np.mean(np.sum((logs - logs.mean(0)) ** 2, axis=1))

    def cost_and_egrad(x):
        w, v = np.linalg.eigh(x)
        xs = (v / np.sqrt(w)) @ v.T  # X^{-1/2}
        f, g = 0.0, np.zeros_like(x)
        for a in mats:
            lw, lv = np.linalg.eigh(xs @ a @ xs)
            with np.errstate(invalid="ignore"):  # far trial points: NaN, a step too long
                log = (lv * np.log(lw)) @ lv.T
            f += 0.5 * np.sum(log * log) / k
            g -= xs @ log @ xs / k
        return f, 0.5 * (g + g.T)
    return jitopt.Problem(SPD(n), None, None, cost_and_egrad=cost_and_egrad, fopt=fopt)


def completion(m=20, n=15, k=2):
    """0.5 ||P_Omega(X - A)||^2 over the rank-k matrices, A of rank k observed on 70% of
    its entries (each row and column at least 6 times): f* = 0, from a start far from A.
    (With 60% of a 12 x 10 matrix, a column seen 3 times, rgd, rcg and rlbfgs drift along
    a valley where one singular value grows without bound, and stall at f = 1.4.)"""
    rng = np.random.default_rng(4)
    A = (rng.standard_normal((m, k)) * [4.0, 2.0]) @ rng.standard_normal((k, n))
    mask = rng.random((m, n)) < 0.7
    assert mask.sum(axis=0).min() >= 6 and mask.sum(axis=1).min() >= 6

    def cost_and_egrad(x):
        r = (x - A) * mask
        return 0.5 * np.sum(r * r), r
    return jitopt.Problem(FixedRankEmbedded(m, n, k), None, None,
                          cost_and_egrad=cost_and_egrad, ehess=lambda x, u: u * mask, fopt=0.0)


def rosenbrock():
    def cost_and_egrad(x):
        f = 100 * (x[1] - x[0] ** 2) ** 2 + (1 - x[0]) ** 2
        g = np.array([-400 * x[0] * (x[1] - x[0] ** 2) - 2 * (1 - x[0]),
                      200 * (x[1] - x[0] ** 2)])
        return f, g

    def ehess(x, u):
        h = np.array([[1200 * x[0] ** 2 - 400 * x[1] + 2, -400 * x[0]],
                      [-400 * x[0], 200.0]])
        return h @ u
    return jitopt.Problem(Euclidean(2), None, None, cost_and_egrad=cost_and_egrad,
                          ehess=ehess, fopt=0.0)


CASES = {
    "sphere": rayleigh,
    "stiefel": lambda: pca(Stiefel(20, 3)),
    "grassmann": lambda: pca(Grassmann(20, 3)),
    "so(n)": procrustes,
    "spd": karcher,
    "fixed-rank": completion,
}


@pytest.mark.parametrize("name", SOLVERS)
@pytest.mark.parametrize("case", CASES)
def test_known_optimum_to_relative_gap_1e10(name, case):
    problem = CASES[case]()
    x0 = problem.manifold.random_point(5)
    g0 = problem.manifold.norm(x0, problem.rgrad(x0))
    res = SOLVERS[name](problem, x0, gtol=1e-9 * g0, maxiter=5000)
    assert res.status == Status.CONVERGED, res.message
    assert gap(res.fun, problem.fopt) <= 1e-10, (res.fun, problem.fopt)
    problem.manifold.check_point(res.x, atol=1e-10)


def test_procrustes_minimizer_is_the_corrected_polar_factor():
    problem = procrustes()
    res = rlbfgs(problem, problem.manifold.random_point(0), gtol=1e-10)
    assert np.linalg.det(res.x) > 0 and gap(res.fun, problem.fopt) <= 1e-12


@pytest.mark.parametrize("name", SOLVERS)
def test_rosenbrock(name):
    problem = rosenbrock()
    res = SOLVERS[name](problem, np.array([-1.2, 1.0]), gtol=1e-10, maxiter=5000)
    assert res.success, res.message
    assert np.max(np.abs(res.x - 1.0)) <= 1e-6 and res.fun <= 1e-12


def test_rtr_finite_difference_hessian_on_karcher_counts_gradients():
    problem = karcher()
    res = rtr(problem, problem.manifold.random_point(1), gtol=1e-10)
    assert res.success and gap(res.fun, problem.fopt) <= 1e-10
    assert res.nhev > 0 and res.njev >= res.nhev  # each product is a gradient


def test_rtr_converges_superlinearly_on_a_rayleigh_quotient():
    problem = rayleigh(60)
    x0 = problem.manifold.random_point(7)
    res = rtr(problem, x0, gtol=1e-12, history=True)
    assert res.success
    h = res.history
    g = h["stationarity"][h["accepted"] == 1]
    g = np.concatenate(([h["stationarity"][0]], g))
    window = g[(g <= 1e-2 * g[0]) & (g >= 1e4 * 2.2e-16 * g[0])]
    ratios = window[1:] / window[:-1]
    assert ratios.size >= 2 and ratios.min() <= 1e-3, ratios
    # the exact Hessian and the finite difference of gradients agree to the end
    fd = rtr(problem, x0, gtol=1e-12, hess="fd")
    assert fd.success and gap(fd.fun, problem.fopt) <= 1e-12 and fd.nhev <= fd.njev


def test_rgd_ratios_are_not_superlinear_by_contrast():
    problem = rayleigh(60)
    res = rgd(problem, problem.manifold.random_point(7), gtol=1e-10, history=True)
    g = res.history["stationarity"]
    ratios = g[1:] / g[:-1]
    assert np.median(ratios[-10:]) > 1e-2


def test_rlbfgs_pairs_keep_positive_curvature():
    problem = pca(Stiefel(20, 3))
    res = rlbfgs(problem, problem.manifold.random_point(2), memory=5, history=True,
                 gtol=1e-10)
    curv = res.history["min_curvature"]
    assert res.success and np.all(curv[np.isfinite(curv)] > 0)
    assert res.history["pairs"].max() == 5


def test_rlbfgs_cautious_update_skips_a_pair_on_a_nonconvex_problem():
    # PCA on Stiefel is nonconvex; the first pair, from the saddle-rich start, has too
    # little curvature for the cautious test
    problem = jitopt.problems.pca(np.diag([5.0, 4.0, 1.0, 0.5]), p=2)
    res = rlbfgs(problem, rng=0, history=True, gtol=1e-10)
    assert res.success and res.n_skipped >= 1 and gap(res.fun, -9.0) <= 1e-12
    curv = res.history["min_curvature"]
    assert np.all(curv[np.isfinite(curv)] > 0)
    # with a large threshold the test refuses more pairs and the run still converges
    problem = rosenbrock()
    res = rlbfgs(problem, np.array([-1.2, 1.0]), cautious=10.0, gtol=1e-10, maxiter=5000)
    assert res.success and res.n_skipped >= 1 and res.fun <= 1e-12


def test_rcg_beta_rules_all_converge():
    problem = rayleigh()
    x0 = problem.manifold.random_point(3)
    for beta in ("HS+", "PR+", "FR", "HZ"):
        res = rcg(problem, x0, beta=beta, gtol=1e-9, maxiter=5000)
        assert res.success and gap(res.fun, problem.fopt) <= 1e-10, beta
    res = rcg(problem, x0, beta="FR", restart_threshold=0.1, gtol=1e-9, maxiter=5000)
    assert res.success


@pytest.mark.parametrize("name", SOLVERS)
def test_bad_arguments_name_themselves(name):
    problem = rayleigh(5)
    bad = {"rcg": {"beta": "XX"}, "rlbfgs": {"memory": 0}, "rtr": {"rho_prime": 0.5}}[name]
    with pytest.raises(ValueError, match=list(bad)[0]):
        SOLVERS[name](problem, **bad)


def test_rtr_exact_hessian_needs_ehess():
    problem = jitopt.Problem(Sphere(3), lambda x: x[0], lambda x: np.eye(3)[0])
    with pytest.raises(ValueError, match="ehess"):
        rtr(problem, hess="exact")


# -- the Riemannian Hessian of every manifold ---------------------------------------------

def quartic(x):
    return 0.25 * np.sum(x ** 4), x ** 3, lambda u: 3 * x ** 2 * u


def hessian_problem(manifold):
    """A non-quadratic cost, so that the Weingarten term matters."""
    shape = manifold.shape
    rng = np.random.default_rng(4)
    A = rng.standard_normal((shape[0], shape[0]))
    A = A + A.T
    if isinstance(manifold, SPD):
        C = A @ A.T + np.eye(shape[0])

        def cost_and_egrad(x):
            xi = np.linalg.inv(x)
            return (np.sum(C * x) - np.linalg.slogdet(x)[1] + 0.25 * np.sum(x * x) ** 2,
                    C - xi + np.sum(x * x) * x)

        def ehess(x, u):
            xi = np.linalg.inv(x)
            return xi @ u @ xi + np.sum(x * x) * u + 2 * np.sum(x * u) * x
    else:
        def cost_and_egrad(x):
            q, dq, _ = quartic(x)
            return float(np.sum(x * (A @ x))) + q, 2 * A @ x + dq

        def ehess(x, u):
            return 2 * A @ u + quartic(x)[2](u)
    if isinstance(manifold, Grassmann):  # an invariant cost: -tr(XᵀAX) + ¼ Σ (XXᵀ)_ij²
        def cost_and_egrad(x):
            pm = x @ x.T
            return -np.sum(x * (A @ x)) + 0.25 * np.sum(pm ** 2), -2 * A @ x + 2 * pm @ x

        def ehess(x, u):
            pm, dp = x @ x.T, u @ x.T + x @ u.T
            return -2 * A @ u + 2 * dp @ x + 2 * pm @ u
    return jitopt.Problem(manifold, None, None, cost_and_egrad=cost_and_egrad, ehess=ehess)


@pytest.mark.parametrize("manifold", [Euclidean(4, 2), Sphere(6), Sphere(3, 2), Stiefel(6, 3),
                                      Stiefel(5, 5), Grassmann(6, 2), Orthogonal(5),
                                      Orthogonal(4, special=True), SPD(4)], ids=repr)
def test_riemannian_hessian_passes_the_finite_difference_check(manifold):
    problem = hessian_problem(manifold)
    for seed in range(3):
        chk = check_hessian(problem, rng=seed)
        assert chk.error <= 1e-6 and chk.symmetry <= 1e-10 and chk.tangency <= 1e-10, chk


def test_check_hessian_catches_a_missing_weingarten_term():
    A = np.diag([1.0, 2.0, 3.0, 4.0])

    class NoCurvature(Sphere):
        def euclidean_to_riemannian_hessian(self, x, egrad, ehess, u):
            return self.projection(x, ehess)

    problem = jitopt.Problem(NoCurvature(4), lambda x: x @ A @ x, lambda x: 2 * A @ x,
                             ehess=lambda x, u: 2 * A @ u)
    assert check_hessian(problem, rng=0).error > 1e-2


# -- the default method -------------------------------------------------------------------

def test_minimize_default_is_rlbfgs_for_a_plain_problem():
    problem = rayleigh(10)
    res = jitopt.minimize(problem, problem.manifold.random_point(0), tol=1e-10)
    ref = rlbfgs(problem, problem.manifold.random_point(0), gtol=1e-10)
    assert res.nit == ref.nit and res.fun == ref.fun
    A = np.diag([3.0, 2.0, 1.0])
    res = jitopt.minimize(lambda x: -x @ A @ x, np.ones(3) / np.sqrt(3),
                          jac=lambda x: -2 * A @ x, manifold=Sphere(3), tol=1e-10)
    assert "n_skipped" in res and abs(res.fun + 3.0) <= 1e-12


def test_typical_distances_bound_the_trust_radius():
    expected = {Sphere(5): np.pi, Stiefel(7, 3): np.sqrt(3), Grassmann(6, 2): np.sqrt(2),
                Orthogonal(4): 2 * np.pi, SPD(3): np.sqrt(6), Euclidean(4): 2.0,
                FixedRankEmbedded(20, 15, 2): 66.0}
    for manifold, dist in expected.items():
        assert manifold.typical_dist == pytest.approx(dist, rel=1e-15), manifold
    problem = completion()
    res = rtr(problem, problem.manifold.random_point(0), gtol=1e-9, history=True)
    delta = res.history["delta"][1:]  # the radius each step used (none at iteration 0)
    assert delta[0] == problem.manifold.typical_dist / 8
    assert delta.max() == problem.manifold.typical_dist


def test_minimize_default_is_rtr_on_the_fixed_rank_matrices():
    problem = completion()
    x0 = problem.manifold.random_point(0)
    res = jitopt.minimize(problem, x0, tol=1e-9)
    ref = rtr(problem, x0, gtol=1e-9)
    assert res.nit == ref.nit and res.fun == ref.fun and res.fun <= 1e-16
    res = jitopt.minimize(lambda x: problem.cost(x), x0, jac=lambda x: problem.egrad(x),
                          manifold=problem.manifold, tol=1e-9)
    assert "nhev" in res and res.fun <= 1e-16


@pytest.mark.parametrize("case", ["so(n)", "spd"])
def test_rlbfgs_isometric_and_manifold_transports_reach_the_same_optimum(case):
    problem = CASES[case]()
    x0 = problem.manifold.random_point(6)
    for transport in ("isometric", "manifold"):
        res = rlbfgs(problem, x0, transport=transport, gtol=1e-10)
        assert res.success and gap(res.fun, problem.fopt) <= 1e-11, transport
        problem.manifold.check_point(res.x, atol=1e-10)


def test_tour_entry():
    from jitopt.tour import riemannian as tour

    method, _, summary, error, _ = tour()
    assert method == "rlbfgs/rcg/rtr" and "FAILED" not in summary and error <= 1e-10


@pytest.mark.parametrize("name", ["rlbfgs", "rcg"])
def test_approximate_wolfe_goes_below_the_rounding_floor_of_value_tests(name):
    problem = pca(Stiefel(20, 3))  # |f| ~ 1e2: plain Wolfe stalls near 1e-8 |g0|
    x0 = problem.manifold.random_point(3)
    g0 = problem.manifold.norm(x0, problem.rgrad(x0))
    plain = SOLVERS[name](problem, x0, gtol=1e-12 * g0, approximate=False, maxiter=5000)
    assert plain.status == Status.SMALL_STEP and plain.stationarity > 1e-10 * g0
    res = SOLVERS[name](problem, x0, gtol=1e-12 * g0, maxiter=5000)
    assert res.stationarity <= 1e-12 * g0 and res.status == Status.CONVERGED


# -- the compiled pieces of rlbfgs and rtr ------------------------------------------------

from jitopt.manifolds import FixedRankEmbedded  # noqa: E402
from jitopt.manifolds import _kernels as manifold_kernels  # noqa: E402
from jitopt.manifolds._stiefel import lie_retraction  # noqa: E402
from jitopt.solvers import _riemannian_kernels as RK  # noqa: E402


def bfgs_inverse(pairs, gamma, dim):
    """The L-BFGS inverse Hessian as an explicit matrix: H <- (I - r s yᵀ) H (I - r y sᵀ)
    + r s sᵀ from H = gamma I, pairs oldest first (Nocedal & Wright, eq. 7.19)."""
    h = gamma * np.eye(dim)
    for s, y in pairs:
        r = 1.0 / (s @ y)
        v = np.eye(dim) - r * np.outer(y, s)
        h = v.T @ h @ v + r * np.outer(s, s)
    return h


@pytest.mark.parametrize("memory", [3, 5])
def test_two_loop_matches_the_explicit_bfgs_matrix(memory):
    rng = np.random.default_rng(0)
    M = Euclidean(6, 2)
    pairs = RK.PairMemory(M.pair_frame(True), memory, (6, 2))
    stored = []
    a = rng.standard_normal((12, 12))
    hess = a @ a.T + np.eye(12)  # pairs of a convex quadratic: positive curvature
    for _ in range(7):  # more pairs than the memory: the oldest are dropped in turn
        s = rng.standard_normal(12)
        y = hess @ s
        assert pairs.add(None, s.reshape(6, 2), y.reshape(6, 2)) is not None
        stored = (stored + [(s, y)])[-memory:]
    g = rng.standard_normal((6, 2))
    expected = -bfgs_inverse(stored, 0.3, 12) @ g.reshape(-1)
    np.testing.assert_allclose(pairs.direction(None, g, 0.3).reshape(-1), expected,
                               rtol=1e-10, atol=1e-12)


def test_two_loop_in_packed_skew_coordinates_of_so_n():
    """On O(n) the pairs keep the entries above the diagonal only; the direction must be
    that of the full skew matrices with the Frobenius product."""
    rng = np.random.default_rng(1)
    n = 5
    M = Orthogonal(n)
    pairs = RK.PairMemory(M.pair_frame(True), 4, (n, n))
    skew = (lambda a: a - a.T)
    stored = []
    for _ in range(4):
        s = skew(rng.standard_normal((n, n)))
        y = s + 0.1 * skew(rng.standard_normal((n, n)))
        assert pairs.add(None, s, y) is not None
        stored.append((s.reshape(-1), y.reshape(-1)))
    g = skew(rng.standard_normal((n, n)))
    expected = -bfgs_inverse(stored, 0.7, n * n) @ g.reshape(-1)
    d = pairs.direction(None, g, 0.7)
    np.testing.assert_allclose(d.reshape(-1), expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(d, -d.T, atol=1e-14)


@pytest.mark.parametrize("manifold", [Stiefel(7, 3), Orthogonal(4), Grassmann(6, 2),
                                      Sphere(5), FixedRankEmbedded(5, 4, 2), Euclidean(3, 2),
                                      Symmetric(3)],
                         ids=repr)
def test_moved_pairs_give_the_bfgs_direction_of_the_transported_pairs(manifold):
    """On the embedded manifolds no pair is projected (Stiefel, O(n), Grassmann and the
    sphere use the normal coordinates of the pairs; the fixed-rank matrices keep theirs
    in the tangent charts and move them in factored form; the others project y only);
    the direction must still be the BFGS direction built from the transported pairs
    (P s, P y), and the curvature recomputed after the move."""
    rng = np.random.default_rng(2)
    x, y = manifold.random_point(3), manifold.random_point(4)
    frame = manifold.pair_frame(False)
    pairs = RK.PairMemory(frame, 3, np.shape(frame.to(x, manifold.projection(x, x))))
    moved = []
    for _ in range(3):
        s = manifold.random_tangent_vector(x, rng)
        t = s + 0.2 * manifold.random_tangent_vector(x, rng)
        assert pairs.add(x, frame.to(x, s), frame.to(x, t)) is not None
        moved.append((manifold.transport(x, y, s).reshape(-1),
                      manifold.transport(x, y, t).reshape(-1)))
    least = pairs.move(x, y)
    assert least > 0 and len(pairs) == 3
    for j, (ms, mt) in zip(pairs.order, moved):
        assert pairs.rho[j] == pytest.approx(1.0 / np.dot(ms, mt), rel=1e-10)
    g = manifold.projection(y, rng.standard_normal(manifold.shape))
    expected = -bfgs_inverse(moved, 0.4, g.size) @ g.reshape(-1)
    d = frame.back(y, pairs.direction(y, frame.to(y, g), 0.4))
    np.testing.assert_allclose(d.reshape(-1), expected, rtol=1e-9, atol=1e-12)


def test_fixed_rank_frame_keeps_its_charts_while_the_factor_cache_moves_on():
    """Coordinates are relative to one chart: once the manifold's cache has dropped a
    point, its factors computed again may differ in sign, so the frame must keep giving
    the chart the coordinates were made in (until told to forget it)."""
    M = FixedRankEmbedded(8, 6, 2)
    frame = M.pair_frame(True)
    x = M.random_point(0)
    u = M.random_tangent_vector(x, rng=1)
    w = frame.to(x, u)
    for seed in range(2, 8):  # more points than the cache holds
        M.tangent_chart(M.random_point(seed))
    np.testing.assert_allclose(frame.back(x, w), u, atol=1e-12)
    fresh = M.tangent_chart(np.array(x))  # an SVD of x: other signs of the factors
    assert not np.allclose(fresh.of(u), w)
    frame.forget(keep=x)
    np.testing.assert_allclose(frame.back(x, w), u, atol=1e-12)


@pytest.mark.parametrize("manifold", [Stiefel(7, 3), Orthogonal(4), Grassmann(6, 2),
                                      Sphere(5), Euclidean(3, 2)], ids=repr)
def test_normal_coordinates_give_the_inner_products_of_the_projections(manifold):
    """<Pu, Pv> = <u, v> - <a_u, a_v> with a_w the normal coordinates of w."""
    normal, size = manifold.normal_coordinates()
    x = manifold.random_point(1)
    w = np.random.default_rng(2).standard_normal((3,) + manifold.shape)
    c = normal(x, np.array([RK.transposed_row(wi) for wi in w]))
    assert c.shape == (3, size)
    proj = np.array([manifold.projection(x, wi).reshape(-1) for wi in w])
    flat = w.reshape(3, -1)
    np.testing.assert_allclose(proj @ proj.T, flat @ flat.T - c @ c.T, atol=1e-12)
    assert FixedRankEmbedded(5, 4, 2).normal_coordinates() is None


@pytest.mark.parametrize("retraction", Orthogonal.retractions)
def test_lie_retraction_is_the_manifold_retraction(retraction):
    M = Orthogonal(6, special=True, retraction=retraction)
    x = M.random_point(5)
    a = np.random.default_rng(6).standard_normal((6, 6))
    omega = 0.7 * (a - a.T)
    np.testing.assert_allclose(lie_retraction(M, x, omega), M.retraction(x, x @ omega),
                               atol=1e-12)


def test_orthogonal_cayley_is_the_cayley_transform():
    """(I - W/2)^-1 (I + W/2) X with W = X Ω Xᵀ, Ω = skew(Xᵀ U), from a dense solve; the
    point stays in SO(n) for any U (not only tangent ones)."""
    M = Orthogonal(7, special=True, retraction="cayley")
    x = M.random_point(7)
    u = 3.0 * np.random.default_rng(8).standard_normal((7, 7))
    a = x.T @ u
    w = x @ (0.5 * (a - a.T)) @ x.T
    expected = np.linalg.solve(np.eye(7) - 0.5 * w, (np.eye(7) + 0.5 * w) @ x)
    y = M.retraction(x, u)
    np.testing.assert_allclose(y, expected, atol=1e-12)
    np.testing.assert_allclose(y, manifold_kernels.cayley_retraction(x, u), atol=1e-12)
    assert np.linalg.det(y) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("manifold", [Stiefel(7, 3), Orthogonal(5), Grassmann(6, 2),
                                      Sphere(5), SPD(3)], ids=repr)
def test_hessian_operator_is_the_manifold_hessian(manifold):
    rng = np.random.default_rng(9)
    x = manifold.random_point(10)
    a = rng.standard_normal((x.size, x.size))
    egrad = rng.standard_normal(manifold.shape)
    ehess = (lambda x, u: (a @ u.reshape(-1)).reshape(u.shape))
    u = manifold.random_tangent_vector(x, rng)
    operator = manifold.tangent_chart(x).hessian(egrad, ehess)
    np.testing.assert_allclose(operator(u), manifold.euclidean_to_riemannian_hessian(
        x, egrad, ehess(x, u), u), atol=1e-12)


def test_rtr_reuses_the_products_of_a_rejected_step():
    """After a rejection tCG runs again from the same point: its products come from the
    last path, so fewer products than inner iterations are evaluated; the fused oracle
    gives every trial point its gradient (one evaluation per outer iteration)."""
    problem = procrustes(8)
    res = rtr(problem, rng=0, delta0=8.0, gtol=1e-10)
    assert res.success and gap(res.fun, problem.fopt) < 1e-10
    assert res.n_rejected > 0
    assert res.nhev < res.ninner
    assert res.nfev == res.njev == res.nit + 1
