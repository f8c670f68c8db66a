"""Runs that never give a silently wrong answer: per-run oracle counts under threads,
KeyboardInterrupt during a solve, and the geometry at its edges."""

import threading
import time

import numpy as np
import pytest

import jitopt
from jitopt.manifolds import SPD, Grassmann, Orthogonal, Sphere, Stiefel

import cases_dc
import cases_iht
import cases_riemannian


# -- oracle counts per run: 4 threads on one shared problem -----------------------------

def _pca_stiefel():
    problem, x0, _ = cases_riemannian.make()
    return problem, x0, {"maxiter": 15}


def _builtin_finite_sum():
    Z = np.random.default_rng(1).standard_normal((60, 6)) * np.array([3.0, 2, 1, .5, .3, .2])
    return jitopt.problems.finite_sum_pca(Z, 2), None, {"max_passes": 8.0}


THREAD_CASES = {
    "rgd": _pca_stiefel,
    "rsdm": lambda: (_pca_stiefel()[0], _pca_stiefel()[1], {"maxiter": 15, "r": 3}),
    "r-srvrg": _builtin_finite_sum,
    "srge": lambda: _pca_stiefel()[:2] + ({"max_passes": 6.0},),
    "iht": lambda: cases_iht.make(),
    "online_dca": lambda: cases_dc.make(),
}

COUNTS = ("nfev", "njev", "nifo", "nhev", "nit")


def _yield(xk):
    time.sleep(0.001)  # lets the other threads run between iterations: the runs interleave


def _run(method, problem, x0, options):
    return jitopt.minimize(problem, x0, method=method, callback=_yield,
                           options={**options, "rng": 7})


@pytest.mark.filterwarnings("ignore:rsdm. the problem has no row-block oracle")
@pytest.mark.parametrize("method", list(THREAD_CASES))
def test_four_threads_on_one_problem_give_each_the_run_alone(method):
    problem, x0, options = THREAD_CASES[method]()
    alone = _run(method, problem, x0, options)
    before = problem.counts.as_dict()
    results, errors = [None] * 4, []
    barrier = threading.Barrier(4)

    def work(i):
        try:
            barrier.wait()
            results[i] = _run(method, problem, x0, options)
        except Exception as err:  # pragma: no cover - reported below
            errors.append(err)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for res in results:
        assert {k: res[k] for k in COUNTS} == {k: alone[k] for k in COUNTS}
        np.testing.assert_array_equal(res.x, alone.x)
        assert res.fun == alone.fun and res.status == alone.status
    # the problem's counters still hold the running total of every thread
    after = problem.counts.as_dict()
    for name in ("nfev", "njev", "nifo"):
        assert after[name] - before[name] == 4 * alone[name]


def test_counts_total_and_own_after_reset():
    counts = jitopt.OracleCounts()
    counts.nifo += 5
    counts.reset()
    counts.nifo += 2
    assert counts.nifo == 2 and counts.own()[2] == 7


# -- KeyboardInterrupt during a solve: it propagates ------------------------------------

class InterruptAt:
    """``egrad`` of the Riemannian case, raising KeyboardInterrupt at its ``at``-th call."""

    def __init__(self, egrad, at):
        self.egrad, self.at, self.calls = egrad, at, 0

    def __call__(self, x, idx):
        self.calls += 1
        if self.calls == self.at:
            raise KeyboardInterrupt
        return self.egrad(x, idx)


@pytest.mark.parametrize("method", ["rgd", "rlbfgs", "srge"])
def test_keyboard_interrupt_in_an_oracle_propagates_and_leaves_the_problem_usable(method):
    problem, x0, options, cost, egrad = cases_riemannian.counted()
    healthy = jitopt.minimize(problem, x0, method=method, options={**options, "rng": 0})
    interrupt = InterruptAt(egrad, at=4)
    interrupted = jitopt.FiniteSumProblem(problem.manifold, cost, interrupt,
                                          problem.n_samples)
    with pytest.raises(KeyboardInterrupt):
        jitopt.minimize(interrupted, x0, method=method, options={**options, "rng": 0})
    assert interrupt.calls == 4
    again = jitopt.minimize(problem, x0, method=method, options={**options, "rng": 0})
    np.testing.assert_array_equal(again.x, healthy.x)
    assert (again.nfev, again.njev, again.nit) == (healthy.nfev, healthy.njev, healthy.nit)


def test_keyboard_interrupt_in_the_callback_propagates():
    problem, x0, options = cases_riemannian.make()
    seen = []

    def callback(xk):
        seen.append(xk)
        if len(seen) == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        jitopt.solvers.rgd(problem, x0, callback=callback, **options)
    assert len(seen) == 3
    # a later run is not taken for a nested one
    assert jitopt.solvers.rgd(problem, x0, **options).status in (jitopt.Status.CONVERGED,
                                                                 jitopt.Status.MAXITER)


# -- geometry at its edges ---------------------------------------------------------------

def test_sphere_retraction_at_the_antipode_is_the_exponential_map():
    M = Sphere(3)
    x = np.array([0.6, 0.8, 0.0])
    # exp_x(-x) = cos(1) x - sin(1) x, normalised: -x (x + u = 0 has no direction)
    np.testing.assert_allclose(M.retraction(x, -x), -x)
    np.testing.assert_allclose(M.retraction(x, -2.0 * x), -x)
    # with copies, only the antipodal copy takes the exponential map
    Mk = Sphere(2, k=2)
    xs = np.array([[1.0, 0.0], [0.0, 1.0]])
    us = np.array([[-1.0, 0.0], [0.5, 0.0]])
    ys = Mk.retraction(xs, us)
    np.testing.assert_allclose(ys[0], [-1.0, 0.0])
    np.testing.assert_allclose(ys[1], np.array([0.5, 1.0]) / np.hypot(0.5, 1.0))


def test_sphere_retraction_refuses_a_nan_tangent():
    with pytest.raises(ValueError, match="u must be"):
        Sphere(3).retraction(np.array([1.0, 0.0, 0.0]), np.array([0.0, np.nan, 0.0]))


def test_spd_refuses_points_that_are_not_positive_definite():
    M = SPD(2)
    eye = np.eye(2)
    with pytest.raises(ValueError, match="y must be a symmetric positive definite"):
        M.dist(eye, -eye)
    with pytest.raises(ValueError, match="x must be a symmetric positive definite"):
        M.exp(-eye, eye)
    with pytest.raises(ValueError, match="u must be finite"):
        M.exp(eye, np.full((2, 2), np.nan))
    # the healthy values stay: exp_I(I) = e I and dist(I, 2I) = sqrt(2) log 2
    np.testing.assert_allclose(M.exp(eye, eye), np.e * eye)
    np.testing.assert_allclose(M.dist(eye, 2 * eye), np.sqrt(2) * np.log(2.0))
    with pytest.raises(ValueError, match="x must be a symmetric positive definite"):
        SPD(2, k=2).dist(np.stack([eye, -eye]), np.stack([eye, eye]))


def test_grassmann_log_at_the_cut_locus_is_refused():
    M = Grassmann(3, 1)
    x, y = np.array([[1.0], [0.0], [0.0]]), np.array([[0.0], [1.0], [0.0]])
    with pytest.raises(ValueError, match="cut locus"):
        M.log(x, y)
    # just inside it the logarithm exists and has length pi/2 - 1e-3
    z = np.array([[np.sin(1e-3)], [np.cos(1e-3)], [0.0]])
    np.testing.assert_allclose(M.norm(x, M.log(x, z)), np.pi / 2 - 1e-3, rtol=1e-9)


def test_stiefel_retraction_is_unchanged_by_the_checks():
    M = Stiefel(4, 2)
    x = M.random_point(0)
    u = M.projection(x, np.ones((4, 2)))
    y = M.retraction(x, u)
    np.testing.assert_allclose(y.T @ y, np.eye(2), atol=1e-12)


@pytest.mark.parametrize("manifold", [Stiefel(3, 2), Grassmann(3, 2), Orthogonal(3),
                                      SPD(2, retraction="second_order"), Sphere(3)],
                         ids=repr)
def test_a_nan_tangent_vector_is_refused_by_name(manifold):
    x = manifold.random_point(0)
    u = np.full(manifold.shape, np.nan)
    with pytest.raises(ValueError, match="u must be"):
        manifold.retraction(x, u)
    if hasattr(manifold, "exp") and not isinstance(manifold, Orthogonal):
        with pytest.raises(ValueError, match="u must be"):
            manifold.exp(x, u)


def test_spd_log_and_transport_refuse_points_that_are_not_positive_definite():
    M, eye = SPD(2), np.eye(2)
    with pytest.raises(ValueError, match="y must be a symmetric positive definite"):
        M.log(eye, -eye)
    with pytest.raises(ValueError, match="x2 must be a symmetric positive definite"):
        M.transport(eye, -eye, eye)
    np.testing.assert_allclose(M.log(eye, np.e * eye), eye)


def test_orthogonal_at_the_cut_locus():
    M = Orthogonal(2)
    eye = np.eye(2)
    # a rotation by pi: the distance is defined (pi * sqrt 2 in the Frobenius metric) ...
    np.testing.assert_allclose(M.dist(eye, -eye), np.pi * np.sqrt(2.0))
    # ... but the logarithm is not unique
    with pytest.raises(ValueError, match="cut locus"):
        M.log(eye, -eye)
    # away from it, dist is the norm of log
    x, y = Orthogonal(4).random_point(0), Orthogonal(4).random_point(1)
    if np.linalg.det(x) * np.linalg.det(y) < 0:
        y[:, 0] *= -1
    np.testing.assert_allclose(Orthogonal(4).dist(x, y),
                               np.linalg.norm(Orthogonal(4).log(x, y)), rtol=1e-10)
    c, s = np.cos(3.0), np.sin(3.0)
    np.testing.assert_allclose(M.dist(eye, np.array([[c, -s], [s, c]])), 3.0 * np.sqrt(2.0))


# -- internal errors that used to leak: each is now refused by name or a failed result ---

def test_an_empty_stack_of_histograms_is_refused_by_name():
    for name, call in (("densities", lambda: jitopt.problems.BarycenterProblem(
                           np.zeros((0, 8, 8)))),
                       ("A", lambda: jitopt.transport.wdha_barycenter(np.zeros((0, 8, 8))))):
        with pytest.raises(ValueError, match=f"^{name} must hold at least one density"):
            call()


def test_an_evi_gap_of_no_points_is_refused_by_name():
    game = jitopt.games.NormalFormGame([np.eye(2), -np.eye(2)])
    problem = game.vi_problem()
    for call in (lambda: jitopt.solvers.evi_gap(problem, np.zeros((0, 4))),
                 lambda: game.mixture_gaps(np.zeros((0, 4))),
                 lambda: game.joint_distribution(np.zeros((0, 4)))):
        with pytest.raises(ValueError, match="points must have shape"):
            call()
    # one point still works: the uniform profile of matching pennies has no CE regret
    gaps = jitopt.solvers.evi_gap(problem, np.full((1, 4), 0.5))
    np.testing.assert_allclose(gaps.gap_ce, 0.0, atol=1e-15)


@pytest.mark.parametrize("factory", [jitopt.problems.pca, jitopt.problems.brockett])
def test_empty_matrices_are_refused_by_name(factory):
    with pytest.raises(ValueError, match="A must be a square 2-D array, non-empty"):
        factory(np.zeros((0, 0)), 1 if factory is jitopt.problems.pca else [1.0])


def test_a_sample_size_schedule_beyond_any_batch_stops_with_a_message():
    problem = jitopt.problems.online_sparse_robust_regression(p=5, beta_star=(10.0,))
    # t^70 samples at t = 2 (about 1e21): numpy used to fail with "array is too big"
    res = jitopt.minimize(problem, method="online_dca",
                          options={"rule": "schedule", "schedule_g": 70.0, "rng": 0})
    assert res.status == jitopt.Status.MAX_SAMPLES and not res.success
    assert "more than one batch can hold" in res.message and res.nit == 1
    assert np.isfinite(res.x).all() and res.samples == 1
    # an exponent that overflows a float gives the same stop, not an OverflowError
    res = jitopt.minimize(problem, method="online_dca",
                          options={"rule": "schedule", "schedule_g": 1e300, "rng": 0})
    assert res.status == jitopt.Status.MAX_SAMPLES and res.nit == 1
    with pytest.raises(ValueError, match="n0 must be in"):
        jitopt.solvers.online_dca(problem, rule="fixed", n0=10 ** 12)


@pytest.mark.parametrize("factor", [2.0 ** 1000, 1.7e308 / 2, 1e-300, 2.0 ** -1060])
def test_huge_and_subnormal_densities_need_no_sigma(factor):
    """The default step sigma = 4/max(a, b) of densities normalised to mean one: the
    normalisation used to overflow (or underflow) and leak an error about ``sigma``, an
    argument never passed; the distance is that of the unscaled densities."""
    y, x = jitopt.transport.grid_coordinates((16, 16))
    a = np.exp(-((y - 0.4) ** 2 + (x - 0.5) ** 2) / 0.02)
    b = np.exp(-((y - 0.6) ** 2 + (x - 0.5) ** 2) / 0.02)
    a, b = a / a.max(), b / b.max()
    ref = jitopt.transport.wasserstein2_grid(a, b)
    w2 = jitopt.transport.wasserstein2_grid(a * factor, b * factor)
    # exact for power-of-two factors; subnormal entries keep a few bits only
    np.testing.assert_allclose(w2, ref, rtol=1e-12 if factor > 1e-300 else 1e-2)


def test_wrongly_shaped_points_are_refused_by_name_not_by_numba():
    pca = jitopt.problems.pca(np.diag([3.0, 2.0, 1.0]), 1)
    with pytest.raises(ValueError, match=r"x must have shape \(3, 1\).*got \(3, 1, 1\)"):
        pca.cost(np.ones((3, 1, 1)))
    with pytest.raises(ValueError, match="x must have shape"):
        pca.cost(np.ones(3))  # a flat point is not a point of Stiefel(3, 1)
    user = jitopt.Problem(jitopt.manifolds.Sphere(3), lambda x: float(np.sum(x)),
                          lambda x: np.ones(3))
    with pytest.raises(ValueError, match=r"x must have shape \(3,\)"):
        user.cost(np.ones((3, 1)))  # the user's oracle would have given a number
    with pytest.raises(TypeError, match="x must be real"):
        user.egrad(np.ones(3) + 0j)
    X = np.random.default_rng(0).standard_normal((6, 3))
    ls = jitopt.problems.least_squares(X, X[:, 0])
    with pytest.raises(ValueError, match=r"w must have shape \(3,\), got \(3, 1\)"):
        ls.egrad(np.ones((3, 1)))
    with pytest.raises(ValueError, match="x must have shape"):
        ls.cost(np.ones(4))  # used to broadcast into a wrong value
    dc = jitopt.problems.online_sparse_robust_regression(p=4, beta_star=(10.0,))
    batch, _ = dc.draw_batches(1, 5, 0, np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"x must have shape \(4,\), got \(3,\)"):
        dc.convex_value(np.ones(3), batch)  # used to return a number
    # the healthy calls give the closed forms
    np.testing.assert_allclose(pca.cost(pca.xopt), -3.0)
    np.testing.assert_allclose(ls.cost(np.zeros(3)), 0.5 * np.mean(X[:, 0] ** 2))


@pytest.mark.parametrize("method", ["srge", "r-srvrg"])
def test_a_finite_sum_started_at_a_stationary_point_converges_at_once(method):
    # every sample is a multiple of a basis vector: e_1 is a critical point of PCA
    problem = jitopt.problems.finite_sum_pca(np.diag([3.0, 2.0, 1.0, 0.5]), 1)
    x0 = np.zeros((4, 1))
    x0[0] = 1.0
    res = jitopt.minimize(problem, x0, method=method, options={"max_passes": 2.0})
    assert res.success and res.nit == 0
    np.testing.assert_array_equal(res.x, x0)
