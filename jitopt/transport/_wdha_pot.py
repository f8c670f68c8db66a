"""POT's interfaces to WDHA and SGA: :func:`wdha_barycenter` and :func:`sga_barycenter`,
with a progress bar."""

import sys
import time
import warnings

import numpy as np

from ..problems import BarycenterProblem, as_density
from ..validation import check_choice, check_int, check_real
from ._sga import sga
from ._wdha import wdha

__all__ = ["wdha_barycenter", "sga_barycenter"]


class _Progress:
    """A one-line progress bar with the current diagnostics, redrawn a few dozen times."""

    def __init__(self, total, stream=None):
        self.total = total
        self.stream = sys.stdout if stream is None else stream
        self.every = max(1, total // 50)
        self.start = time.perf_counter()

    def __call__(self, intermediate_result):
        r = intermediate_result
        self.update(r.nit, r.fun, r.stationarity)

    def update(self, it, objective, stationarity, final=False):
        if not final and it % self.every and it != 1:
            return
        done = int(30 * it / self.total)
        elapsed = time.perf_counter() - self.start
        self.stream.write(f"\r[{'#' * done}{'.' * (30 - done)}] {it:4d}/{self.total} "
                          f"W2^2 {objective:.6e}  stat {stationarity:.2e}  {elapsed:6.1f}s")
        if final:
            self.stream.write("\n")
        self.stream.flush()


def wdha_barycenter(A, weights=None, numItermax=None, stopThr=1e-12, verbose=False, log=False,
                    variant="sharp", order="gauss-seidel", sigma0=0.05, n_jobs=None,
                    max_subsamples=16, polish=None, polish_iters=10):
    r"""Exact Wasserstein-2 barycenter of densities on a 2-D or 3-D grid, with POT's interface.

    A thin wrapper over :func:`wdha` with the argument names of POT's barycenters:
    ``wdha_barycenter(A, weights, numItermax, stopThr)`` is
    ``wdha(BarycenterProblem(A, weights), maxiter=numItermax, tol=stopThr).x``.

    Parameters
    ----------
    A : array_like of shape (n_hists, height, width) or (n_hists, height, width, depth)
        Nonnegative densities on a common grid over the unit square (the ``densities`` of
        :class:`~jitopt.problems.BarycenterProblem`); each is normalised to unit mass.
    weights : array_like of shape (n_hists,), optional
        Barycentric weights on the simplex (default uniform).
    numItermax : int, optional
        ``maxiter`` of :func:`wdha`: a cap (default 1000), or with ``variant="paper"`` the
        number of iterations :math:`T` that sets the schedule :math:`\tau_t = e^{-t/T}`
        (default 300).
    stopThr : float, default 1e-12
        Stop before ``numItermax`` when every :math:`\dot H^{-1}` residual and the squared
        Wasserstein gradient norm are at most ``stopThr``.
    verbose : bool, default False
        Show a progress bar with the objective estimate and the stationarity.
    log : bool, default False
        Also return a dict of diagnostics.
    variant, order, sigma0, n_jobs, max_subsamples, polish, polish_iters
        As in :func:`wdha` (by default the final polish of the ``"sharp"`` variant: 3
        fixed-point steps; ``polish=0`` returns the loop's last iterate).

    Returns
    -------
    barycenter : ndarray of the grid's shape
        Nonnegative, summing to 1.
    log : dict
        Only if ``log=True``, one row per iteration (ascent step): ``dual`` (dual value
        :math:`\approx \tfrac12 W_2^2(\nu,\mu_i)` per iteration and input, zero for inputs
        of zero weight), ``h1_residual`` (:math:`\dot H^{-1}` residual per iteration and
        input), ``stationarity`` (squared Wasserstein gradient norm per iteration),
        ``objective`` (the estimate :math:`2\sum_i\lambda_i\,\text{dual}_i` of
        :math:`\sum_i \lambda_i W_2^2`), ``potentials`` (the final :math:`\psi_i`) and
        ``sigma`` (final step sizes), both ``None`` after a non-finite value, ``niter``,
        ``success``, ``status`` (a :class:`~jitopt.Status`), ``message``, ``time``.

    Warns
    -----
    RuntimeWarning
        When the run stops on a non-finite value (the barycenter returned is then the best
        iterate before it).

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.transport import wdha_barycenter
    >>> A = np.zeros((2, 32, 32))
    >>> A[0, 4:12, 4:12] = A[1, 20:28, 12:20] = 1.0
    >>> bary, log = wdha_barycenter(A, numItermax=50, variant="paper", log=True)
    >>> log["niter"], log["dual"].shape, bool(log["success"])
    (50, (50, 2), True)
    >>> bary, log = wdha_barycenter(A, log=True)
    >>> log["status"].name, bool(log["success"])
    ('CONVERGED', True)
    """
    problem = BarycenterProblem(as_density("A", A, stack=True), weights)  # errors name A
    variant = check_choice("variant", variant, ("sharp", "paper"))
    T = check_int("numItermax", (300 if variant == "paper" else 1000) if numItermax is None
                  else numItermax, low=1)
    stopThr = check_real("stopThr", stopThr, low=0.0)
    res = _run("wdha_barycenter", wdha, problem, T, verbose, "fun", variant=variant,
               tol=stopThr, order=order, sigma0=sigma0, n_jobs=n_jobs,
               max_subsamples=max_subsamples, polish=polish, polish_iters=polish_iters)
    if not log:
        return res.x
    h = res.history
    rows = h["iteration"] < T  # the evaluation after the last step has no ascent step
    n = problem.n_densities
    return res.x, {
        "dual": np.column_stack([h[f"dual_{i}"][rows] for i in range(n)]),
        "h1_residual": np.column_stack([h[f"h1_residual_{i}"][rows] for i in range(n)]),
        "stationarity": h["wasserstein_gradient"][rows],
        "objective": h["fun"][rows],
        "potentials": res.get("potentials"),
        "sigma": res.get("sigma"),
        **_outcome(res),
    }


def sga_barycenter(A, weights=None, numItermax=300, stopThr=1e-12, verbose=False, log=False,
                   variant="sharp", step=None, n_jobs=None, max_subsamples=16, polish=None,
                   polish_iters=10):
    r"""Exact Wasserstein-2 barycenter of densities on a 2-D or 3-D grid by Sobolev gradient
    ascent, with POT's interface.

    A thin wrapper over :func:`sga` with the argument names of POT's barycenters (those of
    :func:`wdha_barycenter`): ``sga_barycenter(A, weights, numItermax, stopThr)`` is
    ``sga(BarycenterProblem(A, weights), maxiter=numItermax, tol=stopThr).x``.

    Parameters
    ----------
    A : array_like of shape (n_hists, height, width) or (n_hists, height, width, depth)
        Nonnegative densities on a common grid over the unit square (the ``densities`` of
        :class:`~jitopt.problems.BarycenterProblem`); each is normalised to unit mass.
    weights : array_like of shape (n_hists,), optional
        Barycentric weights on the simplex (default uniform).
    numItermax : int, default 300
        ``maxiter`` of :func:`sga`: the number of iterations :math:`T` (on the coarsest grid
        of its coarse-to-fine start).
    stopThr : float, default 1e-12
        Stop before ``numItermax`` when the stationarity (the largest
        :math:`\dot H^{-1}` distance between an input's pushforward and their mean) is at
        most ``stopThr``.
    verbose : bool, default False
        Show a progress bar with the dual value and the stationarity.
    log : bool, default False
        Also return a dict of diagnostics.
    variant, step, n_jobs, max_subsamples, polish, polish_iters
        As in :func:`sga` (by default the final polish: 3 fixed-point steps; ``polish=0``
        returns the mean of the last pushforwards).

    Returns
    -------
    barycenter : ndarray of the grid's shape
        Nonnegative, summing to 1.
    log : dict
        Only if ``log=True``, one row per iteration of the finest grid: ``dual_value``
        (:math:`2D(f)`, a lower bound of the optimal :math:`\sum_i \lambda_i W_2^2`),
        ``h1_residual`` (the squared :math:`\dot H^{-1}` distance of each input's
        pushforward to their mean, per iteration and input), ``step`` (the step
        :math:`\eta`); and the final ``objective`` (the estimate of
        :math:`\sum_i \lambda_i W_2^2` at the barycenter), ``lower_bound`` (the largest
        ``dual_value``), ``gap``, ``potentials`` (the final :math:`\psi_i`), ``niter``,
        ``success``, ``status`` (a :class:`~jitopt.Status`), ``message``, ``time``.

    Warns
    -----
    RuntimeWarning
        When the run stops on a non-finite value (the barycenter returned is then the best
        iterate before it).

    Examples
    --------
    Two squares of side 8 cells, 16 rows and 8 columns apart: the optimal
    :math:`\sum_i \lambda_i W_2^2` is :math:`(8/32)^2 + (4/32)^2 = 0.078125`.

    >>> import numpy as np
    >>> from jitopt.transport import sga_barycenter
    >>> A = np.zeros((2, 32, 32))
    >>> A[0, 4:12, 4:12] = A[1, 20:28, 12:20] = 1.0
    >>> bary, log = sga_barycenter(A, log=True)
    >>> log["niter"], log["h1_residual"].shape, bool(log["lower_bound"] <= 0.078125)
    (300, (300, 2), True)
    """
    problem = BarycenterProblem(as_density("A", A, stack=True), weights)  # errors name A
    T = check_int("numItermax", numItermax, low=1)
    stopThr = check_real("stopThr", stopThr, low=0.0)
    res = _run("sga_barycenter", sga, problem, T, verbose, "dual_value", variant=variant,
               tol=stopThr, step=step, n_jobs=n_jobs, max_subsamples=max_subsamples,
               polish=polish, polish_iters=polish_iters)
    if not log:
        return res.x
    h = res.history
    rows = h["iteration"] > 0  # (row 0 is the start)
    return res.x, {
        "dual_value": h["dual_value"][rows],
        "h1_residual": np.column_stack([h[f"h1_residual_{i}"][rows]
                                        for i in range(problem.n_densities)]),
        "step": h["step"][rows],
        "objective": res.fun,
        "lower_bound": res.dual_value,
        "gap": res.gap,
        "potentials": res.get("potentials"),
        **_outcome(res),
    }


def _run(name, solver, problem, T, verbose, shown, **options):
    """``solver(problem, maxiter=T, history=True, **options)`` with a progress bar showing
    the result's field ``shown`` when ``verbose``, and a warning naming ``name`` when it
    fails."""
    bar = _Progress(T) if verbose else None
    res = solver(problem, maxiter=T, history=True, callback=bar, **options)
    if bar:
        bar.update(res.nit, res[shown], res.stationarity, final=True)
    if not res.success:
        warnings.warn(f"{name}: {res.message}", RuntimeWarning, stacklevel=3)
    return res


def _outcome(res):
    """The log entries every POT-style wrapper ends with."""
    return {"niter": res.nit, "success": res.success, "status": res.status,
            "message": res.message, "time": res.time}
