"""Sparse Poisson regression: the loss and its oracles (jitopt.problems.poisson), IHT with the
two-step projection and the Newton refit on it, IHTPoissonRegressor and IHTPoissonRegressorCV."""

import numpy as np
import pytest
from scipy.optimize import minimize

from jitopt import Status
from jitopt.problems import Poisson, poisson
from jitopt.sets import Box
from jitopt.sparse import IHTPoissonRegressor, IHTPoissonRegressorCV, iht, information_criterion

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

SUPPORT = [1, 4, 9]


def _data(n=400, p=15, seed=0):
    """Poisson counts with the mean exp(0.3 + X beta), beta nonzero on SUPPORT."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p)) / np.sqrt(2)
    beta = np.zeros(p)
    beta[SUPPORT] = [0.9, -0.7, 0.6]
    y = rng.poisson(np.exp(0.3 + X @ beta)).astype(float)
    return X, y, beta


def _mle(X, y, columns, sw=None, bounds=None):
    """The Poisson fit with an intercept on ``columns`` by L-BFGS-B on the exact objective
    (its gradient in closed form): (coef on the columns, intercept)."""
    sw = np.ones(len(y)) if sw is None else sw
    A = np.column_stack([X[:, columns], np.ones(len(y))])

    def fg(v):
        eta = A @ v
        mu = np.exp(eta)
        return sw @ (mu - y * eta) / sw.sum(), A.T @ (sw * (mu - y)) / sw.sum()

    bounds = None if bounds is None else bounds + [(None, None)]
    res = minimize(fg, np.zeros(A.shape[1]), jac=True, method="L-BFGS-B", bounds=bounds,
                   options=dict(ftol=1e-15, gtol=1e-12, maxiter=10000))
    return res.x[:-1], res.x[-1]


def test_gradient_and_hessian_match_finite_differences():
    X, y, _ = _data(60, 10)
    sw = np.random.default_rng(1).uniform(0.0, 2.0, 60)
    problem = poisson(X, y, alpha=0.3, fit_intercept=True, sample_weight=sw)
    w = np.zeros(11)
    w[[0, 2, 4, 10]] = [0.2, -0.4, 0.1, 0.5]
    f, g = problem.cost_and_egrad(w)
    h = 1e-6
    fd = [(problem.cost(w + h * e) - problem.cost(w - h * e)) / (2 * h) for e in np.eye(11)]
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)
    # the cost by hand
    eta = X @ w[:10] + w[10]
    assert f == pytest.approx(sw @ (np.exp(eta) - y * eta) / sw.sum()
                              + 0.15 * w[:10] @ w[:10], rel=1e-12)
    # the Newton system on the support {0, 2, 4} and the intercept
    support = np.array([0, 2, 4])
    f2, g2, H = problem.newton_system(w, support)
    coords = [0, 2, 4, 10]
    assert f2 == pytest.approx(f, rel=1e-12)
    np.testing.assert_allclose(g2, g[coords], rtol=1e-12)
    E = np.eye(11)[coords]
    fdH = [(problem.egrad(w + h * e)[coords] - problem.egrad(w - h * e)[coords]) / (2 * h)
           for e in E]
    np.testing.assert_allclose(H, fdH, rtol=1e-6, atol=1e-8)


def test_iht_recovers_the_support_and_refits_the_mle():
    X, y, beta = _data()
    problem = poisson(X, y, fit_intercept=True)
    x0 = problem.null_point()
    assert x0[-1] == pytest.approx(np.log(y.mean()))
    res = iht(problem, x0, k=3, n_unconstrained=1, refit=True,
              lipschitz=problem.local_lipschitz(x0))
    assert res.success
    np.testing.assert_array_equal(res.support, SUPPORT)
    coef, b = _mle(X, y, SUPPORT)
    np.testing.assert_allclose(res.x[SUPPORT], coef, atol=1e-6)
    assert res.x[-1] == pytest.approx(b, abs=1e-6)
    assert np.abs(res.x[SUPPORT] - beta[SUPPORT]).max() < 0.2  # the MLE near the truth


def test_overflowing_trials_are_rejected_not_fatal():
    X, y, _ = _data()
    problem = poisson(X, y, fit_intercept=True)
    x0 = problem.null_point()
    # a first step of 1e6: e^eta overflows at the first trials, which backtracking rejects
    res = iht(problem, x0, k=3, n_unconstrained=1, refit=True, lipschitz=1e-6)
    assert res.success
    np.testing.assert_array_equal(res.support, SUPPORT)
    assert problem.cost_and_egrad(x0 - 1e6 * problem.egrad(x0))[0] == np.inf
    # a fixed step that overflows is a fault
    fault = iht(problem, x0, k=3, n_unconstrained=1, step=1e6)
    assert fault.status == Status.NONFINITE and not fault.success

def test_iht_keeps_a_box_and_refits_the_bounded_mle():
    X, y, _ = _data()
    problem = poisson(X, y, fit_intercept=True)
    x0 = problem.null_point()
    res = iht(problem, x0, k=3, n_unconstrained=1, refit=True, constraint=Box(-0.5, 0.5),
              lipschitz=problem.local_lipschitz(x0))
    S = res.support
    assert (np.abs(res.x[:-1]) <= 0.5).all() and S.shape[0] == 3
    coef, b = _mle(X, y, S, bounds=[(-0.5, 0.5)] * 3)
    np.testing.assert_allclose(res.x[S], coef, atol=1e-6)
    assert res.x[-1] == pytest.approx(b, abs=1e-6)
    assert np.isin([-0.5, 0.5], res.x).any()  # a bound is active at the refit


def test_problem_bad_input():
    X, y, _ = _data(50, 10)
    with pytest.raises(ValueError, match="nonnegative"):
        poisson(X, -y)
    with pytest.raises(ValueError, match="sample_weight"):
        Poisson(X, y, sample_weight=-np.ones(50))
    with pytest.raises(ValueError, match="lipschitz"):
        iht(poisson(X, y), k=2, step="lipschitz")


def test_estimator_recovers_the_support_and_predicts_the_mean():
    from sklearn.metrics import d2_tweedie_score

    X, y, _ = _data()
    X0, y0 = X.copy(), y.copy()
    model = IHTPoissonRegressor(3).fit(X, y)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(y, y0)
    np.testing.assert_array_equal(np.flatnonzero(model.coef_), SUPPORT)
    coef, b = _mle(X, y, SUPPORT)
    np.testing.assert_allclose(model.coef_[SUPPORT], coef, atol=1e-6)
    assert model.intercept_ == pytest.approx(b, abs=1e-6)
    np.testing.assert_allclose(model.predict(X[:5]), np.exp(X[:5] @ model.coef_ + b),
                               rtol=1e-5)
    assert model.score(X, y) == pytest.approx(d2_tweedie_score(y, model.predict(X), power=1))
    # the oracle fit of scikit-learn on the true columns
    from sklearn.linear_model import PoissonRegressor

    ref = PoissonRegressor(alpha=0.0, tol=1e-10, max_iter=1000).fit(X[:, SUPPORT], y)
    np.testing.assert_allclose(model.coef_[SUPPORT], ref.coef_, atol=1e-6)


def test_fit_does_not_depend_on_the_scale_of_the_features():
    X, y, _ = _data()
    model = IHTPoissonRegressor(3).fit(X, y)
    small = IHTPoissonRegressor(3).fit(X / 16, y)
    np.testing.assert_array_equal(np.flatnonzero(small.coef_), SUPPORT)
    np.testing.assert_allclose(small.coef_, 16 * model.coef_, rtol=1e-7, atol=1e-9)
    ridge = IHTPoissonRegressor(3, alpha=0.1).fit(X, y)  # the ridge in the units of w
    small = IHTPoissonRegressor(3, alpha=0.1 / 256).fit(X / 16, y)
    np.testing.assert_allclose(small.coef_, 16 * ridge.coef_, rtol=1e-7, atol=1e-9)


def test_integer_weights_equal_repeated_rows_and_zero_weights_removed_rows():
    X, y, _ = _data(150, 10)
    rng = np.random.default_rng(2)
    sw = rng.integers(0, 4, 150).astype(float)
    weighted = IHTPoissonRegressor(3).fit(X, y, sample_weight=sw)
    rows = np.repeat(np.arange(150), sw.astype(int))
    repeated = IHTPoissonRegressor(3).fit(X[rows], y[rows])
    np.testing.assert_array_equal(np.flatnonzero(weighted.coef_),
                                  np.flatnonzero(repeated.coef_))
    np.testing.assert_allclose(weighted.coef_, repeated.coef_, atol=1e-8)
    assert weighted.intercept_ == pytest.approx(repeated.intercept_, abs=1e-8)
    kept = sw > 0
    removed = IHTPoissonRegressor(3).fit(X[kept], y[kept], sample_weight=sw[kept])
    np.testing.assert_allclose(weighted.coef_, removed.coef_, atol=1e-10)
    # the weights change the fit
    assert not np.allclose(weighted.coef_, IHTPoissonRegressor(3).fit(X, y).coef_, atol=1e-3)


def test_constraints_are_kept_and_the_refit_is_the_bounded_mle():
    X, y, _ = _data()
    model = IHTPoissonRegressor(3, constraint="nonnegative").fit(X, y)
    assert (model.coef_ >= 0).all() and np.count_nonzero(model.coef_) <= 3
    assert {1, 9} <= set(np.flatnonzero(model.coef_))  # the two positive true features
    box = IHTPoissonRegressor(3, constraint=Box(-0.5, 0.5)).fit(X, y)
    S = np.flatnonzero(box.coef_)
    assert (np.abs(box.coef_) <= 0.5).all() and S.shape[0] == 3
    coef, b = _mle(X, y, S, bounds=[(-0.5, 0.5)] * 3)
    np.testing.assert_allclose(box.coef_[S], coef, atol=1e-6)
    assert box.intercept_ == pytest.approx(b, abs=1e-6)
    assert np.isin([-0.5, 0.5], box.coef_).any()  # a bound is active at the refit


def test_always_select_keeps_a_noise_feature_counted_in_k():
    X, y, _ = _data()
    model = IHTPoissonRegressor(3, always_select=[0]).fit(X, y)
    S = np.flatnonzero(model.coef_)
    assert 0 in S and S.shape[0] == 3


def test_rates_and_ridge():
    X, y, _ = _data(200, 10)
    rates = y / 3.0  # non-integer responses are allowed (rates)
    model = IHTPoissonRegressor(3).fit(X, rates)
    coef, b = _mle(X, rates, np.flatnonzero(model.coef_))
    np.testing.assert_allclose(model.coef_[model.coef_ != 0], coef, atol=1e-6)
    # with a ridge the refit's gradient vanishes on the support and the intercept
    ridge = IHTPoissonRegressor(3, alpha=0.5).fit(X, y)
    problem = poisson(X, y, alpha=0.5, fit_intercept=True)
    g = problem.egrad(np.append(ridge.coef_, ridge.intercept_))
    assert np.abs(g[np.append(np.flatnonzero(ridge.coef_), 10)]).max() < 1e-8
    assert np.abs(ridge.coef_).sum() < np.abs(model.coef_).sum()


def test_estimator_bad_input():
    X, y, _ = _data(50, 10)
    with pytest.raises(ValueError, match="nonnegative"):
        IHTPoissonRegressor(2).fit(X, -y)
    with pytest.raises(ValueError, match="all 0"):
        IHTPoissonRegressor(2).fit(X, np.zeros(50))
    with pytest.raises(ValueError, match="all 0"):  # positive y only on a zero-weight row
        IHTPoissonRegressor(2).fit(X[:2], [0.0, 1.0], sample_weight=[1.0, 0.0])
    with pytest.raises(ValueError, match="n_nonzero_coefs"):
        IHTPoissonRegressor(11).fit(X, y)
    for est in (IHTPoissonRegressor(2, step="lipschitz"), IHTPoissonRegressorCV(
            criterion="bic", step="lipschitz")):
        with pytest.raises(ValueError, match="Lipschitz constant"):
            est.fit(X, y)


@pytest.mark.parametrize("criterion", ["ebic", "cv"])
def test_cv_and_ebic_keep_the_true_support_and_refit_the_mle(criterion):
    X, y, _ = _data()
    model = IHTPoissonRegressorCV(range(8), criterion=criterion).fit(X, y)
    assert model.k_ == 3
    np.testing.assert_array_equal(model.support_, SUPPORT)
    coef, b = _mle(X, y, SUPPORT)
    np.testing.assert_allclose(model.coef_[SUPPORT], coef, atol=1e-6)
    assert model.intercept_ == pytest.approx(b, abs=1e-6)
    if criterion == "cv":  # k_ the smallest best mean score; -mean Poisson deviance
        mean = model.cv_results_["mean_test_score"]
        assert model.best_index_ == int(np.flatnonzero(mean == mean.max())[0])
        assert mean[0] < mean[3]  # the null model predicts worse


def test_criterion_path_is_abess_definition_and_its_minimum():
    X, y, _ = _data(300, 20, seed=3)
    y = y + np.random.default_rng(4).poisson(np.exp(0.4 * X[:, 12]))  # a weak fourth signal
    for criterion in ("aic", "bic", "gic", "ebic"):
        model = IHTPoissonRegressorCV(range(8), criterion=criterion, ic_coef=1.5).fit(X, y)
        res = model.cv_results_
        for i, k in enumerate(model.ks_):
            assert np.count_nonzero(model.path_[i]) == res["n_nonzero"][i] <= k
        expected = information_criterion(res["deviance"], res["n_nonzero"], 300, 20,
                                          criterion, 1.5)
        np.testing.assert_allclose(res["criterion"], expected, rtol=1e-12)
        assert model.k_ == model.ks_[np.argmin(expected)]
        eta = X @ model.coef_ + model.intercept_
        assert res["deviance"][model.best_index_] == pytest.approx(
            2 * np.sum(np.exp(eta) - y * eta), rel=1e-12)


def test_criterion_choice_equals_abess():
    abess = pytest.importorskip("abess")
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 20)) / 2
    y = rng.poisson(np.exp(0.5 + X[:, 2] - 0.8 * X[:, 7] + 0.6 * X[:, 11])).astype(float)
    ks = {}
    for criterion in ("aic", "bic", "gic", "ebic"):
        ours = IHTPoissonRegressorCV(range(8), criterion=criterion).fit(X, y)
        theirs = abess.PoissonRegression(support_size=range(8), ic_type=criterion,
                                         thread=1).fit(X, y)
        np.testing.assert_array_equal(ours.support_, np.flatnonzero(theirs.coef_))
        np.testing.assert_allclose(ours.coef_, theirs.coef_, atol=1e-6)
        assert ours.best_score_ == pytest.approx(theirs.eval_loss_, rel=1e-8)
        ks[criterion] = ours.k_
    assert ks["ebic"] == 3 and ks["aic"] > 3  # a wrong penalty constant changes the choice


def test_cv_integer_weights_equal_repeated_rows_and_null_model():
    X, y, _ = _data(120, 10)
    sw = np.random.default_rng(5).integers(1, 3, 120).astype(float)
    rows = np.repeat(np.arange(120), sw.astype(int))
    for criterion in ("bic", "cv"):
        opts = dict(ks=range(5), criterion=criterion)
        if criterion == "cv":
            folds = np.arange(120) % 3
            opts["cv"] = [(np.flatnonzero(folds != f), np.flatnonzero(folds == f))
                          for f in range(3)]
            rep = dict(opts, cv=[(np.flatnonzero(folds[rows] != f),
                                  np.flatnonzero(folds[rows] == f)) for f in range(3)])
        else:
            rep = opts
        weighted = IHTPoissonRegressorCV(**opts).fit(X, y, sample_weight=sw)
        repeated = IHTPoissonRegressorCV(**rep).fit(X[rows], y[rows])
        assert weighted.k_ == repeated.k_
        np.testing.assert_allclose(weighted.coef_, repeated.coef_, atol=1e-8)
    null = IHTPoissonRegressorCV([0], criterion="bic").fit(X, y)  # k = 0: the null model
    assert not null.coef_.any() and null.intercept_ == pytest.approx(np.log(y.mean()))


def test_cv_split_without_counts_scores_minus_infinity():
    X, y, _ = _data(60, 10)
    y[:30] = 0.0
    y[30] = max(y[30], 1.0)
    splits = [(np.arange(30), np.arange(30, 60)), (np.arange(30, 60), np.arange(30))]
    model = IHTPoissonRegressorCV(range(3), cv=splits).fit(X, y)
    assert np.all(model.cv_results_["split0_test_score"] == -np.inf)
    assert np.isfinite(model.cv_results_["split1_test_score"]).all()
    with pytest.raises(ValueError, match="nonnegative"):
        IHTPoissonRegressorCV().fit(X, -y)


@pytest.mark.parametrize("est", [IHTPoissonRegressor(), IHTPoissonRegressor(
    constraint="nonnegative", alpha=0.01), IHTPoissonRegressorCV(),
    IHTPoissonRegressorCV(criterion="ebic")],
    ids=["default", "nonnegative_ridge", "CV", "EBIC"])
def test_check_estimator(est):
    from sklearn.utils.estimator_checks import check_estimator

    check_estimator(est)
