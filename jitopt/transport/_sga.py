"""SGA: Sobolev gradient ascent on the constraint-free dual of the Wasserstein barycenter
problem, on the grid kernels of WDHA, ending with WDHA's polish."""

import os

import numpy as np

from .._core.registry import register_method
from .._core.result import NonFiniteOracle, Status
from .._core.run import Algorithm, State, run, sub_run
from .._core.stopping import MaxIter, MaxTime, Tolerance, verdict
from ..problems import BarycenterProblem
from ..validation import check_choice, check_int, check_real, check_rng
from . import _kernels, _nd, _polish
from ._grid import _half_sq_norm
from ._poisson import _invlap_inplace
from ._levels import coarsen, prolong
from ._wdha_variants import WdhaOptions, _pool, _sharpened

__all__ = ["sga"]

MEASURE = "largest H^-1 distance between an input's pushforward and their mean"

@register_method("sga", BarycenterProblem, tol_option="tol", doc=dict(
    history=r", and ``dual_value`` (the iterate's :math:`2D(f)`), ``step`` (:math:`\eta`), "
            "``max_h1_residual`` and ``h1_residual_<i>``; in the loop ``fun`` is the "
            "iterate's dual value",
    rng="Accepted for the common interface; SGA is deterministic."))
def sga(problem, x0=None, *, variant="sharp", step=None, schedule=None, maxiter=300,
        tol=1e-12, polish=None, polish_iters=10, output="iterate", n_jobs=None,
        coarsest=None, fine_maxiter=None, max_subsamples=16, max_time=np.inf, callback=None, history=False, disp=False,
        rng=None):
    r"""Exact (unregularised) Wasserstein-2 barycenter of densities on a 2-D or 3-D grid by
    Sobolev gradient ascent (SGA) on a concave dual.

    With :math:`q = \tfrac12|x|^2` and the c-transform :math:`f^c = q - (q - f)^*`, the
    barycenter problem :math:`\min_\nu \sum_i \lambda_i W_2^2(\nu, \mu_i)` has the dual

    .. math::

        \max_{f_1, \dots, f_n}\ D(f) = \sum_i \lambda_i \int f_i^c\, d\mu_i
        \quad \text{subject to} \quad \sum_i \lambda_i f_i = 0

    over arbitrary grid functions (no convexity constraint), with the same optimal value
    (up to the factor 2: :math:`2D` bounds :math:`\sum_i\lambda_i W_2^2`). Its first variation
    is :math:`-\sum_i \lambda_i \int h_i\, d\rho_i` with the pushforwards
    :math:`\rho_i = (\nabla\varphi_i)_\#\mu_i`, :math:`\varphi_i = (q - f_i)^*`, so the
    :math:`\dot H^1` gradient on the constraint's tangent space is
    :math:`G_i = (-\Delta)^{-1}(\bar\rho - \rho_i)`, :math:`\bar\rho = \sum_k \lambda_k\rho_k`,
    and each iteration is

    .. math:: f_i \leftarrow f_i + \eta\, G_i, \qquad \eta = c / \max_i \max \mu_i,

    which keeps :math:`\sum_i \lambda_i f_i = 0` and treats every input alike. A step that
    lowers :math:`D` by more than 1 % is rejected and :math:`c` halved. At the optimum all
    :math:`\rho_i` agree and are the barycenter. Per iteration and input: one exact grid
    Legendre transform, one pushforward and one Poisson solve, :math:`O(m \log m)` for
    :math:`m` cells; the per-input work runs in threads.

    The last :math:`\bar\rho` is then polished as WDHA's (:func:`wdha`): ``polish``
    fixed-point steps :math:`\nu \leftarrow (\sum_i\lambda_i\nabla\psi_i)_\#\nu` from
    :math:`\psi_i = \varphi_i^*`, each after ``polish_iters`` back-and-forth iterations per
    input. SGA never makes :math:`q - f_i` convex, so its maps are rough where the inputs
    vanish and the raw :math:`\bar\rho` is too wide there; the polish removes this.

    ``variant="paper"`` is the method as in the authors' code: the last input of positive
    weight is eliminated, :math:`f_n = -\sum_{j<n} (\lambda_j/\lambda_n) f_j`, the others
    step by :math:`\eta_t \lambda_j (-\Delta)^{-1}(\rho_n - \rho_j)` with
    :math:`\eta_t = 0.5/\sqrt{t + 1}` (not scaled by the densities), no step guard, no
    polish, and the output is :math:`\rho` of the first input of positive weight.

    Parameters
    ----------
    problem : jitopt.problems.BarycenterProblem
        The densities :math:`\mu_i` on a common grid and the weights :math:`\lambda`.
    x0 : None
        A dual method has no starting barycenter (the potentials start at 0); only
        ``None`` is accepted.
    variant : {"sharp", "paper"}, default "sharp"
        The symmetric method above, or the authors' (reproduction only).
    step : float, optional
        ``"sharp"``: :math:`c` in :math:`\eta = c / \max_i\max\mu_i` (densities of mean one;
        default 4). ``"paper"``: the absolute step (default 0.5).
    schedule : {"constant", "sqrt"}, optional
        :math:`\eta_t = \eta` or :math:`\eta/\sqrt{t + 1}`. Default ``"constant"``
        (``"paper"``: ``"sqrt"``).
    maxiter : int, default 300
        The number of iterations :math:`T` (on the coarsest grid of the coarse-to-fine
        start); running all of them is the normal end (``Status.SCHEDULE_DONE``).
    tol : float, default 1e-12
        Stop (``Status.CONVERGED``) when ``stationarity`` is at most ``tol``: with the
        default, when the barycenter is found exactly (identical inputs, a unit weight).
    polish : int, optional
        Fixed-point steps of the final polish (default 3; ``"paper"``: 0, the only value
        it accepts). It runs after ``Status.SCHEDULE_DONE`` only, and is dropped (the
        unpolished result returned) if a value in it becomes non-finite.
    polish_iters : int, default 10
        Back-and-forth iterations per input and polish step.
    output : {"iterate", "sharpened"}, default "iterate"
        ``"iterate"``: :math:`\bar\rho`, polished. ``"sharpened"``: as :func:`wdha`'s,
        each input pushed once by its final map with finer sub-samples.
    n_jobs : int, optional
        Threads for the per-input steps (default: one below 64 x 64 cells, else the number
        of CPUs, at most the number of inputs with positive weight).
    coarsest : int, optional
        The coarse-to-fine start (default 64 on 2-D grids, 32 on 3-D grids; not with
        ``"paper"``). A grid with even sides all larger than ``coarsest`` is first
        solved, without polish, on the grid of its 2 x 2 (x 2) blocks (recursively, down to
        at most ``coarsest`` cells per side, with the same options); the potentials
        :math:`f_i` of that run, with their :math:`(-1)^{i+j}` mode filtered out, are
        interpolated by cubic convolution (a linear map, so
        :math:`\sum_i \lambda_i f_i = 0` still holds), its step :math:`c` is kept, and
        the run goes on for ``fine_maxiter`` iterations.
    fine_maxiter : int, optional
        The iterations on a grid started from a coarser one (default ``maxiter // 20``).
    max_subsamples : int, default 16
        Cap on the sub-samples per cell and axis in the pushforwards.
    max_time : float, optional
        Stop (``Status.MAXTIME``) after this many seconds.
    {common options}

    Returns
    -------
    OptimizeResult
        ``x``: the barycenter, nonnegative and summing to one. ``fun``:
        :math:`2\sum_i\lambda_i I_i` at the returned ``x``, where
        :math:`I_i = \int (q - \psi_i)\,dx + \int (q - \psi_i^*)\,d\mu_i` with the final
        (polished) potentials :math:`\psi_i`, the estimate of
        :math:`\sum_i\lambda_i W_2^2(x, \mu_i)` that :func:`wdha` reports. ``dual_value``:
        the largest :math:`2D(f)` over the iterates, a certified lower bound of the
        optimal :math:`\sum_i\lambda_i W_2^2` over grid densities (each iterate's is
        one, up to rounding, since :math:`f_i(y) + f_i^c(x) \le \tfrac12|x - y|^2` on the
        grid; with a constant step it can drift down slowly after its peak, the
        pushforward not being the exact supergradient of the discrete dual). ``gap``:
        ``fun - dual_value``; without the polish and at the peak iterate it is
        :math:`2\int\sum_i\lambda_i[(q - f_i) - (q - f_i)^{**}]\,dx \ge 0`, the
        convexity defect that SGA leaves; otherwise an estimate. ``stationarity``:
        :math:`\max_i \|\rho_i - \bar\rho\|^2_{\dot H^{-1}}` at the last iterate, zero
        exactly at the optimum. ``dual`` (the :math:`I_i`), ``h1_residual`` (the terms of
        ``stationarity``), ``potentials`` (the :math:`\psi_i`, usable as in :func:`wdha`),
        ``step`` (the final :math:`c`), ``levels`` (the grid's sides and ``nit`` of each
        coarser run of the coarse-to-fine start, coarsest first; the other counts and
        ``dual_value`` are of the finest grid only). ``nit``: accepted iterations; ``nfev``: evaluations
        of :math:`D` (rejected trials included); ``njev``: evaluations of the gradients
        :math:`G`; ``nifo``: pushforwards of the inputs (one per input of positive weight
        and gradient, plus ``2 * polish * polish_iters`` per such input for the polish).

    Notes
    -----
    Inputs with zero weight are not touched. The 1 % tolerance of the step guard accepts
    the small decreases that occur near the optimum, where the pushforward is not the exact
    supergradient of the discrete dual. SGA takes a quarter to two fifths of
    :func:`wdha`'s time and is less close on most of the measured inputs, so ``wdha`` is
    the default. See :doc:`/theory/wdha` (with the measurements).

    References
    ----------
    K. Kim, B. Zhou, C. Zhu and X. Chen, "Sobolev Gradient Ascent for Optimal Transport:
    Barycenter Optimization and Convergence Analysis", ICLR 2026, arXiv:2505.13660.

    Examples
    --------
    Two squares of side 8 cells, 16 rows and 8 columns apart: the barycenter is the square
    halfway between them, at :math:`\sum_i \lambda_i W_2^2 = (8/32)^2 + (4/32)^2 = 0.078125`,
    which the dual value approaches from below:

    >>> import numpy as np, jitopt
    >>> A = np.zeros((2, 32, 32))
    >>> A[0, 4:12, 4:12] = A[1, 20:28, 12:20] = 1.0
    >>> res = jitopt.transport.sga(jitopt.problems.BarycenterProblem(A))
    >>> res.status.name, bool(res.dual_value <= 0.078125), round(res.dual_value, 3)
    ('SCHEDULE_DONE', True, 0.078)
    >>> rows, cols = np.indices(res.x.shape)  # the centre of mass, in cells
    >>> round(float(np.sum(res.x * rows)), 1), round(float(np.sum(res.x * cols)), 1)
    (15.5, 11.5)
    """
    n = problem.n_densities
    variant = check_choice("variant", variant, ("sharp", "paper"))
    paper = variant == "paper"
    if x0 is not None:
        raise ValueError("x0 must be None for sga (a dual method: the potentials start at 0)")
    step = check_real("step", (0.5 if paper else 4.0) if step is None else step, low=0.0,
                      low_open=True)
    schedule = check_choice("schedule", ("sqrt" if paper else "constant") if schedule is None
                            else schedule, ("constant", "sqrt"))
    T = check_int("maxiter", maxiter, low=1)
    tol = check_real("tol", tol, low=0.0)
    polish = check_int("polish", (0 if paper else 3) if polish is None else polish, low=0)
    if paper and polish:
        raise ValueError(f"polish must be 0 with variant='paper' (the method as published), "
                         f"got {polish}")
    polish_iters = check_int("polish_iters", polish_iters, low=1)
    output = check_choice("output", output, ("iterate", "sharpened"))
    maxsub = check_int("max_subsamples", max_subsamples, low=1)
    max_time = check_real("max_time", max_time, low=0.0)
    check_rng(rng)
    if n_jobs is None:  # threads pay from about 64 x 64 cells on, as for wdha
        active = int(np.count_nonzero(problem.weights > 0))
        n_jobs = min(active, os.cpu_count() or 1) if problem.densities[0].size >= 4096 else 1
    n_jobs = check_int("n_jobs", n_jobs, low=1)
    grid = problem.densities.shape[1:]
    coarsest = check_int("coarsest", (32 if len(grid) == 3 else 64) if coarsest is None
                         else coarsest, low=3)
    fine_maxiter = check_int("fine_maxiter", max(1, T // 20) if fine_maxiter is None
                             else fine_maxiter, low=1)
    o = WdhaOptions(n=n, paper=paper, step=step, sqrt=schedule == "sqrt", T=T, tol=tol,
                    polish=polish, polish_iters=polish_iters, output=output, maxsub=maxsub,
                    coarsest=coarsest, fine_T=fine_maxiter, max_time=max_time)
    with _pool(n_jobs) as pool:
        return run(problem, Sga(o, pool), None, stop=_stop(o, grid, problem.weights),
                   callback=callback, history=history, disp=disp,
                   disp_every=max(1, T // 50))


def _coarse_to_fine(o, grid, lam):
    """Whether a run on ``grid`` starts from the grid of its 2 x 2 (x 2) blocks."""
    return (not o.paper and all(n % 2 == 0 for n in grid) and min(grid) > max(o.coarsest, 5)
            and np.count_nonzero(lam > 0) > 1)


def _stop(o, grid, lam):
    """The stopping tests of a run on ``grid``: ``fine_maxiter`` iterations after a coarse
    start, else ``maxiter``."""
    T = o.fine_T if _coarse_to_fine(o, grid, lam) else o.T
    return (Tolerance("tol", o.tol) | MaxIter(T, status=Status.SCHEDULE_DONE)
            | MaxTime(o.max_time))


def _mean_product(a, b):
    """``mean(a * b)`` with no temporary grid (and no BLAS call, which threads share)."""
    axes = "ijk"[:a.ndim]
    return float(np.einsum(f"{axes},{axes}->", a, b)) / a.size


class Sga(Algorithm):
    """The iteration: a trial ascent step on every potential ``f`` (:meth:`direction`), its
    conjugates and dual value (:meth:`conjugates`), accepted unless the guard rejects it,
    then the pushforwards and :math:`\\dot H^1` gradients at the new iterate
    (:meth:`gradients`). ``state.dual`` is :math:`D(f)`. The end (:meth:`finish`) writes
    the potentials :math:`\\psi_i` over ``f``, but in a ``coarse`` run, whose ``f`` the run
    on the finer grid starts from."""

    measure = MEASURE

    def __init__(self, o, pool, coarse=False):
        self.o, self.pool, self.coarse = o, pool, coarse
        self.columns = (("dual_value", "step", "max_h1_residual")
                        + tuple(f"h1_residual_{i}" for i in range(o.n)))

    def start(self, problem, x):
        o, mus = self.o, problem.densities
        self.problem, self.mus, self.lam = problem, mus, problem.weights
        self.active = [i for i in range(o.n) if self.lam[i] > 0]
        self.q = _half_sq_norm(mus.shape[1:])
        self.levels, self.c = [], o.step
        self.f = self.coarse_start()
        # phi[i] = (q - f[i])*; g[i] holds the pushforward rho_i, then the gradient G_i
        self.phi, self.rbar = np.empty(mus.shape), np.empty(self.q.shape)
        self.g = np.zeros(mus.shape)
        self.muq = {i: _mean_product(mus[i], self.q) for i in self.active}
        self.res = np.zeros(o.n)
        self.scale = 1.0 if o.paper else 1.0 / max(mus[i].max() for i in self.active)
        self.psi, self.dual, self.dual_value, self.gap = None, np.full(o.n, np.nan), np.nan, np.nan
        s = State(None, np.nan, np.nan, self.measure, dual=self.conjugates())
        if not np.isfinite(s.dual):
            raise NonFiniteOracle("The dual value is non-finite (NaN or inf)")
        self.gradients(s, 0.0)
        return s

    def coarse_start(self):
        """The potentials: zero, or prolonged (:func:`~jitopt.transport._levels.prolong`)
        from a run without polish on the grid of 2 x 2 (x 2) blocks, whose final step ``c``
        is kept."""
        grid, lam = self.mus.shape[1:], self.lam
        f = np.zeros(self.mus.shape)
        if not _coarse_to_fine(self.o, grid, lam):
            return f
        problem = BarycenterProblem(coarsen(self.mus, len(grid)), lam)
        coarse = Sga(self.o.but(polish=0, output="iterate"), self.pool, coarse=True)
        s = sub_run(problem, coarse, None, _stop(self.o, problem.densities.shape[1:], lam))[0]
        self.levels = coarse.levels + [tuple(n // 2 for n in grid) + (s.nit,)]
        for i in self.active:
            f[i] = prolong(coarse.f[i])
        self.c = coarse.c
        return f

    def each(self, task):
        """``task(i)`` for the inputs of positive weight, in the threads if any; the list of
        the results."""
        return _nd.each(self.pool, task, self.active)

    def conjugates(self):
        """``phi[i] = (q - f[i])*`` for the inputs of positive weight; returns ``D(f)``."""
        q, f, phi = self.q, self.f, self.phi

        def one(i):
            np.subtract(q, f[i], out=phi[i])
            _nd.legendre(phi[i], phi[i])
            return self.muq[i] - _mean_product(self.mus[i], phi[i])

        terms = self.each(one)
        self.problem.counts.add(nfev=1)
        return float(sum(self.lam[i] * t for i, t in zip(self.active, terms)))

    def gradients(self, s, eta):
        """The pushforwards, their mean (the iterate), the gradients ``g`` and residuals at
        the current potentials; sets ``s``'s values."""
        g, rbar, act = self.g, self.rbar, self.active
        self.each(lambda i: _nd.push(self.mus[i], self.phi[i], g[i], self.o.maxsub, 1.0,
                                     False))
        _kernels.weighted_sum(g, self.lam, act, rbar)
        out = g[act[0]] if self.o.paper else rbar
        s.x, s.nu = out / out.sum(), rbar

        def gradient(i):  # g[i] = (-Laplacian)^-1 (rbar - rho_i)
            np.subtract(rbar, g[i], out=g[i])
            return _invlap_inplace(g[i])

        self.res[act] = self.each(gradient)
        self.problem.counts.add(njev=1, nifo=len(act))
        if not (np.all(np.isfinite(rbar)) and np.all(np.isfinite(self.res))):
            raise NonFiniteOracle("A pushforward or gradient is non-finite (NaN or inf)")
        s.fun = 2.0 * s.dual
        self.dual_value = max(self.dual_value, s.fun) if s.nit else s.fun
        s.stationarity = float(self.res.max())
        s.extra = dict(zip(self.columns, (s.fun, eta, s.stationarity, *self.res)))

    def move(self, eta):
        """``f += eta * (ascent direction)``, in place (``-eta`` undoes a step of the
        symmetric form)."""
        f, g, act = self.f, self.g, self.active
        if not self.o.paper:
            for i in act:
                _kernels.add_scaled(f[i], eta, g[i])
            return
        last, lam = act[-1], self.lam  # the authors' form: f_last eliminated
        f[last] = 0.0
        for j in act[:-1]:
            f[j] += eta * lam[j] * (g[j] - g[last])
            f[last] -= (lam[j] / lam[last]) * f[j]

    def step(self, s, budget):
        o = self.o
        while True:
            eta = self.c * self.scale / (np.sqrt(s.nit + 1.0) if o.sqrt else 1.0)
            with np.errstate(over="ignore", invalid="ignore"):
                self.move(eta)
                value = self.conjugates()
            if o.paper or value >= s.dual - 0.01 * abs(s.dual):  # the guard (NaN fails it)
                break
            self.move(-eta)
            self.c *= 0.5
            if self.c < o.step * 2.0 ** -30:
                self.conjugates()  # (of the iterate kept)
                return verdict(Status.SMALL_STEP, s, min_step=o.step * 2.0 ** -30)
        if not np.isfinite(value):
            raise NonFiniteOracle("The dual value is non-finite (NaN or inf)")
        s.dual = value
        s.nit += 1
        self.gradients(s, eta)

    def finish(self, s, ended, budget):
        o, status = self.o, ended[0]
        self.g = None  # (free now)
        # psi_i = phi_i*, paired with x: in f, not needed any more but by a finer level
        psi = np.zeros_like(self.f) if self.coarse else self.f  # (0: zero weight)
        self.each(lambda i: _nd.legendre(self.phi[i], psi[i]))
        nu, note = s.nu, ""
        if o.polish and status is Status.SCHEDULE_DONE:
            polished = _polish.polish(nu, self.mus, self.lam, psi, self.phi, self.active,
                                      o.polish, o.polish_iters, o.maxsub, self.pool)
            self.problem.counts.add(nifo=2 * o.polish * o.polish_iters * len(self.active))
            if polished is None:  # (the pairs of the iterate are kept)
                note = " The polish was dropped: a value in it became non-finite."
            else:
                nu = polished
                note = (f" Polished by {o.polish} fixed-point steps ({o.polish_iters} "
                        f"back-and-forth iterations per input and step).")
        if o.output == "sharpened" and s.stationarity > o.tol:
            nu = _sharpened(self.mus, self.lam, self.phi, self.active, o.maxsub)
        elif not o.paper:
            nu = nu / nu.sum()
        else:
            nu = s.x
        s.x = nu
        nu = nu * nu.size
        self.dual = np.zeros(o.n)
        for i in self.active:
            self.dual[i] = _nd.dual(psi[i], self.phi[i], nu, self.mus[i])
        self.psi = psi
        s.fun = 2.0 * float(self.dual @ self.lam)
        self.gap = s.fun - self.dual_value
        return ended[0], ended[1] + note

    def fields(self, x, nit):
        return {"dual_value": self.dual_value, "gap": self.gap, "dual": self.dual,
                "h1_residual": self.res, "potentials": self.psi, "step": self.c,
                "levels": self.levels}
