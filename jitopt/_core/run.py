"""The run driver: one loop for every solver.

A registered solver checks its options and its starting point (errors there propagate:
they are usage errors), builds an :class:`Algorithm` with the strategies it chose, and
returns :func:`run`. The driver owns the rest: the clock, the stopping criteria
(:mod:`jitopt._core.stopping`), history, display, callback, the best iterate and faults.
Anything raised once the run has started ends as a result with ``success=False``.

An algorithm gives

- ``start(problem, x) -> State``: the state at the starting point (``nit = 0``);
- ``step(state, budget)``: advance the state by one iteration (or a compiled chunk of
  ``budget.iterations(state)`` at most, counting them in ``state.nit``); return ``None``,
  or ``(status, message)`` to end the run now (:func:`~jitopt._core.stopping.verdict`);
- optionally ``finish(state, ended, budget) -> ended``, work done once at the end (a
  polish, exact values to report) that may change the ``(status, message)`` it returns, and
  ``fields(x, nit) -> dict``, the method's own result fields for the iterate ``x`` of
  iteration ``nit``: a fault result gets them for the iterate it returns.

Examples
--------
Gradient descent with a fixed step on :math:`f(x) = \\|x\\|^2/2`:

>>> import numpy as np, jitopt
>>> from jitopt._core.run import Algorithm, State, run
>>> from jitopt._core.stopping import Tolerance, MaxIter
>>> class Descent(Algorithm):
...     measure = "gradient norm"
...     def start(self, problem, x):
...         self.problem = problem
...         f, g = problem.cost_and_egrad(x)
...         return State(x, f, float(np.linalg.norm(g)), self.measure, g=g)
...     def step(self, s, budget):
...         s.x = s.x - 0.5 * s.g
...         s.fun, s.g = self.problem.cost_and_egrad(s.x)
...         s.stationarity = float(np.linalg.norm(s.g))
...         s.nit += 1
>>> problem = jitopt.Problem(jitopt.manifolds.Euclidean(2), lambda x: 0.5 * x @ x,
...                          egrad=lambda x: x)
>>> res = run(problem, Descent(), np.ones(2), stop=Tolerance("gtol", 1e-3) | MaxIter(100))
>>> res.status.name, res.nit, res.nfev
('CONVERGED', 11, 12)
"""

import abc
import inspect
import math
import time

import numpy as np

from .result import History, NonFiniteOracle, OptimizeResult, OracleError, Status
from .stopping import verdict

__all__ = ["State", "Algorithm", "Budget", "Watch", "run", "iterate", "sub_run"]


class State:
    """The iterate of a run and what the driver reads of it: ``x``, ``fun``,
    ``stationarity`` (with the name of its ``measure``), ``nit`` and ``extra`` (this
    iterate's own history columns). An algorithm keeps whatever else it needs on the state
    as attributes (given as keywords here or set later)."""

    #: a ``(status, message)`` left by a step for after the iterate is seen
    #: (:class:`~jitopt._core.stopping.StepVerdict`)
    verdict = None

    def __init__(self, x, fun, stationarity, measure, nit=0, extra=None, **attributes):
        self.x, self.fun, self.stationarity, self.measure = x, fun, stationarity, measure
        self.nit = nit
        self.extra = {} if extra is None else extra
        self.__dict__.update(attributes)


class Algorithm(abc.ABC):
    """A method as the driver runs it (see the module docstring).

    Attributes
    ----------
    measure : str
        What ``state.stationarity`` measures (the result's ``stationarity_measure``).
    inplace : bool
        The step updates ``state.x`` in place: the driver then cannot keep earlier iterates,
        and a fault result holds the last one instead of the best.
    columns : tuple of str
        The method's own history columns, read from ``state.extra``.
    final_row : bool
        The history ends with a row of the result when ``finish`` changed its value (beyond
        rounding) or made oracle calls after the last row (a method whose rows are checks
        and whose result is made at the end, as EVI's mixtures).
    """

    measure = "Riemannian gradient norm"
    inplace = False
    columns = ()
    final_row = False

    @abc.abstractmethod
    def start(self, problem, x):
        """The state at the starting point ``x`` (``nit = 0``)."""

    @abc.abstractmethod
    def step(self, s, budget):
        """Advance ``s``; ``None``, or ``(status, message)`` to end the run now."""

    def finish(self, s, ended, budget):
        """Work done once when the run ends (but by a fault); returns the ``(status,
        message)`` to report, by default ``ended``."""
        return ended

    def fields(self, x, nit):
        """The method's own result fields for the iterate ``x`` of iteration ``nit``."""
        return {}


class Budget:
    """What a step may spend: ``iterations(state)`` before a criterion holds (to size a
    compiled chunk), ``seconds()`` left, and ``per_iterate``, whether an observer (callback,
    history, display) wants to see every iterate."""

    def __init__(self, stop, watch, per_iterate):
        self.stop, self.watch, self.per_iterate = stop, watch, per_iterate

    def iterations(self, s):
        return self.stop.iterations_left(s)

    def seconds(self):
        return self.stop.seconds_left(self.watch)


def iterate(algorithm, s, stop, watch, budget):
    """Step ``s`` until a criterion, the step or the callback ends the run; returns
    ``(status, message)``. Each iterate is seen by the watch (best iterate, history,
    display, callback) and then tested, in that order."""
    see = watch.iteration
    while True:
        if see(s.nit, s.x, s.fun, s.stationarity, **s.extra):
            return verdict(Status.CALLBACK, s)
        ended = stop(s, watch) or algorithm.step(s, budget)
        if ended is not None:
            return ended


def run(problem, algorithm, x, *, stop, callback=None, history=False, disp=False,
        disp_every=1):
    """Run ``algorithm`` on ``problem`` from the (checked) starting point ``x`` until the
    criterion ``stop`` holds or the step ends the run; returns the
    :class:`~jitopt.OptimizeResult`.

    A bad ``callback`` raises here; from the algorithm's ``start`` on, every exception
    becomes a result with ``success=False``: the fault's status, a message naming it and the
    iteration, and the best iterate so far (:meth:`Watch.fault_result`).
    """
    watch = Watch(problem, callback, history, disp, measure=algorithm.measure,
                    extra=algorithm.columns, disp_every=disp_every,
                    inplace=algorithm.inplace, x0=x, fields=algorithm.fields)
    budget = Budget(stop, watch, callback is not None or bool(history) or bool(disp))
    try:
        s = algorithm.start(problem, x)
        ended = iterate(algorithm, s, stop, watch, budget)
        if watch.last[0] != s.nit and not algorithm.final_row:  # the step moved on and ended
            watch.record(s.nit, s.x, s.fun, s.stationarity, **s.extra)
        status, message = algorithm.finish(s, ended, budget)
        if algorithm.final_row and np.isfinite(s.fun):
            watch.final_row(s.nit, s.fun, s.stationarity, **s.extra)
    except Exception as err:
        return watch.fault_result(err)
    return watch.result(s.x, s.fun, s.stationarity, s.nit, status, message,
                        **algorithm.fields(s.x, s.nit))


def sub_run(problem, algorithm, x, stop):
    """Run ``algorithm`` on ``problem`` from ``x`` until ``stop`` holds, with no observers,
    for a method that hands the final state on (a coarse grid's solution, say); returns
    ``(state, status, message)``. Exceptions propagate: they are faults of the run around
    it."""
    watch = Watch(problem, measure=algorithm.measure, inplace=algorithm.inplace)
    budget = Budget(stop, watch, False)
    s = algorithm.start(problem, x)
    status, message = algorithm.finish(s, iterate(algorithm, s, stop, watch, budget), budget)
    return s, status, message


def wants_intermediate_result(callback):
    """scipy's rule: the new callback form has a parameter named ``intermediate_result``."""
    try:
        params = inspect.signature(callback).parameters
    except (TypeError, ValueError):
        return False
    return "intermediate_result" in params


class Watch:
    """What the driver keeps of a run besides its state: the clock, the oracle counts, the
    last and best iterates, the history, the display and the callback; it makes the result,
    and the result of a fault.

    :meth:`iteration` sees each iterate, ``nit = 0`` being the starting point (recorded in
    the history, not passed to the callback, as in scipy), and returns ``True`` when the
    callback raised :class:`StopIteration`. Oracle counts are those made since the watch
    was created by the calling thread (:meth:`OracleCounts.own <jitopt.OracleCounts.own>`),
    so a problem can be solved several times, and by concurrent runs in threads, each
    counting its own calls.

    Parameters
    ----------
    problem : object with ``counts``
        The problem whose :class:`~jitopt.OracleCounts` are reported.
    callback, history, disp
        The solver's arguments of the same names.
    measure : str
        What the stationarity passed to :meth:`iteration` measures.
    extra : tuple of str
        Names of the method's own history columns, passed to :meth:`iteration` as keywords.
    inplace : bool
        The method updates its iterate in place (the watch keeps references, not copies):
        a fault result then holds the last iterate instead of the best.
    disp_every : int
        Print every ``disp_every`` iterations.
    x0 : array_like, optional
        The starting point: ``x`` of a fault result when the fault comes before the first
        iterate is seen.
    fields : callable, optional
        ``fields(x, nit) -> dict``: the method's own result fields for the iterate ``x`` of
        iteration ``nit``; a fault result calls it with the iterate it returns, so that it
        has every field a normal result has.
    """

    def __init__(self, problem, callback=None, history=False, disp=False, *,
                 measure="Riemannian gradient norm", extra=(), disp_every=1, inplace=False,
                 x0=None, fields=None):
        if callback is not None and not callable(callback):
            raise TypeError(f"callback must be callable or None, got {type(callback).__name__}")
        self.problem = problem
        self.callback = callback
        self._new_callback = callback is not None and wants_intermediate_result(callback)
        self.history = History(extra) if history else None
        self.extra = tuple(extra)
        self.disp = bool(disp)
        self.disp_every = max(int(disp_every), 1)
        self.measure = measure
        # (nit, x, fun, stationarity) of the last iterate and of the one of least finite fun,
        # x by reference (no copy per iteration)
        self.last = None
        self.best = None
        self.inplace = bool(inplace)
        self.x0 = x0
        self.fields = fields
        self._base = self._snapshot()
        self.start = time.perf_counter()

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

    def result(self, x, fun, stationarity, nit, status, message, **extra):
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
            message=message,
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

    def fault_result(self, error):
        """The result of a run stopped by ``error`` after the start: the best iterate so
        far (the last one when no cost was finite, the starting point ``x0`` when there was
        none) with the method's ``fields`` of it, the status of the fault and a message
        naming it and the iteration."""
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
            at, x, fun, stat = 0, self.x0, np.nan, np.nan
            if x is not None:
                message += " x is the starting point."
        else:
            at, x, fun, stat = picked
            which = "best" if picked is self.best else "last"
            message += f" x is the {which} iterate before it (iteration {at})."
        x = None if x is None else np.array(x, copy=True)
        extra = self.fields(x, at) if self.fields is not None and x is not None else {}
        return self.result(x, fun, stat, nit, status, message, fault=error, **extra)
