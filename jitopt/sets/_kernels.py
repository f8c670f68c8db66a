r"""The compiled projection onto a convex set in the canonical form of
:class:`~jitopt.sets.ConvexSet`: :func:`project_kernel` and its exact pieces (the methods are
described in the docstring of :mod:`jitopt.sets`)."""

import numpy as np
from numba import njit
from numba.extending import overload

__all__ = ["project_kernel", "project"]

# bisection steps: enough to halve a bracket from the largest double down to one ulp of the
# smallest (2098 binary exponents and 53 mantissa bits); it stops at rounding level first
_NBISECT = 2200


@njit(cache=True)
def _clip(v, lo, hi):
    return min(max(v, lo), hi)


@njit(cache=True)
def _norm2(v):
    """The Euclidean norm of v, scaled by its largest entry (no overflow or underflow)."""
    m = 0.0
    for j in range(v.shape[0]):
        m = max(m, abs(v[j]))
    if m == 0.0 or m == np.inf:
        return m
    s = 0.0
    for j in range(v.shape[0]):
        s += (v[j] / m) ** 2
    return m * np.sqrt(s)


@njit(cache=True)
def _norm_exceeds(v, s, r):
    """Whether ||v||_2 > r, given s = sum(v**2): by the squares when s and r^2 are far from
    overflow and underflow, else by the scaled norm."""
    rr = r * r
    if 1e-280 < s < 1e280 and 1e-280 < rr < 1e280:
        return s > rr
    return _norm2(v) > r


@njit(cache=True)
def _mid(a, b):
    return 0.5 * a + 0.5 * b  # no overflow near the largest double


@njit(cache=True)
def _box_l1(lo, hi, idx, z, r, out):
    """out <- argmin ||x - z|| over lo <= x <= hi, ||x||_1 <= r: x = clip(soft(z, tau)).

    The threshold is written tau = zmax - delta and solved for delta in [0, zmax]: the kept
    entries |z_j| - tau = (|z_j| - zmax) + delta then keep their precision when r << |z|."""
    m = idx.shape[0]
    s = 0.0
    zmax = 0.0
    for j in range(m):
        out[j] = _clip(z[j], lo[idx[j]], hi[idx[j]])
        s += abs(out[j])
        zmax = max(zmax, abs(z[j]))
    if s <= r:
        return
    a, b = zmax, 0.0  # phi(delta = zmax) > r >= phi(delta = 0); a on the infeasible side
    for _ in range(_NBISECT):
        t = _mid(a, b)
        if t <= b or t >= a:
            break
        s = 0.0
        for j in range(m):
            v = max((abs(z[j]) - zmax) + t, 0.0) * np.sign(z[j])
            s += abs(_clip(v, lo[idx[j]], hi[idx[j]]))
        if s > r:
            a = t
        else:
            b = t
    # exact finish: on the free set phi is affine in delta
    t = _mid(a, b)
    c = 0.0
    sw = 0.0
    nf = 0
    for j in range(m):
        v = max((abs(z[j]) - zmax) + t, 0.0) * np.sign(z[j])
        lj, hj = lo[idx[j]], hi[idx[j]]
        if v != 0.0 and lj < v < hj:
            sw += abs(z[j]) - zmax
            nf += 1
        else:
            c += abs(_clip(v, lj, hj))
    exact = False
    if nf > 0:
        tt = (r - c - sw) / nf
        exact = b <= tt <= a
    if not exact:  # the bracket's feasible end: at inputs far above the set's scale the
        t = b      # bracket is one ulp of zmax wide and its midpoint may lie outside the ball
    # a free entry is (|z_j| - zmax) + tt = (|z_j| - zmax - sw / nf) + (r - c) / nf: written
    # so, it carries the rounding of the free entries' spread, not of zmax (exact when one
    # entry is free)
    for j in range(m):
        v = max((abs(z[j]) - zmax) + t, 0.0) * np.sign(z[j])
        lj, hj = lo[idx[j]], hi[idx[j]]
        if exact and v != 0.0 and lj < v < hj:
            v = (((abs(z[j]) - zmax) - sw / nf) + (r - c) / nf) * np.sign(z[j])
        elif exact:
            v = max((abs(z[j]) - zmax) + tt, 0.0) * np.sign(z[j])
        out[j] = _clip(v, lj, hj)


@njit(cache=True)
def _box_l2(lo, hi, idx, z, r, out):
    """out <- argmin ||x - z|| over lo <= x <= hi, ||x||_2 <= r: x = clip(t z), t in [0, 1].

    Norms are compared, never squares, so 1e+-300 entries and radii neither overflow nor
    underflow."""
    m = idx.shape[0]
    s = 0.0
    for j in range(m):
        out[j] = _clip(z[j], lo[idx[j]], hi[idx[j]])
        s += out[j] * out[j]
    if not _norm_exceeds(out, s, r):
        return
    # x(u) = clip(u w) with w = z / max|z| and u in [0, max|z|]: u has the scale of the
    # answer, so u w never goes subnormal where t z (t = u / max|z|) would
    zmax = 0.0
    for j in range(m):
        zmax = max(zmax, abs(z[j]))
    w = np.empty(m)
    for j in range(m):
        w[j] = z[j] / zmax
    v = np.empty(m)
    a, b = 0.0, zmax  # ||x(a)|| <= r < ||x(b)||
    for _ in range(_NBISECT):
        t = _mid(a, b)
        if t <= a or t >= b:
            break
        s = 0.0
        for j in range(m):
            v[j] = _clip(t * w[j], lo[idx[j]], hi[idx[j]])
            s += v[j] * v[j]
        if _norm_exceeds(v, s, r):
            b = t
        else:
            a = t
    # exact finish: with the clipped part C fixed, ||x||^2 = ||C||^2 + u^2 ||w_free||^2 = r^2
    t = _mid(a, b)
    wf = np.zeros(m)
    cv = np.zeros(m)
    for j in range(m):
        lj, hj = lo[idx[j]], hi[idx[j]]
        if lj < t * w[j] < hj:
            wf[j] = w[j]
        else:
            cv[j] = _clip(t * w[j], lj, hj)
    nw, nc = _norm2(wf), _norm2(cv)
    if nw > 0.0 and r >= nc:
        tt = np.sqrt(r - nc) * np.sqrt(0.5 * r + 0.5 * nc) * np.sqrt(2.0) / nw
        if a <= tt <= b:
            t = tt
    for j in range(m):
        out[j] = _clip(t * w[j], lo[idx[j]], hi[idx[j]])


@njit(cache=True)
def _box_sum_eq(lo, hi, idx, z, r, out):
    """out <- argmin ||x - z|| over x >= 0, sum x = r (the simplex: lo = 0, hi = inf, r > 0):
    x = max(z - tau, 0), with tau = zmax - delta solved for delta in [0, r] (phi(0) = 0 <= r
    <= phi(r)), so the kept entries (z_j - zmax) + delta keep their precision."""
    m = idx.shape[0]
    if m == 0:
        return
    zmax = np.max(z)
    a, b = 0.0, r  # phi(a) <= r <= phi(b), phi(delta) = sum clip(z - zmax + delta)
    for _ in range(_NBISECT):
        t = _mid(a, b)
        if t <= a or t >= b:
            break
        s = 0.0
        for j in range(m):
            s += _clip((z[j] - zmax) + t, lo[idx[j]], hi[idx[j]])
        if s > r:
            b = t
        else:
            a = t
    t = _mid(a, b)
    c = 0.0
    sw = 0.0
    nf = 0
    for j in range(m):
        v = (z[j] - zmax) + t
        lj, hj = lo[idx[j]], hi[idx[j]]
        if lj < v < hj:
            sw += z[j] - zmax
            nf += 1
        else:
            c += _clip(v, lj, hj)
    if nf > 0:
        tt = (r - c - sw) / nf
        if a <= tt <= b:
            t = tt
    for j in range(m):
        out[j] = _clip((z[j] - zmax) + t, lo[idx[j]], hi[idx[j]])


@njit(cache=True)
def _group_ball(groups, ngroups, q, idx, z, r, out):
    """Projection onto (sum_g ||x_g||^q)^(1/q) <= r, q = 1 (code 1) or inf (code 2)."""
    m = idx.shape[0]
    norms = np.zeros(ngroups)
    for j in range(m):
        norms[groups[idx[j]]] += z[j] * z[j]
    safe = True
    for g in range(ngroups):
        safe &= 1e-280 < norms[g] < 1e280 or norms[g] == 0.0
    if safe:
        for j in range(m):  # a zero sum with a nonzero entry underflowed
            safe &= z[j] == 0.0 or norms[groups[idx[j]]] > 0.0
    if safe:
        for g in range(ngroups):
            norms[g] = np.sqrt(norms[g])
    else:  # each group norm scaled by its largest entry
        gmax = np.zeros(ngroups)
        for j in range(m):
            gmax[groups[idx[j]]] = max(gmax[groups[idx[j]]], abs(z[j]))
        norms[:] = 0.0
        for j in range(m):
            g = groups[idx[j]]
            if gmax[g] > 0.0:
                norms[g] += (z[j] / gmax[g]) ** 2
        for g in range(ngroups):
            norms[g] = gmax[g] * np.sqrt(norms[g])
    kept = norms.copy()  # the new norm of each group
    if q == 2:
        for g in range(ngroups):
            kept[g] = min(norms[g], r)
    else:
        total = norms.sum()
        if total > r:
            # project the vector of group norms onto the l1 ball: soft threshold
            # tau = nmax - delta, delta in [0, nmax] (as in _box_l1)
            nmax = norms.max()
            a, b = nmax, 0.0
            for _ in range(_NBISECT):
                t = _mid(a, b)
                if t <= b or t >= a:
                    break
                s = 0.0
                for g in range(ngroups):
                    s += max((norms[g] - nmax) + t, 0.0)
                if s > r:
                    a = t
                else:
                    b = t
            t = _mid(a, b)
            sw = 0.0
            nf = 0
            for g in range(ngroups):
                if (norms[g] - nmax) + t > 0.0:
                    sw += norms[g] - nmax
                    nf += 1
            if nf > 0:
                tt = (r - sw) / nf
                if b <= tt <= a:
                    t = tt
            for g in range(ngroups):
                kept[g] = max((norms[g] - nmax) + t, 0.0)
    # z * (kept / ||z_g||), or (z / ||z_g||) * kept when that factor would be subnormal
    fac = np.ones(ngroups)
    for g in range(ngroups):
        if kept[g] != norms[g]:
            fac[g] = kept[g] / norms[g]
    for j in range(m):
        g = groups[idx[j]]
        f = fac[g]
        out[j] = z[j] * f if (f == 0.0 or f > 1e-290) else (z[j] / norms[g]) * kept[g]


@njit(cache=True)
def _piece(p, lo, hi, fpar, ipar, groups, idx, z, out):
    """Exact projection onto piece p of a Dykstra splitting: 0 box+l1, 1 l2 ball, 2 group."""
    if p == 0:
        _box_l1(lo, hi, idx, z, fpar[0], out)
    elif p == 1:
        for j in range(idx.shape[0]):
            out[j] = z[j]
        nrm = _norm2(z)
        if nrm > fpar[1]:
            for j in range(idx.shape[0]):
                out[j] = (z[j] / nrm) * fpar[1]
    elif groups is not None:  # pruned at compile time for sets without a group ball
        _group_ball(groups, ipar[2], ipar[0], idx, z, fpar[2], out)


@njit(cache=True, inline="always")
def _box(lo, hi, idx, z, out):
    """out <- the projection of z onto the box lo <= x <= hi (restricted to idx)."""
    for j in range(idx.shape[0]):
        out[j] = min(max(z[j], lo[idx[j]]), hi[idx[j]])


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

    Raises
    ------
    TypeError
        From Python, for an argument that is not an array of the dtype above (``idx`` and
        ``groups`` of any integer dtype), naming it.
    ValueError
        When the lengths disagree, an index of ``idx`` is outside ``[0, d)`` or a group label
        outside ``[0, n_groups)`` (checked in the kernel, so compiled callers are covered).

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
    Called from Python, the function checks the types and dtypes of its arguments and
    runs the compiled kernel; called from Numba-compiled code (it is overloaded there) it
    is the kernel itself, with no check beyond the kernel's. Numba removes the branches
    of an ``is None`` test on an argument at compile time, so a caller compiles only the
    code of its set family: a box (``fpar`` None), balls without a group ball (``groups``
    None), or the general case.
    """
    _check_types(lo, hi, fpar, ipar, groups, idx, z, out)
    project(lo, hi, fpar, ipar, groups, idx, z, out)


_ARRAY_KINDS = (("lo", "f"), ("hi", "f"), ("fpar", "f"), ("ipar", "i"), ("groups", "iu"),
                ("idx", "iu"), ("z", "f"), ("out", "f"))


def _check_types(*args):
    """The TypeError naming the first argument of :func:`project_kernel` that is not a 1-D
    array of its dtype (``fpar`` and ``groups`` may be None); Numba would fail with a typing
    error that names none."""
    for (name, kinds), a in zip(_ARRAY_KINDS, args):
        if a is None and name in ("fpar", "groups"):
            continue
        want = "float64" if kinds == "f" else "int64" if kinds == "i" else "integer"
        if not isinstance(a, np.ndarray) or a.ndim != 1 or a.dtype.kind not in kinds or \
                (kinds != "iu" and a.dtype.itemsize != 8):
            got = f"{a.dtype} array of shape {a.shape}" if isinstance(a, np.ndarray) \
                else type(a).__name__
            raise TypeError(f"project_kernel: {name} must be a 1-D {want} array, got {got}")


@overload(project_kernel, jit_options={"cache": True})
def _project_kernel_compiled(lo, hi, fpar, ipar, groups, idx, z, out):
    """:func:`project_kernel` in Numba-compiled code: the kernel."""
    return lambda lo, hi, fpar, ipar, groups, idx, z, out: project(lo, hi, fpar, ipar,
                                                                     groups, idx, z, out)


@njit(cache=True)
def project(lo, hi, fpar, ipar, groups, idx, z, out):
    """The compiled kernel of :func:`project_kernel` (the callers in this package use it
    directly)."""
    _check_kernel_args(lo, hi, fpar, ipar, groups, idx, z, out)
    if fpar is None:
        _box(lo, hi, idx, z, out)
        return
    zmax = 0.0
    for j in range(idx.shape[0]):
        zmax = max(zmax, abs(z[j]))
    if zmax > 2.0 ** 1000:
        # Pi_C(z) = Pi_{sC}(s z) / s: an exact power-of-two rescaling keeps norms and sums
        # of entries near the largest double finite
        s = 2.0 ** -24
        _project_balls(lo * s, hi * s, fpar * s, ipar, groups, idx, z * s, out)
        for j in range(idx.shape[0]):
            out[j] *= 2.0 ** 24
    else:
        _project_balls(lo, hi, fpar, ipar, groups, idx, z, out)


@njit(cache=True, inline="always")
def _check_kernel_args(lo, hi, fpar, ipar, groups, idx, z, out):
    """The shape and index checks of :func:`project` (O(len(idx)): no index past an array
    is ever read or written)."""
    d = lo.shape[0]
    if hi.shape[0] != d:
        raise ValueError("project_kernel: lo and hi must have the same length")
    if z.shape[0] != idx.shape[0] or out.shape[0] != idx.shape[0]:
        raise ValueError("project_kernel: z and out must have the length of idx")
    if ipar.shape[0] < 3:
        raise ValueError("project_kernel: ipar must have length 3")
    if fpar is not None:
        if fpar.shape[0] < 3:
            raise ValueError("project_kernel: fpar must have length 3")
    for j in range(idx.shape[0]):
        if idx[j] < 0 or idx[j] >= d:
            raise ValueError("project_kernel: idx must hold indices in [0, len(lo))")
    if groups is not None:
        if groups.shape[0] != d:
            raise ValueError("project_kernel: groups must have the length of lo")
        for j in range(idx.shape[0]):
            g = groups[idx[j]]
            if g < 0 or g >= ipar[2]:
                raise ValueError("project_kernel: groups must hold labels in [0, ipar[2])")


@njit(cache=True)
def _project_balls(lo, hi, fpar, ipar, groups, idx, z, out):
    """:func:`project` for a set with a ball or the simplex equality."""
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
    zn = _norm2(z)
    for _ in range(20000):
        change = 0.0
        xmax = 0.0
        for i in range(npieces):
            for j in range(m):
                y[j] = x[j] + incr[i, j]
            _piece(pieces[i], lo, hi, fpar, ipar, groups, idx, y, xn)
            for j in range(m):
                incr[i, j] = y[j] - xn[j]
                change = max(change, abs(xn[j] - x[j]))
                xmax = max(xmax, abs(xn[j]))
                x[j] = xn[j]
        # rounding level of the iterates (relative, so 1e-300 inputs converge too)
        if change <= 4e-16 * (zn + xmax):
            break
    for j in range(m):
        out[j] = x[j]

