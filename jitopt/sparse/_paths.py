"""The fits along a path of sparsities on one set of rows, for the estimators that choose
``k`` (:mod:`jitopt.sparse._estimators_cv`): least squares and one-vs-rest logistic
regression, with the screening of their features."""

import math
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from ..problems import LeastSquares, Logistic
from ._estimators import _least_squares_data
from ._glm import glm_exchange_search
from ._iht import iht
from ._projection import check_always_select, check_constraint
from ._refit import search_from

__all__ = ["LeastSquaresPath", "LogisticPath"]


class _Path:
    """Fits at the candidates on one set of rows (all of them, or a split's training rows),
    each warm-started from the fit at the largest smaller candidate fitted before; the
    family's subclass holds the problem and says what a fit at ``k`` is."""

    def __init__(self, X, y, sw):
        self.X, self.y, self.sw, self.p = X, y, sw, X.shape[1]
        self.n_w = X.shape[0] if sw is None else float(sw.sum())
        self.x, self.nit = {}, {}
        self.complete = True  # every class among the rows (classifiers)

    def fit(self, i, k):
        below = [j for j in self.x if j < i]
        x0 = self.x[max(below)] if below else None
        self.x[i], self.nit[i] = self._fit(x0, k)

    def _solve(self, problem, x0, k, **more):
        res = iht(problem, x0, k=k, **self.options, **more)
        if not res.success:
            warnings.warn(f"{self.name}: at k = {k}: {res.message}", ConvergenceWarning,
                          stacklevel=5)
        return res

    def _glm_options(self, est, p, forced):
        """The options of :func:`iht` (the exchange search on when the constraint is a box,
        the orthant or none) and the box of the exchange search, for a GLM path on ``p``
        columns."""
        c = check_constraint(est.constraint, p)
        self.options = est._iht_options(est.swap if c.separable else 0, forced)
        self.bounds = c.kernel_args(p)[:2] if c.separable else None

    def _glm_fit(self, problem, x0, k, **more):
        """``(x, work)`` at ``k``: from a previous fit ``x0``, with the exchange search on,
        :func:`glm_exchange_search` (the best additions up to ``k``, then the exchanges:
        abess's path, with the bounds; ``work`` its rounds); else :func:`iht` (with the
        exchange search after it when on; ``work`` its iterations)."""
        swap = self.options["swap"]
        if x0 is not None and swap > 0:
            x, _, n_swaps = glm_exchange_search(problem, x0, k, *self.bounds, swap,
                                                always_select=self.options["always_select"])
            return x, n_swaps + 1
        res = self._solve(problem, x0, k, **more)
        return res.x, res.nit

    def df(self, i):
        return int(np.count_nonzero(self.model(i)[0]))

    def _screen(self, est, stat):
        """The fitted columns (sorted): all, or with ``est._screen = m`` the forced ones and
        the ``m - |F|`` others of largest marginal statistic ``stat`` (needed only then); and
        the options of :func:`iht` with the forced features as positions among them."""
        p = self.p
        forced = check_always_select(est.always_select, p)
        keep = np.arange(p)
        if est._screen is not None:
            score = np.where(np.isfinite(stat), stat, 0.0)
            score[forced] = np.inf
            keep = np.sort(np.argsort(-score, kind="stable")[:est._screen])
        self.keep = keep
        return np.searchsorted(keep, forced)

    def _full(self, coef):
        """Coefficients on all the columns from those on the fitted ones."""
        if self.keep.shape[0] == coef.shape[-1] == self.p:
            return coef
        out = np.zeros(coef.shape[:-1] + (self.p,))
        out[..., self.keep] = coef
        return out


class LeastSquaresPath(_Path):
    """The least-squares path; with ``own``, ``X`` is a copy made for the path (a split's
    training rows), which it centres in place and then has no :meth:`deviance`."""

    def __init__(self, est, X, y, sw, own=False):
        super().__init__(X, y, sw)
        c = check_constraint(est.constraint, X.shape[1])
        Xs, ys, self.x_mean, self.y_mean, self.shift = _least_squares_data(
            X, y, sw, est.fit_intercept, c.cone, overwrite=own)
        if own:
            self.X = None  # (centred in place)
        else:  # RSS/(2n) of the null model, the problem's ||y||^2/(2n) in the data's scale
            r = y - self.y_mean
            self.null_risk = (r @ r if sw is None else sw @ (r * r)) / (2.0 * self.n_w)
        stat = None
        if est._screen is not None:
            with np.errstate(invalid="ignore", divide="ignore"):  # the marginal correlations
                stat = np.abs(ys @ Xs) / np.sqrt(np.einsum("ij,ij->j", Xs, Xs))
        forced = self._screen(est, stat)
        if self.keep.shape[0] < X.shape[1]:
            Xs = np.ascontiguousarray(Xs[:, self.keep])
        self.problem = LeastSquares(Xs, ys)
        self.fit_intercept, self.name = est.fit_intercept, type(est).__name__
        self.options = est._iht_options(est.swap if c.separable else 0, forced)
        self.bounds = c.kernel_args(Xs.shape[1])[:2]
        self._gradient = (None, None)  # (a fit, the gradient at it)

    def _fit(self, x0, k):
        if k == 0:
            return np.zeros(self.keep.shape[0]), 1
        if self.options["swap"] > 0:
            # from the previous fit (or 0): the best additions up to k, then the exchanges
            # (with the gradient the search left at x0, when x0 is the last fit)
            lo, hi = self.bounds
            g = self._gradient[1] if self._gradient[0] is x0 else None
            if x0 is None:
                x0, g = np.zeros(self.keep.shape[0]), -self.problem.gram_rhs()
            x, n_swaps, g = search_from(self.problem, x0, k, lo, hi, self.options["swap"],
                                        always_select=self.options["always_select"],
                                        gradient=g)
            self._gradient = (x, g)
            return x, n_swaps + 1  # the rounds of the search
        res = self._solve(self.problem, x0, k)
        return res.x, res.nit

    def model(self, i):
        coef = self._full(np.ldexp(self.x[i], self.shift))
        return coef, float(self.y_mean - self.x_mean @ coef) if self.fit_intercept else 0.0

    def deviance(self, i):
        """abess's :math:`n\\log(\\mathrm{RSS}/(2n))`, weighted. After the exchange search,
        from the gradient :math:`g = Gw - c` it left at the fit: the risk
        :math:`R(w) = \\tfrac12 w^\\top g - \\tfrac12 c^\\top w + \\|y\\|^2/(2n)` of the
        problem, which is :math:`\\mathrm{RSS}/(2n)` up to the scale of its data, in
        :math:`O(p)` rather than a pass over ``X`` (unless the difference lost more than 8
        digits); else from the residuals."""
        w, g = self._gradient
        if w is self.x[i] and g is not None:
            offset = self.problem.gram_offset()
            risk = 0.5 * float(w @ g) - 0.5 * float(self.problem.gram_rhs() @ w) + offset
            if risk > 1e-8 * offset:
                return self.n_w * math.log(risk / offset * self.null_risk)
        coef, b = self.model(i)
        nz = np.flatnonzero(coef)
        r = self.y - self.X[:, nz] @ coef[nz] - b
        rss = r @ r if self.sw is None else self.sw @ (r * r)
        with np.errstate(divide="ignore"):
            return self.n_w * np.log(rss / (2.0 * self.n_w))


class LogisticPath(_Path):
    """One-vs-rest logistic paths (one binary model for two classes)."""

    def __init__(self, est, X, codes, sw):
        if sw is not None:
            X, codes, sw = X[sw > 0], codes[sw > 0], sw[sw > 0]
        super().__init__(X, codes, sw)
        n_classes = est.classes_.shape[0]
        self.complete = np.unique(codes).shape[0] == n_classes
        self.labels = [np.where(codes == c, 1.0, -1.0)
                       for c in ([1] if n_classes == 2 else range(n_classes))]
        stat = None
        if est._screen is not None:
            # the score statistics at the null model, |x~' W (t - q)| / ||x~||_W, largest
            # over the binary models
            Xc = X - np.average(X, axis=0, weights=sw)
            w = np.ones(X.shape[0]) if sw is None else sw
            t01 = np.column_stack(self.labels) > 0
            with np.errstate(invalid="ignore", divide="ignore"):
                stat = np.abs(Xc.T @ (w[:, None] * (t01 - np.average(t01, axis=0, weights=sw))))
                stat = (stat / np.sqrt(w @ (Xc * Xc))[:, None]).max(axis=1)
        forced = self._screen(est, stat)
        Xk = X if self.keep.shape[0] == X.shape[1] else np.ascontiguousarray(X[:, self.keep])
        self.problems = [Logistic(Xk, t, est.alpha, est.fit_intercept, sw) for t in self.labels]
        self.fit_intercept, self.name = est.fit_intercept, type(est).__name__
        self._glm_options(est, Xk.shape[1], forced)

    def _fit(self, x0, k):
        p = self.keep.shape[0]
        xs, nits = [], []
        for t, (labels, problem) in enumerate(zip(self.labels, self.problems)):
            if k == 0:  # the intercept-only model: the log-odds of the weighted mean
                x = np.zeros(p + self.fit_intercept)
                if self.fit_intercept:
                    q = np.average(labels > 0, weights=self.sw)
                    x[p] = math.log(q / (1.0 - q))
                xs.append(x)
                nits.append(1)
                continue
            x, nit = self._glm_fit(problem, None if x0 is None else x0[t], k,
                                   n_unconstrained=int(self.fit_intercept))
            xs.append(x)
            nits.append(nit)
        return np.array(xs), np.array(nits)

    def model(self, i):
        p = self.keep.shape[0]
        x = self.x[i]
        return self._full(x[:, :p]), x[:, p] if self.fit_intercept else np.zeros(x.shape[0])

    def deviance(self, i):
        """Twice the weighted negative log-likelihood, summed over the binary models."""
        coef, b = self.model(i)
        eta = self.X @ coef.T + b
        y01 = np.column_stack(self.labels) > 0
        nll = np.logaddexp(0.0, eta) - y01 * eta
        return 2.0 * float(nll.sum() if self.sw is None else self.sw @ nll.sum(axis=1))
