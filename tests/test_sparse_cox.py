"""Sparse Cox proportional hazards regression: the Breslow partial likelihood and its oracles
(jitopt.problems.cox), IHT with the two-step projection and the Newton refit on it,
IHTCoxRegressor, IHTCoxRegressorCV and concordance_index."""

import numpy as np
import pytest
from scipy.optimize import minimize

from jitopt.problems import Cox, cox
from jitopt.sets import Box
from jitopt.sparse import (IHTCoxRegressor, IHTCoxRegressorCV, concordance_index, iht,
                           information_criterion)

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

SUPPORT = [2, 5, 11]


def _data(n=300, p=20, seed=0, ties=False):
    """Times with the hazard exp(X beta), beta nonzero on SUPPORT, about 30 % censored by
    independent uniform times; ``ties``: times rounded to a coarse grid."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    beta = np.zeros(p)
    beta[SUPPORT] = [0.9, -0.7, 0.6]
    t = rng.exponential(np.exp(-X @ beta))
    c = rng.uniform(0.0, 3.0, n)
    time, event = np.minimum(t, c), (t <= c).astype(float)
    if ties:
        time = np.ceil(time * 4) / 4
    return X, time, event, beta


def _brute_loss(w, X, time, event, sw):
    """The Breslow negative log partial likelihood by a plain loop over the rows."""
    total = 0.0
    for i in range(len(time)):
        if event[i] and sw[i] > 0:
            risk = sum(sw[j] * np.exp(X[j] @ w) for j in range(len(time)) if time[j] >= time[i])
            total += sw[i] * (X[i] @ w - np.log(risk))
    return -total / sw.sum()


def _reference_fit(X, time, event, columns, sw=None, bounds=None):
    """The partial-likelihood fit on ``columns``: L-BFGS-B on an O(n^2) risk-set matrix
    (independent of the problem's cumulative sums), its gradient in closed form."""
    sw = np.ones(len(time)) if sw is None else sw
    A = X[:, columns]
    R = (time[None, :] >= time[:, None]) * sw[None, :]  # R[i, j]: j in the risk set of i
    d = sw * event

    def fg(v):
        e = np.exp(A @ v)
        S = R @ e
        f = -(d @ (A @ v - np.log(S))) / sw.sum()
        g = -(A.T @ d - ((d / S) @ (R * e[None, :])) @ A) / sw.sum()
        return f, g

    res = minimize(fg, np.zeros(len(columns)), jac=True, method="L-BFGS-B", bounds=bounds,
                   options=dict(ftol=1e-15, gtol=1e-12, maxiter=10000))
    return res.x


def test_loss_equals_a_plain_loop_with_ties_and_weights():
    X, time, event, _ = _data(30, 12, ties=True)
    assert len(np.unique(time)) < 20  # tied times
    rng = np.random.default_rng(1)
    sw = rng.integers(0, 3, 30).astype(float)
    w = 0.3 * rng.standard_normal(12)
    problem = cox(X, time, event, sample_weight=sw)
    assert problem.cost(w) == pytest.approx(_brute_loss(w, X, time, event, sw), rel=1e-12)
    # shift invariance of the stabilised exponentials: a huge common eta changes nothing
    big = np.column_stack([X, np.full(30, 1.0)])
    assert cox(big, time, event, sample_weight=sw).cost(np.append(w, 800.0)) == \
        pytest.approx(problem.cost(w), rel=1e-12)
    # a minibatch is the partial likelihood of its own rows
    idx = np.array([0, 3, 7, 8, 15, 22, 29])
    assert problem.cost(w, idx) == pytest.approx(
        _brute_loss(w, X[idx], time[idx], event[idx], sw[idx]), rel=1e-12)


def test_gradient_hessian_and_curvature_match_finite_differences():
    X, time, event, _ = _data(60, 12, ties=True)
    sw = np.random.default_rng(2).uniform(0.0, 2.0, 60)
    problem = cox(X, time, event, alpha=0.3, sample_weight=sw)
    w = np.zeros(12)
    w[[0, 2, 5]] = [0.4, -0.6, 0.3]
    f, g = problem.cost_and_egrad(w)
    h = 1e-6
    E = np.eye(12)
    fd = [(problem.cost(w + h * e) - problem.cost(w - h * e)) / (2 * h) for e in E]
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)
    hessian = np.array([(problem.egrad(w + h * e) - problem.egrad(w - h * e)) / (2 * h)
                        for e in E])
    support = np.array([0, 2, 5])
    f2, g2, H = problem.newton_system(w, support)
    assert f2 == pytest.approx(f, rel=1e-12)
    np.testing.assert_allclose(g2, g[support], rtol=1e-10)
    np.testing.assert_allclose(H, hessian[np.ix_(support, support)], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(problem.hessian_diagonal(w), np.diag(hessian), rtol=1e-6)
    top = np.linalg.eigvalsh(0.5 * (hessian + hessian.T))[-1]
    assert top <= problem.local_lipschitz(w) <= 1.1 * top


def test_iht_recovers_the_support_and_refits_the_reference_fit():
    X, time, event, beta = _data()
    problem = cox(X, time, event)
    x0 = problem.null_point()
    res = iht(problem, x0, k=3, refit=True, lipschitz=problem.local_lipschitz(x0))
    assert res.success
    np.testing.assert_array_equal(res.support, SUPPORT)
    np.testing.assert_allclose(res.x[SUPPORT], _reference_fit(X, time, event, SUPPORT),
                               atol=1e-6)
    assert np.abs(res.x[SUPPORT] - beta[SUPPORT]).max() < 0.2  # the fit near the truth


def test_iht_keeps_a_box_and_refits_the_bounded_fit():
    X, time, event, _ = _data()
    problem = cox(X, time, event)
    x0 = problem.null_point()
    res = iht(problem, x0, k=3, refit=True, constraint=Box(-0.5, 0.5),
              lipschitz=problem.local_lipschitz(x0))
    S = res.support
    assert S.shape[0] == 3 and (np.abs(res.x) <= 0.5).all()
    np.testing.assert_allclose(res.x[S], _reference_fit(X, time, event, S,
                                                        bounds=[(-0.5, 0.5)] * 3), atol=1e-6)
    assert np.isin([-0.5, 0.5], res.x).any()  # a bound is active at the refit


def test_problem_bad_input():
    X, time, event, _ = _data(20, 12)
    with pytest.raises(ValueError, match="event"):
        cox(X, time, 2 * event)
    with pytest.raises(ValueError, match="event"):
        Cox(X, time, event[:5])
    with pytest.raises(ValueError, match="sample_weight"):
        Cox(X, time, event, sample_weight=-np.ones(20))
    with pytest.raises(ValueError, match="finite"):
        cox(X, np.full(20, np.nan), event)


def test_estimator_y_layouts_agree_and_predict_is_the_risk_score():
    X, time, event, _ = _data()
    two = IHTCoxRegressor(3).fit(X, np.column_stack([time, event]))
    structured = np.array(list(zip(event.astype(bool), time)),
                          dtype=[("event", bool), ("time", float)])
    np.testing.assert_array_equal(IHTCoxRegressor(3).fit(X, structured).coef_, two.coef_)
    np.testing.assert_array_equal(np.flatnonzero(two.coef_), SUPPORT)
    np.testing.assert_allclose(two.predict(X), X @ two.coef_)
    # a 1-D y: every event observed
    uncensored = IHTCoxRegressor(3).fit(X, time)
    np.testing.assert_allclose(uncensored.coef_, IHTCoxRegressor(3).fit(
        X, np.column_stack([time, np.ones_like(time)])).coef_)
    assert two.score(X, structured) == pytest.approx(
        concordance_index(time, event, X @ two.coef_))


def test_estimator_matches_the_unrelaxed_tolerance_and_the_reference_fit():
    X, time, event, _ = _data(200, 30, seed=3)
    y = np.column_stack([time, event])
    loose, tight = IHTCoxRegressor(3).fit(X, y), IHTCoxRegressor(3, tol=1e-7).fit(X, y)
    np.testing.assert_array_equal(np.flatnonzero(loose.coef_), SUPPORT)
    np.testing.assert_allclose(loose.coef_, tight.coef_, atol=1e-7)
    np.testing.assert_allclose(loose.coef_[SUPPORT], _reference_fit(X, time, event, SUPPORT),
                               atol=1e-6)


def test_integer_weights_equal_repeated_rows_and_zero_weights_removed_rows():
    X, time, event, _ = _data(120, 15, ties=True)
    y = np.column_stack([time, event])
    sw = np.random.default_rng(4).integers(0, 3, 120)
    weighted = IHTCoxRegressor(3).fit(X, y, sample_weight=sw)
    rows = np.repeat(np.arange(120), sw)
    repeated = IHTCoxRegressor(3).fit(X[rows], y[rows])
    np.testing.assert_array_equal(np.flatnonzero(weighted.coef_),
                                  np.flatnonzero(repeated.coef_))
    np.testing.assert_allclose(weighted.coef_, repeated.coef_, atol=1e-8)


def test_nonnegativity_and_always_select():
    X, time, event, _ = _data()
    y = np.column_stack([time, event])
    model = IHTCoxRegressor(3, constraint="nonnegative").fit(X, y)
    assert (model.coef_ >= 0).all() and 5 not in np.flatnonzero(model.coef_)  # beta_5 < 0
    forced = IHTCoxRegressor(3, always_select=[0]).fit(X, y)
    assert 0 in np.flatnonzero(forced.coef_) and np.count_nonzero(forced.coef_) <= 3


def test_estimator_bad_input():
    X, time, event, _ = _data(30, 12)
    with pytest.raises(ValueError, match="no observed event"):
        IHTCoxRegressor(2).fit(X, np.column_stack([time, 0 * event]))
    with pytest.raises(ValueError, match="0 or 1"):
        IHTCoxRegressor(2).fit(X, np.column_stack([time, 2 + event]))
    with pytest.raises(ValueError, match="2 columns"):
        IHTCoxRegressor(2).fit(X, np.column_stack([time, event, event]))
    with pytest.raises(ValueError, match="lipschitz"):
        IHTCoxRegressor(2, step="lipschitz").fit(X, time)


@pytest.mark.parametrize("criterion", ["cv", "ebic"])
def test_cv_and_ebic_keep_the_true_support_and_refit_it(criterion):
    for n, p, seed in ((300, 20, 5), (150, 200, 6)):  # n > p and p > n
        X, time, event, _ = _data(n, p, seed=seed)
        model = IHTCoxRegressorCV(range(8), criterion=criterion).fit(
            X, np.column_stack([time, event]))
        assert model.k_ == 3
        np.testing.assert_array_equal(model.support_, SUPPORT)
        np.testing.assert_allclose(model.coef_[SUPPORT],
                                   _reference_fit(X, time, event, SUPPORT), atol=1e-6)


def test_criterion_path_is_twice_the_partial_likelihood_plus_the_penalty():
    X, time, event, _ = _data(150, 12, seed=7)
    model = IHTCoxRegressorCV(range(5), criterion="gic").fit(X, np.column_stack([time, event]))
    for k, value, df in zip(model.cv_results_["param_k"], model.cv_results_["criterion"],
                            model.cv_results_["n_nonzero"]):
        coef = model.path_[k]
        deviance = 2 * 150 * _brute_loss(coef, X, time, event, np.ones(150))
        assert value == pytest.approx(information_criterion(deviance, df, 150, 12, "gic"),
                                      rel=1e-10)
    assert model.k_ == int(np.argmin(model.cv_results_["criterion"]))


def test_concordance_index_by_pairs():
    rng = np.random.default_rng(8)
    time = rng.integers(0, 6, 40).astype(float)
    event = rng.random(40) < 0.6
    risk = rng.integers(0, 4, 40).astype(float)
    sw = rng.uniform(0.5, 2.0, 40)
    good = total = 0.0
    for i in range(40):
        for j in range(40):
            if event[i] and time[i] < time[j]:
                total += sw[i] * sw[j]
                good += sw[i] * sw[j] * ((risk[i] > risk[j]) + 0.5 * (risk[i] == risk[j]))
    assert concordance_index(time, event, risk, sw) == pytest.approx(good / total)


@pytest.mark.parametrize("est", [IHTCoxRegressor(), IHTCoxRegressorCV(cv=3, max_iter=100)],
                         ids=["fixed", "CV"])
def test_check_estimator(est):
    from sklearn.utils.estimator_checks import check_estimator

    check_estimator(est)


def test_criteria_equal_abess_eval_loss_and_its_fit():
    abess = pytest.importorskip("abess")
    X, time, event, _ = _data(200, 12, seed=3)
    y = np.column_stack([time, event])
    ours = IHTCoxRegressor(3).fit(X, y)
    for ic in ("aic", "bic", "gic", "ebic"):
        theirs = abess.CoxPHSurvivalAnalysis(support_size=[3], ic_type=ic, thread=1).fit(X, y)
        nll = 200 * cox(X, time, event).cost(theirs.coef_)  # Breslow's, summed
        assert nll == pytest.approx(theirs.train_loss_, rel=1e-12)
        assert information_criterion(2 * nll, 3, 200, 12, ic) == pytest.approx(
            theirs.eval_loss_, rel=1e-12)
        np.testing.assert_array_equal(np.flatnonzero(theirs.coef_), np.flatnonzero(ours.coef_))
        assert 200 * cox(X, time, event).cost(ours.coef_) <= nll + 1e-9
