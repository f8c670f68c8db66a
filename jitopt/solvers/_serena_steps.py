"""The estimator recursion of the SERENA methods, between two checkpoints of
:func:`jitopt.solvers.srge`: a compiled path for the built-in problems and a Python path
with the problem's callables, doing the same operations in the same order."""

import numpy as np

from .._core.result import NonFiniteOracle
from ..validation import as_c_float as _c
from . import _serena_kernels as K

__all__ = ["estimator_steps"]


class _Kernel:
    """The Numba path: the built-in problem's compiled per-sample oracle and manifold."""

    def __init__(self, problem, code):
        self.data, self.aux, self.par = K.kernel_data(problem.sample_kernel)
        self.code = code
        self.shape = problem.manifold.shape
        self.shape2 = self.shape if len(self.shape) == 2 else (self.shape[0], 1)

    def chunk(self, problem, x, v, xa, ga, idx, idx2, etas, betas, control, independent):
        s2 = self.shape2
        status, steps, ifo, calls, x, v = K.run_chunk(
            self.code, self.data, self.aux, self.par, _c(x).reshape(s2),
            _c(v).reshape(s2), _c(xa).reshape(s2), _c(ga).reshape(s2), idx, idx2, etas,
            betas, control, independent)
        problem.counts.nifo += ifo
        problem.counts.njev += calls
        return status, steps, x.reshape(self.shape), v.reshape(self.shape)

    def cost_and_rgrad(self, problem, x):
        """Full cost and Riemannian gradient in one compiled sweep (counted as one cost and
        one full gradient)."""
        f, g = K.full_cost_and_rgrad(self.code, self.data, self.aux, self.par,
                                     _c(x).reshape(self.shape2))
        problem.counts.nfev += 1
        problem.counts.njev += 1
        problem.counts.nifo += problem.n_samples
        return f, g.reshape(self.shape)


def _python_chunk(problem, x, v, xa, ga, idx, idx2, etas, betas, control, independent):
    """The steps of :func:`~jitopt.solvers.srge` between two checkpoints, with the problem's callables.

    Step ``k`` retracts along :math:`-\\eta_k v` and, when batch row ``k`` exists, updates
    :math:`v` at the new point; ``xa, ga`` are the snapshot and its gradient. The Numba
    kernel ``_serena_kernels.run_chunk`` does the same operations in the same order.
    Returns ``(status, steps, x, v)``, status 1 on a non-finite value.
    """
    M = problem.manifold
    grad = problem.rgrad
    for k in range(etas.size):
        xp = x
        x = M.retraction(xp, -etas[k] * v)
        if not np.all(np.isfinite(x)):
            return 1, k + 1, x, v
        if k >= idx.shape[0]:
            continue
        beta = betas[k]
        s = idx[k]
        new = np.zeros_like(x)
        gx = new
        if beta < 1.0 or not independent:
            gx = grad(x, s)
        if beta < 1.0:
            new = (1.0 - beta) * (gx + M.transport(xp, x, v - grad(xp, s)))
        if beta > 0.0:
            if independent:
                s = idx2[k]
                gu = grad(x, s)
            else:
                gu = gx
            if control:
                gu = gu - M.transport(xa, x, grad(xa, s) - ga)
            new = new + beta * gu
        v = new
        if not np.all(np.isfinite(v)):
            return 1, k + 1, x, v
    return 0, etas.size, x, v


def _compiled(problem, jit):
    """The Numba path for ``problem`` when ``jit="auto"`` allows one and it exists, else None."""
    if jit == "auto" and problem.sample_kernel is not None:
        code = K.manifold_code(problem.manifold)
        if code is not None:
            return _Kernel(problem, code)
    return None


def estimator_steps(problem, x, v, snapshot, snapshot_grad, batches, steps, betas, *,
                    control_variate=False, batches2=None, jit="auto"):
    r"""Steps of the estimator recursion of :func:`~jitopt.solvers.srge` from the point ``x`` and the estimate
    ``v``: the building block of every SERENA method, for online use and for checks.

    Step :math:`k` sets :math:`x_{k+1} = R_{x_k}(-\eta_k v_k)` and, when ``batches`` has a
    row :math:`k`, :math:`v_{k+1} = (1 - \beta_k) r_{k+1} + \beta_k u_{k+1}` with the batch
    :math:`S = ` ``batches[k]`` (and :math:`S' = ` ``batches2[k]`` when given, else
    :math:`S' = S`): the recursive and unbiased estimates of :func:`~jitopt.solvers.srge` with the snapshot
    :math:`(\tilde x, \tilde g) = ` ``(snapshot, snapshot_grad)``.

    Parameters
    ----------
    problem : jitopt.FiniteSumProblem
    x, v : ndarray
        The point and the estimate at it (a tangent vector).
    snapshot, snapshot_grad : ndarray
        :math:`\tilde x` and :math:`\tilde g`.
    batches : ndarray of int64, shape (K or K - 1, b)
        Sample indices of each update.
    steps, betas : ndarray of shape (K,)
        :math:`\eta_k` and :math:`\beta_k`.
    control_variate : bool
        :math:`\alpha = 1` (the SVRG control variate in :math:`u`) or 0.
    batches2 : ndarray of int64, optional
        Independent batches :math:`S'`.
    jit : {"auto", False}
        As in :func:`~jitopt.solvers.srge`.

    Returns
    -------
    x, v : ndarray
        The point and the estimate after the steps (the oracle calls are counted in
        ``problem.counts``).

    Raises
    ------
    jitopt.NonFiniteOracle
        When an iterate or an estimate becomes non-finite.
    """
    kernel = _compiled(problem, jit)
    chunk = _python_chunk if kernel is None else kernel.chunk
    independent = batches2 is not None
    batches = np.ascontiguousarray(batches, dtype=np.int64)
    batches2 = np.ascontiguousarray(batches if batches2 is None else batches2, dtype=np.int64)
    steps = np.ascontiguousarray(steps, dtype=float)
    betas = np.ascontiguousarray(betas, dtype=float)
    status, done, x, v = chunk(problem, x, v, snapshot, snapshot_grad, batches, batches2,
                               steps, betas, bool(control_variate), independent)
    if status:
        raise NonFiniteOracle(f"An iterate or an estimate became non-finite at step {done}")
    return x, v
