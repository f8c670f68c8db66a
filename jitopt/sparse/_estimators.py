"""scikit-learn estimators: k-sparse least squares and logistic regression by IHT-2SP."""

import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ..problems import LeastSquares, Logistic
from ..validation import all_finite, as_array
from ._iht import iht
from ._projection import check_constraint

__all__ = ["IHTRegressor", "IHTClassifier"]


def _sparsity(n_nonzero_coefs, p):
    if n_nonzero_coefs is None:
        return max(int(0.1 * p), 1)
    if isinstance(n_nonzero_coefs, bool) or not isinstance(n_nonzero_coefs, numbers.Integral):
        raise TypeError(f"n_nonzero_coefs must be a positive integer or None, got "
                        f"{type(n_nonzero_coefs).__name__}")
    if not 1 <= n_nonzero_coefs <= p:
        raise ValueError(f"n_nonzero_coefs must be in [1, n_features = {p}], got "
                         f"{n_nonzero_coefs}")
    return int(n_nonzero_coefs)


def _fit_data(estimator, X, y, **checks):
    """``validate_data(estimator, X, y, dtype=float64, **checks)``. Float64 arrays that
    pass its checks as they are (2-D ``X``, 1-D ``y`` of the same length, at least one
    sample and one feature, all finite) skip the conversion: the same checks, in a tenth of
    the time on small data; anything else gets the full validation and its messages."""
    if (type(X) is np.ndarray and type(y) is np.ndarray and X.dtype == np.float64
            and y.dtype == np.float64 and X.ndim == 2 and y.ndim == 1
            and X.shape[0] == y.shape[0] and X.size > 0
            and all_finite(X) and all_finite(y)):
        validate_data(estimator, X, y, skip_check_array=True)
        return X, y
    for name, value in (("X", X), ("y", y)):
        as_array(name, value)  # a ragged nesting of lists, refused by name
    return validate_data(estimator, X, y, dtype=np.float64, **checks)


def _sample_weight(sample_weight, X):
    """``None`` for no weights, else the validated float64 weights (nonnegative, finite, not
    all zero: ``ValueError`` otherwise)."""
    if sample_weight is None:
        return None
    from sklearn.utils.validation import _check_sample_weight

    return _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)


def _least_squares_data(X, y, sample_weight, fit_intercept, cone, overwrite=False):
    r"""``(X', y', x_mean, y_mean, shift)``: the least-squares data whose fit ``w'`` gives
    the coefficients ``ldexp(w', shift)`` and the intercept ``y_mean - x_mean @ coef``.

    The rows of positive weight are kept, centred with the weighted means (when
    ``fit_intercept``), row :math:`i` of ``m`` scaled by :math:`\sqrt{s_i m/\sum s}`, so that
    :math:`\frac1{2m}\|y' - X'w\|^2` is the weighted mean :math:`\sum_i s_i r_i^2/(2\sum s)`,
    and, when the constraint is a cone, ``X`` and ``y`` are scaled by powers of two to
    entries of order one (exactly). With ``overwrite`` (``X`` a copy of the caller's, such as
    a split's training rows) ``X`` is centred and scaled in place: one array of its size
    instead of two."""
    sw = sample_weight
    copied = overwrite  # (whether X may be overwritten: not the caller's array)
    if sw is not None:
        keep = sw > 0
        X, y, sw, copied = X[keep], y[keep], sw[keep], True
    x_mean = y_mean = 0.0
    if fit_intercept:
        x_mean, y_mean = np.average(X, axis=0, weights=sw), np.average(y, weights=sw)
        X, y, copied = np.subtract(X, x_mean, out=X if copied else None), y - y_mean, True
    if sw is not None:
        r = np.sqrt(sw * (sw.shape[0] / sw.sum()))
        X, y = np.multiply(X, r[:, None], out=X), y * r
    ex = ey = 0
    if cone:
        ex, ey = _exponent(X), _exponent(y)
        X, y = np.ldexp(X, -ex, out=X if copied else None), np.ldexp(y, -ey)
    return np.ascontiguousarray(X), y, x_mean, y_mean, ey - ex


def _ovr_proba(s):
    """Class probabilities from the scores: the sigmoid for two classes, the normalized
    sigmoids for one-vs-rest."""
    if s.ndim == 1:
        p1 = 0.5 * (1.0 + np.tanh(0.5 * s))
        return np.column_stack([1.0 - p1, p1])
    prob = 0.5 * (1.0 + np.tanh(0.5 * s))
    return prob / prob.sum(axis=1, keepdims=True)


def _exponent(a):
    """``e`` with the largest ``|a|`` in ``[2^(e-1), 2^e)`` (0 for zeros): ``a * 2^-e`` is
    of order one, and exactly ``a`` rescaled."""
    largest = max(float(a.max()), -float(a.min())) if a.size else 0.0  # (10x faster than
    return int(np.frexp(largest)[1])                  # np.abs(a).max(initial=0.0))


class _IHTBase(BaseEstimator):
    def _options(self):
        return dict(constraint=self.constraint, variant=self.variant,
                    selection=self.selection, step=self.step, maxiter=self.max_iter,
                    tol=self.tol, relax=self.relax, refit=self.refit, jit=self.jit,
                    rng=self.random_state, always_select=self.always_select)

    def _solve(self, problem, k, **more):
        """:func:`iht` with the estimator's options; a ``ConvergenceWarning`` with the
        solver's message when it did not end as designed."""
        res = iht(problem, k=k, **self._options(), **more)
        if not res.success:
            warnings.warn(f"{type(self).__name__}: {res.message}", ConvergenceWarning,
                          stacklevel=3)
        return res


class IHTRegressor(RegressorMixin, _IHTBase):
    r"""Least squares with at most ``n_nonzero_coefs`` nonzero coefficients in a convex set.

    Solves :math:`\min_w \frac1{2n}\|y - b - Xw\|^2` subject to :math:`\|w\|_0 \le k` and
    :math:`w \in \Gamma` with :func:`jitopt.sparse.iht`. The intercept :math:`b` is not
    constrained and not counted in :math:`k`: with ``fit_intercept=True``, ``X`` and ``y``
    are centred and :math:`b = \bar y - \bar x^\top w`. When :math:`\Gamma` is a cone (no
    constraint, the orthant), ``X`` and ``y`` are each scaled by a power of two to entries
    of order one, exactly, and :math:`w` scaled back: the fit does not depend on the units
    of the data (``1e150 * X`` gives ``1e-150`` times the coefficients). A run that does not
    end as designed gives a ``ConvergenceWarning`` with the solver's message. Gradients of
    sparse iterates come from cached rows of the Gram matrix :math:`X^\top X/n` (one row
    per coordinate that ever enters the support), so an iteration costs :math:`O(pk)`
    rather than :math:`O(np)`.

    Parameters
    ----------
    n_nonzero_coefs : int, optional
        The sparsity :math:`k` (default: 10% of the features, at least 1).
    constraint : None, "nonnegative" or jitopt.sets.ConvexSet
        A support-preserving set :math:`\Gamma` for the coefficients.
    always_select : sequence of int, optional
        Features always in the support, counted in :math:`k` (see
        :func:`jitopt.sparse.iht`).
    variant : {"deterministic", "stochastic", "zeroth_order"}
    selection : {"auto", "magnitude", "gain", "signed"}
        Selection rule of the two-step projection (``"auto"``: an exact one when the
        constraint has one).
    relax : float
        Work at sparsity :math:`\lceil \text{relax}\cdot k\rceil`, then prune to :math:`k`.
    refit : bool
        Refit the coefficients on the final support (debiasing).
    fit_intercept : bool
    step : float or {"auto", "lipschitz", "backtracking"}
    max_iter : int
    tol : float
    random_state : int or None
        Seed of the stochastic and zeroth-order variants.
    jit : {"auto", False}
        Run the iterations in Numba (``"auto"``, for least squares with the deterministic
        variant) or always in Python, see :func:`jitopt.sparse.iht`.

    Attributes
    ----------
    coef_ : ndarray (n_features,)
    intercept_ : float
    n_iter_ : int
    n_features_in_ : int
    result_ : jitopt.OptimizeResult
        The solver's result (oracle counts, status, support; ``x`` and ``fun`` of the
        rescaled problem).

    Examples
    --------
    >>> import numpy as np, jitopt
    >>> from jitopt.sparse import IHTRegressor
    >>> X, y, beta = jitopt.problems.sparse_regression_data(100, 20, 3, rng=0)
    >>> model = IHTRegressor(3).fit(X, y)
    >>> np.flatnonzero(model.coef_), np.flatnonzero(beta)
    (array([ 1, 10, 17]), array([ 1, 10, 17]))
    """

    def __init__(self, n_nonzero_coefs=None, *, constraint=None, always_select=None,
                 variant="deterministic", selection="auto", relax=1.0, refit=True,
                 fit_intercept=True, step="auto", max_iter=1000, tol=1e-7, random_state=None,
                 jit="auto"):
        self.n_nonzero_coefs = n_nonzero_coefs
        self.constraint = constraint
        self.always_select = always_select
        self.variant = variant
        self.selection = selection
        self.relax = relax
        self.refit = refit
        self.fit_intercept = fit_intercept
        self.step = step
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.jit = jit

    def fit(self, X, y, sample_weight=None):
        """Fit the model; returns ``self``. ``sample_weight``: frequency weights (the loss
        is the weighted mean; integer weights give the fit on repeated rows)."""
        X, y = _fit_data(self, X, y, y_numeric=True)
        sw = _sample_weight(sample_weight, X)
        k = _sparsity(self.n_nonzero_coefs, X.shape[1])
        cone = check_constraint(self.constraint, X.shape[1]).cone
        Xs, ys, x_mean, y_mean, shift = _least_squares_data(X, y, sw, self.fit_intercept,
                                                             cone)
        res = self._solve(LeastSquares(Xs, ys), k)
        self.coef_ = np.ldexp(res.x, shift)
        self.intercept_ = float(y_mean - x_mean @ self.coef_) if self.fit_intercept else 0.0
        self.n_iter_ = res.nit
        self.result_ = res
        return self

    def predict(self, X):
        """Predictions :math:`Xw + b`."""
        check_is_fitted(self, "coef_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return X @ self.coef_ + self.intercept_


class IHTClassifier(ClassifierMixin, _IHTBase):
    r"""Logistic regression with at most ``n_nonzero_coefs`` nonzero coefficients.

    Minimizes :math:`\frac1n\sum_i\log(1 + e^{-y_i(x_i^\top w + b)}) +
    \frac\alpha2\|w\|^2` subject to :math:`\|w\|_0\le k`, :math:`w\in\Gamma` with
    :func:`jitopt.sparse.iht` (the intercept :math:`b` is free and not counted in
    :math:`k`). More than two classes are fitted one-vs-rest, one sparse model per class.

    Parameters
    ----------
    n_nonzero_coefs : int, optional
        The sparsity :math:`k` (default: 10% of the features, at least 1).
    constraint : None, "nonnegative" or jitopt.sets.ConvexSet
    always_select : sequence of int, optional
        Features always in the support of every binary model, counted in :math:`k`.
    alpha : float
        Ridge weight :math:`\alpha \ge 0` (keeps the problem bounded on separable data).
    variant, selection, relax, refit, fit_intercept, step, max_iter, tol, random_state, jit
        As in :class:`IHTRegressor`.

    Attributes
    ----------
    classes_ : ndarray
    coef_ : ndarray (1, n_features) for two classes, else (n_classes, n_features)
    intercept_ : ndarray (1,) or (n_classes,)
    n_iter_ : ndarray of int
        Iterations of each fitted model.
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np, jitopt
    >>> from jitopt.sparse import IHTClassifier
    >>> X, y, beta = jitopt.problems.sparse_regression_data(200, 20, 3, rng=1)
    >>> model = IHTClassifier(3).fit(X, y > 0)
    >>> np.flatnonzero(model.coef_[0]), np.flatnonzero(beta)
    (array([3, 5, 7]), array([3, 5, 7]))
    """

    def __init__(self, n_nonzero_coefs=None, *, constraint=None, always_select=None,
                 alpha=1e-4, variant="deterministic", selection="auto", relax=1.0, refit=True,
                 fit_intercept=True, step="auto", max_iter=1000, tol=1e-7,
                 random_state=None, jit="auto"):
        self.n_nonzero_coefs = n_nonzero_coefs
        self.constraint = constraint
        self.always_select = always_select
        self.alpha = alpha
        self.variant = variant
        self.selection = selection
        self.relax = relax
        self.refit = refit
        self.fit_intercept = fit_intercept
        self.step = step
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.jit = jit

    def fit(self, X, y, sample_weight=None):
        """Fit the model; returns ``self``. ``sample_weight``: frequency weights (the loss
        is the weighted mean; integer weights give the fit on repeated rows)."""
        X, y = _fit_data(self, X, y)
        sw = _sample_weight(sample_weight, X)
        check_classification_targets(y)
        self.classes_, codes = np.unique(y, return_inverse=True)
        if self.classes_.shape[0] < 2:
            raise ValueError(f"IHTClassifier needs samples of at least 2 classes in the data, "
                             f"got 1 class: {self.classes_.tolist()[0]!r}")
        p = X.shape[1]
        k = _sparsity(self.n_nonzero_coefs, p)
        if sw is not None:
            X, codes, sw = X[sw > 0], codes[sw > 0], sw[sw > 0]
        targets = [1] if self.classes_.shape[0] == 2 else range(self.classes_.shape[0])
        coefs, intercepts, nits = [], [], []
        for c in targets:
            labels = np.where(codes == c, 1.0, -1.0)
            problem = Logistic(X, labels, self.alpha, self.fit_intercept, sw)
            res = self._solve(problem, k, n_unconstrained=int(self.fit_intercept))
            coefs.append(res.x[:p])
            intercepts.append(res.x[p] if self.fit_intercept else 0.0)
            nits.append(res.nit)
        self.coef_ = np.array(coefs)
        self.intercept_ = np.array(intercepts)
        self.n_iter_ = np.array(nits)
        return self

    def decision_function(self, X):
        """Signed scores :math:`Xw + b` (one column per class beyond two)."""
        check_is_fitted(self, "coef_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        scores = X @ self.coef_.T + self.intercept_
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def predict_proba(self, X):
        """Class probabilities (sigmoid of the scores, normalized for one-vs-rest)."""
        return _ovr_proba(self.decision_function(X))

    def predict(self, X):
        """Predicted class labels."""
        s = self.decision_function(X)
        idx = (s > 0).astype(int) if s.ndim == 1 else s.argmax(axis=1)
        return self.classes_[idx]
