"""Stopping criteria shared by every solver, combined with ``|``.

A criterion looks at the run's :class:`~jitopt._core.run.State` and its
:class:`~jitopt._core.run.Watch` and returns ``None`` (go on) or ``(status, message)``, the
:class:`~jitopt.Status` and its message filled with the values of the run. ``a | b`` tests
``a`` first: the order written is the order of precedence. A NaN measure passes no test.

Examples
--------
>>> import numpy as np
>>> from jitopt._core.stopping import Tolerance, MaxIter
>>> from jitopt._core.run import State
>>> stop = Tolerance("gtol", 1e-6) | MaxIter(10)
>>> stop(State(np.zeros(2), 1.0, 1e-8, "gradient norm"), None)[0].name
'CONVERGED'
>>> stop(State(np.zeros(2), 1.0, np.nan, "gradient norm", nit=10), None)[0].name
'MAXITER'
"""

import abc
import math

from .result import Status

__all__ = ["verdict", "Criterion", "AnyOf", "Tolerance", "FTarget", "MaxIter", "MaxTime",
           "MaxPasses", "MaxSamples", "StepVerdict", "Stalled",
           "CommonStop"]


def verdict(status, s, **values):
    """``(status, message)`` for the state ``s``: the status table's message filled with the
    state's measure, stationarity, cost and iteration and the given ``values``."""
    status = Status(status)
    return status, status.describe(**{"measure": s.measure, "stationarity": s.stationarity,
                                      "fun": s.fun, "nit": s.nit, **values})


class Criterion(abc.ABC):
    """A stopping test: ``criterion(state, watch)`` is ``None`` or ``(status, message)``."""

    @abc.abstractmethod
    def __call__(self, s, watch):
        """``(status, message)`` when the run ends at the state ``s``, else ``None``."""

    def iterations_left(self, s):
        """How many more iterations this criterion allows (sizes a compiled chunk)."""
        return math.inf

    def seconds_left(self, watch):
        """How many more seconds this criterion allows."""
        return math.inf

    def __or__(self, other):
        return AnyOf(self, other)


class AnyOf(Criterion):
    """The first of ``parts`` that holds, in the order given."""

    def __init__(self, *parts):
        self.parts = tuple(p for c in parts for p in getattr(c, "parts", (c,)))

    def __call__(self, s, watch):
        for criterion in self.parts:
            ended = criterion(s, watch)
            if ended is not None:
                return ended
        return None

    def iterations_left(self, s):
        return min(c.iterations_left(s) for c in self.parts)

    def seconds_left(self, watch):
        return min(c.seconds_left(watch) for c in self.parts)


class Tolerance(Criterion):
    """``CONVERGED`` once the state's stationarity is at most ``tol`` (the option
    ``name``)."""

    def __init__(self, name, tol):
        self.name, self.tol = name, tol

    def __call__(self, s, watch):
        if s.stationarity <= self.tol:
            return verdict(Status.CONVERGED, s, tol_name=self.name, tol=self.tol)
        return None


class FTarget(Criterion):
    """``TARGET`` once the cost is at most ``f_target`` (never, for ``None``)."""

    def __init__(self, f_target):
        self.f_target = -math.inf if f_target is None else f_target

    def __call__(self, s, watch):
        if s.fun <= self.f_target:
            return verdict(Status.TARGET, s, f_target=self.f_target)
        return None


class MaxIter(Criterion):
    """``MAXITER`` after ``maxiter`` iterations (``status`` replaces it for a method whose
    iterations are a schedule)."""

    def __init__(self, maxiter, status=Status.MAXITER):
        self.maxiter, self.status = maxiter, status

    def __call__(self, s, watch):
        if s.nit >= self.maxiter:
            return verdict(self.status, s, maxiter=self.maxiter)
        return None

    def iterations_left(self, s):
        return self.maxiter - s.nit


class MaxTime(Criterion):
    """``MAXTIME`` after ``max_time`` seconds of the run."""

    def __init__(self, max_time):
        self.max_time = max_time

    def __call__(self, s, watch):
        if watch.elapsed() >= self.max_time:
            return verdict(Status.MAXTIME, s, max_time=self.max_time)
        return None

    def seconds_left(self, watch):
        return self.max_time - watch.elapsed()


class _Budgeted(Criterion):
    """``status`` once the state's count ``extra[column]`` reaches ``limit`` (the option
    ``option`` of the message)."""

    column = option = status = None

    def __init__(self, limit):
        self.limit = limit

    def __call__(self, s, watch):
        if s.extra[self.column] >= self.limit:
            return verdict(self.status, s, **{self.option: self.limit})
        return None


class MaxPasses(_Budgeted):
    """``MAX_PASSES`` once the state's ``passes`` over the samples reach ``max_passes``."""

    column, option, status = "passes", "max_passes", Status.MAX_PASSES


class MaxSamples(_Budgeted):
    """``MAX_SAMPLES`` once the state's ``samples`` drawn reach ``max_samples``."""

    column, option, status = "samples", "max_samples", Status.MAX_SAMPLES


class StepVerdict(Criterion):
    """The ``(status, message)`` a step left in ``state.verdict``: it ends the run once the
    observers have seen the iterate the step made (a verdict the step returns ends the run
    before they see it)."""

    def __call__(self, s, watch):
        return s.verdict


class Stalled(Criterion):
    """``SMALL_STEP`` once the state is ``stalled`` (the last step was shorter than
    ``min_step`` and did not lower the cost) and its stationarity is above ``tol``."""

    def __init__(self, min_step, tol):
        self.min_step, self.tol = min_step, tol

    def __call__(self, s, watch):
        if s.stalled and s.stationarity > self.tol:
            return verdict(Status.SMALL_STEP, s, min_step=self.min_step)
        return None


class CommonStop(Criterion):
    """The common tests in their order: the tolerance (the option ``tol_name``),
    ``f_target``, ``maxiter``, ``max_time``; :class:`Tolerance` ``|`` :class:`FTarget` ``|``
    :class:`MaxIter` ``|`` :class:`MaxTime` in one call, as every iterate of every method
    is tested against them."""

    def __init__(self, tol_name, tol, f_target, maxiter, max_time):
        self.tol_name, self.tol, self.maxiter, self.max_time = tol_name, tol, maxiter, max_time
        self.f_target = -math.inf if f_target is None else f_target

    def __call__(self, s, watch):
        if s.stationarity <= self.tol:
            return verdict(Status.CONVERGED, s, tol_name=self.tol_name, tol=self.tol)
        if s.fun <= self.f_target:
            return verdict(Status.TARGET, s, f_target=self.f_target)
        if s.nit >= self.maxiter:
            return verdict(Status.MAXITER, s, maxiter=self.maxiter)
        if watch.elapsed() >= self.max_time:
            return verdict(Status.MAXTIME, s, max_time=self.max_time)
        return None

    def iterations_left(self, s):
        return self.maxiter - s.nit

    def seconds_left(self, watch):
        return self.max_time - watch.elapsed()

