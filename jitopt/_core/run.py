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

import numpy as np

from .result import Monitor, Status
from .stopping import verdict

__all__ = ["State", "Algorithm", "Budget", "run", "iterate", "sub_run"]


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


class Algorithm:
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

    def start(self, problem, x):
        raise NotImplementedError

    def step(self, s, budget):
        raise NotImplementedError

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
    iteration, and the best iterate so far (:meth:`Monitor.fault_result
    <jitopt._core.result.Monitor.fault_result>`).
    """
    watch = Monitor(problem, callback, history, disp, measure=algorithm.measure,
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
    watch = Monitor(problem, measure=algorithm.measure, inplace=algorithm.inplace)
    budget = Budget(stop, watch, False)
    s = algorithm.start(problem, x)
    status, message = algorithm.finish(s, iterate(algorithm, s, stop, watch, budget), budget)
    return s, status, message
