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
