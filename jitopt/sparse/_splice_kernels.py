"""The compiled round of the exchange search over supports (least squares in a box) of
:func:`jitopt.sparse.exchange_search`, with the rank-updated values of its trials.

Written under the rules of :mod:`jitopt.sparse._kernels` (one specialisation, no
``np.sort``); the helpers of the rank-updated values are compiled as functions of their own
rather than inlined, which compiles faster. :data:`INTERPRETED` holds this module's and ``_kernels``' functions
uncompiled (``INTERPRETED["splice_round"]``, ``INTERPRETED["box_qp"]``), for problems too
small to repay a compile."""

import sys

import numpy as np
from numba import njit

from .._interpreted import interpreted
from . import _kernels
from ._kernels import box_qp, cholesky, cholesky_solve, free_qp, top_k

_INF_BITS = 0x7FF0000000000000  # (the bits of +inf, as an int64)


@njit(cache=True)
def splice_round(G, rows, S, v, q, X, rhs, diag, lo, hi, kept, s_max, thresh):
    """One round of the exchange search of ``jitopt.sparse.iht`` (``swap``) for least
    squares in the box ``[lo, hi]`` (``lo = hi = None`` without bounds: a specialisation
    that refits by :func:`free_qp` and never compiles :func:`box_qp`).

    ``S`` (sorted) is the support, ``v`` the exact fit on it with value ``q`` of
    ``v'Q v/2 - c'v``, ``G[rows]`` the rows ``S`` of ``X^T X/n`` (``G`` the Gram-row cache of
    the problem, read in place). The dropped sets tried are the
    ``s`` cheapest coordinates of ``S`` for ``s = s_max, ..., 1``, then every single other
    one; each is replaced by the coordinates of largest gain outside ``S`` for the gradient
    without the dropped ones. The first candidate whose exact refit lowers ``q`` by more
    than ``thresh`` is returned as ``(True, S2, v2, q2, g)`` (``S2`` sorted), else
    ``(False, S, v, q, g)``, with ``g = G^T v - rhs`` the gradient at the round's start.
    The coordinates ``i`` with ``kept[i] = 1`` (a 0/1 array of length ``p``, or empty for
    none) are never dropped.
    """
    k, p = S.shape[0], G.shape[1]
    inS = np.empty(p, dtype=np.int64)
    for i in range(p):
        inS[i] = 0
    for a in range(k):
        inS[S[a]] = 1
    # without bounds the gain of adding i is gd_i^2 h_i, h_i = 1/(2 G_ii), and h_i = 0 in S
    h = np.empty(p if lo is None else 0)
    if lo is None:
        for i in range(p):
            h[i] = 0.0 if inS[i] else 0.5 / max(diag[i], 1e-300)
    g = np.empty(p)
    _gradient(G, rows, v, rhs, g)
    order = _drop_order(S, v, g, diag, kept)
    # without bounds, a trial is first valued by rank-s updates of H = Q_S^{-1} (O(k^2 s)
    # rather than the O(k^3) refit) and refitted only when that value is below q - thresh,
    # the bar of acceptance, up to 1e-9 |q| (the rounding of the two values)
    H = np.empty((k, k))
    fast = lo is None and _gram_inverse(G, rows, S, H)
    bar = q - thresh + 1e-9 * abs(q)
    wk = np.empty(k)
    T = np.empty((s_max, k))
    QKA = np.empty((k, s_max))
    small = np.empty((s_max, s_max))
    Ls = np.empty((s_max, s_max))
    r = np.empty(s_max)
    gA = np.empty(s_max)
    gd = np.empty(p)
    gain = np.empty(p)
    dropped = np.empty(k, dtype=np.int64)
    pos = np.empty(k, dtype=np.int64)  # rows of G for the kept part, -1 for added
    S2 = np.empty(k, dtype=np.int64)
    v2 = np.empty(k)
    Q2 = np.empty((k, k))
    c2 = np.empty(k)
    for trial in range(s_max + k - 1):
        # the dropped positions order[first:last] of S
        if trial < s_max:
            first, last = 0, s_max - trial
        else:
            first = trial - s_max + 1
            last = first + 1
        if kept.shape[0] > 0 and kept[S[order[last - 1]]]:
            continue  # (the forced coordinates come last in the order)
        add = _additions(g, G, rows, v, order[first:last], inS, h, diag, lo, hi, gd,
                         gain)
        if add.shape[0] == 0:
            continue
        for a in range(k):
            dropped[a] = 0
        for t in range(first, last):
            dropped[order[t]] = 1
        if fast and _trial_value(H, G, rows, X, diag, v, q, order[first:last], add, dropped,
                                 rhs, wk, T, QKA, small, Ls, r, gA) >= bar:
            continue
        m = 0
        for a in range(k):
            if not dropped[a]:
                S2[m] = S[a]
                pos[m] = a
                v2[m] = v[a]
                m += 1
        for i in add:
            S2[m] = i
            pos[m] = -1
            v2[m] = 0.0
            m += 1
        _trial_gram(G, rows, X, pos, S2, Q2)
        for a in range(k):
            c2[a] = rhs[S2[a]]
        if lo is None:  # (decided at compile time: without bounds box_qp is not compiled)
            q2 = free_qp(Q2, c2, v2)
        else:
            q2 = box_qp(Q2, c2, _take(lo, S2), _take(hi, S2), v2, 10 * k + 10)
        if q2 < q - thresh:
            for a in range(1, k):  # sort (S2, v2) by index
                b = a
                while b > 0 and S2[b - 1] > S2[b]:
                    S2[b - 1], S2[b] = S2[b], S2[b - 1]
                    v2[b - 1], v2[b] = v2[b], v2[b - 1]
                    b -= 1
            return True, S2, v2, q2, g
    return False, S, v, q, g


@njit(cache=True)
def _additions(g, G, rows, v, drop, inS, h, diag, lo, hi, gd, gain):
    """The ``s = len(drop)`` coordinates outside ``S`` of largest gain for the gradient
    ``g`` without the positions ``drop`` of ``S`` (:func:`splice_round`; ties to the
    smaller index), or none when one of them gains nothing; one pass for ``s = 1``.
    Without bounds the gain is ``gd_i^2 h_i`` (``h`` of :func:`splice_round`: 0 in ``S``,
    which never beats a positive gain outside)."""
    p = g.shape[0]
    if drop.shape[0] == 1:
        a = drop[0]
        va = v[a]
        Ga = G[rows[a]]
        best = -1
        if lo is None:
            best = _best_gain(g, Ga, va, h, gain)
        else:
            top = 0.0
            for i in range(p):
                gdi = g[i] - va * Ga[i]
                t = min(max(-gdi / max(diag[i], 1e-300), lo[i]), hi[i])
                gi = -(gdi * t + 0.5 * diag[i] * t * t)
                if gi > top and not inS[i]:
                    best, top = i, gi
        out = np.empty(1 if best >= 0 else 0, dtype=np.int64)
        if best >= 0:
            out[0] = best
        return out
    for i in range(p):
        gd[i] = g[i]
    for a in drop:
        va = v[a]
        Ga = G[rows[a]]
        for i in range(p):
            gd[i] -= va * Ga[i]
    if lo is None:
        for i in range(p):  # (branch-free, so that it vectorises)
            gain[i] = gd[i] * gd[i] * h[i]
    else:
        for i in range(p):
            t = min(max(-gd[i] / max(diag[i], 1e-300), lo[i]), hi[i])
            gi = -(gd[i] * t + 0.5 * diag[i] * t * t)
            gain[i] = -np.inf if inS[i] else gi
    add = top_k(gain, drop.shape[0])
    for i in add:
        if not gain[i] > 0.0:
            return add[:0]
    return add


@njit(cache=True)
def _best_gain(g, Ga, va, h, gain):
    """``gain <- (g - va Ga)^2 h`` and the first index of its largest entry, or -1 when none
    is positive; NaN gains are passed over. The gains are nonnegative, so that their bits as
    int64 are ordered as they are (NaN's above infinity's): the maximum is taken on the bits,
    a loop that vectorises, which a maximum of floats does not here."""
    p = g.shape[0]
    for i in range(p):
        gdi = g[i] - va * Ga[i]
        gain[i] = gdi * gdi * h[i]
    bits = gain.view(np.int64)
    top = 0
    for i in range(p):
        b = bits[i]
        top = max(top, b if b <= _INF_BITS else 0)
    if top == 0:
        return -1
    for i in range(p):
        if bits[i] == top:
            return i
    return -1


@njit(cache=True)
def _gradient(G, rows, v, rhs, g):
    """``g <- G^T v - rhs`` (the rows ``S`` of ``G`` at ``rows``)."""
    for i in range(g.shape[0]):
        g[i] = -rhs[i]
    for a in range(v.shape[0]):
        Ga = G[rows[a]]
        for i in range(g.shape[0]):
            g[i] += v[a] * Ga[i]


@njit(cache=True, inline="always")
def _drop_order(S, v, g, diag, kept):
    """The positions of ``S`` by increasing cost of dropping (stable; the kept ones last),
    for :func:`splice_round`."""
    k = S.shape[0]
    order = np.empty(k, dtype=np.int64)
    cost = np.empty(k)
    for a in range(k):
        j = S[a]
        cost[a] = -v[a] * g[j] + 0.5 * diag[j] * v[a] * v[a]
        if kept.shape[0] > 0 and kept[j]:
            cost[a] = np.inf
        order[a] = a
        b = a
        while b > 0 and cost[order[b - 1]] > cost[order[b]]:
            order[b - 1], order[b] = order[b], order[b - 1]
            b -= 1
    return order


@njit(cache=True, inline="always")
def _trial_gram(G, rows, X, pos, S2, Q2):
    """The Gram block ``Q2`` of the trial support ``S2`` of :func:`splice_round`: from the
    rows ``pos`` of ``G`` for the kept coordinates (symmetrised), from ``X`` for two added
    ones."""
    n = X.shape[0]
    k = S2.shape[0]
    for a in range(k):
        for b in range(a, k):
            if pos[a] >= 0:
                val = G[rows[pos[a]], S2[b]]
                if pos[b] >= 0:
                    val = 0.5 * (val + G[rows[pos[b]], S2[a]])
            elif pos[b] >= 0:
                val = G[rows[pos[b]], S2[a]]
            else:
                val = 0.0
                for r in range(n):
                    val += X[r, S2[a]] * X[r, S2[b]]
                val /= n
            Q2[a, b] = val
            Q2[b, a] = val


@njit(cache=True)
def _take(a, idx):
    """``a[idx]``."""
    out = np.empty(idx.shape[0])
    for t in range(idx.shape[0]):
        out[t] = a[idx[t]]
    return out


@njit(cache=True)
def _gram_inverse(G, rows, S, H):
    """``H`` <- the inverse of the (symmetrised) Gram block ``Q_S`` of :func:`splice_round`;
    False when ``Q_S`` is ill-conditioned (a Cholesky pivot at most ``1e-6`` times its
    largest diagonal entry)."""
    k = S.shape[0]
    Q = np.empty((k, k))
    big = 0.0
    for a in range(k):
        for b in range(k):
            Q[a, b] = 0.5 * (G[rows[a], S[b]] + G[rows[b], S[a]])
        big = max(big, Q[a, a])
    L = np.empty((k, k))
    if not cholesky(Q, k, L, 0.0, 1e-6 * big):
        return False
    # L^{-1} and L^{-T} L^{-1} by loops along rows, which vectorise, with the sums of the
    # textbook loops in the same order
    for i in range(k):  # Q <- L^{-1} (its lower triangle), row by row
        for j in range(i):
            Q[i, j] = 0.0
        for t in range(i):
            c = L[i, t]
            for j in range(t + 1):
                Q[i, j] -= c * Q[t, j]
        for j in range(i):
            Q[i, j] /= L[i, i]
        Q[i, i] = 1.0 / L[i, i]
    for a in range(k):
        for b in range(a + 1):
            H[a, b] = 0.0
    for t in range(k):  # H = L^{-T} L^{-1}
        for a in range(t + 1):
            c = Q[t, a]
            for b in range(a + 1):
                H[a, b] += c * Q[t, b]
    for a in range(k):
        for b in range(a):
            H[b, a] = H[a, b]
    return True


@njit(cache=True)
def _trial_value(H, G, rows, X, diag, v, q, drop, add, dropped, rhs, wk, T, QKA, small, Ls,
                 r, gA):
    r"""The value of the exact unconstrained fit on the support ``S`` of :func:`splice_round`
    with the positions ``drop`` replaced by the coordinates ``add``, from ``H = Q_S^{-1}``:
    dropping ``D`` raises ``q`` by :math:`v_D^\top H_{DD}^{-1}v_D/2` (the fit on
    ``K = S \setminus D`` is :math:`w_K = v_K - H_{KD}H_{DD}^{-1}v_D`), adding ``A`` lowers it by
    :math:`g_A^\top M^{-1}g_A/2` with :math:`g_A = Q_{AK}w_K - c_A` and the Schur complement
    :math:`M = Q_{AA} - Q_{AK}Q_{KK}^{-1}Q_{KA}`,
    :math:`Q_{KK}^{-1} = H_{KK} - H_{KD}H_{DD}^{-1}H_{DK}` (the diagonal of :math:`Q_{AA}`
    from the Gram diagonal ``diag``, the rest from the columns of ``X``). NaN when a pivot
    is near zero."""
    k = v.shape[0]
    s = drop.shape[0]
    n = X.shape[0]
    for t in range(s):
        for u in range(s):
            small[t, u] = H[drop[t], drop[u]]
        r[t] = v[drop[t]]
    if not cholesky(small, s, Ls, 0.0, 0.0):
        return np.nan
    cholesky_solve(Ls, s, r)
    value = q
    for t in range(s):
        value += 0.5 * v[drop[t]] * r[t]
    for a in range(k):
        w = 0.0
        if not dropped[a]:
            w = v[a]
            for t in range(s):
                w -= H[a, drop[t]] * r[t]
        wk[a] = w
    for c in range(k):  # Q_KA (the rows K of G at the columns A), gathered once
        for b in range(s):
            QKA[c, b] = G[rows[c], add[b]]
    for b in range(s):  # T = (H Q_KA)^T, a row per addition (H symmetric: along its rows)
        for a in range(k):
            T[b, a] = 0.0
        for c in range(k):
            if not dropped[c]:
                gcb = QKA[c, b]
                for a in range(k):
                    T[b, a] += H[c, a] * gcb
    for b in range(s):  # T_K <- (Q_KK^{-1} Q_KA)^T = T_K - (H_KD H_DD^{-1} T_D)^T
        for t in range(s):
            r[t] = T[b, drop[t]]
        cholesky_solve(Ls, s, r)
        for a in range(k):
            for t in range(s):
                T[b, a] -= H[drop[t], a] * r[t]
    big = 0.0
    for b in range(s):  # small <- M
        for e in range(b, s):
            if e == b:  # (the diagonal of Q; an off-diagonal entry from X's columns)
                val = diag[add[b]]
                big = max(big, val)
            else:
                val = 0.0
                for i in range(n):
                    val += X[i, add[b]] * X[i, add[e]]
                val /= n
            for c in range(k):
                if not dropped[c]:
                    val -= QKA[c, b] * T[e, c]
            small[b, e] = val
            small[e, b] = val
    if not cholesky(small, s, Ls, 0.0, 1e-9 * big):
        return np.nan
    for b in range(s):  # r <- g_A
        val = -rhs[add[b]]
        for c in range(k):
            if not dropped[c]:
                val += QKA[c, b] * wk[c]
        r[b] = val
        gA[b] = val
    cholesky_solve(Ls, s, r)
    for b in range(s):
        value -= 0.5 * gA[b] * r[b]
    return value


INTERPRETED = interpreted(_kernels, sys.modules[__name__])
