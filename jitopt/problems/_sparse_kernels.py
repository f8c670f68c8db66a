"""Compiled oracles of the sparse problems (:mod:`jitopt.problems._sparse`): least squares
with cached Gram rows, and logistic regression."""

import numpy as np
from numba import njit

__all__ = ["least_squares_kernel"]


@njit(cache=True, inline="always")
def _residual(w, X, y):
    """``(r, S)``: the residual ``r = X w - y`` from the columns of X on the support ``S``
    of w only, and ``S``."""
    n = y.shape[0]
    m = 0
    for j in range(w.shape[0]):
        if w[j] != 0.0:
            m += 1
    support = np.empty(m, dtype=np.int64)
    m = 0
    for j in range(w.shape[0]):
        if w[j] != 0.0:
            support[m] = j
            m += 1
    r = np.empty(n)
    for i in range(n):
        s = -y[i]
        for j in support:
            s += X[i, j] * w[j]
        r[i] = s
    return r, support


@njit(cache=True, inline="always")
def _gram_rows(X, new, cache, start):
    """``cache[start + a] = X^T x_j / n`` for the coordinates ``j = new[a]``: four rows at a
    time, each four in one pass over X."""
    n, p = X.shape
    missing = new.shape[0]
    acc = np.empty((4, p))
    for t0 in range(0, missing, 4):
        size = min(4, missing - t0)
        for a in range(4):
            for l in range(p):
                acc[a, l] = 0.0
        for i in range(n):
            c0 = X[i, new[t0]] / n
            c1 = X[i, new[t0 + 1]] / n if size > 1 else 0.0
            c2 = X[i, new[t0 + 2]] / n if size > 2 else 0.0
            c3 = X[i, new[t0 + 3]] / n if size > 3 else 0.0
            for l in range(p):
                x = X[i, l]
                acc[0, l] += x * c0
                acc[1, l] += x * c1
                acc[2, l] += x * c2
                acc[3, l] += x * c3
        for a in range(size):
            for l in range(p):
                cache[start + t0 + a, l] = acc[a, l]


@njit(cache=True)
def least_squares_kernel(w, X, y, b, cache, slot, last, streak, counter, persist):
    """Cost and gradient of ||Xw - y||^2/(2n), with the Gram rows G_j = X^T x_j / n of the
    support cached in ``cache`` (``slot[j]`` its row, -1 if absent) when they fit.

    A row is computed only for a coordinate that has been in the support at the last
    ``max(persist, m)`` calls (``streak[j]``; ``last[j]`` is the last call with ``j`` in the
    support, ``counter[1]`` the call number, m the support size); while a support coordinate
    has no row the gradient is ``X^T r / n`` (one pass over X, about the cost of one row).
    Renting dense gradients for about m calls before buying the m rows at most doubles the
    cost of either choice made in hindsight (the ski-rental argument): short runs with a
    moving support never pay for rows, long runs on a settled support get O(pm) gradients.
    """
    n, p = X.shape
    r, support = _residual(w, X, y)
    f = 0.0
    for i in range(n):
        f += r[i] * r[i]
    f = 0.5 * f / n
    cap = cache.shape[0]
    call = counter[1] + 1
    counter[1] = call
    m = support.shape[0]
    dense = m > cap // 2 or m * 4 > n + p
    if not dense:
        # ski rental: a row costs about one pass over X, as a dense gradient does, so rows
        # are bought once the support has been rented (dense gradients) for about m
        # evaluations
        need = max(persist, m)
        persistent = np.empty(m, dtype=np.int64)  # 0 or 1
        for t in range(m):
            j = support[t]
            streak[j] = streak[j] + 1 if last[j] == call - 1 else 1
            last[j] = call
            persistent[t] = streak[j] >= need
        missing = 0
        transient = 0
        for t in range(m):
            if slot[support[t]] < 0:
                missing += persistent[t]
                transient += not persistent[t]
        if counter[0] + missing > cap:
            for j in range(p):
                slot[j] = -1
            counter[0] = 0
            missing = 0
            for t in range(m):
                missing += persistent[t]
            transient = m - missing
        if missing > 0:
            # the missing rows X^T x_j / n
            new = np.empty(missing, dtype=np.int64)
            c = 0
            for t in range(m):
                j = support[t]
                if slot[j] < 0 and persistent[t]:
                    new[c] = j
                    slot[j] = counter[0] + c
                    c += 1
            _gram_rows(X, new, cache, counter[0])
            counter[0] += missing
        dense = transient > 0
    g = np.empty(p)
    if dense:  # X^T r / n, reading X once in memory order
        for i in range(p):
            g[i] = 0.0
        for i in range(n):
            ri = r[i]
            for j in range(p):
                g[j] += X[i, j] * ri
        for j in range(p):
            g[j] /= n
        return f, g
    for i in range(p):
        g[i] = -b[i]
    for j in support:
        wj = w[j]
        s = slot[j]
        for i in range(p):
            g[i] += wj * cache[s, i]
    return f, g


@njit(cache=True)
def logistic_kernel(w, X, y, idx, alpha, intercept):
    """Mean logistic loss over idx (labels +-1) plus (alpha/2)||w||^2, and its gradient."""
    return weighted_logistic_kernel(w, X, y, np.empty(0), idx, alpha, intercept)


@njit(cache=True)
def weighted_logistic_kernel(w, X, y, sw, idx, alpha, intercept):
    """:func:`logistic_kernel` with the mean weighted by ``sw`` (unit weights when ``sw`` is
    empty): ``sum_i sw_i loss_i / sum_i sw_i`` over idx."""
    p = X.shape[1]
    g = np.empty(w.shape[0])
    for j in range(w.shape[0]):
        g[j] = 0.0
    f = 0.0
    total = 0.0
    b = w[p] if intercept else 0.0
    for i in idx:
        wi = sw[i] if sw.shape[0] > 0 else 1.0
        total += wi
        m = 0.0
        for j in range(p):
            m += X[i, j] * w[j]
        m = y[i] * (m + b)
        # log(1 + exp(-m)) and its derivative -1/(1 + exp(m)), computed stably
        if m > 0:
            e = np.exp(-m)
            f += wi * np.log1p(e)
            s = -e / (1.0 + e)
        else:
            e = np.exp(m)
            f += wi * (-m + np.log1p(e))
            s = -1.0 / (1.0 + e)
        sy = wi * s * y[i]
        for j in range(p):
            g[j] += sy * X[i, j]
        if intercept:
            g[p] += sy
    f /= total
    for j in range(w.shape[0]):
        g[j] /= total
    for j in range(p):
        f += 0.5 * alpha * w[j] * w[j]
        g[j] += alpha * w[j]
    return f, g
