"""Numba kernels of the grid transport building blocks on 3-D grids: the 2-D kernels of
:mod:`jitopt.transport._kernels` with a third axis.

Grid convention: an array of shape ``(n0, n1, n2)`` holds cell values on ``[0, 1]^3``; cell
``(i, j, k)`` has centre ``((i + 1/2) / n0, (j + 1/2) / n1, (k + 1/2) / n2)``. All kernels
work on float64 C-contiguous arrays and release the GIL.
"""

import numpy as np
from numba import njit

from . import _kernels  # (its legendre_line, read when a kernel compiles)
from ._kernels import INNER

#: the cap on the sub-samples per cell and axis of a 3-D pushforward (at most 512 per cell)
MAX_SUB_3D = 8


@njit(cache=True, nogil=True)
def legendre_3d(f, out):
    """Separable 3-D discrete Legendre transform on the cell-centre grid: 1-D transforms
    along axis 2, then along axes 1 and 0 of the negated result, every line in place
    through a strided view (as in :func:`~jitopt.transport._kernels.legendre_2d`).
    ``out`` may alias ``f``.

    The lines along axis 0 are transformed in a copy of their plane ``out[:, j, :]``:
    in place, their cells lie a whole plane apart, a power of two bytes on the usual
    grids, so that they all fall in one cache set and are read from memory again for every
    next line."""
    n0, n1, n2 = f.shape
    work = np.empty((3, max(n0, n1, n2) + 1))
    unit = 1 if n2 > 0 else 2  # (always 1: the rows get the strided lines' layout)
    x2 = _kernels.centres(n2)
    for i in range(n0):
        for j in range(n1):
            _kernels.legendre_line(f[i, j, ::unit], out[i, j, ::unit], 1.0,
                                   work[0], work[1], work[2], x2)
    x1 = _kernels.centres(n1)
    for i in range(n0):
        for k in range(n2):  # consecutive lines share their cache lines
            _kernels.legendre_line(out[i, :, k], out[i, :, k], -1.0,
                                   work[0], work[1], work[2], x1)
    x0 = _kernels.centres(n0)
    plane = np.empty((n0, n2))[::unit]  # (the layout of out[:, j, :]: one compile of the copy)
    for j in range(n1):
        _copy_plane(out[:, j, :], plane)
        for k in range(n2):
            _kernels.legendre_line(plane[:, k], plane[:, k], -1.0,
                                   work[0], work[1], work[2], x0)
        _copy_plane(plane, out[:, j, :])


@njit(**INNER)
def _copy_plane(src, dst):
    """``dst[:] = src`` for two 2-D arrays of one shape, as a loop: a slice assignment would
    compile NumPy's broadcast checks and their error message, seconds of a first run."""
    for i in range(src.shape[0]):
        for k in range(src.shape[1]):
            dst[i, k] = src[i, k]


@njit(**INNER)
def _diff(a, b, c, at_start, at_end):
    """The difference across a cell along one axis from the values before (``a``), at
    (``b``) and after (``c``) it: centred inside, second-order one-sided on the faces (the
    caller passes the two next values there)."""
    if at_start:
        return -3.0 * a + 4.0 * b - c
    if at_end:
        return 3.0 * c - 4.0 * b + a
    return c - a


@njit(**INNER)
def _gradient_plane(f, i, g0, g1, g2, rows):
    """The gradient of ``f`` in plane ``i`` (into the 2-D arrays ``g0, g1, g2``), in
    ``[0, 1]`` units, in the rows ``j`` where ``rows[j]`` (the others are not written):
    centred differences inside, second-order one-sided differences on the faces (exact for
    quadratics)."""
    n0, n1, n2 = f.shape
    ia = min(max(i - 1, 0), n0 - 3)  # the three values used along axis 0
    for j in range(n1):
        if not rows[j]:
            continue
        ja = min(max(j - 1, 0), n1 - 3)
        for k in range(n2):
            ka = min(max(k - 1, 0), n2 - 3)
            g0[j, k] = 0.5 * n0 * _diff(f[ia, j, k], f[ia + 1, j, k], f[ia + 2, j, k],
                                        i == 0, i == n0 - 1)
            g1[j, k] = 0.5 * n1 * _diff(f[i, ja, k], f[i, ja + 1, k], f[i, ja + 2, k],
                                        j == 0, j == n1 - 1)
            g2[j, k] = 0.5 * n2 * _diff(f[i, j, ka], f[i, j, ka + 1], f[i, j, ka + 2],
                                        k == 0, k == n2 - 1)


@njit(cache=True, nogil=True)
def gradient_3d(f, g0, g1, g2):
    """Gradient of ``f`` at the cell centres, in ``[0, 1]`` units (see
    :func:`_gradient_plane`). Needs every side ``>= 3``."""
    rows = np.ones(f.shape[1], dtype=np.bool_)
    for i in range(f.shape[0]):
        _gradient_plane(f, i, g0[i], g1[i], g2[i], rows)


@njit(**INNER)
def _corner(v, n):
    """Lower corner index and fraction of the coordinate ``v`` (in cells) on an axis of
    ``n`` centres, clamped to the grid (NaN goes to the first cell)."""
    if not v > 0.0:
        return 0, 0.0
    if v >= n - 1:
        return n - 2, 1.0
    i = int(v)
    return i, v - i


@njit(**INNER)
def _deposit3(out, y, x, z, w):
    n0, n1, n2 = out.shape
    i, t = _corner(y, n0)
    j, s = _corner(x, n1)
    k, u = _corner(z, n2)
    for a in range(2):
        wa = w * (t if a else 1.0 - t)
        for b in range(2):
            wb = wa * (s if b else 1.0 - s)
            out[i + a, j + b, k] += wb * (1.0 - u)
            out[i + a, j + b, k + 1] += wb * u


@njit(**INNER)
def _trilinear(p, ra, rb, j, k, t, s, u):
    """The three map components interpolated trilinearly at fractions ``(t, s, u)`` of the
    cell with lower corner ``(j, k)`` in the planes of slots ``ra`` and ``rb`` of ``p`` (one
    set of weights for all three)."""
    y = x = z = 0.0
    for a in range(2):
        wa = t if a else 1.0 - t
        r = rb if a else ra
        for b in range(2):
            wb = wa * (s if b else 1.0 - s)
            for c in range(2):
                w = wb * (u if c else 1.0 - u)
                y += w * p[0, r, j + b, k + c]
                x += w * p[1, r, j + b, k + c]
                z += w * p[2, r, j + b, k + c]
    return y, x, z


@njit(**INNER)
def _subsamples(e, maxsub, down):
    """Sub-samples along an axis for the stretch ``e`` (already times ``mult``)."""
    if e >= maxsub:
        return maxsub
    if down:
        return max(1, int(e))
    return max(1, int(np.ceil(e - 1e-9)))


@njit(**INNER)
def _stretch(p, ra, rb, ja, jb, ka, kb, span):
    """The largest change of the map components between the cells ``(ra, ja, ka)`` and
    ``(rb, jb, kb)`` of ``p``, per cell (``span`` cells apart)."""
    d = 0.0
    for c in range(3):
        d = max(d, abs(p[c, rb, jb, kb] - p[c, ra, ja, ka]))
    return d / span


@njit(cache=True, nogil=True)
def pushforward_3d(rho, f, out, maxsub, mult, down):
    """``out = (grad f)_# rho`` for a cellwise-constant density on a 3-D grid: the 2-D
    kernel's rule with trilinear interpolation of the map at ``k0 x k1 x k2`` sub-samples
    (at most ``min(maxsub, 8)`` per axis) and trilinear deposits on the 8 nearest centres,
    clamped; total mass is conserved exactly. The map is computed plane by plane into a
    ring of three planes (the cells of plane ``i`` read planes ``i - 1`` to ``i + 1``), and
    only in the rows that a cell with mass reads (its own and the next row on each side, in
    its plane and the next planes): a density that is zero on most of the grid, a shape on
    an empty background, costs the map of its support only."""
    n0, n1, n2 = rho.shape
    maxsub = min(maxsub, MAX_SUB_3D)
    p = np.empty((3, 3, n1, n2))
    out[...] = 0.0
    sides = (n0, n1, n2)
    need = np.zeros((n0, n1), dtype=np.bool_)
    for i in range(n0):
        for j in range(n1):
            for k in range(n2):
                if not rho[i, j, k] <= 0.0:  # (as the deposits below: NaN counts as mass)
                    for a in range(max(i - 1, 0), min(i + 2, n0)):
                        for b in range(max(j - 1, 0), min(j + 2, n1)):
                            need[a, b] = True
                    break
    for i in range(n0):
        # the planes of the map first read by plane i (a loop index: one specialisation of
        # _gradient_plane), in output cell units, centre k at k
        for plane in range(0 if i == 0 else i + 1, min(i + 2, n0)):
            r = plane % 3
            _gradient_plane(f, plane, p[0, r], p[1, r], p[2, r], need[plane])
            for c in range(3):
                for j in range(n1):
                    if need[plane, j]:
                        for k in range(n2):
                            p[c, r, j, k] = p[c, r, j, k] * sides[c] - 0.5
        ia, ib = max(i - 1, 0), min(i + 1, n0 - 1)
        sa, si, sb = ia % 3, i % 3, ib % 3
        for j in range(n1):
            ja, jb = max(j - 1, 0), min(j + 1, n1 - 1)
            for k in range(n2):
                mass = rho[i, j, k]
                if mass <= 0.0:
                    continue
                ka, kb = max(k - 1, 0), min(k + 1, n2 - 1)
                k0 = _subsamples(mult * _stretch(p, sa, sb, j, j, k, k, ib - ia), maxsub, down)
                k1 = _subsamples(mult * _stretch(p, si, si, ja, jb, k, k, jb - ja), maxsub,
                                 down)
                k2 = _subsamples(mult * _stretch(p, si, si, j, j, ka, kb, kb - ka), maxsub,
                                 down)
                if k0 == 1 and k1 == 1 and k2 == 1:
                    _deposit3(out, p[0, si, j, k], p[1, si, j, k], p[2, si, j, k], mass)
                    continue
                w = mass / (k0 * k1 * k2)
                for a in range(k0):
                    r = i + (a + 0.5) / k0 - 0.5
                    r0 = min(max(int(np.floor(r)), 0), n0 - 2)
                    for b in range(k1):
                        c = j + (b + 0.5) / k1 - 0.5
                        c0 = min(max(int(np.floor(c)), 0), n1 - 2)
                        for e in range(k2):
                            z = k + (e + 0.5) / k2 - 0.5
                            z0 = min(max(int(np.floor(z)), 0), n2 - 2)
                            my, mx, mz = _trilinear(p, r0 % 3, (r0 + 1) % 3, c0, z0, r - r0,
                                                    c - c0, z - z0)
                            _deposit3(out, my, mx, mz, w)


@njit(cache=True, nogil=True)
def dual_value_3d(psi, phi, nu, mu):
    """``mean(q (nu + mu) - nu psi - mu phi)`` with ``q = |x|^2 / 2`` at the cell centres
    of a 3-D grid (the 2-D kernel's ``dual_value``)."""
    n0, n1, n2 = psi.shape
    total = 0.0
    for i in range(n0):
        y = (i + 0.5) / n0
        for j in range(n1):
            x = (j + 0.5) / n1
            for k in range(n2):
                z = (k + 0.5) / n2
                q = 0.5 * (x * x + y * y + z * z)
                total += (q * (nu[i, j, k] + mu[i, j, k]) - nu[i, j, k] * psi[i, j, k]
                          - mu[i, j, k] * phi[i, j, k])
    return total / (n0 * n1 * n2)
