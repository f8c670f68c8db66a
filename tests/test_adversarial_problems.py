"""Adversarial property tests of the built-in problems of jitopt.problems.

Each factory gets healthy data with one injected fault (test_adversarial_faults). It either
refuses it with a ValueError/TypeError naming the argument, or returns a problem whose
invariants hold: a finite optimum equal to the closed form (times the scale of a scaled
fault), ``xopt`` on the manifold with ``cost(xopt) == fopt`` and a vanishing Riemannian
gradient, oracles equal to their formulas; the caller's arrays are never modified.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import jitopt
from jitopt import problems as P

from test_adversarial_faults import (COUNTS, FAULTS, PER_FAULT, REFUSED, SETTINGS,
                                     exercise, healthy, inject, maybe_refused,
                                     refused_by_name, report_counts, scalars, scale, seeds)

GROUP = "problems"
report = report_counts(GROUP)



def symmetric(seed, n=4):
    g = np.random.default_rng(seed).standard_normal((n, n))
    return g + g.T


def on_manifold_and_optimal(problem, fopt, s):
    """``problem.fopt`` equals ``fopt`` and its ``xopt`` attains it with a zero gradient."""
    assert np.isfinite(problem.fopt)
    np.testing.assert_allclose(problem.fopt, fopt, rtol=1e-9, atol=1e-12 * s)
    problem.manifold.check_point(problem.xopt, atol=1e-9)
    np.testing.assert_allclose(problem.cost(problem.xopt), fopt, rtol=1e-9, atol=1e-12 * s)
    g = problem.rgrad(problem.xopt)
    assert np.isfinite(g).all() and np.abs(g).max() <= 1e-8 * s * max(1.0, abs(fopt / s))


@pytest.mark.parametrize("fault", FAULTS)
@PER_FAULT
@given(seed=seeds, p=st.integers(1, 3))
def test_pca(fault, seed, p):
    A = symmetric(seed)
    arg = inject(fault, A, np.random.default_rng(seed))
    w = np.linalg.eigvalsh(healthy(fault, A))

    def check(problem):
        on_manifold_and_optimal(problem, -w[::-1][:p].sum() * scale(fault), scale(fault))

    exercise(GROUP, "pca", fault, arg, lambda a: P.pca(a, p), ("A",), check)


@SETTINGS
@given(p=scalars)
def test_pca_subspace_dimension(p):
    COUNTS["problems:pca(p)"] += 1
    out = maybe_refused(lambda: P.pca(np.diag([3.0, 2.0, 1.0]), p), "p")
    if out is not None:  # an integer in [1, 3]: the numpy integers
        assert out.fopt == -sum([3.0, 2.0, 1.0][:int(p)])


@pytest.mark.parametrize("fault", FAULTS)
@PER_FAULT
@given(seed=seeds)
def test_brockett(fault, seed):
    A = symmetric(seed)
    mu = np.array([2.0, 1.0])
    arg = inject(fault, A, np.random.default_rng(seed))
    w = np.linalg.eigvalsh(healthy(fault, A))

    def check(problem):
        on_manifold_and_optimal(problem, (mu * w[:2]).sum() * scale(fault), scale(fault))

    exercise(GROUP, "brockett", fault, arg, lambda a: P.brockett(a, mu), ("A",), check)


@pytest.mark.parametrize("fault", FAULTS)
@PER_FAULT
@given(seed=seeds)
def test_brockett_weights(fault, seed):
    mu = np.sort(np.random.default_rng(seed).uniform(1.0, 2.0, 2))[::-1] + [0.5, 0.0]
    arg = inject(fault, mu, np.random.default_rng(seed))
    A = np.diag([1.0, 2.0, 3.0, 4.0])
    m = healthy(fault, mu)

    def check(problem):
        s = scale(fault)
        on_manifold_and_optimal(problem, (m * [1.0, 2.0])[:m.size].sum() * s, s)

    if fault == "int" and not (np.all(m > 0) and np.all(np.diff(m) < 0)):
        COUNTS["problems:brockett(mu)"] += 1
        refused_by_name(lambda: P.brockett(A, arg), "mu")
        return
    exercise(GROUP, "brockett(mu)", fault, arg, lambda a: P.brockett(A, a), ("mu",), check)


@pytest.mark.parametrize("fault", FAULTS)
@PER_FAULT
@given(seed=seeds)
def test_procrustes(fault, seed):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((5, 3))
    B = rng.standard_normal((5, 3))
    arg = inject(fault, A, rng)

    def check(problem):
        s = scale(fault)
        Ah = healthy(fault, A) * s
        assert np.isfinite(problem.fopt)
        problem.manifold.check_point(problem.xopt, atol=1e-9)
        cost = problem.cost(problem.xopt)
        np.testing.assert_allclose(cost, problem.fopt, rtol=1e-9, atol=1e-9 * max(s, 1) ** 2)
        # no orthogonal matrix does better (the optimum of the closed form)
        for k in range(3):
            Q = jitopt.manifolds.Orthogonal(3).random_point(k)
            assert problem.fopt <= np.sum((Ah @ Q - B) ** 2) * (1 + 1e-12) + 1e-12

    exercise(GROUP, "procrustes", fault, arg, lambda a: P.procrustes(a, B), ("A",), check)


@pytest.mark.parametrize("fault", FAULTS)
@PER_FAULT
@given(seed=seeds)
def test_linear_cost(fault, seed):
    C = np.random.default_rng(seed).standard_normal((4, 2))
    arg = inject(fault, C, np.random.default_rng(seed))
    sv = np.linalg.svd(healthy(fault, C), compute_uv=False)

    def check(problem):
        on_manifold_and_optimal(problem, -sv.sum() * scale(fault), scale(fault))

    exercise(GROUP, "linear_cost", fault, arg, P.linear_cost, ("C",), check)


@SETTINGS
@given(low=scalars, high=scalars)
def test_spectrum_matrix(low, high):
    COUNTS["problems:spectrum_matrix"] += 1
    A = maybe_refused(lambda: P.spectrum_matrix(4, low=low, high=high, rng=0), "low", "high")
    if A is not None:
        w = np.linalg.eigvalsh(A)
        np.testing.assert_allclose(w, np.geomspace(float(low), float(high), 4), rtol=1e-9,
                                   atol=1e-14 * float(high))
        assert w[0] > 0


def _least_squares_check(Xh, y, s):
    def check(problem):
        w = np.linspace(-1.0, 1.0, Xh.shape[1])
        r = (Xh * s) @ w - y
        np.testing.assert_allclose(problem.cost(w), 0.5 * np.mean(r * r), rtol=1e-10)
        np.testing.assert_allclose(problem.egrad(w), (Xh * s).T @ r / len(y), rtol=1e-10,
                                   atol=1e-300)
    return check


@pytest.mark.parametrize("fault", FAULTS)
@PER_FAULT
@given(seed=seeds)
def test_least_squares(fault, seed):
    rng = np.random.default_rng(seed)
    X, y = rng.standard_normal((6, 3)), rng.standard_normal(6)
    arg = inject(fault, X, rng)
    exercise(GROUP, "least_squares", fault, arg, lambda a: P.least_squares(a, y), ("X",),
             _least_squares_check(healthy(fault, X), y, scale(fault)))


@pytest.mark.parametrize("fault", FAULTS)
@PER_FAULT
@given(seed=seeds)
def test_least_squares_response(fault, seed):
    rng = np.random.default_rng(seed)
    X, y = rng.standard_normal((6, 3)), rng.standard_normal(6)
    arg = inject(fault, y, rng)
    yh = healthy(fault, y) * scale(fault)
    exercise(GROUP, "least_squares(y)", fault, arg, lambda a: P.least_squares(X, a), ("y",),
             _least_squares_check(X, yh, 1.0))


@pytest.mark.parametrize("fault", FAULTS)
@PER_FAULT
@given(seed=seeds)
def test_logistic(fault, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((6, 3))
    y = np.where(rng.random(6) < 0.5, -1.0, 1.0)
    arg = inject(fault, X, rng)
    Xh = healthy(fault, X) * scale(fault)

    def check(problem):
        w = np.array([0.3, -0.2, 0.1])
        z = -y * (Xh @ w)
        np.testing.assert_allclose(problem.cost(w), np.mean(np.logaddexp(0.0, z)),
                                   rtol=1e-10)
        assert np.isfinite(problem.egrad(w)).all()

    exercise(GROUP, "logistic", fault, arg, lambda a: P.logistic(a, y), ("X",), check)


@SETTINGS
@given(rho=scalars, snr=scalars, k=st.sampled_from([0, 2, 5, 6, -1, 2.0]))
def test_sparse_regression_data(rho, snr, k):
    COUNTS["problems:sparse_regression_data"] += 1
    out = maybe_refused(lambda: P.sparse_regression_data(30, 5, k, rho=rho, snr=snr, rng=0),
                        "rho", "snr", "k")
    if out is not None:
        X, y, beta = out
        assert np.isfinite(X).all() and np.isfinite(y).all()
        np.testing.assert_allclose(np.linalg.norm(X, axis=0), np.sqrt(30), rtol=1e-12)
        assert np.count_nonzero(beta) == k


@pytest.mark.parametrize("fault", FAULTS)
@PER_FAULT
@given(seed=seeds)
def test_affine_operator(fault, seed):
    rng = np.random.default_rng(seed)
    A, b = rng.standard_normal((3, 3)), rng.standard_normal(3)
    arg = inject(fault, A, rng)
    Ah = healthy(fault, A) * scale(fault)

    def check(F):
        x = rng.random(3)
        np.testing.assert_allclose(F(x), Ah @ x + b, rtol=1e-12)

    exercise(GROUP, "AffineOperator", fault, arg, lambda a: P.AffineOperator(a, b), ("A",), check)


@pytest.mark.parametrize("fault", FAULTS)
@PER_FAULT
@given(seed=seeds)
def test_normal_form_operator(fault, seed):
    rng = np.random.default_rng(seed)
    U = rng.standard_normal((2, 2, 3))
    arg = inject(fault, U, rng)
    A, B = healthy(fault, U) * scale(fault)

    def check(F):
        x, y = rng.dirichlet(np.ones(2)), rng.dirichlet(np.ones(3))
        # F = -(grad_x x^T A y, grad_y x^T B y) = -(A y, B^T x)
        np.testing.assert_allclose(F(np.concatenate([x, y])),
                                   -np.concatenate([A @ y, B.T @ x]), rtol=1e-12)

    exercise(GROUP, "NormalFormOperator", fault, arg, P.NormalFormOperator, ("payoffs",), check)


@pytest.mark.parametrize("fault", FAULTS)
@PER_FAULT
@given(seed=seeds)
def test_vi_operator_output(fault, seed):
    """An operator returning a faulty array: the EVI run fails with a message, never a
    certified gap from dropped imaginary parts or NaNs."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((3, 3))
    A = A - A.T  # monotone: the EVI solver certifies a small gap
    faulty = inject(fault, A[0], rng)

    def operator(x):
        return faulty * 0 + A @ x if fault not in REFUSED else faulty

    COUNTS["problems:VIProblem(operator)"] += 1
    problem = P.VIProblem(operator, jitopt.sets.Simplex(), dim=3)
    res = jitopt.solvers.evi(problem, tol=1e-2, maxiter=200, rng=0)
    if fault in REFUSED:
        assert not res.success and "operator" in res.message
    else:
        assert np.isfinite(res.gap) and (not res.success or res.gap <= 1e-2)
        check = jitopt.solvers.evi_gap(problem, res.points, res.weights)
        assert check.gap <= res.gap + 1e-9


PENALTIES = {"CappedL1": P.CappedL1, "SCAD": P.SCAD, "MCP": P.MCP, "L1MinusL2": P.L1MinusL2}


@SETTINGS
@given(name=st.sampled_from(sorted(PENALTIES)), lam=scalars)
def test_dc_penalties(name, lam):
    COUNTS[f"problems:{name}"] += 1
    pen = maybe_refused(lambda: PENALTIES[name](lam), "lam")
    if pen is not None:
        x = np.array([0.0, 0.25, -3.0, 1e3])
        v = pen.value(x)
        # nonnegative, zero at zero, the DC split adds up
        assert np.isfinite(v) and v >= 0.0 and pen.value(np.zeros(4)) == 0.0
        np.testing.assert_allclose(v, pen.g_weight * np.abs(x).sum() - pen.h_value(x),
                                   rtol=1e-12)
        assert np.isfinite(pen.h_subgradient(x)).all()


@SETTINGS
@given(lam=scalars, drift=scalars, bound=scalars)
def test_online_sparse_robust_regression(lam, drift, bound):
    COUNTS["problems:online_sparse_robust_regression"] += 1
    problem = maybe_refused(lambda: P.online_sparse_robust_regression(
        p=4, beta_star=(10.0,), lam=lam, drift=drift, bound=bound), "lam", "drift", "bound",
        "beta_star")
    if problem is not None:
        # the limit cost at the optimum: E|noise| = sqrt(2/pi) plus the penalty
        assert np.isfinite(problem.fopt)
        np.testing.assert_allclose(problem.fopt, np.sqrt(2 / np.pi)
                                   + problem.penalty.value(problem.xopt), rtol=1e-12)
        A, b = problem.stream.draw_pair(1, 5, 0, np.random.default_rng(0))[0]
        assert np.isfinite(A).all() and np.isfinite(b).all()


@pytest.mark.parametrize("fault", FAULTS)
@PER_FAULT
@given(seed=seeds)
def test_barycenter_problem(fault, seed):
    rng = np.random.default_rng(seed)
    D = rng.random((2, 4, 5)) + 0.1
    arg = inject(fault, D, rng)
    Dh = healthy(fault, D)

    def check(problem):
        if np.any(Dh.sum(axis=(1, 2)) <= 0):
            raise AssertionError("a zero density was accepted")
        # each density rescaled to mean one, proportional to the input
        np.testing.assert_allclose(problem.densities.mean(axis=(1, 2)), 1.0, rtol=1e-12)
        np.testing.assert_allclose(problem.densities,
                                   Dh / Dh.mean(axis=(1, 2), keepdims=True), rtol=1e-12)

    if fault == "int" and np.any(np.rint(4 * D).sum(axis=(1, 2)) <= 0):
        return
    exercise(GROUP, "BarycenterProblem", fault, arg, P.BarycenterProblem, ("densities",), check)


RAGGED = ([[1.0, 2.0], [3.0]], [[[1.0, 0.0], [0.0, 1.0]], [[1.0]]])


@pytest.mark.parametrize("entry, call, name", [
    ("pca", lambda r: P.pca(r[0], 1), "A"),
    ("brockett", lambda r: P.brockett(r[0], [1.0]), "A"),
    ("finite_sum_pca", lambda r: P.finite_sum_pca(r[0], 1), "Z"),
    ("karcher_mean", lambda r: P.karcher_mean(r[1]), "A"),
    ("least_squares", lambda r: P.least_squares(r[0], [1.0, 2.0]), "X"),
    ("AffineOperator", lambda r: P.AffineOperator(r[0]), "A"),
    ("BarycenterProblem", lambda r: P.BarycenterProblem(r[1]), "densities"),
    ("Polytope", lambda r: jitopt.sets.Polytope(r[0], [1.0, 1.0]), "A"),
    ("Box", lambda r: jitopt.sets.Box(r[0], 1.0), "lower"),
    ("NormalFormGame", lambda r: jitopt.games.NormalFormGame([r[0], r[0]]), "payoffs"),
    ("minimize", lambda r: jitopt.minimize(lambda x: 0.0, r[0], jac=lambda x: x), "x0"),
    ("check_point", lambda r: jitopt.manifolds.Stiefel(2, 1).check_point(r[0]), "x"),
    ("IHTRegressor", lambda r: jitopt.sparse.IHTRegressor(1).fit(r[0], [1.0, 2.0]), "X"),
])
def test_a_ragged_nesting_of_lists_is_refused_by_name(entry, call, name):
    """NumPy's "setting an array element with a sequence ... inhomogeneous shape" names no
    argument: every entry point that reads an array refuses a ragged list by its name."""
    COUNTS[f"problems:ragged {entry}"] += 1
    err = refused_by_name(lambda: call(RAGGED), name)
    assert "inhomogeneous" not in str(err) and str(err).startswith(name)


def _stream(dim=3, complex_data=False):
    data = np.random.default_rng(0).standard_normal((200, dim))
    beta = np.linspace(1.0, 2.0, dim)

    def sample(t, size, rng):
        A = data[rng.integers(0, len(data), size)]
        return (A + 1e-3j, A @ beta + 0j) if complex_data else (A, A @ beta)
    return P.StreamProblem(sample)


@SETTINGS
@given(d=st.integers(1, 4), dim=st.one_of(st.none(), st.integers(0, 5)),
       kind=st.sampled_from(["Box", "Box & L2Ball", "GroupNormBall"]))
def test_dc_problem_constraint_dimension(d, dim, kind):
    """A constraint set of a fixed dimension other than ``dim`` is refused by name; one of
    any dimension or of the right one is accepted, and projections land in it."""
    COUNTS["problems:DCProblem(constraint)"] += 1
    n = d if dim is None else dim
    if kind == "GroupNormBall" and n == 0:
        return
    cset = {"Box": lambda: jitopt.sets.Box(-np.ones(n), np.ones(n)) if dim is not None
            else jitopt.sets.Box(-1.0, 1.0),
            "Box & L2Ball": lambda: (jitopt.sets.Box(-np.ones(n), np.ones(n)) if dim is not None
                                     else jitopt.sets.Box(-1.0, 1.0)) & jitopt.sets.L2Ball(1.0),
            "GroupNormBall": lambda: jitopt.sets.GroupNormBall(np.arange(n), 1.0)}[kind]()
    problem = maybe_refused(lambda: P.DCProblem(_stream(d), d, loss="squared",
                                                constraint=cset), "constraint")
    assert (problem is None) == (cset.dim is not None and cset.dim != d)
    if problem is not None:
        x = problem.project(np.full(d, 3.0))
        assert x.shape == (d,) and cset.contains(x)


def test_online_dca_refuses_complex_samples():
    """The report's case: a sampler returning complex data had its imaginary part dropped
    and the run reported success; now the run fails naming the sampler."""
    COUNTS["problems:online_dca(complex sampler)"] += 1
    problem = P.DCProblem(_stream(complex_data=True), 3, loss="squared",
                          penalty=P.CappedL1(0.01))
    res = jitopt.solvers.online_dca(problem, rule="fixed", n0=20, maxiter=5)
    assert res.status == jitopt.Status.ORACLE_ERROR and not res.success
    assert "sample" in res.message and "complex" in res.message
    assert res.samples == 0 and np.array_equal(res.x, np.zeros(3))


@pytest.mark.parametrize("shared", [False, True])
def test_concurrent_online_dca_runs_count_their_own_samples(shared):
    """Runs in threads on one problem: each result's samples are its own draws (the sum of
    the sizes in its history, its nifo), and together they are the stream's total."""
    import threading

    COUNTS["problems:online_dca(threads)"] += 1
    data = np.random.default_rng(0).standard_normal((200, 3))
    beta = np.array([2.0, -1.5, 1.25])

    def sample(t, size, rng):
        A = data[rng.integers(0, len(data), size)]
        return A, A @ beta

    stream = P.StreamProblem(sample, shared=shared)
    problem = P.DCProblem(stream, 3, loss="squared", penalty=P.CappedL1(0.01))
    results = [None] * 4
    start = threading.Barrier(4)

    def run(i):
        start.wait()
        results[i] = jitopt.solvers.online_dca(problem, rule="schedule", maxiter=8 + 4 * i,
                                               history=True, rng=i)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for res in results:
        h = res.history
        drawn = np.maximum(h["n_g"], h["n_h"]) if shared else h["n_g"] + h["n_h"]
        assert res.samples == drawn.sum() == res.nifo == res.samples_g + res.samples_h
    assert sum(r.samples_g for r in results) == stream.samples_g
