"""Numba inner loop of the SERENA solvers for the built-in finite-sum problems.

One kernel, :func:`run_chunk`, with one specialisation: the problem and the manifold are
integer codes dispatched inside it to module-level jitted functions (called as globals, so
the kernel is cached across processes), points are 2-D float64 arrays (a sphere point is a
column) and the samples are the rows of a 2-D array.
"""

import numpy as np
from numba import njit

from ..manifolds._kernels import (horizontal_projection, qr_retraction, spd_exp,
                                  spd_transport, stiefel_projection, sym)
from ..problems._finite_sum import (KARCHER, PCA, _karcher_log_sum, karcher_rgrad, pca_egrad,
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


RGRAD, TRANSPORT, RETRACT = range(3)


@njit(cache=True)
def _project(mk, x, u):
    if mk == SPHERE:
        return u - np.sum(x * u) * x
    if mk == STIEFEL:
        return stiefel_projection(x, u)
    if mk == GRASSMANN:
        return horizontal_projection(x, u)
    return sym(u)


@njit(cache=True)
def geometry(op, kind, mk, data, aux, par, x, y, u, idx):
    """All the kernel's oracles in one function (one compiled unit instead of four):

    - ``op == RGRAD``: Riemannian gradient at ``x`` of the mean of f_i over ``idx``;
    - ``op == TRANSPORT``: transport of ``u`` from ``x`` to ``y``;
    - ``op == RETRACT``: the retraction R_x(u) (C-contiguous).
    """
    if op == RETRACT:
        if mk == SPHERE:
            z = x + u
            return z / np.sqrt(np.sum(z * z))
        if mk == SPD_EXP:
            return np.ascontiguousarray(spd_exp(x, u))
        return np.ascontiguousarray(qr_retraction(x, u))
    if op == TRANSPORT:
        if mk == SPD_EXP:
            return spd_transport(x, y, u)
        return _project(mk, y, u)
    if kind == KARCHER:
        return karcher_rgrad(x, data, idx)
    if kind == PCA:
        return _project(mk, x, pca_egrad(x, data, idx))
    return _project(mk, x, robust_egrad(x, data, aux, par, idx))


@njit(cache=True)
def run_chunk(kind, mk, data, aux, par, x, v, xa, ga, idx, idx2, etas, betas, control,
              independent):
    """Run ``etas.size`` steps of the recursive estimator; see ``serena._python_chunk``.

    Returns ``(status, steps, ifo, calls, x, v)``, status 1 on a non-finite value.
    """
    ifo = 0
    calls = 0
    none = np.zeros(0, dtype=np.int64)
    for k in range(etas.size):
        xp = x
        x = geometry(RETRACT, kind, mk, data, aux, par, xp, xp, -etas[k] * v, none)
        if not np.all(np.isfinite(x)):
            return 1, k + 1, ifo, calls, x, v
        if k >= idx.shape[0]:
            continue
        beta = betas[k]
        s = idx[k]
        new = np.zeros_like(x)
        gx = new
        if beta < 1.0 or not independent:
            gx = geometry(RGRAD, kind, mk, data, aux, par, x, x, x, s)
            ifo += s.size
            calls += 1
        if beta < 1.0:
            gp = geometry(RGRAD, kind, mk, data, aux, par, xp, xp, xp, s)
            ifo += s.size
            calls += 1
            tv = geometry(TRANSPORT, kind, mk, data, aux, par, xp, x, v - gp, s)
            new = (1.0 - beta) * (gx + tv)
        if beta > 0.0:
            if independent:
                s = idx2[k]
                gu = geometry(RGRAD, kind, mk, data, aux, par, x, x, x, s)
                ifo += s.size
                calls += 1
            else:
                gu = gx
            if control:
                gs = geometry(RGRAD, kind, mk, data, aux, par, xa, xa, xa, s)
                ifo += s.size
                calls += 1
                gu = gu - geometry(TRANSPORT, kind, mk, data, aux, par, xa, x, gs - ga, s)
            new = new + beta * gu
        v = new
        if not np.all(np.isfinite(v)):
            return 1, k + 1, ifo, calls, x, v
    return 0, etas.size, ifo, calls, x, v


@njit(cache=True)
def full_cost_and_rgrad(kind, mk, data, aux, par, x):
    """Full cost and Riemannian gradient in one sweep over the samples (shared work)."""
    n = data.shape[0]
    if kind == KARCHER:
        s, _, acc, sq = _karcher_log_sum(x, data, np.arange(n))
        return 0.5 * np.sum(sq) / n, sym(s @ acc @ s) * (-1.0 / n)
    zx = data @ x
    if kind == PCA:
        return -np.sum(zx * zx) / n, _project(mk, x, (-2.0 / n) * (data.T @ zx))
    total = 0.0
    for i in range(n):
        r = np.sqrt(par + max(aux[i] - np.sum(zx[i] * zx[i]), 0.0))
        total += r
        zx[i] /= r
    return total / n, _project(mk, x, (-1.0 / n) * (data.T @ zx))
