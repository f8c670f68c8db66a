"""Constrained problems on manifolds and the methods ralm and repm, against known answers:
the Perron vector of nonnegative PCA, the projection onto a polyhedral cone found by
enumerating its faces, an equality-constrained eigenspace on Stiefel, infeasible sets."""

import itertools

import numpy as np
import pytest
import scipy.optimize

import jitopt
from jitopt import ConstrainedProblem, Status
from jitopt.manifolds import Sphere, Stiefel

METHODS = [("ralm", {}), ("repm", {}), ("repm", {"smoothing": "lse"})]
IDS = ["ralm", "repm-lqh", "repm-lse"]


def solve(method, problem, x0, **options):
    return jitopt.get_method(method).solver(problem, x0, **options)


def check_certified(problem, res, gtol, ctol):
    """The result's KKT parts are those of its point and multipliers, within the
    tolerances."""
    assert res.success and res.status == Status.CONVERGED, res.message
    assert res.max_violation <= ctol and problem.violation(res.x) <= ctol
    kkt = problem.kkt(res.x, res.ineq_multipliers, res.eq_multipliers)
    assert kkt["kkt_residual"] == pytest.approx(res.stationarity, rel=1e-9, abs=1e-14)
    assert res.stationarity <= gtol
    assert res.fun == problem.objective.cost(res.x)


def positive_matrix(n, seed):
    B = np.random.default_rng(seed).uniform(0.05, 1.0, (n, n))
    return B + B.T


@pytest.mark.parametrize("method, options", METHODS, ids=IDS)
def test_nonnegative_pca_of_a_positive_matrix_is_its_perron_vector(method, options):
    # Perron-Frobenius: the top eigenvector of an entrywise positive matrix is positive,
    # so x >= 0 is inactive at the answer and the multipliers vanish
    n = 10
    A = positive_matrix(n, 1)
    w, V = np.linalg.eigh(A)
    v = V[:, -1] * np.sign(V[0, -1])
    problem = ConstrainedProblem(Sphere(n), lambda x: -x @ A @ x, lambda x: -2 * A @ x,
                                 lower=0.0)
    x0 = v + 0.8 * np.r_[-1.0, 1.0, -1.0, np.zeros(n - 3)]  # infeasible, positive overlap
    res = solve(method, problem, x0 / np.linalg.norm(x0), ctol=1e-8, **options)
    check_certified(problem, res, 1e-6, 1e-8)
    assert res.fun == pytest.approx(-w[-1], abs=1e-10)
    np.testing.assert_allclose(res.x, v, atol=1e-6)
    np.testing.assert_allclose(res.ineq_multipliers, 0.0, atol=1e-6)


def cone_projection(C, y):
    """The projection of ``y`` onto the cone ``{x : C x <= 0}`` and its multipliers
    ``nu >= 0`` (``y - proj = C^T nu``), by enumerating the faces: the nearest feasible
    projection onto a face ``{C_S x = 0}`` whose multipliers are nonnegative."""
    m, n = C.shape
    best = None
    for k in range(m + 1):
        for S in map(list, itertools.combinations(range(m), k)):
            CS = C[S]
            nu_S = np.linalg.lstsq(CS @ CS.T, CS @ y, rcond=None)[0] if S else np.zeros(0)
            x = y - CS.T @ nu_S
            if np.all(C @ x <= 1e-12) and np.all(nu_S >= -1e-12):
                if best is None or np.linalg.norm(x - y) < np.linalg.norm(best[0] - y):
                    nu = np.zeros(m)
                    nu[S] = nu_S
                    best = (x, nu)
    return best


@pytest.mark.parametrize("method, options", METHODS, ids=IDS)
def test_linear_cost_on_sphere_and_cone_matches_the_enumerated_projection(method, options):
    # max <y, x> on the sphere within {C x <= 0}: x* = P(y)/|P(y)| (Moreau), and the
    # multipliers of g = C x are those of the projection, nu: grad L = -y + C^T nu = -P(y),
    # normal to the sphere at x*
    rng = np.random.default_rng(4)
    C = rng.standard_normal((4, 3))
    y = rng.standard_normal(3)
    px, nu = cone_projection(C, y)
    assert np.linalg.norm(px) > 0.1 and np.count_nonzero(nu) >= 1  # an active constraint
    problem = ConstrainedProblem(Sphere(3), lambda x: -y @ x, lambda x: -y,
                                 ineq=lambda x: C @ x, ineq_egrad=lambda x: C)
    res = solve(method, problem, Sphere(3).random_point(0), ctol=1e-8, **options)
    check_certified(problem, res, 1e-6, 1e-8)
    np.testing.assert_allclose(res.x, px / np.linalg.norm(px), atol=1e-6)
    np.testing.assert_allclose(res.ineq_multipliers, nu, atol=1e-5)


@pytest.mark.parametrize("method, options", METHODS, ids=IDS)
def test_orthant_answer_and_multipliers(method, options):
    # max <y, x> on the sphere with x >= 0: x* = y+/|y+|; with g = -x, grad L = -y - mu +
    # c x = 0 (c x normal to the sphere), so mu_i = -y_i where y_i < 0
    y = np.array([1.0, -0.5, 2.0, -1.5, 0.3])
    yp = np.maximum(y, 0.0)
    problem = ConstrainedProblem(Sphere(5), lambda x: -y @ x, lambda x: -y, lower=0.0)
    res = solve(method, problem, Sphere(5).random_point(2), ctol=1e-8, **options)
    check_certified(problem, res, 1e-6, 1e-8)
    np.testing.assert_allclose(res.x, yp / np.linalg.norm(yp), atol=1e-5)  # KKT 1e-6
    np.testing.assert_allclose(res.ineq_multipliers, np.maximum(-y, 0.0), atol=1e-5)
    # a KKT residual r allows a gap of about r times the active multipliers (LSE ends
    # strictly feasible, at complementarity r)
    assert res.fun == pytest.approx(-np.linalg.norm(yp), abs=1e-5)


@pytest.mark.parametrize("method, options", METHODS, ids=IDS)
def test_eigenspace_on_stiefel_orthogonal_to_given_columns(method, options):
    # min -tr(X^T A X) on St(n, p) with W^T X = 0: the top-p eigenspace of A compressed
    # to the complement of W, multipliers 2 W^T A X (equality, vector-Jacobian form)
    n, p, q = 8, 2, 2
    rng = np.random.default_rng(7)
    Q = np.linalg.qr(rng.standard_normal((n, n)))[0]
    A = (Q * np.linspace(3.0, 0.0, n)) @ Q.T
    W = np.linalg.qr(rng.standard_normal((n, q)))[0]
    U = np.linalg.svd(np.eye(n) - W @ W.T)[0][:, :n - q]  # a basis of the complement
    lam, E = np.linalg.eigh(U.T @ A @ U)
    assert lam[-p] - lam[-p - 1] >= 0.3  # a spectral gap: one answer
    top = U @ E[:, -p:]
    problem = ConstrainedProblem(
        Stiefel(n, p), lambda X: -np.sum(X * (A @ X)), lambda X: -2 * A @ X,
        eq=lambda X: (W.T @ X).ravel(), eq_vjp=lambda X, v: W @ v.reshape(q, p))
    res = solve(method, problem, Stiefel(n, p).random_point(3), ctol=1e-8, **options)
    check_certified(problem, res, 1e-6, 1e-8)
    assert res.fun == pytest.approx(-lam[-p:].sum(), abs=1e-7)
    np.testing.assert_allclose(res.x @ res.x.T, top @ top.T, atol=1e-6)
    np.testing.assert_allclose(res.eq_multipliers, (2 * W.T @ A @ res.x).ravel(), atol=1e-5)


@pytest.mark.parametrize("method, options", METHODS, ids=IDS)
def test_an_infeasible_problem_ends_infeasible(method, options):
    # x >= 0 on the sphere with sum(x) <= -0.5: no point is feasible
    A = positive_matrix(4, 2)
    problem = ConstrainedProblem(Sphere(4), lambda x: -x @ A @ x, lambda x: -2 * A @ x,
                                 lower=0.0, ineq=lambda x: np.array([x.sum() + 0.5]),
                                 ineq_egrad=lambda x: np.ones((1, 4)))
    res = solve(method, problem, Sphere(4).random_point(0), **options)
    assert res.status == Status.INFEASIBLE and not res.success, res.message
    assert res.max_violation > 0.1 and f"{res.max_violation:.2e}" in res.message
    assert np.all(np.isfinite(res.x)) and np.isfinite(res.fun)


def test_the_box_too_tight_for_the_sphere_is_infeasible():
    problem = ConstrainedProblem(Sphere(3), lambda x: x[0], lambda x: np.eye(3)[0],
                                 lower=-0.3, upper=0.3)
    res = jitopt.minimize(problem, options={"rng": 0})
    assert res.status == Status.INFEASIBLE and not res.success, res.message


def test_counts_are_the_user_oracle_calls():
    calls = {"ineq": 0, "ineq_vjp": 0, "cost": 0, "egrad": 0}

    def counted(name, f):
        def wrapped(*args):
            calls[name] += 1
            return f(*args)
        return wrapped

    y = np.array([2.0, 1.0, -1.0])
    problem = ConstrainedProblem(
        Sphere(3), counted("cost", lambda x: -y @ x), counted("egrad", lambda x: -y),
        ineq=counted("ineq", lambda x: np.array([x[0] - 0.5])),
        ineq_vjp=counted("ineq_vjp", lambda x, w: np.array([w[0], 0.0, 0.0])))
    res = jitopt.minimize(problem, np.array([0.0, 1.0, 0.0]))
    assert res.success, res.message
    assert (res.nfev, res.njev, res.ncev, res.ncjev) == \
        (calls["cost"], calls["egrad"], calls["ineq"], calls["ineq_vjp"])
    assert res.ncev > res.nit and res.ncjev > 0
    assert problem.counts.ncev == res.ncev


def test_same_seed_same_result_and_default_method():
    A = positive_matrix(6, 3)
    results = []
    for _ in range(2):
        problem = ConstrainedProblem(Sphere(6), lambda x: -x @ A @ x, lambda x: -2 * A @ x,
                                     lower=0.0)
        results.append(jitopt.minimize(problem, options={"rng": 11}))
    a, b = results
    np.testing.assert_array_equal(a.x, b.x)
    assert (a.fun, a.nit, a.nfev, a.ncev, a.inner_nit) == (b.fun, b.nit, b.nfev, b.ncev,
                                                            b.inner_nit)
    direct = jitopt.solvers.ralm(problem, rng=11)
    np.testing.assert_array_equal(direct.x, a.x)


def test_the_first_penalty_pulls_three_times_as_hard_as_the_cost():
    # rho_0 = 3 |grad f(x0)| / |grad P(x0)|, P = (|g+|^2 + |h|^2) / 2, Riemannian gradients
    # (on the sphere the projections of the Euclidean ones); 1 from a feasible start
    A = 3.0 * positive_matrix(4, 4)
    x0 = np.array([0.8, -0.6, 0.0, 0.0])
    proj = np.eye(4) - np.outer(x0, x0)
    gplus = np.maximum(-0.1 - x0, 0.0)  # lower = -0.1: g = -0.1 - x, gradient -e_i
    h = x0[2] + x0[3] - 1.0
    pull = np.linalg.norm(proj @ (-gplus + h * np.array([0.0, 0.0, 1.0, 1.0])))
    rule = 3 * np.linalg.norm(proj @ (-2 * A @ x0)) / pull
    for start, options, rho0 in [(x0, {}, rule), (x0, {"rho": 2.5}, 2.5),
                                 (x0, {"rho_max": 1.5}, 1.5), (np.eye(4)[2], {}, 1.0)]:
        problem = ConstrainedProblem(Sphere(4), lambda x: -x @ A @ x, lambda x: -2 * A @ x,
                                     lower=-0.1, eq=lambda x: np.array([x[2] + x[3] - 1.0]),
                                     eq_egrad=lambda x: np.array([[0.0, 0.0, 1.0, 1.0]]))
        res = jitopt.solvers.ralm(problem, start, history=True, maxiter=1, **options)
        assert res.history["rho"][0] == pytest.approx(rho0, rel=1e-12)


def test_rlbfgs_keeps_its_memory_from_one_solve_to_the_next():
    # a sequence of quadratics 1/2 x^T A x - b_k^T x (one curvature, moving minimizers
    # A^-1 b_k), each solved from where the last ended, with the memory kept or not
    from jitopt.solvers._rlbfgs import Sequence

    rng = np.random.default_rng(2)
    B = rng.standard_normal((12, 12))
    A = B @ B.T + np.eye(12)
    M = jitopt.manifolds.Euclidean(12)
    sequence, x = Sequence({"memory": 4}), np.zeros(12)
    for k, keep in enumerate([False, True, True, False, True]):
        b = rng.standard_normal(12)
        problem = jitopt.Problem(M, lambda x, b=b: 0.5 * x @ A @ x - b @ x,
                                 lambda x, b=b: A @ x - b)
        res = sequence.solve(problem, x, keep and k > 0, 1e-10, 500, np.inf)
        assert res.success, res.message
        np.testing.assert_allclose(res.x, np.linalg.solve(A, b), atol=1e-9)
        x = res.x


@pytest.mark.parametrize("inner", ["rcg", "rtr", "rgd"])
def test_every_smooth_inner_method(inner):
    A = positive_matrix(5, 5)
    problem = ConstrainedProblem(Sphere(5), lambda x: -x @ A @ x, lambda x: -2 * A @ x,
                                 lower=0.0)
    res = jitopt.solvers.ralm(problem, Sphere(5).random_point(1), inner=inner,
                              inner_maxiter=2000)
    check_certified(problem, res, 1e-6, 1e-6)
    assert res.fun == pytest.approx(-np.linalg.eigvalsh(A)[-1], abs=1e-9)


def test_unconstrained_methods_refuse_a_constrained_problem():
    problem = ConstrainedProblem(Sphere(3), lambda x: x[0], lambda x: np.eye(3)[0],
                                 lower=0.0)
    for method in ("rlbfgs", "rgd", "rtr", "rcg", "rsdm", "srge", "iht"):
        with pytest.raises(TypeError, match="got a ConstrainedProblem; the methods that take "
                                            "a ConstrainedProblem: ralm, repm"):
            jitopt.minimize(problem, method=method)
    assert jitopt.available_methods(problem) == ("ralm", "repm")
    assert not isinstance(problem, jitopt.Problem)
    with pytest.raises(ValueError, match="takes no bounds or constraints"):
        jitopt.get_method("rlbfgs")(lambda x: x @ x, np.ones(2), constraints=[{}])


def test_bad_problems_are_refused_naming_the_argument():
    M, f, g = Sphere(3), (lambda x: x[0]), (lambda x: np.eye(3)[0])
    with pytest.raises(TypeError, match="needs constraints"):
        ConstrainedProblem(M, f, g)
    with pytest.raises(TypeError, match="exactly one gradient oracle"):
        ConstrainedProblem(M, f, g, ineq=lambda x: x)
    with pytest.raises(TypeError, match="exactly one gradient oracle"):
        ConstrainedProblem(M, f, g, eq=lambda x: x, eq_egrad=lambda x: np.eye(3),
                           eq_vjp=lambda x, v: v)
    with pytest.raises(TypeError, match="ineq_egrad and ineq_vjp need ineq"):
        ConstrainedProblem(M, f, g, ineq_egrad=lambda x: x, lower=0.0)
    with pytest.raises(TypeError, match="ineq must be callable"):
        ConstrainedProblem(M, f, g, ineq=3.0, ineq_vjp=lambda x, w: x)
    with pytest.raises(ValueError, match="lower must be a scalar or of shape"):
        ConstrainedProblem(M, f, g, lower=np.zeros(2))
    with pytest.raises(ValueError, match="upper must be real"):
        ConstrainedProblem(M, f, g, upper=np.nan)
    with pytest.raises(ValueError, match="lower must be at most upper"):
        ConstrainedProblem(M, f, g, lower=1.0, upper=0.0)
    with pytest.raises(ValueError, match="lower and upper need a real manifold"):
        ConstrainedProblem(jitopt.manifolds.ComplexCircle(3), lambda z: 0.0,
                           lambda z: np.zeros(3, complex), lower=0.0)
    problem = ConstrainedProblem(M, f, g, lower=0.0)
    with pytest.raises(ValueError, match=r"x must have shape \(3,\)"):
        problem.violation(np.zeros(2))
    with pytest.raises(ValueError, match="multipliers must have shapes"):
        problem.kkt(np.array([1.0, 0.0, 0.0]), np.zeros(2), np.zeros(0))


def test_bad_options_are_refused_before_the_start():
    problem = ConstrainedProblem(Sphere(3), lambda x: x[0], lambda x: np.eye(3)[0],
                                 lower=0.0)
    x0 = np.array([0.0, 0.6, 0.8])
    for method, options, error, match in [
            ("ralm", {"inner": "srge"}, ValueError, "inner must name a method"),
            ("ralm", {"inner": "nope"}, ValueError, "Unknown method"),
            ("ralm", {"inner_options": {"gtol": 1.0}}, ValueError, "inner_options"),
            ("ralm", {"inner_options": [1]}, TypeError, "inner_options must be a dict"),
            ("ralm", {"theta_rho": 1.5}, ValueError, "theta_rho"),
            ("ralm", {"bound": -1.0}, ValueError, "bound"),
            ("ralm", {"ctol": -1.0}, ValueError, "ctol"),
            ("ralm", {"inner_maxiter": 0}, ValueError, "inner_maxiter"),
            ("ralm", {"inner_options": {"memory": 0}}, ValueError, "memory"),
            ("ralm", {"rho": 0.0}, ValueError, "rho"),
            ("ralm", {"rho": 2.0, "rho_max": 1.0}, ValueError, "rho_max"),
            ("repm", {"smoothing": "huber"}, ValueError, "smoothing"),
            ("repm", {"u_min": 1.0}, ValueError, "u_min"),
            ("repm", {"eps": 0.0}, ValueError, "eps")]:
        with pytest.raises(error, match=match):
            solve(method, problem, x0, **options)
    with pytest.raises(ValueError, match="x0"):
        solve("ralm", problem, 2 * x0)


def test_faults_of_the_constraint_oracles_become_results():
    sizes = iter([1, 1, 2])
    problem = ConstrainedProblem(Sphere(3), lambda x: x[0], lambda x: np.eye(3)[0],
                                 ineq=lambda x: np.full(next(sizes, 2), x[1]),
                                 ineq_vjp=lambda x, w: np.zeros(3))
    res = jitopt.solvers.ralm(problem, np.array([0.0, 0.6, 0.8]))
    assert res.status == Status.ORACLE_ERROR and "not the 1 of its first call" in res.message
    problem = ConstrainedProblem(Sphere(3), lambda x: x[0], lambda x: np.eye(3)[0],
                                 ineq=lambda x: np.array([x[1]]),
                                 ineq_egrad=lambda x: np.full((1, 3), np.nan))
    res = jitopt.solvers.repm(problem, np.array([0.0, 0.6, 0.8]))
    assert res.status == Status.NONFINITE and "ineq_egrad" in res.message
    problem = ConstrainedProblem(Sphere(3), lambda x: x[0], lambda x: np.eye(3)[0],
                                 ineq=lambda x: np.array([x[1]]),
                                 ineq_egrad=lambda x: np.ones(3))
    res = jitopt.solvers.ralm(problem, np.array([0.0, 0.6, 0.8]))
    assert res.status == Status.ORACLE_ERROR and "shape (1, 3)" in res.message


def test_user_arrays_are_not_modified():
    lower = np.zeros(3)
    x0 = np.array([0.6, -0.8, 0.0])
    keep = x0.copy()
    A = positive_matrix(3, 0)
    problem = ConstrainedProblem(Sphere(3), lambda x: -x @ A @ x, lambda x: -2 * A @ x,
                                 lower=lower)
    jitopt.solvers.repm(problem, x0)
    np.testing.assert_array_equal(x0, keep)
    np.testing.assert_array_equal(lower, 0.0)


def test_a_bound_on_spd_under_its_own_metric():
    # SPD's metric is not the embedding's: the constraint gradients must go through
    # euclidean_to_riemannian_gradient (one outer loop for both methods: ralm here, as
    # repm's SPD runs take seconds). min |X - B|^2 with X_00 <= 1 is B with X_00 = 1
    # (positive definite here), multiplier 2 (B_00 - 1)
    B = np.array([[2.0, 0.5], [0.5, 1.0]])
    upper = np.array([[1.0, np.inf], [np.inf, np.inf]])
    problem = ConstrainedProblem(jitopt.manifolds.SPD(2), lambda X: np.sum((X - B) ** 2),
                                 lambda X: 2 * (X - B), upper=upper)
    res = jitopt.solvers.ralm(problem, np.eye(2), ctol=1e-8)
    check_certified(problem, res, 1e-6, 1e-8)
    np.testing.assert_allclose(res.x, [[1.0, 0.5], [0.5, 1.0]], atol=1e-5)
    np.testing.assert_allclose(res.ineq_multipliers, [2.0], atol=1e-5)


def test_constraints_differentiated_by_jax():
    jnp = pytest.importorskip("jax.numpy")
    rng = np.random.default_rng(4)
    C = rng.standard_normal((4, 3))
    y = rng.standard_normal(3)
    px, nu = cone_projection(C, y)
    for form in ("ineq_egrad", "ineq_vjp"):
        problem = ConstrainedProblem(Sphere(3), lambda x: -y @ x, lambda x: -y,
                                     ineq=lambda x: jnp.asarray(C) @ x, **{form: "jax"})
        res = jitopt.solvers.ralm(problem, Sphere(3).random_point(0), ctol=1e-8)
        check_certified(problem, res, 1e-6, 1e-8)
        np.testing.assert_allclose(res.x, px / np.linalg.norm(px), atol=1e-6)
        np.testing.assert_allclose(res.ineq_multipliers, nu, atol=1e-5)
    with pytest.raises(TypeError, match="takes no other gradient oracle"):
        ConstrainedProblem(Sphere(3), lambda x: x[0], lambda x: np.eye(3)[0],
                           eq=lambda x: x, eq_vjp="jax", eq_egrad=lambda x: np.eye(3))
    with pytest.raises(ValueError, match='must be callable, None or "jax"'):
        ConstrainedProblem(Sphere(3), lambda x: x[0], lambda x: np.eye(3)[0],
                           eq=lambda x: x, eq_vjp="autograd")


def test_multipliers_above_the_bound_stall_with_advice_and_converge_when_raised():
    # the orthant answer with multipliers 50 and 80, above ralm's default bound of 20
    y = np.array([100.0, -50.0, 30.0, -80.0])
    problem = ConstrainedProblem(Sphere(4), lambda x: -y @ x, lambda x: -y, lower=0.0)
    x0 = Sphere(4).random_point(0)
    res = jitopt.solvers.ralm(problem, x0)
    if not res.success:  # rho alone may not get there: never a success without the test
        assert res.status == Status.SMALL_STEP and "raise bound" in res.message
        assert res.stationarity > 1e-6
    res = jitopt.solvers.ralm(problem, x0, bound=100.0)
    check_certified(problem, res, 1e-6, 1e-6)
    np.testing.assert_allclose(res.ineq_multipliers, [0.0, 50.0, 0.0, 80.0], atol=1e-4)


def test_repm_raises_rho_at_the_smoothing_floor_until_the_kkt_test_holds():
    # multiplier 3 on x_1 >= 0: at u = u_min the complementarity mu*^2 u / rho exceeds gtol
    # while the violation stays below u, where the paper's rule never raises rho
    y = np.array([1.0, -3.0, 0.5])
    problem = ConstrainedProblem(Sphere(3), lambda x: -y @ x, lambda x: -y, lower=0.0)
    res = jitopt.solvers.repm(problem, Sphere(3).random_point(0))  # LQH
    check_certified(problem, res, 1e-6, 1e-6)
    assert res.rho > 3.0 ** 2 * 1e-6 / 1e-6  # raised past mu*^2 (u_min / gtol = 1)
    np.testing.assert_allclose(res.ineq_multipliers, [0.0, 3.0, 0.0], atol=1e-4)


# -- scipy-style bounds and constraints in jitopt.minimize ---------------------------------

def test_minimize_takes_scipy_constraints_and_runs_ralm():
    A = np.array([[2.0, 1.0, 1.0], [1.0, 3.0, 1.0], [1.0, 1.0, 4.0]])
    perron = np.abs(np.linalg.eigh(A)[1][:, -1])
    # scipy's "ineq" is c(x) >= 0: here x >= 0, from a start with a negative entry
    res = jitopt.minimize(lambda x: -x @ A @ x, np.array([0.6, -0.8, 0.0]),
                          jac=lambda x: -2 * A @ x, manifold=Sphere(3),
                          constraints={"type": "ineq", "fun": lambda x: x,
                                       "jac": lambda x: np.eye(3)})
    assert res.success and res.ncev > 0
    assert np.linalg.norm(res.x - perron) < 1e-6 and res.max_violation <= 1e-6
    # an equality without its Jacobian (forward differences), through scipy's front door:
    # the optimum is the top eigenvector of A restricted to {x_0 = x_1}
    B = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, np.sqrt(2.0)]]) / np.sqrt(2.0)
    w, V = np.linalg.eigh(B.T @ A @ B)
    res = scipy.optimize.minimize(lambda x: -x @ A @ x, np.ones(3) / np.sqrt(3),
                                  method=jitopt.get_method("ralm"),
                                  constraints=[{"type": "eq", "fun": lambda x: x[0] - x[1]}],
                                  options={"manifold": Sphere(3)})
    assert res.success and abs(res.fun + w[-1]) < 1e-6
    assert abs(res.x[0] - res.x[1]) < 1e-6


def test_minimize_takes_scipy_bounds():
    # the box's answer to min |x - 2|^2 is the clipped point
    res = jitopt.minimize(lambda x: (x - 2) @ (x - 2), np.zeros(2), jac=lambda x: 2 * (x - 2),
                          bounds=scipy.optimize.Bounds([0.0, 0.0], [1.0, 3.0]))
    assert res.success and np.allclose(res.x, [1.0, 2.0], atol=1e-6)
    res = jitopt.minimize(lambda x: (x - 2) @ (x - 2), np.zeros(2), jac=lambda x: 2 * (x - 2),
                          bounds=[(None, 0.5), (None, None)], method="repm")
    assert res.success and np.allclose(res.x, [0.5, 2.0], atol=1e-5)


def test_minimize_refuses_bad_bounds_and_constraints():
    f = lambda x: x @ x  # noqa: E731
    with pytest.raises(ValueError, match="'rgd' takes no bounds or constraints"):
        jitopt.minimize(f, np.ones(2), method="rgd", bounds=[(0, 1), (0, 1)])
    with pytest.raises(ValueError, match="one \\(min, max\\) pair per coordinate"):
        jitopt.minimize(f, np.ones(2), bounds=[(0, 1)])
    with pytest.raises(TypeError, match="bounds must be"):
        jitopt.minimize(f, np.ones(2), bounds=3.0)
    with pytest.raises(TypeError, match=r"constraints\[0\] must be a dict"):
        jitopt.minimize(f, np.ones(2), constraints=[{"type": "le", "fun": abs}])
    problem = ConstrainedProblem(Sphere(3), lambda x: x[0], lambda x: np.eye(3)[0], lower=0.0)
    with pytest.raises(TypeError, match="bounds cannot be given with a problem object"):
        jitopt.minimize(problem, bounds=[(0, 1)] * 3)


def test_scipy_constraints_take_their_own_args_not_the_objectives():
    c = np.array([2.0, 2.0])
    res = jitopt.minimize(lambda x, c: (x - c) @ (x - c), np.zeros(2), args=(c,),
                          jac=lambda x, c: 2 * (x - c),
                          constraints=[{"type": "ineq", "fun": lambda x, u: u - x[0],
                                        "jac": lambda x, u: -np.eye(2)[:1], "args": (1.0,)}])
    assert res.success and np.allclose(res.x, [1.0, 2.0], atol=1e-6)  # x_0 <= 1 is active
