r"""scikit-learn estimators that choose their sparsity :math:`k`: ``IHTRegressorCV`` and
``IHTClassifierCV``, by cross-validation or an information criterion over warm-started paths."""

import math
import numbers

import numpy as np
from joblib import effective_n_jobs
from sklearn.base import is_classifier
from sklearn.metrics import check_scoring
from sklearn.model_selection import check_cv
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.parallel import Parallel, delayed

from ..validation import check_choice, check_int, check_real
from ._estimators import IHTClassifier, IHTRegressor, _fit_data, _ovr_proba, _sample_weight
from ._paths import LeastSquaresPath, LogisticPath
from ._projection import check_always_select, check_constraint
from ._select import (CRITERIA, SEARCHES, check_patience, information_criterion,
                      search_candidates)

__all__ = ["IHTRegressorCV", "IHTClassifierCV"]


def _candidates(ks, n_w, p):
    r"""The sorted distinct candidates: ``ks`` checked (integers in ``[0, p]``), or
    :math:`0,\dots,k_{\max}` with abess's
    :math:`k_{\max} = \min(p, \max(1, \lfloor n_w/(\max(1,\log\log n_w)\max(1,\log p))\rfloor))`."""
    if ks is None:
        loglog = math.log(math.log(n_w)) if n_w > math.e else 0.0
        k_max = min(p, max(1, int(n_w / (max(1.0, loglog) * max(1.0, math.log(p))))))
        return np.arange(k_max + 1)
    try:
        values = [check_int("ks", k, low=0, high=p) for k in ks]
    except TypeError:
        raise TypeError(f"ks must be None or a sequence of integers in [0, {p}]") from None
    if not values:
        raise ValueError("ks must not be empty")
    return np.unique(values)


class _SelectBase:
    """The search over ``k`` shared by the two estimators (a mixin before the fixed-``k``
    estimator, whose ``predict`` it keeps)."""

    def _iht_options(self, swap, forced):
        return dict(constraint=self.constraint, selection=self.selection, step=self.step,
                    maxiter=self.max_iter, tol=self.tol, refit=True, swap=swap, jit=self.jit,
                    rng=self.random_state, always_select=forced)

    def _check_params(self):
        check_choice("criterion", self.criterion, ("cv",) + CRITERIA)
        check_choice("search", self.search, SEARCHES)
        check_patience(self.patience, self.search)
        check_choice("k_rule", self.k_rule, ("best", "1se"))
        check_real("ic_coef", self.ic_coef, low=0.0, low_open=True)
        if isinstance(self.swap, bool) or not isinstance(self.swap, numbers.Integral) \
                or self.swap < 0:
            raise ValueError(f"swap must be a nonnegative integer, got {self.swap!r}")

    def _fit_search(self, X, y, sw, target):
        """Choose ``k`` and refit; ``target`` is what the paths fit (``y`` or the class
        codes)."""
        self._check_params()
        p = X.shape[1]
        n_w = X.shape[0] if sw is None else float(sw.sum())
        ks = _candidates(self.ks, n_w, p)
        n_forced = check_always_select(self.always_select, p).shape[0]
        ks = self.ks_ = ks[ks >= n_forced]
        if not ks.shape[0]:
            raise ValueError(f"ks has no candidate of at least len(always_select) = "
                             f"{n_forced}")
        self._screen = self._screening(ks, n_w, p)
        full = self._path(X, target, sw)
        if self.criterion == "cv":
            best, rows = self._cross_validate(X, y, target, sw, ks)
        else:
            best, rows = self._information(full, ks, n_w, p)
        evaluated = sorted(rows)
        self.best_index_ = evaluated.index(best)
        self.k_ = int(ks[best])
        if not self.refit:
            return
        for i in evaluated if self.criterion != "cv" else [i for i in evaluated if i <= best]:
            if i not in full.x:
                full.fit(i, ks[i])
        self.coef_, self.intercept_ = full.model(best)
        self.n_iter_ = full.nit[best]
        self.support_ = np.flatnonzero(np.any(np.atleast_2d(self.coef_) != 0, axis=0))
        path = np.full((len(ks),) + self.coef_.shape, np.nan)
        for i in full.x:
            path[i] = full.model(i)[0]
        self.path_ = path

    def _screening(self, ks, n_w, p):
        """The number of columns kept by the screening, or None for all."""
        m = self.screening_size
        if m is None:
            return None
        if isinstance(m, str) and m == "auto":
            m = min(p, max(2 * int(ks[-1]), int(n_w / math.log(max(n_w, math.e)))))
        m = check_int("screening_size", m, low=max(1, int(ks[-1])), high=p)
        if check_constraint(self.constraint, p).dim is not None:
            raise ValueError("screening_size needs a constraint without a fixed dimension "
                             "(a set for every number of features)")
        return m

    def _information(self, full, ks, n_w, p):
        if self.criterion == "gic" and n_w <= math.e:
            raise ValueError(f"criterion='gic' needs more than e samples (log log n > 0), "
                             f"got {n_w}")
        table = {}
        # the criterion is D + (its penalty per nonzero) df: the penalty checked once
        per_df = information_criterion(0.0, 1, n_w, p, self.criterion, self.ic_coef)

        def evaluate(indices):
            out = []
            for i in indices:
                full.fit(i, ks[i])
                dev, df = full.deviance(i), full.df(i)
                value = float(dev + per_df * df)
                if df >= n_w - 1:  # an interpolating fit: its log RSS means nothing
                    value = math.inf
                table[i] = (value, dev, df)
                out.append(value)
            return out

        best, _ = search_candidates(len(ks), evaluate, self.search, self.patience)
        idx = sorted(table)
        self.criterion_ = np.array([table[i][0] for i in idx])
        self.best_score_ = float(table[best][0])
        self.cv_results_ = {"param_k": ks[idx], "params": [{"k": int(ks[i])} for i in idx],
                            "criterion": self.criterion_,
                            "deviance": np.array([table[i][1] for i in idx]),
                            "n_nonzero": np.array([table[i][2] for i in idx])}
        return best, table

    def _cross_validate(self, X, y, target, sw, ks):
        splits = list(check_cv(self.cv, y, classifier=is_classifier(self)).split(X, y))
        # the splits' paths are kept when the search evaluates more than once; else each
        # split's path is made in its job and dropped after it, and when the jobs run one
        # after the other, their training rows are copied into one buffer (fresh memory
        # costs more than the copy)
        once = self.search == "sequential" and self.patience is None
        buffer = None
        if once and effective_n_jobs(self.n_jobs) == 1:
            buffer = np.empty((max(tr.shape[0] for tr, _ in splits), X.shape[1]))

        def fold(tr, te):  # a split's path on its training rows, and its test rows
            Xtr = X[tr] if buffer is None else np.take(X, tr, axis=0, out=buffer[:tr.shape[0]],
                                                       mode="clip")  # (unbuffered)
            return (self._fold_path(Xtr, target[tr], None if sw is None else sw[tr]),
                    (X[te], y[te], target[te], None if sw is None else sw[te]))

        folds = None if once else [fold(tr, te) for tr, te in splits]
        scorer = None if self.scoring is None else check_scoring(self, self.scoring)
        table = {}

        def split_scores(s, indices):
            path, test = fold(*splits[s]) if folds is None else folds[s]
            return self._fold_scores(path, ks, indices, *test, scorer)

        def evaluate(indices):
            rows = Parallel(n_jobs=self.n_jobs, prefer="threads")(
                delayed(split_scores)(s, indices) for s in range(len(splits)))
            for j, i in enumerate(indices):
                table[i] = np.array([r[j] for r in rows])
            return [-table[i].mean() for i in indices]

        best, _ = search_candidates(len(ks), evaluate, self.search, self.patience)
        idx = sorted(table)
        scores = np.array([table[i] for i in idx])
        mean = scores.mean(axis=1)
        results = {"param_k": ks[idx], "params": [{"k": int(ks[i])} for i in idx]}
        for s in range(len(splits)):
            results[f"split{s}_test_score"] = scores[:, s]
        results["mean_test_score"] = mean
        with np.errstate(invalid="ignore"):  # (-inf scores of splits lacking a class)
            results["std_test_score"] = scores.std(axis=1)
        results["rank_test_score"] = 1 + np.array([np.sum(mean > m) for m in mean])
        if self.k_rule == "1se":  # the smallest k within a standard error of the best
            row = idx.index(best)
            se = float(np.nan_to_num(results["std_test_score"][row])) / math.sqrt(len(splits))
            best = idx[int(np.flatnonzero(mean >= mean[row] - se)[0])]
        self.cv_results_, self.n_splits_ = results, len(splits)
        self.best_score_ = float(table[best].mean())
        return best, table

    def _fold_path(self, X, y, sw):
        """The path on a split's training rows ``X`` (a copy, which it may overwrite)."""
        return self._path(X, y, sw)

    def _fold_scores(self, path, ks, indices, X, y, target, sw, scorer):
        """The scores (higher is better) of the fits at ``indices`` on a split's test rows."""
        out = []
        for i in indices:
            if not path.complete:
                out.append(-math.inf)  # training rows without every class
                continue
            path.fit(i, ks[i])
            coef, b = path.model(i)
            if scorer is None:
                out.append(-self._mean_loss(coef, b, X, target, sw))
            else:
                model = self._fixed(coef, b)
                extra = {} if sw is None else {"sample_weight": sw}
                out.append(float(scorer(model, X, y, **extra)))
        return out

    def _fixed(self, coef, intercept):
        """A fitted fixed-``k`` estimator with these coefficients (for scorers)."""
        model = self._fixed_class()
        model.coef_, model.intercept_, model.n_features_in_ = coef, intercept, coef.shape[-1]
        return model


GLM_SWAP_DOC = """swap : int
        Largest exchange of the GLM exchange search
        (:func:`jitopt.sparse.glm_exchange_search`) run at every candidate after the first
        (a box, the orthant or no constraint; 0: IHT at every candidate).
    """

_SHARED_DOC = r"""
    The candidates are fitted in increasing order, each warm-started from the fit at the
    previous candidate (a point with fewer than ``k`` nonzeros, which the two-step
    projection leaves unchanged): by :func:`jitopt.sparse.iht` with a refit on the final
    support, or, for least squares and the GLM losses (logistic, Poisson) with a box, the
    orthant or no constraint, by the exchange search (``swap``) alone: for least squares
    from 0 at the first candidate, for the GLM losses after the first candidate (the best
    additions up to ``k``, then exchanges, each support refitted exactly, by Newton's
    method for the GLM losses: abess's path, with the bounds);
    ``k = 0`` is the intercept-only model. ``criterion="cv"`` scores each
    candidate on the test rows of every split of ``cv`` (one path per split, on its training
    rows); ``k_`` is the smallest candidate with the largest mean score (or, with
    ``k_rule="1se"``, the smallest within a standard error of it), and the model is
    then refitted on all rows along the path up to ``k_``. An information criterion
    (:func:`jitopt.sparse.information_criterion`, computed as abess computes it, with
    :math:`n = \sum_i s_i` and :math:`\text{df}` the nonzero coefficients) is minimized
    over the path on all rows instead (ties to the smaller ``k``; candidates with
    :math:`\text{df} \ge n - 1` are skipped). ``search="golden"`` evaluates only the
    candidates of an integer golden-section search (:math:`\approx \log_{1.618} m + 4` of
    :math:`m`) and returns the best evaluated one; it assumes the score unimodal in ``k``.

    ``sample_weight`` holds frequency weights: the training loss is the weighted mean, the
    test scores are weighted, and :math:`n = \sum_i s_i` in the criteria, so integer weights
    give the model fitted on repeated rows (abess's weights do not have this property).

    Parameters
    ----------
    ks : sequence of int, optional
        Candidate sparsities in ``[0, n_features]`` (sorted, deduplicated); default
        :math:`0,\dots,k_{\max}` with abess's
        :math:`k_{\max} = \min(p, \max(1, \lfloor n/(\max(1, \log\log n)\max(1,\log p))
        \rfloor))`.
    criterion : {"cv", "aic", "bic", "gic", "ebic", "loss"}
        Cross-validation (default) or an information criterion.
    cv : int, cross-validation splitter or iterable of (train, test) index arrays
        As in scikit-learn (``sklearn.model_selection.check_cv``); used with
        ``criterion="cv"``.
    k_rule : {"best", "1se"}
        CV's choice: the smallest candidate with the best mean score (scikit-learn's), or
        the smallest whose mean score is within one standard error
        (:math:`\text{std}/\sqrt{\text{splits}}`) of the best (fewer noise features: the
        minimum of a CV curve is not selection-consistent).
    scoring : str or callable, optional
        A scikit-learn scorer for the test rows; default the negated weighted mean loss
        (%(loss)s), computed from the linear predictor.
    n_jobs : int, optional
        Splits fitted in parallel (threads); the result does not depend on it.
    refit : bool
        Fit the chosen model on all rows (``False``: only ``k_`` and ``cv_results_``).
    search : {"sequential", "golden"}
    patience : int, optional
        Stop the sequential path once this many candidates in a row have not improved the
        best score (``None``, the default: fit every candidate). The candidates after the
        stop are not fitted and are missing from ``cv_results_``; a score that falls again
        after a longer plateau is missed.
    ic_coef : float
        The factor :math:`c` of the criteria's penalty.
    constraint : None, "nonnegative" or jitopt.sets.ConvexSet
        A support-preserving set for the coefficients.
    always_select : sequence of int, optional
        Features in every fitted support (abess's ``always_select``): counted in ``k``
        and in :math:`\text{df}`, never exchanged out; the candidates below their number
        are dropped.
    screening_size : None, int or "auto"
        For :math:`p \gg n`: fit only the forced features and the ``screening_size``
        minus their number of largest marginal statistic (the weighted correlation with
        ``y`` of each centred feature, for the classifier the score statistic of the null
        model, largest over the binary models): one pass over ``X``, on the training rows
        of each split and again on all rows. ``"auto"``:
        :math:`\min(p, \max(2\max k, \lfloor n/\log n\rfloor))` (the sure-independence
        size of Fan & Lv). At least the largest candidate. The criteria keep the original
        :math:`p`; ``coef_`` has all :math:`p` entries. The best-subset search is then over
        the screened features only.
    selection : {"auto", "magnitude", "gain", "signed"}
    %(swap)sfit_intercept : bool
    step, max_iter, tol, random_state, jit
        As in :class:`%(fixed)s` (``max_iter`` and ``tol`` per candidate).

    Attributes
    ----------
    k_ : int
        The chosen sparsity.
    ks_ : ndarray
        The candidates.
    coef_, intercept_
        The model refitted at ``k_`` (as in :class:`%(fixed)s`).
    support_ : ndarray
        Sorted indices of the features with a nonzero coefficient.
    cv_results_ : dict of ndarray
        One entry per evaluated candidate: ``param_k``, ``params`` and, for CV,
        ``split{i}_test_score``, ``mean_test_score``, ``std_test_score``,
        ``rank_test_score`` (scikit-learn's ``GridSearchCV`` layout); for a criterion,
        ``criterion``, ``deviance`` and ``n_nonzero``.
    best_index_ : int
        The row of ``k_`` in ``cv_results_``.
    best_score_ : float
        Its mean test score, or its criterion.
    criterion_ : ndarray
        The criterion of the evaluated candidates (criterion mode).
    n_splits_ : int
        Splits (CV mode).
    path_ : ndarray
        The coefficients fitted on all rows, one row per candidate of ``ks_`` (NaN for those
        not fitted on all rows).
    n_iter_
        Iterations of the fit at ``k_`` (IHT iterations, or rounds of the exchange search;
        1 for the intercept-only model).
    n_features_in_ : int

    References
    ----------
    J. Zhu, C. Wen, J. Zhu, H. Zhang and X. Wang, "A polynomial algorithm for best-subset
    selection problem", PNAS 117(52), 2020 (the criteria, the splicing of ``swap``).
"""


class IHTRegressorCV(_SelectBase, IHTRegressor):
    __doc__ = (r"""Sparse least squares that chooses its sparsity :math:`k` by cross-validation
    or an information criterion.

    For each candidate :math:`k` it fits :math:`\min_w \frac1{2n}\sum_i s_i(y_i - b -
    x_i^\top w)^2/\bar s` subject to :math:`\|w\|_0 \le k`, :math:`w \in \Gamma` as
    :class:`IHTRegressor` does, with the criterion's deviance
    :math:`D = n\log(\sum_i s_i r_i^2/(2n))`.
""" + _SHARED_DOC % {"loss": "squared error", "fixed": "IHTRegressor",
                     "swap": "swap : int\n        Largest exchange of the search run at "
                             "every candidate (least squares in a\n        box only).\n    "}
        + r"""
    Examples
    --------
    >>> import numpy as np, jitopt
    >>> from jitopt.sparse import IHTRegressorCV
    >>> X, y, beta = jitopt.problems.sparse_regression_data(100, 20, 3, rng=0)
    >>> model = IHTRegressorCV(criterion="ebic").fit(X, y)
    >>> model.k_, model.support_, np.flatnonzero(beta)
    (3, array([ 1, 10, 17]), array([ 1, 10, 17]))
    """)

    def __init__(self, ks=None, *, criterion="cv", cv=5, k_rule="best", scoring=None, n_jobs=None,
                 refit=True, search="sequential", patience=None, ic_coef=1.0, constraint=None,
                 always_select=None, screening_size=None, selection="auto", swap=5,
                 fit_intercept=True, step="auto", max_iter=1000, tol=1e-7, random_state=None,
                 jit="auto"):
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
        self.selection = selection
        self.swap = swap
        self.fit_intercept = fit_intercept
        self.step = step
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.jit = jit

    _fixed_class = IHTRegressor

    def fit(self, X, y, sample_weight=None):
        """Choose ``k`` and fit; returns ``self``."""
        X, y = _fit_data(self, X, y, y_numeric=True)
        self._fit_search(X, y, _sample_weight(sample_weight, X), y)
        return self

    def _path(self, X, y, sw):
        return LeastSquaresPath(self, X, y, sw)

    def _fold_path(self, X, y, sw):
        return LeastSquaresPath(self, X, y, sw, own=True)

    @staticmethod
    def _mean_loss(coef, b, X, y, sw):
        nz = np.flatnonzero(coef)
        r = y - X[:, nz] @ coef[nz] - b
        return float(np.average(r * r, weights=sw))


class IHTClassifierCV(_SelectBase, IHTClassifier):
    __doc__ = (r"""Sparse logistic regression that chooses its sparsity :math:`k` by
    cross-validation or an information criterion.

    For each candidate :math:`k` it fits the model of :class:`IHTClassifier` (one-vs-rest
    beyond two classes, every binary model with at most :math:`k` nonzeros), with the
    criterion's deviance :math:`D = 2\sum_i s_i(\log(1+e^{\eta_i}) - y_i\eta_i)`
    (:math:`y_i\in\{0,1\}`, :math:`\eta_i = x_i^\top w + b`; summed over the binary models,
    as the nonzeros in :math:`\text{df}` are; the small ridge :math:`\alpha` is not counted).
    An integer ``cv`` gives stratified folds; a split whose training rows lack a class
    scores :math:`-\infty`.
""" + _SHARED_DOC % {"loss": "log-loss", "fixed": "IHTClassifier",
                     "swap": "alpha : float\n        Ridge weight of the logistic loss.\n    "
                             + GLM_SWAP_DOC}
        + r"""
    Examples
    --------
    >>> import numpy as np, jitopt
    >>> from jitopt.sparse import IHTClassifierCV
    >>> X, y, beta = jitopt.problems.sparse_regression_data(300, 20, 3, rng=1)
    >>> model = IHTClassifierCV(criterion="ebic").fit(X, y > 0)
    >>> model.k_, model.support_, np.flatnonzero(beta)
    (3, array([ 0,  5, 13]), array([ 0,  5, 13]))
    """)

    def __init__(self, ks=None, *, criterion="cv", cv=5, k_rule="best", scoring=None, n_jobs=None,
                 refit=True, search="sequential", patience=None, ic_coef=1.0, constraint=None,
                 always_select=None, screening_size=None, alpha=1e-4, selection="auto", swap=5,
                 fit_intercept=True, step="auto", max_iter=1000, tol=1e-7, random_state=None,
                 jit="auto"):
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
        self.random_state = random_state
        self.jit = jit

    _fixed_class = IHTClassifier

    def fit(self, X, y, sample_weight=None):
        """Choose ``k`` and fit; returns ``self``."""
        X, y = _fit_data(self, X, y)
        check_classification_targets(y)
        self.classes_, codes = np.unique(y, return_inverse=True)
        if self.classes_.shape[0] < 2:
            raise ValueError(f"IHTClassifierCV needs samples of at least 2 classes in the "
                             f"data, got 1 class: {self.classes_.tolist()[0]!r}")
        sw = _sample_weight(sample_weight, X)
        if sw is not None and np.unique(codes[sw > 0]).shape[0] < self.classes_.shape[0]:
            raise ValueError("IHTClassifierCV needs rows of positive sample_weight in every "
                             "class of y")
        self._fit_search(X, y, sw, codes)
        return self

    def _path(self, X, codes, sw):
        return LogisticPath(self, X, codes, sw)

    def _fixed(self, coef, intercept):
        model = super()._fixed(coef, intercept)
        model.classes_ = self.classes_
        return model

    @staticmethod
    def _mean_loss(coef, b, X, codes, sw):
        s = X @ coef.T + b
        proba = _ovr_proba(s[:, 0] if s.shape[1] == 1 else s)
        picked = np.maximum(proba[np.arange(codes.shape[0]), codes], np.finfo(float).tiny)
        return float(np.average(-np.log(picked), weights=sw))
