r"""Refits on a fixed support and the exchange search over supports (least squares in a
box), the post-processing steps of :func:`jitopt.sparse.iht`."""

import math

import numpy as np

from .._interpreted import kernel_for
from ..sets import project
from ._glm import _largest, newton_refit
from ._kernels import box_qp, free_qp
from ._splice_kernels import INTERPRETED, splice_round
from ._projection import check_always_select

__all__ = ["exchange_search", "refit_on_support", "search_from"]

#: the exchange search and the box refit run their kernels uncompiled
#: (``jitopt._interpreted.kernel_for``) for calls of at most this work (about 12 ms a
#: round of the search uncompiled): compiling them takes 3-5 s of CPU, more than a whole
#: cross-validated fit on a small data set takes uncompiled
_SMALL = 200_000
#: the rows of X^T X/n for this many next-best additions are computed with those of a
#: support filled up (in the same product: one pass over X instead of one per row)
_AHEAD = 16


def _kernel(kernel, work):
    """``kernel``, or its uncompiled code for a small ``work`` (``k (10 p + k n)`` for an
    exchange search, ``k^3`` for a box refit)."""
    return kernel_for(kernel, INTERPRETED, work <= _SMALL)


def exchange_search(problem, x, k, lower, upper, max_swap=5, maxiter=200, always_select=None):
    r"""Local search over supports of size ``k`` for least squares in the box
    ``[lower, upper]`` (the ``swap`` step of :func:`jitopt.sparse.iht`).

    With :math:`S` the support, :math:`w` the exact box-constrained fit on it, :math:`g` the
    gradient and :math:`G = X^\top X/n`, each :math:`j \in S` costs
    :math:`R(w - w_j e_j) - R(w) = -w_j g_j + G_{jj} w_j^2/2` to drop, and each
    :math:`i \notin S` gains :math:`-\min_{l_i\le t\le u_i}(g'_i t + G_{ii} t^2/2)` to add,
    with :math:`g' = g - \sum_{j\in D} w_j G_j` the gradient once the dropped set :math:`D`
    is removed. For :math:`s = s_{\max}, \dots, 1` the :math:`s` cheapest coordinates of
    :math:`S` are exchanged with the :math:`s` best outside; if none of these lowers
    :math:`R`, each single :math:`j\in S` is tried with its best replacement. Every
    candidate support is refitted exactly (:func:`box_qp` on its Gram block) and the first
    one that lowers :math:`R` is kept; the search ends when none does. The coordinates of
    ``always_select`` are put in the support first and never dropped.

    Parameters
    ----------
    problem : jitopt.problems.LeastSquares
        The least-squares problem (its cached Gram rows are used).
    x : ndarray, shape (p,)
        A feasible start with at most ``k`` nonzeros (filled up to ``k`` coordinates by
        the best single additions first).
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
    w : ndarray, shape (p,)
        The best point found: feasible, at most ``k`` nonzeros, :math:`R(w) \le R(x)`.
    fun : float
        :math:`R(w)`.
    n_swaps : int
        Exchanges accepted.

    Examples
    --------
    From 0, with no bounds, the search fills the support with the best single additions and
    finds the true support of a well-conditioned model:

    >>> import numpy as np, jitopt
    >>> from jitopt.sparse import exchange_search
    >>> X, y, beta = jitopt.problems.sparse_regression_data(100, 20, 3, rng=0)
    >>> problem = jitopt.problems.least_squares(X, y)
    >>> inf = np.full(20, np.inf)
    >>> w, fun, n_swaps = exchange_search(problem, np.zeros(20), 3, -inf, inf)
    >>> np.flatnonzero(w), np.flatnonzero(beta)
    (array([ 1, 10, 17]), array([ 1, 10, 17]))
    """
    w, n_swaps, _ = search_from(problem, x, k, lower, upper, max_swap, maxiter,
                                always_select)
    return w, problem.cost(w), n_swaps


def search_from(problem, x, k, lo, hi, max_swap=5, maxiter=200, always_select=None,
                gradient=None):
    """:func:`exchange_search` without the final cost, for a path over ``k``: ``(w,
    n_swaps, g)`` with ``g`` the gradient at ``w``, which a next call from ``w`` takes as
    ``gradient`` (instead of computing it from the Gram rows of its support)."""
    p = x.shape[0]
    forced = check_always_select(always_select, p, k)
    kept = np.zeros(p if forced.shape[0] else 0, dtype=np.int64)
    kept[forced] = 1
    diag = problem.gram_diagonal()
    rhs = problem.gram_rhs()
    X, n = problem.X, problem.n_samples
    # (None bounds: the round's specialisation without bounds, and the plain gains)
    bounds = (None, None) if lo.max() == -np.inf and hi.min() == np.inf else (lo, hi)
    S = np.union1d(np.flatnonzero(x), forced) if forced.shape[0] else np.flatnonzero(x)
    ahead = None
    if S.shape[0] < k:  # fill the support up to k with the best coordinates to add
        if gradient is None:
            gradient = x[S] @ problem.gram_rows(S) - rhs
        m = k - S.shape[0]
        best = _best_additions(gradient, S, diag, *bounds, m + _AHEAD)
        S, ahead = np.sort(np.concatenate([S, best[:m]])), best[m:]
    G, rows = problem.gram_rows_in_place(S, prefetch=ahead)
    v = x[S].copy()
    Q = _sym(G[rows[:, None], S])
    # R(x) from the Gram block, for the threshold of a decrease (relative to R, not to q)
    r0 = 0.5 * (v @ (Q @ v)) - rhs[S] @ v + problem.gram_offset()
    work = k * (10 * p + k * n)
    if bounds[0] is None:
        q = _kernel(free_qp, work)(Q, rhs[S], v)
    else:
        q = _kernel(box_qp, work)(Q, rhs[S], lo[S], hi[S], v, 10 * k + 10)
    exchange_round = _kernel(splice_round, work)
    thresh = 1e-10 * max(1.0, abs(r0))
    n_swaps = 0
    s_max = min(max_swap, k, p - k)
    for _ in range(maxiter):
        accepted, S, v, q, g = exchange_round(G, rows, S, v, q, X, rhs, diag, *bounds, kept,
                                              s_max, thresh)
        if not accepted:
            break
        ahead = None
        if not problem.gram_rows_cached(S):  # (computed with those of the best additions)
            ahead = _best_additions(g, S, diag, *bounds, _AHEAD)
        G, rows = problem.gram_rows_in_place(S, prefetch=ahead)
        n_swaps += 1
    else:
        g = None  # (the gradient of the last round's start, not of w)
    w = np.zeros(p)
    w[S] = v
    return w, n_swaps, g


def _sym(Q):
    return np.ascontiguousarray(0.5 * (Q + Q.T))


def _best_additions(g, S, diag, lo, hi, m):
    """The ``m`` coordinates outside ``S`` of largest :func:`_add_gain`, best first."""
    gain = _add_gain(g, diag, lo, hi)
    gain[S] = -np.inf
    return _largest(gain, m)


def _add_gain(g, diag, lo, hi):
    """Decrease of R from the best feasible value of each coordinate added alone: without
    bounds (``lo = hi = None``) :math:`g_i^2/(2G_{ii})`, as the round computes it."""
    d = np.maximum(diag, 1e-300)
    if lo is None:
        return g * g * (0.5 / d)
    t = np.clip(-g / d, lo, hi)
    return -(g * t + 0.5 * diag * t * t)


def refit_on_support(problem, op, x, variant, eta, maxiter):
    r"""``(w, R(w))``, the refit on the support :math:`S` of ``x``:
    :math:`\min\{R(w) : w \in \Gamma,\ \operatorname{supp} w \subseteq S\}`.

    ``op`` is the :class:`~jitopt.sparse._projection.TwoStep` of the run (its set and its
    free coordinates), ``eta`` its step (the first step of the refit is ``eta``). Least
    squares works on the :math:`|S|\times|S|` Gram block (no oracle call but one cost
    evaluation of the result): without constraint by NumPy's least squares, in a box
    exactly by the active-set solver :func:`~jitopt.sparse.box_qp`, for other sets by
    FISTA. Problems with a ``newton_system`` (:class:`~jitopt.problems.Poisson`) in a box
    run the projected Newton method of :func:`~jitopt.sparse._glm.newton_refit`. Other
    problems run FISTA with their gradient (central differences of the cost on :math:`S`
    for the zeroth-order variant).
    """
    d, p = x.shape[0], op.p
    support = np.flatnonzero(x[:p])
    if hasattr(problem, "newton_system") and op.args[2] is None and variant != "zeroth_order":
        return newton_refit(problem, x, op.lower, op.upper, maxiter)
    if hasattr(problem, "gram_block") and d == p:
        Q, c = problem.gram_block(support)
        args = op.args
        if args[2] is None:  # a box: the exact fit
            lo, hi = op.lower[support], op.upper[support]
            if np.all(lo == -np.inf) and np.all(hi == np.inf):  # least squares on S
                v = np.linalg.lstsq(Q, c, rcond=None)[0]  # (minimum norm if Q is singular)
            else:
                v = np.clip(x[support], lo, hi)
                m = support.shape[0]
                _kernel(box_qp, m ** 3)(_sym(Q), c, lo, hi, v, 10 * m + 10)
            w = np.zeros(d)
            w[support] = v
            return w, problem.cost(w)

        def proj(v):
            out = np.empty_like(v)
            project(*args, support, v, out)
            return out

        def cost(v):
            return 0.5 * v @ (Q @ v) - c @ v

        def fg(v):
            Qv = Q @ v
            return 0.5 * v @ Qv - c @ v, Qv - c

        v, _, _ = _fista(fg, proj, np.ascontiguousarray(x[support]), 1.0 / eta, maxiter, cost)
        w = np.zeros(d)
        w[support] = v
        return w, problem.cost(w)
    if variant == "zeroth_order":
        def fg(v):
            fv = problem.cost(v)
            gv = np.zeros(d)
            for i in np.concatenate([support, np.arange(p, d)]):
                e = np.zeros(d)
                e[i] = 1e-6 * max(1.0, abs(v[i]))
                gv[i] = (problem.cost(v + e) - problem.cost(v - e)) / (2 * e[i])
            return fv, gv
    else:
        def fg(v):
            return problem.cost_and_egrad(v)
    x, f, _ = _fista(fg, lambda v: op.restricted(v, support), x, 1.0 / eta, maxiter,
                     problem.cost)
    return x, f


def _fista(fg, proj, x, L, maxiter, cost):
    """FISTA with backtracking and function-value restart for min R over a fixed support.

    Stops when a step moves the point by at most 1e-12 relative, or when a restarted
    (plain projected-gradient) step no longer decreases the objective.
    """
    x = proj(x)
    fx = cost(x)
    y, t = x.copy(), 1.0
    restarted = False
    for _ in range(maxiter):
        fy, gy = fg(y)
        if not np.isfinite(fy):
            break
        while True:
            xn = proj(y - gy / L)
            fn = cost(xn)
            dv = xn - y
            if fn <= fy + gy @ dv + 0.5 * L * (dv @ dv) + 1e-13 * abs(fy) or L > 1e300:
                break
            L *= 2.0
        if fn >= fx and (restarted or fn > fx):
            if restarted:  # no decrease even from a gradient step at x: converged
                break
            y, t, restarted = x.copy(), 1.0, True
            continue
        restarted = False
        tn = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
        y = xn + ((t - 1.0) / tn) * (xn - x)
        done = np.linalg.norm(xn - x) <= 1e-12 * max(1.0, np.linalg.norm(x))
        x, fx, t = xn, fn, tn
        if done:
            break
    return x, fx, 1.0 / L
