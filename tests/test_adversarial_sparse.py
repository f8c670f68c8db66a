"""Adversarial property tests of jitopt.sparse: the zeroth-order gradient estimator with a
function that returns careless values, and the scikit-learn regressor on data in any units.

An estimate is never built from a NaN, inf, complex or non-scalar value: the call raises
NonFiniteOracle or OracleError; a legal function gives the central differences. A fit on
``X`` and ``y`` scaled by any powers of ten has the support of the unscaled fit and its
coefficients scaled as the data (the fit is done in units where the data are of order
one), or it warns.
"""

import warnings

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning

import jitopt
from jitopt.sparse import IHTRegressor, zo_gradient

from test_adversarial_faults import COUNTS, SETTINGS, report_counts, scalars, seeds

GROUP = "sparse"
report = report_counts(GROUP)


@pytest.mark.parametrize("estimator", ["sphere", "coordinate"])
@SETTINGS
@given(value=st.one_of(scalars, st.sampled_from([np.ones(2), [1.0], np.float64(np.nan)])),
       at=st.integers(0, 6), seed=seeds)
def test_zo_gradient_of_a_function_with_bad_values(estimator, value, at, seed):
    """``fun`` is the quadratic but returns ``value`` at its ``at``-th query: a value that is
    not a finite real scalar raises (naming fun), never a NaN or truncated estimate."""
    COUNTS[f"{GROUP}:zo_gradient"] += 1
    calls = [0]

    def fun(x):
        calls[0] += 1
        return value if calls[0] == at + 1 else 0.5 * float(x @ x)

    x = np.array([1.0, -2.0, 0.5])
    finite_real = isinstance(value, (int, float, np.integer, np.floating)) and \
        not isinstance(value, bool) and np.isfinite(value)
    try:
        g, n = zo_gradient(fun, x, n_directions=6, rng=seed, estimator=estimator)
    except jitopt.OracleError as err:
        assert not finite_real, err
        assert "fun" in str(err)
        assert isinstance(err, jitopt.NonFiniteOracle) == (
            isinstance(value, (float, np.floating)) and not np.isfinite(value))
        return
    assert np.isfinite(g).all() and n == (6 if estimator == "coordinate" else 7)
    if estimator == "coordinate" and at >= 6:  # every query healthy: exact on a quadratic
        np.testing.assert_allclose(g, x, rtol=1e-8)


@SETTINGS
@given(ex=st.integers(-300, 300), ey=st.integers(-300, 300), seed=seeds)
def test_regressor_fits_data_in_any_units(ex, ey, seed):
    """The report's case: ``IHTRegressor(2).fit(X * 1e150, y)`` returned zeros. With the
    data in other units the fit finds the same support and the coefficients scaled as
    ``10^(ey - ex)`` (when that is a normal double), the intercept as ``10^ey``."""
    assume(abs(ey - ex) <= 300)
    COUNTS[f"{GROUP}:IHTRegressor(units)"] += 1
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((40, 6))
    y = X @ np.array([2.0, 0.0, -1.5, 0.0, 0.0, 0.0]) + 3.0 + 0.01 * rng.standard_normal(40)
    base = IHTRegressor(2).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model = IHTRegressor(2).fit(X * 10.0 ** ex, y * 10.0 ** ey)
    np.testing.assert_array_equal(np.flatnonzero(model.coef_), [0, 2])
    np.testing.assert_allclose(model.coef_, base.coef_ * 10.0 ** (ey - ex), rtol=1e-9)
    np.testing.assert_allclose(model.intercept_, base.intercept_ * 10.0 ** ey, rtol=1e-9)


def test_a_fit_that_does_not_converge_warns():
    """Over a box the data cannot be rescaled; a run that stops short says so (it returned
    the zero coefficients in silence)."""
    COUNTS[f"{GROUP}:IHTRegressor(warning)"] += 1
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 5))
    y = 2 * X[:, 0] - X[:, 1]
    with pytest.warns(ConvergenceWarning, match="IHTRegressor: The step size fell below"):
        IHTRegressor(2, constraint=jitopt.sets.Box(-5.0, 5.0)).fit(X * 1e150, y)
