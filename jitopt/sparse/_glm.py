r"""The Newton refit on a fixed support for generalized linear losses (Poisson), the refit
step of :func:`jitopt.sparse.iht` for problems with a ``newton_system``."""

import numpy as np

from .._core.result import NonFiniteOracle

__all__ = ["newton_refit"]

_ARMIJO = 1e-4
_GTOL = 1e-10  # projected-gradient norm, relative to that of the start


def newton_refit(problem, op, x, maxiter=100):
    r"""``(w, R(w))``: :math:`\min\{R(w) : w\in\Gamma,\ \operatorname{supp} w\subseteq S\}`
    for the support :math:`S` of ``x`` and a box :math:`\Gamma` (``op.lower``,
    ``op.upper``), the free coordinates of ``op`` (the intercept) unbounded, by projected
    Newton (Bertsekas 1982): the coordinates at a bound whose gradient points out of the box
    stay fixed, the others take the Newton step on their block of the Hessian
    (``problem.newton_system``), projected onto the box and backtracked to the Armijo
    condition; it stops once the projected gradient norm is :math:`10^{-10}` times that of
    the start, or a step no longer decreases :math:`R`. The objective never increases.
    """
    d, p = x.shape[0], op.p
    support = np.flatnonzero(x[:p])
    idx = np.concatenate([support, np.arange(p, d)])
    free_tail = np.full(d - p, np.inf)
    lo = np.concatenate([op.lower[support], -free_tail])
    hi = np.concatenate([op.upper[support], free_tail])
    v = np.clip(x[idx], lo, hi)

    def point(v):
        w = np.zeros(d)
        w[idx] = v
        return w

    f, g, H = problem.newton_system(point(v), support)
    g_start = None
    for _ in range(maxiter):
        fixed = ((v <= lo) & (g > 0)) | ((v >= hi) & (g < 0))
        pg = np.where(fixed, 0.0, g)
        pg_norm = float(np.linalg.norm(pg))
        g_start = pg_norm if g_start is None else g_start
        if pg_norm <= _GTOL * max(g_start, 1e-300) or not np.isfinite(pg_norm):
            break
        free = ~fixed
        direction = np.zeros_like(v)
        direction[free] = -np.linalg.lstsq(H[np.ix_(free, free)], g[free], rcond=None)[0]
        if not g @ direction < 0:  # (a singular block): the projected gradient instead
            direction = -pg
        t = 1.0
        while t > 1e-12:
            v_t = np.clip(v + t * direction, lo, hi)
            try:
                f_t = problem.cost(point(v_t))
            except NonFiniteOracle:  # e^eta overflowed: a step too long
                f_t = np.inf
            if f_t <= f + _ARMIJO * (g @ (v_t - v)):
                break
            t *= 0.5
        if not f_t < f:
            break
        v = v_t
        f, g, H = problem.newton_system(point(v), support)
    return point(v), f
