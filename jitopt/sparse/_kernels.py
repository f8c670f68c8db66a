"""Compiled kernels of the sparse solvers: top-k selection and the two-step projection."""

import numpy as np
from numba import njit

from ..sets import project_kernel

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
    project_kernel(lo, hi, fpar, ipar, groups, sel, vals, proj)
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
