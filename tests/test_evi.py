"""Tests of the EVI solver and its certificate (jitopt.solvers.evi, jitopt.solvers.evi_gap)."""

import numpy as np
import pytest

import jitopt
from jitopt import Status
from jitopt.problems import AffineOperator, VIProblem
from jitopt.sets import Box, L2Ball, Polytope, ProductOfSimplices, Simplex
from jitopt.solvers import ColumnGeneration, EVIDomain, evi, evi_gap

DOMAINS = [
    ("simplex", lambda d: Simplex(), 5),
    ("simplex-r2", lambda d: Simplex(2.0), 4),
    ("unit box", lambda d: Box(0.0, 1.0), 4),
    ("box", lambda d: Box(np.arange(d) - 1.0, np.arange(d) + 0.5), 4),
    ("product", lambda d: ProductOfSimplices([2, 3, 2]), 7),
]


def _random_points(problem, k, rng):
    dom = EVIDomain(problem.domain, problem.dim)
    return dom.to_x(np.array([dom.random_point(rng) for _ in range(k)]))


def _nonmonotone(d, rng):
    A = rng.standard_normal((d, d))
    return AffineOperator(A, rng.standard_normal(d))


@pytest.mark.parametrize("name,make,d", DOMAINS, ids=[x[0] for x in DOMAINS])
def test_closed_form_gap_equals_lp_gap(name, make, d):
    rng = np.random.default_rng(1)
    problem = VIProblem(_nonmonotone(d, rng), make(d), dim=d)
    for k in (1, 3, 8):
        pts = _random_points(problem, k, rng)
        w = rng.random(k)
        closed = evi_gap(problem, pts, w)
        lp = evi_gap(problem, pts, w, method="lp")
        assert abs(closed.gap - lp.gap) <= 1e-9 * max(1.0, abs(lp.gap))
        assert abs(closed.gap_con - lp.gap_con) <= 1e-9 * max(1.0, abs(lp.gap_con))
        assert closed.gap >= closed.gap_con - 1e-12  # constant maps are affine maps
        assert closed.gap >= -1e-12  # the identity is a deviation


def test_sign_operator_gaps_and_solver():
    """Example C.2: F = sgn on [-1, 1]; mu = (delta_{-e} + delta_{e})/2 has Gap_CON = e and
    Gap_LIN = 2e; the solver handles the discontinuity."""
    problem = VIProblem(lambda x: np.where(x >= 0, 1.0, -1.0), Box(-1.0, 1.0), dim=1)
    for eps in (0.3, 0.01):
        g = evi_gap(problem, [[-eps], [eps]])
        assert g.gap_con == pytest.approx(eps, abs=1e-12)
        assert g.gap == pytest.approx(2 * eps, abs=1e-12)
    ref = evi(problem, tol=1e-3, method="eah", maxiter=2000)
    assert ref.success and ref.gap_con <= ref.gap <= 1e-3
    # the regret loop converges at its O(1/sqrt(T)) rate on this discontinuous operator
    res = evi(problem, tol=1e-2, rng=0)
    assert res.success and res.gap_con <= res.gap <= 1e-2
    assert evi_gap(problem, res.points, res.weights).gap == pytest.approx(res.gap, abs=1e-12)


def test_example_c3_margin():
    """Example C.3: F = sgn but F(1/2) = -1; mu = (delta_{x*} + delta_{1/2})/2 is an exact EVI
    solution with margin (1/2 - x*)/2, i.e. Gap_CON = -(1/2 - x*)/2."""
    problem = VIProblem(lambda x: np.where((x >= 0) & (x != 0.5), 1.0, -1.0), Box(-1.0, 1.0),
                        dim=1)
    for xs in (0.0, 0.2, 0.45):
        g = evi_gap(problem, [[xs], [0.5]])
        assert g.gap_con == pytest.approx(-0.5 * (0.5 - xs), abs=1e-12)


@pytest.mark.parametrize("dom,d", [(Simplex(), 6), (Box(0.0, 1.0), 5), (Simplex(), 12)])
def test_solver_certified_gap_on_nonmonotone_affine_vi(dom, d):
    rng = np.random.default_rng(d)
    op = _nonmonotone(d, rng)
    sym = (op.A + op.A.T) / 2
    eig = np.linalg.eigvalsh(sym)
    assert eig[0] < 0 < eig[-1]  # indefinite: not monotone
    problem = VIProblem(op, dom, dim=d)
    res = evi(problem, tol=1e-3, rng=3)
    assert res.success and res.status == Status.CONVERGED
    check = evi_gap(problem, res.points, res.weights, method="lp")  # independent certificate
    assert check.gap <= 1e-3 + 1e-9
    assert check.gap == pytest.approx(res.gap, abs=1e-9)
    assert res.fp_residual <= 1e-8
    for x in res.points:
        assert problem.domain.contains(x, 1e-12)


def test_python_and_compiled_operators_agree_and_calls_are_counted():
    rng = np.random.default_rng(5)
    op = _nonmonotone(4, rng)
    calls = []

    def F(x):
        calls.append(1)
        return op.A @ x + op.b

    # a fixed number of rounds (tol below reach): the counts do not depend on rounding
    fast = evi(VIProblem(op, Box(0.0, 1.0), dim=4), tol=1e-12, rng=2, maxiter=1000)
    slow_problem = VIProblem(F, Box(0.0, 1.0), dim=4)
    slow = evi(slow_problem, tol=1e-12, rng=2, maxiter=1000)
    assert slow.nfev == len(calls) == slow.nit == slow_problem.counts.nfev == 1000
    assert fast.nfev == fast.nit == 1000
    np.testing.assert_allclose(slow.points, fast.points, atol=1e-10)
    assert slow.gap == pytest.approx(fast.gap, abs=1e-12)


def test_fixed_point_of_an_empty_system_is_exact():
    # an EVI over a 0-dimensional box solves a system of size 0: LAPACK wants leading
    # dimensions of at least 1 even then (else it prints that an argument is illegal, and
    # the solve counted as singular, with an infinite residual)
    from jitopt.evi import _kernels

    for fixed_point in (_kernels.fixed_point, _kernels.INTERPRETED["fixed_point"]):
        for kind in (_kernels.KIND_BOX, _kernels.KIND_PRODUCT):
            y = np.empty(0)
            assert fixed_point(np.empty((0, 0)), y, y, _kernels.DELTA, np.zeros(2, np.int64),
                               kind, False, np.empty((0, 0)), np.empty(5, np.int32), y) == 0.0


def test_uncompiled_rounds_equal_compiled_bitwise(monkeypatch):
    # small problems run the rounds' kernels uncompiled, a piece of rounds at a time, until
    # they are compiled: the same operations, so the same rounds, mixtures and gaps, bit for
    # bit (a box and a simplex with an affine operator, rock-paper-scissors' CE with the
    # normal-form operator, each past one piece of rounds)
    from jitopt.evi import _ggm, _kernels
    from jitopt.games import NormalFormGame
    from jitopt.problems import _vi

    rng = np.random.default_rng(8)
    A = np.array([[0.0, -1.0, 1.0], [1.0, 0.0, -1.0], [-1.0, 1.0, 0.0]])
    solves = [lambda op=_nonmonotone(4, rng), dom=dom: evi(VIProblem(op, dom, dim=4), tol=1e-12,
                                                            rng=3, maxiter=3 * _ggm._PIECE)
              for dom in (Box(0.0, 1.0), Simplex())]
    solves.append(lambda: NormalFormGame([A, -A]).correlated_equilibrium(tol=1e-4, rng=0))
    runs = []
    for uncompiled in (False, True):
        def choose(kernel, work, u=uncompiled):
            return _kernels.INTERPRETED[kernel.__name__] if u else kernel
        monkeypatch.setattr(_kernels, "kernel", choose)
        monkeypatch.setattr(_vi, "kernel_for", lambda kernel, ns, small, u=uncompiled:
                            ns[kernel.__name__] if u else kernel)
        out = []
        for solve in solves:
            res = solve()
            out += [res.x, res.points, res.weights, res.gap, res.nit]
        runs.append(out)
    assert runs[0][-1] > _ggm._PIECE
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a, b)


def test_same_seed_same_result_and_x0():
    rng = np.random.default_rng(7)
    problem = VIProblem(_nonmonotone(5, rng), Simplex(), dim=5)
    a = evi(problem, tol=1e-3, rng=11)
    b = evi(problem, tol=1e-3, rng=11)
    c = evi(problem, tol=1e-3, rng=12)
    np.testing.assert_array_equal(a.points, b.points)
    assert a.gap == b.gap and a.nit == b.nit
    assert not np.array_equal(a.points[0], c.points[0])
    x0 = np.array([0.1, 0.2, 0.3, 0.4, 0.0])
    keep = x0.copy()
    d = evi(problem, x0, tol=1e-3, weighting="uniform")
    np.testing.assert_allclose(d.points[0], x0, atol=1e-15)
    np.testing.assert_array_equal(x0, keep)


def test_rate_improves_with_rounds():
    rng = np.random.default_rng(2)
    problem = VIProblem(_nonmonotone(4, rng), Simplex(), dim=4)
    g = [evi(problem, tol=1e-12, maxiter=T, rng=0, weighting="uniform").gap for T in (250, 1000, 4000)]
    assert g[1] <= 0.6 * g[0] and g[2] <= 0.6 * g[1]


def test_reweighting_lowers_gap_and_matches_recomputation():
    rng = np.random.default_rng(4)
    problem = VIProblem(_nonmonotone(5, rng), Box(0.0, 1.0), dim=5)
    plain = evi(problem, tol=1e-9, maxiter=200, rng=1)
    rw = evi(problem, tol=1e-9, maxiter=200, rng=1, reweight=True)
    assert rw.gap <= plain.gap
    assert evi_gap(problem, rw.points, rw.weights, method="lp").gap == pytest.approx(rw.gap, abs=1e-6)


@pytest.mark.parametrize("dom,d", [(Simplex(), 3), (Box(0.0, 1.0), 2), (ProductOfSimplices([2, 2]), 4)])
def test_ellipsoid_against_hope_reference(dom, d):
    rng = np.random.default_rng(d)
    problem = VIProblem(_nonmonotone(d, rng), dom, dim=d)
    ref = evi(problem, tol=1e-3, method="eah", maxiter=5000)
    assert ref.success
    assert evi_gap(problem, ref.points, ref.weights, method="lp").gap <= 1e-3 + 1e-7
    fast = evi(problem, tol=1e-3, reweight=True, rng=0)
    assert fast.gap <= 1e-3


def test_coupled_constraints_polytope():
    """Two players with a shared budget x1 + x2 <= 1 on [0, 1]^2 (a pseudo-game)."""
    A = [[1, 1], [-1, 0], [0, -1], [1, 0], [0, 1]]
    b = [1, 0, 0, 1, 1]
    # u1 = x1 (1 - x1 - x2) ... a Cournot-like pair; F = -(du1/dx1, du2/dx2)
    problem = VIProblem(lambda x: -np.array([1 - 2 * x[0] - x[1], 0.8 - 2 * x[1] - x[0]]),
                        Polytope(A, b))
    res = evi(problem, tol=1e-3, rng=0)
    assert res.success
    assert (np.asarray(A) @ res.points.T <= np.asarray(b)[:, None] + 1e-9).all()
    assert evi_gap(problem, res.points, res.weights).gap <= 1e-3 + 1e-9


@pytest.mark.parametrize("p", [1.0, 2.0, 4.0, 8.0])
def test_smoothness_bound_example_e1(p):
    """Thm 7.4 / Example E.1: u = -3/4 p x^4 + p x^3 + 1 on [0, 1]; every eps-EVI solution has
    E u >= 1 - eps / (1 + p/4)."""
    u = lambda x: -0.75 * p * x ** 4 + p * x ** 3 + 1
    problem = VIProblem(lambda x: -(-3 * p * x ** 3 + 3 * p * x ** 2), Box(0.0, 1.0), dim=1)
    eps = 1e-3
    for seed in range(3):
        res = evi(problem, tol=eps, rng=seed)
        assert res.gap_con <= res.gap <= eps
        Eu = float(res.weights @ u(res.points[:, 0]))
        assert Eu >= 1 - eps / (1 + p / 4) - 1e-9


def test_nonfinite_operator_stops():
    def F(x):
        return np.full(3, np.nan) if x[0] > 0.2 else x - 0.5

    res = evi(VIProblem(F, Box(0.0, 1.0), dim=3), x0=np.array([0.5, 0.5, 0.5]))
    assert not res.success and res.status == Status.NONFINITE
    assert "non-finite" in res.message and "iteration" in res.message
    assert np.isfinite(res.x).all()


def test_bad_input():
    res = evi(VIProblem(lambda x: np.ones(2), Simplex(), dim=3))  # found at the first round
    assert res.status == Status.ORACLE_ERROR and "shape" in res.message
    with pytest.raises(ValueError, match="empty"):
        Polytope([[1.0], [-1.0]], [0.0, -1.0])
    with pytest.raises(ValueError, match="unbounded"):
        Polytope([[1.0, 0.0], [0.0, 1.0]], [1.0, 1.0])
    with pytest.raises(ValueError, match="finite bounds"):
        VIProblem(lambda x: x, Box(0.0, np.inf), dim=2)
    with pytest.raises(ValueError, match="dim"):
        VIProblem(lambda x: x, Simplex())
    with pytest.raises(TypeError, match="domain"):
        VIProblem(lambda x: x, L2Ball(1.0), dim=2)
    with pytest.raises(TypeError, match="operator"):
        VIProblem(3.0, Simplex(), dim=2)
    problem = VIProblem(lambda x: x, Simplex(), dim=2)
    with pytest.raises(ValueError, match="tol"):
        evi(problem, tol=0.0)
    with pytest.raises(ValueError, match="learner"):
        evi(problem, learner="sgd")
    with pytest.raises(ValueError, match="deviations"):
        evi(VIProblem(lambda x: x, Box(0.0, 1.0), dim=2), deviations="ce")
    with pytest.raises(ValueError, match="x0"):
        evi(problem, x0=np.array([0.7, 0.7]))
    with pytest.raises(ValueError, match="points"):
        evi_gap(problem, np.ones((2, 3)))
    with pytest.raises(ValueError, match="domain"):
        evi_gap(problem, [[2.0, -1.0]])
    with pytest.raises(ValueError, match="A must"):
        AffineOperator(np.ones((2, 3)))


def test_fixed_point_oracle():
    rng = np.random.default_rng(0)
    for make, d in ((lambda: Simplex(), 4), (lambda: Box(-1.0, 2.0), 3)):
        problem = VIProblem(lambda x: x, make(), dim=d)
        dom = EVIDomain(problem.domain, problem.dim)
        for _ in range(5):
            if dom.box:  # a random affine self-map of the box: x -> l + K'(x - l)/... built from experts
                P = rng.dirichlet(np.ones(2 * d + 2), size=d)
                s = dom.upper - dom.lower
                Ky = P[:, 2:2 + d] - P[:, 2 + d:]
                cy = P[:, 1] + P[:, 2 + d:].sum(1)
                K = Ky * s[:, None] / s[None, :]
                c = s * cy + dom.lower - K @ dom.lower
            else:
                K = rng.dirichlet(np.ones(d), size=d).T  # column-stochastic
                c = np.zeros(d)
            x = dom.fixed_point(K, c)
            assert np.abs(K @ x + c - x).max() <= 1e-8
            assert problem.domain.contains(x, 1e-12)


def test_history_and_callback():
    rng = np.random.default_rng(8)
    problem = VIProblem(_nonmonotone(4, rng), Simplex(), dim=4)
    res = evi(problem, tol=1e-6, maxiter=500, check_every=100, history=True, rng=0)
    # checks at rounds 1, 2, 4, ... below check_every, then at its multiples
    assert list(res.history["iteration"]) == [0, 1, 2, 4, 8, 16, 32, 64, 100, 200, 300, 400,
                                              500]
    assert res.history["fun"][-1] == pytest.approx(res.gap, rel=1e-12)  # the final mixture's gap
    seen = []

    def stop(x):
        seen.append(x)
        raise StopIteration

    res = evi(problem, tol=1e-6, maxiter=500, check_every=100, callback=stop, rng=0)
    assert res.status == Status.CALLBACK and res.nit == 1 and len(seen) == 1
    assert problem.domain.contains(seen[0], 1e-12)


@pytest.mark.parametrize("dom,d,ce", [(Box(-1.0, 2.0), 4, False), (Simplex(), 5, False),
                                      (ProductOfSimplices([2, 3]), 5, True)])
def test_deviation_experts_give_the_closed_form_gap(dom, d, ce):
    """Gap = s - sum over groups of the smallest expert value, the LP certificate."""
    rng = np.random.default_rng(11)
    problem = VIProblem(_nonmonotone(d, rng), dom, dim=d)
    D = EVIDomain(problem.domain, problem.dim)
    X = _random_points(problem, 6, rng)
    w = rng.dirichlet(np.ones(6))
    Fx = np.array([problem.F(x) for x in X])
    Y, Fy = D.to_y(X), D.f_to_y(Fx)
    group, p, q, alpha, beta, ng = D.experts(ce)
    M = (Fy * w[:, None]).T @ Y
    vals = alpha * (w @ Fy)[p] + beta * M[p, q]
    gap = float(np.einsum("k,kj,kj->", w, Fy, Y)) - sum(vals[group == g].min() for g in range(ng))
    ref = evi_gap(problem, X, w, Fx)
    expected = ref.gap_ce.sum() if ce else evi_gap(problem, X, w, Fx, method="lp").gap
    assert gap == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("dom,d,dev", [(Box(0.0, 1.0), 8, "linear"), (Simplex(), 6, "linear"),
                                       (ProductOfSimplices([3, 3]), 6, "ce")])
def test_column_generation_reweighting(dom, d, dev):
    rng = np.random.default_rng(d)
    op = _nonmonotone(d, rng)
    calls = []

    def F(x):
        calls.append(1)
        return op.A @ x + op.b

    problem = VIProblem(F, dom, dim=d)
    res = evi(problem, tol=1e-4, rng=0, deviations=dev, reweight="cg", maxiter=4000)
    assert res.success and res.gap <= 1e-4
    assert res.nfev == len(calls) >= res.nit  # the new points are operator calls too
    check = evi_gap(problem, res.points, res.weights)
    gap = check.gap_ce.sum() if dev == "ce" else check.gap
    assert gap == pytest.approx(res.gap, abs=1e-12)
    if dev == "linear":
        assert evi_gap(problem, res.points, res.weights, method="lp").gap == pytest.approx(
            res.gap, abs=1e-7)
    assert res.fp_residual <= 1e-8
    for x in res.points:
        assert problem.domain.contains(x, 1e-12)
    plain = evi(VIProblem(op, dom, dim=d), tol=1e-4, rng=0, deviations=dev, maxiter=4000)
    assert res.nit < plain.nit  # fewer rounds than the plain regret loop


def test_column_generation_bad_input():
    problem = VIProblem(lambda x: x, Simplex(), dim=2)
    with pytest.raises(ValueError, match="reweight"):
        evi(problem, reweight="lp")
    with pytest.raises(ValueError, match="cg"):
        evi(VIProblem(lambda x: x, ProductOfSimplices([2, 2])), reweight="cg")
    with pytest.raises(ValueError, match="cg"):
        evi(VIProblem(lambda x: x, Polytope([[1.0], [-1.0]], [1.0, 0.0])), reweight="cg")


@pytest.mark.parametrize("dom,d", [(Box(0.0, 1.0), 5), (Simplex(), 5)])
def test_column_generation_lp_matches_linprog(dom, d):
    """The warm-started HiGHS model of ``reweight="cg"`` has the optimum of the same restricted
    LP (on the values scaled by ``unit``) solved from scratch by scipy's linprog, after each
    call (rows and columns added, columns dropped); the returned mixture's gap is at least
    the full LP's optimum."""
    from scipy.optimize import linprog
    rng = np.random.default_rng(3)
    problem = VIProblem(_nonmonotone(d, rng), dom, dim=d)
    pdom = EVIDomain(problem.domain, problem.dim)
    X = _random_points(problem, 120, rng)
    Fx = np.array([problem.F(x) for x in X])
    Y, Fy = pdom.to_y(X), pdom.f_to_y(Fx)
    cg = ColumnGeneration(problem, pdom, False)
    group, p, q, alpha, beta, ng = pdom.experts(False)

    def lp_value(P, Fp, e):  # min_{lam in simplex} lam.s - sum_g v_g, v_g <= lam.L_e
        L = Fp[:, p[e]] * (alpha[e] + beta[e] * P[:, q[e]])
        G = np.zeros((e.size, ng))
        G[np.arange(e.size), group[e]] = 1.0
        n = P.shape[0]
        r = linprog(np.r_[np.einsum("kj,kj->k", Fp, P), -np.ones(ng)],
                    A_ub=np.hstack([-L.T, G]), b_ub=np.zeros(e.size),
                    A_eq=np.r_[np.ones(n), np.zeros(ng)][None, :], b_eq=[1.0],
                    bounds=[(0, None)] * n + [(None, None)] * ng, method="highs")
        assert r.status == 0
        return r.fun

    for n, budget in ((60, 3), (90, 4), (120, 30)):
        out = cg.run(Y[:n], Fy[:n], Fx[:n], 0.0, budget)
        val = cg.solve()[1]
        assert val == pytest.approx(lp_value(cg.pool_y[cg.columns], cg.pool_f[cg.columns],
                                             cg.rows), abs=1e-9)
        full = lp_value(cg.pool_y, cg.pool_f, np.arange(group.size)) / cg.unit
        assert out[4].gap >= full - 1e-9


def test_column_generation_solves_afresh_when_the_warm_start_fails():
    """A restricted LP whose warm-started solve fails is solved once more from scratch: the
    same optimum as without the failure."""
    rng = np.random.default_rng(3)
    problem = VIProblem(_nonmonotone(5, rng), Simplex(), dim=5)
    dom = EVIDomain(problem.domain, problem.dim)
    X = _random_points(problem, 80, rng)
    Fx = np.array([problem.F(x) for x in X])
    Y, Fy = dom.to_y(X), dom.f_to_y(Fx)

    class Counted:  # counts the runs; with fail=True the first leaves the model unsolved
        def __init__(self, h, fail):
            self.h, self.fail, self.runs = h, fail, 0

        def __getattr__(self, name):
            return getattr(self.h, name)

        def run(self):
            self.runs += 1
            return self.h.clearSolver() if self.fail and self.runs == 1 else self.h.run()

    plain, failing = ColumnGeneration(problem, dom, False), ColumnGeneration(problem, dom, False)
    plain.h, failing.h = Counted(plain.h, False), Counted(failing.h, True)
    want, got = plain.run(Y, Fy, Fx, 0.0, 6), failing.run(Y, Fy, Fx, 0.0, 6)
    assert failing.h.runs == plain.h.runs + 1  # the retry
    assert got[4].gap == want[4].gap
    np.testing.assert_array_equal(got[3], want[3])


def test_column_generation_long_last_call():
    """When the rounds run out above tol, the last call of ``reweight="cg"`` may solve more
    than ``reweight_max`` restricted LPs (each adds at most one new point, one operator
    call); the reported gap is still the closed-form gap of the returned mixture."""
    d = 8
    problem = VIProblem(_nonmonotone(d, np.random.default_rng(5)), Box(0.0, 1.0), dim=d)
    res = evi(problem, tol=1e-9, rng=0, reweight="cg", reweight_max=5, maxiter=100)
    assert res.nit == 100 and res.nfev - res.nit > 2 * 5  # more than two calls of 5 LPs
    assert res.success == (res.gap <= 1e-9)
    assert evi_gap(problem, res.points, res.weights).gap == pytest.approx(res.gap, abs=1e-12)


# -- the solver contract: limits, statuses, faults as results ---------------------------------

def test_contract_case():
    import cases_evi

    problem, x0, options = cases_evi.make()
    res = evi(problem, x0, history=True, **options)
    for key in ("x", "fun", "stationarity", "stationarity_measure", "success", "status",
                "message", "nit", "nfev", "njev", "nifo", "time", "history"):
        assert key in res, key
    assert res.success and res.status == Status.CONVERGED and 1 <= res.nit <= 100
    assert res.stationarity_measure == "certified gap (linear)"
    assert res.fun == res.stationarity == res.gap <= 1e-2
    assert np.linalg.norm(res.x - cases_evi.C) <= 0.1  # E||x - c||^2 <= gap_con <= tol
    assert res.nfev == res.nit == problem.operator.calls and res.njev == res.nifo == 0
    assert res.history["nfev"][-1] == res.nfev
    assert list(res.history["iteration"]) == list(range(res.nit + 1))
    assert res.history["gap_con"][-1] == pytest.approx(res.gap_con, abs=1e-15)
    new, old = [], []
    evi(problem, x0, callback=lambda intermediate_result: new.append(intermediate_result.nit),
        **options)
    evi(problem, x0, callback=lambda xk: old.append(xk), **options)
    assert new == list(range(1, res.nit + 1)) and len(old) == res.nit

    def stop(intermediate_result):
        if intermediate_result.nit >= 2:
            raise StopIteration

    res = evi(problem, x0, callback=stop, **options)
    assert res.status == 99 and not res.success and res.nit == 2
    a = jitopt.minimize(problem, method="evi", options={**options, "rng": 4})
    b = evi(problem, rng=4, **options)
    np.testing.assert_array_equal(a.points, b.points)
    assert a.nit == b.nit and a.gap == b.gap


def test_iteration_and_time_limits():
    rng = np.random.default_rng(8)
    problem = VIProblem(_nonmonotone(4, rng), Simplex(), dim=4)
    x0 = np.full(4, 0.25)
    keep = x0.copy()
    res = evi(problem, x0, max_time=0.0)
    assert res.status == Status.MAXTIME and res.nit == 0 and res.nfev == 0
    np.testing.assert_array_equal(res.x, x0)
    np.testing.assert_array_equal(x0, keep)
    assert "max_time = 0 s" in res.message
    res = evi(problem, maxiter=1, tol=1e-9)
    assert res.status == Status.MAXITER and res.nit == 1 and res.points.shape == (1, 4)
    assert "maxiter = 1" in res.message
    res = evi(problem, maxiter=1, tol=1e-9, method="eah")
    assert res.nit == 1
    with pytest.raises(ValueError, match="max_time"):
        evi(problem, max_time=-1.0)


def _failing(k, fault, d=3):
    """A nonmonotone affine operator raising ZeroDivisionError or returning NaN from its
    k-th call on."""
    op = _nonmonotone(d, np.random.default_rng(0))
    calls = []

    def F(x):
        calls.append(1)
        if len(calls) >= k:
            if fault == "raise":
                return 1 / 0
            return np.full(d, np.nan)
        return op(x)
    return F


@pytest.mark.parametrize("fault,status", [("raise", Status.ORACLE_ERROR),
                                          ("nan", Status.NONFINITE)])
def test_operator_fault_at_round_k_is_a_result(fault, status):
    problem = VIProblem(_failing(137, fault), Simplex(), dim=3)
    res = evi(problem, tol=1e-12, check_every=50)
    assert not res.success and res.status == status
    assert res.nit == 100  # the last gap check before the fault
    assert "in round 137 at iteration 101" in res.message and "best iterate" in res.message
    assert np.isfinite(res.x).all() and problem.domain.contains(res.x, 1e-12)
    if fault == "raise":
        assert "ZeroDivisionError" in res.message
    # the ellipsoid reference and the column generation report the fault the same way
    for options in ({"method": "eah", "check_every": 10}, {"reweight": "cg", "check_every": 10}):
        res = evi(VIProblem(_failing(37, fault), Simplex(), dim=3), tol=1e-12, **options)
        assert res.status == status and np.isfinite(res.x).all()


def test_compiled_operator_overflow_is_nonfinite():
    big = AffineOperator(np.full((3, 3), 1e308), np.full(3, 1e308))  # F(x) overflows to inf
    res = evi(VIProblem(big, Simplex(), dim=3))
    assert res.status == Status.NONFINITE and "round 1" in res.message
    assert np.isfinite(res.x).all()


@pytest.mark.parametrize("reweight", [True, "cg"])
def test_reweighting_lp_at_its_pivot_bound_is_skipped(monkeypatch, reweight):
    """A reweighting LP that reaches its bound on simplex pivots (none allowed for
    ``True``; for ``"cg"``, whose small restricted LPs HiGHS's presolve may solve without
    a pivot, every solve reports the bound) is skipped: the run returns what the regret
    loop alone returns."""
    from jitopt.solvers import ColumnGeneration
    from jitopt.evi import _domains as _evi_domains

    rng = np.random.default_rng(4)
    problem = VIProblem(_nonmonotone(5, rng), Box(0.0, 1.0), dim=5)
    plain = evi(problem, tol=1e-9, maxiter=200, rng=1, weighting="uniform")
    rw = evi(problem, tol=1e-9, maxiter=200, rng=1, weighting="uniform", reweight=reweight)
    assert rw.gap < 0.5 * plain.gap  # the LP helps when it may pivot
    monkeypatch.setattr(_evi_domains, "LP_PIVOTS", 0)
    monkeypatch.setattr(ColumnGeneration, "solve", lambda self: None)
    bounded = evi(problem, tol=1e-9, maxiter=200, rng=1, weighting="uniform",
                  reweight=reweight)
    assert bounded.status == Status.MAXITER and bounded.gap == plain.gap
    assert bounded.nfev == plain.nfev  # no new points either
    np.testing.assert_array_equal(bounded.points, plain.points)
    np.testing.assert_array_equal(bounded.weights, plain.weights)


def test_lp_failure_is_inner_failure(monkeypatch):
    def failing(self, *args, **kwargs):
        raise RuntimeError("the reweighting LP failed: infeasible")

    monkeypatch.setattr(EVIDomain, "reweight", failing)
    problem = VIProblem(_nonmonotone(4, np.random.default_rng(1)), Box(0.0, 1.0), dim=4)
    res = evi(problem, tol=1e-9, reweight=True, check_every=20)
    assert res.status == Status.INNER_FAILURE and not res.success
    assert "RuntimeError: the reweighting LP failed" in res.message
    assert res.nit == 40 and np.isfinite(res.x).all()


def test_ce_measure_and_registry():
    problem = VIProblem(_nonmonotone(4, np.random.default_rng(2)), ProductOfSimplices([2, 2]))
    res = evi(problem, tol=1e-3, deviations="ce", rng=0)
    assert res.stationarity_measure == "certified gap (ce)"
    assert res.gap <= 1e-3 and res.gap == pytest.approx(res.gap_ce.sum(), abs=1e-15)
    assert "evi" in jitopt.available_methods(problem)
    with pytest.raises(TypeError, match="VIProblem"):
        evi(jitopt.problems.pca(np.eye(3), 1))
