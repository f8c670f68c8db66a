"""The contract every registered method keeps, parametrised over the registry.

A method added to the registry is tested here the day it is added: it needs a case (a small
problem with a known answer, and the same problem with an oracle that raises or returns NaN
at its k-th call) in one of the ``cases_*`` modules, found through :data:`CASES`. Checked:
result fields and types, the counters and the history, both callback forms, StopIteration,
``maxiter=1``, ``max_time=0``, faults after the start as results, same seed same result,
untouched inputs, and ``minimize(problem, method=name)`` equal to the direct call.
"""

import importlib

import numpy as np
import pytest

import jitopt
from jitopt import Status

METHODS = jitopt.available_methods()

#: the case module of each method that does not use the Riemannian one
CASES = {"iht": "cases_iht", "online_dca": "cases_dc", "evi": "cases_evi",
         "wdha": "cases_wdha", "nelder_mead": "cases_derivative_free",
         "particle_swarm": "cases_derivative_free", "ralm": "cases_constrained",
         "repm": "cases_constrained", "sga": "cases_sga"}


def case(method, fault=None, at=3):
    """``(problem, x0, options)`` of ``method``'s case, or ``None`` when the fault kind does
    not exist for its problem type."""
    module = importlib.import_module(CASES.get(method, "cases_riemannian"))
    return module.make(fault, at)


def solve(method, problem, x0, options, **more):
    return jitopt.get_method(method).solver(problem, x0, **{**options, **more})


def same(a, b):
    """Equal arrays, NaN where NaN (fault results may hold NaN values)."""
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_every_registered_method_has_a_case_it_takes():
    assert len(METHODS) >= 14
    for method in METHODS:
        problem, _, _ = case(method)
        assert jitopt.get_method(method).takes(problem), method


@pytest.mark.parametrize("method", METHODS)
def test_result_fields_types_counts_and_history(method):
    problem, x0, options = case(method)
    res = solve(method, problem, x0, options, rng=0, history=True)
    assert isinstance(res, jitopt.OptimizeResult)
    for key, kind in (("fun", float), ("stationarity", float), ("stationarity_measure", str),
                      ("success", bool), ("status", Status), ("message", str), ("nit", int),
                      ("nfev", int), ("njev", int), ("nifo", int), ("time", float)):
        assert isinstance(res[key], kind), (key, type(res[key]))
    assert res.x is not None and np.all(np.isfinite(res.x))
    assert res.success == res.status.success and res.message
    assert (res.nfev, res.njev, res.nifo) == (problem.counts.nfev, problem.counts.njev,
                                              problem.counts.nifo)
    h = res.history
    assert list(h)[:7] == ["iteration", "time", "fun", "stationarity", "nfev", "njev", "nifo"]
    assert h["iteration"][0] == 0 and h["iteration"][-1] == res.nit
    assert np.all(np.diff(h["iteration"]) > 0) and np.all(np.diff(h["time"]) >= 0)
    for counter in ("nfev", "njev", "nifo"):
        assert np.all(np.diff(h[counter]) >= 0) and h[counter][-1] <= res[counter]


@pytest.mark.parametrize("method", [m for m in METHODS if m not in CASES])
def test_riemannian_counts_are_the_user_oracle_calls(method):
    from cases_riemannian import counted

    problem, x0, options, cost, egrad = counted()
    res = solve(method, problem, x0, options, rng=0)
    assert (res.nfev, res.njev, res.nifo) == (cost.calls, egrad.calls, egrad.samples)
    problem.manifold.check_point(res.x, atol=1e-10)
    assert res.fun <= problem.cost(x0)  # no method ends worse than it started here


@pytest.mark.parametrize("method", METHODS)
def test_callbacks_and_stop_iteration(method):
    problem, x0, options = case(method)
    new, old = [], []
    solve(method, problem, x0, options, rng=0,
          callback=lambda intermediate_result: new.append(intermediate_result.nit))
    problem, x0, options = case(method)
    solve(method, problem, x0, options, rng=0, callback=lambda xk: old.append(np.array(xk)))
    assert len(new) >= 2 and new == sorted(new) and new[0] >= 1 and len(old) == len(new)

    def stop(intermediate_result):
        assert np.isfinite(intermediate_result.stationarity) or \
            np.isnan(intermediate_result.stationarity)
        if intermediate_result.nit >= new[1]:
            raise StopIteration

    problem, x0, options = case(method)
    res = solve(method, problem, x0, options, rng=0, callback=stop)
    assert res.status == Status.CALLBACK == 99 and not res.success
    assert res.message == "`callback` raised `StopIteration`."
    assert res.nit == new[1]


@pytest.mark.parametrize("method", METHODS)
def test_maxiter_one_and_max_time_zero(method):
    problem, x0, options = case(method)
    res = solve(method, problem, x0, options, rng=0, maxiter=1)
    assert res.nit <= 1
    if not res.success:
        assert res.status == Status.MAXITER and "maxiter = 1" in res.message
    problem, x0, options = case(method)
    res = solve(method, problem, x0, options, rng=0, max_time=0.0)
    assert res.status == Status.MAXTIME and not res.success and res.nit <= 1
    assert "max_time = 0 s" in res.message


FAULT_STATUS = {"raise": Status.ORACLE_ERROR, "nan": Status.NONFINITE}
#: the (method, fault) pairs whose case can express the fault: every problem type with a
#: user oracle (a barycenter problem has none: its data are checked before the start)
FAULTS = [(m, f) for m in METHODS for f in FAULT_STATUS if case(m, f) is not None]


def test_only_problems_without_user_oracles_lack_fault_cases():
    without = {m for m in METHODS if (m, "raise") not in FAULTS or (m, "nan") not in FAULTS}
    assert without == {"wdha", "sga"}
    assert all(isinstance(case(m)[0], jitopt.problems.BarycenterProblem) for m in without)


@pytest.mark.parametrize("at", [1, 3])
@pytest.mark.parametrize("method, fault", FAULTS)
def test_faults_after_the_start_become_results(method, fault, at):
    status = FAULT_STATUS[fault]
    problem, x0, options = case(method, fault, at)
    res = solve(method, problem, x0, options, rng=0)
    assert res.status == status and not res.success, res.message
    assert "at iteration" in res.message
    if fault == "raise":
        assert "ZeroDivisionError" in res.message
    else:
        assert "non-finite" in res.message
    assert res.x is not None and np.all(np.isfinite(res.x))
    assert isinstance(res.fault, jitopt.OracleError)


@pytest.mark.parametrize("method, fault", FAULTS)
def test_a_fault_at_the_first_call_returns_the_default_start(method, fault):
    problem, _, options = case(method, fault, at=1)
    res = solve(method, problem, None, options, rng=0)
    assert res.status == FAULT_STATUS[fault] and res.nit == 0, res.message
    assert res.x is not None and np.all(np.isfinite(res.x))
    if hasattr(problem, "manifold"):
        problem.manifold.check_point(res.x, atol=1e-10)


@pytest.mark.parametrize("at", [1, 3])
@pytest.mark.parametrize("method, fault", FAULTS)
def test_fault_results_have_every_field_of_the_method(method, fault, at):
    """A fault result has the fields of a normal one (the method's own ones too), and
    those that describe ``x`` describe the returned ``x``."""
    healthy = solve(method, *case(method), rng=0)
    res = solve(method, *case(method, fault, at), rng=0)
    assert set(res) - set(healthy) == {"fault"}
    assert set(healthy) - set(res) == set(), res.message
    if "support" in res:  # iht
        assert np.array_equal(res.support, np.flatnonzero(res.x))
        assert res.n_nonzero == np.count_nonzero(res.x)
    if "orthogonality" in res:  # rsdm
        p = res.x.shape[1]
        assert res.orthogonality == pytest.approx(np.linalg.norm(res.x.T @ res.x - np.eye(p)))
    if "points" in res and len(res.weights):  # evi: x is the mean of the mixture
        np.testing.assert_allclose(res.weights @ res.points, res.x, atol=1e-12)
        assert res.weights.sum() == pytest.approx(1.0)
    if "samples" in res:  # online_dca: the samples this run drew, all in nifo
        assert res.samples == res.samples_g + res.samples_h == res.nifo


#: the methods :func:`jitopt.minimize` reaches with ``fun`` and ``jac`` (a plain Problem),
#: and ``None``, its default
PLAIN = [m for m in METHODS if issubclass(jitopt.Problem, jitopt.get_method(m).problem_type)]


class Turning:
    """The oracle ``f``, but ``value`` (NaN or inf, an array of it for a gradient) at its
    ``k``-th call (``once``) or from its ``k``-th call on."""

    def __init__(self, f, value, k, once):
        self.f, self.value, self.k, self.once, self.calls = f, value, k, once, 0

    def __call__(self, x):
        self.calls += 1
        out = self.f(x)
        if self.calls < self.k or (self.once and self.calls > self.k):
            return out
        return self.value if np.ndim(out) == 0 else np.full(np.shape(out), self.value)


@pytest.mark.parametrize("once", [True, False])
@pytest.mark.parametrize("k", [2, 3, 5])
@pytest.mark.parametrize("oracle, value", [("cost", np.nan), ("cost", np.inf),
                                           ("egrad", np.nan)])
@pytest.mark.parametrize("method", PLAIN + [None])
def test_a_nonfinite_value_after_the_start_ends_every_run(method, oracle, value, k, once):
    """The NaN rule: a NaN or inf from the cost or the gradient at any call (a line-search
    or trust-region trial included), even once, ends the run with NONFINITE, never success,
    and ``x`` is the best iterate before it: a point of the domain whose true cost is
    ``fun``."""
    base, x0, options = case(method or "rlbfgs")
    cost, egrad = base.cost, base.egrad
    if oracle == "cost":
        cost = turning = Turning(base.cost, value, k, once)
    else:
        egrad = turning = Turning(base.egrad, value, k, once)
    problem = jitopt.Problem(base.manifold, cost, egrad)
    x0 = np.zeros(base.manifold.shape) + 0.1 if x0 is None else x0
    res = jitopt.minimize(problem, x0, method=method, options={**options, "rng": 0})
    if oracle == "egrad" and jitopt.get_method(method or "rlbfgs").derivative_free:
        assert turning.calls == 0 and res.njev == 0  # a gradient given is never called
        return
    assert turning.calls >= k, "the run ended before the faulty call"
    assert res.status == Status.NONFINITE and not res.success, res.message
    assert "non-finite" in res.message and isinstance(res.fault, jitopt.NonFiniteOracle)
    base.manifold.check_point(res.x, atol=1e-8)
    if np.isfinite(res.fun):  # (rsdm updates in place: x is the last iterate)
        assert res.fun == pytest.approx(base.cost(res.x), rel=1e-12, abs=1e-12)
        assert res.fun <= base.cost(base.manifold.validate_point(x0, "x0")) + 1e-12


@pytest.mark.parametrize("method", METHODS)
def test_same_seed_same_result_and_untouched_input(method):
    problem, x0, options = case(method)
    keep = None if x0 is None else np.array(x0, copy=True)
    r1 = solve(method, problem, x0, options, rng=3)
    problem2, x02, _ = case(method)
    r2 = solve(method, problem2, x02, options, rng=3)
    same(r1.x, r2.x)
    same(r1.fun, r2.fun)
    assert (r1.nit, r1.nfev, r1.njev, r1.nifo) == (r2.nit, r2.nfev, r2.njev, r2.nifo)
    if keep is not None:
        same(x0, keep)


@pytest.mark.parametrize("method", METHODS)
def test_minimize_with_the_problem_equals_the_direct_call(method):
    problem, x0, options = case(method)
    direct = solve(method, problem, x0, options, rng=5)
    problem, x0, options = case(method)
    via = jitopt.minimize(problem, x0, method=method, options={**options, "rng": 5})
    same(direct.x, via.x)
    assert (direct.fun, direct.nit, direct.nfev, direct.status) == \
        (via.fun, via.nit, via.nfev, via.status)


@pytest.mark.parametrize("method", METHODS)
def test_other_problem_types_are_refused_naming_both(method):
    takes = jitopt.get_method(method).problem_type
    for other in set(CASES.values()) | {"cases_riemannian"}:
        problem, _, _ = importlib.import_module(other).make()
        if isinstance(problem, takes):
            continue
        with pytest.raises(TypeError, match=f"{takes.__name__} for method '{method}', "
                                            f"got a {type(problem).__name__}"):
            jitopt.minimize(problem, method=method)


def test_riemannian_bad_start_is_refused_before_the_start():
    problem, x0, options = case("rgd")
    for method in [m for m in METHODS if m not in CASES]:
        with pytest.raises(ValueError, match="x0"):
            solve(method, problem, 2.0 * x0, options, rng=0)
        with pytest.raises(ValueError, match="x0"):
            solve(method, problem, x0[:, :1], options, rng=0)
