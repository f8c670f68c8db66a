"""Result object, status codes, per-iteration history and callbacks shared by every solver."""

import inspect
import time

import numpy as np
import scipy.optimize

__all__ = ["OptimizeResult", "Status", "History", "Monitor"]


class Status:
    """Termination codes shared by every solver (``success`` is ``status == 0``)."""

    CONVERGED = 0
    MAXITER = 1
    MAXTIME = 2
    SMALL_STEP = 3
    NONFINITE = 4
    CALLBACK = 99  # scipy's code for a callback that raised StopIteration

    MESSAGES = {
        CONVERGED: "Optimization terminated successfully: gradient norm below tolerance.",
        MAXITER: "Maximum number of iterations has been exceeded.",
        MAXTIME: "Maximum time has been exceeded.",
        SMALL_STEP: "Step size fell below min_step before the gradient tolerance was met.",
        NONFINITE: "An oracle returned a non-finite value (NaN or inf).",
        CALLBACK: "`callback` raised `StopIteration`.",
    }


class OptimizeResult(scipy.optimize.OptimizeResult):
    """Result of a jitopt solver: a :class:`scipy.optimize.OptimizeResult` with more fields.

    Attributes
    ----------
    x : ndarray
        The solution, a point of the problem's manifold (same shape as ``x0``).
    fun : float
        Cost at ``x``.
    grad_norm : float
        Norm of the Riemannian gradient at ``x`` (the stationarity measure).
    success : bool
        ``status == 0``.
    status : int
        A code from :class:`Status`.
    message : str
        Why the solver stopped.
    nit : int
        Number of iterations.
    nfev, njev, nifo : int
        Oracle calls: cost evaluations, gradient evaluations, and per-sample gradients
        (incremental first-order oracle calls; a full gradient of a finite sum of ``n``
        terms counts ``n``, of a plain problem counts 1).
    time : float
        Wall-clock seconds spent in the solver.
    history : dict of ndarray, optional
        Present when the solver was run with ``history=True``: one entry per iteration
        (``iteration, time, fun, grad_norm, nfev, njev, nifo``).
    """


class History:
    """Collects per-iteration records and turns them into a dict of arrays."""

    FIELDS = ("iteration", "time", "fun", "grad_norm", "nfev", "njev", "nifo")

    def __init__(self):
        self._rows = []

    def record(self, iteration, elapsed, fun, grad_norm, counts):
        self._rows.append((iteration, elapsed, fun, grad_norm) + counts)

    def as_arrays(self):
        columns = list(zip(*self._rows)) if self._rows else [()] * len(self.FIELDS)
        dtypes = (np.int64, float, float, float, np.int64, np.int64, np.int64)
        return {
            name: np.asarray(col, dtype=dt)
            for name, col, dt in zip(self.FIELDS, columns, dtypes)
        }


def _wants_intermediate_result(callback):
    """scipy's rule: the new callback form has a parameter named ``intermediate_result``."""
    try:
        params = inspect.signature(callback).parameters
    except (TypeError, ValueError):
        return False
    return "intermediate_result" in params


class Monitor:
    """Per-iteration bookkeeping of a solver: clock, history, callback and verbose output.

    A solver creates it before its first oracle call and calls :meth:`iteration` once per
    iterate, ``nit = 0`` being the starting point (recorded in the history, not passed to
    the callback, as in scipy); it returns ``True`` when the user's callback raised
    :class:`StopIteration`.
    Oracle counts are those made since the monitor was created, so a problem can be solved
    several times.
    """

    def __init__(self, problem, callback=None, history=False, disp=False, disp_every=1):
        if callback is not None and not callable(callback):
            raise TypeError(f"callback must be callable or None, got {type(callback).__name__}")
        self.problem = problem
        self.callback = callback
        self._new_callback = callback is not None and _wants_intermediate_result(callback)
        self.history = History() if history else None
        self.disp = bool(disp)
        self.disp_every = max(int(disp_every), 1)
        self._base = self._snapshot()
        self.start = time.perf_counter()

    def _snapshot(self):
        c = self.problem.counts
        return (c.nfev, c.njev, c.nifo)

    def counts(self):
        """``(nfev, njev, nifo)`` since the monitor was created."""
        return tuple(now - base for now, base in zip(self._snapshot(), self._base))

    def elapsed(self):
        return time.perf_counter() - self.start

    def iteration(self, nit, x, fun, grad_norm):
        if self.history is not None:
            self.history.record(nit, self.elapsed(), fun, grad_norm, self.counts())
        if self.disp and nit % self.disp_every == 0:
            if nit == 0:
                print(f"{'iter':>6} {'cost':>22} {'grad norm':>12} {'nfev':>7} {'njev':>7}")
            nfev, njev, _ = self.counts()
            print(f"{nit:6d} {fun:22.15e} {grad_norm:12.4e} {nfev:7d} {njev:7d}")
        if self.callback is None or nit == 0:  # like scipy: after each iteration only
            return False
        try:
            if self._new_callback:
                self.callback(
                    intermediate_result=OptimizeResult(
                        x=np.array(x, copy=True), fun=fun, grad_norm=grad_norm, nit=nit
                    )
                )
            else:
                self.callback(np.array(x, copy=True))
        except StopIteration:
            return True
        return False

    def result(self, x, fun, grad_norm, nit, status, message=None, **extra):
        """Build the :class:`OptimizeResult` (prints the outcome when ``disp`` is on)."""
        nfev, njev, nifo = self.counts()
        res = OptimizeResult(
            x=x,
            fun=float(fun),
            grad_norm=float(grad_norm),
            success=status == Status.CONVERGED,
            status=int(status),
            message=message or Status.MESSAGES[status],
            nit=int(nit),
            nfev=nfev,
            njev=njev,
            nifo=nifo,
            time=self.elapsed(),
            **extra,
        )
        if self.history is not None:
            res.history = self.history.as_arrays()
        if self.disp:
            print(res.message)
            print(f"         cost: {res.fun:.15e}  grad norm: {res.grad_norm:.3e}  "
                  f"iterations: {res.nit}  nfev: {res.nfev}  njev: {res.njev}")
        return res
