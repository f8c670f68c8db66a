"""scikit-learn estimator: k-sparse Poisson regression (log link) by IHT-2SP."""

import numpy as np
from sklearn.base import RegressorMixin
from sklearn.metrics import d2_tweedie_score
from sklearn.utils.validation import check_is_fitted, validate_data

from ..problems import Poisson
from ._estimators import _fit_data, _IHTBase, _sample_weight, _sparsity

__all__ = ["IHTPoissonRegressor"]


class IHTPoissonRegressor(RegressorMixin, _IHTBase):
    r"""Poisson regression (log link) with at most ``n_nonzero_coefs`` nonzero coefficients
    in a convex set.

    Minimizes the mean Poisson deviance up to constants,
    :math:`\frac1n\sum_i (e^{\eta_i} - y_i\eta_i) + \frac\alpha2\|w\|^2` with
    :math:`\eta_i = x_i^\top w + b`, subject to :math:`\|w\|_0\le k` and :math:`w\in\Gamma`
    with :func:`jitopt.sparse.iht` on :class:`jitopt.problems.Poisson`: from the null model
    (:math:`w = 0`, :math:`b = \log\bar y`), with the step backtracked from the inverse of
    the largest Hessian eigenvalue there (trial steps whose :math:`e^\eta` overflows are
    rejected), then a projected Newton refit on the final support (with ``alpha=0`` and no
    active bound, the maximum-likelihood fit on that support). The intercept :math:`b` is
    free and not counted in :math:`k`. A run that does not end as designed gives a
    ``ConvergenceWarning`` with the solver's message.

    Parameters
    ----------
    n_nonzero_coefs : int, optional
        The sparsity :math:`k` (default: 10% of the features, at least 1).
    alpha : float
        Ridge weight :math:`\alpha \ge 0` (default 0).
    constraint : None, "nonnegative" or jitopt.sets.ConvexSet
        A support-preserving set :math:`\Gamma` for the coefficients (the refit is the
        projected Newton method in a box, FISTA for other sets).
    always_select : sequence of int, optional
        Features always in the support, counted in :math:`k` (see
        :func:`jitopt.sparse.iht`).
    selection : {"auto", "magnitude", "gain", "signed"}
        Selection rule of the two-step projection.
    relax : float
        Work at sparsity :math:`\lceil \text{relax}\cdot k\rceil`, then prune to :math:`k`.
    refit : bool
        Refit the coefficients on the final support.
    fit_intercept : bool
    step : float or {"auto", "backtracking"}
        ``"auto"``: backtracking (there is no global Lipschitz constant).
    max_iter : int
    tol : float

    Attributes
    ----------
    coef_ : ndarray (n_features,)
    intercept_ : float
    n_iter_ : int
    n_features_in_ : int
    result_ : jitopt.OptimizeResult
        The solver's result.

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.sparse import IHTPoissonRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((300, 20))
    >>> y = rng.poisson(np.exp(0.5 + X[:, 2] - 0.8 * X[:, 7]))
    >>> model = IHTPoissonRegressor(2).fit(X, y)
    >>> np.flatnonzero(model.coef_), np.round(model.intercept_, 1)
    (array([2, 7]), np.float64(0.5))
    """

    def __init__(self, n_nonzero_coefs=None, *, alpha=0.0, constraint=None,
                 always_select=None, selection="auto", relax=1.0, refit=True,
                 fit_intercept=True, step="auto", max_iter=1000, tol=1e-7):
        self.n_nonzero_coefs = n_nonzero_coefs
        self.alpha = alpha
        self.constraint = constraint
        self.always_select = always_select
        self.selection = selection
        self.relax = relax
        self.refit = refit
        self.fit_intercept = fit_intercept
        self.step = step
        self.max_iter = max_iter
        self.tol = tol

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.positive_only = True
        return tags

    def _options(self):
        return dict(constraint=self.constraint, selection=self.selection, step=self.step,
                    maxiter=self.max_iter, tol=self.tol, relax=self.relax, refit=self.refit,
                    always_select=self.always_select)

    def fit(self, X, y, sample_weight=None):
        """Fit the model; returns ``self``. ``y``: nonnegative counts or rates, not all 0.
        ``sample_weight``: frequency weights (the loss is the weighted mean; integer
        weights give the fit on repeated rows)."""
        X, y = _fit_data(self, X, y, y_numeric=True)
        sw = _sample_weight(sample_weight, X)
        if (y < 0).any():
            raise ValueError("IHTPoissonRegressor: y must hold nonnegative counts or rates")
        k = _sparsity(self.n_nonzero_coefs, X.shape[1])
        if sw is not None:
            X, y, sw = X[sw > 0], y[sw > 0], sw[sw > 0]
        if not y.any():
            raise ValueError("IHTPoissonRegressor: y is all 0 (on the rows of positive "
                             "weight): the Poisson fit does not exist")
        problem = Poisson(X, y, self.alpha, self.fit_intercept, sw)
        x0 = problem.null_point()
        lipschitz = None if not isinstance(self.step, str) else problem.local_lipschitz(x0)
        res = self._solve(problem, k, x0=x0, lipschitz=lipschitz,
                          n_unconstrained=int(self.fit_intercept))
        p = X.shape[1]
        self.coef_ = res.x[:p].copy()
        self.intercept_ = float(res.x[p]) if self.fit_intercept else 0.0
        self.n_iter_ = res.nit
        self.result_ = res
        return self

    def predict(self, X):
        r"""The predicted means :math:`e^{Xw + b}`."""
        check_is_fitted(self, "coef_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return np.exp(X @ self.coef_ + self.intercept_)

    def score(self, X, y, sample_weight=None):
        r""":math:`D^2`, the fraction of the Poisson deviance explained
        (``sklearn.metrics.d2_tweedie_score`` with ``power=1``, as ``PoissonRegressor``)."""
        return d2_tweedie_score(y, self.predict(X), sample_weight=sample_weight, power=1)
