"""jitopt.distributed: Dask-backed finite sums give the in-memory oracles, iterates and
counts; the client holds at most its budget of gathered rows; lost data end a run with a
message naming the chunk; map_solve equals one-by-one solves and keeps going past a failure."""

import os

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")

import jitopt  # noqa: E402
from jitopt import distributed as jd  # noqa: E402
from jitopt import problems as jp  # noqa: E402
from jitopt import solvers  # noqa: E402


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                       dashboard_address=None)
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


def dask(a, chunk):
    return da.from_array(np.asarray(a), chunks=(chunk,) + np.shape(a)[1:])


@pytest.fixture(scope="module")
def data():
    Z = jp.spiked_samples(3000, 6, scales=(4.0, 3.0, 2.0), rng=0)
    X, y, beta = jp.sparse_regression_data(3000, 30, 4, rng=1)
    A = jp.commuting_spd_samples(300, 3, rng=2)
    return Z, X, y, beta, A


def pairs(data, client):
    """(name, in-memory problem, Dask problem, a point) for every built-in kind."""
    Z, X, y, _, A = data
    labels = np.sign(y)
    rng = np.random.default_rng(3)
    out = []
    for name, mem, dist in [
        ("pca-grassmann", jp.finite_sum_pca(Z, 2), jd.finite_sum_pca(dask(Z, 700), 2)),
        ("pca-stiefel", jp.finite_sum_pca(Z, 2, "stiefel"),
         jd.finite_sum_pca(dask(Z, 700), 2, "stiefel")),
        ("sphere", jp.leading_eigenvector(Z), jd.leading_eigenvector(dask(Z, 1000))),
        ("robust-pca", jp.robust_pca(Z, 2, eps=0.5), jd.robust_pca(dask(Z, 700), 2, 0.5)),
        ("karcher", jp.karcher_mean(A), jd.karcher_mean(dask(A, 64))),
        ("least-squares", jp.least_squares(X, y),
         jd.least_squares(dask(X, 800), dask(y, 800))),
        ("logistic", jp.logistic(X, labels, 0.1, fit_intercept=True),
         jd.logistic(dask(X, 800), dask(labels, 800), 0.1, fit_intercept=True)),
    ]:
        out.append((name, mem, dist, mem.manifold.random_point(rng)))
    return out


@pytest.fixture(scope="module")
def problems(data, client):
    return pairs(data, client)


def rel(a, b):
    return np.linalg.norm(np.asarray(a) - b) / max(np.linalg.norm(b), 1e-300)


def test_full_cost_and_gradient_equal_the_in_memory_ones(problems):
    for name, mem, dist, x in problems:
        assert rel(dist.cost(x), mem.cost(x)) < 1e-12, name
        assert rel(dist.egrad(x), mem.egrad(x)) < 1e-12, name
        assert dist.n_samples == mem.n_samples, name


def test_minibatch_gradients_planned_bitwise_and_on_workers_to_rounding(problems):
    idx = np.random.default_rng(4).integers(0, 300, size=(3, 40))
    for name, mem, dist, x in problems:
        dist.prefetch(idx)  # planned: gathered rows, the in-memory kernels
        for row in idx:
            assert np.array_equal(dist.egrad(x, row), mem.egrad(x, row)), name
            assert dist.cost(x, row) == mem.cost(x, row), name
        dist.prefetch()  # no plan: the workers compute the rows' sums
        assert rel(dist.egrad(x, idx[0]), mem.egrad(x, idx[0])) < 1e-12, name
        assert rel(dist.cost(x, idx[0]), mem.cost(x, idx[0])) < 1e-12, name


def test_known_optima_and_lipschitz_constants_as_in_memory(problems):
    found = {name: (mem, dist) for name, mem, dist, _ in problems}
    for name in ("pca-grassmann", "sphere"):
        mem, dist = found[name]
        assert abs(dist.fopt - mem.fopt) < 1e-12 * abs(mem.fopt)
    for name in ("least-squares", "logistic"):
        mem, dist = found[name]
        assert rel(dist.lipschitz(), mem.lipschitz()) < 1e-12
    mem, dist = found["least-squares"]
    S = np.array([1, 5, 7])
    for a, b in zip(dist.gram_block(S), mem.gram_block(S)):
        assert rel(a, b) < 1e-12


@pytest.mark.parametrize("method", ["r-srvrg", "r-svrg", "r-sgd", "r-svrrm"])
def test_serena_iterates_and_counts_equal_the_in_memory_run(problems, method):
    solver = getattr(solvers, method.replace("-", "_"))
    for name, mem, dist, x0 in problems:
        if name not in ("pca-grassmann", "robust-pca", "karcher"):
            continue
        before = dist.gathers
        ref = solver(mem, x0, max_passes=4, rng=7)
        res = solver(dist, x0, max_passes=4, rng=7)
        assert res.nit == ref.nit and res.nit > 10, name
        assert rel(res.x, ref.x) < 1e-9, name
        assert (res.nfev, res.njev, res.nifo) == (ref.nfev, ref.njev, ref.nifo), name
        assert res.loop == "python" and dist.gathers > before, name


def test_client_memory_bounds_the_gathered_windows(data):
    Z = data[0]
    mem = jp.finite_sum_pca(Z, 2)
    budget = 4 * 64 * 6 * 8 * 5  # windows of five steps of 64 rows of 6 floats
    dist = jd.finite_sum_pca(dask(Z, 500), 2, client_memory=budget)
    x0 = mem.manifold.random_point(np.random.default_rng(0))
    ref = solvers.r_srg(mem, x0, batch_size=64, max_passes=3, rng=1)
    res = solvers.r_srg(dist, x0, batch_size=64, max_passes=3, rng=1)
    assert rel(res.x, ref.x) < 1e-9
    assert 0 < dist.max_window_bytes <= budget // 4
    steps = res.nit
    assert dist.gathers >= steps // 5  # windows of 5 steps at most: many round trips


def test_stochastic_and_deterministic_iht_as_in_memory(problems, data):
    beta = data[3]
    mem, dist = next((m, d) for name, m, d, _ in problems if name == "least-squares")
    for variant in ("stochastic", "deterministic"):
        ref = jitopt.sparse.iht(mem, k=4, variant=variant, batch_size=50, rng=3)
        res = jitopt.sparse.iht(dist, k=4, variant=variant, batch_size=50, rng=3)
        assert res.nit == ref.nit
        assert rel(res.x, ref.x) < 1e-9
        assert set(np.flatnonzero(res.x)) == set(np.flatnonzero(beta))


def test_minimize_default_method_reaches_the_pca_optimum(problems):
    mem, dist = next((m, d) for name, m, d, _ in problems if name == "pca-grassmann")
    res = jitopt.minimize(dist, tol=1e-8)
    assert res.success and abs(res.fun - dist.fopt) < 1e-10 * abs(dist.fopt)


def test_bad_inputs_are_refused(client, data):
    Z = data[0]
    with pytest.raises(TypeError, match="Z must be a dask.array"):
        jd.finite_sum_pca(Z, 2)
    with pytest.raises(ValueError, match="samples"):
        jd.least_squares(dask(data[1], 500), dask(data[2][:-1], 500))
    with pytest.raises(TypeError, match="kind"):
        jd.DaskFiniteSumProblem(jitopt.manifolds.Grassmann(6, 2), "pca", {"Z": dask(Z, 500)})
    with pytest.raises(ValueError, match="client_memory"):
        jd.finite_sum_pca(dask(Z, 500), 2, client_memory=0)
    with pytest.raises(ValueError, match="labels"):
        jd.logistic(dask(data[1], 500), dask(data[2], 500))
    with pytest.raises(ValueError, match="2-D"):
        jd.finite_sum_pca(dask(Z[:, 0], 500), 1)
    bad = Z.copy()
    bad[1234, 3] = np.nan
    with pytest.raises(ValueError, match="NaN or inf in rows 1000-1499"):
        jd.finite_sum_pca(dask(bad, 500), 2)
    res = solvers.r_svrg(jd.robust_pca(dask(bad, 500), 2), rng=0)  # fails at the first pass
    assert not res.success and "NaN or inf in rows 1000-1499" in res.message
    problem = jd.finite_sum_pca(dask(Z, 500), 2)
    with pytest.raises(jitopt.OracleError) as info:  # never a mean over fewer rows
        problem.egrad(np.eye(6)[:, :2], np.array([0, 3000]))
    assert "sample indices must lie in [0, 3000)" in str(info.value.__cause__)


def test_lost_chunk_ends_the_run_with_a_message_naming_it(client, data):
    Z = data[0]
    mem = jp.finite_sum_pca(Z, 2)
    dist = jd.finite_sum_pca(dask(Z, 1000), 2)
    x0 = mem.manifold.random_point(np.random.default_rng(0))
    state = {"calls": 0}

    def lose_chunk(intermediate):
        state["calls"] += 1
        if state["calls"] == 2:  # data with no lineage to recompute it from
            dist.store.client.cancel(dist.store.futures[1])

    res = solvers.r_svrg(dist, x0, max_passes=10, rng=0, callback=lose_chunk)
    assert not res.success and res.status == jitopt.Status.ORACLE_ERROR
    assert "chunk 1 (rows 1000-1999)" in res.message
    assert res.nit > 0 and np.all(np.isfinite(res.x))


def _iht_job(seed, k):
    X, y, _ = jp.sparse_regression_data(200, 20, 3, rng=seed)
    return jitopt.sparse.iht(jp.least_squares(X, y), k=k)


def test_map_solve_equals_one_by_one_and_keeps_going_past_a_failure(client):
    problems_ = [jp.least_squares(*jp.sparse_regression_data(150, 20, 3, rng=s)[:2])
                 for s in range(5)]
    jobs = problems_[:2] + ["not a problem"] + problems_[2:]
    one_by_one = [jitopt.sparse.iht(p, k=3) for p in problems_]
    for group_size in (None, 1, 4):
        out = jd.map_solve(jitopt.sparse.iht, jobs, k=3, group_size=group_size)
        assert len(out) == 6
        failed = out.pop(2)
        assert isinstance(failed, jd.JobError) and failed.index == 2
        assert isinstance(failed.error, TypeError) and not failed.success
        for a, b in zip(out, one_by_one):
            assert np.array_equal(a.x, b.x) and a.nit == b.nit


@pytest.mark.filterwarnings("ignore:wdha_barycenter")
def test_map_solve_on_barycenters(client):
    g = np.linspace(0, 1, 16)
    X, Y = np.meshgrid(g, g, indexing="ij")
    stacks = []
    for shift in (0.0, 0.1):
        a = np.exp(-((X - 0.3 - shift) ** 2 + (Y - 0.4) ** 2) / 0.01)
        b = np.exp(-((X - 0.6) ** 2 + (Y - 0.5 - shift) ** 2) / 0.01)
        stacks.append(np.stack([a / a.sum(), b / b.sum()]))
    out = jd.map_solve(jitopt.transport.wdha_barycenter, stacks, numItermax=20)
    for A, bary in zip(stacks, out):
        assert np.array_equal(bary, jitopt.transport.wdha_barycenter(A, numItermax=20))
        assert abs(bary.sum() - 1) < 1e-12


def test_worker_processes_give_the_in_process_result_and_survive_a_killed_worker(data):
    Z = data[0]
    mem = jp.finite_sum_pca(Z, 2)
    x0 = mem.manifold.random_point(np.random.default_rng(0))
    ref = solvers.r_svrg(mem, x0, max_passes=6, rng=2)
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    with distributed.Client(cluster) as c:
        dist = jd.finite_sum_pca(dask(Z, 500), 2, client=c)
        res = solvers.r_svrg(dist, x0, max_passes=6, rng=2)
        assert rel(res.x, ref.x) < 1e-9 and res.nifo == ref.nifo
        state = {"calls": 0}

        def kill_a_worker(intermediate):
            state["calls"] += 1
            if state["calls"] == 2:
                worker = sorted(c.scheduler_info()["workers"])[0]
                try:
                    c.run(os._exit, 1, workers=[worker])
                except Exception:  # the worker dies before it answers
                    pass

        killed = solvers.r_svrg(dist, x0, max_passes=6, rng=2, callback=kill_a_worker)
        assert state["calls"] >= 2
        if killed.success or killed.status == jitopt.Status.MAX_PASSES:
            assert rel(killed.x, ref.x) < 1e-9  # recovered: recomputed from the graph
        else:
            assert "chunk" in killed.message  # or stopped, naming the lost data
    cluster.close()


def test_map_solve_on_evi_solves(client):
    rng = np.random.default_rng(5)
    problems_ = []
    for _ in range(3):
        A = rng.standard_normal((3, 3))
        problems_.append(jitopt.games.NormalFormGame([A, -A]).vi_problem())
    out = jd.map_solve(jitopt.solvers.evi, problems_, tol=1e-3, rng=0)
    for problem, res in zip(problems_, out):
        ref = jitopt.solvers.evi(problem, tol=1e-3, rng=0)
        assert res.success and res.gap <= 1e-3
        assert np.array_equal(res.x, ref.x) and res.nit == ref.nit
