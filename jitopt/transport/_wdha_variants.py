"""The two variants of WDHA as algorithms of the run driver: the method as published
(:func:`wdha_paper`) and the default one (:func:`wdha_sharp`), with its coarse-to-fine start,
polish and sharpened output. :func:`jitopt.transport.wdha` checks the options and picks one."""

import contextlib
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .._core.result import NonFiniteOracle, Status
from .._core.run import Algorithm, State, run, sub_run
from .._core.stopping import Criterion, MaxIter, MaxTime, Tolerance, verdict
from ..problems import BarycenterProblem
from . import _kernels, _nd, _polish
from ._grid import _armijo, _back_and_forth, _half_sq_norm
from ._poisson import _invlap_inplace
from ._levels import coarsen, prolong_density, prolong_potentials

__all__ = []

MEASURE = "max(squared Wasserstein gradient norm, largest H^-1 residual)"


def _columns(n):
    """The method's own history columns for ``n`` inputs."""
    return (("wasserstein_gradient", "max_h1_residual", "step_cells")
            + tuple(f"dual_{i}" for i in range(n)) + tuple(f"h1_residual_{i}" for i in range(n)))


def _pool(n_jobs):
    """Threads for the per-input steps (none for one job)."""
    return ThreadPoolExecutor(n_jobs) if n_jobs > 1 else contextlib.nullcontext()


def _stop(o, schedule_status):
    """The stopping tests in their order; the schedule's end is ``schedule_status``."""
    return (Tolerance("tol", o.tol) | StepCells(o.xtol) | MaxIter(o.T, status=schedule_status)
            | MaxTime(o.max_time))


def wdha_paper(problem, nu, o, callback, history, disp):
    """WDHA as published from the density ``nu`` (mean one; default the first input): the
    schedule :math:`\\tau_t = e^{-t/T}` over the whole run, ending with
    ``Status.SCHEDULE_DONE``; options ``o`` checked by :func:`~jitopt.transport.wdha`."""
    nu = problem.densities[0].copy() if nu is None else nu
    with _pool(o.n_jobs) as pool:
        return run(problem, PaperWdha(o, nu, pool), nu / nu.sum(),
                   stop=_stop(o, Status.SCHEDULE_DONE), callback=callback, history=history,
                   disp=disp, disp_every=max(1, o.T // 50))


def wdha_sharp(problem, nu, o, callback, history, disp):
    """The default WDHA from the density ``nu`` (mean one; default the input of largest
    weight, and then the coarse-to-fine start): horizon, warm start, ``xtol``, polish and
    sharpened output in :meth:`SharpWdha.finish`."""
    lam = problem.weights
    shown = {"callback": callback, "history": history, "disp": disp,
             "disp_every": max(1, o.T // 50)}
    if nu is None and np.count_nonzero(lam > 0) == 1:
        return run(problem, UnitWeight(o), None, **shown, stop=MaxTime(o.max_time))
    coarse_to_fine = nu is None
    nu = problem.densities[int(np.argmax(lam))].copy() if nu is None else nu
    stop = _stop(o, Status.MAXITER)
    with _pool(o.n_jobs) as pool:
        return run(problem, SharpWdha(o, nu, pool, stop, coarse_to_fine), nu / nu.sum(),
                   stop=stop, **shown)


class WdhaOptions:
    """The checked options of a run, as attributes (``T`` is ``maxiter``, ``maxsub``
    ``max_subsamples``, ``n`` the number of inputs)."""

    def __init__(self, **options):
        self.__dict__.update(options)

    def but(self, **changes):
        """These options with ``changes``."""
        return WdhaOptions(**{**self.__dict__, **changes})


class StepCells(Criterion):
    """``CONVERGED`` once the next barycenter step would move mass by at most ``xtol``
    cells (0: never)."""

    def __init__(self, xtol):
        self.xtol = xtol

    def __call__(self, s, watch):
        if self.xtol and s.step_cells <= self.xtol:
            return Status.CONVERGED, _xtol_message(s.step_cells, self.xtol)
        return None


def _xtol_message(cells, xtol):
    return (f"Optimization terminated successfully: the next barycenter step moves mass by "
            f"{cells:.3e} cells (rms) <= xtol = {xtol:.3g}.")


class UnitWeight(Algorithm):
    """One input of weight 1: the barycenter is that input, with no iteration."""

    measure = MEASURE

    def __init__(self, o):
        self.o, self.columns = o, _columns(o.n)

    def start(self, problem, x):
        mus = problem.densities
        q = _half_sq_norm(mus.shape[1:])
        self.psi = np.empty(mus.shape)
        self.psi[:] = q - q.mean()
        i = int(np.flatnonzero(problem.weights > 0)[0])
        return State(mus[i] / mus[i].sum(), 0.0, 0.0, self.measure)

    def step(self, s, budget):
        return Status.CONVERGED, "One weight is 1: the barycenter is that input."

    def fields(self, x, nit):
        n = self.o.n
        return {"potentials": self.psi, "sigma": np.full(n, self.o.sigma0),
                "dual": np.zeros(n), "h1_residual": np.zeros(n), "wasserstein_gradient": 0.0,
                "levels": []}


class Wdha(Algorithm):
    """The iteration of both variants: a Wasserstein step on the barycenter ``state.nu``
    (mean one), then an :math:`\\dot H^1` ascent step on each potential at the new
    barycenter (:meth:`evaluate`). A variant gives the step-size rule :meth:`adapt`, the
    start of the potentials :meth:`prepare` and ``stretch_only`` (sub-samples in the
    barycenter step only from a stretch of 2 on)."""

    measure = MEASURE
    stretch_only = False

    def __init__(self, o, nu, pool):
        self.o, self.nu0, self.pool, self.columns = o, nu, pool, _columns(o.n)

    def start(self, problem, x):
        o, mus = self.o, problem.densities
        n, grid = len(mus), mus.shape[1:]
        self.problem, self.mus, self.lam = problem, mus, problem.weights
        self.active = [i for i in range(n) if self.lam[i] > 0]
        self.q = q = _half_sq_norm(grid)
        self.scratch = _nd.Scratch(grid)  # a pushforward and gradient per thread
        self.psi, self.phi = np.empty(mus.shape), np.empty(mus.shape)
        self.psi[:] = q - q.mean()
        self.levels, self.sig, self.horizon = [], np.full(n, o.sigma0), o.horizon
        self.dual = self.res = np.full(n, np.nan)  # (before the first evaluation)
        self.wgrad = np.nan
        nu, self.nu0 = self.prepare(self.nu0), None  # (the start is needed no more)
        self.last = np.full(n, -np.inf)
        self.pbar = np.empty(grid)
        s = State(None, np.nan, np.nan, self.measure, nu=nu)
        self.evaluate(s, True)
        return s

    def prepare(self, nu):
        """Start the potentials: each by ``warm_start`` back-and-forth iterations from
        ``nu`` to its input (at :math:`q` without them); returns the starting density."""
        def start(i):
            if (self.o.warm_start and self.lam[i] > 0
                    and np.max(np.abs(self.mus[i] - nu)) > 1e-12 * nu.max()):
                # the back-and-forth potential of the map from the start to input i, from
                # the pair (q, q) (as wasserstein2_grid's)
                self.psi[i] = self.phi[i] = self.q
                sigma = 4.0 / max(nu.max(), self.mus[i].max())
                _back_and_forth(nu, self.mus[i], self.psi[i], self.phi[i], sigma,
                                self.o.warm_start, 0.0)
            _nd.legendre(self.psi[i], self.phi[i])

        _nd.each(self.pool, start, range(len(self.mus)))
        return nu

    def step(self, s, budget):
        s.nit += 1
        f = self.pbar  # (made again in evaluate)
        f *= s.tau
        _kernels.add_scaled(f, 1.0 - s.tau, self.q)
        new = np.empty_like(s.nu)
        _nd.push(s.nu, f, new, self.o.maxsub, 1.0, self.stretch_only)
        new *= new.size / new.sum()
        s.nu = new
        # the barycenter after the last step is measured without an ascent step
        self.evaluate(s, s.nit < self.o.T)

    def weighted_potential(self):
        _kernels.weighted_sum(self.psi, self.lam, self.active, self.pbar)

    def residual(self, i, nu, g):
        """The H^-1 residual of input i; its Riesz representative in ``g``."""
        _nd.push(self.mus[i], self.phi[i], g, self.o.maxsub, 1.0, False)
        g -= nu
        return _invlap_inplace(g)

    def ascent(self, i, nu):
        psi, phi = self.psi[i], self.phi[i]
        with self.scratch.grid() as g:
            res = self.residual(i, nu, g)
            with np.errstate(over="ignore", invalid="ignore"):  # overflow: NONFINITE below
                g *= self.sig[i]
                psi += g
        _nd.legendre(psi, phi)
        _nd.legendre(phi, psi)
        return res, _nd.dual(psi, phi, nu, self.mus[i])

    def measure_at(self, i, nu):
        with self.scratch.grid() as g:
            res = self.residual(i, nu, g)
        return res, _nd.dual(self.psi[i], self.phi[i], nu, self.mus[i])

    def evaluate(self, s, ascend):
        """A step on each potential at ``s.nu`` (an ascent step, or none), then the
        duals, residuals, Wasserstein gradient, cost, stationarity and barycenter of
        ``s``; a non-finite value raises :class:`NonFiniteOracle`."""
        o, nu, n = self.o, s.nu, len(self.mus)
        if o.order == "jacobi" and ascend:
            self.weighted_potential()
        act = self.ascent if ascend else self.measure_at
        out = _nd.each(self.pool, lambda i: act(i, nu), self.active)
        dual, res = np.zeros(n), np.zeros(n)
        for i, (r, v) in zip(self.active, out):
            res[i], dual[i] = r, v
            if ascend:
                self.adapt(i, v, r)
                self.last[i] = v
        if o.order == "gauss-seidel" or not ascend:
            self.weighted_potential()
        with self.scratch.grid() as work:
            wgrad, cells = _kernels.displacement_norms(self.pbar, nu, work)
        self.problem.counts.add(nfev=1, njev=1, nifo=len(self.active))
        if not (np.all(np.isfinite(dual)) and np.all(np.isfinite(res))
                and np.isfinite(wgrad)):
            raise NonFiniteOracle("A dual value, residual or the Wasserstein gradient is "
                                  "non-finite (NaN or inf)")
        self.dual, self.res, self.wgrad = dual, res, wgrad
        s.fun, s.x = 2.0 * float((dual * self.lam).sum()), nu / nu.sum()
        s.stationarity = max(wgrad, float(res.max()))
        s.tau = np.exp(-(s.nit + 1) / self.horizon)  # of the next barycenter step
        s.step_cells = s.tau * cells
        s.extra = dict(zip(self.columns, (wgrad, float(res.max()), s.step_cells, *dual, *res)))

    def fields(self, x, nit):
        return {"potentials": self.psi, "sigma": self.sig, "dual": self.dual,
                "h1_residual": self.res, "wasserstein_gradient": self.wgrad,
                "levels": self.levels}


class PaperWdha(Wdha):
    """As published: :math:`\\sigma_i` times 0.99 whenever the dual value of input
    :math:`i` decreases."""

    def adapt(self, i, value, residual):
        if value < self.last[i]:
            self.sig[i] *= 0.99


class SharpWdha(Wdha):
    """The default variant: the back-and-forth step-size rule with the floor
    ``sigma0 / 50``, sub-samples only from a stretch of 2 on, the coarse-to-fine start
    (``coarse_to_fine``: its coarse runs end on ``stop``), then the polish and the sharpened
    output."""

    stretch_only = True

    def __init__(self, o, nu, pool, stop, coarse_to_fine):
        super().__init__(o, nu, pool)
        self.stop, self.coarse_to_fine = stop, coarse_to_fine

    def adapt(self, i, value, residual):
        self.sig[i] = max(self.o.sigma0 / 50, _armijo(self.sig[i], value - self.last[i],
                                                      residual))

    def prepare(self, nu):
        mus, grid = self.mus, nu.shape
        if not (self.coarse_to_fine and all(n % 2 == 0 for n in grid)
                and min(grid) > max(self.o.coarsest, 5)
                and any(np.max(np.abs(mus[i] - nu)) > 1e-12 * nu.max() for i in self.active)):
            return super().prepare(nu)
        # coarse to fine: solve on the 2 x 2 blocks, continue from the prolongation
        problem = BarycenterProblem(coarsen(mus, len(grid)), self.lam)
        start = problem.densities[int(np.argmax(self.lam))].copy()
        coarse = SharpWdha(self.o.but(polish=0, output="iterate"), start, self.pool, self.stop,
                           coarse_to_fine=True)
        s = sub_run(problem, coarse, start / start.sum(), self.stop)[0]
        self.levels = list(coarse.levels) + [tuple(n // 2 for n in grid) + (s.nit,)]
        prolong_potentials(coarse.psi, self.psi, self.phi)
        self.sig[:] = coarse.sig
        self.horizon = max(1, self.o.horizon // 5)
        return prolong_density(s.x)

    def finish(self, s, ended, budget):
        o, status = self.o, ended[0]
        if o.polish and s.stationarity > o.tol and status in (Status.CONVERGED,
                                                               Status.MAXITER):
            ended = self.polished(s, status)
        if o.output == "sharpened" and s.stationarity > o.tol:  # else exact already
            s.x = _sharpened(self.mus, self.lam, self.phi, self.active, o.maxsub)
        return ended

    def polished(self, s, status):
        """Polish ``s`` in place; the ending with a note on the polish."""
        o, cells = self.o, s.step_cells
        nu = _polish.polish(s.nu, self.mus, self.lam, self.psi, self.phi, self.active,
                            o.polish, o.polish_iters, o.maxsub, self.pool, self.scratch)
        self.problem.counts.add(nifo=2 * o.polish * o.polish_iters * len(self.active))
        if nu is None:
            note = "The polish was dropped: a value in it became non-finite."
        else:
            s.nu = nu
            self.evaluate(s, False)
            note = (f"Polished by {o.polish} fixed-point steps ({o.polish_iters} "
                    f"back-and-forth iterations per input and step).")
        message = (_xtol_message(cells, o.xtol) if status is Status.CONVERGED
                   else verdict(status, s, maxiter=o.T)[1])
        return status, message + " " + note


def _sharpened(mus, lam, phi, active, maxsub):
    r"""``sum_i lam_i (grad phi_i)_# mu_i``, each term one pushforward of a sharp input by
    its inverse map with ``ceil(2 * stretch)`` sub-samples per axis, summing to one."""
    out = np.zeros(mus.shape[1:])
    tmp = np.empty(mus.shape[1:])
    for i in active:
        _nd.push(mus[i], phi[i], tmp, maxsub, 2.0, False)
        out += lam[i] * tmp
    return out / out.sum()
