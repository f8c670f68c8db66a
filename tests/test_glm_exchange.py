"""The exchange search over supports for the GLM losses (jitopt.sparse.glm_exchange_search):
never worse than its start, the best subset on small problems (brute force over every
support, each fitted by scikit-learn), the Newton systems of the logistic loss, and the
estimators that run it along their paths against scikit-learn's fits on the chosen support."""

import itertools

import numpy as np
import pytest

from jitopt.problems import logistic, poisson
from jitopt.sets import Box
from jitopt.sparse import (IHTClassifierCV, IHTPoissonRegressorCV, glm_exchange_search,
                           iht)

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

INF = np.full(12, np.inf)


def _poisson_data(seed, n=200, p=12, support=(1, 5, 8), coef=(0.5, -0.4, 0.35)):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    X[:, 3] += 0.6 * X[:, 5]  # a correlated decoy
    y = rng.poisson(np.exp(0.2 + X[:, list(support)] @ np.array(coef))).astype(float)
    return X, y


def _logistic_data(seed, n=300, p=12, support=(0, 4, 9), coef=(1.0, -0.8, 0.7)):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    X[:, 2] += 0.6 * X[:, 4]
    eta = 0.3 + X[:, list(support)] @ np.array(coef)
    labels = np.where(rng.random(n) < 1.0 / (1.0 + np.exp(-eta)), 1.0, -1.0)
    return X, labels


def _sklearn_fit(family, X, y):
    """``(coef, intercept)`` of scikit-learn's unpenalized fit (labels -1/+1 for logistic)."""
    from sklearn.linear_model import LogisticRegression, PoissonRegressor

    if family == "poisson":
        model = PoissonRegressor(alpha=0.0, tol=1e-12, max_iter=10000).fit(X, y)
        return model.coef_, model.intercept_
    model = LogisticRegression(C=np.inf, tol=1e-12, max_iter=10000).fit(X, y > 0)
    return model.coef_[0], model.intercept_[0]


def _mean_loss(family, X, y, coef, b):
    eta = X @ coef + b
    if family == "poisson":
        return float(np.mean(np.exp(eta) - y * eta))
    return float(np.mean(np.logaddexp(0.0, -y * eta)))


CASES = [("poisson", poisson, _poisson_data), ("logistic", logistic, _logistic_data)]


@pytest.mark.parametrize("family, make, data", CASES, ids=["poisson", "logistic"])
@pytest.mark.parametrize("seed", range(4))
def test_never_worse_than_the_iht_start(family, make, data, seed):
    X, y = data(seed)
    problem = make(X, y, fit_intercept=True)
    start = iht(problem, k=3, n_unconstrained=1, refit=True, swap=0,
                lipschitz=problem.local_lipschitz(np.zeros(13)) if family == "poisson"
                else None)
    for lower, upper in ((-INF, INF), (np.zeros(12), INF)):
        x0 = np.where(np.arange(13) < 12, np.clip(start.x, np.append(lower, -np.inf),
                                                   np.append(upper, np.inf)), start.x)
        f0 = problem.cost(x0)
        w, f, _ = glm_exchange_search(problem, x0, 3, lower, upper)
        assert f <= f0 + 1e-12 * abs(f0)
        assert f == pytest.approx(problem.cost(w), rel=1e-12)
        assert np.count_nonzero(w[:12]) <= 3
        assert (w[:12] >= lower).all() and (w[:12] <= upper).all()


@pytest.mark.parametrize("family, make, data", CASES, ids=["poisson", "logistic"])
@pytest.mark.parametrize("seed", range(2))
def test_equals_the_brute_force_best_subset(family, make, data, seed):
    X, y = data(seed)
    best = min((_mean_loss(family, X[:, list(S)], y, *_sklearn_fit(family, X[:, list(S)], y)),
                S) for S in itertools.combinations(range(12), 3))
    problem = make(X, y, fit_intercept=True)
    null = np.zeros(13)
    null[12] = np.log(y.mean()) if family == "poisson" else np.log((y > 0).mean()
                                                                   / (y < 0).mean())
    w, f, _ = glm_exchange_search(problem, null, 3, -INF, INF)
    assert tuple(np.flatnonzero(w[:12])) == best[1]
    assert f == pytest.approx(best[0], rel=1e-8)


def test_exchanges_out_of_a_wrong_start_and_keeps_forced_features():
    X, y = _poisson_data(0)
    problem = poisson(X, y, fit_intercept=True)
    x0 = np.zeros(13)
    x0[[0, 2, 3]] = 0.01  # a wrong support
    w, _, n_swaps = glm_exchange_search(problem, x0, 3, -INF, INF)
    assert n_swaps >= 1 and list(np.flatnonzero(w[:12])) == [1, 5, 8]
    w, _, _ = glm_exchange_search(problem, x0, 3, -INF, INF, always_select=[0])
    assert 0 in np.flatnonzero(w[:12]) and np.count_nonzero(w[:12]) == 3


def test_logistic_newton_system_and_curvature_match_finite_differences():
    X, labels = _logistic_data(0, n=80)
    sw = np.random.default_rng(1).uniform(0.0, 2.0, 80)
    problem = logistic(X, labels, alpha=0.2, fit_intercept=True, sample_weight=sw)
    w = np.zeros(13)
    w[[0, 4, 7, 12]] = [0.5, -0.3, 0.2, 0.1]
    f, g = problem.cost_and_egrad(w)
    support = np.array([0, 4, 7])
    coords = [0, 4, 7, 12]
    f2, g2, H = problem.newton_system(w, support)
    assert f2 == pytest.approx(f, rel=1e-12)
    np.testing.assert_allclose(g2, g[coords], rtol=1e-10)
    h = 1e-6
    E = np.eye(13)
    fdH = [(problem.egrad(w + h * e)[coords] - problem.egrad(w - h * e)[coords]) / (2 * h)
           for e in E[coords]]
    np.testing.assert_allclose(H, fdH, rtol=1e-6, atol=1e-8)
    g3, diag = problem.gradient_and_curvature(w)
    np.testing.assert_allclose(g3, g, rtol=1e-10, atol=1e-14)
    fd_diag = [(problem.egrad(w + h * e)[j] - problem.egrad(w - h * e)[j]) / (2 * h)
               for j, e in enumerate(E[:12])]
    np.testing.assert_allclose(diag, fd_diag, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("criterion", ["cv", "ebic"])
def test_poisson_path_refit_is_scikit_learns_fit_on_the_support(criterion):
    X, y = _poisson_data(1, n=400, p=20, coef=(0.6, -0.5, 0.45))
    model = IHTPoissonRegressorCV(criterion=criterion).fit(X, y)
    S = model.support_
    assert list(S) == [1, 5, 8]
    coef, b = _sklearn_fit("poisson", X[:, S], y)
    np.testing.assert_allclose(model.coef_[S], coef, atol=1e-6)
    assert model.intercept_ == pytest.approx(b, abs=1e-6)


@pytest.mark.parametrize("criterion", ["cv", "ebic"])
def test_classifier_path_refit_is_scikit_learns_fit_on_the_support(criterion):
    X, labels = _logistic_data(1, n=400, p=20, coef=(1.2, -1.0, 0.9))
    model = IHTClassifierCV(criterion=criterion, alpha=0.0).fit(X, labels > 0)
    S = model.support_
    assert list(S) == [0, 4, 9]
    coef, b = _sklearn_fit("logistic", X[:, S], labels)
    np.testing.assert_allclose(model.coef_[0, S], coef, atol=1e-6)
    assert model.intercept_[0] == pytest.approx(b, abs=1e-6)


def test_the_paths_keep_their_constraints():
    X, y = _poisson_data(1, n=400, p=20, coef=(0.6, -0.5, 0.45))
    model = IHTPoissonRegressorCV(criterion="ebic", constraint="nonnegative").fit(X, y)
    assert (model.coef_ >= 0).all() and {1, 8} <= set(model.support_)
    box = IHTPoissonRegressorCV(criterion="ebic", constraint=Box(-0.3, 0.3)).fit(X, y)
    assert (np.abs(box.coef_) <= 0.3).all() and np.isin([-0.3, 0.3], box.coef_).any()
    X, labels = _logistic_data(1, n=400, p=20, coef=(1.2, -1.0, 0.9))
    clf = IHTClassifierCV(criterion="ebic", constraint="nonnegative").fit(X, labels > 0)
    assert (clf.coef_ >= 0).all() and {0, 9} <= set(clf.support_)


def test_swap_zero_runs_iht_at_every_candidate():
    X, y = _poisson_data(1, n=400, p=20, coef=(0.6, -0.5, 0.45))
    a = IHTPoissonRegressorCV(range(5), criterion="ebic", swap=0).fit(X, y)
    b = IHTPoissonRegressorCV(range(5), criterion="ebic").fit(X, y)
    assert list(a.support_) == list(b.support_) == [1, 5, 8]
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-7)
    with pytest.raises(ValueError, match="swap"):
        IHTClassifierCV(swap=-1).fit(X, y > 1)
