r"""Compiled kernels of the online DCA: the proximal subproblem by dual coordinate ascent.

The subproblem of one DCA step is

.. math::

    \min_{x \in C}\; P(x) = \frac1N \sum_{i=1}^N \ell(a_i^\top x; b_i) + \lambda \|x\|_1
    - y^\top x + \frac\mu2 \|x - x_t\|^2 .

Write :math:`q(x) = \lambda\|x\|_1 + \iota_C(x) - y^\top x + \frac\mu2\|x - x_t\|^2`
(:math:`\mu`-strongly convex). Its Fenchel dual is

.. math::

    \max_u\; D(u) = -\frac1N \sum_i \ell_i^*(u_i) - q^*\!\Bigl(-\frac1N A^\top u\Bigr),
    \qquad x(u) = \nabla q^*(w) = \Pi_C\bigl(S_{\lambda/\mu}(x_t + (y + w)/\mu)\bigr),

with :math:`w = -A^\top u / N` and :math:`S` the soft-thresholding (the projection of the
soft-thresholded point is the exact proximal point of :math:`\lambda\|\cdot\|_1 + \iota_C`
for boxes, :math:`\ell_1`/:math:`\ell_2`/group balls and their intersections: both are of the
form "shrink, then scale and clip" with the same complementarity conditions). One coordinate
step maximizes the quadratic minorant of :math:`D` in :math:`u_i` (stochastic dual coordinate
ascent): :math:`u_i \leftarrow \operatorname{prox}_{\sigma \ell_i^*}(u_i + \sigma a_i^\top x)`
with :math:`\sigma = \mu N / \|a_i\|^2`, computed from the loss's own proximal map by Moreau's
identity. The duality gap at :math:`x = x(u)` is
:math:`\frac1N \sum_i [\ell_i(a_i^\top x) + \ell_i^*(u_i) - u_i a_i^\top x] \ge 0`.
"""

import numpy as np
from numba import njit

from ..problems import HINGE, HUBER, LAD, SQUARED, loss_deriv, loss_value, row_dot
from ..sets import project


@njit(cache=True)
def _loss_conj(code, u, b, delta):
    """The conjugate of the loss in ``s`` at ``u`` (``u`` in its domain)."""
    if code == LAD:
        return u * b
    if code == SQUARED or code == HUBER:
        return 0.5 * u * u + u * b
    return u * b  # hinge: u * b in [-1, 0]


@njit(cache=True)
def _dual_clip(code, u, b, delta):
    """Put ``u`` back into the domain of the conjugate (a rounding-level correction)."""
    if code == LAD:
        return min(max(u, -1.0), 1.0)
    if code == HUBER:
        return min(max(u, -delta), delta)
    if code == HINGE:
        return b * min(max(b * u, -1.0), 0.0)
    return u


@njit(cache=True)
def _loss_prox(code, v, b, tau, delta):
    """argmin_s tau * loss(s; b) + (s - v)^2 / 2."""
    if code == LAD:
        r = v - b
        return b + np.sign(r) * max(abs(r) - tau, 0.0)
    if code == SQUARED:
        return (v + tau * b) / (1.0 + tau)
    if code == HUBER:
        r = v - b
        if abs(r) <= delta * (1.0 + tau):
            return b + r / (1.0 + tau)
        return v - tau * delta * np.sign(r)
    m = b * v  # hinge in the margin m = b s (b = +-1)
    if m < 1.0 - tau:
        m = m + tau
    elif m < 1.0:
        m = 1.0
    return b * m


@njit(cache=True)
def prox_point(z, lam_mu, lo, hi, fpar, ipar, groups, idx, tmp, x):
    """x <- Pi_C(S_{lam_mu}(z)), the proximal point of lam ||.||_1 + i_C (see the module)."""
    p = z.shape[0]
    if fpar is None:  # a box (decided at compile time: the projection is not compiled)
        for j in range(p):
            v = z[j]
            v = np.sign(v) * max(abs(v) - lam_mu, 0.0)
            x[j] = min(max(v, lo[j]), hi[j])
        return
    for j in range(p):
        tmp[j] = np.sign(z[j]) * max(abs(z[j]) - lam_mu, 0.0)
    project(lo, hi, fpar, ipar, groups, idx, tmp, x)


@njit(cache=True)
def _interior(code, u, b, delta):
    """Whether ``u`` is strictly inside the domain of the conjugate (or it has no bound)."""
    if code == LAD:
        return abs(u) < 1.0
    if code == HUBER:
        return abs(u) < delta
    if code == HINGE:
        return -1.0 < b * u < 0.0
    return True


@njit(cache=True)
def _coordinate_step(A, b, code, delta, i, sqi, n, mu, u, x):
    """Maximize the quadratic minorant of the dual in u_i; update u_i, return the change."""
    s = row_dot(A, i, x)
    sigma = mu * n / sqi
    v = u[i] + sigma * s
    unew = v - sigma * _loss_prox(code, v / sigma, b[i], 1.0 / sigma, delta)
    unew = _dual_clip(code, unew, b[i], delta)
    du = unew - u[i]
    u[i] = unew
    return du


@njit(cache=True)
def _certificate(A, b, code, delta, lam, y, xt, mu, u, x):
    """(duality gap, primal value) at x = x(u)."""
    n, p = A.shape
    gap = 0.0
    primal = 0.0
    for i in range(n):
        s = row_dot(A, i, x)
        li = loss_value(code, s, b[i], delta)
        primal += li
        gap += li + _loss_conj(code, u[i], b[i], delta) - u[i] * s
    gap /= n
    primal /= n
    for j in range(p):
        primal += lam * abs(x[j]) - y[j] * x[j] + 0.5 * mu * (x[j] - xt[j]) ** 2
    return gap, primal


@njit(cache=True)
def solve_prox_subproblem(A, b, code, delta, lam, y, xt, mu, lo, hi, fpar, ipar, groups,
                          idx, tol, max_epochs, x):
    """Solve the subproblem of the module docstring; write the solution into ``x``
    (``idx = arange(p)``, the coordinates handed to the projection).

    Returns ``(gap, primal, epochs)``: the duality gap at ``x`` (a certificate:
    ``P(x) - P* <= gap``), the primal value ``P(x)`` and the number of passes over the data.
    The loop stops once ``gap <= tol * max(1, |P(x)|)``.
    """
    n, p = A.shape
    tmp = np.empty(p)
    sq = np.empty(n)
    u = np.empty(n)
    z = np.empty(p)
    for j in range(p):
        z[j] = xt[j] + y[j] / mu
    for i in range(n):
        s = 0.0
        q = 0.0
        for j in range(p):
            s += A[i, j] * xt[j]
            q += A[i, j] * A[i, j]
        sq[i] = q
        u[i] = loss_deriv(code, s, b[i], delta)
        c = u[i] / (n * mu)
        for j in range(p):
            z[j] -= c * A[i, j]
    lam_mu = lam / mu
    prox_point(z, lam_mu, lo, hi, fpar, ipar, groups, idx, tmp, x)
    gap = np.inf
    primal = np.inf
    epochs = 0
    active = np.empty(n, dtype=np.int64)
    while True:
        gap, primal = _certificate(A, b, code, delta, lam, y, xt, mu, u, x)
        if gap <= tol * max(1.0, abs(primal)) or epochs >= max_epochs:
            break
        # one pass over every coordinate; the ones that moved or sit inside the domain of
        # the conjugate stay active (shrinking), the others are at a bound and stay there;
        # then passes over the active set until they stop moving x
        nact = 0
        for i in range(n):
            if sq[i] != 0.0:
                active[nact] = i
                nact += 1
        for sweep in range(101):
            if sweep and epochs >= max_epochs:
                break
            epochs += 1
            moved = 0.0
            keep = 0
            for k in range(nact):
                i = active[k]
                du = _coordinate_step(A, b, code, delta, i, sq[i], n, mu, u, x)
                if du != 0.0:
                    c = du / (n * mu)
                    moved = max(moved, abs(c) * np.sqrt(sq[i]))
                    for j in range(p):  # z <- z - c a_i and x <- x(z)
                        z[j] -= c * A[i, j]
                    prox_point(z, lam_mu, lo, hi, fpar, ipar, groups, idx, tmp, x)
                if sweep == 0 and (du != 0.0 or _interior(code, u[i], b[i], delta)):
                    active[keep] = i
                    keep += 1
            if sweep == 0:
                nact = keep
            else:
                xx = 0.0
                for j in range(p):
                    xx += x[j] * x[j]
                if moved <= 1e-3 * np.sqrt(tol) * (1.0 + np.sqrt(xx)):
                    break
    return max(gap, 0.0), primal, epochs
