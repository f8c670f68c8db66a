"""Numba kernels of the grid transport building blocks.

Grid convention: an array of shape ``(n0, n1)`` holds cell values on ``[0, 1]^2``; cell
``(i, j)`` has centre ``((i + 1/2) / n0, (j + 1/2) / n1)`` (row coordinate first). All kernels
work on float64 C-contiguous arrays and release the GIL so that several inputs can be
processed by threads at the same time.
"""

import numpy as np
from numba import njit

#: the options of a kernel called only from other kernels: no Python entry point to compile
INNER = {"cache": True, "nogil": True, "no_cpython_wrapper": True}


@njit(**INNER)
def legendre_line(f, out, sign, hj, hx, hf, xs):
    """Discrete 1-D Legendre transform ``out[k] = max_j xs[k] xs[j] - sign f[j]`` on the grid
    ``xs[j] = (j + 1/2) / n`` (``sign`` is 1 or -1), in O(n). ``out`` may alias ``f``.

    The lower convex hull of the points ``(j, sign f[j])`` is built by a monotone chain (its
    vertices' index, abscissa and value in the workspaces ``hj, hx, hf`` of length at least
    ``n + 1``; the last two vertices also in registers); the maximiser over the hull moves
    right as the slope increases, so one sweep over the slopes suffices. A vertex with value
    NaN closes the hull: no comparison with it is true, so the sweep needs no bound check.
    """
    n = f.shape[0]
    fa = sign * f[0]
    ja, jb, fb = 0.0, 0.0, fa  # the last two vertices (index, value); the second once m >= 2
    hj[0], hx[0], hf[0] = 0.0, xs[0], fa
    m = 1
    for j in range(1, n):
        fj = sign * f[j]
        while m >= 2 and (fa - fb) * (j - ja) >= (fj - fa) * (ja - jb):
            m -= 1
            ja, fa = jb, fb
            jb, fb = hj[max(m - 2, 0)], hf[max(m - 2, 0)]
        hj[m], hx[m], hf[m] = j, xs[j], fj
        m += 1
        jb, fb, ja, fa = ja, fa, j, fj
    hx[m], hf[m] = 0.0, np.nan
    c = 0
    xc, fc, xn, fn = hx[0], hf[0], hx[1], hf[1]  # the current vertex and the next
    for k in range(n):
        s = xs[k]
        best = s * xc - fc
        nxt = s * xn - fn
        while nxt >= best:
            best = nxt
            c += 1
            xc, fc, xn, fn = xn, fn, hx[c + 1], hf[c + 1]
            nxt = s * xn - fn
        out[k] = best


@njit(**INNER)
def centres(n):
    """The cell centres ``(j + 1/2) / n`` of ``n`` cells on ``[0, 1]`` (a loop: ``np.arange``
    would compile its own specialisation on a first run)."""
    x = np.empty(n)
    for j in range(n):
        x[j] = (j + 0.5) / n
    return x


@njit(cache=True, nogil=True)
def legendre_2d(f, out):
    """Separable 2-D discrete Legendre transform on the cell-centre grid: 1-D transforms of
    the rows, then of the columns of the negated result. ``out`` may alias ``f``.

    Every line is transformed in place through a strided view (no copy; consecutive
    columns share their cache lines). The rows are taken with a step known only at run
    time, so that they have the columns' layout and the line kernel compiles once."""
    n0, n1 = f.shape
    work = np.empty((3, max(n0, n1) + 1))
    unit = 1 if n1 > 0 else 2  # (always 1)
    x1 = centres(n1)
    for i in range(n0):  # the hull of a line is built before its transform is written
        legendre_line(f[i, ::unit], out[i, ::unit], 1.0, work[0], work[1], work[2], x1)
    x0 = centres(n0)
    for j in range(n1):
        legendre_line(out[:, j], out[:, j], -1.0, work[0], work[1], work[2], x0)


@njit(cache=True, nogil=True)
def gradient(f, g0, g1):
    """Gradient of ``f`` at the cell centres, in ``[0, 1]`` units: centred differences inside,
    second-order one-sided differences on the boundary (exact for quadratics). Needs
    ``n0, n1 >= 3``."""
    n0, n1 = f.shape
    h0 = 0.5 * n0
    h1 = 0.5 * n1
    for i in range(n0):
        for j in range(n1):
            if i == 0:
                d = -3.0 * f[0, j] + 4.0 * f[1, j] - f[2, j]
            elif i == n0 - 1:
                d = 3.0 * f[i, j] - 4.0 * f[i - 1, j] + f[i - 2, j]
            else:
                d = f[i + 1, j] - f[i - 1, j]
            g0[i, j] = d * h0
            if j == 0:
                d = -3.0 * f[i, 0] + 4.0 * f[i, 1] - f[i, 2]
            elif j == n1 - 1:
                d = 3.0 * f[i, j] - 4.0 * f[i, j - 1] + f[i, j - 2]
            else:
                d = f[i, j + 1] - f[i, j - 1]
            g1[i, j] = d * h1


@njit(**INNER)
def _bilinear(p, r0, c0, t, s):
    return ((1.0 - t) * ((1.0 - s) * p[r0, c0] + s * p[r0, c0 + 1])
            + t * ((1.0 - s) * p[r0 + 1, c0] + s * p[r0 + 1, c0 + 1]))


@njit(**INNER)
def _deposit(out, y, x, w):
    n0, n1 = out.shape
    if not y > 0.0:  # also catches NaN, so that a diverging map cannot write out of bounds
        iy, ty = 0, 0.0
    elif y >= n0 - 1:
        iy, ty = n0 - 2, 1.0
    else:
        iy = int(y)
        ty = y - iy
    if not x > 0.0:
        ix, tx = 0, 0.0
    elif x >= n1 - 1:
        ix, tx = n1 - 2, 1.0
    else:
        ix = int(x)
        tx = x - ix
    out[iy, ix] += w * (1.0 - ty) * (1.0 - tx)
    out[iy, ix + 1] += w * (1.0 - ty) * tx
    out[iy + 1, ix] += w * ty * (1.0 - tx)
    out[iy + 1, ix + 1] += w * ty * tx


@njit(cache=True, nogil=True)
def pushforward(rho, f, out, maxsub, mult, down):
    """``out = (grad f)_# rho`` for a cellwise-constant density ``rho``.

    The map is evaluated at the cell centres (in output pixel units), interpolated
    bilinearly inside each cell (extrapolated linearly in the outer half cells, exact for
    affine maps) at ``k0 x k1`` sub-samples, with ``k = ceil(mult * stretch)`` per axis for
    the local stretch of the map (the plain rule is ``mult = 1``), or with ``down``,
    ``k = floor(mult * stretch)`` (at least 1: no split below a stretch of ``2 / mult``,
    hence no jump of the added variance at the identity); at most ``maxsub``. Each
    sub-sample deposits its share of the cell's mass on the four nearest output centres
    with bilinear weights, clamped to the grid, so the total mass is conserved exactly and
    first moments are preserved away from the boundary.
    """
    n0, n1 = rho.shape
    p0 = np.empty((n0, n1))
    p1 = np.empty((n0, n1))
    gradient(f, p0, p1)
    for i in range(n0):
        for j in range(n1):
            p0[i, j] = p0[i, j] * n0 - 0.5  # the map in output pixel units
            p1[i, j] = p1[i, j] * n1 - 0.5
            out[i, j] = 0.0
    for i in range(n0):
        ia = max(i - 1, 0)
        ib = min(i + 1, n0 - 1)
        for j in range(n1):
            mass = rho[i, j]
            if mass <= 0.0:
                continue
            ja = max(j - 1, 0)
            jb = min(j + 1, n1 - 1)
            e0 = max(abs(p0[ib, j] - p0[ia, j]), abs(p1[ib, j] - p1[ia, j])) / (ib - ia)
            e1 = max(abs(p0[i, jb] - p0[i, ja]), abs(p1[i, jb] - p1[i, ja])) / (jb - ja)
            e0 *= mult
            e1 *= mult
            if down:
                k0 = max(1, int(e0)) if e0 < maxsub else maxsub
                k1 = max(1, int(e1)) if e1 < maxsub else maxsub
            else:
                k0 = max(1, int(np.ceil(e0 - 1e-9))) if e0 < maxsub else maxsub
                k1 = max(1, int(np.ceil(e1 - 1e-9))) if e1 < maxsub else maxsub
            if k0 == 1 and k1 == 1:
                _deposit(out, p0[i, j], p1[i, j], mass)
                continue
            w = mass / (k0 * k1)
            for a in range(k0):
                r = i + (a + 0.5) / k0 - 0.5
                r0 = min(max(int(np.floor(r)), 0), n0 - 2)
                t = r - r0
                for b in range(k1):
                    c = j + (b + 0.5) / k1 - 0.5
                    c0 = min(max(int(np.floor(c)), 0), n1 - 2)
                    s = c - c0
                    _deposit(out, _bilinear(p0, r0, c0, t, s), _bilinear(p1, r0, c0, t, s), w)


@njit(cache=True, nogil=True)
def dual_value(psi, phi, nu, mu):
    """``mean(q (nu + mu) - nu psi - mu phi)`` with ``q = |x|^2 / 2`` at the cell centres:
    the Kantorovich dual value, ``W_2^2 / 2`` at the optimum, for mean-one densities."""
    n0, n1 = psi.shape
    total = 0.0
    for i in range(n0):
        y = (i + 0.5) / n0
        for j in range(n1):
            x = (j + 0.5) / n1
            q = 0.5 * (x * x + y * y)
            total += q * (nu[i, j] + mu[i, j]) - nu[i, j] * psi[i, j] - mu[i, j] * phi[i, j]
    return total / (n0 * n1)


@njit(cache=True, nogil=True)
def neumann_lines(r, mult, s, acc):
    r"""Solve in place, along the first axis of ``r`` (shape ``(n0, m)``) and for every column
    :math:`j \ge 1`, the tridiagonal system :math:`(s\,T + \lambda_j)\,u = r_{:,j}`, ``T``
    minus the 1-D Neumann second difference (rows ``-1, 2, -1``; ``1, -1`` and ``-1, 1`` the
    first and last), by elimination with the reciprocal pivots ``mult[i, j]`` (the system is
    symmetric positive definite for :math:`\lambda_j > 0`: no pivoting). Column 0 is left
    as it is. Adds :math:`r_{:,j}^\top u_{:,j}` to ``acc[j]`` (``j >= 1``), from the
    elimination: with :math:`z = L^{-1} r_{:,j}` for :math:`A = L D L^\top`,
    :math:`r^\top A^{-1} r = \sum_i z_i^2 / D_i`. The loops run along the rows of ``r``,
    so that they vectorise."""
    n0, m = r.shape
    for i in range(n0):
        for j in range(1, m):
            z = r[i, j] + s * r[i - 1, j] if i else r[i, j]
            d = z * mult[i, j]
            acc[j] += z * d
            r[i, j] = d
    for i in range(n0 - 2, -1, -1):
        for j in range(1, m):
            r[i, j] += s * mult[i, j] * r[i + 1, j]


def add_scaled(out, c, x):
    """``out += c * x`` in NumPy, in 8 blocks of rows, so that the product is an eighth of
    a grid (a few passes over the grid cost less than compiling them)."""
    for part, block in zip(np.array_split(out, 8), np.array_split(x, 8)):
        part += c * block


def weighted_sum(psi, lam, active, out):
    """``out = sum_{i in active} lam[i] psi[i]``, accumulated in the order of ``active``
    (by :func:`add_scaled`)."""
    out[...] = 0.0
    for i in active:
        add_scaled(out, lam[i], psi[i])


def displacement_norms(f, nu, work):
    """The squared norm ``mean(nu |x - grad f|^2)`` of the displacement field of the map
    ``grad f`` in ``L^2(nu)`` (``nu`` of mean one; ``x`` the cell centres; the gradient as
    :func:`gradient`'s), and its root in cells (axis ``a`` scaled by its number of cells).
    One axis at a time in ``work``, a grid of ``f``'s shape (in NumPy, as
    :func:`weighted_sum`)."""
    axes = "ijk"[:f.ndim]
    per_axis = np.empty(f.ndim)
    for a, n in enumerate(f.shape):
        fa, wa = np.moveaxis(f, a, 0), np.moveaxis(work, a, 0)
        np.subtract(fa[2:], fa[:-2], out=wa[1:-1])  # centred differences inside,
        wa[0] = -3.0 * fa[0] + 4.0 * fa[1] - fa[2]  # second order one-sided on the faces
        wa[-1] = 3.0 * fa[-1] - 4.0 * fa[-2] + fa[-3]
        wa *= 0.5 * n
        centres = (np.arange(n) + 0.5) / n
        np.subtract(centres.reshape((n,) + (1,) * (f.ndim - 1)), wa, out=wa)
        np.square(wa, out=wa)
        per_axis[a] = np.einsum(f"{axes},{axes}->", work, nu) / nu.size
    return float(per_axis.sum()), float(np.sqrt(per_axis @ np.square(f.shape)))
