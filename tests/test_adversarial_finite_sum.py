"""Adversarial property tests of the finite-sum problems of jitopt.problems (finite_sum_pca,
leading_eigenvector, robust_pca, karcher_mean, spiked_samples, commuting_spd_samples).

As in test_adversarial_problems: a refusal names the argument, an accepted input gives the
closed-form optimum (scaled as the data), the mean oracle equals the mean of the sample
oracles, the caller's array is not modified; at the end, the refusals of values that used
to slip through.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jitopt import problems as P

from test_adversarial_faults import (COUNTS, FAULTS, PER_FAULT, SETTINGS, exercise,
                                     healthy, inject, maybe_refused, refused_by_name,
                                     report_counts, scalars, scale, seeds)

GROUP = "finite_sum"
report = report_counts(GROUP)



def samples(seed, n=12, d=4):
    return np.random.default_rng(seed).standard_normal((n, d)) * [3.0, 2.0, 1.0, 0.5]


def pca_check(Zh, p, s2):
    """The optimum of PCA of the samples ``Zh`` (times ``s2``, the squared scale)."""
    w = np.linalg.eigvalsh(Zh.T @ Zh / Zh.shape[0])

    def check(problem):
        with np.errstate(over="ignore"):
            fopt = -w[::-1][:p].sum() * s2
        assert np.isfinite(problem.fopt)
        np.testing.assert_allclose(problem.fopt, fopt, rtol=1e-9)
        problem.manifold.check_point(problem.xopt, atol=1e-9)
        np.testing.assert_allclose(problem.cost(problem.xopt), fopt, rtol=1e-9)
        # the mean gradient is the mean of the per-sample gradients
        idx = np.arange(problem.n_samples)
        each = np.mean([problem.egrad(problem.xopt, idx[i:i + 1]) for i in idx], axis=0)
        np.testing.assert_allclose(problem.egrad(problem.xopt, idx), each, rtol=1e-9,
                                   atol=1e-12 * s2)

    return check


@pytest.mark.parametrize("fault", FAULTS)
@PER_FAULT
@given(seed=seeds, p=st.integers(1, 3))
def test_finite_sum_pca(fault, seed, p):
    Z = samples(seed)
    arg = inject(fault, Z, np.random.default_rng(seed))
    exercise(GROUP, "finite_sum_pca", fault, arg, lambda z: P.finite_sum_pca(z, p), ("Z",),
             pca_check(healthy(fault, Z), p, np.float64(scale(fault)) ** 2))


@pytest.mark.parametrize("fault", FAULTS)
@PER_FAULT
@given(seed=seeds)
def test_leading_eigenvector(fault, seed):
    Z = samples(seed)
    arg = inject(fault, Z, np.random.default_rng(seed))
    exercise(GROUP, "leading_eigenvector", fault, arg, P.leading_eigenvector, ("Z",),
             pca_check(healthy(fault, Z), 1, np.float64(scale(fault)) ** 2))


@pytest.mark.parametrize("fault", FAULTS)
@PER_FAULT
@given(seed=seeds)
def test_robust_pca(fault, seed):
    Z = samples(seed)
    arg = inject(fault, Z, np.random.default_rng(seed))
    Zh = healthy(fault, Z) * scale(fault)

    def check(problem):
        x = problem.manifold.random_point(0)
        r = Zh - Zh @ x @ x.T
        expected = np.mean(np.sqrt(1.0 + np.sum(r * r, axis=1)))
        np.testing.assert_allclose(problem.cost(x), expected, rtol=1e-9)

    exercise(GROUP, "robust_pca", fault, arg, lambda z: P.robust_pca(z, 2), ("Z",), check)


def spd_samples(seed, n=5, d=3):
    rng = np.random.default_rng(seed)
    q = np.linalg.qr(rng.standard_normal((d, d)))[0]
    return np.stack([(q * np.exp(rng.standard_normal(d))) @ q.T for _ in range(n)])


@pytest.mark.parametrize("fault", [f for f in FAULTS if f not in ("nan", "inf", "empty",
                                                                  "complex", "int")])
@PER_FAULT
@given(seed=seeds)
def test_karcher_mean(fault, seed):
    A = spd_samples(seed)
    A = 0.5 * (A + A.transpose(0, 2, 1))
    arg = inject(fault, A, np.random.default_rng(seed))
    Ah = healthy(fault, A)

    def check(problem):
        # commuting samples: the mean is exp of the mean log, scaled as the data
        x = problem.xopt
        problem.manifold.check_point(x, atol=1e-9 * scale(fault))
        np.testing.assert_allclose(problem.cost(x), problem.fopt, rtol=1e-8, atol=1e-12)
        logs = [np.linalg.eigvalsh(a) for a in Ah]
        assert np.isfinite(problem.fopt) and np.all(np.isfinite(logs))

    exercise(GROUP, "karcher_mean", fault, arg, P.karcher_mean, ("A",), check)


@pytest.mark.parametrize("fault", ["nan", "inf", "complex", "wrong_shape"])
def test_karcher_mean_refuses(fault):
    COUNTS["finite_sum:karcher_mean"] += 1
    A = spd_samples(0)
    refused_by_name(lambda: P.karcher_mean(inject(fault, A)), "A")


@SETTINGS
@given(sigma=scalars)
def test_commuting_spd_samples(sigma):
    COUNTS["finite_sum:commuting_spd_samples"] += 1
    A = maybe_refused(lambda: P.commuting_spd_samples(4, 3, sigma=sigma, rng=0), "sigma")
    if A is not None:
        w = np.linalg.eigvalsh(A)
        assert np.isfinite(A).all() and (w > 0).all()
        np.testing.assert_allclose(A, A.transpose(0, 2, 1))


@SETTINGS
@given(n=scalars, d=scalars)
def test_spiked_samples_sizes(n, d):
    COUNTS["finite_sum:spiked_samples"] += 1
    Z = maybe_refused(lambda: P.spiked_samples(n, d, rng=0), "n", "d")
    if Z is not None:
        assert Z.shape == (int(n), int(d)) and np.isfinite(Z).all()


# -- refusals of values that used to slip through --

@pytest.mark.parametrize("bad", [np.nan, np.inf, 1j])
def test_spiked_samples_refuses_bad_scales(bad):
    with pytest.raises((ValueError, TypeError), match="scales"):
        P.spiked_samples(5, 3, scales=(bad, 1.0), rng=0)


@pytest.mark.parametrize("sigma", [np.inf, 1e300])
def test_commuting_spd_samples_refuses_infinite_sigma(sigma):
    try:
        A = P.commuting_spd_samples(4, 3, sigma=sigma, rng=0)
    except ValueError as err:
        assert "sigma" in str(err)
        return
    w = np.linalg.eigvalsh(A)
    assert np.isfinite(A).all() and (w > 0).all()


def test_robust_pca_refuses_infinite_eps():
    with pytest.raises(ValueError, match="eps"):
        P.robust_pca(samples(0), 2, eps=np.inf)


def test_karcher_mean_refuses_an_empty_stack_by_name():
    with pytest.raises(ValueError, match="A must"):
        P.karcher_mean(np.zeros((2, 0, 0)))
