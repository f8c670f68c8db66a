"""Compiled kernels of the sparse solvers: the IHT step with its two-step projection and the
box-constrained quadratic refit (the exchange search's round is in ``_splice_kernels``).

Kept small for the compile time of a first call: each kernel is called with C-contiguous
float64 / int64 arrays only (one specialisation), helpers with one caller are inlined at
compile time, and no kernel sorts with ``np.sort``, formats an error message or assigns an
array to an array slice (each pulls seconds of Numba's library code into the compile).
``jitopt._interpreted.interpreted`` gives the same functions uncompiled, for problems
too small to repay a compile."""

import numpy as np
from numba import njit

from ..sets import project

MAGNITUDE, GAIN, SIGNED = 0, 1, 2
SELECTIONS = {"magnitude": MAGNITUDE, "gain": GAIN, "signed": SIGNED}


@njit(cache=True)
def _worse(score, a, b):
    """Whether entry a ranks below entry b (lower score, or equal score and larger index)."""
    return score[a] < score[b] or (score[a] == score[b] and a > b)


@njit(cache=True, inline="always")
def top_k(score, k):
    """Indices of the ``k`` largest entries of ``score``, ties to the smaller index, sorted.

    One pass with a min-heap of the ``k`` best entries so far, O(d log k), then one pass
    over the marked entries for the sorted order.
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
    kept = np.empty(d, dtype=np.int64)
    for i in range(d):
        kept[i] = 0
    for i in range(k):
        kept[heap[i]] = 1
    m = 0
    for i in range(d):
        if kept[i]:
            heap[m] = i
            m += 1
    return heap


@njit(cache=True)
def iht_step(lo, hi, fpar, ipar, groups, forced, w, g, eta, k, rule, p, out):
    """One IHT-2SP step ``out <- 2SP_k(w - eta g)`` on the first ``p`` coordinates (the rest
    take a plain gradient step), with the scalars the solver tests afterwards.

    The two-step projection selects ``k`` coordinates of ``z = w - eta g`` by ``rule``,
    projects them onto the set (:func:`~jitopt.sets.project_kernel`) and zeroes the rest:
    ``rule`` 0 magnitude (top-k of ``|z|``, the paper's operator), 1 gain (separable sets:
    top-k of ``z_i^2 - (z_i - c_i)^2`` with ``c = clip(z)``), 2 signed (top-k of
    ``max(z, 0)``). The coordinates ``forced`` (indices, ``len(forced) <= k``) rank first.
    With ``eta = 0`` it is the two-step projection of ``w``.

    Returns ``(<g, out - w>, ||out - w||^2, ||w||, same support)``.
    """
    d = w.shape[0]
    z = np.empty(p)
    for i in range(p):
        z[i] = w[i] - eta * g[i]
    score = np.empty(p)
    if rule == GAIN:
        for i in range(p):
            c = min(max(z[i], lo[i]), hi[i])
            score[i] = z[i] * z[i] - (z[i] - c) * (z[i] - c)
    elif rule == SIGNED:
        for i in range(p):
            score[i] = max(z[i], 0.0)
    else:
        for i in range(p):
            score[i] = abs(z[i])
    for i in forced:
        score[i] = np.inf
    sel = top_k(score, k)
    proj = np.empty(k)
    if fpar is None:  # a box: clip (the test is decided at compile time)
        for j in range(k):
            i = sel[j]
            proj[j] = min(max(z[i], lo[i]), hi[i])
    else:
        vals = np.empty(k)
        for j in range(k):
            vals[j] = z[sel[j]]
        project(lo, hi, fpar, ipar, groups, sel, vals, proj)
    for i in range(p):
        out[i] = 0.0
    for j in range(k):
        out[sel[j]] = proj[j]
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
def cholesky(A, m, L, shift, floor):
    """``L`` <- the Cholesky factor of the leading ``m x m`` block of the symmetric
    ``A + shift I``; False when a pivot is at most ``floor`` (too close to singular)."""
    for j in range(m):
        s = A[j, j] + shift
        for t in range(j):
            s -= L[j, t] * L[j, t]
        if s <= floor:
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
def cholesky_solve(L, m, b):
    r"""``b[:m]`` <- :math:`(LL^\top)^{-1}` ``b[:m]``."""
    for i in range(m):
        s = b[i]
        for t in range(i):
            s -= L[i, t] * b[t]
        b[i] = s / L[i, i]
    for i in range(m - 1, -1, -1):
        s = b[i]
        for t in range(i + 1, m):
            s -= L[t, i] * b[t]
        b[i] = s / L[i, i]


@njit(cache=True)
def _solve_psd(A, b, m, L, x, r):
    """``x[:m] <-`` the solution of ``A x = b`` (the leading ``m x m`` block of ``A``,
    symmetric positive semidefinite) by Cholesky, with the workspaces ``L`` (m x m) and
    ``r`` (m). A singular ``A`` (b in its range) is shifted to ``A + delta I``, ``delta``
    the smallest of ``1e-10 * 100^j`` times its largest diagonal entry whose pivots are all
    above rounding level, and the solution refined five times by
    ``x <- x + (A + delta I)^{-1}(b - A x)`` (iterated Tikhonov, which tends to the
    minimum-norm solution)."""
    big = 0.0
    for i in range(m):
        big = max(big, A[i, i])
    delta = 0.0
    while not cholesky(A, m, L, delta, 1e-12 * big):
        delta = 1e-10 * max(big, 1e-300) if delta == 0.0 else 100.0 * delta
    for i in range(m):
        x[i] = 0.0
    for sweep in range(1 if delta == 0.0 else 6):
        for i in range(m):  # the residual b - A x
            s = b[i]
            if sweep > 0:
                for j in range(m):
                    s -= A[i, j] * x[j]
            r[i] = s
        cholesky_solve(L, m, r)
        for i in range(m):
            x[i] += r[i]


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
        Positive semidefinite, C-contiguous.
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
    state = np.empty(k, dtype=np.int64)  # 0 free, -1 at lower bound, +1 at upper bound
    for i in range(k):
        state[i] = 0
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
    free = np.empty(k, dtype=np.int64)
    A = np.empty((k, k))
    L = np.empty((k, k))
    b = np.empty(k)
    sol = np.empty(k)
    work = np.empty(k)
    for _ in range(maxiter):
        nf = np.int64(0)  # (an int64 from the start: the literal 0 would compile the solve twice)
        for i in range(k):
            if state[i] == 0:
                free[nf] = i
                nf += 1
        if nf > 0:
            for a in range(nf):
                i = free[a]
                s = c[i]
                for j in range(k):
                    if state[j] != 0:
                        s -= Q[i, j] * v[j]
                b[a] = s
                for e in range(nf):
                    A[a, e] = Q[i, free[e]]
            _solve_psd(A, b, nf, L, sol, work)
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
        # the free solution is feasible: release the worst multiplier, if any
        release = _worst_multiplier(Q, c, v, state, g, tol)
        if release < 0:
            break
        state[release] = 0
    return _quadratic(Q, c, v)


@njit(cache=True)
def free_qp(Q, c, v):
    """:func:`box_qp` without bounds (and without compiling it): ``v`` <- the minimizer of
    ``q(v) = v'Qv/2 - c'v``, the solution of ``Qv = c`` (for a singular ``Q``, of about
    least norm: :func:`_solve_psd`); returns ``q(v)``. ``v`` is not read."""
    k = c.shape[0]
    L = np.empty((k, k))
    r = np.empty(k)
    _solve_psd(Q, c, k, L, v, r)
    return _quadratic(Q, c, v)


@njit(cache=True, inline="always")
def _quadratic(Q, c, v):
    """``v'Qv/2 - c'v``."""
    k = c.shape[0]
    q = 0.0
    for i in range(k):
        s = -c[i]
        for j in range(k):
            s += 0.5 * Q[i, j] * v[j]
        q += s * v[i]
    return q


@njit(cache=True, inline="always")
def _worst_multiplier(Q, c, v, state, g, tol):
    """The bound coordinate of :func:`box_qp` whose multiplier (in ``g = Qv - c``) has the
    wrong sign by more than ``tol`` the most, or -1."""
    k = c.shape[0]
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
    return release
