"""Numba inner loop of the SERENA solvers for the built-in finite-sum problems.

The kernels work in place on float64 C-contiguous arrays in the *kernel layout*: a point or
tangent vector of the sphere, Stiefel or Grassmann manifold as its transpose, shape
``(p, d)`` (a sphere point is one row), so that every inner loop runs over a contiguous
row; an SPD matrix as itself. The manifold is an integer code (its ``kernel_code``); the
problem is told apart by the types of its data ``(data, aux, par)`` of
``problem.sample_kernel``, which lets Numba drop the other problems' code at compile time (a
branch on ``data.ndim`` is pruned before type inference), so a problem compiles only its own
oracle:

- PCA and robust PCA: ``data`` the samples as rows (2-D), ``aux`` their squared norms
  (empty for PCA), ``par`` eps²; both share one specialisation;
- Karcher mean: ``data`` the matrices, shape ``(n, d, d)``.

The retraction of the sphere, Stiefel and Grassmann manifolds is the Q factor with a
positive diagonal in R, computed by Gram-Schmidt twice (for the thin matrices of these
problems it is as accurate as Householder's, and far cheaper to compile than a LAPACK
call); the transport is the projection onto the target's tangent space. No kernel raises:
a non-finite value is reported by a status, so no error formatting is compiled.
"""

import numpy as np
from numba import njit

from ..manifolds._kernels import SPD_EXP, STIEFEL, spd_exp, spd_transport, sym
from ..problems._finite_sum import _karcher_log_sum, sample_gradients

# reassociated sums (so that they vectorise) in the loops over a row; no assumption that
# values are finite, so the finiteness tests keep their meaning
_FAST = {"reassoc", "contract"}
# helpers called only from kernels: no Python wrapper, no division checks
_INNER = {"cache": True, "no_cpython_wrapper": True, "error_model": "numpy"}


@njit(fastmath=_FAST, **_INNER)
def _axpby(out, a, x, b, y):
    """out = a x + b y elementwise (``y`` unread when b = 0); returns whether every entry
    of ``out`` is finite."""
    acc = 0.0
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            o = a * x[i, j] + (b * y[i, j] if b != 0.0 else 0.0)
            out[i, j] = o
            acc += o * 0.0  # NaN after an inf or a NaN entry
    return acc == 0.0


@njit(fastmath=_FAST, **_INNER)
def _project(mk, x, u):
    """u <- P_x(u) in the kernel layout: the rows of u minus sym(u xᵀ) x (Stiefel) or
    (u xᵀ) x (sphere, Grassmann), i.e. U - X sym(XᵀU) or U - X XᵀU for U = uᵀ, X = xᵀ."""
    p, d = x.shape
    a = np.empty((p, p))
    for i in range(p):
        for j in range(p):
            s = 0.0
            for k in range(d):
                s += u[i, k] * x[j, k]
            a[i, j] = s
    for i in range(p):
        for j in range(p):
            c = 0.5 * (a[i, j] + a[j, i]) if mk == STIEFEL else a[i, j]
            for k in range(d):
                u[i, k] -= c * x[j, k]


@njit(fastmath=_FAST, **_INNER)
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


@njit(**_INNER)
def _retract(data, out, x, t, v):
    """``out`` <- R_x(t v); returns whether it is finite."""
    if data.ndim == 3:
        return _axpby(out, 1.0, spd_exp(x, t * v), 0.0, out)
    return _axpby(out, 1.0, x, t, v) and _orthonormalize(out)


@njit(**_INNER)
def _rgrad(mk, data, aux, par, out, x, idx):
    """``out`` <- the Riemannian gradient at ``x`` of the mean of f_i over ``idx``; returns
    that mean cost."""
    if data.ndim == 3:
        s, _, acc, sq = _karcher_log_sum(x, data, idx)
        _axpby(out, -1.0 / idx.size, sym(s @ acc @ s), 0.0, out)
        return 0.5 * np.sum(sq) / idx.size
    cost = sample_gradients(out, x, data, aux, par, idx)
    _project(mk, x, out)
    return cost


@njit(**_INNER)
def _transport(mk, data, x, y, u):
    """u <- the transport of ``u`` from ``x`` to ``y``."""
    if data.ndim == 3:
        _axpby(u, 1.0, spd_transport(x, y, u), 0.0, u)
    else:
        _project(mk, y, u)


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
        _axpby(xp, 1.0, x, 0.0, x)
        if not _retract(data, x, xp, -etas[k], v):
            return 1, k + 1, ifo, calls, np.nan
        if k >= idx.shape[0]:
            continue
        beta = betas[k]
        s = idx[k]
        if beta < 1.0 or not independent:
            _rgrad(mk, data, aux, par, gx, x, s)
            ifo += s.size
            calls += 1
        if beta < 1.0:
            _rgrad(mk, data, aux, par, gp, xp, s)
            ifo += s.size
            calls += 1
            _axpby(t, 1.0, v, -1.0, gp)
            _transport(mk, data, xp, x, t)
            _axpby(v, 1.0 - beta, gx, 1.0 - beta, t)
        if beta > 0.0:
            if independent:
                s = idx2[k]
                _rgrad(mk, data, aux, par, gu, x, s)
                ifo += s.size
                calls += 1
            else:
                _axpby(gu, 1.0, gx, 0.0, gx)
            if control:
                _rgrad(mk, data, aux, par, gp, xa, s)
                ifo += s.size
                calls += 1
                _axpby(t, 1.0, gp, -1.0, ga)
                _transport(mk, data, xa, x, t)
                _axpby(gu, 1.0, gu, -1.0, t)
            _axpby(v, beta, gu, 1.0 if beta < 1.0 else 0.0, v)
        if not _axpby(v, 1.0, v, 0.0, v):
            return 1, k + 1, ifo, calls, np.nan
    cost = np.nan
    if all_samples.size:
        cost = _rgrad(mk, data, aux, par, g, x, all_samples)
    return 0, etas.size, ifo, calls, cost

