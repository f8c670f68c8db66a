"""Manifold contract, gradient checks, closed forms and bad input for jitopt.manifolds."""

import re

import numpy as np
import pytest
import scipy.linalg

import jitopt
from jitopt.manifolds import SPD, Euclidean, Grassmann, Orthogonal, Sphere, Stiefel
from jitopt.testing import check_gradient, check_manifold

MANIFOLDS = (
    [Euclidean(3, 2), Sphere(5), Sphere(3, 2), Sphere(5, retraction="exp")]
    + [Stiefel(7, 3, retraction=r) for r in Stiefel.retractions]
    + [Grassmann(6, 2, retraction=r) for r in Grassmann.retractions]
    + [Orthogonal(4, retraction=r) for r in Orthogonal.retractions]
    + [Orthogonal(4, special=True)]
    + [SPD(4, retraction=r) for r in SPD.retractions]
)


def _id(m):
    return f"{m}-{m.retraction_name}" if m.retraction_name else str(m)


every_manifold = pytest.mark.parametrize("manifold", MANIFOLDS, ids=_id)


# -- the contract --------------------------------------------------------------------------


@every_manifold
def test_contract(manifold):
    """random_point and 1000 retraction steps stay on the manifold to 1e-12; R(x, 0) = x;
    d/dt R(x, tu) at 0 is u; projection idempotent into the tangent space; transport into
    the target tangent space; metric consistent; exp/log/dist agree where they exist."""
    check_manifold(manifold, rng=0, n_steps=1000, atol=1e-12)


# -- Riemannian gradients along retraction curves -----------------------------------------


def _problem(manifold, rng, wrong=1.0):
    """A nontrivial smooth cost with its Euclidean gradient (times ``wrong``)."""
    if isinstance(manifold, SPD):
        # f(X) = tr(AX) - log det X
        a = manifold.random_point(rng)
        return jitopt.Problem(
            manifold,
            lambda x: np.trace(a @ x) - np.linalg.slogdet(x)[1],
            lambda x: wrong * (a - np.linalg.inv(x)),
        )
    if isinstance(manifold, Grassmann):
        # f(X) = tr(XᵀAX) + ½‖XᵀBX‖², invariant under X -> XQ
        g, h = rng.standard_normal((2, manifold.n, manifold.n))
        a, b = g + g.T, h + h.T

        def cost(x):
            m = x.T @ b @ x
            return np.trace(x.T @ a @ x) + 0.5 * np.sum(m * m)

        return jitopt.Problem(
            manifold, cost, lambda x: wrong * (2 * a @ x + 2 * b @ x @ (x.T @ b @ x))
        )
    # f(X) = tr(CᵀX) + ¼ Σ X_ij⁴
    c = rng.standard_normal(manifold.shape)
    return jitopt.Problem(
        manifold,
        lambda x: np.sum(c * x) + 0.25 * np.sum(x**4),
        lambda x: wrong * (c + x**3),
    )


@every_manifold
@pytest.mark.parametrize("seed", [0, 1])
def test_gradient_slope_two(manifold, seed):
    rng = np.random.default_rng(seed)
    res = check_gradient(_problem(manifold, rng), rng=rng)
    assert abs(res.slope - 2.0) < 0.1, res
    assert res.fit.sum() >= 3


@every_manifold
def test_wrong_gradient_slope_one(manifold):
    """The checker can fail: a gradient off by a factor 1.5 gives a slope near 1."""
    rng = np.random.default_rng(3)
    res = check_gradient(_problem(manifold, rng, wrong=1.5), rng=rng)
    assert abs(res.slope - 1.0) < 0.1, res


def test_check_gradient_result_and_inputs():
    m = Stiefel(5, 2)
    rng = np.random.default_rng(0)
    problem = _problem(m, rng)
    x = m.random_point(rng)
    d = m.random_tangent_vector(x, rng)
    x0, d0 = x.copy(), d.copy()
    res = check_gradient(problem, x=x, d=d)
    np.testing.assert_array_equal(x, x0)
    np.testing.assert_array_equal(d, d0)
    np.testing.assert_allclose(np.diff(np.log10(res.t)), 8 / 50)
    assert res.t[0] == pytest.approx(1e-8) and res.t[-1] == pytest.approx(1.0)
    # the remainder at t = 1 recomputed by hand
    f1 = problem.cost(m.retraction(x, d))
    r1 = abs(f1 - problem.cost(x) - m.inner_product(x, problem.rgrad(x), d))
    assert res.remainder[-1] == pytest.approx(r1, rel=1e-12)
    # the same seed gives the same check
    a = check_gradient(problem, rng=5)
    b = check_gradient(problem, rng=5)
    np.testing.assert_array_equal(a.remainder, b.remainder)


def test_check_gradient_inconclusive_when_cost_is_linear():
    """A linear cost on Euclidean space has a zero remainder: no slope, not a fake 2."""
    c = np.arange(6.0).reshape(3, 2)
    problem = jitopt.Problem(Euclidean(3, 2), lambda x: np.sum(c * x), lambda x: c)
    res = check_gradient(problem, rng=0)
    assert np.isnan(res.slope)
    assert not res.fit.any()


def test_check_gradient_bad_input():
    m = Sphere(4)
    problem = _problem(m, np.random.default_rng(0))
    x = m.random_point(1)
    with pytest.raises(ValueError, match=r"^x is not a point of Sphere\(4\)"):
        check_gradient(problem, x=2 * x)
    with pytest.raises(ValueError, match=r"^d is not tangent"):
        check_gradient(problem, x=x, d=x)
    with pytest.raises(TypeError, match="problem must be a jitopt.Problem"):
        check_gradient(m)


# -- closed forms --------------------------------------------------------------------------


def test_spd_exp_log_invert_each_other():
    m = SPD(4)
    rng = np.random.default_rng(0)
    x, y = m.random_point(rng), m.random_point(rng)
    u = m.log(x, y)
    np.testing.assert_allclose(m.exp(x, u), y, rtol=0, atol=1e-12 * np.linalg.norm(y))
    v = 2.0 * m.random_tangent_vector(x, rng)
    np.testing.assert_allclose(m.log(x, m.exp(x, v)), v, rtol=0, atol=1e-11)
    # against scipy: exp_X(U) = X expm(X⁻¹U), dist = ‖logm(X^-½ Y X^-½)‖_F
    np.testing.assert_allclose(
        m.exp(x, v), x @ scipy.linalg.expm(np.linalg.solve(x, v)), rtol=1e-11, atol=1e-12
    )
    xs = scipy.linalg.sqrtm(x).real
    xis = np.linalg.inv(xs)
    d = np.linalg.norm(scipy.linalg.logm(xis @ y @ xis).real)
    assert m.dist(x, y) == pytest.approx(d, rel=1e-10)
    assert m.norm(x, u) == pytest.approx(d, rel=1e-10)


def test_spd_parallel_transport_is_an_isometry():
    m = SPD(4)
    rng = np.random.default_rng(1)
    x, y = m.random_point(rng), m.random_point(rng)
    u, v = m.random_tangent_vector(x, rng), m.random_tangent_vector(x, rng)
    tu, tv = m.transport(x, y, u), m.transport(x, y, v)
    np.testing.assert_allclose(tu, tu.T, atol=1e-14)
    assert m.inner_product(y, tu, tv) == pytest.approx(m.inner_product(x, u, v), abs=1e-12)
    assert m.norm(y, tu) == pytest.approx(1.0, abs=1e-12)
    # transport along the geodesic carries its velocity: T(log_x y) = -log_y x
    np.testing.assert_allclose(m.transport(x, y, m.log(x, y)), -m.log(y, x), atol=1e-11)
    np.testing.assert_allclose(m.transport(x, x, u), u, atol=1e-13)


def test_sphere_exp_log_dist():
    m = Sphere(5)
    rng = np.random.default_rng(0)
    x, y = m.random_point(rng), m.random_point(rng)
    np.testing.assert_allclose(m.exp(x, m.log(x, y)), y, atol=1e-14)
    assert m.dist(x, y) == pytest.approx(np.arccos(x @ y), rel=1e-12)
    assert m.norm(x, m.log(x, y)) == pytest.approx(np.arccos(x @ y), rel=1e-12)
    # a geodesic of length pi/2 is a quarter great circle
    u = m.random_tangent_vector(x, rng)
    np.testing.assert_allclose(m.exp(x, np.pi / 2 * u), u, atol=1e-14)


def test_grassmann_exp_log_dist():
    m = Grassmann(6, 2)
    rng = np.random.default_rng(0)
    x, y = m.random_point(rng), m.random_point(rng)
    z = m.exp(x, m.log(x, y))
    # same subspace: equal orthogonal projectors
    np.testing.assert_allclose(z @ z.T, y @ y.T, atol=1e-12)
    angles = scipy.linalg.subspace_angles(x, y)
    assert m.dist(x, y) == pytest.approx(np.linalg.norm(angles), rel=1e-10)
    assert m.norm(x, m.log(x, y)) == pytest.approx(np.linalg.norm(angles), rel=1e-10)
    # small angles keep their digits (arccos of the cosines alone would give 2e-4 here)
    u = m.random_tangent_vector(x, rng)
    assert m.dist(x, m.exp(x, 1e-6 * u)) == pytest.approx(1e-6, rel=1e-8)
    # the distance depends on the subspaces only, not on the bases
    q = scipy.linalg.qr(rng.standard_normal((2, 2)))[0]
    assert m.dist(x @ q, y) == pytest.approx(m.dist(x, y), rel=1e-10)


@pytest.mark.parametrize("retraction", Orthogonal.retractions)
def test_orthogonal_retractions_keep_det(retraction):
    m = Orthogonal(4, retraction=retraction)
    rng = np.random.default_rng(0)
    x = m.random_point(rng)
    if np.linalg.det(x) > 0:
        x[:, 0] = -x[:, 0]  # start in the component det X = -1
    for _ in range(200):
        x = m.retraction(x, 1.5 * m.random_tangent_vector(x, rng))
    assert np.linalg.det(x) == pytest.approx(-1.0, abs=1e-12)
    sx = Orthogonal(4, special=True, retraction=retraction)
    y = sx.random_point(rng)
    for _ in range(200):
        y = sx.retraction(y, 1.5 * sx.random_tangent_vector(y, rng))
    sx.check_point(y, atol=1e-12)
    assert np.linalg.det(y) == pytest.approx(1.0, abs=1e-12)


def test_orthogonal_random_point_det():
    special = [np.linalg.det(Orthogonal(4, special=True).random_point(s)) for s in range(20)]
    np.testing.assert_allclose(special, 1.0, atol=1e-12)
    # O(n) itself has both components: random points land in both
    dets = [np.linalg.det(Orthogonal(4).random_point(s)) for s in range(20)]
    assert min(dets) == pytest.approx(-1.0) and max(dets) == pytest.approx(1.0)


# -- the checker itself can fail -----------------------------------------------------------


def _unit(a):
    return a / np.linalg.norm(a)


class _NoNormalise(Sphere):
    def retraction(self, x, u):
        return x + u


class _OffSphereStart(Sphere):
    def random_point(self, rng=None):
        return 1.001 * super().random_point(rng)


class _ShiftedAtZero(Sphere):
    def retraction(self, x, u):
        return _unit(x + u + 1e-6)


class _TwiceTooFast(Sphere):
    def retraction(self, x, u):
        return _unit(x + 2.0 * u)


class _ProjectionOblique(Sphere):
    def projection(self, x, u):
        # idempotent, onto the tangent space, but along e_0 instead of along x
        return u - (np.vdot(x, u) / x[0]) * np.eye(len(x))[0]


class _ProjectionIsIdentity(Sphere):
    def projection(self, x, u):
        return np.array(u, dtype=float)

    def check_tangent(self, x, u, atol=1e-8, name="u"):
        if abs(np.vdot(x, u)) > atol * np.linalg.norm(u):
            raise ValueError(f"{name} is not tangent: <x, {name}> = {np.vdot(x, u):.3e}")


class _ProjectionNotIdempotent(Sphere):
    def projection(self, x, u):
        return 2.0 * (u - np.vdot(x, u) * x)


class _TransportIsIdentity(Sphere):
    def transport(self, x1, x2, u):
        return u


class _TangentNotUnit(Sphere):
    def random_tangent_vector(self, x, rng=None):
        return 2.0 * super().random_tangent_vector(x, rng)


class _AsymmetricMetric(Sphere):
    def inner_product(self, x, u, v):
        return float(np.vdot(u, v)) + 0.1 * float(u[0] * v[1])


class _InconsistentNorm(Sphere):
    def norm(self, x, u):
        return 1.0


class _LogTooLong(Sphere):
    def log(self, x, y):
        return 1.01 * super().log(x, y)


class _DistTooLong(Euclidean):
    def dist(self, x, y):
        return 1.01 * super().dist(x, y)


class _RetractionInPlace(Sphere):
    def retraction(self, x, u):
        x += u
        x /= np.linalg.norm(x)
        return x


@pytest.mark.parametrize("broken, message", [
    (_NoNormalise, r"the point after retraction step 1 of 20 is not a point"),
    (_OffSphereStart, re.escape("random_point() is not a point of Sphere(5): "
                                "| ||x|| - 1 | = 1.000e-03")),
    (_ShiftedAtZero, r"retraction\(x, 0\) != x"),
    (_TwiceTooFast, r"derivative of t -> retraction\(x, t u\) at t = 0 is not u"),
    (_ProjectionOblique, r"projection is not orthogonal"),
    (_ProjectionIsIdentity, r"projection\(x, v\) is not tangent"),
    (_ProjectionNotIdempotent, r"projection is not idempotent"),
    (_TransportIsIdentity, r"transport\(x, y, u\) is not tangent"),
    (_TangentNotUnit, r"random_tangent_vector has norm (2\.0|1\.999)"),
    (_AsymmetricMetric, r"inner_product is not symmetric"),
    (_InconsistentNorm, r"norm\(x, z\)\*\*2 = 1\.0 but inner_product"),
    (_LogTooLong, r"log\(x, exp\(x, u\)\) != u"),
    (_DistTooLong, r"dist\(x, exp\(x, u\)\) = 0\.303"),
    (_RetractionInPlace, r"modified its argument x in place"),
], ids=lambda v: v.__name__.strip("_") if isinstance(v, type) else None)
def test_check_manifold_catches(broken, message):
    with pytest.raises(AssertionError, match=message):
        check_manifold(broken(5), rng=0, n_steps=20)


def test_check_manifold_bad_arguments():
    with pytest.raises(TypeError, match="manifold must be a jitopt.manifolds.Manifold"):
        check_manifold("sphere")
    with pytest.raises(ValueError, match="n_steps"):
        check_manifold(Sphere(3), n_steps=-1)
    with pytest.raises(ValueError, match="atol"):
        check_manifold(Sphere(3), atol=0.0)


# -- check_point, check_tangent and constructors -------------------------------------------


def _bad_points():
    rng = np.random.default_rng(0)
    st = Stiefel(7, 3)
    x = st.random_point(rng)
    e = 1e-3 * rng.standard_normal(x.shape)
    err_st = np.linalg.norm((x + e).T @ (x + e) - np.eye(3))
    o = Orthogonal(4)
    q = o.random_point(rng) + 1e-4
    err_o = np.linalg.norm(q.T @ q - np.eye(4))
    g = Grassmann(6, 2)
    y = 1.1 * g.random_point(rng)
    err_g = np.linalg.norm(y.T @ y - np.eye(2))
    spd = SPD(4)
    s = spd.random_point(rng)
    a = s.copy()
    a[0, 1] += 1e-3
    w, v = np.linalg.eigh(s)
    indefinite = (v * np.r_[-0.25, w[1:]]) @ v.T
    so = Orthogonal(4, special=True)
    r = so.random_point(rng)
    r[:, 0] = -r[:, 0]
    nan = Sphere(5).random_point(rng)
    nan[2] = np.nan
    not_a_point = "x0 is not a point of "
    return [
        (st, x.T, "x0 must have shape (7, 3) to be a point of Stiefel(7, 3), got shape (3, 7)"),
        (Sphere(5), nan, "x0 contains NaN or inf"),
        (SPD(4), np.full((4, 4), np.inf), "x0 contains NaN or inf"),
        (Sphere(5), 1.25 * Sphere(5).random_point(rng),
         not_a_point + "Sphere(5): | ||x|| - 1 | = 2.500e-01"),
        (st, x + e, not_a_point + f"Stiefel(7, 3): ||XᵀX - I||_F = {err_st:.3e}"),
        (o, q, not_a_point + f"Orthogonal(4): ||XᵀX - I||_F = {err_o:.3e}"),
        (g, y, not_a_point + f"Grassmann(6, 2): ||XᵀX - I||_F = {err_g:.3e}"),
        (spd, a, not_a_point + "SPD(4): ||X - Xᵀ||_F = 1.414e-03 (not symmetric)"),
        (spd, indefinite, not_a_point + "SPD(4): smallest eigenvalue -2.500e-01 is not positive"),
        (so, r, not_a_point + "SpecialOrthogonal(4): det X = -1 (distance 2 to SO(n))"),
    ]


@pytest.mark.parametrize("manifold, x, message", _bad_points())
def test_check_point_rejects(manifold, x, message):
    x0 = x.copy()
    with pytest.raises(ValueError, match=re.escape(message)):
        manifold.check_point(x, atol=1e-12, name="x0")
    np.testing.assert_array_equal(x, x0)


def test_check_point_rejects_non_numeric():
    with pytest.raises(TypeError, match="x must be a real numeric array"):
        Sphere(2).check_point(np.array([1.0 + 0j, 0.0]))
    with pytest.raises(TypeError, match="x must be a real numeric array"):
        Sphere(2).check_point(np.array(["a", "b"]))


@pytest.mark.parametrize("manifold", [m for m in MANIFOLDS if not isinstance(m, Euclidean)],
                         ids=_id)
def test_check_tangent_rejects_normal_component(manifold):
    rng = np.random.default_rng(0)
    x = manifold.random_point(rng)
    u = manifold.random_tangent_vector(x, rng)
    # a direction orthogonal to the tangent space: the normal part of a random array
    a = rng.standard_normal(manifold.shape)
    normal = a - manifold.projection(x, a)
    normal /= np.linalg.norm(normal)
    manifold.check_tangent(x, u, atol=1e-12)
    with pytest.raises(ValueError, match=r"^u is not tangent .* distance to the tangent "
                                         r"space = 1\.000e-06"):
        manifold.check_tangent(x, u + 1e-6 * normal, atol=1e-12)


@pytest.mark.parametrize("make, error, message", [
    (lambda: Stiefel(3, 5), ValueError, "Stiefel needs 1 <= p <= n, got n=3, p=5"),
    (lambda: Stiefel(0, 1), ValueError, "Stiefel needs 1 <= p <= n, got n=0, p=1"),
    (lambda: Stiefel(3.0, 1), TypeError, "Stiefel: n must be an int"),
    (lambda: Grassmann(2, 3), ValueError, "Grassmann needs 1 <= p <= n"),
    (lambda: Orthogonal(0), ValueError, "Orthogonal needs 1 <= p <= n"),
    (lambda: SPD(0), ValueError, "SPD needs a positive integer n, got 0"),
    (lambda: Sphere(), TypeError, "Sphere needs at least one dimension"),
    (lambda: Euclidean(3, -1), ValueError, "Euclidean dimensions must be positive integers"),
    (lambda: Stiefel(5, 2, retraction="householder"), ValueError,
     r"retraction must be one of \('qr', 'polar', 'cayley'\), got 'householder'"),
    (lambda: Grassmann(5, 2, retraction="cayley"), ValueError, "retraction must be one of"),
    (lambda: Orthogonal(3, retraction="QR"), ValueError, "retraction must be one of"),
    (lambda: Sphere(3, retraction="polar"), ValueError, "retraction must be one of"),
    (lambda: SPD(3, retraction="qr"), ValueError,
     r"retraction must be one of \('exp', 'second_order'\)"),
])
def test_constructors_reject(make, error, message):
    with pytest.raises(error, match=message):
        make()


@every_manifold
def test_same_seed_same_point(manifold):
    x = manifold.random_point(7)
    np.testing.assert_array_equal(x, manifold.random_point(7))
    np.testing.assert_array_equal(x, manifold.random_point(np.random.default_rng(7)))
    assert not np.array_equal(x, manifold.random_point(8))
    np.testing.assert_array_equal(manifold.random_tangent_vector(x, 3),
                                  manifold.random_tangent_vector(x, 3))


def test_zero_dimensional_manifold_has_no_unit_tangent():
    m = Grassmann(3, 3)
    x = m.random_point(0)
    np.testing.assert_allclose(m.projection(x, np.ones((3, 3))), 0.0, atol=1e-14)
    with pytest.raises(ValueError, match=r"Grassmann\(3, 3\) has dimension 0"):
        m.random_tangent_vector(x, 0)
