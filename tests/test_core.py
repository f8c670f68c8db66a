"""The shared interface: problems and counting, results, callbacks, the registry, minimize."""

import numpy as np
import pytest
import scipy.optimize

import jitopt
from jitopt import problems
from jitopt.manifolds import Euclidean, Sphere, Stiefel


def rayleigh(n=6, seed=0):
    """-xᵀAx on the sphere: optimum -λ_max."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, n))
    a = a + a.T
    return a, -np.linalg.eigvalsh(a)[-1]


class CountingOracle:
    """Wraps a function and counts its calls independently of jitopt's counters."""

    def __init__(self, f):
        self.f = f
        self.calls = 0

    def __call__(self, *args):
        self.calls += 1
        return self.f(*args)


# -- Problem and oracle counting ---------------------------------------------------------


def test_counters_match_a_counting_wrapper():
    a, _ = rayleigh()
    cost = CountingOracle(lambda x: -x @ a @ x)
    egrad = CountingOracle(lambda x: -2 * a @ x)
    problem = jitopt.Problem(Sphere(6), cost, egrad)
    res = jitopt.solvers.rgd(problem, rng=0, gtol=1e-10)
    assert res.success
    assert res.nfev == cost.calls and res.njev == egrad.calls == res.nifo
    assert (problem.counts.nfev, problem.counts.njev) == (cost.calls, egrad.calls)
    # a second solve reports its own calls only
    res2 = jitopt.solvers.rgd(problem, rng=1, gtol=1e-10)
    assert res2.nfev + res.nfev == cost.calls and res2.njev + res.njev == egrad.calls


def test_fused_oracle_counts_both():
    a, _ = rayleigh()
    fused = CountingOracle(lambda x: (-x @ a @ x, -2 * a @ x))
    problem = jitopt.Problem(Sphere(6), None, None, cost_and_egrad=fused)
    res = jitopt.solvers.rgd(problem, rng=0, maxiter=20)
    assert res.nfev == res.njev == fused.calls


def test_finite_sum_problem_means_and_ifo():
    rng = np.random.default_rng(1)
    z = rng.standard_normal((30, 4))
    cost = CountingOracle(lambda x, idx: -np.mean((z[idx] @ x) ** 2))
    egrad = CountingOracle(lambda x, idx: -2 * z[idx].T @ (z[idx] @ x) / len(idx))
    problem = jitopt.FiniteSumProblem(Sphere(4), cost, egrad, 30)
    x = Sphere(4).random_point(0)
    full = problem.cost(x)
    assert full == pytest.approx(-np.mean((z @ x) ** 2), rel=1e-14)
    idx = np.array([3, 7, 7, 20])
    g = problem.egrad(x, idx)
    manual = np.mean([-2 * z[i] * (z[i] @ x) for i in idx], axis=0)
    np.testing.assert_allclose(g, manual, rtol=1e-13)
    problem.egrad(x)
    assert problem.counts.nifo == 4 + 30 and problem.counts.njev == 2
    # rgd on the full sum: optimum is the top eigenvalue of the sample covariance
    res = jitopt.solvers.rgd(problem, rng=0, gtol=1e-9)
    top = np.linalg.eigvalsh(z.T @ z / 30)[-1]
    assert res.fun == pytest.approx(-top, rel=1e-10)
    assert res.nifo == 30 * res.njev
    assert egrad.calls == res.njev + 2


def test_problem_rejects_bad_arguments():
    with pytest.raises(TypeError, match="manifold"):
        jitopt.Problem("sphere", lambda x: 0.0, lambda x: x)
    with pytest.raises(TypeError, match="cost"):
        jitopt.Problem(Sphere(3), 3.0, lambda x: x)
    with pytest.raises(TypeError, match="egrad"):
        jitopt.Problem(Sphere(3), lambda x: 0.0, 3.0)
    with pytest.raises(TypeError, match="egrad is required"):
        jitopt.FiniteSumProblem(Sphere(3), lambda x, i: 0.0, None, 2)
    with pytest.raises(ValueError, match="n_samples"):
        jitopt.FiniteSumProblem(Sphere(3), lambda x, i: 0.0, lambda x, i: x, 0)
    with pytest.raises(TypeError, match="n_samples"):
        jitopt.FiniteSumProblem(Sphere(3), lambda x, i: 0.0, lambda x, i: x, 2.5)


def test_oracle_returning_wrong_shape_is_named():
    problem = jitopt.Problem(Sphere(3), lambda x: float(x[0]), lambda x: np.zeros(4))
    res = jitopt.solvers.rgd(problem, rng=0)
    assert res.status == jitopt.Status.ORACLE_ERROR and not res.success
    assert "egrad must return an array of shape (3,)" in res.message
    problem = jitopt.Problem(Sphere(3), lambda x: np.ones(2), lambda x: x)
    res = jitopt.solvers.rgd(problem, rng=0)
    assert res.status == jitopt.Status.ORACLE_ERROR and "cost must return a scalar" in res.message
    with pytest.raises(jitopt.OracleError, match="cost must return a scalar"):
        problem.cost(np.array([1.0, 0.0, 0.0]))


@pytest.mark.parametrize("where", ["cost", "egrad", "start"])
def test_nonfinite_oracle_stops_with_message(where):
    a, _ = rayleigh()
    calls = {"n": 0}

    def cost(x):
        calls["n"] += 1
        bad = where == "start" or (where == "cost" and calls["n"] > 3)
        return np.nan if bad else -x @ a @ x

    def egrad(x):
        calls["n"] += 1
        if where == "egrad" and calls["n"] > 5:
            return np.full(6, np.inf)
        return -2 * a @ x

    x0 = Sphere(6).random_point(0)
    res = jitopt.solvers.rgd(jitopt.Problem(Sphere(6), cost, egrad), x0)
    assert not res.success
    assert res.status == jitopt.Status.NONFINITE
    assert "non-finite" in res.message or "nan" in res.message or "not finite" in res.message
    assert np.all(np.isfinite(res.x))
    Sphere(6).check_point(res.x)


# -- results, history and callbacks ------------------------------------------------------


def test_result_fields_and_history():
    a, fopt = rayleigh()
    problem = jitopt.Problem(Sphere(6), lambda x: -x @ a @ x, lambda x: -2 * a @ x)
    res = jitopt.solvers.rgd(problem, rng=0, gtol=1e-9, history=True)
    assert isinstance(res, dict) and res.fun is res["fun"]
    assert repr(res).splitlines()[0].strip().startswith("message:")
    with pytest.raises(AttributeError, match="no_such_field"):
        res.no_such_field
    for key in ("x", "fun", "stationarity", "stationarity_measure", "success", "status",
                "message", "nit", "nfev", "njev", "nifo", "time"):
        assert key in res
    assert res.success and res.status == 0 and res.stationarity <= 1e-9
    assert res.stationarity_measure == "Riemannian gradient norm"
    assert "Riemannian gradient norm" in res.message and "gtol" in res.message
    assert res.fun == pytest.approx(fopt, rel=1e-12)
    h = res.history
    assert list(h) == ["iteration", "time", "fun", "stationarity", "nfev", "njev", "nifo"]
    np.testing.assert_array_equal(h["iteration"], np.arange(res.nit + 1))
    assert h["fun"][-1] == res.fun and h["stationarity"][-1] == res.stationarity
    assert h["nfev"][-1] == res.nfev and h["njev"][-1] == res.njev
    assert np.all(np.diff(h["time"]) >= 0) and np.all(np.diff(h["nfev"]) >= 1)
    assert "history" not in jitopt.solvers.rgd(problem, rng=0)


def test_both_callback_forms_and_stop_iteration():
    a, _ = rayleigh()
    problem = jitopt.Problem(Sphere(6), lambda x: -x @ a @ x, lambda x: -2 * a @ x)
    seen_new, seen_old = [], []

    def new_style(intermediate_result):
        seen_new.append((intermediate_result.nit, intermediate_result.fun))
        intermediate_result.x[:] = 0.0  # a copy: must not disturb the solver

    def old_style(xk):
        seen_old.append(xk.copy())

    r1 = jitopt.solvers.rgd(problem, rng=0, callback=new_style, gtol=1e-8)
    r2 = jitopt.solvers.rgd(problem, rng=0, callback=old_style, gtol=1e-8)
    assert r1.success and r2.success and r1.fun == r2.fun
    assert [n for n, _ in seen_new] == list(range(1, r1.nit + 1))
    assert seen_new[-1][1] == r1.fun
    np.testing.assert_array_equal(seen_old[-1], r2.x)

    def stopper(intermediate_result):
        if intermediate_result.nit == 3:
            raise StopIteration

    r3 = jitopt.solvers.rgd(problem, rng=0, callback=stopper)
    assert r3.status == 99 and not r3.success and r3.nit == 3
    assert r3.message == "`callback` raised `StopIteration`."
    with pytest.raises(TypeError, match="callback"):
        jitopt.solvers.rgd(problem, rng=0, callback=5)


def test_status_table_and_default_messages():
    S = jitopt.Status
    assert [s for s in S if s.success] == [S.CONVERGED, S.TARGET, S.SCHEDULE_DONE]
    assert len({int(s) for s in S}) == len(S) and S.CALLBACK == 99 and S.CONVERGED == 0
    assert S.MAXITER.describe(maxiter=7, measure="certified gap", stationarity=0.5) == \
        "Maximum number of iterations (maxiter = 7) reached; certified gap 5.000e-01."
    assert S.MAXITER.describe() == "Maximum number of iterations reached."  # values missing
    assert S.TARGET.describe(fun=-2.5, f_target=-2.0) == \
        "Optimization terminated successfully: cost -2.5 <= f_target = -2."


def test_faults_keep_the_best_iterate_and_name_the_iteration():
    a, _ = rayleigh()
    calls = {"n": 0}

    def egrad(x):
        calls["n"] += 1
        if calls["n"] == 6:
            raise ZeroDivisionError("at the sixth gradient")
        return -2 * a @ x

    x0 = Sphere(6).random_point(0)
    res = jitopt.solvers.rgd(jitopt.Problem(Sphere(6), lambda x: -x @ a @ x, egrad), x0,
                             history=True)
    assert res.status == jitopt.Status.ORACLE_ERROR and not res.success
    assert "egrad raised an exception at iteration 5" in res.message
    assert "ZeroDivisionError: at the sixth gradient" in res.message
    assert isinstance(res.fault.__cause__, ZeroDivisionError)
    h = res.history
    assert res.nit == h["iteration"][-1] == 4 and res.fun == h["fun"].min()
    calls["n"] = 0
    clean = jitopt.solvers.rgd(jitopt.Problem(Sphere(6), lambda x: -x @ a @ x, egrad), x0,
                               maxiter=4)
    best = int(np.argmin(h["fun"]))
    if best == 4:
        np.testing.assert_array_equal(res.x, clean.x)
    assert -res.x @ a @ res.x == pytest.approx(res.fun, rel=1e-14)
    # a callback that raises is a user function that raised
    res = jitopt.solvers.rgd(jitopt.Problem(Sphere(6), lambda x: -x @ a @ x, lambda x: -2 * a @ x),
                             x0, callback=lambda xk: 1 / 0)
    assert res.status == jitopt.Status.ORACLE_ERROR and "callback raised" in res.message
    assert res.nit == 1 and np.all(np.isfinite(res.x))


# -- registry and minimize ---------------------------------------------------------------


def pca_data(n=8, p=3, seed=0):
    a = jitopt.problems.spectrum_matrix(n, rng=seed)
    fopt = -np.linalg.eigvalsh(a)[::-1][:p].sum()
    x0 = Stiefel(n, p).random_point(seed + 1)
    return a, fopt, x0


def test_minimize_and_scipy_minimize_agree():
    a, fopt, x0 = pca_data()
    manifold = Stiefel(8, 3)

    def fun(x, scale):
        x = x.reshape(8, 3)
        return -scale * np.sum(x * (a @ x))

    def jac(x, scale):
        return (-2 * scale * a @ x.reshape(8, 3)).reshape(np.shape(x))

    ours = jitopt.minimize(fun, x0, args=(2.0,), jac=jac, method="rgd", manifold=manifold,
                           tol=1e-9)
    theirs = scipy.optimize.minimize(fun, x0.ravel(), args=(2.0,), jac=jac,
                                     method=jitopt.get_method("rgd"), tol=1e-9,
                                     options={"manifold": manifold})
    assert ours.success and theirs.success
    assert ours.x.shape == (8, 3) and theirs.x.shape == (24,)
    assert ours.fun == pytest.approx(2 * fopt, rel=1e-10)
    np.testing.assert_allclose(theirs.x.reshape(8, 3), ours.x, atol=1e-12)
    assert ours.nit == theirs.nit and ours.nfev == theirs.nfev


def test_minimize_jac_true_and_finite_differences():
    a, fopt = rayleigh(5)
    x0 = Sphere(5).random_point(3)
    fused = jitopt.minimize(lambda x: (-x @ a @ x, -2 * a @ x), x0, jac=True,
                            manifold=Sphere(5), tol=1e-9)
    assert fused.fun == pytest.approx(fopt, rel=1e-12)
    fd = jitopt.minimize(lambda x: -x @ a @ x, x0, manifold=Sphere(5), tol=1e-5)
    assert fd.fun == pytest.approx(fopt, rel=1e-8)
    # forward differences cost x.size extra evaluations per gradient, all counted
    assert fd.nfev >= fd.njev * 6


def test_minimize_euclidean_default_and_scipy_callbacks():
    def fun(x):
        return np.sum((x - 3.0) ** 2) + x[0] ** 4

    def jac(x):
        g = 2 * (x - 3.0)
        g[0] += 4 * x[0] ** 3
        return g

    ref = scipy.optimize.minimize(fun, np.zeros(3), jac=jac, method="BFGS", tol=1e-12)
    seen = []
    res = jitopt.minimize(fun, np.zeros(3), jac=jac, tol=1e-10,
                          callback=lambda intermediate_result: seen.append(
                              intermediate_result.fun))
    np.testing.assert_allclose(res.x, ref.x, atol=1e-8)
    assert seen[-1] == res.fun

    def stop(xk):
        raise StopIteration

    res = scipy.optimize.minimize(fun, np.zeros(3), jac=jac,
                                  method=jitopt.get_method("rgd"), callback=stop)
    assert res.status == 99 and not res.success


def test_callbacks_see_points_in_the_shape_of_x0():
    a, _, x0 = pca_data()
    shapes = []
    scipy.optimize.minimize(lambda x: -np.sum(x.reshape(8, 3) * (a @ x.reshape(8, 3))),
                            x0.ravel(), jac=lambda x: (-2 * a @ x.reshape(8, 3)).ravel(),
                            method=jitopt.get_method("rgd"),
                            options={"manifold": Stiefel(8, 3), "maxiter": 3},
                            callback=lambda xk: shapes.append(xk.shape))
    jitopt.minimize(lambda x: -np.sum(x * (a @ x)), x0, jac=lambda x: -2 * a @ x,
                    manifold=Stiefel(8, 3), options={"maxiter": 3},
                    callback=lambda intermediate_result: shapes.append(
                        intermediate_result.x.shape))
    assert shapes == [(24,)] * 3 + [(8, 3)] * 3


def test_registry_and_unknown_options():
    assert "rgd" in jitopt.available_methods()
    assert jitopt.get_method("RGD") is jitopt.get_method("rgd")
    with pytest.raises(ValueError, match="Unknown method 'newton'"):
        jitopt.minimize(lambda x: x @ x, np.ones(2), method="newton")
    with pytest.raises(TypeError, match="method"):
        jitopt.get_method(3)
    with pytest.warns(scipy.optimize.OptimizeWarning, match="Unknown solver options: foo"):
        res = jitopt.minimize(lambda x: x @ x, np.ones(2), jac=lambda x: 2 * x,
                              options={"foo": 1})
    assert res.success and np.allclose(res.x, 0, atol=1e-6)
    with pytest.raises(ValueError, match="bounds"):
        scipy.optimize.minimize(lambda x: x @ x, np.ones(2), jac=lambda x: 2 * x,
                                method=jitopt.get_method("rgd"), bounds=[(0, 1), (0, 1)])


def test_minimize_bad_input_is_named_and_inputs_untouched():
    a, _, x0 = pca_data()
    x0_copy = x0.copy()
    manifold = Stiefel(8, 3)

    def fun(x):
        return -np.sum(x * (a @ x))

    def jac(x):
        return -2 * a @ x

    with pytest.raises(ValueError, match="x0 is not a point of Stiefel"):
        jitopt.minimize(fun, 2 * x0, jac=jac, manifold=manifold)
    with pytest.raises(ValueError, match="x0 must have shape"):
        jitopt.minimize(fun, x0[:, :2], jac=jac, manifold=manifold)
    bad = x0.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="x0 contains NaN"):
        jitopt.minimize(fun, bad, jac=jac, manifold=manifold)
    with pytest.raises(ValueError, match=r"^tol must be in"):
        jitopt.minimize(fun, x0, jac=jac, manifold=manifold, tol=-1.0)
    with pytest.raises(TypeError, match="'r-srvrg' takes a FiniteSumProblem"):
        jitopt.minimize(fun, x0, jac=jac, manifold=manifold, method="r-srvrg")
    with pytest.raises(TypeError, match="manifold"):
        jitopt.minimize(fun, x0, jac=jac, manifold="stiefel")
    with pytest.raises(ValueError, match="jac"):
        jitopt.minimize(fun, x0, jac="3-point", manifold=manifold)
    with pytest.raises(TypeError, match="fun"):
        jitopt.minimize(None, x0, manifold=manifold)
    res = jitopt.minimize(fun, x0, jac=jac, manifold=manifold)
    assert res.success
    np.testing.assert_array_equal(x0, x0_copy)


def test_minimize_takes_problem_objects_and_dispatches_by_type():
    problem = problems.pca(np.diag([5.0, 4.0, 1.0, 0.5]), 2)
    direct = jitopt.solvers.rlbfgs(problem, rng=0, gtol=1e-9)
    via = jitopt.minimize(problem, tol=1e-9, options={"rng": 0})  # rlbfgs: the default
    np.testing.assert_array_equal(via.x, direct.x)
    assert (via.fun, via.nit, via.nfev) == (direct.fun, direct.nit, direct.nfev)
    assert via.fun == pytest.approx(-9.0, rel=1e-12) and "gtol = 1e-09" in via.message
    z = problems.spiked_samples(50, 4, (3.0, 2.0), rng=0)
    finite = problems.finite_sum_pca(z, 1)
    plain = jitopt.available_methods(problem)
    assert "rgd" in plain and "rsdm" in plain and "srge" not in plain
    assert set(plain) < set(jitopt.available_methods(finite))
    assert "r-srvrg" in jitopt.available_methods(finite)
    assert set(jitopt.available_methods()) >= set(jitopt.available_methods(finite))
    with pytest.raises(TypeError, match="FiniteSumProblem for method 'r-srvrg', got a Problem"):
        jitopt.minimize(problem, method="r-srvrg")
    with pytest.raises(TypeError, match="FiniteSumProblem for method 'srge', got a Problem"):
        jitopt.solvers.srge(problem)
    with pytest.raises(TypeError, match="jac cannot be given with a problem object"):
        jitopt.minimize(problem, jac=lambda x: x)
    with pytest.raises(TypeError, match="x0 is required"):
        jitopt.minimize(lambda x: 0.0)


def test_euclidean_manifold_shapes():
    m = Euclidean(3, 2)
    assert m.shape == (3, 2) and m.dim == 6
    res = jitopt.minimize(lambda x: np.sum((x - 1) ** 2), np.zeros((3, 2)),
                          jac=lambda x: 2 * (x - 1), tol=1e-10)
    assert res.x.shape == (3, 2)
    np.testing.assert_allclose(res.x, 1.0, atol=1e-10)


def test_jitted_oracles_work_like_python_ones():
    from numba import njit

    a, fopt = rayleigh()

    @njit
    def cost(x):
        return -x @ (a @ x)

    @njit
    def egrad(x):
        return -2.0 * (a @ x)

    x0 = Sphere(6).random_point(2)
    jitted = jitopt.minimize(cost, x0, jac=egrad, manifold=Sphere(6), tol=1e-10)
    plain = jitopt.minimize(getattr(cost, "py_func", cost), x0,  # (no py_func without the JIT)
                            jac=getattr(egrad, "py_func", egrad), manifold=Sphere(6), tol=1e-10)
    assert jitted.fun == pytest.approx(fopt, rel=1e-12)
    np.testing.assert_allclose(jitted.x, plain.x, atol=1e-12)
    assert jitted.nit == plain.nit


def test_check_array():
    from jitopt.validation import check_array

    a = np.array([[1, 2], [3, 4]])
    out = check_array("a", a, ndim=2)
    assert out.dtype == np.float64 and out.flags.c_contiguous and out.flags.writeable
    out[0, 0] = 9.0
    assert a[0, 0] == 1  # a copy: the caller's array is untouched
    with pytest.raises(ValueError, match=r"a must be a 1-D array, got shape \(2, 2\)"):
        check_array("a", a, ndim=1)
    with pytest.raises(ValueError, match="a must be finite"):
        check_array("a", [1.0, np.nan])
    with pytest.raises(TypeError, match="a must be real"):
        check_array("a", [1j])
    with pytest.raises(TypeError, match="a must be an array of real numbers"):
        check_array("a", ["x", "y"])


@pytest.mark.parametrize("n, m", [(1, 1), (5, 3), (12, 1)])
def test_compiled_solve_matches_numpy_and_leaves_its_inputs(n, m):
    from jitopt._lapack import solve

    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, n)) + n * np.eye(n)
    b = np.asfortranarray(rng.standard_normal((n, m)))  # (any layout)
    a0, b0 = a.copy(), b.copy()
    x = solve(a, b)
    assert np.allclose(a @ x, b, rtol=0, atol=1e-12 * np.abs(b).max())
    assert np.allclose(x, np.linalg.solve(a, b), rtol=1e-12, atol=1e-14)
    assert np.array_equal(a, a0) and np.array_equal(b, b0)


def test_compiled_solve_raises_on_a_singular_matrix():
    from jitopt._lapack import solve

    with pytest.raises(np.linalg.LinAlgError, match="singular"):
        solve(np.array([[1.0, 2.0], [2.0, 4.0]]), np.eye(2))
