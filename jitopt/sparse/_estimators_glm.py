"""scikit-learn estimators: k-sparse Poisson regression (log link) by IHT-2SP, with a fixed
``k`` or choosing it by cross-validation or an information criterion."""

import numpy as np
from scipy.special import xlogy
from sklearn.base import RegressorMixin
from sklearn.metrics import d2_tweedie_score
from sklearn.utils.validation import check_is_fitted, validate_data

from ..problems import Poisson
from ..validation import check_real
from ._estimators import _fit_data, _IHTBase, _sample_weight, _sparsity
from ._estimators_cv import _SHARED_DOC, GLM_SWAP_DOC, _SelectBase
from ._paths import _Path
from ._projection import check_constraint

__all__ = ["IHTPoissonRegressor", "IHTPoissonRegressorCV"]


def _check_counts(y, sw, name):
    """``ValueError`` for a negative ``y`` or one that is 0 on every row of positive weight
    (the Poisson fit does not exist)."""
    if (y < 0).any():
        raise ValueError(f"{name}: y must hold nonnegative counts or rates")
    if not (y if sw is None else y[sw > 0]).any():
        raise ValueError(f"{name}: y is all 0 (on the rows of positive weight): the Poisson "
                         f"fit does not exist")


def _problem(X, y, sw, est):
    """``(Poisson problem, e)``: the problem of ``X * 2^-e``, with the ridge weight
    ``alpha * 4^-e`` (the same fit, coefficients times ``2^e``). When the constraint is a
    cone, ``e`` brings the root mean square of ``X`` to ``[1/2, 1)`` (exactly): the
    coefficients then have the curvature of the intercept, and the gradient steps do not
    crawl on features of small scale; else ``e = 0``."""
    alpha, e = check_real("alpha", est.alpha, low=0.0), 0
    if check_constraint(est.constraint, X.shape[1]).cone:
        e = int(np.frexp(np.sqrt(np.vdot(X, X) / X.size))[1])
    X = X if e == 0 else np.ldexp(X, -e)
    return Poisson(X, y, np.ldexp(alpha, -2 * e), est.fit_intercept, sw), e


def _check_step(step, name):
    if isinstance(step, str) and step == "lipschitz":
        raise ValueError(f"{name}: step='lipschitz' needs a global Lipschitz constant, which "
                         f"this loss does not have; use step='auto' or a float")


def _start(problem, step, name):
    """``(x0, lipschitz)``: the null model and, for a backtracked step, the largest Hessian
    eigenvalue there (the first step is its inverse); ``step="lipschitz"`` refused."""
    _check_step(step, name)
    x0 = problem.null_point()
    return x0, problem.local_lipschitz(x0) if isinstance(step, str) else None


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
    free and not counted in :math:`k`. When :math:`\Gamma` is a cone (no constraint, the
    orthant), ``X`` is scaled by a power of two to a root mean square in
    :math:`[\frac12, 1)`, exactly, and :math:`w` and :math:`\alpha` scaled back: the fit does
    not depend on the units of ``X``, and features of small scale do not slow the gradient
    steps down (their curvature is then that of the intercept). A run that does not end as
    designed gives a ``ConvergenceWarning`` with the solver's message.

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
        ``"auto"``: backtracking (there is no global Lipschitz constant: ``"lipschitz"``
        raises a ``ValueError``).
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
        _check_counts(y, sw, type(self).__name__)
        k = _sparsity(self.n_nonzero_coefs, X.shape[1])
        if sw is not None:
            X, y, sw = X[sw > 0], y[sw > 0], sw[sw > 0]
        problem, e = _problem(X, y, sw, self)
        x0, lipschitz = _start(problem, self.step, type(self).__name__)
        res = self._solve(problem, k, x0=x0, lipschitz=lipschitz,
                          n_unconstrained=int(self.fit_intercept))
        p = X.shape[1]
        self.coef_ = np.ldexp(res.x[:p], -e)
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


class PoissonPath(_Path):
    """The Poisson fits along the candidates on one set of rows (see
    :mod:`jitopt.sparse._paths`): ``k = 0`` is the null model, the others :func:`iht` with
    the Newton refit, from the previous fit; screening by the score statistic of the null
    model."""

    def __init__(self, est, X, y, sw):
        if sw is not None:
            X, y, sw = X[sw > 0], y[sw > 0], sw[sw > 0]
        super().__init__(X, y, sw)
        self.complete = bool(y.any())  # training rows with a count (else no fit exists)
        stat = None
        if est._screen is not None:
            # the score statistics |x~' W (y - mu0)| / sqrt(mu0 x~' W x~) at the null model
            w = np.ones(X.shape[0]) if sw is None else sw
            mu0 = np.average(y, weights=sw)
            Xc = X - np.average(X, axis=0, weights=sw)
            with np.errstate(invalid="ignore", divide="ignore"):
                stat = np.abs(Xc.T @ (w * (y - mu0))) / np.sqrt(mu0 * (w @ (Xc * Xc)))
        forced = self._screen(est, stat)
        Xk = X if self.keep.shape[0] == X.shape[1] else np.ascontiguousarray(X[:, self.keep])
        self.fit_intercept, self.name = est.fit_intercept, type(est).__name__
        self._glm_options(est, Xk.shape[1], forced)
        self.e = 0
        _check_step(est.step, self.name)
        self.step, self.lipschitz = est.step, None
        if self.complete:
            self.problem, self.e = _problem(Xk, y, sw, est)
            self.null = self.problem.null_point()

    def _fit(self, x0, k):
        if k == 0:
            return self.null.copy(), 1
        if (x0 is None or self.options["swap"] == 0) and self.lipschitz is None:
            # iht runs: the inverse of its first step (None for a float step)
            self.lipschitz = _start(self.problem, self.step, self.name)[1] or 0.0
        return self._glm_fit(self.problem, self.null if x0 is None else x0, k,
                             n_unconstrained=int(self.fit_intercept),
                             lipschitz=self.lipschitz or None)

    def model(self, i):
        p = self.keep.shape[0]
        x = self.x[i]
        return self._full(np.ldexp(x[:p], -self.e)), float(x[p]) if self.fit_intercept else 0.0

    def deviance(self, i):
        r"""abess's :math:`2\sum_i s_i(e^{\eta_i} - y_i\eta_i)` (no :math:`\log y_i!`)."""
        coef, b = self.model(i)
        nz = np.flatnonzero(coef)
        eta = self.X[:, nz] @ coef[nz] + b
        with np.errstate(over="ignore"):
            loss = np.exp(eta) - self.y * eta
        return 2.0 * float(loss.sum() if self.sw is None else self.sw @ loss)


class _SelectLikelihood(_SelectBase):
    """The search over ``k`` for the likelihood models (Poisson, Cox): ``iht`` without a
    seed or JIT switch (Cox without the exchange search)."""

    swap = 0

    def _iht_options(self, swap, forced):
        return dict(constraint=self.constraint, selection=self.selection, step=self.step,
                    maxiter=self.max_iter, tol=self.tol, refit=True, swap=swap,
                    always_select=forced)


class IHTPoissonRegressorCV(_SelectLikelihood, IHTPoissonRegressor):
    __doc__ = (r"""Sparse Poisson regression that chooses its sparsity :math:`k` by
    cross-validation or an information criterion.

    For each candidate :math:`k` it fits the model of :class:`IHTPoissonRegressor`, with the
    criterion's deviance :math:`D = 2\sum_i s_i(e^{\eta_i} - y_i\eta_i)`
    (:math:`\eta_i = x_i^\top w + b`; abess's, without the :math:`\log y_i!` terms; the
    ridge :math:`\alpha` is not counted). A split whose training rows have no count above 0
    scores :math:`-\infty`. The screening statistic is the score statistic of the null
    model, :math:`|\tilde x_j^\top S(y - \mu_0)|/\sqrt{\mu_0\,\tilde x_j^\top S\tilde x_j}`
    (:math:`\tilde x_j` the centred feature, :math:`\mu_0` the weighted mean of :math:`y`).
""" + _SHARED_DOC.replace("step, max_iter, tol, random_state, jit", "step, max_iter, tol")
        % {"loss": "Poisson deviance", "fixed": "IHTPoissonRegressor",
           "swap": "alpha : float\n        Ridge weight of the Poisson loss.\n    "
                   + GLM_SWAP_DOC}
        + r"""
    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.sparse import IHTPoissonRegressorCV
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((300, 20))
    >>> y = rng.poisson(np.exp(0.5 + X[:, 2] - 0.8 * X[:, 7]))
    >>> model = IHTPoissonRegressorCV(criterion="ebic").fit(X, y)
    >>> model.k_, model.support_
    (2, array([2, 7]))
    """)

    def __init__(self, ks=None, *, criterion="cv", cv=5, k_rule="best", scoring=None, n_jobs=None,
                 refit=True, search="sequential", patience=None, ic_coef=1.0, constraint=None,
                 always_select=None, screening_size=None, alpha=0.0, selection="auto", swap=5,
                 fit_intercept=True, step="auto", max_iter=1000, tol=1e-7):
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
        self.swap = swap
        self.fit_intercept = fit_intercept
        self.step = step
        self.max_iter = max_iter
        self.tol = tol

    _fixed_class = IHTPoissonRegressor

    def fit(self, X, y, sample_weight=None):
        """Choose ``k`` and fit; returns ``self``."""
        X, y = _fit_data(self, X, y, y_numeric=True)
        sw = _sample_weight(sample_weight, X)
        _check_counts(y, sw, type(self).__name__)
        self._fit_search(X, y, sw, y)
        return self

    def _path(self, X, y, sw):
        return PoissonPath(self, X, y, sw)

    @staticmethod
    def _mean_loss(coef, b, X, y, sw):
        r"""The weighted mean Poisson deviance :math:`2(y\log(y/\mu) - y + \mu)`."""
        eta = X @ coef + b
        with np.errstate(over="ignore"):
            dev = 2.0 * (xlogy(y, y) - y * eta - y + np.exp(eta))
        return float(np.average(dev, weights=sw))
