"""Tests of jitopt.games: operators, CE/CCE/ALCE gaps, the CE LP and CE through the EVI solver."""

import itertools

import numpy as np
import pytest
from scipy.optimize import linprog

from jitopt.games import NormalFormGame, PolymatrixGame, concave_game
from jitopt.sets import Polytope
from jitopt.solvers import evi, evi_gap

BOS = NormalFormGame([[[3.0, 0.0], [0.0, 2.0]], [[2.0, 0.0], [0.0, 3.0]]])


def _random_game(sizes, seed):
    rng = np.random.default_rng(seed)
    return NormalFormGame([rng.random(sizes) for _ in sizes])


def test_operator_is_minus_partial_gradient():
    game = _random_game((2, 3, 2), 0)
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.dirichlet(np.ones(m)) for m in game.sizes])
    F = game.operator(x)
    for k in range(game.dim):
        # u_i is linear in x_i: its partial derivative in x_ik is u_i with i playing action k
        i = int(np.searchsorted(game.offsets, k, side="right") - 1)
        pure = x.copy()
        pure[game.offsets[i]:game.offsets[i + 1]] = 0.0
        pure[k] = 1.0
        assert F[k] == pytest.approx(-game.expected_payoffs(pure)[i], abs=1e-14)


def test_polymatrix_matches_its_normal_form():
    game = PolymatrixGame.ring(4, m=2, rng=3)
    nf = game.to_normal_form()
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.dirichlet(np.ones(2)) for _ in range(4)])
    np.testing.assert_allclose(nf.operator(x), game.operator(x), atol=1e-13)
    np.testing.assert_allclose(nf.expected_payoffs(x), game.expected_payoffs(x), atol=1e-13)
    # brute force of one payoff entry
    U = game.payoffs()
    prof = (1, 0, 1, 1)
    want = sum(A[prof[i], prof[j]] for (i, j), A in game.edges.items() if i == 0)
    assert U[(0,) + prof] == pytest.approx(want, abs=1e-14)


@pytest.mark.parametrize("sizes,seed", [((3, 3), 0), ((2, 3, 2), 1), ((2, 2, 2, 2), 2)])
def test_ce_through_evi_is_an_eps_ce(sizes, seed):
    game = _random_game(sizes, seed)
    res = game.correlated_equilibrium(tol=1e-3, rng=seed)
    assert res.success and res.gap <= 1e-3
    dist = game.joint_distribution(res.points, res.weights)
    ce = game.ce_gap(dist)  # independent: the CE regret of the joint distribution
    assert ce.sum() <= 1e-3 + 1e-12
    np.testing.assert_allclose(ce, res.gap_ce, atol=1e-10)
    np.testing.assert_allclose(game.cce_gap(dist), res.gap_cce, atol=1e-10)


RPS = np.array([[0.0, -1.0, 1.0], [1.0, 0.0, -1.0], [-1.0, 1.0, 0.0]])


def _battery():
    """Zero-sum and general-sum games with the tolerances of the defaults battery: the
    documented rock-paper-scissors, relabelled and rescaled copies of it (tol scaled alike),
    random zero-sum and general-sum games, Bach or Stravinsky and polymatrix rings."""
    rng = np.random.default_rng
    games = [("rock-paper-scissors", NormalFormGame([RPS, -RPS]), 1e-4)]
    for (p, q), scale in (((1, 2, 0), (2, 0, 1)), 1e-3), (((2, 1, 0), (0, 2, 1)), 1e3):
        A = scale * RPS[np.ix_(p, q)]
        games.append((f"RPS relabelled x{scale:g}", NormalFormGame([A, -A]), 1e-4 * scale))
    A = rng(1).uniform(-1, 1, (10, 10))
    games += [("zero-sum 10x10", NormalFormGame([A, -A]), 1e-4),
              ("general-sum 3x3x3", NormalFormGame(list(rng(11).random((3, 3, 3, 3)))), 1e-4),
              ("Bach or Stravinsky", BOS, 1e-4),
              ("ring zero-sum", PolymatrixGame.ring(6, 3, rng=1, zero_sum=True), 1e-4),
              ("ring", PolymatrixGame.ring(6, 3, rng=0), 1e-4)]
    return games


@pytest.mark.parametrize("name,game,tol", _battery(), ids=[g[0] for g in _battery()])
def test_default_ce_is_certified_on_the_battery(name, game, tol):
    """The defaults certify a CE from the uniform start and random starts within half of
    evi's default maxiter, whatever the rounding of the CPU (the uniform start of a
    symmetric zero-sum game is its equilibrium: the first gap check, after one round,
    sees a gap at rounding level); the gap is recomputed from the joint distribution."""
    for start in (None, 0, 1):
        res = game.correlated_equilibrium(tol=tol, rng=start, maxiter=10000)
        assert res.success and res.gap <= tol
        ce = game.ce_gap(game.joint_distribution(res.points, res.weights))
        assert ce.sum() <= tol * (1 + 1e-9)
        np.testing.assert_allclose(ce, res.gap_ce, atol=1e-9 * tol)


@pytest.mark.parametrize("name,game,tol", [g for g in _battery() if "zero-sum" in g[0]
                                           or "RPS" in g[0] or "rock" in g[0]],
                         ids=lambda v: v if isinstance(v, str) else "")
def test_default_alce_is_certified_on_zero_sum_games(name, game, tol):
    """deviations="linear": the defaults certify an ALCE gap of 1e-4 (scaled with the
    payoffs) on the zero-sum games of the battery, from the uniform start and random starts,
    within half of evi's default maxiter; the gap is recomputed from the mixture, and the
    CE gap of its joint distribution is at most the ALCE gap."""
    for start in (None, 0, 1):
        res = game.correlated_equilibrium(tol=tol, deviations="linear", rng=start,
                                          maxiter=10000)
        assert res.success and res.gap <= tol
        assert game.mixture_gaps(res.points, res.weights).gap <= tol * (1 + 1e-9)
        ce = game.ce_gap(game.joint_distribution(res.points, res.weights))
        assert ce.sum() <= res.gap + 1e-9 * tol


def test_reweighting_starts_once_the_gap_nears_tol():
    """With gap checks at rounds 1, 2, 4, ... only (``check_every`` beyond ``maxiter``) the
    scheduled reweighting never comes before ``maxiter``; the column generation starts at
    the first check whose gap is within ``EARLY_GAP * tol`` and certifies the CE long before
    the regret loop alone would (its gap stays above ``tol`` at ``maxiter``)."""
    A = np.random.default_rng(1).uniform(-1, 1, (10, 10))
    game = NormalFormGame([A, -A])
    for start in (None, 0, 1):
        plain = game.correlated_equilibrium(tol=1e-3, rng=start, maxiter=1000,
                                            check_every=10**6, reweight=False)
        assert plain.gap > 1e-3
        res = game.correlated_equilibrium(tol=1e-3, rng=start, maxiter=1000,
                                          check_every=10**6)
        assert res.success and res.gap <= 1e-3 and res.nit <= 500
        ce = game.ce_gap(game.joint_distribution(res.points, res.weights))
        assert ce.sum() <= 1e-3 * (1 + 1e-9)


def test_best_gap_check_is_returned():
    """Rock-paper-scissors from a point 1e-6 away from its equilibrium: the regrets are
    tiny, but regret matching is scale-free and turns them into pure moves, so the gap
    grows after the first round; with ``tol`` out of reach the result is the mixture of the
    best gap check, the first round alone."""
    game = NormalFormGame([RPS, -RPS])
    x0 = np.full(6, 1 / 3) + 1e-6 * np.array([1.0, -1.0, 0.0, 0.0, 0.0, 0.0])
    res = game.correlated_equilibrium(x0=x0, tol=1e-12, reweight=False, maxiter=200,
                                      history=True)
    fun = res.history["fun"]
    assert res.status.name == "MAXITER" and res.nit == 200
    assert fun[1] <= 1e-5 and fun[2:-1].min() > 100 * fun[1]  # the gap grew
    assert res.gap == fun[-1] == fun[1]
    np.testing.assert_allclose(res.points, x0[None, :], atol=1e-15)


def test_alce_solution_is_ce_and_gap_order():
    game = _random_game((3, 4), 5)
    res = game.correlated_equilibrium(tol=1e-3, deviations="linear", rng=0)
    assert res.success and res.gap_lin <= 1e-3
    dist = game.joint_distribution(res.points, res.weights)
    assert game.ce_gap(dist).sum() <= 1e-3 + 1e-12
    rng = np.random.default_rng(0)
    for _ in range(5):
        pts = np.array([np.concatenate([rng.dirichlet(np.ones(m)) for m in game.sizes])
                        for _ in range(4)])
        g = game.mixture_gaps(pts, rng.random(4))
        assert (g.gap_alce >= g.gap_ce - 1e-12).all()
        assert (g.gap_ce >= np.maximum(0.0, g.gap_cce) - 1e-12).all()


def test_zero_sum_marginals_are_eps_nash():
    """Two-player zero-sum: <F(x), x> = 0, so (Prop 6.1) the mean of an eps-EVI solution is an
    eps-Nash equilibrium; its value matches the minimax LP."""
    A = np.array([[0.0, -1.0, 2.0], [2.0, 0.0, -1.0], [-1.0, 2.0, 0.0]])
    game = NormalFormGame([A, -A])
    eps = 1e-3
    res = evi(game.vi_problem(), tol=eps, rng=0)
    x = res.x
    F = game.operator(x)
    vigap = F @ x - sum(F[game.offsets[i]:game.offsets[i + 1]].min() for i in range(2))
    assert vigap <= res.gap_con + 1e-9 <= eps + 1e-9
    # minimax value by LP: max v s.t. A^T p >= v, p in simplex
    r = linprog(np.r_[np.zeros(3), -1.0], A_ub=np.c_[-A.T, np.ones(3)], b_ub=np.zeros(3),
                A_eq=[[1, 1, 1, 0]], b_eq=[1], bounds=[(0, None)] * 3 + [(None, None)],
                method="highs")
    value = -r.fun
    assert abs(x[:3] @ A @ x[3:] - value) <= eps


def test_zero_sum_polymatrix_prop_6_1():
    game = PolymatrixGame.ring(5, m=3, rng=2, zero_sum=True)
    problem = game.vi_problem()
    res = evi(problem, tol=1e-3, rng=1)
    x = res.x
    F = problem.F(x)
    assert abs(F @ x) <= 1e-12  # <F(x), x> = 0 for zero-sum polymatrix games
    vigap = F @ x - sum(F[game.offsets[i]:game.offsets[i + 1]].min() for i in range(5))
    assert vigap <= res.gap_con + 1e-9


def test_bach_or_stravinsky_region():
    """Spec §4.2 / paper Fig. 1: ALCE marginals satisfy 0 <= x - y <= 0.2; the mixed NE has
    ALCE gap 0; the CE with marginals (5/7, 2/7) is a CE but not an ALCE."""
    eps = 1e-3
    for seed in range(4):
        res = BOS.correlated_equilibrium(tol=eps, deviations="linear", rng=seed)
        assert res.success
        m = res.weights @ res.points
        assert -10 * eps <= m[0] - m[2] <= 0.2 + 10 * eps
    ne = np.array([[0.6, 0.4, 0.4, 0.6]])
    g = BOS.mixture_gaps(ne)
    assert abs(g.gap) <= 1e-12
    # the CE maximising x - y (P1 plays B minus P2 plays B), by LP over pure profiles
    A_ub = BOS.ce_constraints()
    obj = np.array([0.0, 1.0, -1.0, 0.0])  # x - y = p(B,S) - p(S,B)
    for sign, want in ((-1.0, 3 / 7), (1.0, -0.25)):
        r = linprog(sign * obj, A_ub=A_ub, b_ub=np.zeros(A_ub.shape[0]), A_eq=np.ones((1, 4)),
                    b_eq=[1.0], bounds=(0, None), method="highs")
        assert obj @ r.x == pytest.approx(want, abs=1e-9)
    p = r.x  # last solved: the min; recompute the max one for the ALCE check
    r = linprog(-obj, A_ub=A_ub, b_ub=np.zeros(A_ub.shape[0]), A_eq=np.ones((1, 4)),
                b_eq=[1.0], bounds=(0, None), method="highs")
    p = r.x
    assert p[0] + p[1] == pytest.approx(5 / 7, abs=1e-9)
    pure = np.array([[1, 0, 1, 0], [1, 0, 0, 1], [0, 1, 1, 0], [0, 1, 0, 1]], dtype=float)
    g = BOS.mixture_gaps(pure, p)
    assert g.gap_ce.sum() <= 1e-9
    assert g.gap > 1e-3


def test_nash_equilibria_have_zero_alce_gap():
    for seed in range(3):
        game = _random_game((3, 3, 2), 10 + seed)
        U = game.payoffs()
        for prof in itertools.product(*[range(m) for m in game.sizes]):
            if all(U[(i,) + prof] >= U[(i,) + prof[:i] + (b,) + prof[i + 1:]].max()
                   for i in range(3) for b in [slice(None)]):
                x = np.concatenate([np.eye(m)[a] for m, a in zip(game.sizes, prof)])
                assert abs(game.mixture_gaps([x]).gap) <= 1e-12


def test_ce_lp_and_gaps():
    game = _random_game((3, 2, 3), 4)
    for objective in ("welfare", "feasibility"):
        lp = game.ce_lp(objective)
        assert lp.success
        assert game.ce_gap(lp.dist).max() <= 1e-6
        assert game.cce_gap(lp.dist).max() <= 1e-6
    # brute-force CE regret of a random distribution
    rng = np.random.default_rng(0)
    p = rng.random(game.sizes)
    p /= p.sum()
    U = game.payoffs()
    want = 0.0
    for a in range(3):  # player 0
        best = max(sum(p[(a, j, k)] * (U[0][(b, j, k)] - U[0][(a, j, k)])
                       for j in range(2) for k in range(3)) for b in range(3))
        want += best
    assert game.ce_gap(p)[0] == pytest.approx(want, abs=1e-12)


def test_coupled_constraint_game():
    game = concave_game(lambda x: np.array([1 - 2 * x[0] - x[1], 1 - 2 * x[1] - x[0]]),
                        Polytope([[1, 1], [-1, 0], [0, -1]], [0.5, 0, 0]))
    res = evi(game, tol=1e-3, rng=0)
    assert res.success
    assert (res.points.sum(axis=1) <= 0.5 + 1e-9).all() and (res.points >= -1e-9).all()
    assert evi_gap(game, res.points, res.weights, method="lp").gap <= 1e-3 + 1e-9


def test_bad_payoffs():
    with pytest.raises(ValueError, match="payoffs"):
        NormalFormGame([np.zeros((2, 3)), np.zeros((3, 2))])
    with pytest.raises(ValueError, match="payoffs"):
        NormalFormGame([np.zeros((2, 2))])
    with pytest.raises(ValueError, match="finite"):
        NormalFormGame([np.full((2, 2), np.nan), np.zeros((2, 2))])
    with pytest.raises(ValueError, match="edges"):
        PolymatrixGame([2, 2], {(0, 1): np.zeros((3, 2))})
    with pytest.raises(ValueError, match="dist"):
        BOS.ce_gap(np.ones((2, 2)))
    for bad in ("nash", "alce"):  # one vocabulary with evi: "ce" and "linear"
        with pytest.raises(ValueError, match="deviations"):
            BOS.correlated_equilibrium(deviations=bad)


def test_operator_and_distributions_reject_bad_input():
    from jitopt.games import NormalFormGame

    game = NormalFormGame(np.arange(8.0).reshape(2, 2, 2))
    with pytest.raises(ValueError, match="x must be a concatenated mixed profile"):
        game.operator(np.ones(3))
    with pytest.raises(ValueError, match="NaN"):
        game.operator(np.array([0.5, 0.5, np.nan, 0.5]))
    points = np.array([[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0]])
    for bad in ([1.0, -1.0], [0.0, 0.0], [1.0]):
        with pytest.raises(ValueError, match="weights"):
            game.joint_distribution(points, bad)
    dist = game.joint_distribution(points, [1.0, 3.0])
    assert dist[0, 0] == pytest.approx(0.25) and dist[1, 1] == pytest.approx(0.75)
    with pytest.raises(ValueError, match="dist"):
        game.ce_gap(np.full((2, 2), np.nan))


def test_options_pass_through_and_compiled_operator():
    """correlated_equilibrium hands every option to evi (one vocabulary, other defaults);
    the compiled normal-form operator takes the same rounds as the same operator called from
    Python."""
    import jitopt
    from jitopt.problems import NormalFormOperator, VIProblem

    game = _random_game((2, 3), 3)
    assert isinstance(game.operator, NormalFormOperator)
    res = game.correlated_equilibrium(max_time=0.0)
    assert res.status == jitopt.Status.MAXTIME and res.nit == 0
    res = game.correlated_equilibrium(maxiter=7, tol=1e-12, check_every=7)
    assert res.status == jitopt.Status.MAXITER and res.nit == 7
    fast = game.correlated_equilibrium(tol=1e-3, rng=1)
    slow_problem = VIProblem(lambda x: game.operator(x), game.vi_problem().domain)
    slow = evi(slow_problem, tol=1e-3, rng=1, deviations="ce", learner="prm+",
               weighting="uniform", check_every=100, reweight="cg")
    assert slow.nit == fast.nit and slow.nfev == fast.nfev
    np.testing.assert_allclose(slow.points, fast.points, atol=1e-12)
    assert slow.gap == pytest.approx(fast.gap, abs=1e-12)


def test_game_operator_fault_is_a_result():
    import jitopt

    game = _random_game((2, 2), 0)
    calls = []

    def F(x):
        calls.append(1)
        if len(calls) == 5:
            raise ZeroDivisionError("injected")
        return game.operator(x)

    res = evi(concave_game(lambda x: -F(x), game.vi_problem().domain), tol=1e-9,
              check_every=2, deviations="ce")
    assert res.status == jitopt.Status.ORACLE_ERROR and "iteration 5" in res.message
    assert game.vi_problem().domain.contains(res.x)
