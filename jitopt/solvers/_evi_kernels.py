r"""Numba kernels of the EVI solver: regret learners over affine deviations, fixed points,
structured operators and the closed-form gaps.

Internal coordinates. Every closed-form domain is handled in coordinates ``y`` in which it is
either a product of standard simplices (``KIND_PRODUCT``; one block for a simplex) or the unit
box :math:`[0, 1]^d` (``KIND_BOX``); the original point is ``x = shift + scale * y`` and the
operator in ``y`` coordinates is ``scale * F(x)``, so inner products, and hence all gaps, are
the same in both coordinate systems.

Learner state (all 1-D float arrays so that every kernel has a single specialization):

* ``Q``: the regrets of the column learners. ``KIND_PRODUCT``: the learner of column ``b`` of
  the block ``S_ij`` (an ``m_i``-simplex) is ``Q[poff[i*n+j] + b*m_i : ... + m_i]``.
  ``KIND_BOX``: the learner of row ``r`` is ``Q[r*k : (r+1)*k]`` over the ``k = 2d + 2`` experts
  ``0, 1, y_0..y_{d-1}, 1-y_0..1-y_{d-1}``.
* ``Ql``: the source learners ``lambda_i`` (``KIND_PRODUCT`` with all deviations, ``n x n``).
* ``P``, ``Pl``: the last instantaneous regrets (the predictions of predictive RM+).
* ``S``: the current strategies, laid out like ``Q`` (``Sl`` like ``Ql``).

Integer parameters ``ip``: kind, alce (0/1), learner, n, d, op_kind, weighting, round counter.
"""

import numpy as np
from numba import njit

from ..problems._vi import normal_form_operator

KIND_PRODUCT = 0
KIND_BOX = 1

LEARNER_RMP = 0  # regret matching+
LEARNER_PRMP = 1  # predictive regret matching+
LEARNER_HEDGE = 2  # Hedge with a scale-free step

OP_EXTERNAL = -1
OP_AFFINE = 0  # F(x) = A x + b
OP_NORMAL_FORM = 1  # F_i(x) = -grad_{x_i} u_i(x), payoff tensors flattened row-major

# indices into ip
I_KIND, I_ALCE, I_LEARNER, I_N, I_D, I_OP, I_WEIGHT, I_T = range(8)


# --------------------------------------------------------------------------------------
# simplex learners
# --------------------------------------------------------------------------------------

@njit(cache=True)
def _play(q, p, lo, k, learner, eta, out, olo):
    """Strategy of one simplex learner (regrets ``q[lo:lo+k]``) into ``out[olo:olo+k]``."""
    if learner == LEARNER_HEDGE:
        qmax = -np.inf
        for a in range(k):
            qmax = max(qmax, q[lo + a])
        s = 0.0
        for a in range(k):
            v = np.exp(eta * (q[lo + a] - qmax))
            out[olo + a] = v
            s += v
        for a in range(k):
            out[olo + a] /= s
        return
    s = 0.0
    for a in range(k):
        v = q[lo + a]
        if learner == LEARNER_PRMP:
            v += p[lo + a]
        v = max(v, 0.0)
        out[olo + a] = v
        s += v
    if s > 0.0:
        for a in range(k):
            out[olo + a] /= s
    else:
        for a in range(k):
            out[olo + a] = 1.0 / k


@njit(cache=True)
def _learn(q, p, lo, k, learner, w, wlo, loss, weight):
    """Feed the expert losses ``loss[0:k]`` (scaled by ``weight``) to one simplex learner
    that played ``w[wlo:wlo+k]``; return the largest instantaneous regret magnitude."""
    played = 0.0
    for a in range(k):
        played += w[wlo + a] * loss[a]
    big = 0.0
    for a in range(k):
        r = weight * (played - loss[a])
        big = max(big, abs(r))
        if learner == LEARNER_HEDGE:
            q[lo + a] += r
        else:
            q[lo + a] = max(q[lo + a] + r, 0.0)
            p[lo + a] = r
    return big


@njit(cache=True)
def _eta(learner, aux, kmax):
    """Hedge step sqrt(log k / sum of squared regret ranges) (scale-free)."""
    if learner != LEARNER_HEDGE:
        return 0.0
    return np.sqrt(2.0 * np.log(max(kmax, 2)) / max(aux[0], 1e-300))


# --------------------------------------------------------------------------------------
# propose: strategies -> affine map (K, c) -> fixed point y
# --------------------------------------------------------------------------------------

@njit(cache=True)
def propose(ip, off, poff, Q, P, Ql, Pl, S, Sl, aux, K, c, u, delta, y):
    """One round's proposal: the learners' map ``(K, c)`` and its fixed point ``y``.

    Returns the fixed-point residual ``max |K y + c - y|`` after cleaning ``y`` into the
    domain.
    """
    kind, alce, learner, n, d = ip[I_KIND], ip[I_ALCE], ip[I_LEARNER], ip[I_N], ip[I_D]
    K[:, :] = 0.0
    c[:] = 0.0
    if kind == KIND_PRODUCT:
        kmax = 1
        for i in range(n):
            kmax = max(kmax, off[i + 1] - off[i])
        kmax = max(kmax, n)
        eta = _eta(learner, aux, kmax)
        for i in range(n):
            mi = off[i + 1] - off[i]
            if alce:
                _play(Ql, Pl, i * n, n, learner, eta, Sl, i * n)
            for j in range(n):
                if not alce and j != i:
                    continue
                lam = Sl[i * n + j] if alce else 1.0
                mj = off[j + 1] - off[j]
                for b in range(mj):
                    lo = poff[i * n + j] + b * mi
                    _play(Q, P, lo, mi, learner, eta, S, lo)
                    for a in range(mi):
                        K[off[i] + a, off[j] + b] = lam * S[lo + a]
    else:
        k = 2 * d + 2
        eta = _eta(learner, aux, k)
        for r in range(d):
            lo = r * k
            _play(Q, P, lo, k, learner, eta, S, lo)
            c[r] = S[lo + 1]
            for j in range(d):
                K[r, j] = S[lo + 2 + j] - S[lo + 2 + d + j]
                c[r] += S[lo + 2 + d + j]
    blockdiag = kind == KIND_PRODUCT and not alce
    return fixed_point(K, c, u, delta, off, kind, blockdiag, y)


@njit(cache=True)
def fixed_point(K, c, u, delta, off, kind, blockdiag, y):
    r"""Fixed point of ``y -> K y + c`` in the domain by the perturbed solve
    :math:`(I - (1-\delta)K) y = (1-\delta)c + \delta u` (``u`` an interior point), cleaned into
    the domain; returns the residual ``max |K y + c - y|``."""
    d = K.shape[0]
    if blockdiag:
        n = off.shape[0] - 1
        for i in range(n):
            lo, hi = off[i], off[i + 1]
            m = hi - lo
            Mb = np.empty((m, m))
            rhs = np.empty(m)
            for a in range(m):
                for b in range(m):
                    Mb[a, b] = -(1.0 - delta) * K[lo + a, lo + b]
                Mb[a, a] += 1.0
                rhs[a] = (1.0 - delta) * c[lo + a] + delta * u[lo + a]
            y[lo:hi] = np.linalg.solve(Mb, rhs)
    else:
        Mb = -(1.0 - delta) * K
        for a in range(d):
            Mb[a, a] += 1.0
        rhs = (1.0 - delta) * c + delta * u
        y[:] = np.linalg.solve(Mb, rhs)
    clean(kind, off, y)
    res = 0.0
    for a in range(d):
        v = c[a] - y[a]
        for b in range(d):
            v += K[a, b] * y[b]
        res = max(res, abs(v))
    return res


@njit(cache=True)
def clean(kind, off, y):
    """Clip rounding errors: nonnegative blocks summing to one, or the unit box."""
    if kind == KIND_BOX:
        for a in range(y.shape[0]):
            y[a] = min(max(y[a], 0.0), 1.0)
        return
    for i in range(off.shape[0] - 1):
        s = 0.0
        for a in range(off[i], off[i + 1]):
            y[a] = max(y[a], 0.0)
            s += y[a]
        for a in range(off[i], off[i + 1]):
            y[a] /= s


# --------------------------------------------------------------------------------------
# observe: feed the loss (K, c) -> <f, K y + c> to the learners, accumulate the sums
# --------------------------------------------------------------------------------------

@njit(cache=True)
def observe(ip, off, poff, Q, P, Ql, Pl, S, Sl, aux, y, f, M, Fbar, sacc):
    """Update the learners with the operator value ``f`` at ``y`` and add the round (weight 1
    or ``t``) to the running sums ``M += w f y^T``, ``Fbar += w f``, ``sacc[0] += w <f, y>``,
    ``sacc[1] += w``; advances the round counter ``ip[I_T]``."""
    kind, alce, learner, n, d = ip[I_KIND], ip[I_ALCE], ip[I_LEARNER], ip[I_N], ip[I_D]
    ip[I_T] += 1
    t = ip[I_T]
    weight = float(t) if ip[I_WEIGHT] == 1 else 1.0
    big = 0.0
    if kind == KIND_PRODUCT:
        mmax = 1
        for i in range(n):
            mmax = max(mmax, off[i + 1] - off[i])
        loss = np.empty(mmax)
        srcloss = np.empty(n)
        for i in range(n):
            mi = off[i + 1] - off[i]
            for j in range(n):
                if not alce and j != i:
                    continue
                mj = off[j + 1] - off[j]
                src = 0.0  # <f_i, S_ij y_j>, the source loss of lambda_i
                for b in range(mj):
                    lo = poff[i * n + j] + b * mi
                    yb = y[off[j] + b]
                    for a in range(mi):
                        loss[a] = yb * f[off[i] + a]
                        src += S[lo + a] * loss[a]
                    big = max(big, _learn(Q, P, lo, mi, learner, S, lo, loss, weight))
                srcloss[j] = src
            if alce:
                big = max(big, _learn(Ql, Pl, i * n, n, learner, Sl, i * n, srcloss, weight))
    else:
        k = 2 * d + 2
        loss = np.empty(k)
        for r in range(d):
            fr = f[r]
            loss[0] = 0.0
            loss[1] = fr
            for j in range(d):
                loss[2 + j] = fr * y[j]
                loss[2 + d + j] = fr * (1.0 - y[j])
            big = max(big, _learn(Q, P, r * k, k, learner, S, r * k, loss, weight))
    aux[0] += big * big
    sy = 0.0
    for a in range(d):
        wf = weight * f[a]
        Fbar[a] += wf
        sy += wf * y[a]
        for b in range(d):
            M[a, b] += wf * y[b]
    sacc[0] += sy
    sacc[1] += weight


# --------------------------------------------------------------------------------------
# structured operators and the jitted loop
# --------------------------------------------------------------------------------------

@njit(cache=True)
def operator(op_kind, A, bvec, U, off, x, out):
    """``out <- F(x)`` for an affine operator or the VI operator of a normal-form game."""
    if op_kind == OP_AFFINE:
        d = x.shape[0]
        for a in range(d):
            v = bvec[a]
            for b in range(d):
                v += A[a, b] * x[b]
            out[a] = v
        return
    normal_form_operator(U, off, x, out)


@njit(cache=True)
def run_rounds(nrounds, ip, off, poff, Q, P, Ql, Pl, S, Sl, aux, K, c, u, delta,
               shift, Tm, A, bvec, U, xoff, M, Fbar, sacc, Y, Fv, FXv, res):
    """Run ``nrounds`` rounds with a structured operator (``x = shift + Tm y``, the operator
    in internal coordinates is ``Tm^T F(x)``); round ``r`` stores its point in ``Y[r]``, its
    operator value in ``Fv[r]`` (internal coordinates) and ``FXv[r]`` (original ones) and
    its fixed-point residual in
    ``res[r]``. Returns the number of rounds done: ``r < nrounds`` if ``F`` was not finite at
    round ``r`` (that round is not fed to the learners)."""
    dy = ip[I_D]
    dx = Tm.shape[0]
    y = np.empty(dy)
    x = np.empty(dx)
    fx = np.empty(dx)
    fy = np.empty(dy)
    for r in range(nrounds):
        res[r] = propose(ip, off, poff, Q, P, Ql, Pl, S, Sl, aux, K, c, u, delta, y)
        for a in range(dx):
            v = shift[a]
            for b in range(dy):
                v += Tm[a, b] * y[b]
            x[a] = v
        operator(ip[I_OP], A, bvec, U, xoff, x, fx)
        for a in range(dx):
            if not np.isfinite(fx[a]):
                return r
        for b in range(dy):
            v = 0.0
            for a in range(dx):
                v += Tm[a, b] * fx[a]
            fy[b] = v
        observe(ip, off, poff, Q, P, Ql, Pl, S, Sl, aux, y, fy, M, Fbar, sacc)
        Y[r] = y
        Fv[r] = fy
        FXv[r] = fx
    return nrounds


# --------------------------------------------------------------------------------------
# closed-form gaps from the sums
# --------------------------------------------------------------------------------------

@njit(cache=True)
def gaps(kind, off, M, Fbar, s_tot, W, out):
    r"""Closed-form gaps of the mixture with sums ``M = sum w f y^T``, ``Fbar = sum w f``,
    ``s_tot = sum w <f, y>`` and total weight ``W``.

    ``KIND_PRODUCT`` with ``n`` blocks: ``out`` has shape (3, n), rows Phi_LIN (ALCE),
    per-block linear (CE) and constant (CCE) gaps of each block, e.g.
    :math:`\mathrm{gap}^{ALCE}_i = s_i - \max_j \ldots = s_i - \min_j \sum_b \min_a M_{ij}[a,b]`.
    ``KIND_BOX``: ``out`` has shape (3, 1): Phi_LIN, Phi_LIN, constant.
    """
    if kind == KIND_BOX:
        d = M.shape[0]
        lin = 0.0
        con = 0.0
        for r in range(d):
            m = min(0.0, Fbar[r])
            con += m
            for j in range(d):
                m = min(m, M[r, j], Fbar[r] - M[r, j])
            lin += m
        out[0, 0] = (s_tot - lin) / W
        out[1, 0] = out[0, 0]
        out[2, 0] = (s_tot - con) / W
        return
    n = off.shape[0] - 1
    for i in range(n):
        si = 0.0
        for a in range(off[i], off[i + 1]):
            si += M[a, a]
        best = np.inf
        ce = 0.0
        for j in range(n):
            v = 0.0
            for b in range(off[j], off[j + 1]):
                m = np.inf
                for a in range(off[i], off[i + 1]):
                    m = min(m, M[a, b])
                v += m
            best = min(best, v)
            if j == i:
                ce = v
        cmin = np.inf
        for a in range(off[i], off[i + 1]):
            cmin = min(cmin, Fbar[a])
        out[0, i] = (si - best) / W
        out[1, i] = (si - ce) / W
        out[2, i] = (si - cmin) / W
