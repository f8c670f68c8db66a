"""Compiled kernels of the sparse solvers: top-k selection, the two-step projection, the
box-constrained quadratic refit and one round of the exchange search over supports."""

import numpy as np
from numba import njit

from ..sets._kernels import project

MAGNITUDE, GAIN, SIGNED = 0, 1, 2
SELECTIONS = {"magnitude": MAGNITUDE, "gain": GAIN, "signed": SIGNED}


@njit(cache=True)
def _worse(score, a, b):
    """Whether entry a ranks below entry b (lower score, or equal score and larger index)."""
    return score[a] < score[b] or (score[a] == score[b] and a > b)


@njit(cache=True)
def top_k(score, k):
    """Indices of the ``k`` largest entries of ``score``, ties to the smaller index, sorted.

    One pass with a min-heap of the ``k`` best entries so far: O(d log k).
    """
    d = score.shape[0]
    heap = np.empty(k, dtype=np.int64)  # heap[0] is the worst kept entry
    for i in range(k):
        heap[i] = i
        j = i  # sift up
        while j > 0:
            parent = (j - 1) // 2
            if _worse(score, heap[j], heap[parent]):
                heap[j], heap[parent] = heap[parent], heap[j]
                j = parent
            else:
                break
    for i in range(k, d):
        if score[i] > score[heap[0]]:  # equal scores keep the smaller index already kept
            heap[0] = i
            j = 0  # sift down
            while True:
                c = 2 * j + 1
                if c >= k:
                    break
                if c + 1 < k and _worse(score, heap[c + 1], heap[c]):
                    c += 1
                if _worse(score, heap[c], heap[j]):
                    heap[j], heap[c] = heap[c], heap[j]
                    j = c
                else:
                    break
    return np.sort(heap)


@njit(cache=True)
def two_step(lo, hi, fpar, ipar, groups, z, k, rule, out):
    """``out <- 2SP_k(z)``: select ``k`` coordinates by ``rule``, project them, zero the rest.

    Returns the selected index set (sorted). ``rule``: 0 magnitude (top-k of ``|z|`` then
    the projection onto the set, the paper's operator), 1 gain (separable sets: top-k of
    ``z_i^2 - (z_i - c_i)^2`` with ``c = clip(z)``), 2 signed (top-k of ``max(z, 0)``).
    """
    d = z.shape[0]
    score = np.empty(d)
    if rule == 1:
        for i in range(d):
            c = min(max(z[i], lo[i]), hi[i])
            score[i] = z[i] * z[i] - (z[i] - c) * (z[i] - c)
    elif rule == 2:
        for i in range(d):
            score[i] = max(z[i], 0.0)
    else:
        for i in range(d):
            score[i] = abs(z[i])
    sel = top_k(score, k)
    vals = np.empty(k)
    for j in range(k):
        vals[j] = z[sel[j]]
    proj = np.empty(k)
    project(lo, hi, fpar, ipar, groups, sel, vals, proj)
    out[:] = 0.0
    for j in range(k):
        out[sel[j]] = proj[j]
    return sel


@njit(cache=True)
def iht_step(lo, hi, fpar, ipar, groups, w, g, eta, k, rule, p, out):
    """One IHT-2SP step ``out <- 2SP_k(w - eta g)`` on the first ``p`` coordinates (the rest
    take a plain gradient step), with the scalars the solver tests afterwards.

    Returns ``(<g, out - w>, ||out - w||^2, ||w||, same support)``.
    """
    d = w.shape[0]
    z = np.empty(p)
    for i in range(p):
        z[i] = w[i] - eta * g[i]
    two_step(lo, hi, fpar, ipar, groups, z, k, rule, out[:p])
    for i in range(p, d):
        out[i] = w[i] - eta * g[i]
    gdw = 0.0
    dw2 = 0.0
    w2 = 0.0
    same = True
    for i in range(d):
        dv = out[i] - w[i]
        gdw += g[i] * dv
        dw2 += dv * dv
        w2 += w[i] * w[i]
        if (out[i] != 0.0) != (w[i] != 0.0) and i < p:
            same = False
    return gdw, dw2, np.sqrt(w2), same


@njit(cache=True)
def _cholesky(A, delta, L):
    """``L <- `` the Cholesky factor of ``A + delta I``; False if a pivot is at rounding
    level (relative to the largest diagonal entry)."""
    m = A.shape[0]
    big = 0.0
    for i in range(m):
        big = max(big, A[i, i])
    for j in range(m):
        s = A[j, j] + delta
        for t in range(j):
            s -= L[j, t] * L[j, t]
        if s <= 1e-12 * big:
            return False
        d = np.sqrt(s)
        L[j, j] = d
        for i in range(j + 1, m):
            s = A[i, j]
            for t in range(j):
                s -= L[i, t] * L[j, t]
            L[i, j] = s / d
    return True


@njit(cache=True)
def _cho_solve(L, b):
    m = b.shape[0]
    x = b.copy()
    for i in range(m):  # L z = b
        s = x[i]
        for t in range(i):
            s -= L[i, t] * x[t]
        x[i] = s / L[i, i]
    for i in range(m - 1, -1, -1):  # L^T x = z
        s = x[i]
        for t in range(i + 1, m):
            s -= L[t, i] * x[t]
        x[i] = s / L[i, i]
    return x


@njit(cache=True)
def _solve_psd(A, b):
    """Solve ``A x = b`` for a symmetric positive semidefinite ``A`` by Cholesky. A singular
    ``A`` (b in its range) is shifted to ``A + delta I`` with ``delta`` at rounding level of
    its diagonal, and the solution refined by ``x <- x + (A + delta I)^{-1}(b - A x)``
    (iterated Tikhonov, which tends to the minimum-norm solution)."""
    m = b.shape[0]
    L = np.zeros((m, m))
    if _cholesky(A, 0.0, L):
        return _cho_solve(L, b)
    big = 0.0
    for i in range(m):
        big = max(big, A[i, i])
    delta = 1e-10 * max(big, 1e-300)
    while not _cholesky(A, delta, L):
        delta *= 100.0
    x = _cho_solve(L, b)
    r = np.empty(m)
    for _ in range(5):
        for i in range(m):
            t = b[i]
            for j in range(m):
                t -= A[i, j] * x[j]
            r[i] = t
        x += _cho_solve(L, r)
    return x


@njit(cache=True)
def box_qp(Q, c, lo, hi, v, maxiter):
    """Minimize ``q(v) = v'Qv/2 - c'v`` over ``lo <= v <= hi`` (Q positive semidefinite, c in
    its range) from the feasible start ``v``, overwritten by the minimizer.

    Primal active-set method: solve on the free coordinates with the others held at their
    bounds, move towards that solution as far as the bounds allow (fixing the first bound
    met), and once the free solution is feasible release the bound coordinate whose
    multiplier has the wrong sign the most. The objective never increases and a face is
    never revisited, so it ends after finitely many solves; ``maxiter`` caps them.

    Parameters
    ----------
    Q : float64 array (m, m)
        Positive semidefinite.
    c : float64 array (m,)
        In the range of ``Q``.
    lo, hi : float64 arrays (m,)
        The bounds (infinite entries allowed).
    v : float64 array (m,)
        A feasible start; overwritten by the minimizer.
    maxiter : int
        Linear solves at most.

    Returns
    -------
    float
        :math:`q(v)` at the minimizer.

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.sparse import box_qp
    >>> v = np.zeros(2)
    >>> q = box_qp(2.0 * np.eye(2), np.array([2.0, -4.0]), np.zeros(2), np.ones(2), v, 10)
    >>> round(q, 12), v
    (-1.0, array([1., 0.]))
    """
    k = c.shape[0]
    state = np.zeros(k, dtype=np.int64)  # 0 free, -1 at lower bound, +1 at upper bound
    for i in range(k):
        if v[i] <= lo[i]:
            v[i] = lo[i]
            state[i] = -1
        elif v[i] >= hi[i]:
            v[i] = hi[i]
            state[i] = 1
    scale = 0.0
    for i in range(k):
        scale = max(scale, abs(c[i]))
        for j in range(k):
            scale = max(scale, abs(Q[i, j]) * max(abs(lo[j]) if np.isfinite(lo[j]) else 0.0,
                                                  abs(hi[j]) if np.isfinite(hi[j]) else 0.0))
    tol = 1e-11 * max(scale, 1e-300)
    g = np.empty(k)
    for _ in range(maxiter):
        nf = 0
        for i in range(k):
            nf += state[i] == 0
        free = np.empty(nf, dtype=np.int64)
        m = 0
        for i in range(k):
            if state[i] == 0:
                free[m] = i
                m += 1
        if nf > 0:
            A = np.empty((nf, nf))
            b = np.empty(nf)
            for a in range(nf):
                i = free[a]
                s = c[i]
                for j in range(k):
                    if state[j] != 0:
                        s -= Q[i, j] * v[j]
                b[a] = s
                for e in range(nf):
                    A[a, e] = Q[i, free[e]]
            sol = _solve_psd(A, b)
            alpha = 1.0
            block = -1
            side = 0
            for a in range(nf):
                i = free[a]
                dv = sol[a] - v[i]
                if sol[a] < lo[i] and dv < 0.0:
                    t = (lo[i] - v[i]) / dv
                    if t < alpha:
                        alpha, block, side = t, i, -1
                elif sol[a] > hi[i] and dv > 0.0:
                    t = (hi[i] - v[i]) / dv
                    if t < alpha:
                        alpha, block, side = t, i, 1
            alpha = max(alpha, 0.0)
            for a in range(nf):
                i = free[a]
                v[i] += alpha * (sol[a] - v[i])
            if block >= 0:
                v[block] = lo[block] if side < 0 else hi[block]
                state[block] = side
                continue
        # the free solution is feasible: check the multipliers of the bound coordinates
        for i in range(k):
            s = -c[i]
            for j in range(k):
                s += Q[i, j] * v[j]
            g[i] = s
        worst = tol
        release = -1
        for i in range(k):
            viol = -g[i] if state[i] < 0 else (g[i] if state[i] > 0 else 0.0)
            if viol > worst:
                worst, release = viol, i
        if release < 0:
            break
        state[release] = 0
    q = 0.0
    for i in range(k):
        s = -c[i]
        for j in range(k):
            s += 0.5 * Q[i, j] * v[j]
        q += s * v[i]
    return q


@njit(cache=True)
def _argsort_small(a):
    """Stable argsort by insertion (for the short arrays of one support)."""
    m = a.shape[0]
    idx = np.arange(m)
    for i in range(1, m):
        j = i
        while j > 0 and a[idx[j - 1]] > a[idx[j]]:
            idx[j - 1], idx[j] = idx[j], idx[j - 1]
            j -= 1
    return idx


@njit(cache=True)
def splice_round(G, S, v, q, X, rhs, diag, lo, hi, s_max, thresh):
    """One round of the exchange search of ``jitopt.sparse.iht`` (``swap``) for least
    squares in the box ``[lo, hi]``.

    ``S`` (sorted) is the support, ``v`` the exact fit on it with value ``q`` of
    ``v'Q v/2 - c'v``, ``G`` the rows ``S`` of ``X^T X/n``. The dropped sets tried are the
    ``s`` cheapest coordinates of ``S`` for ``s = s_max, ..., 1``, then every single other
    one; each is replaced by the coordinates of largest gain outside ``S`` for the gradient
    without the dropped ones. The first candidate whose exact refit lowers ``q`` by more
    than ``thresh`` is returned as ``(True, S2, v2, q2)`` (``S2`` sorted), else
    ``(False, S, v, q)``.
    """
    k, p = G.shape
    n = X.shape[0]
    g = np.empty(p)
    for i in range(p):
        g[i] = -rhs[i]
    for a in range(k):
        for i in range(p):
            g[i] += v[a] * G[a, i]
    cost = np.empty(k)
    for a in range(k):
        j = S[a]
        cost[a] = -v[a] * g[j] + 0.5 * diag[j] * v[a] * v[a]
    order = _argsort_small(cost)
    inS = np.zeros(p, dtype=np.bool_)
    for a in range(k):
        inS[S[a]] = True
    n_trials = s_max + k - 1
    gd = np.empty(p)
    gain = np.empty(p)
    for trial in range(n_trials):
        if trial < s_max:
            s = s_max - trial
            drop = order[:s]
        else:
            s = 1
            drop = order[trial - s_max + 1:trial - s_max + 2]
        for i in range(p):
            gd[i] = g[i]
        for a in drop:
            for i in range(p):
                gd[i] -= v[a] * G[a, i]
        for i in range(p):
            if inS[i]:
                gain[i] = -np.inf
            else:
                t = min(max(-gd[i] / max(diag[i], 1e-300), lo[i]), hi[i])
                gain[i] = -(gd[i] * t + 0.5 * diag[i] * t * t)
        add = top_k(gain, s)
        ok = True
        for i in add:
            if not gain[i] > 0.0:
                ok = False
        if not ok:
            continue
        keep = np.ones(k, dtype=np.bool_)
        for a in drop:
            keep[a] = False
        pos = np.empty(k, dtype=np.int64)  # rows of G for the kept part, -1 for added
        S2 = np.empty(k, dtype=np.int64)
        v2 = np.zeros(k)
        m = 0
        for a in range(k):
            if keep[a]:
                S2[m] = S[a]
                pos[m] = a
                v2[m] = v[a]
                m += 1
        for i in add:
            S2[m] = i
            pos[m] = -1
            m += 1
        Q2 = np.empty((k, k))
        for a in range(k):
            for b in range(a, k):
                if pos[a] >= 0:
                    val = G[pos[a], S2[b]]
                    if pos[b] >= 0:
                        val = 0.5 * (val + G[pos[b], S2[a]])
                elif pos[b] >= 0:
                    val = G[pos[b], S2[a]]
                else:
                    val = 0.0
                    for r in range(n):
                        val += X[r, S2[a]] * X[r, S2[b]]
                    val /= n
                Q2[a, b] = val
                Q2[b, a] = val
        c2 = np.empty(k)
        lo2 = np.empty(k)
        hi2 = np.empty(k)
        for a in range(k):
            c2[a] = rhs[S2[a]]
            lo2[a] = lo[S2[a]]
            hi2[a] = hi[S2[a]]
        q2 = box_qp(Q2, c2, lo2, hi2, v2, 10 * k + 10)
        if q2 < q - thresh:
            perm = _argsort_small(S2.astype(np.float64))
            return True, S2[perm], v2[perm], q2
    return False, S, v, q
