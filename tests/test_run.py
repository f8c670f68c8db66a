"""The run driver and the stopping criteria (jitopt._core.run, jitopt._core.stopping) on
small algorithms whose every iterate is known."""

import itertools
import math

import numpy as np
import pytest

import jitopt
from jitopt import Status
from jitopt._core.run import Algorithm, State, run
from jitopt._core.stopping import (CommonStop, Criterion, FTarget, MaxIter, MaxTime, StepVerdict,
                                   Tolerance, verdict)


class Clock:
    def __init__(self, elapsed):
        self.t = elapsed

    def elapsed(self):
        return self.t


def quadratic(oracle=None):
    """f(x) = |x|^2 / 2 on R^2 (``oracle`` wraps the gradient, to inject faults)."""
    egrad = (lambda x: x) if oracle is None else oracle
    return jitopt.Problem(jitopt.manifolds.Euclidean(2), lambda x: 0.5 * float(x @ x),
                          egrad=egrad)


class Halving(Algorithm):
    """x_{k+1} = x_k / 2: the iterates are known in closed form."""

    measure = "gradient norm"
    columns = ("scale",)

    def start(self, problem, x):
        self.problem = problem
        return State(x, problem.cost(x), float(np.linalg.norm(problem.egrad(x))),
                     self.measure)

    def step(self, s, budget):
        s.x = s.x / 2
        s.fun = self.problem.cost(s.x)
        s.stationarity = float(np.linalg.norm(self.problem.egrad(s.x)))
        s.nit += 1
        s.extra = {"scale": 0.5 ** s.nit}

    def fields(self, x, nit):
        return {"norm_of_x": float(np.linalg.norm(x)), "at": nit}


@pytest.mark.parametrize("stationarity, fun, nit, elapsed", list(itertools.product(
    (0.0, 1e-7, 1.0, math.nan), (-2.0, 0.0, math.nan), (0, 5, 10), (0.0, 3.0))))
def test_common_stop_is_the_four_common_criteria_in_their_order(stationarity, fun, nit,
                                                                  elapsed):
    s = State(np.zeros(1), fun, stationarity, "gradient norm", nit=nit)
    fused = CommonStop("gtol", 1e-6, -1.0, 10, 2.0)
    chained = Tolerance("gtol", 1e-6) | FTarget(-1.0) | MaxIter(10) | MaxTime(2.0)
    assert fused(s, Clock(elapsed)) == chained(s, Clock(elapsed))
    assert fused.iterations_left(s) == chained.iterations_left(s) == 10 - nit
    assert fused.seconds_left(Clock(elapsed)) == chained.seconds_left(Clock(elapsed))


def test_criteria_hold_in_the_order_written_and_nan_passes_no_test():
    s = State(np.zeros(1), math.nan, 1e-9, "gradient norm", nit=10)
    assert (Tolerance("gtol", 1e-6) | MaxIter(10))(s, None)[0] == Status.CONVERGED
    assert (MaxIter(10) | Tolerance("gtol", 1e-6))(s, None)[0] == Status.MAXITER
    s.stationarity = math.nan
    assert Tolerance("gtol", 1e-6)(s, None) is None
    assert FTarget(None)(s, None) is None
    status, message = MaxIter(10, status=Status.SCHEDULE_DONE)(s, None)
    assert status.success and "10" in message


def test_run_stops_at_the_tolerance_with_the_known_iterate_and_history():
    # |grad f(x_k)| = |x0| / 2^k: below 1e-3 first at k = 10 from |x0| = 1
    res = run(quadratic(), Halving(), np.array([0.6, 0.8]),
              stop=Tolerance("gtol", 1e-3) | MaxIter(100), history=True)
    assert res.status == Status.CONVERGED and res.nit == 10
    np.testing.assert_array_equal(res.x, np.array([0.6, 0.8]) / 2 ** 10)
    assert res.norm_of_x == pytest.approx(2.0 ** -10) and res.at == 10
    np.testing.assert_allclose(res.history["stationarity"], 0.5 ** np.arange(11))
    np.testing.assert_allclose(res.history["scale"][1:], 0.5 ** np.arange(1, 11))
    assert np.isnan(res.history["scale"][0])
    assert res.nfev == res.nit + 1  # one cost per iterate, the start included
    assert res.message.startswith("Optimization terminated successfully")


def test_a_fault_after_the_start_returns_the_best_iterate_with_its_fields():
    calls = []

    def egrad(x):
        calls.append(1)
        if len(calls) == 4:  # the gradient at x_3
            return np.array([np.nan, 0.0])
        return x

    res = run(quadratic(egrad), Halving(), np.array([1.0, 0.0]), stop=MaxIter(100))
    assert res.status == Status.NONFINITE and not res.success
    np.testing.assert_array_equal(res.x, [0.25, 0.0])  # x_2, the best iterate seen
    assert res.at == 2 and res.norm_of_x == 0.25
    assert "iteration 3" in res.message


def test_a_fault_in_the_start_returns_the_starting_point():
    def egrad(x):
        raise ZeroDivisionError("no gradient")

    res = run(quadratic(egrad), Halving(), np.array([1.0, 0.0]), stop=MaxIter(5))
    assert res.status == Status.ORACLE_ERROR
    np.testing.assert_array_equal(res.x, [1.0, 0.0])
    assert "starting point" in res.message and "ZeroDivisionError" in res.message


class Flagging(Halving):
    """Leaves a verdict on the state at iteration 3, for after the iterate is seen."""

    def step(self, s, budget):
        super().step(s, budget)
        if s.nit == 3:
            s.verdict = verdict(Status.SMALL_STEP, s, min_step=0.5)


def test_a_step_verdict_ends_the_run_after_the_callback_saw_its_iterate():
    seen = []
    res = run(quadratic(), Flagging(), np.array([1.0, 0.0]),
              stop=StepVerdict() | MaxIter(100), callback=lambda xk: seen.append(xk[0]))
    assert res.status == Status.SMALL_STEP and res.nit == 3
    assert seen == [0.5, 0.25, 0.125]
    assert "min_step = 0.5" in res.message


class Polished(Halving):
    """Moves the result at the end (as a polish or a reweighting does)."""

    final_row = True

    def finish(self, s, ended, budget):
        s.x = s.x / 2
        s.fun = self.problem.cost(s.x)
        return ended


def test_the_history_ends_with_the_result_when_finish_changed_it():
    res = run(quadratic(), Polished(), np.array([1.0, 0.0]), stop=MaxIter(2), history=True)
    assert res.status == Status.MAXITER and res.nit == 2
    # rows: x_0, x_1, x_2 and the result x_2 / 2
    np.testing.assert_allclose(res.history["fun"], [0.5, 0.125, 0.5 ** 5, 0.5 ** 7])
    assert res.fun == res.history["fun"][-1]


def test_an_algorithm_or_criterion_missing_its_part_is_refused_when_made():
    class NoStep(Algorithm):
        def start(self, problem, x):
            return State(x, 0.0, 0.0, self.measure)

    class NoTest(Criterion):
        pass

    with pytest.raises(TypeError, match="step"):
        NoStep()
    with pytest.raises(TypeError, match="__call__"):
        NoTest()
