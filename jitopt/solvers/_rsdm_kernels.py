"""Numba kernels of :func:`jitopt.solvers.rsdm` (float64 C-contiguous arrays, int64 rows).

A step acts on an r-dimensional block: with ``P`` (r x n, orthonormal rows) the block is
``P X``; for row sampling ``P`` is rows ``I`` of the identity and the block is ``X[I]``.
"""

import numpy as np
from numba import njit


@njit(cache=True)
def block_gradient(gb, xb):
    """Riemannian gradient at the identity of the small problem on O(r):
    ``skew(gb xbᵀ)``, with ``gb = P G`` and ``xb = P X`` (r x p each), in O(r² p)."""
    w = gb @ xb.T
    return 0.5 * (w - w.T)


@njit(cache=True)
def block_delta(omega, eta, xb):
    """``(Y - I) xb`` for the Cayley rotation ``Y = (I + eta/2 omega)⁻¹(I - eta/2 omega)``.

    ``Y - I = -eta (I + eta/2 omega)⁻¹ omega`` has no cancellation, so the change of the
    block is accurate relative to its own size (``qf(I - eta omega) - I`` would carry an
    absolute error of one rounding unit), and the exact cost change of a small step is not
    lost in rounding. For skew ``omega``, ``Y`` is orthogonal with ``det Y = +1``. O(r³ + r²p).
    """
    r, p = xb.shape
    a = np.eye(r) + (0.5 * eta) * omega
    if r < p:  # solve with the r columns of omega rather than the p of omega xb
        return (-eta * np.linalg.solve(a, omega)) @ xb
    return -eta * np.linalg.solve(a, omega @ xb)


@njit(cache=True)
def haar_frame(z):
    """Orthonormal rows spanning the columns of the Gaussian ``z`` (n x r): ``Qᵀ``."""
    q, _ = np.linalg.qr(z)
    return np.ascontiguousarray(q.T)


@njit(cache=True)
def subspace_update(x, p, d):
    """``x + Pᵀ d``: the point after a subspace step with block change ``d``, O(npr)."""
    return x + p.T @ d


@njit(cache=True)
def exact_block(lb, special):
    """The block rotation minimizing an affine cost ``<lb, U>``, and the change it makes.

    Returns ``(u, <lb, u - I>)`` with ``u`` minimizing ``<lb, u>`` over O(r) or, with
    ``special``, over SO(r): for the SVD ``-lb = W diag(s) Vᵀ`` (``s`` decreasing) the
    minimizer is the polar factor ``W Vᵀ``; when ``det(W Vᵀ) = -1`` and ``special``, the
    last (smallest) singular pair is flipped, ``W diag(1, ..., 1, -1) Vᵀ`` (special
    orthogonal Procrustes). The factors of an SVD are orthogonal only to a few times
    ``r`` rounding units, an error that many steps would add up; one Newton-Schulz step
    ``u (3I - uᵀu) / 2`` squares it (to rounding). O(r³).
    """
    r = lb.shape[0]
    w, s, vt = np.linalg.svd(-lb)
    u = w @ vt
    if special and np.linalg.det(u) < 0.0:
        for i in range(r):
            for j in range(r):
                u[i, j] -= 2.0 * w[i, r - 1] * vt[r - 1, j]
    u = u + 0.5 * (u @ (np.eye(r) - u.T @ u))
    change = 0.0
    for i in range(r):
        for j in range(r):
            change += lb[i, j] * u[i, j]
        change -= lb[i, i]
    return u, change
