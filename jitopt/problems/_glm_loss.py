"""The losses of generalized linear models whose rows enter through a linear predictor
(logistic; Poisson in ``_poisson``): their Newton systems on a support and the curvature the
exchange search of ``jitopt.sparse`` ranks its swaps by."""

import numpy as np
from numba import njit

from ._sparse import RowLoss, _top_eigenvalue
from ._sparse_kernels import weighted_logistic_kernel

__all__ = ["logistic", "GLMLoss", "Logistic"]


@njit(cache=True)
def weighted_column_sums(X, a, b):
    r"""``(X^T a, (X*X)^T b)`` in one pass over the rows of ``X``."""
    n, p = X.shape
    xa = np.zeros(p)
    xxb = np.zeros(p)
    for i in range(n):
        ai, bi = a[i], b[i]
        for j in range(p):
            x = X[i, j]
            xa[j] += ai * x
            xxb[j] += bi * x * x
    return xa, xxb


class GLMLoss(RowLoss):
    r"""A row-wise loss (``RowLoss``) whose row terms :math:`\ell(y_i, \eta_i)` are given in
    NumPy by the subclass, which gives the Newton system on a support, the cost from the
    support's columns and the diagonal of the Hessian.

    A subclass defines ``_loss(eta)``, each row's loss :math:`\ell_i` at the linear
    predictor ``eta`` (``+inf`` where it overflows, without a warning), and
    ``_derivatives(eta)``, the pair :math:`(\partial\ell_i/\partial\eta_i,
    \partial^2\ell_i/\partial\eta_i^2)`."""

    def _block(self, support):
        """``(A, coords)``: the columns ``support`` of ``X`` (and ones for the intercept),
        and the coordinates of the point they multiply; the last block is kept (a Newton
        refit asks for the same one at every step)."""
        key = support.tobytes()
        last = getattr(self, "_last_block", (None,))  # (read once: threads may share self)
        if last[0] != key:
            m = support.shape[0]
            A = np.empty((self.X.shape[0], m + self.fit_intercept))
            A[:, :m] = self.X[:, support]
            coords = support
            if self.fit_intercept:
                A[:, m] = 1.0
                coords = np.append(support, self.X.shape[1])
            last = self._last_block = key, A, coords
        return last[1:]

    def _weights(self):
        """``(s, sum s)``: the row weights (ones without weights) and their sum."""
        if getattr(self, "_row_weights", None) is None:
            s = self.sample_weight if self.sample_weight.shape[0] else np.ones(self.n_samples)
            self._row_weights = s, float(s.sum())
        return self._row_weights

    def newton_system(self, w, support):
        r"""``(R(w), g, H)``: :math:`R` and its gradient and Hessian in the coordinates
        ``support`` (then the intercept), for ``w`` zero off them,
        :math:`g = A^\top(s\odot\ell')/\sum s + \alpha w`,
        :math:`H = A^\top\operatorname{diag}(s\odot\ell'')A/\sum s + \alpha I` (no ridge on
        the intercept), :math:`A` the columns of ``support`` (and ones): :math:`O(n m^2)`
        for ``m`` coordinates."""
        self.counts.add(njev=1)
        f, A, v, eta = self._support_cost(w, support)
        s, total = self._weights()
        d1, d2 = self._derivatives(eta)
        m = v.shape[0] - self.fit_intercept
        g = A.T @ (s * d1) / total
        H = (A.T * (s * d2 / total)) @ A
        if self.alpha:
            g[:m] += self.alpha * v[:m]
            H[np.arange(m), np.arange(m)] += self.alpha
        return f, g, H

    def support_cost(self, w, support):
        r""":math:`R(w)` for ``w`` zero off the coordinates ``support`` (and the intercept),
        from their columns (kept from the last call): :math:`O(n m)` for ``m`` of them,
        ``+inf`` where a term overflows."""
        return self._support_cost(w, support)[0]

    def _support_cost(self, w, support):
        """``(R(w), A, v, eta)``: :meth:`support_cost`, the columns, the coordinates of
        ``w`` they multiply and the linear predictor."""
        A, coords = self._block(np.asarray(support, dtype=np.int64))
        v = np.asarray(w, dtype=float)[coords]
        key = v.tobytes()
        last = getattr(self, "_last_cost", None)
        if last is not None and last[0] == key and last[2] is A:
            return last[1], A, v, last[3]  # (a Newton step's point, its cost just taken)
        self.counts.add(nfev=1, nifo=self.n_samples)
        s, total = self._weights()
        eta = A @ v
        f = float(s @ self._loss(eta)) / total
        u = v[:v.shape[0] - self.fit_intercept]
        f += 0.5 * self.alpha * float(u @ u)
        self._last_cost = key, f, A, eta
        return f, A, v, eta

    def gradient_and_curvature(self, w):
        r"""``(g, h)``: the gradient :math:`\nabla R(w)` and the diagonal of the Hessian on
        the ``p`` features, :math:`h_j = \sum_i s_i\ell''_i x_{ij}^2/\sum s + \alpha` (one
        compiled pass over ``X``); what the exchange search of the GLMs ranks its swaps by."""
        w = np.asarray(w, dtype=float)
        key = w.tobytes()
        last = getattr(self, "_last_curvature", (None,))
        if last[0] == key:  # (the search's last point is the next one's start)
            return last[1]
        self.counts.add(njev=1, nifo=self.n_samples)
        p = self.X.shape[1]
        A, coords = self._block(np.flatnonzero(w[:p]))
        s, total = self._weights()
        d1, d2 = self._derivatives(A @ w[coords])
        g = np.empty(w.shape[0])
        gx, h = weighted_column_sums(self.X, s * d1 / total, s * d2 / total)
        g[:p] = gx + self.alpha * w[:p]
        if self.fit_intercept:
            g[p] = s @ d1 / total
        out = g, h + self.alpha
        self._last_curvature = key, out
        return out


class Logistic(GLMLoss):
    r"""Logistic regression :math:`R(w) = \frac1n\sum_i \log(1 + e^{-y_i(x_i^\top w + b)}) +
    \frac\alpha2\|w\|^2` with labels :math:`y_i \in \{-1, +1\}`; with sample weights
    :math:`s_i \ge 0` the mean is :math:`\sum_i s_i\,\ell_i/\sum_i s_i` (minibatches too), so
    integer weights give the problem of the repeated rows.

    The point is :math:`w \in \mathbb R^p`, or :math:`(w, b) \in \mathbb R^{p+1}` (intercept
    last, not penalized) when ``fit_intercept=True``.

    Parameters
    ----------
    X : array_like, shape (n, p)
        The features.
    y : array_like, shape (n,)
        The labels, each -1 or +1.
    alpha : float
        Weight :math:`\alpha \ge 0` of the ridge term.
    fit_intercept : bool
        Add the intercept :math:`b`.
    sample_weight : array_like, shape (n,), optional
        Nonnegative finite weights :math:`s_i`, not all zero (default: all 1).

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.problems import Logistic
    >>> problem = Logistic(np.array([[1.0], [-1.0]]), np.array([1.0, -1.0]), alpha=0.1)
    >>> round(problem.cost(np.zeros(1)), 6), problem.egrad(np.zeros(1))
    (0.693147, array([-0.5]))
    """

    _lipschitz = None

    @staticmethod
    def _check_y(y):
        if not np.all(np.abs(y) == 1):
            raise ValueError("y must hold labels -1 and +1")

    def _fg(self, w, idx, gradient=True):
        # the kernel returns both; its gradient costs about as much as the loss
        return weighted_logistic_kernel(np.require(w, float, "CW"), self.X, self.y,
                                        self.sample_weight, idx, self.alpha,
                                        self.fit_intercept)

    def _loss(self, eta):
        return np.logaddexp(0.0, -self.y * eta)

    def _derivatives(self, eta):
        # l = log(1 + e^{-y eta}): l' = sigma(eta) - [y = 1], l'' = sigma(eta) sigma(-eta)
        q = 0.5 * (1.0 + np.tanh(0.5 * eta))
        return q - (self.y > 0), q * (1.0 - q)

    def lipschitz(self):
        r""":math:`\lambda_{\max}(\tilde X^\top S\tilde X)/(4\sum_i s_i) + \alpha`, with
        :math:`\tilde X` the data (and a column of ones for the intercept), :math:`S` the
        diagonal of the sample weights."""
        if self._lipschitz is None:
            A, total = self._design()
            if self.sample_weight.shape[0]:
                A = A * np.sqrt(self.sample_weight)[:, None]
            self._lipschitz = _top_eigenvalue(A) / (4 * total) + self.alpha
        return self._lipschitz


def logistic(X, y, alpha=0.0, fit_intercept=False, sample_weight=None):
    r"""The problem of :class:`Logistic` (labels in :math:`\{-1, +1\}`).

    Parameters
    ----------
    X : array_like, shape (n, p)
        The features.
    y : array_like, shape (n,)
        The labels, each -1 or +1.
    alpha : float
        Weight :math:`\alpha \ge 0` of the ridge term :math:`\frac\alpha2\|w\|^2`.
    fit_intercept : bool
        Add an intercept :math:`b` (the last coordinate of the point, not penalized).
    sample_weight : array_like, shape (n,), optional
        Nonnegative weights of the rows (the loss is their weighted mean).

    Returns
    -------
    Logistic
        The problem, a :class:`~jitopt.FiniteSumProblem` of ``n`` terms.

    Examples
    --------
    >>> import numpy as np, jitopt
    >>> X, y, beta = jitopt.problems.sparse_regression_data(100, 20, 3, rng=0)
    >>> problem = jitopt.problems.logistic(X, np.sign(y), fit_intercept=True)
    >>> problem.manifold.shape, bool(np.isclose(problem.cost(np.zeros(21)), np.log(2)))
    ((21,), True)
    """
    return Logistic(X, y, alpha, fit_intercept, sample_weight)
