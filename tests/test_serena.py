"""SERENA estimators (jitopt.solvers.serena) and the built-in finite-sum problems."""

import math

import numpy as np
import pytest

import jitopt
from jitopt import FiniteSumProblem
from jitopt.problems import (commuting_spd_samples, finite_sum_pca, karcher_mean,
                             leading_eigenvector, robust_pca, spiked_samples)
from jitopt.solvers import serena
from jitopt.solvers.serena import estimator_steps
from jitopt.testing import check_gradient

PRESETS = ("r-sgd", "r-svrg", "r-srg", "r-srm", "r-srvrg", "r-svrrm", "r-hybrid-sgd")
CONSTANT = {"step_schedule": "constant", "beta_schedule": "constant"}


def solver(name):
    return jitopt.get_method(name).solver


def small_pca(n=60, manifold="grassmann"):
    return finite_sum_pca(spiked_samples(n, 6, (3.0, 2.0, 1.5), rng=0), 2, manifold)


def small_karcher(n=40):
    return karcher_mean(commuting_spd_samples(n, 3, rng=1))


class Counting:
    """Wrap an ``egrad(x, idx)`` and count the per-sample gradients it computes."""

    def __init__(self, f):
        self.f, self.samples = f, 0

    def __call__(self, x, idx):
        self.samples += len(idx)
        return self.f(x, idx)


def python_copy(problem, egrad=None):
    """The same problem with Python-level oracles only (no compiled sample kernel)."""
    return FiniteSumProblem(problem.manifold, problem.cost, egrad or problem.egrad,
                            problem.n_samples, fopt=problem.fopt, xopt=problem.xopt)


# -- the built-in problems -------------------------------------------------------------------


@pytest.mark.parametrize("make", [small_pca, lambda: small_pca(manifold="stiefel"),
                                  lambda: leading_eigenvector(spiked_samples(50, 5, rng=2)),
                                  lambda: robust_pca(spiked_samples(50, 5, rng=3), 2, 0.5),
                                  small_karcher])
def test_problem_oracles_mean_gradient_and_optimum(make):
    problem = make()
    M, n = problem.manifold, problem.n_samples
    x = M.random_point(5)
    full = problem.egrad(x)
    singles = np.mean([problem.egrad(x, np.array([i])) for i in range(n)], axis=0)
    np.testing.assert_allclose(singles, full, rtol=1e-12, atol=1e-12)
    assert check_gradient(problem, x, rng=6).slope == pytest.approx(2.0, abs=0.1)
    if problem.fopt is not None:
        assert problem.cost(problem.xopt) == pytest.approx(problem.fopt, rel=1e-12)
        assert M.norm(problem.xopt, problem.rgrad(problem.xopt)) < 1e-9
        # nothing random does better than the claimed optimum
        assert min(problem.cost(M.random_point(s)) for s in range(20)) > problem.fopt


def test_karcher_closed_form_matches_rgd_and_two_point_midpoint():
    problem = small_karcher()
    res = jitopt.solvers.rgd(problem, gtol=1e-11, rng=0)
    np.testing.assert_allclose(res.x, problem.xopt, atol=1e-9)
    a = commuting_spd_samples(2, 3, rng=4)
    two = karcher_mean(a)
    w, v = np.linalg.eigh(a[0])
    s, si = (v * np.sqrt(w)) @ v.T, (v / np.sqrt(w)) @ v.T
    w2, v2 = np.linalg.eigh(si @ a[1] @ si)
    midpoint = s @ ((v2 * np.sqrt(w2)) @ v2.T) @ s  # A # B, the geodesic midpoint
    np.testing.assert_allclose(two.xopt, midpoint, atol=1e-12)
    # non-commuting data: no closed form claimed
    assert karcher_mean(np.stack([np.diag([1.0, 2.0]), [[2.0, 1.0], [1.0, 2.0]]])).fopt is None


def test_problem_bad_input_and_untouched_data():
    z = spiked_samples(20, 4, rng=0)
    keep = z.copy()
    problem = finite_sum_pca(z, 2)
    z[0, 0] = 1e6
    assert not np.array_equal(problem.sample_kernel[1], z)
    np.testing.assert_array_equal(problem.sample_kernel[1], keep)
    with pytest.raises(ValueError, match="Z must be a 2-D"):
        finite_sum_pca(np.ones(5), 1)
    with pytest.raises(ValueError, match="p must be"):
        finite_sum_pca(keep, 5)
    with pytest.raises(ValueError, match="NaN"):
        leading_eigenvector(np.full((3, 2), np.nan))
    with pytest.raises(ValueError, match="eps"):
        robust_pca(keep, 2, eps=0.0)
    with pytest.raises(ValueError, match="positive definite"):
        karcher_mean(-np.eye(2)[None])
    with pytest.raises(ValueError, match="shape"):
        karcher_mean(np.eye(2))


# -- the estimator ---------------------------------------------------------------------------


def rgd_fixed_step(problem, x, eta, steps):
    M = problem.manifold
    for _ in range(steps):
        x = M.retraction(x, -eta * problem.rgrad(x))
    return x


@pytest.mark.parametrize("jit", ["auto", False])
@pytest.mark.parametrize("name", PRESETS)
def test_full_batch_reproduces_gradient_descent(name, jit):
    problem = small_pca(n=49)  # m = 7
    n, eta = problem.n_samples, 0.02
    x0 = problem.manifold.random_point(3)
    res = solver(name)(problem, x0, step_size=eta, batch_size=n, big_batch=n, maxiter=28,
                       max_passes=1e4, gtol=0.0, jit=jit, rng=0, **CONSTANT)
    assert res.nit == 28
    np.testing.assert_allclose(res.x, rgd_fixed_step(problem, x0, eta, 28), atol=1e-10)


def test_full_batch_on_spd_and_decaying_steps():
    problem = small_karcher()
    n, x0 = problem.n_samples, problem.manifold.random_point(2)
    res = solver("r-srvrg")(problem, x0, step_size=0.3, batch_size=n, maxiter=14, gtol=0.0,
                            rng=0)
    np.testing.assert_allclose(res.x, rgd_fixed_step(problem, x0, 0.3, 14), atol=1e-10)
    # R-SGD's default schedule: eta_t = eta0 / (1 + 0.01 t)
    res = solver("r-sgd")(problem, x0, step_size=0.3, batch_size=n, maxiter=12, gtol=0.0,
                          rng=0)
    x, M = x0, problem.manifold
    for t in range(12):
        x = M.retraction(x, -0.3 / (1 + 0.01 * t) * problem.rgrad(x))
    np.testing.assert_allclose(res.x, x, atol=1e-10)


def one_step(problem, x0, x1, s, beta, control=False):
    """The estimate v_1 at x_1 from the kernel and from the Python loop, for the snapshot
    (x_0, grad F(x_0)) and the previous estimate v_0 = -Log_{x_0}(x_1): one step of length
    1 along -v_0 (the exponential retraction of SPD) lands on x_1."""
    M = problem.manifold
    v0 = -M.log(x0, x1)
    g0 = problem.rgrad(x0)
    idx = np.asarray(s, dtype=np.int64)[None]
    args = (x0, v0, x0, g0, idx, np.ones(1), np.full(1, beta))
    fast = estimator_steps(problem, *args, control_variate=control)[1]
    slow = estimator_steps(problem, *args, control_variate=control, jit=False)[1]
    return fast, slow


def test_sarah_recursion_for_beta_zero_and_svrg_unbiased():
    problem = small_karcher(n=30)
    M, n = problem.manifold, problem.n_samples
    x0 = M.random_point(1)
    x1 = M.exp(x0, 0.2 * M.random_tangent_vector(x0, 2))
    # beta = 0: the SARAH recursion v_1 = grad f_S(x_1) + T(v_0 - grad f_S(x_0))
    s = np.array([3, 7, 7, 20])
    fast, slow = one_step(problem, x0, x1, s, 0.0)
    v0 = -M.log(x0, x1)
    hand = problem.rgrad(x1, s) + M.transport(x0, x1, v0 - problem.rgrad(x0, s))
    np.testing.assert_allclose(slow, hand, atol=1e-12)
    np.testing.assert_allclose(fast, hand, atol=1e-10)
    # SVRG (beta = 1, alpha = 1): averaging over all singletons gives grad F(x_1) exactly
    vs = [one_step(problem, x0, x1, [i], 1.0, True)[0] for i in range(n)]
    np.testing.assert_allclose(np.mean(vs, axis=0), problem.rgrad(x1), atol=1e-10)
    # ... and Monte Carlo over random batches of 3 is unbiased within 4 standard errors
    rng = np.random.default_rng(0)
    draws = np.array([one_step(problem, x0, x1, rng.integers(0, n, 3), 1.0, True)[0]
                      for _ in range(300)])
    err = np.abs(draws.mean(0) - problem.rgrad(x1))
    assert np.all(err <= 4 * draws.std(0) / math.sqrt(len(draws)) + 1e-12)
    # while SARAH after a non-gradient v is biased by exactly the carried error
    vs0 = [one_step(problem, x0, x1, [i], 0.0)[0] for i in range(n)]
    bias = np.mean(vs0, axis=0) - problem.rgrad(x1)
    expected = M.transport(x0, x1, v0 - problem.rgrad(x0))
    np.testing.assert_allclose(bias, expected, atol=1e-10)


def reference_run(problem, x0, eta, b, m, epochs, rng, method):
    """Independent loops of R-SVRG, R-SRG and STORM with restarts (source-paper formulas),
    drawing the batches in the solver's order."""
    M, n = problem.manifold, problem.n_samples
    x = x0
    for _ in range(epochs):
        xa = x
        ga = v = problem.rgrad(x)
        idx = rng.integers(0, n, size=(m - 1, b))
        for k in range(m):
            xp, x = x, M.retraction(x, -eta * v)
            if k == m - 1:
                break
            s = idx[k]
            if method == "svrg":
                v = problem.rgrad(x, s) - M.transport(xa, x, problem.rgrad(xa, s) - ga)
            elif method == "sarah":
                v = problem.rgrad(x, s) + M.transport(xp, x, v - problem.rgrad(xp, s))
            else:  # STORM with a = 0.3
                v = problem.rgrad(x, s) + 0.7 * M.transport(xp, x, v - problem.rgrad(xp, s))
    return x


@pytest.mark.parametrize("method, knobs", [
    ("svrg", {"beta": 1.0, "control_variate": True}),
    ("sarah", {"beta": 0.0}),
    ("storm", {"beta": 0.3})])
def test_matches_independent_reference_loops(method, knobs):
    problem = small_pca(n=64)  # b = m = 8
    x0 = problem.manifold.random_point(4)
    res = serena.srge(problem, x0, step_size=0.02, maxiter=24, gtol=0.0, rng=9, **knobs)
    ref = reference_run(problem, x0, 0.02, 8, 8, 3, np.random.default_rng(9), method)
    np.testing.assert_allclose(res.x, ref, atol=1e-10)


@pytest.mark.parametrize("make", [lambda: small_pca(manifold="stiefel"),
                                  lambda: leading_eigenvector(spiked_samples(50, 5, rng=2)),
                                  lambda: robust_pca(spiked_samples(50, 5, rng=3), 2, 0.5),
                                  small_karcher])
def test_numba_and_python_loops_agree_on_every_builtin_problem(make):
    # each problem kind compiles its own oracle into the kernel (PCA and robust PCA share
    # one): check each (retraction, both estimator parts and both transports) against the
    # Python loop
    problem = make()
    x0 = problem.manifold.random_point(1)
    fast, slow = (solver("r-svrrm")(problem, x0, step_size=0.02, maxiter=20, gtol=0.0, rng=2,
                                    jit=jit) for jit in ("auto", False))
    assert (fast.loop, slow.loop) == ("numba", "python")
    assert fast.nit == slow.nit >= 20 and fast.nifo == slow.nifo
    assert np.linalg.norm(fast.x - x0) > 1e-3  # the iterates moved
    np.testing.assert_allclose(fast.x, slow.x, atol=1e-10)
    assert fast.fun == pytest.approx(slow.fun, rel=1e-12)


@pytest.mark.parametrize("name", PRESETS)
def test_ifo_counts_match_counting_wrapper(name):
    base = small_pca(n=64)
    wrapped = Counting(base.egrad)
    problem = python_copy(base, wrapped)
    x0 = base.manifold.random_point(0)
    res = solver(name)(problem, x0, step_size=0.02, maxiter=40, gtol=0.0, rng=1,
                       history=True)
    assert res.loop == "python"
    assert res.nifo == wrapped.samples
    fast = solver(name)(base, x0, step_size=0.02, maxiter=40, gtol=0.0, rng=1)
    assert fast.loop == "numba" and fast.nifo == res.nifo and fast.njev == res.njev
    np.testing.assert_allclose(fast.x, res.x, atol=1e-10)
    # the method's own IFO by the formulas of the theory guide (b = m = 8, n = 64)
    n, b, m, steps = 64, 8, 8, res.nit
    per_step = {"r-sgd": b, "r-svrg": 2 * b, "r-srg": 2 * b, "r-srm": 2 * b,
                "r-srvrg": 3 * b, "r-svrrm": 4 * b, "r-hybrid-sgd": 3 * b}[name]
    if name != "r-sgd":  # epochs: n + (m - 1) steps
        reused = steps // m  # each snapshot reuses a checkpoint's full gradient
        own = reused * (n + (m - 1) * per_step)
    else:  # R-SGD, a single loop: one batch to start, then one per step
        reused, own = 0, b + steps * b
    assert round(res.passes * n) == own
    assert res.nifo == own + n * (len(res.history["nifo"]) - reused)
    np.testing.assert_allclose(res.history["passes"][-1], res.passes)


@pytest.mark.parametrize("name", PRESETS)
def test_same_seed_same_iterates(name):
    problem = small_pca(n=64)
    x0 = problem.manifold.random_point(0)
    runs = [solver(name)(problem, x0, step_size=0.02, maxiter=16, gtol=0.0, rng=seed)
            for seed in (5, 5, 6)]
    np.testing.assert_array_equal(runs[0].x, runs[1].x)
    assert np.abs(runs[0].x - runs[2].x).max() > 1e-8


# -- the default step ------------------------------------------------------------------------


def geometric_samples(n, d, top, bottom, rng):
    """Gaussian samples whose columns have standard deviations geomspace(top, bottom)."""
    return np.random.default_rng(rng).standard_normal((n, d)) * np.geomspace(top, bottom, d)


@pytest.fixture(scope="module")
def battery():
    """The problems of the defaults battery (docs/theory/serena), smaller: name ->
    (problem with fopt, pass budget). Each budget is twice the most passes any preset took
    to its target over four seeds."""
    out = {
        "pca-grassmann": (finite_sum_pca(geometric_samples(3000, 12, 3.0, 0.3, 0), 3), 50),
        "pca-stiefel": (finite_sum_pca(geometric_samples(2000, 10, 2.0, 0.5, 1), 2,
                                       "stiefel"), 70),
        "eigenvector": (leading_eigenvector(spiked_samples(2000, 15, (3.0, 2.5), rng=2)), 60),
        "karcher": (karcher_mean(commuting_spd_samples(1000, 4, sigma=0.7, rng=3)), 60)}
    z = spiked_samples(2000, 10, (4.0, 2.0), rng=4)
    robust = robust_pca(z, 2)
    ref = jitopt.solvers.rgd(robust, finite_sum_pca(z, 2).xopt, gtol=1e-11, maxiter=20000)
    assert ref.success and ref.stationarity <= 1e-11  # f* of a certified stationary point
    robust.fopt = ref.fun
    out["robust-pca"] = (robust, 70)
    rng = np.random.default_rng(5)
    X = rng.standard_normal((1000, 20)) * np.geomspace(1.0, 0.3, 20)
    y = X @ rng.standard_normal(20) + 0.5 * rng.standard_normal(1000)
    ls = jitopt.problems.least_squares(X, y)
    r = X @ np.linalg.lstsq(X, y, rcond=None)[0] - y
    ls.fopt = 0.5 * float(r @ r) / 1000
    out["least-squares"] = (ls, 100)
    return out


@pytest.mark.parametrize("which", ["pca-grassmann", "pca-stiefel", "eigenvector", "karcher",
                                   "robust-pca", "least-squares"])
@pytest.mark.parametrize("name", PRESETS)
def test_defaults_reach_relative_gap(battery, which, name):
    # no option but the seed: the default step needs no tuning. R-SGD, whose sampling
    # noise is not reduced, is held to a looser gap
    problem, budget = battery[which]
    tau = 1e-6 if name != "r-sgd" else 1e-2 if which == "least-squares" else 1e-3
    for seed in (0, 1):
        res = solver(name)(problem, rng=seed, gtol=0.0, max_passes=budget,
                           f_target=problem.fopt + tau * abs(problem.fopt))
        assert res.success and res.passes <= budget
        assert (res.fun - problem.fopt) / abs(problem.fopt) <= tau
        assert res.loop == ("python" if which == "least-squares" else "numba")


@pytest.mark.parametrize("name, c", [("r-srvrg", 2.0), ("r-sgd", 4.0)])
def test_default_step_is_one_over_c_times_the_top_hessian_eigenvalue(name, c):
    # least squares with X^T X / n = diag(s^2): the Hessian's top eigenvalue is 4, and with
    # b = n the estimate's batch is every sample
    n, s = 200, np.array([2.0, 1.0, 0.7, 0.5, 0.3])
    q, _ = np.linalg.qr(np.random.default_rng(0).standard_normal((n, s.size)))
    X = np.sqrt(n) * q * s
    problem = jitopt.problems.least_squares(X, X @ np.ones(s.size))
    for jit in ("auto", False):
        res = solver(name)(problem, batch_size=n, maxiter=1, rng=0, history=True, jit=jit)
        assert res.history["step"][0] == pytest.approx(1.0 / (c * 4.0), rel=1e-6)


def test_default_step_halves_until_an_epoch_decreases_the_cost():
    # F(x) = c sqrt(1 + x^2): the curvature at x0 = 10 is 1000 times smaller than at the
    # minimiser 0, so the first step is 500 times too long; epochs that raise the cost are
    # discarded and halve the step, and the run still reaches the minimum
    c = np.random.default_rng(0).uniform(0.5, 1.5, 100)

    def cost(x, idx):
        return float(np.mean(c[idx]) * np.sqrt(1.0 + x[0] ** 2))

    def egrad(x, idx):
        return np.array([np.mean(c[idx]) * x[0] / np.sqrt(1.0 + x[0] ** 2)])

    problem = FiniteSumProblem(jitopt.manifolds.Euclidean(1), cost, egrad, 100)
    for name in PRESETS:
        res = solver(name)(problem, np.array([10.0]), rng=0, gtol=0.0, max_passes=200,
                           f_target=np.mean(c) * (1 + 1e-12), history=True)
        assert res.success and abs(res.x[0]) < 1e-5
        steps, fun = res.history["step"], res.history["fun"]
        assert steps[-1] <= steps[0] / 2 ** 5 and np.all(np.diff(steps) <= 0)
        assert np.all(np.diff(fun) <= 0)  # only epochs that lower the cost stand


@pytest.mark.parametrize("kwargs, match", [
    ({"batch_size": 0}, "batch_size"), ({"batch_size": 65}, "batch_size"),
    ({"epoch_length": 0}, "epoch_length"), ({"step_size": -0.1}, "step_size"),
    ({"step_size": 0.0}, "step_size"), ({"big_batch": 0}, "big_batch"),
    ({"beta": 1.5}, "beta"), ({"step_schedule": "cosine"}, "step_schedule"),
    ({"batch_size2": 100}, "batch_size2"), ({"max_passes": 0}, "max_passes")])
def test_bad_input(kwargs, match):
    problem = small_pca(n=64)
    with pytest.raises(ValueError, match=match):
        serena.srge(problem, **{"step_size": 0.01, **kwargs})
    with pytest.raises(TypeError, match="FiniteSumProblem"):
        serena.srge(jitopt.problems.pca(np.eye(3), 1), step_size=0.1)
    with pytest.raises(TypeError, match="batch_size"):
        serena.srge(problem, step_size=0.1, batch_size=2.5)


def test_nonfinite_stops_with_message_and_inputs_untouched():
    base = small_pca(n=64)
    calls = {"n": 0}

    def egrad(x, idx):
        calls["n"] += 1
        return base.egrad(x, idx) * (np.nan if calls["n"] > 3 else 1.0)

    problem = python_copy(base, egrad)
    x0 = base.manifold.random_point(0)
    keep = x0.copy()
    res = solver("r-srg")(problem, x0, step_size=0.02, rng=0)
    assert not res.success and res.status == jitopt.Status.NONFINITE
    assert "non-finite" in res.message
    # the method's own fields stay in a fault result
    assert res.loop == "python" and 0 < res.passes <= res.nifo / problem.n_samples
    np.testing.assert_array_equal(x0, keep)


def test_minimize_front_door_runs_r_srvrg_with_its_defaults():
    problem = small_pca(n=1000)
    res = jitopt.minimize(problem, tol=1e-5, options={"rng": 0})
    assert res.success and res.stationarity <= 1e-5
    assert res.loop == "numba" and res.passes > 0  # r-srvrg's own fields
    assert (res.fun - problem.fopt) / abs(problem.fopt) < 1e-8
    assert jitopt.get_method("R-SRVRG").solver is serena.r_srvrg


def test_tour_entry():
    from jitopt.tour import serena as tour

    method, _, summary, error, _ = tour()
    assert method == "r-srvrg" and "converged" in summary and error <= 1e-8


def test_karcher_oracles_against_lapack():
    """The compiled Karcher oracles (a Jacobi eigensolver on small symmetric matrices) give
    the affine-invariant distances and gradients computed with LAPACK (scipy's sqrtm and
    numpy's eigh), for sizes 1 to 7 and matrices with repeated, clustered and random
    eigenvalues."""
    import scipy.linalg

    def logm(m):
        w, v = np.linalg.eigh(0.5 * (m + m.T))
        return (v * np.log(w)) @ v.T

    rng = np.random.default_rng(0)
    for d in (1, 2, 5, 7):
        q, _ = np.linalg.qr(rng.standard_normal((d, d)))
        samples = [np.eye(d), np.diag(np.arange(1.0, d + 1)),
                   (q * np.r_[np.full(d - d // 2, 2.0), np.full(d // 2, 2.0 + 1e-9)]) @ q.T]
        for _ in range(3):
            g = rng.standard_normal((d, d))
            samples.append(g @ g.T + 0.1 * np.eye(d))
        problem = karcher_mean(np.array(samples))
        x = problem.manifold.random_point(d)
        s = scipy.linalg.sqrtm(x).real
        si = np.linalg.inv(s)
        logs = [logm(si @ a @ si) for a in samples]
        cost = 0.5 * np.mean([np.sum(lg * lg) for lg in logs])
        rgrad = -s @ np.mean(logs, axis=0) @ s
        assert problem.cost(x) == pytest.approx(cost, rel=1e-11, abs=1e-13)
        np.testing.assert_allclose(problem.rgrad(x), rgrad, atol=1e-10)