r"""The compiled projection onto a convex set in the canonical form of
:class:`~jitopt.sets.ConvexSet`: :func:`project_kernel` and its exact pieces (the methods are
described in the docstring of :mod:`jitopt.sets`)."""

import numpy as np
from numba import njit

__all__ = ["project_kernel"]

@njit(cache=True)
def _clip(v, lo, hi):
    return min(max(v, lo), hi)


@njit(cache=True)
def _box_l1(lo, hi, idx, z, r, out):
    """out <- argmin ||x - z|| over lo <= x <= hi, ||x||_1 <= r: x = clip(soft(z, tau))."""
    m = idx.shape[0]
    s = 0.0
    zmax = 0.0
    for j in range(m):
        out[j] = _clip(z[j], lo[idx[j]], hi[idx[j]])
        s += abs(out[j])
        zmax = max(zmax, abs(z[j]))
    if s <= r:
        return
    a, b = 0.0, zmax  # phi(a) > r >= phi(b)
    for _ in range(200):
        t = 0.5 * (a + b)
        if t <= a or t >= b:
            break
        s = 0.0
        for j in range(m):
            v = max(abs(z[j]) - t, 0.0) * np.sign(z[j])
            s += abs(_clip(v, lo[idx[j]], hi[idx[j]]))
        if s > r:
            a = t
        else:
            b = t
    # exact finish: on the free set phi is affine in tau
    t = 0.5 * (a + b)
    c = 0.0
    sz = 0.0
    nf = 0
    for j in range(m):
        v = max(abs(z[j]) - t, 0.0) * np.sign(z[j])
        lj, hj = lo[idx[j]], hi[idx[j]]
        if v != 0.0 and lj < v < hj:
            sz += abs(z[j])
            nf += 1
        else:
            c += abs(_clip(v, lj, hj))
    if nf > 0:
        tt = (sz + c - r) / nf
        if a <= tt <= b:
            t = tt
    for j in range(m):
        v = max(abs(z[j]) - t, 0.0) * np.sign(z[j])
        out[j] = _clip(v, lo[idx[j]], hi[idx[j]])


@njit(cache=True)
def _box_l2(lo, hi, idx, z, r, out):
    """out <- argmin ||x - z|| over lo <= x <= hi, ||x||_2 <= r: x = clip(t z), t in [0, 1]."""
    m = idx.shape[0]
    s = 0.0
    for j in range(m):
        out[j] = _clip(z[j], lo[idx[j]], hi[idx[j]])
        s += out[j] * out[j]
    if s <= r * r:
        return
    a, b = 0.0, 1.0  # ||x(a)|| <= r < ||x(b)||
    for _ in range(200):
        t = 0.5 * (a + b)
        if t <= a or t >= b:
            break
        s = 0.0
        for j in range(m):
            v = _clip(t * z[j], lo[idx[j]], hi[idx[j]])
            s += v * v
        if s > r * r:
            b = t
        else:
            a = t
    t = 0.5 * (a + b)
    c = 0.0
    sz = 0.0
    for j in range(m):
        v = t * z[j]
        lj, hj = lo[idx[j]], hi[idx[j]]
        if lj < v < hj:
            sz += z[j] * z[j]
        else:
            c += _clip(v, lj, hj) ** 2
    if sz > 0.0 and r * r >= c:
        tt = np.sqrt((r * r - c) / sz)
        if a <= tt <= b:
            t = tt
    for j in range(m):
        out[j] = _clip(t * z[j], lo[idx[j]], hi[idx[j]])


@njit(cache=True)
def _box_sum_eq(lo, hi, idx, z, r, out):
    """out <- argmin ||x - z|| over lo <= x <= hi, sum x = r: x = clip(z - tau)."""
    m = idx.shape[0]
    if m == 0:
        return
    # phi(tau) = sum clip(z - tau) decreases; the simplex has lo = 0, hi = inf and r > 0
    a = np.min(z) - abs(r) - 1.0
    b = np.max(z) + 1.0
    for _ in range(300):
        t = 0.5 * (a + b)
        if t <= a or t >= b:
            break
        s = 0.0
        for j in range(m):
            s += _clip(z[j] - t, lo[idx[j]], hi[idx[j]])
        if s > r:
            a = t
        else:
            b = t
    t = 0.5 * (a + b)
    c = 0.0
    sz = 0.0
    nf = 0
    for j in range(m):
        v = z[j] - t
        lj, hj = lo[idx[j]], hi[idx[j]]
        if lj < v < hj:
            sz += z[j]
            nf += 1
        else:
            c += _clip(v, lj, hj)
    if nf > 0:
        tt = (sz + c - r) / nf
        if a <= tt <= b:
            t = tt
    for j in range(m):
        out[j] = _clip(z[j] - t, lo[idx[j]], hi[idx[j]])


@njit(cache=True)
def _group_ball(groups, ngroups, q, idx, z, r, out):
    """Projection onto (sum_g ||x_g||^q)^(1/q) <= r, q = 1 (code 1) or inf (code 2)."""
    m = idx.shape[0]
    norms = np.zeros(ngroups)
    for j in range(m):
        norms[groups[idx[j]]] += z[j] * z[j]
    for g in range(ngroups):
        norms[g] = np.sqrt(norms[g])
    scale = np.ones(ngroups)
    if q == 2:
        for g in range(ngroups):
            if norms[g] > r:
                scale[g] = r / norms[g]
    else:
        total = norms.sum()
        if total > r:
            # project the vector of group norms onto the l1 ball: soft threshold tau
            a, b = 0.0, norms.max()
            for _ in range(200):
                t = 0.5 * (a + b)
                if t <= a or t >= b:
                    break
                s = 0.0
                for g in range(ngroups):
                    s += max(norms[g] - t, 0.0)
                if s > r:
                    a = t
                else:
                    b = t
            t = 0.5 * (a + b)
            sz = 0.0
            nf = 0
            for g in range(ngroups):
                if norms[g] > t:
                    sz += norms[g]
                    nf += 1
            if nf > 0:
                tt = (sz - r) / nf
                if a <= tt <= b:
                    t = tt
            for g in range(ngroups):
                scale[g] = max(norms[g] - t, 0.0) / norms[g] if norms[g] > 0 else 0.0
    for j in range(m):
        out[j] = z[j] * scale[groups[idx[j]]]


@njit(cache=True)
def _piece(p, lo, hi, fpar, ipar, groups, idx, z, out):
    """Exact projection onto piece p of a Dykstra splitting: 0 box+l1, 1 l2 ball, 2 group."""
    if p == 0:
        _box_l1(lo, hi, idx, z, fpar[0], out)
    elif p == 1:
        for j in range(idx.shape[0]):
            out[j] = z[j]
        nrm = np.sqrt(np.sum(z * z))
        if nrm > fpar[1]:
            for j in range(idx.shape[0]):
                out[j] = z[j] * (fpar[1] / nrm)
    elif groups is not None:  # pruned at compile time for sets without a group ball
        _group_ball(groups, ipar[2], ipar[0], idx, z, fpar[2], out)


@njit(cache=True)
def _box(lo, hi, idx, z, out):
    """out <- the projection of z onto the box lo <= x <= hi (restricted to idx)."""
    for j in range(idx.shape[0]):
        out[j] = _clip(z[j], lo[idx[j]], hi[idx[j]])


@njit(cache=True)
def project_kernel(lo, hi, fpar, ipar, groups, idx, z, out):
    """Project ``z`` onto the set restricted to the coordinates ``idx``; write into ``out``.

    Parameters
    ----------
    lo, hi : float64 arrays (d,)
        Box bounds.
    fpar : float64 array (3,) or None
        Radii ``(r1, r2, rg)`` of the l1, l2 and group balls (``inf`` when absent); for a
        simplex, ``r1`` holds the sum. None for a box (no ball and no simplex).
    ipar : int64 array (3,)
        ``(group_code, simplex_flag, n_groups)``; group_code 0 none, 1 sum of group norms,
        2 max of group norms.
    groups : int64 array (d,) or None
        Group id of each coordinate; None when there is no group ball.
    idx : int64 array (m,)
        Coordinates the vector ``z`` lives on; the set is restricted to them (for a
        support-preserving set this is the projection of the vector that is ``z`` on ``idx``
        and zero elsewhere).
    z, out : float64 arrays (m,)
        Input and output (they may not alias).

    Examples
    --------
    The box :math:`[-1, 1]^3` (no ball, so ``fpar`` is None), all coordinates:

    >>> import numpy as np
    >>> from jitopt.sets import project_kernel
    >>> lo, hi = np.full(3, -1.0), np.full(3, 1.0)
    >>> out = np.empty(3)
    >>> project_kernel(lo, hi, None, np.zeros(3, np.int64), None, np.arange(3),
    ...                np.array([2.0, -3.0, 0.5]), out)
    >>> out
    array([ 1. , -1. ,  0.5])

    Notes
    -----
    Numba removes the branches of an ``is None`` test on an argument at compile time, so a
    caller compiles only the code of its set family: a box (``fpar`` None), balls without a
    group ball (``groups`` None), or the general case.
    """
    if fpar is None:
        _box(lo, hi, idx, z, out)
    else:
        _project_balls(lo, hi, fpar, ipar, groups, idx, z, out)


@njit(cache=True)
def _project_balls(lo, hi, fpar, ipar, groups, idx, z, out):
    """:func:`project_kernel` for a set with a ball or the simplex equality."""
    m = idx.shape[0]
    has_l1 = fpar[0] < np.inf
    has_l2 = fpar[1] < np.inf
    gq = 0
    if groups is not None:
        gq = ipar[0]
    if ipar[1] == 1:
        _box_sum_eq(lo, hi, idx, z, fpar[0], out)
        return
    if not has_l2 and gq == 0:
        _box_l1(lo, hi, idx, z, fpar[0], out)
        return
    if not has_l1 and gq == 0:
        _box_l2(lo, hi, idx, z, fpar[1], out)
        return
    free_box = True
    for j in range(m):
        if lo[idx[j]] > -np.inf or hi[idx[j]] < np.inf:
            free_box = False
            break
    if gq != 0 and not has_l1 and not has_l2 and free_box:
        if groups is not None:
            _group_ball(groups, ipar[2], gq, idx, z, fpar[2], out)
        return
    # Dykstra's algorithm between the exact pieces: box+l1, l2 ball, group ball
    pieces = np.empty(3, dtype=np.int64)
    npieces = 0
    pieces[npieces] = 0
    npieces += 1
    if has_l2:
        pieces[npieces] = 1
        npieces += 1
    if gq != 0:
        pieces[npieces] = 2
        npieces += 1
    incr = np.zeros((npieces, m))
    x = z.copy()
    y = np.empty(m)
    xn = np.empty(m)
    scale = 1.0 + np.sqrt(np.sum(z * z))
    for _ in range(20000):
        change = 0.0
        for i in range(npieces):
            for j in range(m):
                y[j] = x[j] + incr[i, j]
            _piece(pieces[i], lo, hi, fpar, ipar, groups, idx, y, xn)
            for j in range(m):
                incr[i, j] = y[j] - xn[j]
                change = max(change, abs(xn[j] - x[j]))
                x[j] = xn[j]
        if change <= 4e-16 * scale:
            break
    for j in range(m):
        out[j] = x[j]

