"""The one result, status table, history and per-iteration monitor shared by every solver.

A solver creates a :class:`Monitor` when it starts (after validating its arguments) and ends
with :meth:`Monitor.result`. Anything raised after the start (an oracle that raises or
returns non-finite values, an inner solver that fails) is turned into a result by the
registry's wrapper (:func:`jitopt._core.registry.register_method`) through
:meth:`Monitor.fault_result`: ``success=False``, the matching status, a message naming the
fault and the iteration, and the best iterate seen so far in ``x``.
"""

import enum
import inspect
import math
import threading
import time

import numpy as np

__all__ = ["OptimizeResult", "Status", "History", "Monitor", "OracleError", "NonFiniteOracle"]


class Status(enum.IntEnum):
    """Why a solver stopped: one code per stopping reason, the same in every solver.

    ``result.success`` is ``status.success``: true for :attr:`CONVERGED`, :attr:`TARGET` and
    :attr:`SCHEDULE_DONE`, the three ways a method ends as designed.

    Examples
    --------
    >>> import jitopt
    >>> jitopt.Status.MAXITER == 1, jitopt.Status.MAXITER.success
    (True, False)
    >>> jitopt.Status(5).name, jitopt.Status.TARGET.success
    ('TARGET', True)
    """

    #: the method's tolerance is met (the message names the quantity, its value and the tolerance)
    CONVERGED = 0
    #: ``maxiter`` iterations done before the tolerance was met
    MAXITER = 1
    #: ``max_time`` seconds spent
    MAXTIME = 2
    #: the line search or step rule found no step above ``min_step``
    SMALL_STEP = 3
    #: an oracle returned NaN or inf (``x`` is the best finite iterate)
    NONFINITE = 4
    #: the cost reached ``f_target``
    TARGET = 5
    #: ``max_passes`` passes over the samples of a finite sum done
    MAX_PASSES = 6
    #: ``max_samples`` samples drawn from a stream
    MAX_SAMPLES = 7
    #: a method with a fixed schedule (WDHA's step sizes) ran all of it
    SCHEDULE_DONE = 8
    #: an inner solver (subproblem, LP, factorisation) failed
    INNER_FAILURE = 9
    #: a user oracle raised an exception
    ORACLE_ERROR = 10
    #: the callback raised :class:`StopIteration` (scipy's code)
    CALLBACK = 99

    @property
    def success(self):
        """Whether this status is a successful end."""
        return self in (Status.CONVERGED, Status.TARGET, Status.SCHEDULE_DONE)

    def describe(self, **values):
        """The default message of this status, filled with ``values`` (limits, measured
        quantities); a shorter generic message when a value it names is missing."""
        try:
            return _MESSAGES[self].format(**values)
        except (KeyError, ValueError, TypeError):
            return _GENERIC[self]


_MESSAGES = {
    Status.CONVERGED: "Optimization terminated successfully: {measure} {stationarity:.3e} "
                      "<= {tol_name} = {tol:.3g}.",
    Status.MAXITER: "Maximum number of iterations (maxiter = {maxiter}) reached; "
                    "{measure} {stationarity:.3e}.",
    Status.MAXTIME: "Maximum time (max_time = {max_time:.3g} s) exceeded after "
                    "{nit} iterations.",
    Status.SMALL_STEP: "The step size fell below min_step = {min_step:.3g} at iteration "
                       "{nit} before the tolerance was met; {measure} {stationarity:.3e}.",
    Status.NONFINITE: "An oracle returned a non-finite value (NaN or inf) at iteration {nit}.",
    Status.TARGET: "Optimization terminated successfully: cost {fun:.10g} <= "
                   "f_target = {f_target:.10g}.",
    Status.MAX_PASSES: "Maximum number of passes over the samples (max_passes = "
                       "{max_passes:g}) reached; {measure} {stationarity:.3e}.",
    Status.MAX_SAMPLES: "Maximum number of samples (max_samples = {max_samples}) drawn; "
                        "{measure} {stationarity:.3e}.",
    Status.SCHEDULE_DONE: "The schedule of {maxiter} iterations is finished; "
                          "{measure} {stationarity:.3e}.",
    Status.INNER_FAILURE: "An inner solver failed at iteration {nit}: {error}.",
    Status.ORACLE_ERROR: "An oracle raised an exception at iteration {nit}: {error}.",
    Status.CALLBACK: "`callback` raised `StopIteration`.",
}

_GENERIC = {
    Status.CONVERGED: "Optimization terminated successfully.",
    Status.MAXITER: "Maximum number of iterations reached.",
    Status.MAXTIME: "Maximum time exceeded.",
    Status.SMALL_STEP: "The step size fell below min_step before the tolerance was met.",
    Status.NONFINITE: "An oracle returned a non-finite value (NaN or inf).",
    Status.TARGET: "Optimization terminated successfully: the cost reached f_target.",
    Status.MAX_PASSES: "Maximum number of passes over the samples reached.",
    Status.MAX_SAMPLES: "Maximum number of samples drawn.",
    Status.SCHEDULE_DONE: "The schedule is finished.",
    Status.INNER_FAILURE: "An inner solver failed.",
    Status.ORACLE_ERROR: "An oracle raised an exception.",
    Status.CALLBACK: "`callback` raised `StopIteration`.",
}


class OracleError(Exception):
    """Raised by a problem's counted oracle when the user's function raised (the original
    exception is the ``__cause__``); a solver run turns it into ``Status.ORACLE_ERROR``.

    Examples
    --------
    >>> import numpy as np, jitopt
    >>> def cost(x):
    ...     raise ZeroDivisionError("no cost here")
    >>> problem = jitopt.Problem(jitopt.manifolds.Sphere(2), cost, egrad=lambda x: x)
    >>> try:
    ...     problem.cost(np.array([1.0, 0.0]))
    ... except jitopt.OracleError as err:
    ...     print(type(err.__cause__).__name__, err.status.name)
    ZeroDivisionError ORACLE_ERROR
    """

    status = Status.ORACLE_ERROR


class NonFiniteOracle(OracleError):
    """Raised by a problem's counted oracle when it returned NaN or inf; a solver run turns
    it into ``Status.NONFINITE``.

    Examples
    --------
    >>> import numpy as np, jitopt
    >>> problem = jitopt.Problem(jitopt.manifolds.Sphere(2), lambda x: np.nan,
    ...                          egrad=lambda x: x)
    >>> res = jitopt.solvers.rgd(problem, x0=np.array([1.0, 0.0]))
    >>> res.status.name, res.success
    ('NONFINITE', False)
    """

    status = Status.NONFINITE


class OptimizeResult(dict):
    """Result of a jitopt solver: a dict with attribute access, with the fields of
    :class:`scipy.optimize.OptimizeResult` and more.

    It is not a subclass of scipy's class (importing :mod:`scipy.optimize` would add about
    0.3 s to every first call), but reads and prints the same way.

    Attributes
    ----------
    x : ndarray
        The solution (for a fault, the best iterate seen before it).
    fun : float
        Objective at ``x`` (for stochastic methods, the estimate the method has).
    stationarity : float
        The method's stationarity measure at ``x``: the quantity its tolerance is tested on.
    stationarity_measure : str
        What ``stationarity`` measures (``"Riemannian gradient norm"``, ``"gradient mapping
        norm"``, ``"certified gap"``, ...); each solver's docstring says which.
    success : bool
        ``status.success``: the method ended as designed (tolerance, target or schedule).
    status : Status
        Why the solver stopped (an ``enum.IntEnum``, so it compares with ints).
    message : str
        Why the solver stopped, with the quantity and its value.
    nit : int
        Number of iterations.
    nfev, njev, nifo, nhev : int
        Oracle calls: cost evaluations, gradient evaluations, per-sample gradients
        (incremental first-order oracle calls; a full gradient of a finite sum of ``n``
        terms counts ``n``, of a plain problem counts 1) and Hessian-vector products. Each
        method's docstring says what they count for its problem type.
    time : float
        Wall-clock seconds spent in the solver.
    history : dict of ndarray, optional
        With ``history=True``: one entry per iteration, the columns listed in :doc:`/theory/interface`.

    Examples
    --------
    >>> import numpy as np, jitopt
    >>> problem = jitopt.problems.pca(np.diag([3.0, 2.0, 1.0]), 1)
    >>> res = jitopt.solvers.rgd(problem, rng=0, history=True)
    >>> res.success, round(res.fun, 6), res.stationarity_measure
    (True, -3.0, 'Riemannian gradient norm')
    >>> len(res.history["fun"]) == res.nit + 1
    True
    """

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    __setattr__ = dict.__setitem__
    __delattr__ = dict.__delitem__

    def __dir__(self):
        return list(self.keys())

    def __repr__(self):
        if not self:
            return f"{type(self).__name__}()"
        first = ("message", "success", "status", "fun", "x", "nit")
        keys = [k for k in first if k in self] + sorted(k for k in self if k not in first)
        width = max(len(k) for k in keys)
        lines = []
        for key in keys:
            text = repr(self[key]).replace("\n", "\n" + " " * (width + 2))
            lines.append(f"{key:>{width}}: {text}")
        return "\n".join(lines)


class History:
    """Per-iteration records as a dict of arrays: the common columns
    ``iteration, time, fun, stationarity, nfev, njev, nifo`` and a method's own ``extra``
    columns (int64 when every entry is an integer, else float; NaN where an iterate has no
    value)."""

    FIELDS = ("iteration", "time", "fun", "stationarity", "nfev", "njev", "nifo")
    _INT = {"iteration", "nfev", "njev", "nifo"}

    def __init__(self, extra=()):
        self.extra = tuple(extra)
        self._rows = []

    def record(self, iteration, elapsed, fun, stationarity, counts, extra=()):
        self._rows.append((iteration, elapsed, fun, stationarity) + tuple(counts)
                          + tuple(extra))

    def as_arrays(self):
        names = self.FIELDS + self.extra
        columns = list(zip(*self._rows)) if self._rows else [()] * len(names)
        return {name: np.asarray(col, dtype=np.int64 if self._integer(name, col) else float)
                for name, col in zip(names, columns)}

    def _integer(self, name, column):
        if name in self._INT:
            return True
        return name in self.extra and bool(column) and all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in column)


def _wants_intermediate_result(callback):
    """scipy's rule: the new callback form has a parameter named ``intermediate_result``."""
    try:
        params = inspect.signature(callback).parameters
    except (TypeError, ValueError):
        return False
    return "intermediate_result" in params


# The monitors started inside each running registered solver (innermost run last): the
# registry's wrapper opens a frame, Monitor.__init__ joins it.
_RUNS = threading.local()


def _run_frames():
    if not hasattr(_RUNS, "frames"):
        _RUNS.frames = []
    return _RUNS.frames


class Monitor:
    """Per-iteration bookkeeping of a solver: clock, limits, history, callback, best iterate.

    A solver creates it once its arguments are validated (the start) and calls
    :meth:`iteration` once per iterate, ``nit = 0`` being the starting point (recorded in
    the history, not passed to the callback, as in scipy); :meth:`iteration` returns
    ``True`` when the callback raised :class:`StopIteration`. Oracle counts are those made
    since the monitor was created by the calling thread (:meth:`OracleCounts.own
    <jitopt.OracleCounts.own>`), so a problem can be solved several times, and by
    concurrent runs in threads, each counting its own calls.

    Parameters
    ----------
    problem : object with ``counts``
        The problem whose :class:`~jitopt.OracleCounts` are reported.
    callback, history, disp
        The solver's arguments of the same names.
    measure : str
        What the stationarity passed to :meth:`iteration` measures.
    tol_name : str
        The option that the stationarity is compared with (``"gtol"``, ``"tol"``).
    extra : tuple of str
        Names of the method's own history columns, passed to :meth:`iteration` as keywords.
    inplace : bool
        The solver updates its iterate in place (the monitor keeps references, not
        copies): a fault result then holds the last iterate instead of the best.
    disp_every : int
        Print every ``disp_every`` iterations.
    x0 : array_like, optional
        The starting point: ``x`` of a fault result when the fault comes before the first
        iterate is recorded.
    fields : callable, optional
        ``fields(x, nit) -> dict``: the method's own result fields (its counters, what it
        reports of ``x``) for the iterate ``x`` of iteration ``nit``. A fault result
        calls it with the iterate it returns, so that it has every field a normal result
        has; the solver's own results use it too. A solver whose fields read data made
        after the monitor sets the attribute ``fields`` once they exist.
    **limits
        The stopping options in force (``maxiter``, ``max_time``, ``gtol``, ``f_target``,
        ...), used to fill the default messages.
    """

    def __init__(self, problem, callback=None, history=False, disp=False, *,
                 measure="Riemannian gradient norm", tol_name="gtol", extra=(), disp_every=1,
                 inplace=False, x0=None, fields=None, **limits):
        if callback is not None and not callable(callback):
            raise TypeError(f"callback must be callable or None, got {type(callback).__name__}")
        self.problem = problem
        self.callback = callback
        self._new_callback = callback is not None and _wants_intermediate_result(callback)
        self.history = History(extra) if history else None
        self.extra = tuple(extra)
        self.disp = bool(disp)
        self.disp_every = max(int(disp_every), 1)
        self.measure = measure
        self.tol_name = tol_name
        self.limits = limits
        # (nit, x, fun, stationarity) of the last iterate and of the one of least finite fun,
        # x by reference (no copy per iteration)
        self.last = None
        self.best = None
        self.inplace = bool(inplace)
        self.x0 = x0
        self.fields = fields
        self._base = self._snapshot()
        self.start = time.perf_counter()
        frames = _run_frames()
        if frames:
            frames[-1].append(self)

    def _snapshot(self):
        c = self.problem.counts
        if hasattr(c, "own"):  # the calling thread's counts: a run sees its own calls
            return c.own()
        return (c.nfev, c.njev, c.nifo, getattr(c, "nhev", 0))

    def counts(self):
        """``(nfev, njev, nifo)`` made by this run (its thread) since the monitor was created."""
        return tuple(now - base for now, base in zip(self._snapshot()[:3], self._base))

    def elapsed(self):
        return time.perf_counter() - self.start

    def iteration(self, nit, x, fun, stationarity, **extra):
        """Record iterate ``nit`` and show it to the callback; ``True`` when the callback
        asks to stop."""
        self.record(nit, x, fun, stationarity, **extra)
        if self.callback is None or nit == 0:  # like scipy: after each iteration only
            return False
        try:
            if self._new_callback:
                self.callback(intermediate_result=OptimizeResult(
                    x=np.array(x, copy=True), fun=fun, stationarity=stationarity, nit=nit))
            else:
                self.callback(np.array(x, copy=True))
        except StopIteration:
            return True
        except Exception as err:
            raise OracleError("The callback raised an exception") from err
        return False

    def record(self, nit, x, fun, stationarity, **extra):
        """Record iterate ``nit``: the last and best iterates, history and display."""
        self.last = (nit, x, fun, stationarity)
        if not self.inplace and math.isfinite(fun) and (self.best is None or fun < self.best[2]):
            self.best = self.last
        if self.history is not None:
            self.history.record(nit, self.elapsed(), fun, stationarity, self.counts(),
                                tuple(extra.get(name, np.nan) for name in self.extra))
        if self.disp and nit % self.disp_every == 0:
            if nit == 0:
                print(f"{'iter':>6} {'objective':>22} {'stationarity':>12} {'nfev':>7} "
                      f"{'njev':>7}")
            nfev, njev, _ = self.counts()
            print(f"{nit:6d} {fun:22.15e} {stationarity:12.4e} {nfev:7d} {njev:7d}")

    def final_row(self, nit, fun, stationarity, **extra):
        """Make the last history row that of the result ``fun`` when it changed after the
        last row (its value beyond rounding, or the oracle calls): no display, no
        callback."""
        if self.history is None:
            return
        nfev = self.history.as_arrays()["nfev"][-1]
        changed = not abs(self.last[2] - fun) <= 1e-9 * abs(fun)  # beyond rounding
        if changed or nfev != self.counts()[0]:
            self.history.record(nit, self.elapsed(), fun, stationarity, self.counts(),
                                tuple(extra.get(name, np.nan) for name in self.extra))

    def limit_reached(self, nit, fun, stationarity):
        """The status of the first common stopping test that holds at iterate ``nit``, or
        ``None``: the tolerance (``stationarity`` at most the limit named ``tol_name``),
        ``f_target``, ``maxiter``, ``max_time`` -- in that order, for the limits given to
        the monitor (a NaN ``fun`` or ``stationarity`` passes no test)."""
        tol = self.limits.get(self.tol_name)
        if tol is not None and stationarity <= tol:
            return Status.CONVERGED
        f_target = self.limits.get("f_target")
        if f_target is not None and fun <= f_target:
            return Status.TARGET
        maxiter = self.limits.get("maxiter")
        if maxiter is not None and nit >= maxiter:
            return Status.MAXITER
        if self.elapsed() >= self.limits.get("max_time", np.inf):
            return Status.MAXTIME
        return None

    def message(self, status, fun=np.nan, stationarity=np.nan, nit=0, **values):
        """The default message of ``status`` with this run's limits and values."""
        tol = self.limits.get(self.tol_name)
        return Status(status).describe(**{
            "measure": self.measure, "tol_name": self.tol_name, "tol": tol, "fun": fun,
            "stationarity": stationarity, "nit": nit, **self.limits, **values})

    def result(self, x, fun, stationarity, nit, status, message=None, **extra):
        """Build the :class:`OptimizeResult` (prints the outcome when ``disp`` is on)."""
        status = Status(status)
        nfev, njev, nifo = self.counts()
        res = OptimizeResult(
            x=x,
            fun=float(fun),
            stationarity=float(stationarity),
            stationarity_measure=self.measure,
            success=status.success,
            status=status,
            message=message or self.message(status, fun, stationarity, nit),
            nit=int(nit),
            nfev=nfev,
            njev=njev,
            nifo=nifo,
            nhev=self._snapshot()[3] - self._base[3],
            time=self.elapsed(),
            **extra,
        )
        if self.history is not None:
            res.history = self.history.as_arrays()
        if self.disp:
            print(res.message)
            print(f"         objective: {res.fun:.15e}  {self.measure}: "
                  f"{res.stationarity:.3e}  iterations: {res.nit}  nfev: {res.nfev}  "
                  f"njev: {res.njev}")
        return res

    def fault_result(self, error, fallback_x=None):
        """The result of a run stopped by ``error`` after the start: the best iterate so
        far (the last one when no cost was finite, the starting point ``x0`` -- else
        ``fallback_x`` -- when there was none) with the method's ``fields`` of it, the
        status of the fault and a message naming it and the iteration."""
        status = getattr(error, "status", Status.INNER_FAILURE)
        picked = self.best or self.last
        nit = self.last[0] if self.last else 0
        where = f"at iteration {nit + 1 if self.last else 0}"
        cause = error.__cause__
        if isinstance(error, NonFiniteOracle):
            message = f"{error} {where}."
        elif isinstance(error, OracleError):
            message = f"{error} {where}" + \
                (f" ({type(cause).__name__}: {cause})." if cause is not None else ".")
        else:
            message = f"An inner solver failed {where}: {type(error).__name__}: {error}."
        if picked is None:
            at, x, fun, stat = 0, self.x0 if self.x0 is not None else fallback_x, np.nan, np.nan
            if x is not None:
                message += " x is the starting point."
        else:
            at, x, fun, stat = picked
            which = "best" if picked is self.best else "last"
            message += f" x is the {which} iterate before it (iteration {at})."
        x = None if x is None else np.array(x, copy=True)
        extra = self.fields(x, at) if self.fields is not None and x is not None else {}
        return self.result(x, fun, stat, nit, status, message, fault=error, **extra)
