"""Convex sets: projections against independent references and brute force, flags, errors."""

import itertools

import numpy as np
import pytest

from jitopt.sets import (Box, CappedSimplex, ConvexSet, GroupNormBall, Intersection, L1Ball,
                         L2Ball, LInfBall, NonNegative, Polytope, ProductOfSimplices, Simplex,
                         project_kernel)

D = 6
GROUPS = np.array([0, 0, 1, 1, 1, 2])


# -- independent references ----------------------------------------------------------------

def simplex_ref(v, r):
    """Sort-based projection onto {x >= 0, sum x = r} (Duchi et al. 2008)."""
    u = np.sort(v)[::-1]
    css = np.cumsum(u) - r
    rho = np.nonzero(u - css / np.arange(1, v.size + 1) > 0)[0][-1]
    return np.maximum(v - css[rho] / (rho + 1), 0.0)


def l1_ref(v, r):
    if np.abs(v).sum() <= r:
        return v.copy()
    return np.sign(v) * simplex_ref(np.abs(v), r)


def capped_ref(v, r):
    x = np.maximum(v, 0.0)
    return x if x.sum() <= r else simplex_ref(v, r)


def group_ref(v, groups, r, q):
    norms = np.sqrt(np.bincount(groups, weights=v * v))
    if q == 1:
        new = norms if norms.sum() <= r else simplex_ref(norms, r)
    else:
        new = np.minimum(norms, r)
    scale = np.divide(new, norms, out=np.zeros_like(norms), where=norms > 0)
    return v * scale[groups]


def l1_l2_ref(v, r1, r2):
    """Projection onto {||x||_1 <= r1, ||x||_2 <= r2}: x = s(tau)*min(1, r2/||s(tau)||) with
    s the soft threshold and tau >= 0 the smallest value giving ||x||_1 <= r1 (bisection)."""
    def x_of(tau):
        s = np.sign(v) * np.maximum(np.abs(v) - tau, 0.0)
        n = np.linalg.norm(s)
        return s if n <= r2 else s * (r2 / n)
    if np.abs(x_of(0.0)).sum() <= r1:
        return x_of(0.0)
    a, b = 0.0, np.abs(v).max()
    for _ in range(200):
        m = 0.5 * (a + b)
        if np.abs(x_of(m)).sum() > r1:
            a = m
        else:
            b = m
    return x_of(b)


def brute_box_ball(z, lo, hi, r, kind):
    """Brute force over active patterns: every candidate is a feasible point, the projection is
    one of them, so the nearest feasible candidate is the projection."""
    best, best_d = None, np.inf
    states = ("lo", "hi", "free") if kind == 2 else ("lo", "hi", "zero", "free")
    for pattern in itertools.product(states, repeat=z.size):
        x = np.zeros(z.size)
        free = np.array([s == "free" for s in pattern])
        for i, s in enumerate(pattern):
            x[i] = {"lo": lo[i], "hi": hi[i]}.get(s, 0.0)
        cands = []
        if kind == 2:
            cands.append(np.where(free, z, x))
            c, sz = (x[~free] ** 2).sum(), (z[free] ** 2).sum()
            if sz > 0 and r * r >= c:
                cands.append(np.where(free, z * np.sqrt((r * r - c) / sz), x))
        else:
            cands.append(np.where(free, z, x))
            if free.any():
                tau = (np.abs(z[free]).sum() + np.abs(x[~free]).sum() - r) / free.sum()
                if tau >= 0:
                    cands.append(np.where(free, z - tau * np.sign(z), x))
        for cnd in cands:
            norm = np.linalg.norm(cnd) if kind == 2 else np.abs(cnd).sum()
            if np.all(cnd >= lo - 1e-12) and np.all(cnd <= hi + 1e-12) and \
                    norm <= r * (1 + 1e-12):
                dist = np.linalg.norm(cnd - z)
                if dist < best_d:
                    best, best_d = cnd, dist
    return best


# -- tests -----------------------------------------------------------------------------

@pytest.fixture
def points():
    return np.random.default_rng(0).standard_normal((30, D)) * 1.5


BOUNDS = (-np.array([0.3, 1.0, 0.0, 0.5, 2.0, 0.1]), np.array([0.4, 0.2, 1.0, 0.0, 1.5, 0.7]))

SINGLE = [
    (Box(*BOUNDS), lambda v: np.clip(v, *BOUNDS)),
    (NonNegative(), lambda v: np.maximum(v, 0)),
    (LInfBall(0.5), lambda v: np.clip(v, -0.5, 0.5)),
    (L2Ball(0.7), lambda v: v * min(1.0, 0.7 / np.linalg.norm(v))),
    (L1Ball(1.3), lambda v: l1_ref(v, 1.3)),
    (CappedSimplex(1.1), lambda v: capped_ref(v, 1.1)),
    (Simplex(1.0), lambda v: simplex_ref(v, 1.0)),
    (GroupNormBall(GROUPS, 1.2, q=1), lambda v: group_ref(v, GROUPS, 1.2, 1)),
    (GroupNormBall(GROUPS, 0.6, q=np.inf), lambda v: group_ref(v, GROUPS, 0.6, np.inf)),
    (L1Ball(1.2) & L2Ball(0.8), lambda v: l1_l2_ref(v, 1.2, 0.8)),
    # the orthant and a sign-symmetric ball: clip, then project onto the ball
    (NonNegative() & L1Ball(1.0) & L2Ball(0.7), lambda v: l1_l2_ref(np.maximum(v, 0), 1.0, 0.7)),
]


@pytest.mark.parametrize("cset, ref", SINGLE, ids=lambda s: repr(s)[:30])
def test_projection_matches_reference(cset, ref, points):
    for z in points:
        x = cset.project(z)
        np.testing.assert_allclose(x, ref(z), rtol=0, atol=1e-9)
        assert cset.contains(x)


@pytest.mark.parametrize("kind", [1, 2])
@pytest.mark.parametrize("bounds", [BOUNDS, (np.zeros(D), np.full(D, np.inf))])
def test_box_and_ball_match_brute_force(kind, bounds):
    rng = np.random.default_rng(kind)
    lo, hi = bounds[0][:5], bounds[1][:5]
    r = 0.9
    cset = Box(lo, hi) & (L2Ball(r) if kind == 2 else L1Ball(r))
    for _ in range(15):
        z = 1.5 * rng.standard_normal(5)
        np.testing.assert_allclose(cset.project(z), brute_box_ball(z, lo, hi, r, kind),
                                   rtol=0, atol=1e-9)


def test_dykstra_box_and_group_ball_is_optimal():
    """No closed form here: check the variational inequality <z - x, y - x> <= 0 on many
    feasible points y and agreement with cvxpy (SCS run to eps = 1e-12) to 1e-9."""
    cp = pytest.importorskip("cvxpy")
    cset = LInfBall(0.4) & GroupNormBall(GROUPS, 1.0)
    rng = np.random.default_rng(3)
    ys = [cset.project(2 * rng.standard_normal(D)) for _ in range(200)]
    for _ in range(5):
        z = 1.5 * rng.standard_normal(D)
        x = cset.project(z)
        assert cset.contains(x, tol=1e-12)
        assert max((z - x) @ (y - x) for y in ys) <= 1e-10
        v = cp.Variable(D)
        cons = [cp.abs(v) <= 0.4,
                sum(cp.norm2(v[GROUPS == g]) for g in range(3)) <= 1.0]
        cp.Problem(cp.Minimize(cp.sum_squares(v - z)), cons).solve(solver="SCS", eps=1e-12,
                                                                     max_iters=200000)
        np.testing.assert_allclose(x, v.value, atol=1e-9)


def test_restricted_kernel_equals_projection_of_sparse_vector():
    """project_kernel on the coordinates idx equals projecting the vector that is zero off idx."""
    rng = np.random.default_rng(4)
    for cset in [Box(*BOUNDS) & L2Ball(1.0), GroupNormBall(GROUPS, 0.8), CappedSimplex(0.5)]:
        idx = np.array([0, 2, 5])
        z = rng.standard_normal(3)
        out = np.empty(3)
        project_kernel(*cset.kernel_args(D), idx, z, out)
        full = np.zeros(D)
        full[idx] = z
        np.testing.assert_allclose(out, cset.project(full)[idx], atol=1e-12)


@pytest.mark.parametrize("cset", [NonNegative(), Box(*BOUNDS), L1Ball(0.9), L2Ball(0.7),
                                  Simplex(1.0), L1Ball(1.2) & L2Ball(0.8),
                                  GroupNormBall(GROUPS, 0.8),
                                  LInfBall(0.4) & GroupNormBall(GROUPS, 1.0)], ids=repr)
def test_family_kernel_args_project_like_the_general_form(cset):
    """kernel_args leaves out the parts a set lacks (fpar None for a box, groups None without a
    group ball); project_kernel must give the same result as with every part listed (infinite
    radii, all coordinates in group 0)."""
    lo, hi, fpar, ipar, groups = cset.kernel_args(D)
    assert (fpar is None) == cset.separable
    assert (groups is None) == (ipar[0] == 0)
    fpar_all = np.full(3, np.inf) if fpar is None else fpar
    groups_all = np.zeros(D, np.int64) if groups is None else groups
    ipar_all = np.array([ipar[0], ipar[1], max(ipar[2], 1)])
    rng = np.random.default_rng(6)
    idx = np.arange(D)
    for _ in range(5):
        z = 2 * rng.standard_normal(D)
        out, out_all = np.empty(D), np.empty(D)
        project_kernel(lo, hi, fpar, ipar, groups, idx, z, out)
        project_kernel(lo, hi, fpar_all, ipar_all, groups_all, idx, z, out_all)
        np.testing.assert_array_equal(out, out_all)
        np.testing.assert_array_equal(out, cset.project(z))


@pytest.mark.parametrize("cset", [NonNegative(), Box(*BOUNDS), L1Ball(0.9), L2Ball(0.7),
                                  Simplex(1.0), L1Ball(1.2) & L2Ball(0.8),
                                  GroupNormBall(GROUPS, 0.8),
                                  LInfBall(0.4) & GroupNormBall(GROUPS, 1.0)], ids=repr)
def test_uncompiled_projection_equals_compiled_bitwise(cset, monkeypatch):
    # a set's project runs the kernel uncompiled in few dimensions until compiled: the same
    # operations, so the same point, bit for bit
    from jitopt.sets import _sets

    rng = np.random.default_rng(7)
    for _ in range(5):
        z = 2 * rng.standard_normal(D)
        runs = []
        for uncompiled in (False, True):
            monkeypatch.setattr(_sets, "kernel_for", lambda kernel, ns, small,
                                u=uncompiled: ns[kernel.__name__] if u else kernel)
            runs.append(cset.project(z))
        np.testing.assert_array_equal(*runs)


SUPPORT_PRESERVING = [Box(*BOUNDS), NonNegative(), LInfBall(0.5), L2Ball(0.7), L1Ball(1.3),
                      CappedSimplex(1.1), GroupNormBall(GROUPS, 1.2),
                      GroupNormBall(GROUPS, 0.5, q=np.inf), NonNegative() & L2Ball(1.0),
                      Box(*BOUNDS) & L1Ball(0.8), L1Ball(1.2) & L2Ball(0.8),
                      LInfBall(0.4) & GroupNormBall(GROUPS, 1.0)]


@pytest.mark.parametrize("cset", SUPPORT_PRESERVING, ids=repr)
def test_support_preservation(cset):
    assert cset.support_preserving
    rng = np.random.default_rng(5)
    for _ in range(30):
        v = np.zeros(D)
        s = rng.choice(D, 3, replace=False)
        v[s] = 2 * rng.standard_normal(3)
        x = cset.project(v)
        assert set(np.flatnonzero(x)) <= set(s)


def test_simplex_is_not_support_preserving():
    s = Simplex(1.0)
    assert not s.support_preserving
    x = s.project(np.array([0.2, 0.0, 0.0]))
    np.testing.assert_allclose(x, [0.2 + 0.8 / 3, 0.8 / 3, 0.8 / 3], atol=1e-12)
    assert not Box(0.1, 1.0).support_preserving


def test_flags():
    assert LInfBall(1).symmetric and L1Ball(1).symmetric and L2Ball(1).symmetric
    assert not NonNegative().symmetric and NonNegative().separable
    assert Box(*BOUNDS).separable and not Box(*BOUNDS).permutation_invariant
    assert CappedSimplex(1).nonnegative and CappedSimplex(1).permutation_invariant
    assert not CappedSimplex(1).separable
    assert not GroupNormBall(GROUPS, 1).separable


def test_contains():
    c = NonNegative() & L1Ball(1.0)
    assert c.contains([0.5, 0.5]) and not c.contains([0.6, 0.5]) and not c.contains([-0.1, 0])
    assert Simplex(1).contains([0.25, 0.75]) and not Simplex(1).contains([0.25, 0.5])


def test_bad_input():
    with pytest.raises(ValueError, match="radius"):
        L2Ball(-1.0)
    with pytest.raises(TypeError, match="radius"):
        L1Ball("a")
    with pytest.raises(ValueError, match="empty"):
        Box(1.0, 0.0)
    with pytest.raises(ValueError, match="empty"):
        Box(1.0, 2.0) & L2Ball(0.5)
    with pytest.raises(ValueError, match="every label"):
        GroupNormBall([0, 2, 2], 1.0)
    with pytest.raises(ValueError, match="Simplex"):
        Intersection(Simplex(), L2Ball())
    with pytest.raises(ValueError, match="dimension"):
        Box(np.zeros(3), np.ones(3)).project(np.zeros(4))
    with pytest.raises(ValueError, match="finite"):
        L2Ball().project([np.nan, 1.0])


def test_user_array_not_modified():
    z = np.array([3.0, -2.0, 1.0])
    z0 = z.copy()
    (NonNegative() & L2Ball(1.0)).project(z)
    np.testing.assert_array_equal(z, z0)


def test_bad_set_arguments_are_named():
    from jitopt.sets import Box, L2Ball

    with pytest.raises(TypeError, match="lower"):
        Box("a")
    with pytest.raises(ValueError, match="lower must not be"):
        Box(np.inf, np.inf)
    with pytest.raises(ValueError, match="one dimension"):
        Box([0.0, 0.0]) & Box([0.0, 0.0, 0.0])
    with pytest.raises(TypeError, match="complex"):
        L2Ball(1.0).project(np.array([1 + 1j, 2.0]))
    with pytest.raises(ValueError, match="tol"):
        L2Ball(1.0).contains([0.1, 0.2], tol=-1.0)
    assert L2Ball(1.0).contains([0.6, 0.8]) and not L2Ball(1.0).contains([0.6, 0.81])


# -- sets outside the canonical form ------------------------------------------------------

def test_product_of_simplices_projection_is_optimal():
    """The projection p of z satisfies <z - p, q - p> <= 0 for every q in the set (checked on
    the vertices, which is enough) and agrees with the sort-based simplex reference."""
    from jitopt.sets import ProductOfSimplices

    rng = np.random.default_rng(3)
    P = ProductOfSimplices([2, 3, 1, 4])
    verts = [np.concatenate([np.eye(m)[a] for m, a in zip(P.sizes, idx)])
             for idx in itertools.product(*[range(m) for m in P.sizes])]
    for _ in range(20):
        z = 2.0 * rng.standard_normal(P.dim)
        keep = z.copy()
        p = P.project(z)
        np.testing.assert_array_equal(z, keep)
        assert P.contains(p, 1e-12)
        assert max((z - p) @ (q - p) for q in verts) <= 1e-12
        for lo, hi in zip(P.offsets[:-1], P.offsets[1:]):
            np.testing.assert_allclose(p[lo:hi], simplex_ref(z[lo:hi], 1.0), atol=1e-12)
    assert not P.contains(np.ones(P.dim))
    assert not P.contains(np.r_[-0.1, 1.1, verts[0][2:]])
    with pytest.raises(ValueError, match="length"):
        P.project(np.ones(3))
    with pytest.raises(ValueError, match="sizes"):
        ProductOfSimplices([2, 0])


def test_polytope_vertices_bounds_and_membership():
    from jitopt.sets import ConvexSet, Polytope

    # the triangle x, y >= 0, x + 2y <= 2 and a redundant cut x <= 3
    T = Polytope([[-1, 0], [0, -1], [1, 2], [1, 0]], [0, 0, 2, 3])
    V = T.vertices()
    assert sorted(map(tuple, np.round(V, 12))) == [(0.0, 0.0), (0.0, 1.0), (2.0, 0.0)]
    np.testing.assert_allclose(T.lower, [0, 0], atol=1e-9)
    np.testing.assert_allclose(T.upper, [2, 1], atol=1e-9)
    assert T.contains(np.array([1.0, 0.5])) and not T.contains(np.array([1.0, 0.6]))
    assert not isinstance(T, ConvexSet)  # no exact projection is offered
    with pytest.raises(ValueError, match="empty"):
        Polytope([[1.0], [-1.0]], [0.0, -1.0])
    with pytest.raises(ValueError, match="unbounded"):
        Polytope([[1.0, 0.0], [0.0, 1.0]], [1.0, 1.0])


def test_sets_load_no_lp_solver_or_sparse_matrices():
    """jitopt.sets loads scipy.optimize.linprog only when a Polytope is built and never
    scipy.sparse: no module of the package imports scipy at its top level."""
    import ast
    import pathlib

    import jitopt.sets

    sources = sorted(pathlib.Path(jitopt.sets.__file__).parent.glob("*.py"))
    assert len(sources) >= 4  # the package and its modules by concern
    for path in sources:
        tree = ast.parse(path.read_text())
        for node in tree.body:
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            assert not any(name.startswith("scipy") for name in names), (path.name, names)
    # the lazy import still works
    assert jitopt.sets.Polytope([[1.0], [-1.0]], [1.0, 1.0]).upper[0] == pytest.approx(1.0)


# -- never a silently wrong answer ------------------------------------------------------------

@pytest.mark.parametrize("cset, z, expected", [
    (Simplex(), [1e16], [1.0]),
    (L1Ball(2.0), [1.8e16], [2.0]),
    (L1Ball(2.0), [-1.8e16, 1e16], [-2.0, 0.0]),
    (L2Ball(1.0), [1e160, 1e160], [np.sqrt(0.5)] * 2),
    (L2Ball(1e-300), [3e-300, 4e-300], [6e-301, 8e-301]),
    (L2Ball(1.0), [1e-300, 0.0], [1e-300, 0.0]),
    (CappedSimplex(1.0), [1e300, 1e300], [0.5, 0.5]),
    (Simplex(1e-300), [1.0, 1.0], [5e-301, 5e-301]),
    (Simplex(), [1e308, -1e308, 1e308], [0.5, 0.0, 0.5]),
    (GroupNormBall([0, 0, 1], 1.0), [1e200, 1e200, 0.0], [np.sqrt(0.5)] * 2 + [0.0]),
    (GroupNormBall([0, 0, 1], 1.0, q=np.inf), [3e-300, 4e-300, 1e-301], [3e-300, 4e-300, 1e-301]),
    (L1Ball(1.0) & L2Ball(0.5), [1e300, 0.0, 0.0], [0.5, 0.0, 0.0]),
], ids=repr)
def test_extreme_scales_give_the_right_answer(cset, z, expected):
    x = cset.project(np.array(z))
    np.testing.assert_allclose(x, expected, rtol=1e-12, atol=0)


def test_group_ball_on_huge_entries_is_finite_and_in_the_set():
    g = GroupNormBall([0, 0, 1, 1], 1.0)
    x = g.project(np.full(4, 1e200))
    np.testing.assert_allclose(x, np.full(4, 0.5 / np.sqrt(2)), rtol=1e-12)
    assert g.contains(x, tol=1e-12)
    assert not g.contains(np.full(4, 1e200)) and not L2Ball(1.0).contains([1e200, 1e200])


@pytest.mark.parametrize("cset, d", [(Box(lower=0.6) & L2Ball(1.0), 3),
                                     (Box(lower=0.6) & L1Ball(1.0), 2),
                                     (Box(lower=-1.0, upper=-0.2) & L2Ball(1.0), 26),
                                     (Simplex(), 0)], ids=repr)
def test_empty_intersections_are_reported(cset, d):
    with pytest.raises(ValueError, match="empty"):
        cset.project(np.zeros(d))
    with pytest.raises(ValueError, match="empty"):
        cset.contains(np.zeros(d))
    with pytest.raises(ValueError, match="empty"):
        cset.kernel_args(d)


def test_empty_sets_of_fixed_dimension_are_refused_when_built():
    with pytest.raises(ValueError, match="empty"):
        Box(-1.0, -0.2) & GroupNormBall([0, 1, 2], 0.5)   # group norms sum to 0.6
    with pytest.raises(ValueError, match="empty"):
        Box(0.5, 1.0) & GroupNormBall([0, 1, 1], 0.6, np.inf)   # group 1 has norm 0.707
    with pytest.raises(ValueError, match="empty"):
        Box(np.full(3, 0.6)) & L2Ball(1.0)


def test_nonempty_edge_cases_still_project():
    # the box point nearest 0 is exactly on the sphere: the set is that point
    s = Box(lower=0.6) & L2Ball(np.sqrt(2 * 0.36))
    np.testing.assert_allclose(s.project(np.zeros(2)), [0.6, 0.6], rtol=1e-15)
    assert (Box(lower=0.6) & L2Ball(1.0)).contains([0.6, 0.6])


def test_project_kernel_refuses_bad_indices_and_lengths():
    lo, hi, fpar, ipar, groups = (L2Ball(1.0)).kernel_args(3)
    with pytest.raises(ValueError, match="idx"):
        project_kernel(lo, hi, fpar, ipar, groups, np.array([3]), np.ones(1), np.empty(1))
    with pytest.raises(ValueError, match="idx"):
        project_kernel(lo, hi, fpar, ipar, groups, np.array([-1]), np.ones(1), np.empty(1))
    with pytest.raises(ValueError, match="out"):
        project_kernel(lo, hi, fpar, ipar, groups, np.arange(3), np.ones(3), np.empty(2))
    with pytest.raises(ValueError, match="lo and hi"):
        project_kernel(lo, hi[:2], fpar, ipar, groups, np.arange(2), np.ones(2), np.empty(2))
    args = GroupNormBall([0, 1, 1], 1.0).kernel_args(3)
    bad = args[:2] + (args[2], np.array([1, 0, 1]), args[4])  # 1 group declared, label 1 used
    with pytest.raises(ValueError, match="groups"):
        project_kernel(*bad, np.arange(3), np.ones(3), np.empty(3))


@pytest.mark.parametrize("make, err, match", [
    (lambda: ProductOfSimplices([2.5]), TypeError, "sizes"),
    (lambda: ProductOfSimplices("12"), TypeError, "sizes"),
    (lambda: ProductOfSimplices([True, 2]), TypeError, "sizes"),
    (lambda: ProductOfSimplices(3), TypeError, "sizes"),
    (lambda: ProductOfSimplices([2, 0]), ValueError, "sizes"),
    (lambda: L2Ball(np.nan), ValueError, "radius"),
    (lambda: L1Ball(np.inf), ValueError, "radius"),
    (lambda: L2Ball(1j), TypeError, "radius"),
    (lambda: Box(np.nan), ValueError, "lower"),
    (lambda: Box(0.0, [1j, 1.0]), TypeError, "upper"),
    (lambda: Box("0"), TypeError, "lower"),
    (lambda: L2Ball().contains([0.0], tol=np.nan), ValueError, "tol"),
    (lambda: L2Ball().contains([0.0], tol=np.inf), ValueError, "tol"),
    (lambda: ProductOfSimplices([2]).contains([0.5, 0.5], tol=np.nan), ValueError, "tol"),
    (lambda: L2Ball().project([1.0 + 1j]), TypeError, "x"),
    (lambda: ProductOfSimplices([2]).project([1.0, 1j]), TypeError, "x"),
    (lambda: Simplex().project(["1", "2"]), TypeError, "x"),
    (lambda: ConvexSet(r2=np.nan), ValueError, "r2"),
    (lambda: ConvexSet(gq=3), ValueError, "gq"),
    (lambda: Polytope([[1j]], [1.0]), TypeError, "A"),
    (lambda: ConvexSet(groups=[0.5, 0.0], gq=1, rg=1.0), TypeError, "groups"),
    (lambda: ConvexSet(groups=[0, 2], gq=1, rg=1.0), ValueError, "groups"),
    (lambda: GroupNormBall([0, 1], q=True), ValueError, "q"),
], ids=range(23))
def test_bad_parameters_are_refused(make, err, match):
    with pytest.raises(err, match=match):
        make()


def test_product_of_simplices_accepts_numpy_integers_and_keeps_input():
    P = ProductOfSimplices(np.array([2, 1]))
    z = np.array([1e16, 0.0, 5.0])
    x = P.project(z)
    np.testing.assert_array_equal(z, [1e16, 0.0, 5.0])
    np.testing.assert_allclose(x, [1.0, 0.0, 1.0])
