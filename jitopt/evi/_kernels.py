r"""Numba kernels of the EVI solver: the regret learners over affine deviations, the fixed
points and the compiled loop.

Internal coordinates. Every closed-form domain is handled in coordinates ``y`` in which it is
either a product of standard simplices (``KIND_PRODUCT``; one block for a simplex or the
vertices of a polytope) or the unit box :math:`[0, 1]^d` (``KIND_BOX``); the original point
is ``x = shift + T y`` and the operator in ``y`` coordinates is ``T^T F(x)``, so inner
products, and hence all gaps, are the same in both coordinate systems.

The learners: one simplex learner per group of *experts* (the groups of
:meth:`~jitopt.solvers._domains.EVIDomain.experts`). ``KIND_BOX``: group :math:`r` is
row :math:`r` of the map, over the :math:`2d + 2` experts :math:`0, 1, y_j, 1 - y_j`.
``KIND_PRODUCT``: expert :math:`e` is the map :math:`y \mapsto y_{q_e} e_{p_e}`, one group per
column :math:`q` of a block :math:`S_{ij}` of the map, so :math:`K_{p_e q_e} = \pi_e` and the
expert's loss in a round is :math:`f_{p_e} y_{q_e}`. With all affine deviations on a product
of simplices (the regret circuit of Fujii's lemma) the group of a column of :math:`S_{ij}` is
scaled by the strategy of its *source* expert ``src[g]``, the entry :math:`\lambda_{ij}` of
the learner :math:`\lambda_i` (groups after the first ``ip[I_NS]``), whose loss is
:math:`\langle f_i, S_{ij} y_j\rangle`.

State: ``Q`` the regrets, ``P`` the last instantaneous regrets (the predictions of predictive
RM+), ``S`` the strategies, one entry per expert (the source experts last); ``aux[0]`` the sum
of the squared regret ranges (the Hedge step).

Integer parameters ``ip``: kind, learner, groups with a map (the others are sources),
block-diagonal maps (0/1), largest group, operator kind, weighting, round counter.
"""

import sys

import numpy as np
from numba import njit

from .._interpreted import interpreted, kernel_for
from .._lapack import dgesv, dgesv_ctypes  # (LAPACK's, cheaper to compile than np.linalg.solve)
from ..problems import OP_AFFINE, normal_form_operator

KIND_PRODUCT = 0
KIND_BOX = 1

DELTA = 1e-9  # the perturbation of the fixed points

LEARNER_RMP = 0  # regret matching+
LEARNER_PRMP = 1  # predictive regret matching+
LEARNER_HEDGE = 2  # Hedge with a scale-free step


# indices into ip
I_KIND, I_LEARNER, I_NS, I_BLOCKDIAG, I_KMAX, I_OP, I_WEIGHT, I_T = range(8)


@njit(cache=True)
def propose(ip, gstart, p, q, src, Q, P, S, aux, K, c):
    """The learners' strategies ``S`` and their affine map ``(K, c)``."""
    learner = ip[I_LEARNER]
    eta = 0.0
    if learner == LEARNER_HEDGE:  # sqrt(log k / sum of squared regret ranges), scale-free
        eta = np.sqrt(2.0 * np.log(max(ip[I_KMAX], 2)) / max(aux[0], 1e-300))
    predict = 1.0 if learner == LEARNER_PRMP else 0.0
    for g in range(gstart.shape[0] - 1):
        lo, hi = gstart[g], gstart[g + 1]
        s = 0.0
        if learner == LEARNER_HEDGE:
            qmax = -np.inf
            for e in range(lo, hi):
                qmax = max(qmax, Q[e])
            for e in range(lo, hi):
                S[e] = np.exp(eta * (Q[e] - qmax))
                s += S[e]
        else:
            for e in range(lo, hi):
                S[e] = max(Q[e] + predict * P[e], 0.0)
                s += S[e]
        if s > 0.0:
            for e in range(lo, hi):
                S[e] /= s
        else:
            for e in range(lo, hi):
                S[e] = 1.0 / (hi - lo)
    d = K.shape[0]
    if ip[I_KIND] == KIND_BOX:  # row r: the experts 0, 1, y_j, 1 - y_j
        for r in range(d):
            lo = gstart[r]
            c[r] = S[lo + 1]
            for j in range(d):
                K[r, j] = S[lo + 2 + j] - S[lo + 2 + d + j]
                c[r] += S[lo + 2 + d + j]
        return
    for a in range(d):
        c[a] = 0.0
        for b in range(d):
            K[a, b] = 0.0
    for g in range(ip[I_NS]):
        w = 1.0 if src[g] < 0 else S[src[g]]
        for e in range(gstart[g], gstart[g + 1]):
            K[p[e], q[e]] += w * S[e]


@njit(cache=True)
def observe(ip, gstart, p, q, src, Q, P, S, aux, loss, y, f, M, Fbar, sacc):
    """Update the learners with the operator value ``f`` at ``y`` and add the round (weight 1
    or ``t``) to the running sums ``M += w f y^T``, ``Fbar += w f``, ``sacc[0] += w <f, y>``,
    ``sacc[1] += w``; advances the round counter ``ip[I_T]``. ``loss`` is scratch space of
    one entry per expert."""
    ip[I_T] += 1
    weight = float(ip[I_T]) if ip[I_WEIGHT] == 1 else 1.0
    ns = ip[I_NS]
    for e in range(gstart[ns], gstart[gstart.shape[0] - 1]):
        loss[e] = 0.0  # the source experts: <f_i, S_ij y_j>
    d = y.shape[0]
    for g in range(ns):
        lo, hi = gstart[g], gstart[g + 1]
        if ip[I_KIND] == KIND_BOX:  # row g: the experts 0, 1, y_j, 1 - y_j
            loss[lo] = 0.0
            loss[lo + 1] = f[g]
            for j in range(d):
                loss[lo + 2 + j] = f[g] * y[j]
                loss[lo + 2 + d + j] = f[g] * (1.0 - y[j])
        else:
            for e in range(lo, hi):
                loss[e] = f[p[e]] * y[q[e]]
        if src[g] >= 0:
            for e in range(gstart[g], gstart[g + 1]):
                loss[src[g]] += S[e] * loss[e]
    big = 0.0
    for g in range(gstart.shape[0] - 1):
        lo, hi = gstart[g], gstart[g + 1]
        played = 0.0
        for e in range(lo, hi):
            played += S[e] * loss[e]
        if ip[I_LEARNER] == LEARNER_HEDGE:
            for e in range(lo, hi):
                r = weight * (played - loss[e])
                big = max(big, abs(r))
                Q[e] += r
        else:
            for e in range(lo, hi):
                r = weight * (played - loss[e])
                big = max(big, abs(r))
                Q[e] = max(Q[e] + r, 0.0)
                P[e] = r
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


@njit(cache=True)
def fixed_point(K, c, u, delta, off, kind, blockdiag, W, iw, y):
    r"""Fixed point of ``y -> K y + c`` in the domain by the perturbed solve
    :math:`(I - (1-\delta)K) y = (1-\delta)c + \delta u` (``u`` an interior point; one solve
    per diagonal block when ``blockdiag``) by LAPACK's ``dgesv``, rounding errors clipped
    (nonnegative blocks summing to one, or the unit box); returns the residual
    ``max |K y + c - y|`` (``inf`` if LAPACK finds a system singular). Work arrays: ``W``
    of shape (d, d) (a block in LAPACK's column-major layout, leading dimension d) and
    ``iw`` of d + 5 int32 (n, nrhs, lda, ldb, info, then the pivots)."""
    d = K.shape[0]
    singular = False
    for i in range(off.shape[0] - 1 if blockdiag else 1):
        lo, hi = (off[i], off[i + 1]) if blockdiag else (0, d)
        m = hi - lo
        for a in range(m):
            for b in range(m):
                W[b, a] = -(1.0 - delta) * K[lo + a, lo + b]
            W[a, a] += 1.0
            y[lo + a] = (1.0 - delta) * c[lo + a] + delta * u[lo + a]
        iw[0], iw[1], iw[2], iw[3] = m, 1, max(d, 1), max(m, 1)  # (LAPACK: lda, ldb >= 1)
        dgesv(iw[0:].ctypes, iw[1:].ctypes, W.ctypes, iw[2:].ctypes, iw[5:].ctypes,
              y[lo:].ctypes, iw[3:].ctypes, iw[4:].ctypes)
        singular |= iw[4] != 0
    if kind == KIND_BOX:  # clip rounding errors into the domain
        for a in range(d):
            y[a] = min(max(y[a], 0.0), 1.0)
    else:
        for i in range(off.shape[0] - 1):
            s = 0.0
            for a in range(off[i], off[i + 1]):
                y[a] = max(y[a], 0.0)
                s += y[a]
            for a in range(off[i], off[i + 1]):
                y[a] /= s
    res = np.inf if singular else 0.0
    for a in range(d):
        v = c[a] - y[a]
        for b in range(d):
            v += K[a, b] * y[b]
        res = max(res, abs(v))
    return res


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
def run_rounds(nrounds, ip, gstart, p, q, src, Q, P, S, aux, loss, K, c, u, delta, off, W,
               iw, shift, Tm, A, bvec, U, xoff, M, Fbar, sacc, Y, Fv, FXv, res):
    """Run ``nrounds`` rounds with a structured operator (``x = shift + Tm y``, the operator
    in internal coordinates is ``Tm^T F(x)``: ``A x + b`` or the normal-form game of payoffs
    ``U`` and block offsets ``xoff``); round ``r`` stores its point in ``Y[r]``, its operator
    value in ``Fv[r]`` (internal coordinates) and ``FXv[r]`` (original ones) and its
    fixed-point residual in ``res[r]``. Returns the number of rounds done: ``r < nrounds``
    if ``F`` was not finite at round ``r`` (that round is not fed to the learners)."""
    dy = Tm.shape[1]
    dx = Tm.shape[0]
    y = np.empty(dy)
    x = np.empty(dx)
    fx = np.empty(dx)
    fy = np.empty(dy)
    for r in range(nrounds):
        propose(ip, gstart, p, q, src, Q, P, S, aux, K, c)
        res[r] = fixed_point(K, c, u, delta, off, ip[I_KIND], ip[I_BLOCKDIAG] == 1, W, iw, y)
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
        observe(ip, gstart, p, q, src, Q, P, S, aux, loss, y, fy, M, Fbar, sacc)
        for a in range(dy):
            Y[r, a] = y[a]
            Fv[r, a] = fy[a]
        for a in range(dx):
            FXv[r, a] = fx[a]
    return nrounds


#: the kernels uncompiled (``dgesv`` through ctypes)
INTERPRETED = interpreted(sys.modules[__name__], normal_form_operator, dgesv=dgesv_ctypes)
#: rounds of at most this much work (experts, entries of the map and of the operator's
#: data) run uncompiled (``jitopt._interpreted.kernel_for``), about 0.2 ms a round;
#: compiling the kernels takes 5-7 s
SMALL = 1_000


def kernel(function, work):
    """The kernel ``function``, or its uncompiled code for rounds of a small ``work``."""
    return kernel_for(function, INTERPRETED, work <= SMALL)
