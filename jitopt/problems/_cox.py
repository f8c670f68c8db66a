r"""Cox proportional hazards regression, the negative log partial likelihood with Breslow's
handling of ties (used by ``jitopt.sparse``): the problem and its oracles, by cumulative
sums over the rows sorted by time."""

import numpy as np
from numba import njit

from ._sparse import RowLoss, _real, power_estimate

__all__ = ["cox", "Cox"]


def _risk_sums(v, t):
    r"""For rows sorted by ascending time ``t``: :math:`\sum_{j:\,t_j \ge t_i} v_j` for each
    row :math:`i` (the sum over its risk set, ties included), along the first axis."""
    total = np.cumsum(v[::-1], axis=0)[::-1]
    return total[np.searchsorted(t, t, side="left")]


def _hazard_sums(v, t):
    r"""For rows sorted by ascending time ``t``: :math:`\sum_{j:\,t_j \le t_i} v_j` for each
    row :math:`i` (ties included)."""
    return np.cumsum(v, axis=0)[np.searchsorted(t, t, side="right") - 1]


@njit(cache=True)
def cox_kernel(w, X, time, event, sw, rows, alpha, gradient):
    r"""``(f, g)``: the Breslow negative log partial likelihood of the rows ``rows`` (sorted
    by ascending ``time``), their weighted mean, plus :math:`(\alpha/2)\|w\|^2`, and its
    gradient (zeros when ``gradient`` is false or ``f`` is not finite); unit weights when
    ``sw`` is empty. :math:`\eta` comes from the nonzero columns of ``w``, the exponentials
    relative to the largest :math:`\eta` of a row of positive weight."""
    p = X.shape[1]
    m = rows.shape[0]
    support = np.flatnonzero(w)
    g = np.zeros(p)
    eta = np.zeros(m)
    s = np.ones(m)
    c = -np.inf
    total = 0.0
    for t in range(m):
        i = rows[t]
        for j in support:
            eta[t] += X[i, j] * w[j]
        if sw.shape[0] > 0:
            s[t] = sw[i]
        total += s[t]
        if s[t] > 0.0 and eta[t] > c:
            c = eta[t]
    if not np.isfinite(c):
        c = 0.0
    e = np.empty(m)
    for t in range(m):
        e[t] = s[t] * np.exp(eta[t] - c)
    risk = np.empty(m)  # the risk-set sums S, from the latest time down, ties together
    acc = 0.0
    t = m - 1
    while t >= 0:
        u = t
        while u > 0 and time[rows[u - 1]] == time[rows[t]]:
            u -= 1
        for v in range(u, t + 1):
            acc += e[v]
        for v in range(u, t + 1):
            risk[v] = acc
        t = u - 1
    f = 0.0
    for t in range(m):
        if event[rows[t]] > 0.0 and s[t] > 0.0:
            f -= s[t] * (eta[t] - c - np.log(risk[t]))
    f /= total
    for j in range(p):
        f += 0.5 * alpha * w[j] * w[j]
    if not gradient or not np.isfinite(f):
        return f, g
    hazard = 0.0  # Breslow's cumulative hazard, from the earliest time up, ties together
    t = 0
    while t < m:
        u = t
        while u + 1 < m and time[rows[u + 1]] == time[rows[t]]:
            u += 1
        for v in range(t, u + 1):
            if event[rows[v]] > 0.0 and s[v] > 0.0:
                hazard += s[v] / risk[v]
        for v in range(t, u + 1):
            r = s[v] * event[rows[v]] - e[v] * hazard  # the martingale residual
            if r != 0.0:
                i = rows[v]
                for j in range(p):
                    g[j] -= r * X[i, j]
        t = u + 1
    for j in range(p):
        g[j] = g[j] / total + alpha * w[j]
    return f, g


class Cox(RowLoss):
    r"""Cox proportional hazards regression: the negative log partial likelihood with
    Breslow's ties,

    .. math::
        R(w) = -\frac1{\sum_i s_i}\sum_{i} s_i\delta_i\Big(\eta_i - \log\sum_{j:\,t_j \ge t_i}
        s_j e^{\eta_j}\Big) + \frac\alpha2\|w\|^2,\qquad \eta_i = x_i^\top w,

    with times :math:`t_i`, event indicators :math:`\delta_i \in \{0, 1\}` (0: censored at
    :math:`t_i`) and sample weights :math:`s_i` (integer weights give the problem of the
    repeated rows, which Breslow's rule treats as tied). There is no intercept (it cancels).
    Only the order of the times matters.

    With the rows sorted by time, the risk-set sums :math:`S_i = \sum_{t_j\ge t_i}
    s_je^{\eta_j}` are reverse cumulative sums and the gradient is :math:`-X^\top r/\sum s +
    \alpha w` with the martingale residuals :math:`r_j = s_j\delta_j - s_je^{\eta_j}
    \Lambda_j`, :math:`\Lambda_j = \sum_{t_i \le t_j} s_i\delta_i/S_i` (Breslow's cumulative
    hazard): :math:`O(n\log n + np)` (:math:`\eta` from the nonzero columns of :math:`w`).
    The exponentials are taken relative to the largest :math:`\eta_i`, so they do not
    overflow. A minibatch ``idx`` gives the partial likelihood of its rows (their own risk
    sets). The gradient is not Lipschitz on :math:`\mathbb R^p` (no ``lipschitz()``):
    :func:`jitopt.sparse.iht` backtracks from ``lipschitz=problem.local_lipschitz(x0)``.

    Parameters
    ----------
    X : array_like, shape (n, p)
        The features.
    time : array_like, shape (n,)
        The times of the events or of the censoring (finite).
    event : array_like, shape (n,)
        1 (or True) where the event was observed at ``time``, 0 where the row is censored.
    alpha : float
        Weight :math:`\alpha \ge 0` of the ridge term.
    sample_weight : array_like, shape (n,), optional
        Nonnegative finite weights :math:`s_i`, not all zero (default: all 1).

    Attributes
    ----------
    X, time, event : ndarray
        The data (``event`` as floats 0 and 1).

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.problems import Cox
    >>> problem = Cox(np.array([[1.0], [0.0]]), np.array([1.0, 2.0]), np.array([1, 0]))
    >>> round(problem.cost(np.zeros(1)), 6), problem.egrad(np.zeros(1))
    (0.346574, array([-0.25]))
    """

    def __init__(self, X, time, event, alpha=0.0, sample_weight=None):
        super().__init__(X, time, alpha, False, sample_weight)
        event = _real("event", event)
        if event.shape != self.y.shape or not np.all((event == 0) | (event == 1)):
            raise ValueError(f"event must hold {self.y.shape[0]} indicators 0 or 1 (or "
                             f"booleans)")
        self.time, self.event = self.y, np.ascontiguousarray(event, dtype=float)
        self._order = np.argsort(self.time, kind="stable")

    def _sorted(self, w, idx):
        r"""``(rows, t, eta - c, e, c_del, total)`` for the rows ``idx`` sorted by time:
        their times, :math:`\eta` shifted by its largest value :math:`c` over the rows of
        positive weight, :math:`s e^{\eta - c}`, :math:`s\delta`, and :math:`\sum s`."""
        w = np.asarray(w, dtype=float)
        rows = self._order if idx.shape[0] == self.n_samples else \
            idx[np.argsort(self.time[idx], kind="stable")]
        support = np.flatnonzero(w)
        eta = self.X[np.ix_(rows, support)] @ w[support] if rows.shape[0] < self.n_samples \
            else (self.X[:, support] @ w[support])[rows]
        s = self.sample_weight[rows] if self.sample_weight.shape[0] else np.ones(rows.shape[0])
        positive = s > 0
        c = 0.0 if not positive.any() else eta[positive].max() if np.isfinite(eta).all() \
            else np.inf
        with np.errstate(invalid="ignore", over="ignore"):
            shifted = eta - c
            e = s * np.exp(shifted)
        return rows, self.time[rows], shifted, e, s * self.event[rows], s.sum()

    def _moments(self, w, cols):
        r"""``(eta - c, e, c_del, total, A, S, events, M, Lambda)`` of :meth:`_sorted` on all
        rows, with the columns ``cols`` of the sorted rows ``A``, the risk-set sums ``S``,
        the rows with an event, the risk-set means ``M`` of the columns (0 off the events)
        and Breslow's cumulative hazard :math:`\Lambda`."""
        rows, t, shifted, e, c_del, total = self._sorted(w, self.all_samples)
        A = self.X[np.ix_(rows, cols)]
        S = _risk_sums(e, t)
        events = c_del > 0
        S_ev = np.where(events, S, 1.0)
        M = np.where(events[:, None], _risk_sums(e[:, None] * A, t) / S_ev[:, None], 0.0)
        hazard = _hazard_sums(np.where(events, c_del / S_ev, 0.0), t)
        return shifted, e, c_del, total, A, S, events, M, hazard

    def _fg(self, w, idx, gradient=True):
        rows = self._order if idx.shape[0] == self.n_samples else \
            idx[np.argsort(self.time[idx], kind="stable")]
        return cox_kernel(np.require(w, float, "CW"), self.X, self.time, self.event,
                          self.sample_weight, rows, self.alpha, gradient)

    def newton_system(self, w, support):
        r"""``(R(w), g, H)``: the gradient and Hessian of :math:`R` in the coordinates
        ``support``, for ``w`` zero off them, :math:`H = (A^\top\operatorname{diag}(e\odot
        \Lambda)A - M^\top\operatorname{diag}(s\odot\delta)M)/\sum s + \alpha I` with
        :math:`A` the columns of ``support`` and :math:`M` the rows of risk-set means
        :math:`\sum_{t_j\ge t_i} s_je^{\eta_j}a_j/S_i` (:math:`O(n m^2)`)."""
        self.counts.add(nfev=1, njev=1, nifo=self.n_samples)
        support = np.asarray(support, dtype=np.int64)
        shifted, e, c_del, total, A, S, events, M, hazard = self._moments(w, support)
        with np.errstate(divide="ignore"):
            f = -float(c_del[events] @ (shifted[events] - np.log(S[events]))) / total
        g = -(A.T @ c_del - M.T @ c_del) / total
        H = (A.T @ ((e * hazard)[:, None] * A) - M.T @ (c_del[:, None] * M)) / total
        v = w[support]
        f += 0.5 * self.alpha * float(v @ v)
        g += self.alpha * v
        H[np.diag_indices_from(H)] += self.alpha
        return f, g, 0.5 * (H + H.T)

    def hessian_diagonal(self, w):
        r"""The diagonal of the Hessian of :math:`R` at ``w`` (the risk-set variances of the
        features weighted by the events), :math:`O(np)` time and memory."""
        _, e, c_del, total, A, _, _, M, hazard = self._moments(w, np.arange(self.X.shape[1]))
        return ((e * hazard) @ (A * A) - c_del @ (M * M)) / total + self.alpha

    def null_point(self):
        """The null model, :math:`w = 0`."""
        return np.zeros(self.X.shape[1])

    def local_lipschitz(self, w):
        r"""An upper estimate of :math:`\lambda_{\max}` of the Hessian at ``w`` (power
        iterations on exact Hessian-vector products, each :math:`O(np)`): the first step of
        the backtracking is its inverse."""
        rows, t, shifted, e, c_del, total = self._sorted(w, self.all_samples)
        S = _risk_sums(e, t)
        events = c_del > 0
        a = np.where(events, c_del / np.where(events, S, 1.0), 0.0)  # s delta / S
        hazard = _hazard_sums(a, t)
        out = np.zeros(self.n_samples)  # (a vector on the rows in their given order)

        def hessian_times(v):
            u = (self.X @ v)[rows]
            z = _risk_sums(e * u, t)  # S_i times the risk-set mean of u
            out[rows] = e * (hazard * u - _hazard_sums(a * z / np.where(events, S, 1.0), t))
            return self.X.T @ out / total

        return power_estimate(hessian_times, self.X.shape[1]) + self.alpha


def cox(X, time, event, alpha=0.0, sample_weight=None):
    r"""The problem of :class:`Cox` (proportional hazards, Breslow's ties).

    Parameters
    ----------
    X : array_like, shape (n, p)
        The features.
    time : array_like, shape (n,)
        The times of the events or of the censoring.
    event : array_like, shape (n,)
        1 (or True) for an observed event, 0 for a censored row.
    alpha : float
        Weight :math:`\alpha \ge 0` of the ridge term :math:`\frac\alpha2\|w\|^2`.
    sample_weight : array_like, shape (n,), optional
        Nonnegative weights of the rows.

    Returns
    -------
    Cox
        The problem, a :class:`~jitopt.FiniteSumProblem` of ``n`` terms on
        :math:`\mathbb R^p`.

    Examples
    --------
    >>> import numpy as np, jitopt
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((500, 20))
    >>> time = rng.exponential(np.exp(-(X[:, 3] - 0.8 * X[:, 11])))  # hazard e^(x3 - 0.8 x11)
    >>> event = rng.random(500) < 0.8
    >>> problem = jitopt.problems.cox(X, time, event)
    >>> x0 = problem.null_point()
    >>> res = jitopt.sparse.iht(problem, x0, k=2, refit=True,
    ...                         lipschitz=problem.local_lipschitz(x0))
    >>> res.support, np.round(res.x[[3, 11]], 1)
    (array([ 3, 11]), array([ 0.9, -0.8]))
    """
    return Cox(X, time, event, alpha, sample_weight)
