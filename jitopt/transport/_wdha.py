"""WDHA: Wasserstein-descent H1-ascent for the exact Wasserstein barycenter on a 2-D grid."""

import os
import sys
import time
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .._validation import check_choice, check_int, check_real
from . import _kernels
from ._grid import _as_density, _half_sq_norm, _invlap

__all__ = ["wdha_barycenter", "tour"]


def _check_weights(weights, n):
    if weights is None:
        return np.full(n, 1.0 / n)
    w = np.asarray(weights)
    if w.dtype == object or not (np.issubdtype(w.dtype, np.integer)
                                 or np.issubdtype(w.dtype, np.floating)):
        raise TypeError(f"weights must be a real-valued array, got dtype {w.dtype}")
    w = np.array(w, dtype=np.float64)
    if w.shape != (n,):
        raise ValueError(f"weights must have shape ({n},) (one per histogram), got {w.shape}")
    if not np.all(np.isfinite(w)) or np.any(w < 0) or abs(w.sum() - 1.0) > 1e-8:
        raise ValueError("weights must lie on the probability simplex (nonnegative, "
                         f"summing to 1), got {w}")
    return w / w.sum()


class _Progress:
    """A one-line progress bar with the current diagnostics, redrawn a few dozen times."""

    def __init__(self, total, stream=None):
        self.total = total
        self.stream = sys.stdout if stream is None else stream
        self.every = max(1, total // 50)
        self.start = time.perf_counter()

    def update(self, it, objective, residual, stationarity, final=False):
        if not final and it % self.every and it != 1:
            return
        done = int(30 * it / self.total)
        elapsed = time.perf_counter() - self.start
        self.stream.write(f"\r[{'#' * done}{'.' * (30 - done)}] {it:4d}/{self.total} "
                          f"W2^2 {objective:.6e}  H-1 res {residual:.2e}  "
                          f"stat {stationarity:.2e}  {elapsed:6.1f}s")
        if final:
            self.stream.write("\n")
        self.stream.flush()


def wdha_barycenter(A, weights=None, numItermax=300, stopThr=1e-12, verbose=False, log=False,
                    order="gauss-seidel", sigma0=0.05, n_jobs=None, max_subsamples=16):
    r"""Exact (unregularised) Wasserstein-2 barycenter of densities on a 2-D grid by WDHA.

    Solves :math:`\min_\nu \sum_i \lambda_i W_2^2(\nu, \mu_i)` through the minimax problem

    .. math:: \min_{\nu}\ \max_{\psi_i\ \text{convex}}\ \sum_i \lambda_i
              \Bigl[\int (q - \psi_i)\,d\nu + \int (q - \psi_i^*)\,d\mu_i\Bigr],
              \qquad q = \tfrac12 |x|^2,

    (each bracket is :math:`\tfrac12 W_2^2(\nu, \mu_i)` at its maximum) by alternating, at
    iteration :math:`t = 1, \dots, T`,

    * an :math:`\dot H^1` ascent step on each potential, projected onto convex functions by
      the exact grid Legendre transform:
      :math:`\psi_i \leftarrow \bigl(\psi_i + \sigma_i (-\Delta)^{-1}((\nabla\psi_i^*)_\#\mu_i
      - \nu)\bigr)^{**}`;
    * a Wasserstein gradient step on the barycenter with step :math:`\tau_t = e^{-t/T}`:
      :math:`\nu \leftarrow \bigl(x - \tau_t (x - \nabla\bar\psi(x))\bigr)_\# \nu`,
      :math:`\bar\psi = \sum_i \lambda_i \psi_i`.

    :math:`\sigma_i` starts at ``sigma0`` and is multiplied by 0.99 whenever the dual value
    of input :math:`i` decreases. Each iteration costs :math:`O(n\, m \log m)` for :math:`n`
    inputs of :math:`m` cells; the per-input steps run in parallel threads.

    Parameters
    ----------
    A : array_like of shape (n_hists, height, width)
        Nonnegative densities on a common grid over the unit square (cell ``(i, j)`` centred
        at ``((i + 1/2)/height, (j + 1/2)/width)``); each is normalised to unit mass.
        Height and width at least 3.
    weights : array_like of shape (n_hists,), optional
        Barycentric weights on the simplex (default uniform).
    numItermax : int, default 300
        Number of iterations :math:`T`; it also sets the schedule :math:`\tau_t = e^{-t/T}`.
    stopThr : float, default 1e-12
        Stop before ``numItermax`` when every residual
        :math:`\|(\nabla\psi_i^*)_\#\mu_i - \nu\|^2_{\dot H^{-1}}` and the stationarity
        :math:`\int |x - \nabla\bar\psi|^2 d\nu` are below it (with the default, in practice
        only when the barycenter is found exactly, e.g. identical inputs).
    verbose : bool, default False
        Show a progress bar with the objective estimate, the largest residual and the
        stationarity.
    log : bool, default False
        Also return a dict of diagnostics.
    order : {"gauss-seidel", "jacobi"}, default "gauss-seidel"
        Barycenter step with the freshly updated potentials (as the authors' code) or with
        those of the previous iteration (as the printed algorithm).
    sigma0 : float, default 0.05
        Initial :math:`\dot H^1` step size of every potential.
    n_jobs : int, optional
        Threads for the per-input steps (default: one below 64 x 64 cells, where threads
        do not pay, else the number of CPUs, at most the number of inputs with positive
        weight).
    max_subsamples : int, default 16
        Cap on the sub-samples per cell and axis in the pushforwards.

    Returns
    -------
    barycenter : ndarray of shape (height, width)
        Nonnegative, summing to 1.
    log : dict
        Only if ``log=True``: ``dual`` (dual value :math:`\approx \tfrac12 W_2^2(\nu,\mu_i)`
        per iteration and input, zero for inputs of zero weight), ``h1_residual`` (:math:`\dot H^{-1}` residual per
        iteration and input), ``stationarity`` (per iteration), ``objective`` (the estimate
        :math:`2\sum_i\lambda_i\,\text{dual}_i` of :math:`\sum_i \lambda_i W_2^2`),
        ``potentials`` (the final :math:`\psi_i`), ``sigma`` (final step sizes), ``niter``,
        ``success``, ``message``, ``time``.

    Notes
    -----
    The initial barycenter is the first input and the initial potentials are :math:`q`
    (identity maps), as in the authors' code. Inputs with zero weight are not touched.
    With non-square grids the cells are rectangles of the unit square.

    References
    ----------
    K. Kim, R. Yao, C. Zhu and X. Chen, "Optimal Transport Barycenter via Nonconvex-Concave
    Minimax Optimization", ICML 2025 (PMLR 267), arXiv:2501.14635.
    """
    mus = _as_density("A", A, ndim=3)
    n, n0, n1 = mus.shape
    lam = _check_weights(weights, n)
    T = check_int("numItermax", numItermax, low=1)
    stopThr = check_real("stopThr", stopThr, low=0.0)
    order = check_choice("order", order, ("gauss-seidel", "jacobi"))
    sigma0 = check_real("sigma0", sigma0, low=0.0, low_open=True)
    maxsub = check_int("max_subsamples", max_subsamples, low=1)
    active = [i for i in range(n) if lam[i] > 0]
    if n_jobs is None:  # threads pay from about 64 x 64 cells on (measured on 2 cores)
        n_jobs = min(len(active), os.cpu_count() or 1) if n0 * n1 >= 4096 else 1
    n_jobs = check_int("n_jobs", n_jobs, low=1)

    start = time.perf_counter()
    q = _half_sq_norm((n0, n1))
    g0 = np.empty((n0, n1))
    g1 = np.empty((n0, n1))
    _kernels.gradient(q, g0, g1)  # the cell centres, exactly the gradient of q
    y, x = g0.copy(), g1.copy()
    psi = np.empty((n, n0, n1))
    phi = np.empty((n, n0, n1))
    psi[:] = q - q.mean()
    for i in range(n):
        _kernels.legendre_2d(psi[i], phi[i])
    sig = np.full(n, sigma0)
    last = np.full(n, -np.inf)
    nu = mus[0].copy()
    rhos = np.empty((n, n0, n1))

    def weighted_potential():
        total = np.zeros((n0, n1))
        for i in active:
            total += lam[i] * psi[i]
        return total

    def ascent(i):
        rho = rhos[i]
        _kernels.pushforward(mus[i], phi[i], rho, maxsub)
        rho -= nu
        g = _invlap(rho)
        res = float(np.mean(g * rho))
        psi[i] += sig[i] * g
        _kernels.legendre_2d(psi[i], phi[i])
        _kernels.legendre_2d(phi[i], psi[i])
        return res, _kernels.dual_value(psi[i], phi[i], nu, mus[i])

    duals, residuals, stats = [], [], []
    pool = ThreadPoolExecutor(n_jobs) if n_jobs > 1 else None
    bar = _Progress(T) if verbose else None
    # the schedule tau_t = exp(-t/T) is part of the method: running it to the end is a
    # normal finish (success), reported apart from the early stop on stopThr (status 0)
    status, message = 1, "Completed the schedule of numItermax iterations (stopThr not reached)."
    it = 0
    try:
        for it in range(1, T + 1):
            if order == "jacobi":
                pbar = weighted_potential()
            out = list(pool.map(ascent, active)) if pool else [ascent(i) for i in active]
            dual = np.zeros(n)
            res = np.zeros(n)
            for i, (r, v) in zip(active, out):
                res[i], dual[i] = r, v
                if v < last[i]:
                    sig[i] *= 0.99
                last[i] = v
            if order == "gauss-seidel":
                pbar = weighted_potential()
            _kernels.gradient(pbar, g0, g1)
            stat = float(np.mean(nu * ((y - g0) ** 2 + (x - g1) ** 2)))
            duals.append(dual)
            residuals.append(res)
            stats.append(stat)
            if not (np.all(np.isfinite(dual)) and np.isfinite(stat)):
                status, message = 4, "Non-finite dual value or stationarity: stopped."
                warnings.warn(f"wdha_barycenter: {message}", RuntimeWarning, stacklevel=2)
                break
            if bar:
                bar.update(it, 2 * float((lam * dual).sum()), float(res.max()), stat)
            if res.max() <= stopThr and stat <= stopThr:
                status, message = 0, "Residuals and stationarity below stopThr."
                break
            tau = np.exp(-it / T)
            f = (1.0 - tau) * q + tau * pbar
            new = np.empty_like(nu)
            _kernels.pushforward(nu, f, new, maxsub)
            nu = new * (n0 * n1 / new.sum())
    finally:
        if pool:
            pool.shutdown()
    if bar:
        bar.update(it, 2 * float((lam * duals[-1]).sum()), float(residuals[-1].max()), stats[-1],
                   final=True)
    bary = nu / nu.sum()
    if not log:
        return bary
    duals = np.array(duals)
    return bary, {
        "dual": duals,
        "h1_residual": np.array(residuals),
        "stationarity": np.array(stats),
        "objective": 2.0 * (duals * lam).sum(axis=1),
        "potentials": psi,
        "sigma": sig,
        "niter": it,
        "success": status == 0 or status == 1,
        "status": status,
        "message": message,
        "time": time.perf_counter() - start,
    }
