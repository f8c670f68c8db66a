"""WDHA: Wasserstein-descent H1-ascent for the exact Wasserstein barycenter on a 2-D or
3-D grid: the options and the choice of variant (:mod:`jitopt.transport._wdha_variants`)."""

import os

import numpy as np

from .._core.registry import register_method
from ..validation import check_choice, check_int, check_real, check_rng
from ..problems import BarycenterProblem, as_density
from ._wdha_variants import WdhaOptions, wdha_paper, wdha_sharp

__all__ = ["wdha"]


@register_method("wdha", BarycenterProblem, tol_option="tol", doc=dict(
    history=", and ``wasserstein_gradient``, ``max_h1_residual``, ``step_cells`` (the length "
            "of the next barycenter step, in cells, tested against ``xtol``), ``dual_<i>`` and "
            "``h1_residual_<i>`` (per input ``i``; zero for inputs of zero weight)",
    disp="every few iterations (about 50 lines per run)",
    rng="Accepted for the common interface; WDHA is deterministic."))
def wdha(problem, x0=None, *, variant="sharp", maxiter=None, tol=1e-12, xtol=None,
         horizon=None, warm_start=None, coarsest=None, output=None, polish=None,
         polish_iters=10, order="gauss-seidel", sigma0=0.05, n_jobs=None,
         max_subsamples=16, max_time=np.inf, callback=None, history=False, disp=False,
         rng=None):
    r"""Exact (unregularised) Wasserstein-2 barycenter of densities on a 2-D or 3-D grid by
    WDHA.

    Solves :math:`\min_\nu \sum_i \lambda_i W_2^2(\nu, \mu_i)` through the minimax problem

    .. math::

        \min_{\nu}\ \max_{\psi_i\ \text{convex}}\ J(\nu, \psi) &= \sum_i \lambda_i
        \Bigl[\int (q - \psi_i)\,d\nu + \int (q - \psi_i^*)\,d\mu_i\Bigr], \\
        q &= \tfrac12 |x|^2,

    (each bracket is :math:`\tfrac12 W_2^2(\nu, \mu_i)` at its maximum). Each evaluation at
    the barycenter :math:`\nu` takes an :math:`\dot H^1` ascent step on each potential,
    projected onto convex functions by the exact grid Legendre transform,

    .. math:: \psi_i \leftarrow \bigl(\psi_i + \sigma_i (-\Delta)^{-1}((\nabla\psi_i^*)_\#\mu_i
              - \nu)\bigr)^{**},

    and iteration :math:`t = 1, \dots, T` is a Wasserstein gradient step on the barycenter
    with step :math:`\tau_t = e^{-t/T}`,
    :math:`\nu \leftarrow \bigl(x - \tau_t (x - \nabla\bar\psi(x))\bigr)_\# \nu`,
    :math:`\bar\psi = \sum_i \lambda_i \psi_i`, followed by the evaluation at the new
    :math:`\nu` (the one after the last step measures without an ascent step).
    Each iteration costs :math:`O(n\, m \log m)` for :math:`n` inputs of :math:`m` cells;
    the per-input steps run in parallel threads.

    ``variant="paper"`` is the method as published (and as the authors' code): start at the
    first input with the potentials at :math:`q`, :math:`\tau_t = e^{-t/T}` over the whole
    run, :math:`\sigma_i` multiplied by 0.99 whenever the dual value of input :math:`i`
    decreases. The default ``variant="sharp"`` changes what makes that barycenter diffuse
    (:doc:`/theory/wdha`): it starts at the input of largest weight (a unit weight returns
    that input), with each potential warm-started by ``warm_start`` back-and-forth
    iterations from the start to its input; the step :math:`\tau_t = e^{-t/H}` has a fixed
    horizon :math:`H` = ``horizon``, so that the barycenter steps have a finite total
    length whatever the number of iterations; a barycenter step sub-samples a cell only
    where the map stretches it by 2 or more (no added variance near the identity); the
    step sizes follow the back-and-forth rule with the floor ``sigma0 / 50``; and the run
    stops when the next barycenter step would move mass by at most ``xtol`` cells.
    Grids larger than ``coarsest`` cells per side start instead from the solution on
    the grid of 2 x 2 (x 2) blocks (coarse to fine), which makes large grids several times
    faster. The run ends with a polish: ``polish`` fixed-point steps of Álvarez-Esteban
    et al. (the barycenter step with :math:`\tau = 1`),

    .. math:: \nu \leftarrow \Bigl(\sum_i \lambda_i \nabla\psi_i\Bigr)_\# \nu,

    where before each step every pair :math:`(\psi_i, \psi_i^*)` is refined by
    ``polish_iters`` back-and-forth iterations (:func:`wasserstein2_grid`) between
    :math:`\nu` and :math:`\mu_i`, started from the potentials at hand, and the last step
    deposits with :math:`\lceil 2\,\text{stretch}\rceil` sub-samples per axis. At the
    barycenter :math:`\nu` is a fixed point of this map, and for Gaussians the iteration
    converges to it; the warm start is what makes the maps accurate in a few iterations,
    and the finer last deposit removes most of the cell-scale speckle.

    Parameters
    ----------
    problem : jitopt.problems.BarycenterProblem
        The densities :math:`\mu_i` on a common grid and the weights :math:`\lambda`.
    x0 : array_like of the grid's shape, optional
        Initial barycenter, a nonnegative density of positive mass on the grid (normalised;
        not modified). Default: the input of largest weight (``"paper"``: the first input,
        as in the authors' code).
    variant : {"sharp", "paper"}, default "sharp"
        The method with the changes above, or as published (bit for bit the same as
        before they were made).
    maxiter : int, optional
        ``"paper"`` (default 300): the length :math:`T \ge 1` of the schedule
        :math:`\tau_t = e^{-t/T}`; running all of it is the normal end
        (``Status.SCHEDULE_DONE``), and ``maxiter=1`` is a one-iteration schedule, not
        the first iteration of a longer one. ``"sharp"`` (default 1000): a cap
        (``Status.MAXITER``).
    tol : float, default 1e-12
        Stop (``Status.CONVERGED``) when ``stationarity`` is at most ``tol``: with the
        default, in practice only when the barycenter is found exactly (identical inputs).
    xtol : float, optional
        Stop (``Status.CONVERGED``) when the next barycenter step would move mass by at
        most ``xtol`` cells, measured as :math:`\tau_{t+1} \|x - \nabla\bar\psi\|_{L^2(\nu)}`
        in cells (the :math:`W_2` length of the step). Default 1e-3 (``"paper"``: 0, off).
    horizon : int, optional
        ``"sharp"``: the horizon :math:`H` of :math:`\tau_t = e^{-t/H}` (default 100).
        ``"paper"`` uses :math:`H = T` and ignores it.
    warm_start : int, optional
        Back-and-forth iterations that start each potential (default 100; ``"paper"``:
        0, the potentials start at :math:`q`).
    coarsest : int, optional
        ``"sharp"``, without ``x0``: the coarse-to-fine start (default 128 in 2-D, 64 in
        3-D). A grid with even sides all larger than ``coarsest`` is first solved on the
        grid of its 2 x 2 (x 2) blocks (recursively, down to at most ``coarsest`` cells
        per side, with the same options); the displacement potentials
        :math:`\psi_i - q` and the barycenter of that run, with their
        :math:`(-1)^{i+j}` mode filtered out, are interpolated
        by cubic convolution, the potentials made convex, and the run goes on from there
        without ``warm_start`` and with the horizon ``max(1, horizon // 5)``. A value
        at least the grid's sides turns it off. ``"paper"`` ignores it.
    output : {"iterate", "sharpened"}, default "iterate"
        ``"iterate"``: the last barycenter iterate (``"paper"``: always). ``"sharpened"``:
        :math:`\sum_i \lambda_i (\nabla\psi_i^*)_\#\mu_i`, each input pushed once by its
        final inverse map with :math:`\lceil 2\,\text{stretch}\rceil` sub-samples per
        axis (unless ``stationarity <= tol``): free of cell-scale speckle, but it inherits
        the error of the inverse maps, so it is farther from the barycenter in :math:`W_2`
        and, where an input has thin tails, in covariance.
    polish : int, optional
        Fixed-point steps of the final polish (above): default 3 (``"paper"``: 0, the
        only value it accepts). It runs on the finest grid only, after a stop by ``xtol``
        or ``maxiter``; not after ``stationarity <= tol`` (the iterate is exact already;
        so not for identical inputs or a unit weight), a callback's stop, ``max_time`` or
        a non-finite value, and it is dropped (the unpolished result returned) if a value
        in it becomes non-finite. ``polish=0`` returns the loop's last iterate.
    polish_iters : int, default 10
        Back-and-forth iterations per input and polish step.
    order : {"gauss-seidel", "jacobi"}, default "gauss-seidel"
        Barycenter step with the freshly updated potentials (as the authors' code) or with
        those before the ascent step (as the printed algorithm).
    sigma0 : float, default 0.05
        Initial :math:`\dot H^1` step size of every potential.
    n_jobs : int, optional
        Threads for the per-input steps (default: one below 64 x 64 cells, where threads
        do not pay, else the number of CPUs, at most the number of inputs with positive
        weight); also for the back-and-forth runs of the warm start and the polish.
    max_subsamples : int, default 16
        Cap on the sub-samples per cell and axis in the pushforwards.
    max_time : float, optional
        Stop (``Status.MAXTIME``) after this many seconds.
    {common options}

    Returns
    -------
    OptimizeResult
        ``x``: the barycenter, nonnegative and summing to one. ``fun``: the estimate
        :math:`2 J(\nu, \psi)` of :math:`\sum_i \lambda_i W_2^2(\nu, \mu_i)` with the
        potentials at hand (a lower bound once they are optimal). ``stationarity``: the
        larger of the squared Wasserstein gradient norm
        :math:`\int |x - \nabla\bar\psi|^2 d\nu` (the paper's stationarity measure) and the
        largest residual :math:`\|(\nabla\psi_i^*)_\#\mu_i - \nu\|^2_{\dot H^{-1}}`, both
        zero exactly at the barycenter and its optimal potentials. After a polish these
        values, ``potentials``, ``dual``, ``h1_residual`` and ``wasserstein_gradient``
        are evaluated once more at the returned ``x`` with the refined potentials.
        ``nit``: the barycenter steps taken (the polish steps not included). ``nfev``:
        evaluations of the objective estimate (``nit + 1``, plus 1 after a polish);
        ``njev``: evaluations of the Wasserstein gradient (the same); ``nifo``:
        pushforwards of the inputs (one per input of positive weight and evaluation, plus
        ``2 * polish * polish_iters`` per such input for the polish's back-and-forth
        iterations). The history holds the iterates of the loop, not the polished one.
        Also ``potentials`` (the final :math:`\psi_i`, shape ``(n,)`` + the grid),
        ``sigma`` (the final step sizes), ``dual`` (the final dual values
        :math:`\approx\tfrac12 W_2^2(\nu, \mu_i)`), ``h1_residual`` (the final residuals),
        ``wasserstein_gradient`` (the final squared Wasserstein gradient norm) and
        ``levels`` (the grid's sides and ``nit`` of each coarser run of the coarse-to-fine
        start, coarsest first; ``nit``, ``nfev``, ``njev`` and ``nifo`` count the
        finest grid only). A NaN
        or inf in the iteration stops with ``Status.NONFINITE`` and the best iterate.

    Notes
    -----
    Inputs with zero weight are not touched. With non-square grids the cells are rectangles of
    the unit square. :func:`sga` solves the same problem in a quarter to two fifths of
    the time, less closely on most of the measured inputs. See :doc:`/theory/wdha` (with
    the measurements).

    References
    ----------
    K. Kim, R. Yao, C. Zhu and X. Chen, "Optimal Transport Barycenter via Nonconvex-Concave
    Minimax Optimization", ICML 2025 (PMLR 267), arXiv:2501.14635.

    Examples
    --------
    Identical inputs are their own barycenter, found at the start:

    >>> import numpy as np, jitopt
    >>> rho = np.ones((8, 8))
    >>> rho[2:5, 3:6] = 4.0
    >>> problem = jitopt.problems.BarycenterProblem([rho, 2 * rho])
    >>> res = jitopt.transport.wdha(problem)
    >>> res.status.name, res.nit, bool(np.allclose(res.x, rho / rho.sum()))
    ('CONVERGED', 0, True)

    Two squares of side 8 cells, 16 rows and 8 columns apart: the barycenter is the square
    halfway between them, at :math:`W_2^2 = (8/32)^2 + (4/32)^2 = 0.078125` from each. The
    run stops when the barycenter no longer moves:

    >>> A = np.zeros((2, 32, 32))
    >>> A[0, 4:12, 4:12] = A[1, 20:28, 12:20] = 1.0
    >>> res = jitopt.transport.wdha(jitopt.problems.BarycenterProblem(A))
    >>> res.status.name, round(res.fun, 3)
    ('CONVERGED', 0.078)
    >>> rows, cols = np.indices(res.x.shape)  # the centre of mass, in cells
    >>> round(float(np.sum(res.x * rows)), 1), round(float(np.sum(res.x * cols)), 1)
    (15.5, 11.5)
    """
    n, grid = problem.n_densities, problem.shape
    variant = check_choice("variant", variant, ("sharp", "paper"))
    paper = variant == "paper"
    T = check_int("maxiter", (300 if paper else 1000) if maxiter is None else maxiter, low=1)
    tol = check_real("tol", tol, low=0.0)
    xtol = check_real("xtol", (0.0 if paper else 1e-3) if xtol is None else xtol, low=0.0)
    horizon = check_int("horizon", T if paper else 100 if horizon is None else horizon, low=1)
    warm_start = check_int("warm_start", (0 if paper else 100) if warm_start is None
                           else warm_start, low=0)
    coarsest = check_int("coarsest", (128 if len(grid) == 2 else 64) if coarsest is None
                         else coarsest, low=3)
    output = check_choice("output", "iterate" if paper or output is None else output,
                          ("iterate", "sharpened"))
    polish = check_int("polish", (0 if paper else 3) if polish is None else polish, low=0)
    if paper and polish:
        raise ValueError(f"polish must be 0 with variant='paper' (the method as published), "
                         f"got {polish}")
    polish_iters = check_int("polish_iters", polish_iters, low=1)
    order = check_choice("order", order, ("gauss-seidel", "jacobi"))
    sigma0 = check_real("sigma0", sigma0, low=0.0, low_open=True)
    maxsub = check_int("max_subsamples", max_subsamples, low=1)
    max_time = check_real("max_time", max_time, low=0.0)
    check_rng(rng)
    if n_jobs is None:  # threads pay from about 64 x 64 cells on (measured on 2 cores)
        active = int(np.count_nonzero(problem.weights > 0))
        n_jobs = min(active, os.cpu_count() or 1) if np.prod(grid) >= 4096 else 1
    n_jobs = check_int("n_jobs", n_jobs, low=1)
    nu = None
    if x0 is not None:
        nu = as_density("x0", x0)
        if nu.shape != grid:
            raise ValueError(f"x0 must have the grid shape {grid} of the densities, "
                             f"got {nu.shape}")
    o = WdhaOptions(n=n, T=T, tol=tol, xtol=xtol, horizon=horizon, warm_start=warm_start,
                    coarsest=coarsest, output=output, polish=polish, polish_iters=polish_iters,
                    order=order, sigma0=sigma0, maxsub=maxsub, max_time=max_time,
                    n_jobs=n_jobs)
    solve = wdha_paper if paper else wdha_sharp
    return solve(problem, nu, o, callback, history, disp)
