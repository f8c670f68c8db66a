r"""Compiled kernels of the built-in losses of :class:`~jitopt.problems.DCProblem`.

A loss :math:`\ell(s; b)` of the prediction :math:`s = a^\top x` for the label :math:`b`:
LAD :math:`|s - b|`, squared :math:`(s - b)^2/2`, Huber with threshold :math:`\delta`, and
hinge :math:`\max(0, 1 - bs)` with :math:`b \in \{-1, 1\}`. Each is named by an integer code
so that a cached compiled caller never recompiles for a new loss.
"""

import numpy as np
from numba import njit

LAD, SQUARED, HUBER, HINGE = 0, 1, 2, 3


@njit(cache=True)
def row_dot(A, i, x):
    """a_iᵀx for row i of A."""
    s = 0.0
    for j in range(x.shape[0]):
        s += A[i, j] * x[j]
    return s


@njit(cache=True)
def loss_value(code, s, b, delta):
    """The loss of the prediction ``s`` for the label ``b``."""
    if code == LAD:
        return abs(s - b)
    if code == SQUARED:
        return 0.5 * (s - b) ** 2
    if code == HUBER:
        r = abs(s - b)
        return 0.5 * r * r if r <= delta else delta * (r - 0.5 * delta)
    return max(0.0, 1.0 - b * s)  # hinge, b in {-1, 1}


@njit(cache=True)
def loss_deriv(code, s, b, delta):
    """A subgradient of the loss in ``s``."""
    if code == LAD:
        return np.sign(s - b)
    if code == SQUARED:
        return s - b
    if code == HUBER:
        return min(max(s - b, -delta), delta)
    return -b if b * s < 1.0 else 0.0


@njit(cache=True)
def mean_loss(A, b, code, delta, x):
    """(1/N) sum_i loss(a_i^T x; b_i)."""
    n = A.shape[0]
    total = 0.0
    for i in range(n):
        total += loss_value(code, row_dot(A, i, x), b[i], delta)
    return total / n


@njit(cache=True)
def mean_loss_subgradient(A, b, code, delta, x, out):
    """out <- (1/N) sum_i loss'(a_i^T x; b_i) a_i (a subgradient of the mean loss)."""
    n, p = A.shape
    for j in range(p):
        out[j] = 0.0
    for i in range(n):
        g = loss_deriv(code, row_dot(A, i, x), b[i], delta) / n
        if g != 0.0:
            for j in range(p):
                out[j] += g * A[i, j]


@njit(cache=True)
def subgradient_variance(A, b, code, delta, x):
    r"""The sample variance :math:`\frac1{N-1}\sum_i \|s_i - \bar s\|^2` of the per-sample
    loss subgradients :math:`s_i = \ell'(a_i^\top x; b_i)\, a_i` (``N >= 2``; two passes).

    It estimates the variance of one sample, :math:`N` times the variance of their mean,
    which the norm test of the online DCA compares with the step.
    """
    n, p = A.shape
    mean = np.empty(p)
    mean_loss_subgradient(A, b, code, delta, x, mean)
    total = 0.0
    for i in range(n):
        g = loss_deriv(code, row_dot(A, i, x), b[i], delta)
        for j in range(p):
            v = g * A[i, j] - mean[j]
            total += v * v
    return total / (n - 1)
