r"""The Newton refit on a fixed support for generalized linear losses (Poisson, logistic,
Cox), the refit step of :func:`jitopt.sparse.iht` for problems with a ``newton_system``, and
the exchange search over supports for the GLM losses (abess's splicing)."""

import math

import numpy as np

from .._core.result import NonFiniteOracle
from ._projection import check_always_select

__all__ = ["newton_refit", "glm_exchange_search"]

_ARMIJO = 1e-4
_GTOL = 1e-10  # projected-gradient norm, relative to that of the start
_DECREMENT = 1e-20  # stop once the Newton decrement is this small relative to R
_TRIAL_GTOL = 1e-4  # the same, and the Newton steps at most, for the refit of a
_TRIAL_MAXITER = 10  # support the search only tries


def newton_refit(problem, x, lower, upper, maxiter=100, support=None, gtol=_GTOL,
                 f_target=-np.inf):
    r"""``(w, R(w))``: :math:`\min\{R(w) : w\in\Gamma,\ \operatorname{supp} w\subseteq S\}`
    for the support :math:`S` of ``x`` (or ``support``) and the box :math:`\Gamma` =
    ``[lower, upper]`` of the first ``p = len(lower)`` coordinates, the others (the
    intercept) unbounded, by projected Newton (Bertsekas 1982): the coordinates at a bound
    whose gradient points out of the box stay fixed, the others take the Newton step on
    their block of the Hessian (``problem.newton_system``), projected onto the box and
    backtracked to the Armijo condition; it stops once the projected gradient norm is
    ``gtol`` times that of the start, :math:`R` is at most ``f_target`` or the Newton
    decrement :math:`\lambda^2 = -g^\top d` (:math:`\lambda^2/2` the decrease the
    quadratic model predicts) says it will not be (:math:`R - \lambda^2 > ` ``f_target``),
    the Newton decrement :math:`-g^\top d` is
    :math:`10^{-20}\max(1, |R|)` (:math:`R` within rounding of its minimum), or a step no
    longer decreases :math:`R`. The objective never increases.
    """
    d, p = x.shape[0], lower.shape[0]
    if support is None:
        support = np.flatnonzero(x[:p])
    idx = np.concatenate([support, np.arange(p, d)]).astype(np.int64)
    free_tail = np.full(d - p, np.inf)
    lo = np.concatenate([lower[support], -free_tail])
    hi = np.concatenate([upper[support], free_tail])
    v = np.clip(x[idx], lo, hi)

    def point(v):
        w = np.zeros(d)
        w[idx] = v
        return w

    # the cost on the support, as newton_system computes it (a line search compares them)
    support_cost = getattr(problem, "support_cost", None)

    def cost(w):
        return problem.cost(w) if support_cost is None else support_cost(w, support)

    f, g, H = problem.newton_system(point(v), support)
    boxed = bool(np.isfinite(lo).any() or np.isfinite(hi).any())
    g_start = None
    for _ in range(maxiter):
        fixed = ((v <= lo) & (g > 0)) | ((v >= hi) & (g < 0)) if boxed else None
        pg = g if fixed is None else np.where(fixed, 0.0, g)
        pg_norm = math.sqrt(float(pg @ pg))
        g_start = pg_norm if g_start is None else g_start
        if pg_norm <= gtol * max(g_start, 1e-300) or not np.isfinite(pg_norm) \
                or f <= f_target:
            break
        if fixed is None or not fixed.any():
            direction = -_solve(H, g)
        else:
            free = ~fixed
            direction = np.zeros_like(v)
            direction[free] = -_solve(H[np.ix_(free, free)], g[free])
        decrement = -float(g @ direction)  # the Newton decrement squared, 2 (R - min R)
        if not decrement > 0:  # (a singular block): the projected gradient instead
            direction = -pg
        elif decrement <= _DECREMENT * max(1.0, abs(f)) or \
                f_target > -np.inf and f - decrement > f_target:
            break  # R within rounding of its minimum on the support, or not to reach f_target
        t = 1.0
        while t > 1e-12:
            v_t = np.clip(v + t * direction, lo, hi) if boxed else v + t * direction
            try:
                f_t = cost(point(v_t))
            except NonFiniteOracle:  # e^eta overflowed: a step too long
                f_t = np.inf
            if f_t <= f + _ARMIJO * (g @ (v_t - v)):
                break
            t *= 0.5
        if not f_t < f:
            break
        v = v_t
        f, g, H = problem.newton_system(point(v), support)
    return point(v), f


def glm_exchange_search(problem, x, k, lower, upper, max_swap=5, maxiter=200,
                        always_select=None):
    r"""Local search over supports of size ``k`` for a GLM loss in the box
    ``[lower, upper]`` (abess's splicing, with the bounds): the ``swap`` step of
    :func:`jitopt.sparse.iht` for problems with ``gradient_and_curvature`` and
    ``newton_system`` (:class:`~jitopt.problems.Poisson`,
    :class:`~jitopt.problems.Logistic`).

    The start is refitted on its support (projected Newton), and filled up to ``k``
    coordinates by the best single additions. Then each round takes, at the current fit
    :math:`w` on the support :math:`S`, the gradient :math:`g` and the diagonal :math:`h`
    of the Hessian (its IRLS-weighted column norms): the local quadratic model of
    :math:`R` prices dropping :math:`j\in S` at :math:`-w_jg_j + h_jw_j^2/2` and adding
    :math:`i\notin S` at the gain :math:`-\min_{l_i\le t\le u_i}(g_it + h_it^2/2)`. For
    :math:`s = s_{\max}, \lfloor s_{\max}/2\rfloor, \dots, 1` (halved, abess's default)
    the :math:`s` cheapest of :math:`S` are exchanged with the :math:`s` best outside, the
    new support refitted by Newton's method from :math:`w` (the added coordinates at their
    minimizers :math:`t`; at most 10 steps, to a gradient :math:`10^{-4}` times its start,
    stopped once :math:`R` is below the value to beat or the Newton decrement shows it
    will not be), and the first exchange that lowers the true :math:`R` is kept (then
    refitted fully);
    the search ends when none does. So :math:`R` never increases, and the result is never
    worse than the refitted start. Coordinates of
    ``always_select`` are put in first and never dropped.

    Parameters
    ----------
    problem : jitopt.problems.Poisson or jitopt.problems.Logistic
    x : ndarray, shape (d,)
        A feasible start with at most ``k`` nonzeros among its first ``p`` coordinates
        (``p = len(lower)``; the others, e.g. the intercept, are free).
    k : int
        The support size.
    lower, upper : ndarray, shape (p,)
        The box (``lower <= 0 <= upper``; infinite entries allowed).
    max_swap : int
        :math:`s_{\max}`, the largest exchange tried.
    maxiter : int
        Rounds at most.
    always_select : sequence of int, optional
        Coordinates kept in the support (at most ``k``).

    Returns
    -------
    w : ndarray, shape (d,)
        The best point found: in the box, at most ``k`` nonzeros, :math:`R(w)` at most that
        of the refitted start.
    fun : float
        :math:`R(w)`.
    n_swaps : int
        Exchanges accepted.

    Examples
    --------
    From the null model, the search adds the best three features and finds the true
    support:

    >>> import numpy as np, jitopt
    >>> from jitopt.sparse import glm_exchange_search
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((300, 12))
    >>> y = rng.poisson(np.exp(0.3 + X[:, [1, 5, 8]] @ [0.6, -0.5, 0.4]))
    >>> problem = jitopt.problems.poisson(X, y, fit_intercept=True)
    >>> inf = np.full(12, np.inf)
    >>> w, fun, n_swaps = glm_exchange_search(problem, problem.null_point(), 3, -inf, inf)
    >>> np.flatnonzero(w[:12])
    array([1, 5, 8])
    """
    p = lower.shape[0]
    forced = check_always_select(always_select, p, k)
    S = np.union1d(np.flatnonzero(x[:p]), forced).astype(np.int64)
    w, f = newton_refit(problem, x, lower, upper, support=S)
    if S.shape[0] < k:  # fill up to k with the best single additions
        g, h = problem.gradient_and_curvature(w)
        gain, t = _add_gain(g[:p], h, lower, upper)
        gain[S] = -np.inf
        add = _best(gain, k - S.shape[0])
        w[add] = t[add]
        S = np.sort(np.concatenate([S, add]))
        w, f = newton_refit(problem, w, lower, upper, support=S)
    kept = np.isin(S, forced)
    s_max = min(max_swap, k - forced.shape[0], p - k)
    thresh = 1e-10 * max(1.0, abs(f))
    n_swaps = 0
    for _ in range(maxiter if s_max > 0 else 0):
        g, h = problem.gradient_and_curvature(w)
        cost = -w[S] * g[S] + 0.5 * h[S] * w[S] ** 2
        cost[kept] = np.inf
        gain, t = _add_gain(g[:p], h, lower, upper)
        gain[S] = -np.inf
        drop, add = np.argsort(cost, kind="stable"), _best(gain, s_max)
        for s in _sizes(min(s_max, add.shape[0])):
            start = w.copy()
            start[S[drop[:s]]] = 0.0
            start[add[:s]] = t[add[:s]]
            S_new = np.sort(np.concatenate([np.delete(S, drop[:s]), add[:s]]))
            w_new, f_new = newton_refit(problem, start, lower, upper, _TRIAL_MAXITER,
                                        S_new, _TRIAL_GTOL, f - thresh)
            if f_new < f - thresh:
                break
        else:
            break
        w, f = newton_refit(problem, w_new, lower, upper, support=S_new)
        S = S_new
        kept = np.isin(S, forced)
        n_swaps += 1
    return w, f, n_swaps


def _solve(H, g):
    """``H^-1 g`` (least squares when ``H`` is singular)."""
    try:
        return np.linalg.solve(H, g)
    except np.linalg.LinAlgError:
        return np.linalg.lstsq(H, g, rcond=None)[0]


def _add_gain(g, h, lower, upper):
    """``(gain, t)``: the decrease of the quadratic model from each coordinate added alone
    at its best value ``t`` in the box."""
    t = np.clip(-g / np.maximum(h, 1e-300), lower, upper)
    return -(g * t + 0.5 * h * t * t), t


def _sizes(s_max):
    """The exchange sizes tried, largest first: ``s_max`` halved down to 1."""
    sizes = []
    while s_max >= 1:
        sizes.append(s_max)
        s_max //= 2
    return sizes


def _best(gain, m):
    """The (at most ``m``) coordinates of largest finite ``gain``, best first (ties to the
    smaller index)."""
    order = _largest(gain, m)
    return order[np.isfinite(gain[order])]


def _largest(a, m):
    """The indices of the ``m`` largest entries of ``a``, largest first, ties to the smaller
    index (the first ``m`` of a stable ``argsort(-a)``), without sorting all of ``a``."""
    if m >= a.shape[0]:
        return np.argsort(-a, kind="stable")
    cut = np.partition(a, a.shape[0] - m)[a.shape[0] - m]
    if np.isnan(cut):
        return np.argsort(-a, kind="stable")[:m]
    top = np.flatnonzero(a >= cut)
    return top[np.argsort(-a[top], kind="stable")][:m]
