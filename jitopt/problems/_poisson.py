"""Poisson regression with the log link (used by ``jitopt.sparse``): the problem and its
compiled oracles."""

import numpy as np
from numba import njit

from ._glm_loss import GLMLoss
from ._sparse import power_estimate

__all__ = ["poisson", "Poisson"]


@njit(cache=True, inline="always")
def _linear_predictor(w, X, i, support, b):
    s = b
    for j in support:
        s += X[i, j] * w[j]
    return s


@njit(cache=True)
def poisson_kernel(w, X, y, sw, idx, alpha, intercept, gradient):
    r"""``(f, g)``: the weighted mean over ``idx`` of :math:`e^{\eta_i} - y_i\eta_i` plus
    :math:`(\alpha/2)\|w_{:p}\|^2`, and its gradient (zeros when ``gradient`` is false or
    ``f`` is not finite). :math:`\eta` comes from the nonzero columns only; an overflowing
    :math:`e^\eta` gives ``f = +inf`` (no warning). Rows of zero weight are skipped; unit
    weights when ``sw`` is empty."""
    p = X.shape[1]
    support = np.flatnonzero(w[:p])
    b = w[p] if intercept else 0.0
    g = np.zeros(w.shape[0])
    r = np.zeros(idx.shape[0])  # s_i (mu_i - y_i)
    f = 0.0
    total = 0.0
    for t in range(idx.shape[0]):
        i = idx[t]
        si = sw[i] if sw.shape[0] > 0 else 1.0
        total += si
        if si == 0.0:
            continue
        eta = _linear_predictor(w, X, i, support, b)
        mu = np.exp(eta)
        f += si * (mu - y[i] * eta)
        r[t] = si * (mu - y[i])
    f /= total
    for j in range(p):
        f += 0.5 * alpha * w[j] * w[j]
    if not gradient or not np.isfinite(f):
        return f, g
    for t in range(idx.shape[0]):  # X^T r, reading X in memory order
        i, ri = idx[t], r[t]
        if ri != 0.0:
            for j in range(p):
                g[j] += ri * X[i, j]
            if intercept:
                g[p] += ri
    for j in range(w.shape[0]):
        g[j] /= total
    for j in range(p):
        g[j] += alpha * w[j]
    return f, g


class Poisson(GLMLoss):
    r"""Poisson regression with the log link, :math:`R(w) = \frac1{\sum_i s_i}\sum_i
    s_i\,(e^{\eta_i} - y_i\eta_i) + \frac\alpha2\|w\|^2` with :math:`\eta_i = x_i^\top w + b`
    (the negative log-likelihood without its :math:`\log y_i!` term), the mean of
    :math:`y_i` being :math:`e^{\eta_i}`; integer sample weights :math:`s_i` give the problem
    of the repeated rows.

    The point is :math:`w \in \mathbb R^p`, or :math:`(w, b) \in \mathbb R^{p+1}` (intercept
    last, not penalized) when ``fit_intercept=True``. The gradient is
    :math:`X^\top(s\odot(\mu - y))/\sum s + \alpha w` with :math:`\mu = e^\eta`; for a sparse
    :math:`w`, :math:`\eta` is computed from its nonzero columns. The gradient is not
    Lipschitz on :math:`\mathbb R^p` (no ``lipschitz()``): :func:`jitopt.sparse.iht`
    backtracks from ``lipschitz=problem.local_lipschitz(x0)``, and a trial step whose
    :math:`e^\eta` overflows (:math:`R = +\infty`) is rejected there, not a fault.

    Parameters
    ----------
    X : array_like, shape (n, p)
        The features.
    y : array_like, shape (n,)
        The counts (or rates): nonnegative, not necessarily integers.
    alpha : float
        Weight :math:`\alpha \ge 0` of the ridge term.
    fit_intercept : bool
        Add the intercept :math:`b`.
    sample_weight : array_like, shape (n,), optional
        Nonnegative finite weights :math:`s_i`, not all zero (default: all 1).

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.problems import Poisson
    >>> problem = Poisson(np.array([[1.0], [-1.0]]), np.array([2.0, 0.0]))
    >>> problem.cost(np.zeros(1)), problem.egrad(np.zeros(1))
    (1.0, array([-1.]))
    """

    @staticmethod
    def _check_y(y):
        if (y < 0).any():
            raise ValueError("y must hold nonnegative counts or rates")

    def _fg(self, w, idx, gradient=True):
        return poisson_kernel(np.require(w, float, "CW"), self.X, self.y, self.sample_weight,
                              idx, self.alpha, self.fit_intercept, gradient)

    def _loss(self, eta):
        with np.errstate(over="ignore"):
            return np.exp(eta) - self.y * eta

    def _derivatives(self, eta):
        with np.errstate(over="ignore", invalid="ignore"):
            mu = np.exp(eta)
        return mu - self.y, mu

    def null_point(self):
        r"""The fit with :math:`w = 0`: :math:`b = \log \bar y` (weighted mean) with an
        intercept, else 0."""
        x = np.zeros(self.manifold.shape[0])
        if self.fit_intercept:
            sw = self.sample_weight if self.sample_weight.shape[0] else None
            x[-1] = np.log(max(np.average(self.y, weights=sw), 1e-300))
        return x

    def local_lipschitz(self, w):
        r"""An upper estimate of :math:`\lambda_{\max}` of the Hessian
        :math:`\tilde X^\top\operatorname{diag}(s\odot\mu)\tilde X/\sum s + \alpha I` at
        ``w`` (power iterations; :math:`\tilde X` with a column of ones for the intercept):
        the first step of the backtracking is its inverse."""
        w = np.asarray(w, dtype=float)
        p = self.X.shape[1]
        eta = self.X @ w[:p] + (w[p] if self.fit_intercept else 0.0)
        with np.errstate(over="ignore"):
            h = np.exp(eta)
        if self.sample_weight.shape[0]:
            h = h * self.sample_weight
        A, total = self._design()
        lam = power_estimate(lambda v: A.T @ (h * (A @ v)), A.shape[1])
        return lam / total + self.alpha


def poisson(X, y, alpha=0.0, fit_intercept=False, sample_weight=None):
    r"""The problem of :class:`Poisson` (Poisson regression, log link).

    Parameters
    ----------
    X : array_like, shape (n, p)
        The features.
    y : array_like, shape (n,)
        The nonnegative counts (or rates).
    alpha : float
        Weight :math:`\alpha \ge 0` of the ridge term :math:`\frac\alpha2\|w\|^2`.
    fit_intercept : bool
        Add an intercept :math:`b` (the last coordinate of the point, not penalized).
    sample_weight : array_like, shape (n,), optional
        Nonnegative weights of the rows (the loss is their weighted mean).

    Returns
    -------
    Poisson
        The problem, a :class:`~jitopt.FiniteSumProblem` of ``n`` terms.

    Examples
    --------
    >>> import numpy as np, jitopt
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((300, 20))
    >>> y = rng.poisson(np.exp(0.5 + X[:, 2] - 0.8 * X[:, 7])).astype(float)
    >>> problem = jitopt.problems.poisson(X, y, fit_intercept=True)
    >>> x0 = problem.null_point()
    >>> res = jitopt.sparse.iht(problem, x0, k=2, n_unconstrained=1, refit=True,
    ...                         lipschitz=problem.local_lipschitz(x0))
    >>> res.support, np.round(res.x[[2, 7, 20]], 1)
    (array([2, 7]), array([ 1. , -0.8,  0.5]))
    """
    return Poisson(X, y, alpha, fit_intercept, sample_weight)
