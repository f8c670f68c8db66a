"""Adversarial property tests of jitopt.games: game constructors, payoffs, gaps, joint
distributions and the equilibrium functions, on faulty arrays and degenerate games (one
action, constant or zero payoffs, payoffs near 1e300 or 1e-300).

A refusal names the argument; an accepted input gives a distribution of unit mass over the
profiles whose certified gap holds (checked against CE regrets computed here by loops),
expected payoffs equal to the multilinear form, and leaves the caller's arrays unchanged.
"""

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import jitopt
from jitopt.games import NormalFormGame, PolymatrixGame, concave_game

from test_adversarial_faults import (COUNTS, FAULTS, PER_FAULT, REFUSED, SCALED, SETTINGS,
                                     exercise, healthy, inject, maybe_refused,
                                     refused_by_name, report_counts, scalars, scale, seeds)

GROUP = "games"
report = report_counts(GROUP)



def ce_regrets(U, p):
    """Per-player CE regrets of the joint distribution ``p`` of a two-player game with
    payoffs ``U[i][a1, a2]``, by loops over recommendations and deviations."""
    m1, m2 = p.shape
    r1 = sum(max(sum(p[a, c] * (U[0][b, c] - U[0][a, c]) for c in range(m2))
                 for b in range(m1)) for a in range(m1))
    r2 = sum(max(sum(p[c, a] * (U[1][c, b] - U[1][c, a]) for c in range(m1))
                 for b in range(m2)) for a in range(m2))
    return np.array([r1, r2])


def two_player(seed, m1=2, m2=3):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((m1, m2)), rng.standard_normal((m1, m2))


@pytest.mark.parametrize("fault", FAULTS)
@PER_FAULT
@given(seed=seeds)
def test_normal_form_game(fault, seed):
    A, B = two_player(seed)
    arg = inject(fault, A, np.random.default_rng(seed))
    Ah = healthy(fault, A) * scale(fault)
    rng = np.random.default_rng(seed)

    def check(game):
        x, y = rng.dirichlet(np.ones(2)), rng.dirichlet(np.ones(3))
        np.testing.assert_allclose(game.expected_payoffs(np.concatenate([x, y])),
                                   [x @ Ah @ y, x @ B @ y], rtol=1e-12)
        p = np.outer(x, y)
        np.testing.assert_allclose(game.ce_gap(p), ce_regrets([Ah, B], p), rtol=1e-9,
                                   atol=1e-12 * scale(fault))

    exercise(GROUP, "NormalFormGame", fault, arg, lambda a: NormalFormGame([a, B]), ("payoffs",),
             check)


@pytest.mark.parametrize("fault", FAULTS)
@PER_FAULT
@given(seed=seeds)
def test_polymatrix_game(fault, seed):
    rng = np.random.default_rng(seed)
    A01, A10 = rng.standard_normal((2, 3)), rng.standard_normal((3, 2))
    arg = inject(fault, A01, rng)
    Ah = healthy(fault, A01) * scale(fault)

    def check(game):
        x, y = rng.dirichlet(np.ones(2)), rng.dirichlet(np.ones(3))
        np.testing.assert_allclose(game.expected_payoffs(np.concatenate([x, y])),
                                   [x @ Ah @ y, y @ A10 @ x], rtol=1e-12)
        # the dense form has the same payoffs
        U = game.payoffs()
        np.testing.assert_allclose(U[0], Ah, rtol=1e-12)
        np.testing.assert_allclose(U[1], A10.T, rtol=1e-12)

    exercise(GROUP, "PolymatrixGame", fault, arg,
             lambda a: PolymatrixGame([2, 3], {(0, 1): a, (1, 0): A10}), ("edges",), check)


@SETTINGS
@given(m=scalars, n=scalars)
def test_polymatrix_sizes_and_ring(m, n):
    COUNTS["games:PolymatrixGame(sizes)"] += 1
    game = maybe_refused(lambda: PolymatrixGame([2, m], {}), "sizes")
    if game is not None:
        assert game.sizes == (2, int(m)) and game.dim == 2 + int(m)
    COUNTS["games:PolymatrixGame.ring"] += 1
    ring = maybe_refused(lambda: PolymatrixGame.ring(n, m=2, rng=0), "n")
    if ring is not None:
        assert ring.n_players == int(n) and len(ring.edges) == 2 * int(n)


def _game_of(kind, seed):
    """Degenerate and badly scaled two-player games."""
    A, B = two_player(seed)
    if kind == "one action":
        return [A[:1, :1], B[:1, :1]]
    if kind == "row player has one action":
        return [A[:1], B[:1]]
    if kind == "zero":
        return [0 * A, 0 * B]
    if kind == "constant":
        return [0 * A + 7.0, 0 * B - 2.0]
    if kind in ("big", "tiny"):
        return [inject(kind, A), inject(kind, B)]
    if kind == "dominant":  # a strictly dominant row and column
        A[0] += 10.0
        B[:, 0] += 10.0
        return [A, B]
    return [A, B]


GAMES = ["random", "one action", "row player has one action", "zero", "constant", "big",
         "tiny", "dominant"]


@pytest.mark.parametrize("kind", GAMES)
@PER_FAULT
@given(seed=seeds)
def test_correlated_equilibrium_is_certified(kind, seed):
    COUNTS["games:correlated_equilibrium"] += 1
    U = _game_of(kind, seed)
    game = NormalFormGame(U)
    size = max(np.abs(np.asarray(u)).max() for u in U) or 1.0
    tol = 1e-3 * size
    res = game.correlated_equilibrium(tol=tol, maxiter=3000, rng=0)
    assert np.isfinite(res.gap) and np.all(np.isfinite(res.x))
    dist = game.joint_distribution(res.points, res.weights)
    assert (dist >= 0).all() and abs(dist.sum() - 1.0) <= 1e-12
    regrets = ce_regrets(U, dist)
    assert np.all(np.isfinite(regrets))
    if res.success:
        assert regrets.sum() <= tol * (1 + 1e-6) + 1e-12 * size
    # the LP finds an exact CE of the same game
    COUNTS["games:ce_lp"] += 1
    lp = game.ce_lp()
    assert lp.success
    assert (lp.dist >= 0).all() and abs(lp.dist.sum() - 1.0) <= 1e-12
    assert ce_regrets(U, lp.dist).sum() <= 1e-6 * size


@pytest.mark.parametrize("fault", FAULTS + ("negative", "mass"))
@PER_FAULT
@given(seed=seeds)
def test_gaps_of_a_distribution(fault, seed):
    A, B = two_player(seed)
    game = NormalFormGame([A, B])
    p = np.random.default_rng(seed).dirichlet(np.ones(6)).reshape(2, 3)
    if fault == "negative":
        arg = p - 0.5 * p.max() * (p == p.max())
        arg[0, 0] += (1 - arg.sum())
        arg = arg if (arg < -1e-9).any() else -p
    elif fault == "mass":
        arg = 2 * p
    else:
        arg = inject(fault, p, np.random.default_rng(seed))
    if fault in ("negative", "mass", "big", "tiny", "int"):
        # not a distribution any more: refused by name
        for entry in ("ce_gap", "cce_gap"):
            COUNTS[f"games:{entry}"] += 1
            refused_by_name(lambda: getattr(game, entry)(arg), "dist")
        return

    def check(gap):
        np.testing.assert_allclose(gap, ce_regrets([A, B], p), rtol=1e-9, atol=1e-14)

    exercise(GROUP, "ce_gap", fault, arg, game.ce_gap, ("dist",), check)
    COUNTS["games:cce_gap"] += 1
    if fault not in REFUSED:
        cce = game.cce_gap(arg)
        # a CCE deviation is a CE deviation that ignores the recommendation
        assert np.all(cce <= ce_regrets([A, B], p) + 1e-12)


@pytest.mark.parametrize("fault", FAULTS)
@PER_FAULT
@given(seed=seeds)
def test_mixtures_of_profiles(fault, seed):
    rng = np.random.default_rng(seed)
    A, B = two_player(seed)
    game = NormalFormGame([A, B])
    pts = np.hstack([rng.dirichlet(np.ones(2), 3), rng.dirichlet(np.ones(3), 3)])
    arg = inject(fault, pts, rng)
    if fault in ("big", "tiny", "int"):  # the points leave the product of simplices
        for entry, call in (("joint_distribution", game.joint_distribution),
                            ("mixture_gaps", game.mixture_gaps)):
            COUNTS[f"games:{entry}"] += 1
            refused_by_name(lambda: call(arg), "points")
        return

    def check_joint(dist):
        expected = sum(np.outer(x[:2], x[2:]) for x in pts) / 3
        np.testing.assert_allclose(dist, expected, rtol=1e-12, atol=1e-15)
        assert abs(dist.sum() - 1) <= 1e-12

    exercise(GROUP, "joint_distribution", fault, arg, game.joint_distribution, ("points",),
             check_joint)

    def check_gaps(gaps):
        dist = sum(np.outer(x[:2], x[2:]) for x in pts) / 3
        np.testing.assert_allclose(gaps.gap_ce, ce_regrets([A, B], dist), rtol=1e-9,
                                   atol=1e-12)

    exercise(GROUP, "mixture_gaps", fault, arg, game.mixture_gaps, ("points",), check_gaps)


@pytest.mark.parametrize("fault", FAULTS)
@PER_FAULT
@given(seed=seeds)
def test_mixture_weights(fault, seed):
    rng = np.random.default_rng(seed)
    game = NormalFormGame(list(two_player(seed)))
    pts = np.hstack([rng.dirichlet(np.ones(2), 3), rng.dirichlet(np.ones(3), 3)])
    w = rng.dirichlet(np.ones(3))
    arg = inject(fault, w, rng)
    wh = healthy(fault, w)

    def check(dist):
        if not (wh.sum() > 0):
            raise AssertionError("weights with no mass accepted")
        expected = sum(wk * np.outer(x[:2], x[2:]) for wk, x in zip(wh / wh.sum(), pts))
        np.testing.assert_allclose(dist, expected, rtol=1e-10, atol=1e-15)

    if fault == "int" and not wh.sum() > 0:
        COUNTS["games:joint_distribution(weights)"] += 1
        refused_by_name(lambda: game.joint_distribution(pts, arg), "weights")
        return
    exercise(GROUP, "joint_distribution(weights)", fault, arg,
             lambda a: game.joint_distribution(pts, a), ("weights",), check)


@pytest.mark.parametrize("fault", FAULTS)
@PER_FAULT
@given(seed=seeds)
def test_expected_payoffs(fault, seed):
    rng = np.random.default_rng(seed)
    A, B = two_player(seed)
    game = NormalFormGame([A, B])
    x = np.concatenate([rng.dirichlet(np.ones(2)), rng.dirichlet(np.ones(3))])
    arg = inject(fault, x, rng)

    def check(u):
        np.testing.assert_allclose(u, [x[:2] @ A @ x[2:], x[:2] @ B @ x[2:]], rtol=1e-12)

    if fault in SCALED + ("int",):  # no longer a mixed profile: no expected payoff
        COUNTS["games:expected_payoffs"] += 1
        refused_by_name(lambda: game.expected_payoffs(arg), "x")
        return
    exercise(GROUP, "expected_payoffs", fault, arg, game.expected_payoffs, ("x",), check)


@pytest.mark.parametrize("kind", ["normal form", "polymatrix"])
@PER_FAULT
@given(seed=seeds, off=st.sampled_from([-1e-3, 1e-3, 0.5]))
def test_expected_payoffs_refuse_what_is_not_a_profile(kind, seed, off):
    """A vector off the product of simplices (a block with a negative entry or a mass not
    1) has no expected payoff: refused by name, never the multilinear form's value."""
    COUNTS["games:expected_payoffs(not a profile)"] += 1
    rng = np.random.default_rng(seed)
    A, B = two_player(seed)
    game = NormalFormGame([A, B]) if kind == "normal form" else \
        PolymatrixGame([2, 3], {(0, 1): A, (1, 0): B.T})
    x = np.concatenate([rng.dirichlet(np.ones(2)), rng.dirichlet(np.ones(3))])
    bad = x.copy()
    bad[rng.integers(5)] += off
    refused_by_name(lambda: game.expected_payoffs(bad), "x")
    np.testing.assert_allclose(game.expected_payoffs(x), [x[:2] @ A @ x[2:], x[:2] @ B @ x[2:]],
                               rtol=1e-12)


@pytest.mark.parametrize("fault", FAULTS)
def test_concave_game_with_a_faulty_gradient(fault):
    """Utilities whose gradients return a faulty array: the EVI run fails by message (never
    a certified gap from dropped imaginary parts), or certifies a true equilibrium."""
    COUNTS["games:concave_game"] += 1
    # u_i = x_i (1 - x_1 - x_2) on x_1 + x_2 <= 1/2: the equilibrium (1/4, 1/4)
    base = np.array([1.0, 1.0])

    def grads(x):
        g = np.array([1 - 2 * x[0] - x[1], 1 - 2 * x[1] - x[0]])
        return inject(fault, base) * 0 + g if fault not in REFUSED else inject(fault, base)

    domain = jitopt.sets.Polytope([[1, 1], [-1, 0], [0, -1]], [0.5, 0, 0])
    res = jitopt.solvers.evi(concave_game(grads, domain), tol=1e-3, rng=0)
    if fault in REFUSED:
        assert not res.success and "operator" in res.message
    else:
        assert res.success and np.allclose(res.x, 0.25, atol=1e-2)


@SETTINGS
@given(key=st.one_of(st.tuples(st.integers(-2, 4), st.integers(-2, 4)),
                     st.tuples(st.booleans(), st.booleans()), st.tuples(scalars, scalars),
                     st.sampled_from(["01", (0,), (0, 1, 2), None, frozenset({0, 1}),
                                      (np.int64(0), np.uint8(1))])))
def test_polymatrix_edge_keys(key):
    """An edge key is a pair of distinct player indices: anything else is refused naming
    the edge(s); a legal key gives the payoff of that edge."""
    COUNTS["games:PolymatrixGame(edges keys)"] += 1
    A01 = np.array([[1.0, -2.0], [0.5, 3.0]])
    game = maybe_refused(lambda: PolymatrixGame([2, 2], {key: A01}), "edge")
    if game is None:
        return
    i, j = (int(k) for k in key)
    assert sorted(game.edges) == [(i, j)] and i != j
    x = np.array([0.25, 0.75, 0.6, 0.4])
    blocks = (x[:2], x[2:])
    expected = np.zeros(2)
    expected[i] = blocks[i] @ A01 @ blocks[j]
    np.testing.assert_allclose(game.expected_payoffs(x), expected, rtol=1e-14)
