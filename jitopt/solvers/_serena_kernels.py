"""Numba inner loop of the SERENA solvers for the built-in finite-sum problems.

The kernels work in place on float64 C-contiguous arrays in the *kernel layout*: a point or
tangent vector of the sphere, Stiefel or Grassmann manifold as its transpose, shape
``(p, d)`` (a sphere point is one row), so that every inner loop runs over a contiguous
row; an SPD matrix as itself. The manifold is an integer code (its ``kernel_code``); the
problem is its data ``(data, aux, par)`` of ``problem.sample_kernel``, passed through to
its per-sample oracle ``problems._finite_sum_kernel.sample_rgrad``, so that a new built-in
problem touches no solver. Retraction and transport tell SPD apart by ``data.ndim`` (3 for
the problems on SPD, 2 for the others; pruned at compile time, so a problem compiles only
its own geometry).

The retraction of the sphere, Stiefel and Grassmann manifolds is the Q factor with a
positive diagonal in R, computed by Gram-Schmidt twice (for the thin matrices of these
problems it is as accurate as Householder's, and far cheaper to compile than a LAPACK
call); the transport is the projection onto the target's tangent space. No kernel raises:
a non-finite value is reported by a status, so no error formatting is compiled.
"""

import numpy as np
from numba import njit

from ..manifolds import FAST, INNER, axpby, layout_projection, spd_exp, spd_transport
from ..problems import sample_rgrad


@njit(fastmath=FAST, **INNER)
def _orthonormalize(y):
    """The rows of ``y`` replaced by the Q factor of the QR factorisation of ``yᵀ`` with a
    positive diagonal in R: Gram-Schmidt, each row orthogonalised twice. Returns whether
    the factor is finite (``yᵀ`` finite and of full rank)."""
    p, d = y.shape
    for j in range(p):
        for _ in range(2):
            for i in range(j):
                s = 0.0
                for k in range(d):
                    s += y[i, k] * y[j, k]
                for k in range(d):
                    y[j, k] -= s * y[i, k]
        s = 0.0
        for k in range(d):
            s += y[j, k] * y[j, k]
        if not 0.0 < s < np.inf:
            return False
        s = 1.0 / np.sqrt(s)
        for k in range(d):
            y[j, k] *= s
    return True


@njit(**INNER)
def _retract(data, out, x, t, v):
    """``out`` <- R_x(t v); returns whether it is finite."""
    if data.ndim == 3:
        return axpby(out, 1.0, spd_exp(x, t * v), 0.0, out)
    return axpby(out, 1.0, x, t, v) and _orthonormalize(out)


@njit(**INNER)
def _transport(mk, data, x, y, u):
    """u <- the transport of ``u`` from ``x`` to ``y``."""
    if data.ndim == 3:
        axpby(u, 1.0, spd_transport(x, y, u), 0.0, u)
    else:
        layout_projection(mk, y, u)


@njit(cache=True, error_model="numpy")
def run_chunk(mk, data, aux, par, x, v, xa, ga, idx, idx2, etas, betas, control,
              independent, g, all_samples):
    """Run ``etas.size`` steps of the recursive estimator on ``x`` and ``v`` in place (see
    ``_serena_steps._python_chunk``), then, unless ``all_samples`` is empty, the
    checkpoint: ``g`` <- the full Riemannian gradient at the last ``x``.

    Returns ``(status, steps, ifo, calls, cost)``, status 1 on a non-finite value, cost the
    full cost at the checkpoint.
    """
    ifo = 0
    calls = 0
    xp, gx, gp, gu, t = (np.empty_like(x), np.empty_like(x), np.empty_like(x),
                         np.empty_like(x), np.empty_like(x))
    for k in range(etas.size):
        axpby(xp, 1.0, x, 0.0, x)
        if not _retract(data, x, xp, -etas[k], v):
            return 1, k + 1, ifo, calls, np.nan
        if k >= idx.shape[0]:
            continue
        beta = betas[k]
        s = idx[k]
        if beta < 1.0 or not independent:
            sample_rgrad(mk, data, aux, par, gx, x, s)
            ifo += s.size
            calls += 1
        if beta < 1.0:
            sample_rgrad(mk, data, aux, par, gp, xp, s)
            ifo += s.size
            calls += 1
            axpby(t, 1.0, v, -1.0, gp)
            _transport(mk, data, xp, x, t)
            axpby(v, 1.0 - beta, gx, 1.0 - beta, t)
        if beta > 0.0:
            if independent:
                s = idx2[k]
                sample_rgrad(mk, data, aux, par, gu, x, s)
                ifo += s.size
                calls += 1
            else:
                axpby(gu, 1.0, gx, 0.0, gx)
            if control:
                sample_rgrad(mk, data, aux, par, gp, xa, s)
                ifo += s.size
                calls += 1
                axpby(t, 1.0, gp, -1.0, ga)
                _transport(mk, data, xa, x, t)
                axpby(gu, 1.0, gu, -1.0, t)
            axpby(v, beta, gu, 1.0 if beta < 1.0 else 0.0, v)
        if not axpby(v, 1.0, v, 0.0, v):
            return 1, k + 1, ifo, calls, np.nan
    cost = np.nan
    if all_samples.size:
        cost = sample_rgrad(mk, data, aux, par, g, x, all_samples)
    return 0, etas.size, ifo, calls, cost

