"""The estimator recursion of the SERENA methods, between two checkpoints of
:func:`jitopt.solvers.srge`: a compiled path for the built-in problems and a Python path
with the problem's callables, doing the same operations in the same order."""

import numpy as np

from .._core.result import NonFiniteOracle
from ..manifolds import SPD_EXP
from . import _serena_kernels as K

__all__ = ["estimator_steps"]

_NO_INDEX = np.zeros(0, dtype=np.int64)


class _Loop:
    """The Python path: the steps with the problem's callables, then the checkpoint's full
    cost and gradient (each call counted by the problem)."""

    loop = "python"

    def __init__(self, problem):
        self.problem = problem

    def chunk(self, x, v, xa, ga, idx, idx2, etas, betas, control, independent,
              checkpoint=True):
        """``(status, steps, x, v, f, g)``: the steps from ``x`` and ``v``, then the full cost
        ``f`` and Riemannian gradient ``g`` at the new ``x`` (``None`` without
        ``checkpoint`` or after a non-finite value, ``status`` 1)."""
        problem = self.problem
        problem.prefetch(idx, idx2)
        status, steps, x, v = _python_chunk(problem, x, v, xa, ga, idx, idx2, etas, betas,
                                            control, independent)
        if status or not checkpoint:
            return status, steps, x, v, None, None
        return status, steps, x, v, problem.cost(x), problem.rgrad(x)

    def checkpoint(self, x):
        """The full cost and Riemannian gradient at ``x``."""
        return self.problem.cost(x), self.problem.rgrad(x)


class _Kernel:
    """The Numba path: the built-in problem's compiled per-sample oracle and manifold, on
    arrays in the kernels' layout (see ``_serena_kernels``); the checkpoint ends the
    compiled chunk and is counted as one cost and one full gradient."""

    loop = "numba"

    def __init__(self, problem, code):
        self.problem = problem
        _, self.data, self.aux, self.par = problem.sample_kernel
        self.code = code
        self.shape = problem.manifold.shape

    def to_kernel(self, a):
        """A C-contiguous copy of the point or vector ``a`` in the kernels' layout."""
        if self.code == SPD_EXP:
            return np.array(a, dtype=float, order="C")
        return np.array(np.reshape(a, (self.shape[0], -1)).T, dtype=float, order="C")

    def from_kernel(self, a):
        if self.code == SPD_EXP:
            return a
        return np.ascontiguousarray(a.T).reshape(self.shape)

    def chunk(self, x, v, xa, ga, idx, idx2, etas, betas, control, independent,
              checkpoint=True):
        problem = self.problem
        x, v = self.to_kernel(x), self.to_kernel(v)
        g = np.empty_like(x)
        status, steps, ifo, calls, f = K.run_chunk(
            self.code, self.data, self.aux, self.par, x, v, self.to_kernel(xa),
            self.to_kernel(ga), idx, idx2, etas, betas, control, independent, g,
            problem.all_samples if checkpoint else _NO_INDEX)
        problem.counts.add(njev=calls, nifo=ifo)
        x, v = self.from_kernel(x), self.from_kernel(v)
        if status or not checkpoint:
            return status, steps, x, v, None, None
        problem.counts.add(nfev=1, njev=1, nifo=problem.n_samples)
        return status, steps, x, v, f, self.from_kernel(g)

    def checkpoint(self, x):
        no_batches, no_steps = _NO_INDEX.reshape(0, 0), np.zeros(0)
        return self.chunk(x, x, x, x, no_batches, no_batches, no_steps, no_steps, False,
                          False)[4:]


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


def steps_path(problem, jit):
    """The Numba path for ``problem`` when ``jit="auto"`` allows one and it exists, else the
    Python path."""
    if jit == "auto" and problem.sample_kernel is not None:
        code = problem.manifold.kernel_code
        if code is not None:
            return _Kernel(problem, code)
    return _Loop(problem)


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
    path = steps_path(problem, jit)
    independent = batches2 is not None
    batches = np.ascontiguousarray(batches, dtype=np.int64)
    batches2 = np.ascontiguousarray(batches if batches2 is None else batches2, dtype=np.int64)
    steps = np.ascontiguousarray(steps, dtype=float)
    betas = np.ascontiguousarray(betas, dtype=float)
    status, done, x, v, _, _ = path.chunk(x, v, snapshot, snapshot_grad, batches, batches2,
                                          steps, betas, bool(control_variate), independent,
                                          checkpoint=False)
    if status:
        raise NonFiniteOracle(f"An iterate or an estimate became non-finite at step {done}")
    return x, v
