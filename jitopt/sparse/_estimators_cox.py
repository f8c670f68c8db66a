r"""scikit-learn estimators: k-sparse Cox proportional hazards regression (Breslow's ties) by
IHT-2SP, with a fixed ``k`` or choosing it by cross-validation or an information criterion."""

import numpy as np
from sklearn.utils import column_or_1d
from sklearn.utils.validation import check_is_fitted, validate_data

from ..problems import Cox
from ..validation import check_real
from ._estimators import _IHTBase, _sample_weight, _sparsity
from ._estimators_cv import _SHARED_DOC
from ._estimators_glm import _SelectLikelihood, _start
from ._paths import _Path

__all__ = ["IHTCoxRegressor", "IHTCoxRegressorCV", "concordance_index"]

_Y_DOC = r"""``y`` is one of: a structured array whose first field is the event indicator and
    second the time (scikit-survival's ``Surv.from_arrays(event, time)``); an ``(n, 2)``
    array of columns (time, event) (abess's ``CoxPHSurvivalAnalysis``); or a 1-D array of
    times, every event observed (no censoring)."""


def _survival_data(estimator, X, y, reset=True):
    """``(X, time, event)`` from the three layouts of ``y`` (see :data:`_Y_DOC`), validated
    (``ValueError`` naming what is wrong)."""
    if isinstance(y, np.ndarray) and y.dtype.names is not None:
        if len(y.dtype.names) != 2:
            raise ValueError(f"y as a structured array must have two fields (event, time), "
                             f"got {y.dtype.names}")
        event, time = (np.asarray(y[name]) for name in y.dtype.names)
        X, time = validate_data(estimator, X, time.astype(np.float64), reset=reset,
                                dtype=np.float64, y_numeric=True)
    else:
        X, y = validate_data(estimator, X, y, reset=reset, dtype=np.float64,
                             multi_output=True, y_numeric=True)
        if y.ndim == 2 and y.shape[1] == 2:
            time, event = y[:, 0], y[:, 1]
        elif y.ndim == 2 and y.shape[1] != 1:
            raise ValueError(f"y must be 1-D (times) or have 2 columns (time, event), got "
                             f"shape {y.shape}")
        else:
            time, event = column_or_1d(y, warn=True), np.ones(y.shape[0])
    if not np.all((event == 0) | (event == 1)):
        raise ValueError("y: the event indicators must be 0 or 1 (or booleans)")
    return X, np.ascontiguousarray(time, dtype=np.float64), np.asarray(event, dtype=np.float64)


def _check_events(event, sw, name):
    n = event.shape[0] if sw is None else int(np.count_nonzero(sw))
    if n < 2:
        raise ValueError(f"{name} needs at least 2 samples of positive weight, got n_samples "
                         f"= {n}: the partial likelihood of one row is constant")
    if not (event if sw is None else event[sw > 0]).any():
        raise ValueError(f"{name}: y has no observed event (on the rows of positive weight): "
                         f"the partial likelihood is constant")


def concordance_index(time, event, risk, sample_weight=None):
    r"""Harrell's concordance index: among the pairs :math:`(i, j)` with an observed event
    at :math:`t_i < t_j`, the weighted fraction with :math:`\text{risk}_i > \text{risk}_j`,
    ties in risk counting one half (pair weight :math:`s_is_j`; :math:`O(n^2)` memory in
    blocks of rows).

    Parameters
    ----------
    time : array_like, shape (n,)
        The times of the events or of the censoring.
    event : array_like, shape (n,)
        1 (or True) for an observed event, 0 for a censored row.
    risk : array_like, shape (n,)
        The predicted risk scores (higher: earlier event), e.g. ``model.predict(X)``.
    sample_weight : array_like, shape (n,), optional
        Weights of the rows.

    Returns
    -------
    float
        The index in :math:`[0, 1]` (0.5 for random scores), ``nan`` when no pair is
        comparable.

    Examples
    --------
    >>> from jitopt.sparse import concordance_index
    >>> concordance_index([1.0, 2.0, 3.0], [1, 1, 0], [3.0, 2.0, 2.0])
    0.8333333333333334
    """
    time, event, risk = (np.asarray(a, dtype=float) for a in (time, event, risk))
    s = np.ones(time.shape[0]) if sample_weight is None else np.asarray(sample_weight, float)
    good = total = 0.0
    events = np.flatnonzero(event > 0)
    for start in range(0, events.shape[0], 256):
        i = events[start:start + 256]
        later = (time[None, :] > time[i, None]) * (s[i, None] * s[None, :])
        total += later.sum()
        good += (later * ((risk[i, None] > risk[None, :])
                          + 0.5 * (risk[i, None] == risk[None, :]))).sum()
    return float(good / total) if total > 0 else float("nan")


class IHTCoxRegressor(_IHTBase):
    __doc__ = (r"""Cox proportional hazards regression with at most ``n_nonzero_coefs`` nonzero
    coefficients in a convex set.

    Minimizes the negative log partial likelihood with Breslow's ties (the mean over the
    rows, :class:`jitopt.problems.Cox`) plus :math:`\frac\alpha2\|w\|^2` subject to
    :math:`\|w\|_0\le k` and :math:`w\in\Gamma` with :func:`jitopt.sparse.iht`: from
    :math:`w = 0`, with the step backtracked from the inverse of the largest Hessian
    eigenvalue there, then a projected Newton refit on the final support (with ``alpha=0``
    and no active bound, the maximum partial-likelihood fit on that support). There is no
    intercept (the baseline hazard is left out). A run that does not end as designed gives
    a ``ConvergenceWarning`` with the solver's message.

    """ + _Y_DOC + r""" ``predict`` gives the risk scores :math:`Xw` (higher: earlier events)
    and ``score`` Harrell's concordance index (:func:`concordance_index`).

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
    step : float or {"auto", "backtracking"}
        ``"auto"``: backtracking (there is no global Lipschitz constant: ``"lipschitz"``
        raises a ``ValueError``).
    max_iter : int
    tol : float
        The IHT run stops once the support is unchanged and a step moves :math:`w` by at
        most ``tol`` times :math:`\max(1, \|w\|)`. The default, looser than the other
        estimators', is enough to settle the support: the Newton refit then converges the
        coefficients on it (to a gradient norm :math:`10^{-10}` times its start). With
        strong signals and heavy censoring the gradient steps converge slowly, and ``1e-7``
        costs about twenty times as long for the same model.

    Attributes
    ----------
    coef_ : ndarray (n_features,)
    n_iter_ : int
    n_features_in_ : int
    result_ : jitopt.OptimizeResult
        The solver's result.

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.sparse import IHTCoxRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((500, 20))
    >>> time = rng.exponential(np.exp(-(X[:, 3] - 0.8 * X[:, 11])))
    >>> y = np.column_stack([time, rng.random(500) < 0.8])  # (time, event)
    >>> model = IHTCoxRegressor(2).fit(X, y)
    >>> np.flatnonzero(model.coef_), np.round(model.coef_[[3, 11]], 1)
    (array([ 3, 11]), array([ 0.9, -0.8]))
    """)

    def __init__(self, n_nonzero_coefs=None, *, alpha=0.0, constraint=None,
                 always_select=None, selection="auto", relax=1.0, refit=True, step="auto",
                 max_iter=1000, tol=1e-4):
        self.n_nonzero_coefs = n_nonzero_coefs
        self.alpha = alpha
        self.constraint = constraint
        self.always_select = always_select
        self.selection = selection
        self.relax = relax
        self.refit = refit
        self.step = step
        self.max_iter = max_iter
        self.tol = tol

    def _options(self):
        return dict(constraint=self.constraint, selection=self.selection, step=self.step,
                    maxiter=self.max_iter, tol=self.tol, relax=self.relax, refit=self.refit,
                    always_select=self.always_select)

    def fit(self, X, y, sample_weight=None):
        """Fit the model; returns ``self``. ``sample_weight``: frequency weights (integer
        weights give the fit on repeated rows, tied in time)."""
        X, time, event = _survival_data(self, X, y)
        sw = _sample_weight(sample_weight, X)
        _check_events(event, sw, type(self).__name__)
        k = _sparsity(self.n_nonzero_coefs, X.shape[1])
        problem, x0, lipschitz = _problem(X, time, event, sw, self)
        res = self._solve(problem, k, x0=x0, lipschitz=lipschitz)
        self.coef_ = res.x
        self.n_iter_ = res.nit
        self.result_ = res
        return self

    def predict(self, X):
        r"""The risk scores :math:`Xw` (the log relative hazards)."""
        check_is_fitted(self, "coef_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return X @ self.coef_

    def score(self, X, y, sample_weight=None):
        """Harrell's concordance index of the risk scores on ``(X, y)``."""
        check_is_fitted(self, "coef_")
        X, time, event = _survival_data(self, X, y, reset=False)
        return concordance_index(time, event, X @ self.coef_, sample_weight)


def _problem(X, time, event, sw, est):
    """``(problem, x0, lipschitz)``: the Cox problem of the rows of positive weight, the
    null model and the first step's inverse (None, a unit step, when the Hessian vanishes
    there: then so does the gradient)."""
    alpha = check_real("alpha", est.alpha, low=0.0)
    if sw is not None:
        X, time, event, sw = X[sw > 0], time[sw > 0], event[sw > 0], sw[sw > 0]
    problem = Cox(X, time, event, alpha, sw)
    x0, lipschitz = _start(problem, est.step, type(est).__name__)
    return problem, x0, lipschitz or None


class CoxPath(_Path):
    """The Cox fits along the candidates on one set of rows (see
    :mod:`jitopt.sparse._paths`): ``k = 0`` is the null model, the others :func:`iht` with
    the Newton refit, from the previous fit; screening by the score statistic of the null
    model. ``y`` holds the columns (time, event)."""

    def __init__(self, est, X, y, sw):
        if sw is not None:
            X, y, sw = X[sw > 0], y[sw > 0], sw[sw > 0]
        super().__init__(X, y, sw)
        time, event = y[:, 0], y[:, 1]
        self.complete = bool(event.any())  # training rows with an event (else no fit)
        full = Cox(X, time, event, 0.0, sw)
        # the score statistics |g_j| / sqrt(H_jj) of the null model, O(np)
        null = np.zeros(X.shape[1])
        with np.errstate(invalid="ignore", divide="ignore"):
            stat = np.abs(full.egrad(null)) / np.sqrt(full.hessian_diagonal(null))
        forced = self._screen(est, stat)
        Xk = X if self.keep.shape[0] == X.shape[1] else np.ascontiguousarray(X[:, self.keep])
        self.name = type(est).__name__
        self.options = est._iht_options(0, forced)
        if self.complete:
            self.problem, self.null, self.lipschitz = _problem(Xk, time, event, sw, est)

    def _fit(self, x0, k):
        if k == 0:
            return self.null.copy(), 1
        res = self._solve(self.problem, self.null if x0 is None else x0, k,
                          lipschitz=self.lipschitz)
        return res.x, res.nit

    def model(self, i):
        return self._full(self.x[i]), 0.0

    def deviance(self, i):
        """Twice the negative log partial likelihood (summed over the rows)."""
        coef = self.model(i)[0]
        return 2.0 * self.n_w * _mean_nll(coef, self.X, self.y, self.sw)


def _mean_nll(coef, X, y, sw):
    """The mean negative log partial likelihood of the rows ``(X, y)``."""
    return Cox(X, y[:, 0], y[:, 1], 0.0, sw).cost(coef)


class IHTCoxRegressorCV(_SelectLikelihood, IHTCoxRegressor):
    __doc__ = (r"""Sparse Cox regression that chooses its sparsity :math:`k` by cross-validation
    or an information criterion.

    For each candidate :math:`k` it fits the model of :class:`IHTCoxRegressor`, with the
    criterion's deviance :math:`D` twice the negative log partial likelihood (the ridge
    :math:`\alpha` not counted). In CV, a candidate's score on a split is minus the mean
    negative log partial likelihood of the test rows (their own risk sets); a split whose
    training rows have no event scores :math:`-\infty`. The screening statistic is the
    score statistic of the null model, :math:`|\partial_j R(0)|/\sqrt{\partial_{jj}R(0)}`.
    There is no intercept: ``k = 0`` is the null model :math:`w = 0`, and ``intercept_`` is
    0. """ + _Y_DOC + "\n" + _SHARED_DOC.replace("step, max_iter, tol, random_state, jit",
                                                "step, max_iter, tol")
        .replace("fit_intercept : bool\n    ", "")
        % {"loss": "negative log partial likelihood", "fixed": "IHTCoxRegressor",
           "swap": "alpha : float\n        Ridge weight of the Cox loss.\n    "}
        + r"""
    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.sparse import IHTCoxRegressorCV
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((500, 20))
    >>> time = rng.exponential(np.exp(-(X[:, 3] - 0.8 * X[:, 11])))
    >>> y = np.column_stack([time, rng.random(500) < 0.8])
    >>> model = IHTCoxRegressorCV(criterion="ebic").fit(X, y)
    >>> model.k_, model.support_
    (2, array([ 3, 11]))
    """)

    def __init__(self, ks=None, *, criterion="cv", cv=5, k_rule="best", scoring=None, n_jobs=None,
                 refit=True, search="sequential", patience=None, ic_coef=1.0, constraint=None,
                 always_select=None, screening_size=None, alpha=0.0, selection="auto", step="auto",
                 max_iter=1000, tol=1e-4):
        self.ks = ks
        self.criterion = criterion
        self.cv = cv
        self.k_rule = k_rule
        self.scoring = scoring
        self.n_jobs = n_jobs
        self.refit = refit
        self.search = search
        self.patience = patience
        self.ic_coef = ic_coef
        self.constraint = constraint
        self.always_select = always_select
        self.screening_size = screening_size
        self.alpha = alpha
        self.selection = selection
        self.step = step
        self.max_iter = max_iter
        self.tol = tol

    _fixed_class = IHTCoxRegressor

    def fit(self, X, y, sample_weight=None):
        """Choose ``k`` and fit; returns ``self``."""
        X, time, event = _survival_data(self, X, y)
        sw = _sample_weight(sample_weight, X)
        _check_events(event, sw, type(self).__name__)
        target = np.column_stack([time, event])
        self._fit_search(X, target, sw, target)
        return self

    def _path(self, X, y, sw):
        return CoxPath(self, X, y, sw)

    @staticmethod
    def _mean_loss(coef, b, X, y, sw):
        if not (y[:, 1] if sw is None else y[sw > 0, 1]).any():
            return 0.0  # (no event among the test rows: the partial likelihood is 1)
        if sw is not None:
            X, y, sw = X[sw > 0], y[sw > 0], sw[sw > 0]
        return _mean_nll(coef, X, y, sw)
