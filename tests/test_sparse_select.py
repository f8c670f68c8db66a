"""Sparse models that choose their own k: the information criteria, the paths, the search,
cross-validation, sample weights and constraints of IHTRegressorCV / IHTClassifierCV."""

import itertools
import math

import numpy as np
import pytest

from jitopt.problems import least_squares, sparse_regression_data
from jitopt.sets import Box
from jitopt.sparse import (IHTClassifier, IHTClassifierCV, IHTRegressor, IHTRegressorCV, iht,
                           information_criterion, search_candidates)

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def _ols(X, y, support, sw=None):
    """Weighted least squares with an intercept on the columns ``support``: (coef, b)."""
    sw = np.ones(len(y)) if sw is None else sw
    A = np.column_stack([X[:, support], np.ones(len(y))])
    r = np.sqrt(sw)
    sol = np.linalg.lstsq(A * r[:, None], y * r, rcond=None)[0]
    coef = np.zeros(X.shape[1])
    coef[list(support)] = sol[:-1]
    return coef, sol[-1]


def _best_subsets(X, y, ks):
    """Brute force: for each k the least RSS over all supports of size k, and the support."""
    out = {}
    for k in ks:
        best = (math.inf, ())
        for s in itertools.combinations(range(X.shape[1]), k):
            coef, b = _ols(X, y, list(s))
            r = y - X @ coef - b
            best = min(best, (float(r @ r), s))
        out[k] = best
    return out


# -- the criteria ---------------------------------------------------------------------------

def test_information_criterion_hand_values():
    n, p, D, df = 200.0, 50, 12.5, 4
    expected = {"loss": D, "aic": D + 8, "bic": D + 2 * math.log(n) * df,
                "gic": D + 2 * math.log(p) * math.log(math.log(n)) * df,
                "ebic": D + 2 * (math.log(n) + 2 * math.log(p)) * df}
    for name, value in expected.items():
        assert information_criterion(D, df, n, p, name, ic_coef=2.0) == pytest.approx(value)
    with pytest.raises(ValueError, match="gic"):
        information_criterion(D, df, 2.0, p, "gic")
    with pytest.raises(ValueError, match="criterion"):
        information_criterion(D, df, n, p, "hqic")


@pytest.mark.parametrize("ic_type", ["aic", "bic", "gic", "ebic", "loss"])
def test_information_criterion_equals_abess(ic_type):
    abess = pytest.importorskip("abess")
    X, y, _ = sparse_regression_data(120, 15, 3, rng=1)
    model = abess.LinearRegression(support_size=[4], ic_type=ic_type, ic_coef=2.0,
                                   thread=1).fit(X, y)
    D = 120 * math.log(model.train_loss_)  # abess's train_loss_ is RSS / (2n)
    df = np.count_nonzero(model.coef_)
    assert information_criterion(D, df, 120, 15, ic_type, 2.0) == \
        pytest.approx(model.eval_loss_, rel=1e-10)


@pytest.mark.parametrize("ic_type", ["aic", "gic", "ebic"])
def test_choice_equals_abess(ic_type):
    """Same data, same candidates: the criterion path and the chosen k equal abess's (AIC
    keeps noise features here, so a wrong penalty constant would show)."""
    abess = pytest.importorskip("abess")
    X, y, _ = sparse_regression_data(40, 8, 2, rho=0.3, snr=2.0, rng=20)
    ks = range(0, 8)
    ours = IHTRegressorCV(ks, criterion=ic_type).fit(X, y)
    theirs = [abess.LinearRegression(support_size=[k], ic_type=ic_type, thread=1).fit(X, y)
              for k in ks]
    theirs = np.array([m.eval_loss_ for m in theirs])
    # equal where both find the best subset; at k = 7 abess's fit is worse than ours
    np.testing.assert_allclose(ours.criterion_[:7], theirs[:7], rtol=1e-9)
    assert ours.criterion_[7] < theirs[7] - 0.1
    chosen = abess.LinearRegression(support_size=ks, ic_type=ic_type, thread=1).fit(X, y)
    assert ours.k_ == np.count_nonzero(chosen.coef_)
    np.testing.assert_allclose(ours.coef_, chosen.coef_, atol=1e-8)
    if ic_type == "aic":
        assert ours.k_ > 2


# -- the path against brute force -------------------------------------------------------------

@pytest.mark.parametrize("criterion", ["ebic", "gic", "bic", "aic"])
def test_criterion_path_equals_brute_force(criterion):
    X, y, beta = sparse_regression_data(60, 9, 3, rho=0.3, snr=3.0, rng=2)
    ks = range(0, 7)
    model = IHTRegressorCV(ks, criterion=criterion).fit(X, y)
    brute = _best_subsets(X, y, ks)
    values = [information_criterion(60 * math.log(brute[k][0] / 120), k, 60, 9, criterion)
              for k in ks]
    np.testing.assert_allclose(model.criterion_, values, rtol=1e-9)
    assert model.k_ == int(np.argmin(values))
    assert tuple(model.support_) == brute[model.k_][1]
    assert model.cv_results_["n_nonzero"].tolist() == list(ks)


@pytest.mark.parametrize("n, p", [(120, 30), (60, 150)])
@pytest.mark.parametrize("criterion", ["cv", "ebic"])
def test_chosen_k_is_the_true_support(n, p, criterion):
    X, y, beta = sparse_regression_data(n, p, 4, rho=0.2, snr=10.0, rng=3)
    model = IHTRegressorCV(range(0, 9), criterion=criterion).fit(X, y)
    truth = np.flatnonzero(beta)
    assert model.k_ == 4 and np.array_equal(model.support_, truth)
    coef, b = _ols(X, y, truth)  # the refit is the least-squares fit on the support
    np.testing.assert_allclose(model.coef_, coef, atol=1e-9)
    assert model.intercept_ == pytest.approx(b, abs=1e-9)


def test_path_objective_never_increases_and_k0_is_the_mean():
    X, y, _ = sparse_regression_data(80, 20, 3, rng=4)
    model = IHTRegressorCV(range(0, 8), criterion="loss").fit(X + 1.0, y + 2.0)
    assert np.all(np.diff(model.cv_results_["deviance"]) <= 1e-9)
    r0 = y - y.mean()
    assert model.cv_results_["deviance"][0] == pytest.approx(80 * math.log(r0 @ r0 / 160))
    np.testing.assert_array_equal(model.path_[0], 0.0)


# -- cross-validation -------------------------------------------------------------------------

def test_cv_scores_equal_best_subset_fits_on_given_splits():
    X, y, _ = sparse_regression_data(60, 8, 2, rho=0.3, snr=3.0, rng=5)
    rng = np.random.default_rng(0)
    order = rng.permutation(60)
    splits = [(np.sort(order[20:]), np.sort(order[:20])), (np.sort(order[:40]), np.sort(order[40:]))]
    ks = [0, 1, 2, 3]
    model = IHTRegressorCV(ks, cv=splits).fit(X, y)
    res = model.cv_results_
    assert res["param_k"].tolist() == ks and res["params"][2] == {"k": 2}
    for s, (train, test) in enumerate(splits):
        brute = _best_subsets(X[train], y[train], ks)
        for j, k in enumerate(ks):
            coef, b = _ols(X[train], y[train], list(brute[k][1]))
            mse = np.mean((y[test] - X[test] @ coef - b) ** 2)
            assert res[f"split{s}_test_score"][j] == pytest.approx(-mse, rel=1e-9)
    mean = res["mean_test_score"]
    np.testing.assert_allclose(mean, (res["split0_test_score"] + res["split1_test_score"]) / 2)
    assert model.k_ == ks[int(np.flatnonzero(mean == mean.max())[0])]
    assert res["rank_test_score"][model.best_index_] == 1


def test_cv_n_jobs_scoring_and_refit_false():
    from sklearn.exceptions import NotFittedError
    from sklearn.model_selection import KFold

    X, y, _ = sparse_regression_data(80, 20, 3, rng=6)
    cv = KFold(4, shuffle=True, random_state=0)
    a = IHTRegressorCV(range(6), cv=cv, n_jobs=1).fit(X, y)
    b = IHTRegressorCV(range(6), cv=cv, n_jobs=2).fit(X, y)
    np.testing.assert_array_equal(a.cv_results_["mean_test_score"],
                                  b.cv_results_["mean_test_score"])
    c = IHTRegressorCV(range(6), cv=cv, scoring="neg_mean_squared_error").fit(X, y)
    np.testing.assert_allclose(c.cv_results_["mean_test_score"],
                               a.cv_results_["mean_test_score"], rtol=1e-12)
    d = IHTRegressorCV(range(6), cv=cv, refit=False).fit(X, y)
    assert d.k_ == a.k_ and not hasattr(d, "coef_")
    with pytest.raises(NotFittedError):
        d.predict(X)


def test_cv_split_data_in_one_buffer_gives_the_same_scores():
    # the default search makes each split's training data in its job, in one buffer reused
    # by the next split and centred, weighted and scaled in place; with patience every
    # split keeps its own copy: the same scores exactly, and the caller's X untouched
    X, y, _ = sparse_regression_data(83, 25, 3, rng=4)  # splits of 17 and 16 test rows
    sw = np.random.default_rng(2).uniform(0.5, 2.0, 83)
    X0 = X.copy()
    for weights, constraint in [(None, None), (sw, None), (sw, "nonnegative")]:
        kw = dict(cv=5, constraint=constraint)
        a = IHTRegressorCV(range(8), **kw).fit(X, y, sample_weight=weights)
        b = IHTRegressorCV(range(8), patience=100, **kw).fit(X, y, sample_weight=weights)
        assert len(a.cv_results_["param_k"]) == len(b.cv_results_["param_k"]) == 8
        np.testing.assert_array_equal(a.cv_results_["mean_test_score"],
                                      b.cv_results_["mean_test_score"])
    np.testing.assert_array_equal(X, X0)


def test_one_standard_error_rule():
    X, y, _ = sparse_regression_data(60, 30, 3, snr=2.0, rng=19)  # CV's best adds noise
    best = IHTRegressorCV(range(12)).fit(X, y)
    one_se = IHTRegressorCV(range(12), k_rule="1se").fit(X, y)
    res = one_se.cv_results_
    mean, row = res["mean_test_score"], int(np.argmax(res["mean_test_score"]))
    assert best.k_ == row
    threshold = mean[row] - res["std_test_score"][row] / np.sqrt(5)
    assert one_se.k_ == int(np.flatnonzero(mean >= threshold)[0]) == 3 < best.k_ == 6
    np.testing.assert_allclose(mean, best.cv_results_["mean_test_score"])


def _unimodal(curve):
    """Strictly decreasing up to its minimum, strictly increasing after it."""
    low = int(np.argmin(curve))
    return bool(np.all(np.diff(curve[:low + 1]) < 0) and np.all(np.diff(curve[low:]) > 0))


def test_golden_search_finds_the_minimum_of_every_unimodal_curve():
    # brute force: random strictly unimodal curves, their minimum anywhere
    rng = np.random.default_rng(0)
    for m in (1, 2, 4, 5, 6, 8, 13, 30, 100):
        for _ in range(100):
            low = int(rng.integers(m))
            steps = np.cumsum(rng.random(m) + 0.01)
            curve = np.abs(steps - steps[low])
            best, scores = search_candidates(m, lambda idx: curve[idx], "golden")
            assert best == low
            assert len(scores) <= math.log(m, 1.618) + 4
            if m >= 8:
                assert len(scores) < m


def test_golden_search_equals_sequential_on_a_unimodal_curve():
    X, y, beta = sparse_regression_data(400, 30, 5, rho=0.2, snr=10.0, rng=5)
    ks = range(0, 16)
    for criterion in ("ebic", "cv"):
        seq = IHTRegressorCV(ks, criterion=criterion).fit(X, y)
        curve = (-seq.cv_results_["mean_test_score"] if criterion == "cv"
                 else seq.criterion_)
        assert _unimodal(curve)  # the premise of the search, checked on the full path
        gold = IHTRegressorCV(ks, criterion=criterion, search="golden").fit(X, y)
        assert gold.k_ == seq.k_ == 5
        assert gold.support_.tolist() == np.flatnonzero(beta).tolist()
        np.testing.assert_allclose(gold.coef_, seq.coef_, atol=1e-10)
        assert len(gold.cv_results_["param_k"]) <= len(ks) // 2


def test_golden_search_returns_the_best_evaluated_candidate():
    # two valleys: the bracket closes on the right one, yet index 1 (evaluated, lower) wins
    curve = np.array([5.0, 0.0, 9.0, 9.5, 9.0, 8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 2.5])
    calls = []

    def evaluate(indices):
        calls.extend(indices)
        return curve[indices]

    best, scores = search_candidates(len(curve), evaluate, "golden")
    assert len(calls) == len(set(calls)) < len(curve)
    assert best == min(scores, key=lambda i: (scores[i], i))
    if 1 in scores:
        assert best == 1
    assert search_candidates(len(curve), lambda idx: curve[idx])[0] == 1


@pytest.mark.parametrize("patience, best, n_evaluated", [(3, 2, 6), (4, 6, 11), (None, 11, 12)])
def test_patience_stops_after_candidates_without_a_new_best(patience, best, n_evaluated):
    # a plateau of three candidates after index 2, then a lower value at 6
    curve = np.array([5.0, 4.0, 3.0, 3.5, 3.0, 3.1, 2.0, 2.2, 2.3, 2.4, 2.5, 1.0])
    calls = []

    def evaluate(indices):
        calls.extend(indices)
        return curve[indices]

    found, scores = search_candidates(len(curve), evaluate, patience=patience)
    assert found == best and calls == list(range(n_evaluated)) and len(scores) == n_evaluated


@pytest.mark.parametrize("criterion", ["ebic", "cv"])
def test_patience_keeps_the_model_and_fits_fewer_candidates(criterion):
    X, y, beta = sparse_regression_data(120, 30, 4, rho=0.2, snr=10.0, rng=3)
    full = IHTRegressorCV(range(0, 16), criterion=criterion).fit(X, y)
    short = IHTRegressorCV(range(0, 16), criterion=criterion, patience=3).fit(X, y)
    assert short.k_ == full.k_ == 4
    np.testing.assert_array_equal(short.coef_, full.coef_)
    evaluated = short.cv_results_["param_k"]
    assert evaluated.tolist() == list(range(evaluated[-1] + 1)) and evaluated[-1] < 15
    scores = full.criterion_ if criterion != "cv" else -full.cv_results_["mean_test_score"]
    # stopped after exactly 3 candidates without a new best
    last = evaluated[-1]
    assert np.all(scores[last - 2:last + 1] >= scores[:last - 2].min())


# -- classifier --------------------------------------------------------------------------------

def test_classifier_chooses_the_true_support():
    rng = np.random.default_rng(8)
    X = rng.standard_normal((300, 25))
    w = np.zeros(25)
    w[[2, 9, 20]] = [3.0, -3.0, 2.5]
    y = np.where(X @ w + 0.3 + 0.3 * rng.standard_normal(300) > 0, "a", "b")
    for criterion in ("ebic", "cv"):
        clf = IHTClassifierCV(range(0, 7), criterion=criterion).fit(X, y)
        assert clf.k_ == 3 and clf.support_.tolist() == [2, 9, 20]
        assert clf.score(X, y) > 0.95


# -- sample weights, constraints --------------------------------------------------------------

@pytest.mark.parametrize("criterion", ["ebic", "cv"])
def test_integer_weights_equal_repeated_rows(criterion):
    X, y, _ = sparse_regression_data(40, 12, 3, snr=3.0, rng=9)
    sw = np.random.default_rng(1).integers(0, 4, 40)
    Xr, yr = np.repeat(X, sw, axis=0), np.repeat(y, sw)
    # splits: the weighted rows are one group, two unit-weight copies the others
    Xw, yw = np.vstack([X, X, X]), np.concatenate([y, y, y])
    Xrr, yrr = np.vstack([Xr, X, X]), np.concatenate([yr, y, y])

    def groups(m):
        g = np.repeat([0, 1, 2], [m, 40, 40])
        return [(np.flatnonzero(g != i), np.flatnonzero(g == i)) for i in range(3)]

    kw = dict(criterion=criterion) if criterion != "cv" else {}
    a = IHTRegressorCV(range(8), cv=groups(40), **kw).fit(
        Xw, yw, sample_weight=np.concatenate([sw, np.ones(80)]))
    b = IHTRegressorCV(range(8), cv=groups(len(yr)), **kw).fit(Xrr, yrr)
    assert a.k_ == b.k_
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-9, atol=1e-12)
    key = "criterion" if criterion != "cv" else "mean_test_score"
    np.testing.assert_allclose(a.cv_results_[key], b.cv_results_[key], rtol=1e-9)
    c = IHTClassifierCV(range(5), cv=groups(40), **kw).fit(
        Xw, yw > 0, sample_weight=np.concatenate([sw, np.ones(80)]))
    d = IHTClassifierCV(range(5), cv=groups(len(yr)), **kw).fit(Xrr, yrr > 0)
    assert c.k_ == d.k_
    np.testing.assert_allclose(c.predict_proba(X), d.predict_proba(X), rtol=1e-6)


def test_weights_change_the_fit_and_all_zero_raises():
    X, y, _ = sparse_regression_data(40, 10, 2, rng=10)
    sw = np.linspace(0.1, 3.0, 40)
    a = IHTRegressorCV([2], criterion="loss").fit(X, y)
    b = IHTRegressorCV([2], criterion="loss").fit(X, y, sample_weight=sw)
    coef, icpt = _ols(X, y, b.support_, sw)
    np.testing.assert_allclose(b.coef_, coef, atol=1e-9)
    assert not np.allclose(a.coef_, b.coef_)
    with pytest.raises(ValueError, match="non-zero"):
        IHTRegressorCV([2], criterion="loss").fit(X, y, sample_weight=np.zeros(40))


def test_constraints_through_selection():
    X, y, beta = sparse_regression_data(150, 50, 4, rho=0.2, snr=10.0, rng=11)
    beta_sign = np.abs(beta)
    y_pos = X @ beta_sign + 0.05 * np.random.default_rng(2).standard_normal(150)
    truth = np.flatnonzero(beta)
    for constraint in ("nonnegative", Box(0.0, 10.0)):
        m = IHTRegressorCV(range(8), criterion="ebic", constraint=constraint).fit(X, y_pos)
        assert np.array_equal(m.support_, truth) and m.coef_.min() >= 0
        coef, b = _ols(X, y_pos, truth)  # the bounds are inactive at the least-squares fit
        np.testing.assert_allclose(m.coef_, coef, atol=1e-9)
        m = IHTRegressorCV(range(8), constraint=constraint).fit(X, y_pos)  # CV keeps the truth
        assert set(truth) <= set(m.support_) and m.coef_.min() >= 0
    # a cap below the true coefficients is active in the fit
    m = IHTRegressorCV(range(8), criterion="ebic", constraint=Box(-0.5, 0.5)).fit(X, y_pos)
    assert np.abs(m.coef_).max() <= 0.5 + 1e-12


# -- always_select ----------------------------------------------------------------------------

@pytest.mark.parametrize("kw", [dict(), dict(swap=5), dict(relax=2.0, swap=5),
                                dict(relax=2.0, swap=0), dict(constraint=Box(-5.0, 5.0), swap=5)])
def test_always_select_gives_the_best_subset_containing_it(kw):
    X, y, beta = sparse_regression_data(80, 10, 3, rho=0.3, snr=5.0, rng=13)
    noise = int(np.flatnonzero(beta == 0)[0])
    res = iht(least_squares(X, y), k=3, always_select=[noise], **kw)
    best = min(itertools.combinations(range(10), 3),
               key=lambda s: np.linalg.norm(y - X[:, s] @ np.linalg.lstsq(X[:, s], y)[0])
               if noise in s else np.inf)
    assert tuple(res.support) == best and noise in res.support


def test_always_select_in_the_estimators():
    X, y, beta = sparse_regression_data(120, 30, 3, rho=0.2, snr=10.0, rng=14)
    truth = np.flatnonzero(beta)
    forced = [int(np.flatnonzero(beta == 0)[0]), int(np.flatnonzero(beta == 0)[-1])]
    for criterion in ("ebic", "cv"):
        m = IHTRegressorCV(range(0, 8), criterion=criterion, always_select=forced).fit(X, y)
        assert m.ks_[0] == 2 and m.k_ == 5  # counted in k
        assert set(m.support_) == set(truth) | set(forced)
        coef, b = _ols(X, y, m.support_)
        np.testing.assert_allclose(m.coef_, coef, atol=1e-9)
    assert set(forced) <= set(np.flatnonzero(IHTRegressor(3, always_select=forced).fit(X, y).coef_))
    clf = IHTClassifierCV(range(2, 6), criterion="ebic", always_select=forced).fit(X, y > 0)
    assert set(forced) <= set(clf.support_)
    clf = IHTClassifier(3, always_select=forced).fit(X, y > 0)
    assert set(forced) <= set(np.flatnonzero(clf.coef_[0]))
    with pytest.raises(ValueError, match="always_select"):
        IHTRegressorCV([1], always_select=forced).fit(X, y)
    with pytest.raises(ValueError, match="always_select"):
        IHTRegressorCV(always_select=[1, 1]).fit(X, y)
    with pytest.raises(ValueError, match="always_select"):
        IHTRegressorCV(always_select=[30]).fit(X, y)
    with pytest.raises(ValueError, match="always_select"):
        iht(least_squares(X, y), k=1, always_select=forced)


# -- screening --------------------------------------------------------------------------------

def test_screening_keeps_forced_features_and_the_original_p():
    X, y, beta = sparse_regression_data(80, 600, 3, snr=10.0, rng=15)
    truth = np.flatnonzero(beta)
    weak = int(np.argmin(np.abs((X - X.mean(0)).T @ (y - y.mean()))))  # least correlated
    full = IHTRegressorCV(range(6), criterion="ebic").fit(X, y)
    for kw in (dict(screening_size=20), dict(screening_size="auto")):
        m = IHTRegressorCV(range(6), criterion="ebic", **kw).fit(X, y)
        assert m.k_ == full.k_ == 3 and np.array_equal(m.support_, truth)
        np.testing.assert_allclose(m.coef_, full.coef_, atol=1e-10)
    m = IHTRegressorCV(range(1, 6), criterion="ebic", screening_size=10,
                       always_select=[weak]).fit(X, y)
    assert weak in m.support_ and m.coef_.shape == (600,)
    res = m.cv_results_  # the criterion with p = 600, not the 10 screened features
    np.testing.assert_allclose(res["criterion"], information_criterion(
        res["deviance"], res["n_nonzero"], 80, 600, "ebic"))
    clf = IHTClassifierCV(range(1, 5), criterion="ebic", screening_size=12,
                          always_select=[weak]).fit(X, y > 0)
    assert weak in clf.support_
    m = IHTRegressorCV(range(6), screening_size=20).fit(X, y)  # CV: screened in every split
    assert set(truth) <= set(m.support_)
    with pytest.raises(ValueError, match="screening_size"):
        IHTRegressorCV(range(6), screening_size=4).fit(X, y)


# -- input -------------------------------------------------------------------------------------

def test_bad_input():
    X, y, _ = sparse_regression_data(30, 6, 2, rng=12)
    for kwargs, match in [(dict(criterion="hqic"), "criterion"), (dict(ks=[-1, 2]), "ks"),
                          (dict(ks=[]), "ks"), (dict(ks=[7]), "ks"),
                          (dict(ks=["a"]), "ks"), (dict(search="binary"), "search"),
                          (dict(ic_coef=0.0), "ic_coef"), (dict(swap=-1), "swap"),
                          (dict(k_rule="2se"), "k_rule"),
                          (dict(screening_size="all"), "screening_size"),
                          (dict(patience=0), "patience"),
                          (dict(patience=3, search="golden"), "patience")]:
        with pytest.raises((ValueError, TypeError), match=match):
            IHTRegressorCV(**kwargs).fit(X, y)
    with pytest.raises(ValueError, match="gic"):
        IHTRegressorCV(criterion="gic").fit(X[:2], y[:2])
    with pytest.raises(ValueError, match="2 classes"):
        IHTClassifierCV().fit(X, np.zeros(30))
    X0, y0 = X.copy(), y.copy()
    IHTRegressorCV(range(3)).fit(X, y, sample_weight=np.ones(30))
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(y, y0)


@pytest.mark.parametrize("est", [IHTRegressorCV(), IHTRegressorCV(criterion="ebic"),
                                 IHTClassifierCV(criterion="ebic"), IHTClassifierCV(cv=2)],
                         ids=["RegressorCV", "RegressorEBIC", "ClassifierEBIC", "ClassifierCV"])
def test_check_estimator(est):
    from sklearn.utils.estimator_checks import check_estimator

    check_estimator(est)


@pytest.mark.parametrize("fit_intercept, weighted, constraint", [
    (True, False, None), (False, True, None), (True, True, "nonneg")])
def test_deviance_from_the_search_equals_the_residuals(monkeypatch, fit_intercept, weighted,
                                                       constraint):
    # after the exchange search the deviance comes from the gradient it left, O(p); it
    # equals the deviance of the residuals (sample weights; the data scaled by powers of
    # two under a cone)
    from jitopt.sets import NonNegative
    from jitopt.sparse import _paths

    original, seen = _paths.LeastSquaresPath.deviance, []

    def both(self, i):
        fast = original(self, i)
        kept, self._gradient = self._gradient, (None, None)
        seen.append((fast, original(self, i), kept[0] is self.x[i]))
        self._gradient = kept
        return fast

    monkeypatch.setattr(_paths.LeastSquaresPath, "deviance", both)
    X, y, _ = sparse_regression_data(80, 30, 4, rng=3)
    y = 1e3 * y + 5.0 if constraint is None else np.abs(1e3 * y)
    sw = np.random.default_rng(3).integers(0, 4, 80).astype(float) if weighted else None
    IHTRegressorCV(range(10), criterion="gic", fit_intercept=fit_intercept,
                   constraint=NonNegative() if constraint else None).fit(X, y, sample_weight=sw)
    fast, slow, searched = map(np.array, zip(*seen))
    assert searched.sum() == 9  # every candidate but k = 0
    np.testing.assert_allclose(fast, slow, rtol=1e-11)


@pytest.mark.parametrize("make", [lambda: IHTClassifier(2), lambda: IHTClassifierCV([1, 2])])
@pytest.mark.parametrize("label", ["a", 3])
def test_classifiers_name_the_only_class_as_written(make, label):
    # the class as the user wrote it ('a', 3), not as NumPy's scalar repr (np.int64(3))
    X = np.random.default_rng(0).standard_normal((12, 4))
    with pytest.raises(ValueError, match=f"got 1 class: {label!r}$"):
        make().fit(X, np.full(12, label))
