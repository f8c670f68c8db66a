"""IHT with the two-step projection: brute force, closed forms, estimators, counts, errors."""

import itertools

import numpy as np
import pytest
from scipy.optimize import lsq_linear, nnls

import jitopt
from jitopt.problems import least_squares, logistic, sparse_regression_data
from jitopt.sets import (Box, CappedSimplex, L1Ball, L2Ball, LInfBall, NonNegative, Simplex)
from jitopt.sparse import (IHTClassifier, IHTRegressor, box_qp, exchange_search,
                           hard_threshold, iht, iht_path, two_step_projection, zo_gradient)


def objective(X, y, w):
    r = X @ w - y
    return 0.5 * r @ r / X.shape[0]


# -- the two-step operator against brute force over supports ------------------------------

def l1_proj(v, r):
    if np.abs(v).sum() <= r:
        return v
    u = np.sort(np.abs(v))[::-1]
    css = np.cumsum(u) - r
    rho = np.nonzero(u - css / np.arange(1, v.size + 1) > 0)[0][-1]
    return np.sign(v) * np.maximum(np.abs(v) - css[rho] / (rho + 1), 0)


# closed-form projections onto each set (applied to the entries on a support)
LO = -np.array([0.2, 1.0, 0.5, 0.0, 2.0, 0.3, 0.7])
HI = np.array([1.0, 0.1, 0.5, 1.5, 0.2, 0.0, 0.6])
SETS = {
    "box": (Box(LO, HI), lambda v, S: np.clip(v, LO[S], HI[S]), "gain"),
    "orthant": (NonNegative(), lambda v, S: np.maximum(v, 0), "gain"),
    "orthant-signed": (NonNegative(), lambda v, S: np.maximum(v, 0), "signed"),
    "capped": (CappedSimplex(1.0), lambda v, S: np.sign(np.maximum(v, 0)) * l1_proj(
        np.maximum(v, 0), 1.0), "signed"),
    "orthant-l2": (NonNegative() & L2Ball(0.8), lambda v, S: np.maximum(v, 0) * min(
        1, 0.8 / max(np.linalg.norm(np.maximum(v, 0)), 1e-300)), "signed"),
    "l1": (L1Ball(1.0), lambda v, S: l1_proj(v, 1.0), "magnitude"),
    "l2": (L2Ball(0.8), lambda v, S: v * min(1, 0.8 / np.linalg.norm(v)), "magnitude"),
    "linf": (LInfBall(0.5), lambda v, S: np.clip(v, -0.5, 0.5), "magnitude"),
}


def brute_force_projection(z, k, proj):
    best = np.inf
    for S in itertools.combinations(range(z.size), k):
        S = list(S)
        x = np.zeros_like(z)
        x[S] = proj(z[S], S)
        best = min(best, np.sum((x - z) ** 2))
    return best


@pytest.mark.parametrize("name", list(SETS))
def test_exact_selection_equals_brute_force(name):
    cset, proj, selection = SETS[name]
    rng = np.random.default_rng(0)
    for _ in range(150):
        z = 1.5 * rng.standard_normal(7)
        x = two_step_projection(z, 3, cset, selection)
        assert np.count_nonzero(x) <= 3 and cset.contains(x)
        assert np.sum((x - z) ** 2) == pytest.approx(brute_force_projection(z, 3, proj),
                                                       abs=1e-10)


@pytest.mark.parametrize("name", ["box", "orthant", "capped"])
def test_magnitude_rule_is_feasible_but_may_be_worse(name):
    cset, proj, _ = SETS[name]
    rng = np.random.default_rng(1)
    worse = 0
    for _ in range(150):
        z = 1.5 * rng.standard_normal(7)
        x = two_step_projection(z, 3, cset, "magnitude")
        assert np.count_nonzero(x) <= 3 and cset.contains(x)
        dist, best = np.sum((x - z) ** 2), brute_force_projection(z, 3, proj)
        assert dist >= best - 1e-12
        worse += dist > best + 1e-9
    assert worse > 0  # the paper's operator is not the exact projection for these sets


def test_hard_threshold_ties_and_idempotence():
    z = np.array([1.0, -2.0, 2.0, 0.5, -1.0])
    np.testing.assert_array_equal(hard_threshold(z, 2), [0, -2.0, 2.0, 0, 0])
    np.testing.assert_array_equal(hard_threshold(z, 3), [1.0, -2.0, 2.0, 0, 0])
    x = hard_threshold(z, 3)
    np.testing.assert_array_equal(hard_threshold(x, 3), x)


# -- IHT on tiny problems against enumeration of supports ---------------------------------

def best_subset(X, y, k, lo, hi):
    best = (np.inf, None)
    for S in itertools.combinations(range(X.shape[1]), k):
        S = list(S)
        if np.all(lo == 0) and np.all(np.isinf(hi)):
            c, _ = nnls(X[:, S], y)
        else:
            c = lsq_linear(X[:, S], y, bounds=(lo[S], hi[S]), method="bvls", tol=1e-12).x
        w = np.zeros(X.shape[1])
        w[S] = c
        best = min(best, (objective(X, y, w), tuple(S)), key=lambda t: t[0])
    return best[0]


@pytest.mark.parametrize("scenario", ["nonneg", "box"])
def test_tiny_problems_reach_best_subset(scenario):
    rng = np.random.default_rng(2)
    p, k, n = 10, 3, 50
    hits = 0
    for _ in range(50):
        X = rng.standard_normal((n, p))
        beta = np.zeros(p)
        S = rng.choice(p, k, replace=False)
        beta[S] = rng.uniform(1, 2, k) * (rng.choice([-1, 1], k) if scenario == "box" else 1)
        y = X @ beta + 0.5 * rng.standard_normal(n)
        if scenario == "nonneg":
            lo, hi, cset = np.zeros(p), np.full(p, np.inf), NonNegative()
        else:
            lo, hi = np.full(p, -1.5), np.full(p, 1.5)
            cset = Box(lo, hi)
        res = iht(least_squares(X, y), k=k, constraint=cset, selection="auto", relax=2.0)
        fstar = best_subset(X, y, k, lo, hi)
        assert res.n_nonzero <= k and cset.contains(res.x)
        f = objective(X, y, res.x)
        assert f == pytest.approx(res.fun, rel=1e-10)
        assert f >= fstar - 1e-9
        hits += f <= fstar * (1 + 1e-8)
    assert hits >= 45


def test_relaxation_beats_target_optimum():
    """With k = 2 kbar the iterate's objective is at most the best kbar-sparse objective."""
    rng = np.random.default_rng(3)
    ok = 0
    for _ in range(20):
        X = rng.standard_normal((200, 10))
        y = X[:, :2] @ np.array([1.0, 1.5]) + rng.standard_normal(200)
        fstar = best_subset(X, y, 2, np.zeros(10), np.full(10, np.inf))
        res = iht(least_squares(X, y), k=4, constraint=NonNegative(), tol=1e-10)
        ok += res.fun <= fstar + 1e-8
    assert ok == 20


def test_orthogonal_design_one_step_closed_form():
    rng = np.random.default_rng(4)
    n, p, k = 40, 8, 3
    Q, _ = np.linalg.qr(rng.standard_normal((n, p)))
    X = np.sqrt(n) * Q
    y = rng.standard_normal(n) * 2
    b = X.T @ y / n  # R(w) = |w - b|^2/2 + const
    for cset, selection in [(None, "magnitude"), (LInfBall(0.3), "magnitude"),
                            (Box(-0.1, 0.5), "gain"), (NonNegative(), "signed")]:
        x0 = two_step_projection(rng.standard_normal(p), k, cset, selection)
        res = iht(least_squares(X, y), x0, k=k, constraint=cset, selection=selection, step=1.0,
                  maxiter=1, history=True)
        wstar = two_step_projection(b, k, cset, selection)
        np.testing.assert_allclose(res.x, wstar, atol=1e-12)
        res2 = iht(least_squares(X, y), res.x, k=k, constraint=cset, selection=selection,
                   step=1.0, maxiter=5)
        np.testing.assert_allclose(res2.x, wstar, atol=1e-12)
    from sklearn.linear_model import OrthogonalMatchingPursuit
    omp = OrthogonalMatchingPursuit(n_nonzero_coefs=k, fit_intercept=False).fit(X, y)
    res = iht(least_squares(X, y), k=k, step=1.0, maxiter=3)
    np.testing.assert_allclose(res.x, omp.coef_, atol=1e-10)


def test_best_iterate_is_returned_when_objective_goes_up():
    rng = np.random.default_rng(1331)  # a found instance where IHT-2SP goes up
    X, y = rng.standard_normal((5, 3)), rng.standard_normal(5)
    lo, hi = -rng.uniform(0, 1, 3), rng.uniform(0, 1, 3)
    res = iht(least_squares(X, y), k=1, constraint=Box(lo, hi), step="lipschitz", history=True,
              maxiter=50)
    f = res.history["fun"]
    assert res.n_increases >= 1 and np.any(np.diff(f) > 0)
    assert res.fun == f.min() < f[-1]
    assert objective(X, y, res.x) == pytest.approx(f.min(), rel=1e-12)


def test_exact_projection_gives_monotone_descent():
    X, y, _ = sparse_regression_data(60, 20, 4, rho=0.5, rng=5)
    res = iht(least_squares(X, y), k=4, constraint=L2Ball(3.0), step="lipschitz", history=True)
    assert np.all(np.diff(res.history["fun"]) <= 1e-12)


# -- the exchange search (swap) ------------------------------------------------------------

def test_box_qp_matches_bvls():
    rng = np.random.default_rng(30)
    for _ in range(60):
        n, k = rng.integers(3, 30), rng.integers(1, 10)  # n < k too: singular Gram blocks
        X, y = rng.standard_normal((n, k)), 3 * rng.standard_normal(n)
        lo = np.where(rng.random(k) < 0.5, -rng.uniform(0, 1, k), 0.0)
        hi = np.where(rng.random(k) < 0.3, np.inf, rng.uniform(0, 1, k))
        Q, c = X.T @ X / n, X.T @ y / n
        v = np.zeros(k)
        q = box_qp(Q, c, lo, hi, v, 1000)
        ref = lsq_linear(X, y, bounds=(lo, hi), method="bvls", tol=1e-13).x
        assert np.all(v >= lo) and np.all(v <= hi)
        assert q == pytest.approx(0.5 * v @ Q @ v - c @ v, abs=1e-12)
        assert q <= 0.5 * ref @ Q @ ref - c @ ref + 1e-12


def scenario_box(rng, p, scenario):
    """``(lo, hi, set)``: the nonnegative orthant, or a random box around 0."""
    lo = np.zeros(p) if scenario == "nonneg" else -rng.uniform(0.5, 1.5, p)
    hi = np.full(p, np.inf) if scenario == "nonneg" else rng.uniform(0.5, 1.5, p)
    return lo, hi, NonNegative() if scenario == "nonneg" else Box(lo, hi)


def feasible_start(rng, m, lo, hi):
    """A random point of the box ``[lo, hi]`` with ``m`` nonzeros."""
    x0 = np.zeros(lo.shape[0])
    S = rng.choice(lo.shape[0], m, replace=False)
    x0[S] = np.clip(rng.standard_normal(m), lo[S], hi[S])
    return x0


def correlated_instance(rng, n=30, p=12, k=4, rho=0.8):
    """AR(1) columns and +-U[1, 2] true values: plain IHT often stalls here."""
    Z = rng.standard_normal((n, p))
    X = np.empty((n, p))
    X[:, 0] = Z[:, 0]
    for j in range(1, p):
        X[:, j] = rho * X[:, j - 1] + np.sqrt(1 - rho ** 2) * Z[:, j]
    beta = np.zeros(p)
    S = rng.choice(p, k, replace=False)
    beta[S] = rng.uniform(1, 2, k) * rng.choice([-1, 1], k)
    return X, X @ beta + rng.standard_normal(n)


@pytest.mark.parametrize("scenario", ["nonneg", "box"])
def test_swap_never_increases_keeps_k_nonzeros_and_feasibility(scenario):
    rng = np.random.default_rng(31)
    p, k = 12, 4
    lo, hi, cset = scenario_box(rng, p, scenario)
    for _ in range(20):
        X, y = correlated_instance(rng)
        x0 = feasible_start(rng, k - 1, lo, hi)
        w, f, _ = exchange_search(least_squares(X, y), x0, k, lo, hi, 3)
        assert f <= objective(X, y, x0) and f == pytest.approx(objective(X, y, w), rel=1e-12)
        assert cset.contains(w)
        # exactly k nonzeros, unless the best fit over all coordinates has fewer (then the
        # search must have found it)
        full = lsq_linear(X, y, bounds=(lo, hi), method="bvls", tol=1e-13).x
        if np.count_nonzero(np.abs(full) > 1e-12) < k:
            assert f == pytest.approx(objective(X, y, full), rel=1e-9)
        else:
            assert np.count_nonzero(w) == k
        # the same search after IHT: never worse than IHT's own refitted output
        plain = iht(least_squares(X, y), k=k, constraint=cset, selection="auto", refit=True,
                    swap=0)
        swapped = iht(least_squares(X, y), k=k, constraint=cset, selection="auto", swap=3)
        assert swapped.fun <= plain.fun * (1 + 1e-10)
        assert cset.contains(swapped.x) and swapped.n_nonzero <= k


def test_swap_finds_best_subset_where_plain_iht_fails():
    rng = np.random.default_rng(21)
    p, k = 12, 4
    lo, hi = np.full(p, -1.5), np.full(p, 1.5)
    plain_hits = swap_hits = rpr_hits = rescued = 0
    for _ in range(30):
        X, y = correlated_instance(rng, p=p, k=k)
        fstar = best_subset(X, y, k, lo, hi)
        runs = [iht(least_squares(X, y), k=k, constraint=Box(-1.5, 1.5), selection="gain",
                    **options) for options in (dict(refit=True, swap=0), dict(swap=3),
                                               dict(relax=2.0))]
        hit = [r.fun <= fstar * (1 + 1e-8) for r in runs]
        plain_hits += hit[0]
        swap_hits += hit[1]
        rpr_hits += hit[2]
        rescued += hit[1] and not hit[0]
    assert plain_hits <= 15  # plain IHT at k (refitted) misses the best subset often here
    assert rescued >= 10 and swap_hits >= 24  # the exchange search repairs most misses
    assert rpr_hits >= 28  # relax -> prune -> exchange search (the default with relax=2)


@pytest.mark.parametrize("scenario", ["nonneg", "box", "free"])
def test_interpreted_exchange_search_and_refit_equal_compiled_bitwise(scenario, monkeypatch):
    # small problems run the kernels interpreted until they are compiled: the same
    # operations, so the same points and values, bit for bit (without bounds: the round's
    # specialisation that refits without box_qp)
    from jitopt.sparse import _refit
    from jitopt.sparse._splice_kernels import INTERPRETED

    rng = np.random.default_rng(40)
    p, k = 30, 5
    if scenario == "free":
        lo, hi, cset = np.full(p, -np.inf), np.full(p, np.inf), None
    else:
        lo, hi, cset = scenario_box(rng, p, scenario)
    for _ in range(8):
        X, y = correlated_instance(rng, n=40, p=p, k=k)
        x0 = feasible_start(rng, k - 1, lo, hi)
        runs = []
        for interpreted in (False, True):
            monkeypatch.setattr(_refit, "_kernel", lambda kernel, work, i=interpreted:
                                INTERPRETED[kernel.__name__] if i else kernel)
            w, f, n_swaps = exchange_search(least_squares(X, y), x0, k, lo, hi, 3)
            res = iht(least_squares(X, y), k=k, constraint=cset, relax=2.0)
            refit = iht(least_squares(X, y), k=2 * k, constraint=cset, refit=True, swap=0)
            runs.append((w, f, n_swaps, res.x, res.fun, refit.x, refit.fun))
        for a, b in zip(*runs):
            np.testing.assert_array_equal(a, b)


def test_small_calls_run_uncompiled_while_the_budget_lasts(monkeypatch):
    # a kernel neither compiled nor in Numba's cache runs uncompiled for a small work
    # until the uncompiled calls have taken BUDGET seconds; their time is counted
    from types import SimpleNamespace

    from jitopt import _interpreted
    from jitopt.sparse._splice_kernels import INTERPRETED

    fresh = SimpleNamespace(__name__="free_qp", overloads={}, py_func=None)
    monkeypatch.setattr(_interpreted, "in_cache", lambda kernel: False)
    monkeypatch.setattr(_interpreted, "_spent", 0.0)
    assert _interpreted.kernel_for(fresh, INTERPRETED, False) is fresh
    run = _interpreted.kernel_for(fresh, INTERPRETED, True)
    Q, v = np.array([[2.0, 0.0], [0.0, 4.0]]), np.zeros(2)
    assert run(Q, np.array([2.0, 4.0]), v) == pytest.approx(-3.0) and np.allclose(v, 1.0)
    assert _interpreted._spent > 0.0
    monkeypatch.setattr(_interpreted, "_spent", _interpreted.BUDGET)
    assert _interpreted.kernel_for(fresh, INTERPRETED, True) is fresh
    fresh.overloads = {"compiled": None}  # compiled in this process
    monkeypatch.setattr(_interpreted, "_spent", 0.0)
    assert _interpreted.kernel_for(fresh, INTERPRETED, True) is fresh
    fresh.overloads = {}
    with _interpreted.always_compiled():
        assert _interpreted.kernel_for(fresh, INTERPRETED, True) is fresh


@pytest.mark.parametrize("constraint", [None, NonNegative(), Box(-0.4, 0.9), L2Ball(2.0)],
                         ids=["free", "nonneg", "box", "l2"])
def test_uncompiled_iht_loop_equals_compiled_bitwise(constraint, monkeypatch):
    # on small problems the IHT loop, its step and the least-squares oracle run uncompiled
    # until compiled: the same operations, so the same iterates and values, bit for bit
    # (an L2 ball through the general projection)
    from jitopt.problems import _sparse
    from jitopt.sparse import _loops, _projection

    runs = []
    for uncompiled in (False, True):
        for module in (_sparse, _loops, _projection):
            monkeypatch.setattr(module, "kernel_for", lambda kernel, ns, small,
                                u=uncompiled: ns[kernel.__name__] if u else kernel)
        rng = np.random.default_rng(41)
        out = []
        for _ in range(3):
            X, y = correlated_instance(rng, n=40, p=15, k=4)
            res = iht(least_squares(X, y), k=4, constraint=constraint, relax=1.5,
                      maxiter=200)
            out += [res.x, res.fun, res.nit, res.n_increases]
        runs.append(out)
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a, b)


def test_one_specialisation_of_the_compiled_exchange_search():
    # (a search too large to run interpreted)
    from specialisations import assert_compiled_once

    assert_compiled_once(
        "import numpy as np, jitopt; from jitopt.sets import Box, NonNegative; "
        "X, y, _ = jitopt.problems.sparse_regression_data(100, 1000, 20, rng=0); "
        "[jitopt.sparse.iht(jitopt.problems.least_squares(X, y), k=20, constraint=c, "
        "relax=2.0) for c in (NonNegative(), Box(-1.5, 1.5))]",
        "jitopt.sparse._splice_kernels.splice_round")


def test_one_specialisation_of_the_exchange_search_without_bounds_and_no_box_refit():
    # without bounds the round refits by free_qp: box_qp is never compiled
    from specialisations import specialisations

    counts = specialisations(
        "import jitopt; X, y, _ = jitopt.problems.sparse_regression_data(100, 1000, 20, rng=0); "
        "jitopt.sparse.iht(jitopt.problems.least_squares(X, y), k=20, relax=2.0)")
    assert counts["jitopt.sparse._splice_kernels.splice_round"] == 1
    assert counts["jitopt.sparse._kernels.free_qp"] == 1
    assert all(n == 1 for n in counts.values()), counts
    assert not any(name.endswith("box_qp") for name in counts), counts


# -- variants -----------------------------------------------------------------------------

def test_zo_estimator_unbiased_on_quadratic():
    rng = np.random.default_rng(6)
    d = 20
    A = rng.standard_normal((d, d))
    A = A @ A.T / d + np.eye(d)
    c = rng.standard_normal(d)
    x = rng.standard_normal(d)
    calls = []

    def fun(v):
        calls.append(1)
        return 0.5 * v @ A @ v + c @ v

    N = 200_000
    g, nq = zo_gradient(fun, x, n_directions=N, smoothing=0.1, subspace_size=5, rng=0)
    true = A @ x + c
    assert np.linalg.norm(g - true) <= 0.02 * np.linalg.norm(true)
    assert nq == len(calls) == N + 1


def test_zo_query_count_is_exact():
    X, y, _ = sparse_regression_data(50, 12, 2, rng=7)
    problem = least_squares(X, y)
    res = iht(problem, k=2, variant="zeroth_order", n_directions=3, direction_growth=1.5,
              max_directions=10, maxiter=15, tol=0.0, rng=0)
    q = [min(10, int(np.ceil(3 * 1.5 ** t - 1e-9))) for t in range(res.nit + 1)]
    assert res.nfev == problem.counts.nfev == sum(qt + 1 for qt in q)
    assert res.njev == 0


def test_zo_reaches_deterministic_objective():
    X, y, _ = sparse_regression_data(80, 12, 2, rng=8)
    det = iht(least_squares(X, y), k=2, tol=1e-10)
    zo = iht(least_squares(X, y), k=2, variant="zeroth_order", smoothing=1e-6, maxiter=300,
             n_directions=12, rng=1)
    assert zo.fun <= det.fun * (1 + 1e-3)


def test_stochastic_full_batch_equals_deterministic_bitwise():
    X, y, _ = sparse_regression_data(60, 15, 3, rng=9)
    labels = np.sign(y - np.median(y))
    det = iht(logistic(X, labels, 0.1), k=3, step=0.5, maxiter=30, tol=0.0, history=True)
    sto = iht(logistic(X, labels, 0.1), k=3, variant="stochastic", batch_size=60, step=0.5,
              maxiter=30, tol=0.0, history=True, rng=0)
    np.testing.assert_array_equal(det.x, sto.x)
    np.testing.assert_array_equal(det.history["fun"], sto.history["fun"])


def test_stochastic_growing_batch_reaches_deterministic():
    X, y, _ = sparse_regression_data(200, 20, 3, rng=10)
    det = iht(least_squares(X, y), k=3, constraint=NonNegative(), step="lipschitz", tol=1e-12)
    problem = least_squares(X, y)
    sto = iht(problem, k=3, constraint=NonNegative(), variant="stochastic", batch_size=5,
              batch_growth=1.2, tol=1e-12, rng=0)
    assert sto.fun == pytest.approx(det.fun, rel=1e-6)
    batches = [min(200, int(np.ceil(5 * 1.2 ** t - 1e-9))) for t in range(sto.nit + 1)]
    assert sto.nifo == sum(batches)  # per-sample gradients, counted exactly
    assert sto.nfev == sto.nit + 1


# -- warm starts, path, Gram, relax -------------------------------------------------------

def test_path_warm_start_never_increases():
    X, y, _ = sparse_regression_data(80, 30, 5, rho=0.6, rng=11)
    path = iht_path(least_squares(X, y), [4, 2, 6, 3], constraint=NonNegative())
    assert [r.k for r in path] == [2, 3, 4, 6]
    for prev, cur in zip(path, path[1:]):
        assert cur.fun <= prev.fun + 1e-12
        assert cur.n_nonzero <= cur.k


def test_gram_and_plain_gradients_agree():
    X, y, _ = sparse_regression_data(30, 50, 4, rng=12)
    w = np.zeros(50)
    w[[3, 7, 11]] = [1.0, -2.0, 0.5]
    cached = least_squares(X, y, gram=True)
    for t in range(5):  # rows are cached once the support has stayed for 3 evaluations
        f1, g1 = cached.cost_and_egrad(w)
        np.testing.assert_allclose(g1, X.T @ (X @ w - y) / 30, atol=1e-12)
        assert cached.n_cached_rows == (3 if t >= 2 else 0)
        assert cached.gram_rows_cached([3, 11]) == (t >= 2)
    assert not cached.gram_rows_cached([3, 12])
    f2, g2 = least_squares(X, y, gram=False).cost_and_egrad(w)
    np.testing.assert_allclose(g2, g1, atol=1e-12)
    assert f1 == pytest.approx(objective(X, y, w), rel=1e-13) and f1 == f2
    idx = np.array([7, 40, 3])
    np.testing.assert_allclose(cached.gram_rows(idx), X[:, idx].T @ X / 30, atol=1e-12)
    Q, c = cached.gram_block(idx)
    np.testing.assert_allclose(Q, X[:, idx].T @ X[:, idx] / 30, atol=1e-12)
    np.testing.assert_allclose(c, X[:, idx].T @ y / 30, atol=1e-12)
    np.testing.assert_allclose(cached.gram_diagonal(), (X ** 2).sum(0) / 30, atol=1e-12)


def test_relax_prune_refit_is_k_sparse_and_refitted():
    X, y, beta = sparse_regression_data(100, 40, 5, rho=0.7, snr=2, signed=True, rng=13)
    res = iht(least_squares(X, y), k=5, constraint=Box(-1.5, 1.5), selection="gain", relax=2.0)
    assert res.k_work == 10 and res.n_nonzero == 5
    S = res.support
    ref = lsq_linear(X[:, S], y, bounds=(-1.5, 1.5), method="bvls", tol=1e-12)
    w = np.zeros(40)
    w[S] = ref.x
    assert res.fun == pytest.approx(objective(X, y, w), rel=1e-9)


def test_nonfinite_oracle_stops():
    def cost(x):
        return np.nan if x[0] > 0.5 else float(x @ x) - 2 * x[0]

    problem = jitopt.Problem(jitopt.manifolds.Euclidean(3), cost, lambda x: 2 * x - [2, 0, 0])
    res = iht(problem, k=1, step=1.0)
    assert not res.success and res.status == jitopt.Status.NONFINITE
    assert np.isfinite(res.fun)


def test_invariances():
    X, y, _ = sparse_regression_data(60, 12, 3, rng=14)
    base = iht(least_squares(X, y), k=3, constraint=Box(-0.5, 2.0), selection="gain", relax=2)
    perm = np.random.default_rng(0).permutation(12)
    res = iht(least_squares(X[:, perm], y), k=3, constraint=Box(-0.5, 2.0), selection="gain",
              relax=2)
    np.testing.assert_allclose(res.x, base.x[perm], atol=1e-9)
    res = iht(least_squares(X, 3 * y), k=3, constraint=Box(-1.5, 6.0), selection="gain", relax=2)
    np.testing.assert_allclose(res.x, 3 * base.x, atol=1e-8)


# -- estimators ---------------------------------------------------------------------------

def test_regressor_intercept_equals_centred_fit():
    X, y, _ = sparse_regression_data(80, 20, 3, rng=15)
    a = IHTRegressor(3, constraint="nonnegative").fit(X + 5.0, y + 7.0)
    Xc, yc = X - X.mean(0), y - y.mean()
    b = IHTRegressor(3, constraint="nonnegative", fit_intercept=False).fit(Xc, yc)
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-10)
    assert a.intercept_ == pytest.approx(y.mean() + 7.0 - (X.mean(0) + 5.0) @ a.coef_)
    assert a.score(X + 5.0, y + 7.0) > 0.8


def test_regressor_recovers_support_with_bounds():
    X, y, beta = sparse_regression_data(150, 60, 5, rho=0.3, snr=10, rng=16)
    est = IHTRegressor(5, constraint=Box(0.0, 1.7), relax=2.0).fit(X, y)
    assert set(np.flatnonzero(est.coef_)) == set(np.flatnonzero(beta))
    assert est.coef_.max() <= 1.7 and est.coef_.min() >= 0


def test_classifier_recovers_support():
    rng = np.random.default_rng(17)
    X = rng.standard_normal((300, 30))
    w = np.zeros(30)
    w[[2, 9, 20]] = [3.0, -3.0, 2.0]
    y = np.where(X @ w + 0.5 + 0.3 * rng.standard_normal(300) > 0, "a", "b")
    clf = IHTClassifier(3).fit(X, y)
    assert set(np.flatnonzero(clf.coef_[0])) == {2, 9, 20}
    assert clf.score(X, y) > 0.95
    np.testing.assert_allclose(clf.predict_proba(X).sum(1), 1.0)


@pytest.mark.parametrize("est", [IHTRegressor(), IHTClassifier()], ids=lambda e: type(e).__name__)
def test_check_estimator(est):
    from sklearn.utils.estimator_checks import check_estimator

    check_estimator(est)


# -- bad input ----------------------------------------------------------------------------

def test_bad_input():
    X, y, _ = sparse_regression_data(20, 6, 2, rng=18)
    problem = least_squares(X, y)
    with pytest.raises(ValueError, match="k must be in"):
        iht(problem, k=0)
    with pytest.raises(ValueError, match="k must be in"):
        iht(problem, k=7)
    with pytest.raises(ValueError, match="support-preserving"):
        iht(problem, k=2, constraint=Simplex(1.0))
    with pytest.raises(ValueError, match="support-preserving"):
        iht(problem, k=2, constraint=Box(0.1, 1.0))
    with pytest.raises(ValueError, match="separable"):
        iht(problem, k=2, constraint=L2Ball(1.0), selection="gain")
    with pytest.raises(TypeError, match="FiniteSumProblem"):
        iht(jitopt.Problem(jitopt.manifolds.Euclidean(2), lambda x: 0.0, lambda x: x), k=1,
            variant="stochastic")
    with pytest.raises(ValueError, match="finite"):
        least_squares(np.where(X > 1, np.nan, X), y)
    with pytest.raises(ValueError, match="y must be"):
        least_squares(X, y[:-1])
    with pytest.raises(ValueError, match="x0 must have shape"):
        iht(problem, np.zeros(5), k=2)
    with pytest.raises(ValueError, match="n_nonzero_coefs"):
        IHTRegressor(10).fit(X, y)
    with pytest.raises(ValueError, match="NaN"):
        IHTRegressor(2).fit(np.where(X > 1, np.nan, X), y)
    with pytest.raises(ValueError):
        IHTRegressor(2).fit(X, y[:-1])
    with pytest.raises(ValueError, match="constraint"):
        IHTRegressor(2, constraint="positive").fit(X, y)
    with pytest.raises(ValueError, match="constraint"):
        iht(problem, k=2, constraint="positive")
    with pytest.raises(TypeError, match="constraint"):
        iht(problem, k=2, constraint=3)
    with pytest.raises(ValueError, match="swap must be in"):
        iht(problem, k=2, swap=-1)
    with pytest.raises(ValueError, match="swap > 0 needs"):
        iht(problem, k=2, constraint=L2Ball(1.0), swap=2)
    # the logistic loss has the GLM exchange search, with a separable constraint only
    with pytest.raises(ValueError, match="swap > 0 needs"):
        iht(logistic(X, np.sign(y)), k=2, constraint=L2Ball(1.0), swap=2)
    with pytest.raises(ValueError, match="swap > 0 needs"):
        iht(logistic(X, np.sign(y)), k=2, variant="zeroth_order", swap=2)
    searched, plain = (iht(logistic(X, np.sign(y)), k=2, swap=s, refit=True) for s in (2, 0))
    assert searched.fun <= plain.fun + 1e-12 and searched.n_nonzero <= 2


def test_user_arrays_not_modified():
    X, y, _ = sparse_regression_data(30, 8, 2, rng=19)
    X0, y0, x0 = X.copy(), y.copy(), np.ones(8)
    iht(least_squares(X, y), x0, k=2, constraint=NonNegative(), relax=2)
    IHTRegressor(2).fit(X, y)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(y, y0)
    np.testing.assert_array_equal(x0, np.ones(8))


def test_same_seed_same_result():
    X, y, _ = sparse_regression_data(60, 10, 2, rng=20)
    a = iht(least_squares(X, y), k=2, variant="stochastic", batch_size=4, rng=3)
    b = iht(least_squares(X, y), k=2, variant="stochastic", batch_size=4, rng=3)
    np.testing.assert_array_equal(a.x, b.x)


# -- the solver contract ------------------------------------------------------------------

def test_k_is_a_required_keyword():
    X, y, _ = sparse_regression_data(20, 6, 2, rng=18)
    problem = least_squares(X, y)
    for args in ((), (2,)):  # k is not positional: iht(problem, 2) gives x0 = 2 and no k
        with pytest.raises(TypeError, match="'k'"):
            iht(problem, *args)
    with pytest.raises(ValueError, match="x0 must be a 1-D array"):
        iht(problem, 2, k=2)
    with pytest.raises(TypeError, match="ks"):
        iht_path(problem, [2], k=2)
    sphere = jitopt.Problem(jitopt.manifolds.Sphere(3), lambda x: x[0], lambda x: 0 * x)
    with pytest.raises(TypeError, match="'iht' takes a Problem on Euclidean, got one on Sphere"):
        iht(sphere, k=1)
    assert "iht" not in jitopt.available_methods(sphere)
    with pytest.raises(ValueError, match="Euclidean"):  # a matrix point: Euclidean(d) only
        iht(jitopt.Problem(jitopt.manifolds.Euclidean(2, 2), lambda x: x[0, 0],
                           lambda x: 0 * x), k=1)


def test_registered_and_minimize_equals_direct_call():
    X, y, _ = sparse_regression_data(60, 15, 3, rng=21)
    problem = least_squares(X, y)
    assert "iht" in jitopt.available_methods(problem)
    assert jitopt.get_method("iht").tol_option == "tol"
    a = jitopt.minimize(problem, method="iht", tol=1e-9, options={"k": 3, "relax": 2.0})
    b = iht(least_squares(X, y), k=3, relax=2.0, tol=1e-9)
    np.testing.assert_array_equal(a.x, b.x)
    assert (a.fun, a.nit, a.nfev, a.status) == (b.fun, b.nit, b.nfev, b.status)
    assert a.n_nonzero == 3 and a.success


def test_stationarity_is_the_gradient_mapping_at_the_returned_point():
    X, y, _ = sparse_regression_data(60, 15, 3, rng=22)
    for options in (dict(), dict(refit=True), dict(relax=2.0), dict(relax=2.0, swap=0),
                    dict(constraint=L2Ball(2.0), refit=True)):
        res = iht(least_squares(X, y), k=3, history=True, **options)
        assert res.stationarity_measure == "gradient mapping norm"
        g = X.T @ (X @ res.x - y) / 60
        z = res.x - res.step * g
        expected = np.linalg.norm(res.x - two_step_projection(
            z, 3, options.get("constraint"), res.selection)) / res.step
        assert res.stationarity == pytest.approx(expected, rel=1e-9, abs=1e-12)
        assert res.history["nfev"][-1] <= res.nfev and res.history["step"][0] > 0


def test_numba_loop_takes_the_python_loop_steps():
    X, y, _ = sparse_regression_data(80, 25, 4, rho=0.6, rng=23)
    for options in (dict(), dict(constraint=Box(-1.5, 1.5), selection="gain", relax=2.0),
                    dict(constraint=NonNegative() & L2Ball(3.0), step="lipschitz"),
                    dict(n_unconstrained=2, max_time=60.0)):
        slow = iht(least_squares(X, y), k=4, jit=False, history=True, **options)
        fast = iht(least_squares(X, y), k=4, history=True, **options)
        chunked = iht(least_squares(X, y), k=4, **options)
        assert (slow.loop, fast.loop) == ("python", "numba")
        for res in (fast, chunked):
            np.testing.assert_array_equal(res.x, slow.x)
            assert (res.nit, res.nfev, res.njev, res.nifo, res.n_increases, res.status) == \
                (slow.nit, slow.nfev, slow.njev, slow.nifo, slow.n_increases, slow.status)
        np.testing.assert_array_equal(fast.history["fun"], slow.history["fun"])
        np.testing.assert_array_equal(fast.history["stationarity"],
                                      slow.history["stationarity"])


def test_max_time_zero_stops_at_once_and_stays_k_sparse():
    X, y, _ = sparse_regression_data(60, 15, 3, rng=24)
    for jit in ("auto", False):
        res = iht(least_squares(X, y), np.ones(15), k=3, relax=2.0, max_time=0.0, jit=jit)
        assert res.status == jitopt.Status.MAXTIME and not res.success and res.nit == 0
        assert "max_time = 0" in res.message
        assert res.n_nonzero <= 3 and np.isfinite(res.stationarity)
    with pytest.raises(ValueError, match="max_time"):
        iht(least_squares(X, y), k=3, max_time=-1.0)


def test_contract_case_has_the_known_best_subset():
    import cases_iht

    X, y = cases_iht.data()
    best = min(itertools.combinations(range(6), cases_iht.K),
               key=lambda S: np.linalg.lstsq(X[:, S], y, rcond=None)[1][0])
    assert best == cases_iht.SUPPORT
    problem, x0, options = cases_iht.make()
    res = iht(problem, x0, **options)
    assert res.success and tuple(res.support) == cases_iht.SUPPORT


@pytest.mark.parametrize("fault, status", [("raise", jitopt.Status.ORACLE_ERROR),
                                           ("nan", jitopt.Status.NONFINITE)])
@pytest.mark.parametrize("at", [1, 4, 9])
def test_oracle_fault_at_call_k_becomes_a_result(fault, status, at):
    import cases_iht

    problem, x0, options = cases_iht.make()
    healthy = iht(problem, x0, history=True, **options)
    problem, x0, options = cases_iht.make(fault, at)
    res = iht(problem, x0, history=True, **options)
    assert res.status == status and not res.success
    assert "iteration" in res.message and "egrad" in res.message
    assert np.isfinite(res.x).all() and res.x.shape == (6,)
    if at > 1:  # the best iterate before the fault: one of the healthy run's iterates
        assert res.fun == pytest.approx(healthy.history["fun"][:res.nit + 1].min(), rel=1e-12)
    if fault == "raise":
        assert isinstance(res.fault.__cause__, ZeroDivisionError)


def test_fault_in_the_run_at_k_stops_the_relaxed_run():
    """The cost is NaN at points with at most k nonzeros: the relaxed run and its refit
    (k_work nonzeros) are fine, the run at k after the pruning is not."""
    X, y, _ = sparse_regression_data(40, 10, 2, rng=25)

    def cost(x):
        r = X @ x - y
        return np.nan if np.count_nonzero(x) <= 2 else 0.5 * float(r @ r) / 40

    problem = jitopt.Problem(jitopt.manifolds.Euclidean(10), cost,
                             lambda x: X.T @ (X @ x - y) / 40)
    res = iht(problem, np.ones(10), k=2, relax=2.0)
    assert res.status == jitopt.Status.NONFINITE and not res.success
    assert "iteration" in res.message and np.isfinite(res.fun)
    assert np.count_nonzero(res.x) == 4  # the best relaxed iterate


def test_same_seed_same_result_zeroth_order():
    X, y, _ = sparse_regression_data(40, 10, 2, rng=26)
    a = iht(least_squares(X, y), k=2, variant="zeroth_order", maxiter=20, rng=5)
    b = iht(least_squares(X, y), k=2, variant="zeroth_order", maxiter=20,
            rng=np.random.default_rng(5))
    np.testing.assert_array_equal(a.x, b.x)
    assert a.nfev == b.nfev


def test_one_specialisation_per_kernel_of_a_compiled_iht_loop():
    # (a problem too large to run the loop uncompiled)
    from specialisations import assert_compiled_once

    assert_compiled_once(
        "import jitopt; from jitopt.sets import NonNegative; from jitopt.sparse import "
        "IHTRegressor; X, y, _ = jitopt.problems.sparse_regression_data(300, 200, 5, rng=0); "
        "jitopt.sparse.iht(jitopt.problems.least_squares(X, y), k=5, "
        "constraint=NonNegative(), selection='signed', relax=2.0); IHTRegressor(5).fit(X, y)",
        "_steps")


# -- the exchange round's pieces ----------------------------------------------------------

@pytest.mark.parametrize("compiled", [True, False])
def test_best_gain_is_the_first_largest_and_passes_over_nan(compiled):
    # the maximum is taken on the gains' bits as integers: the same index as NumPy's argmax
    # (the first of equal largest), -1 when no gain is positive, never a NaN gain
    from jitopt.sparse._splice_kernels import INTERPRETED, _best_gain

    best_gain = _best_gain if compiled else INTERPRETED["_best_gain"]
    rng = np.random.default_rng(5)
    for trial in range(200):
        p = int(rng.integers(1, 60))
        g, Ga = rng.standard_normal(p), rng.standard_normal(p)
        h = np.where(rng.random(p) < 0.2, 0.0, rng.random(p))
        if trial % 3 == 0:  # exact ties of the largest gain
            g[rng.integers(0, p, 3)] = 2.0
            Ga[:] = 0.0
            h[h > 0] = 1.0
        gain = np.empty(p)
        expected = (g - 0.7 * Ga) ** 2 * h
        want = int(np.argmax(expected)) if expected.max() > 0 else -1
        assert best_gain(g, Ga, 0.7, h, gain) == want
        np.testing.assert_array_equal(gain, expected)
        if p > 2:
            g2 = g.copy()
            g2[0], g2[1] = np.nan, -np.nan  # (both signs of NaN)
            finite = expected.copy()
            finite[:2] = 0.0
            want = int(np.argmax(finite)) if finite.max() > 0 else -1
            assert best_gain(g2, Ga, 0.7, h, gain) == want
    assert best_gain(np.zeros(4), np.zeros(4), 1.0, np.ones(4), np.empty(4)) == -1


def test_gram_inverse_is_the_inverse_of_the_symmetrised_block():
    from jitopt.sparse._splice_kernels import _gram_inverse

    rng = np.random.default_rng(6)
    A = rng.standard_normal((60, 40))
    G = A.T @ A / 60
    G[3, 7] += 1e-13  # (slightly asymmetric, as a cached Gram row can be)
    S = np.array([1, 3, 7, 20, 33])
    rows = S.copy()
    H = np.empty((5, 5))
    assert _gram_inverse(G, rows, S, H)
    Q = 0.5 * (G[np.ix_(S, S)] + G[np.ix_(S, S)].T)
    np.testing.assert_allclose(H, np.linalg.inv(Q), rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(H, H.T)
    G[:, 20] = G[20, :] = G[:, 3]  # a repeated column: Q singular
    G[20, 20] = G[3, 3]
    assert not _gram_inverse(G, rows, S, H)


@pytest.mark.parametrize("relative_thresh", [1e-10, 1e-3, 3e-2])
def test_rank_update_screen_accepts_what_refitting_every_candidate_accepts(relative_thresh):
    # a trial is refitted only when its rank-updated value is below q - thresh (up to
    # rounding): the round accepts the exchange that refitting every trial accepts; a large
    # threshold makes trials that gain less than it decide
    from jitopt.sparse._splice_kernels import INTERPRETED, splice_round

    every = dict(INTERPRETED, _gram_inverse=lambda G, rows, S, H: False)  # (no screen)
    plain = getattr(splice_round, "py_func", splice_round)  # (a function without the JIT)
    every["splice_round"] = type(plain)(plain.__code__, every)
    rng = np.random.default_rng(8)
    n, p, k = 40, 25, 6
    outcomes = set()
    for _ in range(30):
        X, y = correlated_instance(rng, n=n, p=p, k=k)
        G, rhs = X.T @ X / n, X.T @ y / n
        S = np.sort(rng.choice(p, k, replace=False))
        Q = G[np.ix_(S, S)]
        v = np.linalg.solve(Q, rhs[S])
        q = 0.5 * v @ Q @ v - rhs[S] @ v
        thresh = relative_thresh * abs(q)
        for _ in range(20):  # the rounds of a search, up to one that accepts nothing
            args = (G, S.copy(), S, v, q, X, rhs, np.diag(G).copy(), None, None,
                    np.zeros(0, dtype=np.int64), 3, thresh)
            screened, refitted = splice_round(*args), every["splice_round"](*args)
            assert screened[0] == refitted[0]
            np.testing.assert_array_equal(screened[1], refitted[1])
            np.testing.assert_allclose(screened[2], refitted[2], rtol=1e-9)
            outcomes.add(bool(screened[0]))
            if not screened[0]:
                break
            assert screened[3] < q - thresh
            S, v, q = screened[1], screened[2], screened[3]
    assert outcomes == {True, False}  # (both kinds of round were met)


def test_add_gain_without_bounds_is_the_box_formula_at_infinite_bounds():
    from jitopt.sparse._refit import _add_gain, _best_additions

    rng = np.random.default_rng(3)
    g, diag = rng.standard_normal(200), rng.uniform(0.1, 3.0, 200)
    inf = np.full(200, np.inf)
    np.testing.assert_allclose(_add_gain(g, diag, None, None), _add_gain(g, diag, -inf, inf),
                               rtol=1e-14)
    np.testing.assert_allclose(_add_gain(g, diag, None, None), g ** 2 / (2 * diag),
                               rtol=1e-14)
    S = np.array([int(np.argmax(g ** 2 / diag))])  # the best one is in S: never returned
    best = _best_additions(g, S, diag, None, None, 5)
    assert S[0] not in best
    np.testing.assert_array_equal(best, np.argsort(-(g ** 2 / diag))[1:6])


def test_finiteness_checks_of_the_least_squares_data():
    from jitopt.problems import LeastSquares
    from jitopt.validation import all_finite

    X, y = np.ones((4, 3)), np.ones(4)
    huge = np.full((4, 3), 1e200)  # finite, but its sum of squares overflows
    for bad, message in ((np.where(np.eye(4, 3) > 0, np.nan, 1.0), "must be finite"),
                         (np.where(np.eye(4, 3) > 0, -np.inf, 1.0), "must be finite"),
                         (huge, "too large")):
        with pytest.raises(ValueError, match=message):
            LeastSquares(bad, y)
    with pytest.raises(ValueError, match="must be finite"):
        LeastSquares(X, np.array([1.0, np.inf, 0.0, 1.0]))
    assert all_finite(X) and all_finite(np.full(5, 1e308))  # (its sum of squares overflows)
    bad = np.asfortranarray(np.arange(12.0).reshape(3, 4))
    bad[2, 1] = np.nan
    assert not all_finite(bad) and not all_finite(bad[:, 1::2]) and all_finite(bad[:, ::2])
    assert not all_finite(np.array([1.0, np.nan])) and not all_finite(np.array([np.inf]))
    assert not all_finite(np.array([np.inf, -np.inf, 1e308]))
