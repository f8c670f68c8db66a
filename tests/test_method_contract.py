"""The contract every registered method keeps, parametrised over the registry.

A method added to the registry is tested here the day it is added: result fields, exact
oracle counts, both callback forms, StopIteration, bad starting points, untouched inputs and
reproducibility, on a small finite-sum PCA problem on the Stiefel manifold (a finite sum is
also a plain problem, so deterministic and stochastic methods both accept it).
"""

import numpy as np
import pytest

import jitopt
from jitopt.manifolds import Stiefel

METHODS = jitopt.available_methods()
N_SAMPLES, DIM, RANK = 40, 6, 2


class Counting:
    def __init__(self, f):
        self.f, self.calls, self.samples = f, 0, 0

    def __call__(self, x, idx):
        self.calls += 1
        self.samples += len(idx)
        return self.f(x, idx)


def make_problem():
    rng = np.random.default_rng(0)
    z = rng.standard_normal((N_SAMPLES, DIM)) * np.array([3.0, 2.0, 1.0, 0.5, 0.3, 0.2])
    cost = Counting(lambda x, idx: -np.sum((z[idx] @ x) ** 2) / len(idx))
    egrad = Counting(lambda x, idx: -2.0 * z[idx].T @ (z[idx] @ x) / len(idx))
    fopt = -np.linalg.eigvalsh(z.T @ z / N_SAMPLES)[-RANK:].sum()
    problem = jitopt.FiniteSumProblem(Stiefel(DIM, RANK), cost, egrad, N_SAMPLES, fopt=fopt)
    return problem, cost, egrad


def solve(method, problem, x0, **options):
    return jitopt.get_method(method).solver(problem, x0, maxiter=30, **options)


@pytest.mark.parametrize("method", METHODS)
def test_result_fields_and_exact_counts(method):
    problem, cost, egrad = make_problem()
    x0 = problem.manifold.random_point(1)
    res = solve(method, problem, x0, rng=0, history=True)
    for key in ("x", "fun", "grad_norm", "success", "status", "message", "nit", "nfev",
                "njev", "nifo", "time", "history"):
        assert key in res, key
    assert res.success == (res.status == 0)
    assert (res.nfev, res.njev, res.nifo) == (cost.calls, egrad.calls, egrad.samples)
    problem.manifold.check_point(res.x, atol=1e-10)
    assert res.fun <= problem.cost(x0)  # no method ends worse than it started here
    assert res.history["nifo"][-1] == res.nifo


@pytest.mark.parametrize("method", METHODS)
def test_callbacks_and_stop_iteration(method):
    problem, _, _ = make_problem()
    x0 = problem.manifold.random_point(1)
    new, old = [], []
    solve(method, problem, x0, rng=0,
          callback=lambda intermediate_result: new.append(intermediate_result.nit))
    solve(method, problem, x0, rng=0, callback=lambda xk: old.append(np.array(xk)))
    assert len(new) >= 2 and new == sorted(new) and len(old) == len(new)

    def stop(intermediate_result):
        if intermediate_result.nit >= 2:
            raise StopIteration

    res = solve(method, problem, x0, rng=0, callback=stop)
    assert res.status == 99 and not res.success
    assert res.message == "`callback` raised `StopIteration`."


@pytest.mark.parametrize("method", METHODS)
def test_bad_start_reproducibility_and_untouched_input(method):
    problem, _, _ = make_problem()
    x0 = problem.manifold.random_point(1)
    keep = x0.copy()
    with pytest.raises(ValueError, match="x0"):
        solve(method, problem, 2.0 * x0, rng=0)
    with pytest.raises(ValueError, match="x0"):
        solve(method, problem, x0[:, :1], rng=0)
    r1 = solve(method, problem, x0, rng=3)
    r2 = solve(method, problem, x0, rng=3)
    np.testing.assert_array_equal(r1.x, r2.x)
    np.testing.assert_array_equal(x0, keep)


@pytest.mark.parametrize("method", METHODS)
def test_nonfinite_oracle_gives_failed_result(method):
    problem, _, _ = make_problem()
    broken = jitopt.FiniteSumProblem(
        problem.manifold, lambda x, idx: np.nan, lambda x, idx: np.full(x.shape, np.nan),
        N_SAMPLES)
    res = solve(method, broken, problem.manifold.random_point(1), rng=0)
    assert not res.success and res.status == jitopt.Status.NONFINITE
