"""The block steps of :func:`jitopt.solvers.rsdm` (float64 arrays, int64 rows).

A step acts on an r-dimensional block: with ``P`` (r x n, orthonormal rows) the block is
``P X``; for row sampling ``P`` is rows ``I`` of the identity and the block is ``X[I]``.
They are NumPy and LAPACK calls on r x r and r x p matrices, called from Python: compiled,
they would cost seconds of compilation on first use and save microseconds a step.
"""

import numpy as np
from scipy.linalg.lapack import dgesdd, dgesv

from ..manifolds import q_factor


def block_gradient(gb, xb):
    """Riemannian gradient at the identity of the small problem on O(r):
    ``skew(gb xbᵀ)``, with ``gb = P G`` and ``xb = P X`` (r x p each), in O(r² p)."""
    w = gb @ xb.T
    return 0.5 * (w - w.T)


def block_delta(omega, eta, xb):
    """``(Y - I) xb`` for the Cayley rotation ``Y = (I + eta/2 omega)⁻¹(I - eta/2 omega)``.

    ``Y - I = -eta (I + eta/2 omega)⁻¹ omega`` has no cancellation, so the change of the
    block is accurate relative to its own size (``qf(I - eta omega) - I`` would carry an
    absolute error of one rounding unit), and the exact cost change of a small step is not
    lost in rounding. For skew ``omega``, ``Y`` is orthogonal with ``det Y = +1``. O(r³ + r²p).
    """
    r, p = xb.shape
    a = (0.5 * eta) * omega
    a.flat[:: r + 1] += 1.0  # I + eta/2 omega
    if r < p:  # solve with the r columns of omega rather than the p of omega xb
        return (-eta * dgesv(a, omega)[2]) @ xb
    return -eta * dgesv(a, omega @ xb)[2]


def haar_frame(z):
    """Orthonormal rows spanning the columns of the Gaussian ``z`` (n x r): ``Qᵀ``
    (C-contiguous), Haar-distributed (R's diagonal is positive)."""
    return q_factor(z).T


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
    eye = np.eye(lb.shape[0])
    w, _, vt, _ = dgesdd(-lb)
    u = w @ vt
    if special and np.linalg.det(u) < 0.0:
        u -= 2.0 * np.outer(w[:, -1], vt[-1])
    u = u + 0.5 * (u @ (eye - u.T @ u))
    return u, float(np.vdot(lb, u - eye))
