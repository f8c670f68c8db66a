"""Adversarial property tests of every public set: extreme scales, odd dtypes and layouts.

Every call either returns a finite point of the set (idempotent under a second projection,
equal to the scaled projection of the scale-1 problem) or raises ValueError/TypeError naming
the argument; the caller's array is never modified.
"""

import collections

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jitopt.sets import (Box, CappedSimplex, GroupNormBall, L1Ball, L2Ball, LInfBall,
                         NonNegative, Polytope, ProductOfSimplices, Simplex, project_kernel)

GROUPS = np.array([0, 0, 1, 1, 1, 2])
LO = np.array([-0.5, -1.0, 0.0, -2.0, -0.3, -1.0])
HI = np.array([0.5, 1.0, 2.0, 0.1, 0.3, 1.0])

# each family at scale s: radii and bounds times s (a power of two, so scaling is exact)
FAMILIES = {
    "Box": lambda s: Box(LO * s, HI * s),
    "NonNegative": lambda s: NonNegative(),
    "LInfBall": lambda s: LInfBall(0.7 * s),
    "L1Ball": lambda s: L1Ball(0.9 * s),
    "L2Ball": lambda s: L2Ball(0.7 * s),
    "CappedSimplex": lambda s: CappedSimplex(0.5 * s),
    "Simplex": lambda s: Simplex(1.0 * s),
    "GroupNormBall(q=1)": lambda s: GroupNormBall(GROUPS, 0.8 * s),
    "GroupNormBall(q=inf)": lambda s: GroupNormBall(GROUPS, 0.5 * s, q=np.inf),
    "Box & L2Ball": lambda s: Box(LO * s, HI * s) & L2Ball(0.6 * s),
    "Box & L1Ball": lambda s: Box(LO * s, HI * s) & L1Ball(0.8 * s),
    "L1Ball & L2Ball": lambda s: L1Ball(1.2 * s) & L2Ball(0.8 * s),
    "LInfBall & GroupNormBall": lambda s: LInfBall(0.4 * s) & GroupNormBall(GROUPS, 1.0 * s),
    "NonNegative & L2Ball & L1Ball": lambda s: NonNegative() & L2Ball(s) & L1Ball(1.1 * s),
}
FIXED_DIM = {"Box", "GroupNormBall(q=1)", "GroupNormBall(q=inf)", "Box & L2Ball",
             "Box & L1Ball", "LInfBall & GroupNormBall"}
COUNTS = collections.Counter()
SETTINGS = settings(max_examples=60, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])
NAMES = sorted(FAMILIES)


@pytest.fixture(scope="module", autouse=True)
def report_counts():
    yield
    print("\ngenerated cases per entry point:", dict(sorted(COUNTS.items())))


def scaled_normals(draw, d, exponent):
    seed = draw(st.integers(0, 2**32 - 1))
    z = np.random.default_rng(seed).standard_normal(d)
    return np.ldexp(z, exponent)


def layout(draw, z):
    """z as drawn: contiguous, strided (every other entry of a longer array) or reversed."""
    kind = draw(st.sampled_from(["plain", "strided", "reversed"]))
    if kind == "strided":
        big = np.empty(2 * z.size)
        big[::2] = z
        return big[::2]
    if kind == "reversed":
        return z[::-1].copy()[::-1]
    return z


@pytest.mark.parametrize("name", NAMES)
@SETTINGS
@given(k=st.integers(-990, 990), data=st.data())
def test_projection_is_in_the_set_idempotent_and_scale_equivariant(name, k, data):
    """Pi_{sC}(s z) = s Pi_C(z) for a power of two s = 2^k: the scaled arithmetic gives the
    answer of the scale-1 problem at 1e+-298, where squares and sums would overflow or
    underflow."""
    COUNTS[name + ".project"] += 1
    d = 6 if name in FIXED_DIM else data.draw(st.integers(1, 7))
    base, cset = FAMILIES[name](1.0), FAMILIES[name](np.ldexp(1.0, k))
    z1 = scaled_normals(data.draw, d, 1)
    z = layout(data.draw, np.ldexp(z1, k))
    before = z.copy()
    x = cset.project(z)
    np.testing.assert_array_equal(z, before)
    assert np.isfinite(x).all() and x.shape == (d,)
    s = np.ldexp(1.0, k)
    ref = base.project(z1)
    # relative to the scale; subnormal scales lose bits of the smallest entries only
    np.testing.assert_allclose(np.ldexp(x, -k), ref, rtol=1e-11,
                               atol=1e-11 + np.ldexp(1e-300, -k))
    assert cset.contains(x, tol=1e-9) and base.contains(np.ldexp(x, -k), tol=1e-9)
    np.testing.assert_allclose(cset.project(x), x, rtol=0, atol=1e-9 * (np.abs(x).max() + s))


@pytest.mark.parametrize("name", NAMES)
@SETTINGS
@given(kset=st.integers(-300, 300), kz=st.integers(-300, 300),
       dtype=st.sampled_from(["float64", "int64", "object", "float32"]), data=st.data())
def test_projection_at_unrelated_scales_and_dtypes(name, kset, kz, dtype, data):
    """The set and the input at independent scales 1e-300..1e300, any real dtype: a finite
    point of the set, idempotent, input untouched."""
    COUNTS[name + ".project"] += 1
    d = 6 if name in FIXED_DIM else data.draw(st.integers(0, 7))
    s = 10.0 ** kset
    cset = FAMILIES[name](s)
    z = scaled_normals(data.draw, d, 0) * 10.0 ** kz
    if dtype == "int64":
        z = np.clip(np.round(z), -1e18, 1e18).astype(np.int64)
    elif dtype == "float32":
        with np.errstate(over="ignore"):
            z = z.astype(np.float32)
        z[~np.isfinite(z)] = 0
    elif dtype == "object":
        z = z.astype(object)
    z = layout(data.draw, z) if dtype != "object" else z
    before = z.copy()
    try:
        x = cset.project(z)
    except ValueError as e:  # only the empty simplex in dimension 0
        assert name == "Simplex" and d == 0 and "empty" in str(e)
        return
    np.testing.assert_array_equal(z, before)
    assert x.dtype == np.float64 and np.isfinite(x).all() and x.shape == (d,)
    assert cset.contains(x, tol=1e-9)
    scale = np.abs(x).max(initial=0.0) + s
    np.testing.assert_allclose(cset.project(x), x, rtol=0, atol=1e-9 * scale)


BAD_INPUTS = [
    ("nan", np.array([np.nan] * 6), ValueError),
    ("inf", np.array([np.inf] + [0.0] * 5), ValueError),
    ("complex", np.ones(6) + 1j, TypeError),
    ("text", np.array(["1"] * 6), TypeError),
    ("text object", np.array(["1"] * 6, dtype=object), TypeError),
    ("2-D", np.ones((2, 3)), ValueError),
    ("scalar", 1.0, ValueError),
    ("wrong length", np.ones(9), ValueError),
    ("none", None, (TypeError, ValueError)),
]


@pytest.mark.parametrize("name", NAMES + ["ProductOfSimplices", "Polytope"])
@settings(SETTINGS, max_examples=25)
@given(i=st.sampled_from(range(len(BAD_INPUTS))), method=st.sampled_from(["project", "contains"]))
def test_bad_input_raises_naming_x(name, i, method):
    label, z, err = BAD_INPUTS[i]
    if name == "Polytope":
        method = "contains"
    COUNTS[f"{name}.{method} (bad)"] += 1
    cset = SPECIAL[name] if name in SPECIAL else FAMILIES[name](1.0)
    if label == "wrong length" and name not in FIXED_DIM and name not in SPECIAL:
        return  # any length is valid for a set of free dimension
    with pytest.raises(err, match="x"):
        getattr(cset, method)(z)


@pytest.mark.parametrize("name", NAMES)
@settings(SETTINGS, max_examples=10)
@given(tol=st.sampled_from([np.nan, np.inf, -1.0, 1j, "1e-9", None, True]))
def test_bad_tolerance_raises_naming_tol(name, tol):
    COUNTS[name + ".contains (bad tol)"] += 1
    with pytest.raises((ValueError, TypeError), match="tol"):
        FAMILIES[name](1.0).contains(np.zeros(6), tol=tol)


SPECIAL = {"ProductOfSimplices": ProductOfSimplices([2, 3, 1]),
           "Polytope": Polytope([[1, 1, 1, 1, 1, 1]] + (-np.eye(6)).tolist(), [1] + [0] * 6)}


@settings(SETTINGS, max_examples=200)
@given(st.integers(-300, 300), st.data())
def test_product_of_simplices(kz, data):
    COUNTS["ProductOfSimplices.project"] += 1
    P = SPECIAL["ProductOfSimplices"]
    z = layout(data.draw, scaled_normals(data.draw, 6, 0) * 10.0 ** kz)
    before = z.copy()
    x = P.project(z)
    np.testing.assert_array_equal(z, before)
    assert np.isfinite(x).all() and P.contains(x, tol=1e-12)
    np.testing.assert_allclose(P.project(x), x, atol=1e-15)
    # a block's projection ignores a common shift of its entries
    shifted = z + np.repeat([3.0, -2.0, 7.0], [2, 3, 1])
    np.testing.assert_allclose(P.project(shifted), x, atol=1e-12 * (1 + 10.0 ** min(kz, 0)))


@settings(SETTINGS, max_examples=200)
@given(st.integers(-300, 300), st.data())
def test_polytope_contains(kz, data):
    """The simplex-like polytope {x >= 0, sum x <= 1} agrees with CappedSimplex(1)."""
    COUNTS["Polytope.contains"] += 1
    z = layout(data.draw, np.abs(scaled_normals(data.draw, 6, 0)) * 10.0 ** kz / 6)
    assert SPECIAL["Polytope"].contains(z, tol=0.0) == CappedSimplex(1.0).contains(z, tol=0.0)


@pytest.mark.parametrize("name", NAMES)
@SETTINGS
@given(data=st.data())
def test_project_kernel_checks_its_indices(name, data):
    """Out-of-range indices and short outputs raise ValueError instead of reading or writing
    past the arrays; in-range calls equal the projection of the vector zero off idx (for the
    support-preserving sets)."""
    COUNTS["project_kernel"] += 1
    cset = FAMILIES[name](1.0)
    d = 6
    args = cset.kernel_args(d)
    m = data.draw(st.integers(0, 4))
    idx = np.array(data.draw(st.lists(st.integers(-3, 9), min_size=m, max_size=m)),
                   dtype=np.int64)
    z = scaled_normals(data.draw, m, 0)
    nout = data.draw(st.sampled_from([m, max(m - 1, 0), m + 1]))
    out = np.zeros(nout)
    if nout != m or ((idx < 0) | (idx >= d)).any():
        with pytest.raises(ValueError, match="project_kernel"):
            project_kernel(*args, idx, z, out)
        return
    project_kernel(*args, idx, z, out)
    assert np.isfinite(out).all()
    if cset.support_preserving and np.unique(idx).size == m:
        full = np.zeros(d)
        full[idx] = z
        np.testing.assert_allclose(out, cset.project(full)[idx], atol=1e-10)


@pytest.mark.parametrize("name", NAMES)
@settings(SETTINGS, max_examples=20)
@given(kset=st.integers(-300, 300), data=st.data())
def test_entries_near_the_largest_double(name, kset, data):
    """Entries up to 1.79e308, where a sum of two or a norm overflows: still a finite point
    of the set, idempotent."""
    COUNTS[name + ".project"] += 1
    cset = FAMILIES[name](10.0 ** kset)
    seed = data.draw(st.integers(0, 2**32 - 1))
    z = np.random.default_rng(seed).uniform(-1.0, 1.0, 6) * 1.79e308
    x = cset.project(z)
    assert np.isfinite(x).all() and cset.contains(x, tol=1e-9)
    scale = np.abs(x).max(initial=0.0) + 10.0 ** kset
    np.testing.assert_allclose(cset.project(x), x, rtol=0, atol=1e-9 * scale)


ARGUMENTS = ("lo", "hi", "fpar", "ipar", "groups", "idx", "z", "out")


@pytest.mark.parametrize("name", NAMES)
@settings(SETTINGS, max_examples=30)
@given(which=st.sampled_from(ARGUMENTS),
       bad=st.sampled_from(["float", "int32-float", "list", "2-D", "complex", "scalar"]))
def test_project_kernel_names_an_argument_of_the_wrong_type(name, which, bad):
    """From Python, an argument of another type or dtype (a float ``idx``, a list, a
    complex ``z``) is refused by name, not with a Numba typing error; a legal call is the
    set's projection."""
    COUNTS["project_kernel(types)"] += 1
    cset = FAMILIES[name](1.0)
    args = dict(zip(ARGUMENTS, cset.kernel_args(6) + (np.arange(6), np.linspace(-2, 2, 6),
                                                      np.empty(6))))
    a = args[which]
    if a is None:  # absent part of this family: None is the legal value, nothing to spoil
        return
    args[which] = {"float": a.astype(float) + 0.5, "int32-float": a.astype(np.float32),
                   "list": a.tolist(), "2-D": a[None, :], "complex": a + 1j,
                   "scalar": a[0]}[bad]
    if bad == "float" and a.dtype.kind == "f":
        args[which] = np.zeros(a.shape, np.int64)  # integers where floats are wanted
    with pytest.raises(TypeError, match=f"project_kernel: {which} must be"):
        project_kernel(*args.values())


@pytest.mark.parametrize("value", [1j, [0.0, 1j], np.array([0j]), np.array([1.0 + 0j])])
@pytest.mark.parametrize("bound", ["lower", "upper"])
def test_box_refuses_complex_bounds(value, bound):
    """A complex bound was cast to its real part (with a ComplexWarning at most)."""
    COUNTS["Box(complex)"] += 1
    kwargs = {"lower": -np.inf, "upper": np.inf, bound: value}
    with pytest.raises(TypeError, match=f"{bound} must be a real number"):
        Box(**kwargs)


@pytest.mark.parametrize("name", ["Box", "Box & L2Ball", "NonNegative & L1Ball"])
def test_sets_in_dimension_zero(name):
    """The 0-dimensional sets are legal (a point): projection and membership of the empty
    vector, and an EVI over such a box, whose gap is 0."""
    COUNTS["dimension 0"] += 1
    cset = {"Box": Box([], []), "Box & L2Ball": Box([], []) & L2Ball(1.0),
            "NonNegative & L1Ball": NonNegative() & L1Ball(1.0)}[name]
    assert cset.project([]).shape == (0,) and cset.contains(np.zeros(0))
    with pytest.raises(ValueError, match="x must have length 0"):
        Box([], []).project([1.0])
    if name == "Box":
        from jitopt.problems import VIProblem
        from jitopt.solvers import evi

        res = evi(VIProblem(lambda x: x, cset), tol=1e-6)
        assert res.success and res.x.shape == (0,) and res.gap == 0.0


@pytest.mark.parametrize("seed, scale", [(34623, 1e8), (135, 1e20)])
def test_l1_projection_stays_in_the_ball_at_large_inputs(seed, scale):
    # the largest input clipped by the box, the others far above the radius: at 1e8 the one
    # free entry used to carry the rounding of 1e8 (an l1 norm 3e-9 above the radius); at
    # 1e20 the threshold's bracket is one ulp wide and its midpoint gave a norm of 2.3
    cset = FAMILIES["Box & L1Ball"](1.0)
    z = np.random.default_rng(seed).standard_normal(6) * scale
    x = cset.project(z)
    assert np.abs(x).sum() <= 0.8 and cset.contains(x, tol=1e-12)
    np.testing.assert_allclose(cset.project(x), x, rtol=0, atol=1e-15)
