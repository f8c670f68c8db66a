"""Adversarial property tests of jitopt.minimize's front door: faulty ``x0``, ``fun`` and
``jac`` values (NaN, inf, complex, wrong shapes, empty, object and integer dtypes, scales of
1e300 and 1e-300), unknown methods and bad options.

Every call either raises a ValueError/TypeError naming the argument, or returns a result
whose ``success`` is true only if ``x`` is a finite point of the manifold where ``fun`` is
the closed-form minimum (the Rayleigh quotient on the sphere, a shifted square on R^n);
a faulty oracle value ends the run with ``success=False`` and a message naming the oracle.
"""

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.optimize import OptimizeWarning

import jitopt
from jitopt.manifolds import Euclidean, Sphere

from test_adversarial_faults import (COUNTS, FAULTS, PER_FAULT, REFUSED, SCALED, SETTINGS,
                                     healthy, inject, maybe_refused, refused_by_name, report_counts,
                                     scalars, scale, seeds, unchanged)

report = report_counts("minimize")

METHODS = ("rgd", "rlbfgs", "rcg", "rtr")
A = np.diag([3.0, 2.0, 1.0])


def rayleigh(x):
    return -x @ A @ x


def rayleigh_grad(x):
    return -2.0 * A @ x


def check_result(res, manifold, fmin, xmin=None, f_target=None):
    """A successful result is a finite point of ``manifold`` attaining ``fmin`` (or, when
    it stopped on ``f_target``, a cost below it)."""
    assert isinstance(res.message, str) and res.message
    if res.success:
        assert np.isfinite(res.x).all() and np.isfinite(res.fun)
        manifold.check_point(np.reshape(res.x, manifold.shape), atol=1e-8)
        if res.status == jitopt.Status.TARGET:
            assert fmin - 1e-9 <= res.fun <= f_target
            return
        np.testing.assert_allclose(res.fun, fmin, rtol=1e-6, atol=1e-9)
        if xmin is not None:
            np.testing.assert_allclose(res.x, xmin, atol=1e-4)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("fault", FAULTS)
@PER_FAULT
@given(seed=seeds)
def test_start_point(method, fault, seed):
    COUNTS[f"minimize:x0 ({method})"] += 1
    z = np.random.default_rng(seed).standard_normal(3)
    x0 = z / np.linalg.norm(z)
    arg = inject(fault, x0, np.random.default_rng(seed))
    before = np.array(arg, copy=True)
    M = Sphere(3)

    def call():
        return jitopt.minimize(rayleigh, arg, jac=rayleigh_grad, method=method, manifold=M,
                               options={"maxiter": 300})

    if fault in REFUSED + SCALED + ("int",):  # off the sphere, or not a real point
        refused_by_name(call, "x0")
    else:
        res = maybe_refused(call, "x0") if fault == "object" else call()
        if res is not None:
            check_result(res, M, -3.0)
    unchanged(before, arg)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("fault", FAULTS)
@PER_FAULT
@given(seed=seeds)
def test_start_point_in_euclidean_space(method, fault, seed):
    """A shifted square from faulty starts in R^3: a scaled start is a legal start."""
    COUNTS[f"minimize:x0 in R^n ({method})"] += 1
    rng = np.random.default_rng(seed)
    c = rng.standard_normal(3)
    arg = inject(fault, rng.standard_normal(3), rng)
    before = np.array(arg, copy=True)

    def call():
        return jitopt.minimize(lambda x: np.sum((x - c) ** 2), arg, method=method,
                               jac=lambda x: 2 * (x - c), options={"maxiter": 300})

    if fault in REFUSED and fault != "wrong_shape":
        refused_by_name(call, "x0", "Euclidean dimensions")
    else:  # a (3, 1) start is a point of Euclidean(3, 1)
        with np.errstate(over="ignore", invalid="ignore"):
            res = maybe_refused(call, "x0") if fault == "object" else call()
        if res is not None:
            shape = np.shape(arg)
            check_result(res, Euclidean(*shape), 0.0, np.reshape(c, shape))
        if fault == "big":
            assert not res.success and "non-finite" in res.message
    unchanged(before, arg)


#: what a careless cost function returns
BAD_VALUES = {
    "nan": lambda f: np.nan,
    "inf": lambda f: -np.inf,
    "complex": lambda f: f + 1e-3j,
    "complex with zero imaginary part": lambda f: complex(f),
    "empty": lambda f: np.zeros(0),
    "two values": lambda f: np.array([f, f]),
    "1-element array": lambda f: np.array([f]),
    "None": lambda f: None,
    "string": lambda f: "f",
}
GOOD_VALUES = {
    "float": float,
    "numpy float": np.float64,
    "0-d array": np.array,
    "float32": np.float32,
    "object array": lambda f: np.array(f, dtype=object),
}


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("value", sorted(BAD_VALUES) + sorted(GOOD_VALUES))
def test_cost_values(method, value):
    COUNTS[f"minimize:fun ({method})"] += 1
    make = BAD_VALUES.get(value) or GOOD_VALUES[value]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        res = jitopt.minimize(lambda x: make(rayleigh(x)), np.ones(3) / np.sqrt(3),
                              jac=rayleigh_grad, method=method, manifold=Sphere(3),
                              options={"maxiter": 300})
    if value in BAD_VALUES:
        assert not res.success and "cost" in res.message, res.message
    else:
        check_result(res, Sphere(3), -3.0)
        tol = 1e-6 if value == "float32" else 1e-9
        assert res.success and abs(res.fun + 3.0) <= tol * 3


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("fault", [f for f in FAULTS if f not in SCALED + ("int",)])
def test_gradient_values(method, fault):
    COUNTS[f"minimize:jac ({method})"] += 1
    rng = np.random.default_rng(0)

    def jac(x):  # a wrong shape: two entries of three (a (3, 1) gradient is accepted)
        g = rayleigh_grad(x)
        return g[:2] if fault == "wrong_shape" else inject(fault, g, rng)

    res = jitopt.minimize(rayleigh, np.ones(3) / np.sqrt(3), method=method, jac=jac,
                          manifold=Sphere(3), options={"maxiter": 300})
    if fault in REFUSED:
        assert not res.success and "egrad" in res.message, res.message
    else:
        check_result(res, Sphere(3), -3.0)
        assert res.success


@pytest.mark.parametrize("method", ("rgd", "rlbfgs"))
def test_cost_and_gradient_together(method):
    """``jac=True``: ``fun`` returns ``(f, g)``; a complex pair is refused by message."""
    COUNTS[f"minimize:jac=True ({method})"] += 2
    x0 = np.ones(3) / np.sqrt(3)
    good = jitopt.minimize(lambda x: (rayleigh(x), rayleigh_grad(x)), x0, jac=True,
                           method=method, manifold=Sphere(3))
    check_result(good, Sphere(3), -3.0)
    assert good.success
    bad = jitopt.minimize(lambda x: (rayleigh(x), 1j * rayleigh_grad(x)), x0, jac=True,
                          method=method, manifold=Sphere(3))
    assert not bad.success and "complex" in bad.message


@SETTINGS
@given(method=st.one_of(st.sampled_from(["RGD", "nope", "", "bfgs"]), scalars))
def test_method_names(method):
    COUNTS["minimize:method"] += 1
    call = lambda: jitopt.minimize(rayleigh, np.ones(3) / np.sqrt(3), jac=rayleigh_grad,
                                   method=method, manifold=Sphere(3))
    if method is None or method == "RGD":
        check_result(call(), Sphere(3), -3.0)
    else:
        refused_by_name(call, "method")


OPTIONS = ("maxiter", "gtol", "max_time", "f_target", "rng", "min_step", "history")


@SETTINGS
@given(name=st.sampled_from(OPTIONS), value=scalars,
       method=st.sampled_from(METHODS))
def test_option_values(name, value, method):
    COUNTS["minimize:options"] += 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OptimizeWarning)
        try:
            res = jitopt.minimize(rayleigh, np.ones(3) / np.sqrt(3), jac=rayleigh_grad,
                                  method=method, manifold=Sphere(3),
                                  options={name: value, "maxiter": 200} if name != "maxiter"
                                  else {name: value})
        except (ValueError, TypeError) as err:
            assert name in str(err), str(err)
            return
    if name == "gtol" and res.success:  # converged: the gradient norm is below gtol
        x = res.x
        g = rayleigh_grad(x) - (x @ rayleigh_grad(x)) * x
        assert np.linalg.norm(g) <= float(value) * (1 + 1e-9)
        if float(value) > 1e-6:
            return
    check_result(res, Sphere(3), -3.0, f_target=value if name == "f_target" else None)


@pytest.mark.parametrize("options", [3, "maxiter", [("maxiter", 3)], (1, 2)])
def test_options_must_be_a_dict(options):
    COUNTS["minimize:options"] += 1
    refused_by_name(lambda: jitopt.minimize(rayleigh, np.ones(3) / np.sqrt(3),
                                            jac=rayleigh_grad, manifold=Sphere(3),
                                            options=options), "options")


@pytest.mark.parametrize("tol", [np.nan, -1.0, 1j, "a", np.inf])
def test_tolerance(tol):
    COUNTS["minimize:tol"] += 1
    call = lambda: jitopt.minimize(rayleigh, np.ones(3) / np.sqrt(3), jac=rayleigh_grad,
                                   manifold=Sphere(3), tol=tol)
    if tol == np.inf:  # any start meets an infinite tolerance: a legal, trivial run
        res = call()
        assert res.success and res.nit == 0
    else:
        refused_by_name(call, "tol")


@pytest.mark.parametrize("args", [(1j,), (np.nan,)])
def test_complex_or_nan_extra_arguments(args):
    COUNTS["minimize:args"] += 1
    res = jitopt.minimize(lambda x, a: rayleigh(x) * a, np.ones(3) / np.sqrt(3), args=args,
                          jac=lambda x, a: rayleigh_grad(x) * a, manifold=Sphere(3))
    assert not res.success and "cost" in res.message


@pytest.mark.parametrize("method", METHODS + (None,))
@pytest.mark.parametrize("oracle", ["fun", "jac"])
@SETTINGS
@given(k=st.integers(2, 8), value=st.sampled_from([np.nan, np.inf, -np.inf]))
def test_a_single_nonfinite_value_ends_the_run(method, oracle, k, value):
    """The defaults' case: ``fun`` or ``jac`` returns NaN or inf once, at its ``k``-th call,
    and is healthy again after it. The Wolfe search of rlbfgs (minimize's default) and rcg
    read it as a step too long and reported success; every method now ends with NONFINITE,
    the best iterate before it in ``x``, its true cost in ``fun``."""
    COUNTS[f"minimize:a NaN once ({method})"] += 1
    calls = [0]

    def faulty(f):
        def wrapped(x):
            calls[0] += 1
            out = f(x)
            return out * value if calls[0] == k else out
        return wrapped

    fun = faulty(rayleigh) if oracle == "fun" else rayleigh
    jac = faulty(rayleigh_grad) if oracle == "jac" else rayleigh_grad
    x0 = np.array([1.0, 1.0, 1.0]) / np.sqrt(3)
    res = jitopt.minimize(fun, x0, jac=jac, method=method, manifold=Sphere(3))
    if calls[0] < k:  # converged before the k-th call: nothing to see
        check_result(res, Sphere(3), -3.0)
        return
    assert res.status == jitopt.Status.NONFINITE and not res.success, res.message
    assert "non-finite" in res.message and ("cost" in res.message) == (oracle == "fun")
    Sphere(3).check_point(res.x, atol=1e-10)
    assert res.fun == pytest.approx(rayleigh(res.x), abs=1e-14) and res.fun <= rayleigh(x0)


@SETTINGS
@given(value=st.one_of(scalars, st.sampled_from([[0.1], np.array([0.1, 0.2]), "raise"])))
def test_rsdm_step_schedule_values(value):
    """A step schedule ``step(k)`` that raises or returns no positive finite number ends the
    run with ORACLE_ERROR and a message naming ``step`` (it was an INNER_FAILURE with a raw
    "could not convert string to float"); a legal one runs."""
    COUNTS["minimize:rsdm(step=callable)"] += 1
    problem = jitopt.problems.pca(np.diag([4.0, 3.0, 2.0, 1.0]), 2)

    def step(k):
        if isinstance(value, str) and value == "raise":
            raise ZeroDivisionError("no step")
        return value

    res = jitopt.solvers.rsdm(problem, step=step, rng=0, maxiter=50)
    legal = isinstance(value, (int, float, np.integer, np.floating)) and \
        not isinstance(value, bool) and np.isfinite(value) and value > 0
    if not legal:
        assert res.status == jitopt.Status.ORACLE_ERROR and not res.success
        assert "step schedule step(0)" in res.message, res.message
        assert np.array_equal(res.x, problem.manifold.random_point(0))  # (rng=0: the start)
        return
    assert res.status != jitopt.Status.ORACLE_ERROR, res.message
    if np.all(np.isfinite(res.x)):
        problem.manifold.check_point(res.x, atol=1e-8)
