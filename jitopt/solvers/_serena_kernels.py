"""Numba inner loop of the SERENA solvers for the built-in finite-sum problems.

Two cached kernels, :func:`run_chunk` and :func:`full_cost_and_rgrad`, whose oracles are
module-level jitted functions called as globals (so the kernels are cached across
processes). Points are 2-D float64 arrays (a sphere point is a column). The manifold is an
integer code; the problem is told apart by the types of its data, which lets Numba drop the
other problems' code at compile time (branches on ``data.ndim`` and on ``aux is None`` are
pruned before type inference), so a problem compiles only its own oracle:

- PCA: ``data`` the samples ``z`` as rows (2-D), ``aux`` ``None``;
- robust PCA: ``data`` the samples (2-D), ``aux`` their squared norms, ``par`` eps²;
- Karcher mean: ``data`` the matrices, shape ``(n, d, d)``, ``aux`` ``None``.
"""

import numpy as np
from numba import njit

from ..manifolds._kernels import (horizontal_projection, qr_retraction, spd_exp,
                                  spd_transport, stiefel_projection, sym)
from ..problems._finite_sum import (ROBUST_PCA, _karcher_log_sum, karcher_rgrad, pca_egrad,
                                    robust_egrad)

# manifold codes (the default retraction of each manifold; others run the Python loop)
SPHERE, STIEFEL, GRASSMANN, SPD_EXP = range(4)


def manifold_code(manifold):
    """The code of a manifold the kernel handles, or ``None``."""
    from ..manifolds import SPD, Grassmann, Orthogonal, Sphere, Stiefel

    name = manifold.retraction_name
    if isinstance(manifold, Sphere) and len(manifold.shape) == 1 and name == "projection":
        return SPHERE
    if isinstance(manifold, Stiefel) and not isinstance(manifold, Orthogonal) and name == "qr":
        return STIEFEL
    if isinstance(manifold, Grassmann) and name == "qr":
        return GRASSMANN
    if isinstance(manifold, SPD) and name == "exp":
        return SPD_EXP
    return None


def kernel_data(sample_kernel):
    """``(data, aux, par)`` for the kernels from a problem's ``sample_kernel``."""
    kind, data, aux, par = sample_kernel
    return data, (aux if kind == ROBUST_PCA else None), par


@njit(cache=True, inline="always")
def _project(mk, x, u):
    """Projection onto the tangent (horizontal) space at x of the sphere, Stiefel or
    Grassmann."""
    if mk == SPHERE:
        return u - np.sum(x * u) * x
    if mk == STIEFEL:
        return stiefel_projection(x, u)
    return horizontal_projection(x, u)


@njit(cache=True)
def _rgrad(mk, data, aux, par, x, idx):
    """Riemannian gradient at ``x`` of the mean of f_i over ``idx``."""
    if data.ndim == 3:
        return karcher_rgrad(x, data, idx)
    if aux is None:
        return _project(mk, x, pca_egrad(x, data, idx))
    return _project(mk, x, robust_egrad(x, data, aux, par, idx))


@njit(cache=True)
def _retract(mk, data, x, u):
    """The retraction R_x(u), C-contiguous (SPD exp for the Karcher mean)."""
    if data.ndim == 3:
        return np.ascontiguousarray(spd_exp(x, u))
    if mk == SPHERE:
        z = x + u
        return z / np.sqrt(np.sum(z * z))
    return qr_retraction(x, u)


@njit(cache=True)
def _transport(mk, data, x, y, u):
    """Vector transport of ``u`` from ``x`` to ``y``."""
    if data.ndim == 3:
        return spd_transport(x, y, u)
    return _project(mk, y, u)


@njit(cache=True)
def run_chunk(mk, data, aux, par, x, v, xa, ga, idx, idx2, etas, betas, control,
              independent):
    """Run ``etas.size`` steps of the recursive estimator; see ``serena._python_chunk``.

    Returns ``(status, steps, ifo, calls, x, v)``, status 1 on a non-finite value.
    """
    ifo = 0
    calls = 0
    for k in range(etas.size):
        xp = x
        x = _retract(mk, data, xp, -etas[k] * v)
        if not np.all(np.isfinite(x)):
            return 1, k + 1, ifo, calls, x, v
        if k >= idx.shape[0]:
            continue
        beta = betas[k]
        s = idx[k]
        new = np.zeros_like(x)
        gx = new
        if beta < 1.0 or not independent:
            gx = _rgrad(mk, data, aux, par, x, s)
            ifo += s.size
            calls += 1
        if beta < 1.0:
            gp = _rgrad(mk, data, aux, par, xp, s)
            ifo += s.size
            calls += 1
            new = (1.0 - beta) * (gx + _transport(mk, data, xp, x, v - gp))
        if beta > 0.0:
            if independent:
                s = idx2[k]
                gu = _rgrad(mk, data, aux, par, x, s)
                ifo += s.size
                calls += 1
            else:
                gu = gx
            if control:
                gs = _rgrad(mk, data, aux, par, xa, s)
                ifo += s.size
                calls += 1
                gu = gu - _transport(mk, data, xa, x, gs - ga)
            new = new + beta * gu
        v = new
        if not np.all(np.isfinite(v)):
            return 1, k + 1, ifo, calls, x, v
    return 0, etas.size, ifo, calls, x, v


@njit(cache=True)
def full_cost_and_rgrad(mk, data, aux, par, x):
    """Full cost and Riemannian gradient in one sweep over the samples (shared work)."""
    n = data.shape[0]
    if data.ndim == 3:
        s, _, acc, sq = _karcher_log_sum(x, data, np.arange(n))
        return 0.5 * np.sum(sq) / n, sym(s @ acc @ s) * (-1.0 / n)
    zx = data @ x
    if aux is None:
        return -np.sum(zx * zx) / n, _project(mk, x, (-2.0 / n) * (data.T @ zx))
    total = 0.0
    for i in range(n):
        r = np.sqrt(par + max(aux[i] - np.sum(zx[i] * zx[i]), 0.0))
        total += r
        zx[i] /= r
    return total / n, _project(mk, x, (-1.0 / n) * (data.T @ zx))
