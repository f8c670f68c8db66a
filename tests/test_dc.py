"""Tests of the online adaptive-sampling DCA (jitopt.dc), its problem types and its
built-in problem."""

import math
import re
import subprocess
import sys

import numpy as np
import pytest

import jitopt
from jitopt import OptimizeResult, Status
from jitopt.problems import (MCP, SCAD, CappedL1, DCProblem, L1MinusL2, StreamProblem,
                             online_sparse_robust_regression)
from jitopt.sets import Box, L1Ball, L2Ball, Simplex
from jitopt.solvers import online_dca
from jitopt.dc import ProxSubproblem, adaptive_sizes, half_variance, norm_test_sizes


def fixed_stream(A, b):
    """A stream that returns the same data set at every call (a deterministic problem)."""
    A, b = np.asarray(A, float), np.asarray(b, float)

    def sample(t, size, rng):
        return A[:size], b[:size]

    return StreamProblem(sample)


def random_batch(rng, n, p, loss):
    A = rng.standard_normal((n, p))
    if loss == "hinge":
        b = np.sign(A @ rng.standard_normal(p) + 0.5 * rng.standard_normal(n))
        b[b == 0] = 1.0
    else:
        b = A @ rng.standard_normal(p) + rng.standard_normal(n)
    return A, b


def iterations(res):
    """The history without row 0 (the starting point): row t - 1 is iteration t."""
    return {k: v[1:] for k, v in res.history.items()}


# --------------------------------------------------------------------------------------
# the compiled subproblem solver against cvxpy (Clarabel)
# --------------------------------------------------------------------------------------

SETS = {
    "none": None,
    "box": Box(-0.3, 0.4),
    "box&l1": Box(-1.0, 1.0) & L1Ball(0.8),
    "l2": L2Ball(0.5),
}


@pytest.mark.parametrize("loss", ["lad", "squared", "huber", "hinge"])
@pytest.mark.parametrize("cset", list(SETS))
def test_subproblem_matches_clarabel(loss, cset):
    rng = np.random.default_rng(hash((loss, cset)) % 2**32)
    n, p = 40, 6
    A, b = random_batch(rng, n, p, loss)
    prob = DCProblem(fixed_stream(A, b), p, loss=loss, huber_delta=0.7,
                     penalty=CappedL1(0.3, 2.0), constraint=SETS[cset])
    xt = prob.project(rng.standard_normal(p))
    y, mu = 0.5 * rng.standard_normal(p), 0.7
    numba, cvx = ProxSubproblem(prob, "numba", tol=1e-12), ProxSubproblem(prob, "cvxpy")
    x_nb, gap, val = numba.solve((A, b), xt, y, mu)
    x_cv, _, _ = cvx.solve((A, b), xt, y, mu)
    f_nb = numba.value((A, b), x_nb, xt, y, mu)
    f_cv = numba.value((A, b), prob.project(x_cv), xt, y, mu)
    assert abs(val - f_nb) <= 1e-10 * max(1, abs(f_nb))      # reported value is the value
    assert gap <= 1e-12 * max(1.0, abs(f_nb))                 # certified
    assert f_nb <= f_cv + 1e-6                                 # never worse than Clarabel
    assert abs(f_nb - f_cv) <= 1e-6
    if SETS[cset] is not None:
        assert SETS[cset].contains(x_nb, tol=1e-12)
    # strong convexity: ||x - x*||^2 <= 2 gap / mu
    assert np.linalg.norm(x_nb - x_cv) <= 1e-3


def test_subproblem_simplex_without_l1():
    rng = np.random.default_rng(3)
    A, b = random_batch(rng, 30, 5, "lad")
    prob = DCProblem(fixed_stream(A, b), 5, loss="lad", constraint=Simplex(1.0))
    xt, y = np.full(5, 0.2), rng.standard_normal(5)
    numba = ProxSubproblem(prob, "numba", tol=1e-12)
    x_nb, gap, _ = numba.solve((A, b), xt, y, 2.0)
    x_cv, _, _ = ProxSubproblem(prob, "cvxpy").solve((A, b), xt, y, 2.0)
    assert abs(numba.value((A, b), x_nb, xt, y, 2.0)
               - numba.value((A, b), x_cv, xt, y, 2.0)) <= 1e-6
    # with an l1 term on the simplex the compiled path is refused, not silently wrong
    prob2 = DCProblem(fixed_stream(A, b), 5, loss="lad", penalty=L1MinusL2(0.1),
                      constraint=Simplex(1.0))
    assert not ProxSubproblem(prob2).has_numba_solver
    assert ProxSubproblem(prob2).method == "cvxpy"
    with pytest.raises(ValueError, match="Simplex"):
        ProxSubproblem(prob2, "numba")


# --------------------------------------------------------------------------------------
# closed forms
# --------------------------------------------------------------------------------------

def one_d_problem(a, lam, alpha, concave=None):
    """f(x) = (x - a)^2 / 2 + lam min(1, alpha |x|) as squared loss on the datum (1, a)."""
    stream = fixed_stream(np.ones((1, 1)), np.array([a]))
    if concave is None:
        return DCProblem(stream, 1, loss="squared", penalty=CappedL1(lam, alpha))
    # the l1 part of capped-l1 in g (lam alpha |x|), a user concave part with a chosen kink
    return DCProblem(stream, 1, loss="squared", penalty=L1MinusL2(lam * alpha),
                     concave=concave)


def test_one_d_closed_form_critical_point():
    # O1a: a = 3, lam = 0.5, alpha = 1: the unique critical point is x = 3
    prob = one_d_problem(3.0, 0.5, 1.0)
    res = online_dca(prob, x0=[0.0], rule="fixed", n0=1, maxiter=500, tol=1e-14)
    assert abs(res.x[0] - 3.0) <= 1e-10
    # one step has the closed form x+ = S_{lam alpha/(1+mu)}((a + y + mu x)/(1 + mu))
    res1 = online_dca(prob, x0=[0.5], rule="fixed", n0=1, maxiter=1, mu=2.0)
    z = (3.0 + 0.0 + 2.0 * 0.5) / 3.0
    assert res1.x[0] == pytest.approx(np.sign(z) * max(abs(z) - 0.5 / 3.0, 0.0), abs=1e-12)


@pytest.mark.parametrize("y_kink, limit", [(0.8, 1.0), (1.0, 1.2), (0.0, 0.2)])
def test_one_d_subgradient_selection(y_kink, limit):
    # O1b: a = 1.2, lam = alpha = 1; critical points 0.2, 1 (not a local min) and 1.2.
    # g = (x - a)^2/2 + |x| and h = max(1, |x|), written as the concave part |x| of
    # L1MinusL2(1) plus the user part max(1, |x|) - |x|, whose subgradient makes the total
    # selection y_kink in [0, 1] at the kink |x| = 1.
    def concave(x, batch):
        t = abs(x[0])
        if t > 1:
            s = 0.0
        elif t < 1:
            s = -np.sign(x[0])
        else:
            s = (y_kink - 1.0) * np.sign(x[0])
        return max(1.0, t) - t, np.array([s])

    prob = one_d_problem(1.2, 1.0, 1.0, concave=concave)
    res = online_dca(prob, x0=[1.0], rule="fixed", n0=1, maxiter=200, tol=1e-14)
    assert abs(res.x[0] - limit) <= 1e-10


def test_one_d_brute_force_global():
    # the iterates started right of the kink reach the global minimizer found on a grid
    a, lam = 1.2, 1.0
    grid = np.arange(-1.0, 3.0, 1e-6)
    fvals = 0.5 * (grid - a) ** 2 + lam * np.minimum(1.0, np.abs(grid))
    xg = grid[np.argmin(fvals)]
    prob = one_d_problem(a, lam, 1.0)
    res = online_dca(prob, x0=[0.5], rule="fixed", n0=1, maxiter=200, tol=1e-14)
    assert abs(res.x[0] - xg) <= 1e-5
    assert abs(res.x[0] - 0.2) <= 1e-10


def o2b_problem():
    """O2b: G = (x - xi)^2, xi ~ N(0, 1); H = |x - zeta|, zeta uniform on {-1, 0, 1}.
    Critical set {-1/6, 0, 1/6} (0 is a local max)."""
    def sample(t, size, rng):
        xi = rng.standard_normal(size)
        return np.full((size, 1), math.sqrt(2.0)), math.sqrt(2.0) * xi

    def sample_h(t, size, rng):
        return rng.integers(-1, 2, size).astype(float)

    def concave(x, zeta):
        r = x[0] - zeta[0]
        return np.mean(np.abs(r)), np.array([np.mean(np.sign(r))])

    return DCProblem(StreamProblem(sample, sample_h), 1, loss="squared", concave=concave)


@pytest.mark.parametrize("rule", ["adaptive", "norm_test"])
def test_stochastic_concave_part_two_sample_sizes(rule):
    # the iterates end near the critical set of O2b with both sizes adapted
    prob = o2b_problem()
    res = online_dca(prob, x0=[3.0], rule=rule, max_samples=400000, maxiter=10**5,
                     schedule_h=2.1, rng=1, history=True)
    crit = np.array([-1 / 6, 0.0, 1 / 6])
    assert np.min(np.abs(res.x[0] - crit)) <= 0.02
    h = iterations(res)
    t = h["iteration"]
    assert np.all(h["n_h"][1:] >= 1) and np.all(h["n_h"][1:] <= np.ceil(t[1:] ** 2.1))
    below = np.flatnonzero(h["n_g"][1:] < np.ceil(t[1:] ** 2.1)) + 1
    assert below.size > 0
    if rule == "adaptive":
        # where the sizes are below the caps, condition 1 of the adaptive rule holds:
        # C_g / (mu N_g^0.49) + C_h / (mu N_h^0.95) <= (mu / 2) ||d_{t-1}||^2 (mu = 1)
        for i in below:
            need = h["n_g"][i] ** -0.49 + h["n_h"][i] ** -0.95
            assert need <= 0.5 * h["step"][i - 1] ** 2
    else:
        assert np.all(h["n_g"] >= 2) and np.all(h["n_h"] >= 2)
    assert res.samples == res.samples_g + res.samples_h == h["samples"][-1]
    assert res.samples_h == h["n_h"].sum()


def test_adaptive_sizes_min_total():
    # the split solves min N_g + N_h s.t. A N_g^-a + B N_h^-b <= R: compare with a grid
    A, B, a, b, R = 1.0, 0.5, 0.45, 0.9, 0.05
    ng, nh = adaptive_sizes(R, A, B, a, b, True)
    assert A * ng ** -a + B * nh ** -b <= R
    grid_g = np.arange(1, 200000, 7)
    slack = R - A * grid_g ** -a
    ok = slack > 0
    grid_g = grid_g[ok]
    need_h = np.ceil((B / slack[ok]) ** (1 / b))
    best = np.min(grid_g + need_h)
    assert ng + nh <= best * (1 + 1e-3) + 2
    # deterministic h: the official code's formula
    ng, nh = adaptive_sizes(R, A, 0.0, a, b, False)
    assert nh == 0 and ng == math.ceil((A / R) ** (1 / a))


def test_norm_test_sizes_min_total():
    # closed form of min N_g + N_h s.t. V_g / N_g + V_h / N_h <= R against a grid
    V_g, V_h, R = 3.0, 0.7, 0.01
    ng, nh = norm_test_sizes(R, V_g, V_h, True)
    assert V_g / ng + V_h / nh <= R
    grid_g = np.arange(301, 20000)
    need_h = np.ceil(V_h / (R - V_g / grid_g))
    assert ng + nh <= np.min(grid_g + need_h) + 2   # optimal up to the two roundings
    ng, nh = norm_test_sizes(R, V_g, 0.0, False)
    assert nh == 0 and ng == math.ceil(V_g / R)


@pytest.mark.parametrize("loss", ["lad", "squared", "huber", "hinge"])
def test_loss_variance_matches_numpy(loss):
    rng = np.random.default_rng(5)
    A, b = random_batch(rng, 50, 4, loss)
    prob = DCProblem(fixed_stream(A, b), 4, loss=loss, huber_delta=0.7,
                     penalty=CappedL1(0.3, 2.0))
    x = rng.standard_normal(4)
    r = A @ x - b
    deriv = {"lad": np.sign(r), "squared": r, "huber": np.clip(r, -0.7, 0.7),
             "hinge": np.where(b * (A @ x) < 1, -b, 0.0)}[loss]
    S = deriv[:, None] * A
    ref = np.sum((S - S.mean(0)) ** 2) / (len(b) - 1)
    assert prob.loss_variance((A, b), x) == pytest.approx(ref, rel=1e-12)
    with pytest.raises(ValueError, match="at least 2"):
        prob.loss_variance((A[:1], b[:1]), x)


def test_half_variance_of_concave_part():
    # H = |x - zeta|, zeta uniform on {-1, 0, 1}: at x = 0.5 the per-sample subgradient is
    # +1, +1, -1 with probability 1/3 each, variance 1 - 1/9 = 8/9
    # with 8/9; one split is a chi-square draw with one degree of freedom here, so average
    # over many batches (odd size: unequal halves): the estimate is unbiased
    prob = o2b_problem()
    zeta = np.random.default_rng(0).integers(-1, 2, (4000, 21)).astype(float)
    est = [half_variance(prob, np.array([0.5]), (z,)) for z in zeta]
    assert np.mean(est) == pytest.approx(8 / 9, rel=0.08)  # standard error 2.2 %


def test_norm_test_rule_sizes():
    # the sizes of iteration t + 1 are the clipped closed form of the norm test, recomputed
    # here from the iterates and the (reproducible) batches; squared loss, so that the
    # per-sample subgradients are unique (an LAD solution interpolates data points, where
    # the selection at the kink depends on rounding)
    p, theta, floor = 6, 0.8, 0.05
    beta = np.arange(1.0, p + 1)

    def batch(t, size):
        r = np.random.default_rng(1000 + t)
        A = r.uniform(-1, 1, (size, p))
        return A, A @ beta + r.standard_normal(size)

    prob = DCProblem(StreamProblem(lambda t, size, rng: batch(t, size)), p, loss="squared",
                     penalty=CappedL1(0.01))
    xs = [np.zeros(p)]
    res = online_dca(prob, rule="norm_test", theta=theta, floor=floor, maxiter=40,
                     history=True, callback=lambda x: xs.append(x.copy()))
    h = iterations(res)
    for t in range(1, 40):
        A, b = batch(t, int(h["n_g"][t - 1]))
        S = (A @ xs[t] - b)[:, None] * A
        V = np.sum((S - S.mean(0)) ** 2) / (len(b) - 1)
        want = math.ceil(V / (theta * h["step"][t - 1]) ** 2)
        lo, hi = max(2, math.ceil(floor * (t + 1) ** 2.1)), math.ceil((t + 1) ** 2.1)
        assert h["n_g"][t] == min(max(want, lo), hi)
    assert np.any((h["n_g"][1:] > 2) & (h["n_g"][1:] < np.ceil(h["iteration"][1:] ** 2.1)))


# --------------------------------------------------------------------------------------
# the paper's problem
# --------------------------------------------------------------------------------------

def samples_to(prob, rule, seed, tol, budget=150000):
    reached = []

    def cb(x):
        if np.linalg.norm(x - prob.xopt) <= tol:
            reached.append(True)
            raise StopIteration

    start = prob.stream.samples_g
    res = online_dca(prob, rule=rule, max_samples=budget, maxiter=10**6, rng=seed,
                     callback=cb)
    assert res.samples == prob.stream.samples_g - start
    return res, (res.samples if reached else None)


def test_paper_regression_reaches_limit_optimum_with_fewer_samples():
    prob = online_sparse_robust_regression()
    assert prob.fopt == pytest.approx(0.817885, abs=1e-6)
    assert prob.limit_fun(prob.xopt) == pytest.approx(prob.fopt, abs=5e-3)
    for seed in (0, 1, 2):
        for tol in (0.1, 0.05):
            res_a, n_a = samples_to(prob, "adaptive", seed, tol)
            res_s, n_s = samples_to(prob, "schedule", seed, tol)
            assert n_a is not None and n_s is not None
            assert res_a.status == Status.CALLBACK
            assert np.linalg.norm(res_a.x - prob.xopt) <= tol
            assert n_a < n_s


def test_norm_test_reaches_005_with_fewer_samples_than_schedule():
    prob = online_sparse_robust_regression()
    for seed in (0, 1, 2):
        res_n, n_n = samples_to(prob, "norm_test", seed, 0.05)
        res_s, n_s = samples_to(prob, "schedule", seed, 0.05)
        assert n_n is not None and n_s is not None
        assert np.linalg.norm(res_n.x - prob.xopt) <= 0.05
        assert n_n < n_s


def test_counters_history_and_reproducibility():
    prob = online_sparse_robust_regression(p=10)
    r1 = online_dca(prob, rule="adaptive", maxiter=60, rng=7, history=True)
    r2 = online_dca(prob, rule="adaptive", maxiter=60, rng=7, history=True)
    assert isinstance(r1, OptimizeResult)
    assert np.array_equal(r1.x, r2.x)
    assert np.array_equal(r1.history["stationarity"], r2.history["stationarity"],
                          equal_nan=True)
    h = iterations(r1)
    assert r1.nit == 60 == len(h["iteration"])
    assert r1.samples == h["n_g"].sum() == h["samples"][-1] == r1.nifo
    assert np.array_equal(np.cumsum(h["n_g"]), h["samples"])
    assert prob.stream.samples_g == 2 * r1.samples
    assert np.allclose(h["stationarity"], 1.0 * h["step"])
    assert r1.stationarity == h["stationarity"][-1] and "criticality" in r1.stationarity_measure
    # invariants: 1 <= N_t <= cap(t) = ceil(t^2.1) for t >= 2, N_1 = n0
    t = h["iteration"]
    assert h["n_g"][0] == 10
    assert np.all(h["n_g"][1:] >= 1)
    assert np.all(h["n_g"][1:] <= np.ceil(t[1:] ** 2.1))
    # ||d|| <= 2 (L_g + L_h) / mu with L_g = sqrt(p)(1 + lam alpha), L_h = lam alpha sqrt(p)
    p, lam = 10, 0.01
    assert np.all(h["step"] <= 2 * (math.sqrt(p) * (1 + lam) + lam * math.sqrt(p)) + 1e-9)
    assert np.all(h["gap"] <= 1e-10 * np.maximum(1, np.abs(h["fun"]) + 10))
    r3 = online_dca(prob, rule="adaptive", maxiter=60, rng=8)
    assert not np.array_equal(r1.x, r3.x)


def test_schedule_and_fixed_sizes():
    prob = online_sparse_robust_regression(p=5)
    h = iterations(online_dca(prob, rule="schedule", maxiter=12, rng=0, history=True))
    assert np.array_equal(h["n_g"], np.ceil(np.arange(1, 13) ** 2.1).astype(int))
    h = iterations(online_dca(prob, rule="fixed", n0=33, maxiter=5, rng=0, history=True))
    assert np.all(h["n_g"] == 33)


def test_deterministic_descent():
    # O4: full batch, no noise: f(x_t) - f(x_{t+1}) >= mu ||d||^2 (Lemma 4.2)
    rng = np.random.default_rng(0)
    A, b = random_batch(rng, 80, 8, "lad")
    pen = MCP(0.3, 2.0)
    prob = DCProblem(fixed_stream(A, b), 8, loss="lad", penalty=pen)

    def f(x):
        return np.mean(np.abs(A @ x - b)) + pen.value(x)

    xs = [np.zeros(8)]
    res = online_dca(prob, rule="fixed", n0=80, maxiter=40, mu=0.5, history=True,
                     callback=lambda x: xs.append(x))
    fv = np.array([f(x) for x in xs])
    steps = np.array([np.linalg.norm(x1 - x0) for x0, x1 in zip(xs, xs[1:])])
    h = iterations(res)
    assert np.allclose(steps, h["step"], rtol=0, atol=1e-15)
    # exact up to the certified suboptimality of each subproblem (its duality gap)
    assert np.all(fv[:-1] - fv[1:] >= 0.5 * steps ** 2 - h["gap"] - 1e-12)
    assert fv[-1] <= fv[0] - 1.0  # and it went somewhere


def test_smooth_h_agrees_with_deterministic_dca_on_big_saa():
    # squared loss + lam (||x||_1 - ||x||_2); h smooth away from 0. The online method with
    # fresh samples must end near the critical point of a deterministic prox-DCA (written
    # here independently, coordinate descent on each subproblem) on a large SAA.
    p, lam = 5, 0.3
    beta = np.array([1.5, -1.0, 0.0, 0.0, 0.5])

    def sample(t, size, rng):
        X = rng.standard_normal((size, p))
        return X, X @ beta + 0.5 * rng.standard_normal(size)

    prob = DCProblem(StreamProblem(sample), p, loss="squared", penalty=L1MinusL2(lam))
    res = online_dca(prob, x0=np.ones(p), rule="schedule", max_samples=300000,
                     maxiter=10**5, rng=2)
    X, y = sample(0, 200000, np.random.default_rng(99))
    Q, c = X.T @ X / len(y), X.T @ y / len(y)
    x = np.ones(p)
    for _ in range(300):  # prox-DCA outer loop, mu = 1
        yk = lam * x / np.linalg.norm(x)
        z = x.copy()
        for _ in range(200):  # coordinate descent on the strongly convex subproblem
            for j in range(p):
                r = c[j] + yk[j] + x[j] - (Q[j] @ z - Q[j, j] * z[j])
                z[j] = np.sign(r) * max(abs(r) - lam, 0.0) / (Q[j, j] + 1.0)
        x = z
    assert np.linalg.norm(res.x - x) <= 0.03
    # and the deterministic point is critical: grad g-part matches grad h on the support
    g = Q @ x - c
    supp = x != 0
    assert np.allclose(g[supp] + lam * np.sign(x[supp]) - lam * x[supp] / np.linalg.norm(x),
                       0.0, atol=1e-8)


def test_cvxpy_user_convex_path_matches_numba():
    import cvxpy as cp

    prob_nb = online_sparse_robust_regression(p=6, beta_star=(2.0, -3.0), bound=10.0)
    user = DCProblem(prob_nb.stream, 6, loss=None, penalty=prob_nb.penalty,
                     constraint=prob_nb.constraint,
                     convex=lambda x, A, b: cp.sum(cp.abs(A @ x - b)) / A.shape[0])
    r_nb = online_dca(prob_nb, rule="fixed", n0=50, maxiter=4, rng=3)
    r_cv = online_dca(user, rule="fixed", n0=50, maxiter=4, rng=3)
    assert np.linalg.norm(r_nb.x - r_cv.x) <= 1e-5
    sub = ProxSubproblem(user)
    assert sub.method == "cvxpy"
    rng = np.random.default_rng(0)
    x, y = np.zeros(6), np.zeros(6)
    for t in range(1, 5):
        batch = user.draw_batches(t, 50, 0, rng)[0]
        x_new, _, val = sub.solve(batch, x, y, 1.0)
        assert val == pytest.approx(sub.value(batch, x_new, x, y, 1.0), abs=1e-6)
        assert val < sub.value(batch, x, x, y, 1.0)  # a descent step on the subproblem
        x = x_new
    assert sub.n_models == 1  # built once (one batch shape)
    with pytest.raises(ValueError, match="numba"):
        online_dca(user, solver="numba")
    with pytest.raises(ValueError, match="built-in loss"):
        online_dca(user, rule="norm_test")


# --------------------------------------------------------------------------------------
# penalties
# --------------------------------------------------------------------------------------

def scad_ref(t, lam, a):
    t = abs(t)
    if t <= lam:
        return lam * t
    if t <= a * lam:
        return (2 * a * lam * t - t * t - lam * lam) / (2 * (a - 1))
    return (a + 1) * lam * lam / 2


def mcp_ref(t, lam, g):
    t = abs(t)
    return lam * t - t * t / (2 * g) if t <= g * lam else g * lam * lam / 2


@pytest.mark.parametrize("pen, ref", [
    (CappedL1(0.7, 2.0), lambda t: 0.7 * min(1.0, 2.0 * abs(t))),
    (SCAD(0.5, 3.7), lambda t: scad_ref(t, 0.5, 3.7)),
    (MCP(0.5, 2.5), lambda t: mcp_ref(t, 0.5, 2.5)),
])
def test_penalty_dc_splits(pen, ref):
    rng = np.random.default_rng(0)
    x = 3 * rng.standard_normal(200)
    assert pen.value(x) == pytest.approx(sum(ref(t) for t in x), rel=1e-12)
    # h is convex and h_subgradient is a subgradient: h(z) >= h(x) + <s, z - x>
    for _ in range(50):
        u, v = 3 * rng.standard_normal(4), 3 * rng.standard_normal(4)
        assert pen.h_value(v) >= pen.h_value(u) + pen.h_subgradient(u) @ (v - u) - 1e-12


def test_l1_minus_l2_split():
    pen = L1MinusL2(0.4)
    x = np.array([3.0, -4.0, 0.0])
    assert pen.value(x) == pytest.approx(0.4 * (7 - 5))
    assert np.allclose(pen.h_subgradient(x), 0.4 * x / 5)
    assert np.array_equal(pen.h_subgradient(np.zeros(3)), np.zeros(3))


# --------------------------------------------------------------------------------------
# bad input
# --------------------------------------------------------------------------------------

def test_bad_input():
    prob = online_sparse_robust_regression(p=4, beta_star=(2.0,))
    with pytest.raises(ValueError, match="mu"):
        online_dca(prob, mu=0.0)
    with pytest.raises(ValueError, match="mu"):
        online_dca(prob, mu=-1.0)
    with pytest.raises(ValueError, match="rule"):
        online_dca(prob, rule="nope")
    with pytest.raises(ValueError, match="x0"):
        online_dca(prob, x0=np.zeros(3))
    with pytest.raises(ValueError, match="alpha_g"):
        online_dca(prob, alpha_g=0.5)
    with pytest.warns(UserWarning, match="summable"):
        online_dca(prob, alpha_g=0.45, maxiter=2)  # ceil(t^2.1)^-0.45 is not summable
    with pytest.raises(ValueError, match="n0"):
        online_dca(prob, rule="norm_test", n0=1)
    with pytest.raises(ValueError, match="theta"):
        online_dca(prob, rule="norm_test", theta=0.0)
    with pytest.raises(ValueError, match="floor"):
        online_dca(prob, rule="norm_test", floor=2.0)
    with pytest.raises(TypeError, match="problem"):
        online_dca("not a problem")
    with pytest.raises(ValueError, match="empty"):
        Box(1.0, 0.0)
    with pytest.raises(TypeError, match="constraint"):
        DCProblem(prob.stream, 4, constraint=(0, 1))
    with pytest.raises(ValueError, match="loss"):
        DCProblem(prob.stream, 4, loss="l7")

    def wrong_rows(t, size, rng):
        return np.zeros((size + 1, 4)), np.zeros(size + 1)

    # a malformed batch is a fault of the sampler after the start: a failed result
    res = online_dca(DCProblem(StreamProblem(wrong_rows), 4), maxiter=2)
    assert res.status == Status.ORACLE_ERROR and "rows" in res.message
    assert "iteration 1" in res.message and np.array_equal(res.x, np.zeros(4))

    def wrong_dim(t, size, rng):
        return np.zeros((size, 3)), np.zeros(size)

    res = online_dca(DCProblem(StreamProblem(wrong_dim), 4), maxiter=2)
    assert res.status == Status.ORACLE_ERROR
    assert re.search(r"shape \(size, 4\)", res.message)

    def nan_after_3(t, size, rng):
        A = rng.standard_normal((size, 4))
        b = np.full(size, np.nan) if t >= 3 else A.sum(1) + rng.standard_normal(size)
        return A, b

    x0 = np.ones(4)
    res = online_dca(DCProblem(StreamProblem(nan_after_3), 4), x0=x0, maxiter=10, rng=0)
    assert not res.success and res.status == Status.NONFINITE
    assert "non-finite" in res.message and res.nit == 2
    assert np.isfinite(res.x).all()
    assert np.array_equal(x0, np.ones(4))  # user array untouched

    def bad_concave(x, batch):
        return 0.0, np.full(4, np.nan)

    bad = DCProblem(prob.stream, 4, concave=bad_concave)
    res = online_dca(bad, maxiter=5, rng=0)
    assert res.status == Status.NONFINITE and "subgradient" in res.message
    with pytest.raises(TypeError, match="max_iter"):
        online_dca(prob, max_iter=5)  # the common names only: maxiter, tol
    with pytest.raises(TypeError, match="tol_step"):
        online_dca(prob, tol_step=1e-3)
    with pytest.raises(ValueError, match="max_time"):
        online_dca(prob, max_time=-1.0)
    with pytest.raises(ValueError, match="max_samples"):
        online_dca(prob, max_samples=0)


def test_shared_stream_counts_max_of_sizes():
    # one stream for both parts (Remark 2): each iteration draws max(N_g, N_h) samples
    def sample(t, size, rng):
        xi = rng.standard_normal(size)
        return np.full((size, 1), math.sqrt(2.0)), math.sqrt(2.0) * xi

    def concave(x, batch):
        zeta = batch[1] / math.sqrt(2.0)  # reuse the samples of g as those of h
        r = x[0] - zeta
        return np.mean(np.abs(r)), np.array([np.mean(np.sign(r))])

    stream = StreamProblem(sample, shared=True)
    prob = DCProblem(stream, 1, loss="squared", concave=concave)
    res = online_dca(prob, x0=[2.0], rule="schedule", maxiter=15, rng=0, history=True)
    h = iterations(res)
    assert np.array_equal(h["n_h"], np.ceil(np.arange(1, 16) ** 1.1).astype(int))
    assert res.samples_g == np.maximum(h["n_g"], h["n_h"]).sum() == stream.samples_g
    assert res.samples_h == 0 and res.samples == res.samples_g
    with pytest.raises(ValueError, match="shared"):
        StreamProblem(sample, sample, shared=True)


# --------------------------------------------------------------------------------------
# the solver contract: statuses, faults as results, the front door
# --------------------------------------------------------------------------------------

def test_statuses_and_messages():
    prob = one_d_problem(3.0, 0.5, 1.0)
    res = online_dca(prob, x0=[0.0], rule="fixed", n0=1, tol=1e-12)
    assert res.status == Status.CONVERGED and res.success
    assert "step norm" in res.message and "tol = 1e-12" in res.message
    assert abs(res.x[0] - 3.0) <= 1e-10 and res.stationarity <= 1e-12
    res = online_dca(prob, x0=[0.0], rule="fixed", n0=1, maxiter=3)
    assert res.status == Status.MAXITER and res.nit == 3 and "maxiter = 3" in res.message
    four = DCProblem(fixed_stream(np.ones((4, 1)), np.full(4, 3.0)), 1, loss="squared",
                     penalty=CappedL1(0.5))
    res = online_dca(four, x0=[0.0], rule="fixed", n0=4, max_samples=10)
    assert res.status == Status.MAX_SAMPLES and not res.success
    assert res.nit == 3 and res.samples == 12 and "max_samples = 10" in res.message
    res = online_dca(prob, x0=[0.5], max_time=0.0)
    assert res.status == Status.MAXTIME and res.nit == 0 and res.samples == 0
    assert np.array_equal(res.x, [0.5])


def test_history_rows_and_counts():
    prob = online_sparse_robust_regression(p=5)
    res = online_dca(prob, rule="schedule", maxiter=6, rng=0, history=True)
    h = res.history
    assert len(h["iteration"]) == res.nit + 1 == 7
    assert h["n_g"][0] == 0 and h["samples"][0] == 0 and np.isnan(h["fun"][0])
    assert h["nifo"][-1] == res.nifo == res.samples == h["samples"][-1]
    assert h["nfev"][-1] == res.nfev == 6  # one subproblem per iteration
    assert h["njev"][-1] == res.njev == 12  # y_t at x_t, and h at x_{t+1} for fun
    assert np.all(np.diff(h["time"]) >= 0)


def nan_or_raise_at(k, kind):
    data = np.random.default_rng(0).standard_normal((1000, 3))

    def sample(t, size, rng):
        if t == k:
            if kind == "raise":
                raise ZeroDivisionError("no data today")
            return np.full((size, 3), np.nan), np.zeros(size)
        A = data[rng.integers(0, 1000, size)]
        return A, A @ np.array([2.0, -1.0, 0.5])

    return DCProblem(StreamProblem(sample), 3, loss="squared", penalty=CappedL1(0.01))


@pytest.mark.parametrize("kind, status", [("raise", Status.ORACLE_ERROR),
                                          ("nan", Status.NONFINITE)])
def test_sampler_fault_at_iteration_k_is_a_result(kind, status):
    xs = []
    res = online_dca(nan_or_raise_at(4, kind), rule="fixed", n0=20, maxiter=10, rng=0,
                     callback=lambda x: xs.append(x))
    assert not res.success and res.status == status
    assert "at iteration 4" in res.message and res.nit == 3
    if kind == "raise":
        assert "ZeroDivisionError" in res.message and "no data today" in res.message
    # the best iterate so far (the sample estimates of fun decrease here: the last one)
    assert np.array_equal(res.x, xs[-1]) and len(xs) == 3


def test_concave_part_that_raises_is_an_oracle_error():
    def concave(x, batch):
        if x[0] > 2.0:
            raise KeyError("boom")
        return 0.0, np.zeros(1)

    prob = DCProblem(fixed_stream(np.ones((1, 1)), np.array([3.0])), 1, loss="squared",
                     concave=concave)
    res = online_dca(prob, x0=[0.0], rule="fixed", n0=1, maxiter=20)
    # x_1 = 1.5, x_2 = 2.25: the concave part raises at x_2, in iteration 2
    assert res.status == Status.ORACLE_ERROR and "concave" in res.message
    assert "at iteration 2" in res.message and "KeyError" in res.message
    assert res.nit == 1 and res.x[0] == 1.5


def test_inner_solver_failure_is_a_result():
    import cvxpy as cp

    prob = online_sparse_robust_regression(p=3, beta_star=(2.0,), bound=10.0)
    # sqrt of a convex expression is not DCP: cvxpy fails inside the subproblem solve
    user = DCProblem(prob.stream, 3, loss=None, penalty=prob.penalty,
                     convex=lambda x, A, b: cp.sqrt(cp.sum_squares(A @ x - b)))
    res = online_dca(user, rule="fixed", n0=5, maxiter=3, rng=0)
    assert res.status == Status.INNER_FAILURE and not res.success
    assert "inner solver failed at iteration 1" in res.message
    assert np.array_equal(res.x, np.zeros(3))


def test_minimize_dispatches_to_online_dca():
    prob = online_sparse_robust_regression(p=5)
    assert "online_dca" in jitopt.available_methods(prob)
    direct = online_dca(prob, rule="adaptive", maxiter=20, rng=4)
    front = jitopt.minimize(prob, method="online_dca", tol=1e-10,
                            options={"rule": "adaptive", "maxiter": 20, "rng": 4})
    assert np.array_equal(direct.x, front.x) and direct.samples == front.samples
    assert direct.status == front.status == Status.MAXITER
    with pytest.raises(TypeError, match="online_dca"):
        jitopt.minimize(prob, method="rgd")


def test_cvxpy_is_loaded_only_by_the_cvxpy_path():
    code = ("import sys, jitopt, jitopt.dc as dc; "
            "p = jitopt.problems.online_sparse_robust_regression(p=3, beta_star=(2.0,)); "
            "dc.online_dca(p, maxiter=2, rng=0); print('cvxpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"
