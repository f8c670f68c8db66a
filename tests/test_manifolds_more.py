"""The manifolds beyond the first six, k copies, and the point checks a user can steer."""

import numpy as np
import pytest

import jitopt
from jitopt.manifolds import (SPD, Elliptope, FixedRankEmbedded, Grassmann, Oblique,
                              Orthogonal, PoincareBall, Positive, Product, PSDFixedRank,
                              SkewSymmetric, Sphere, Stiefel, Symmetric)
from jitopt.testing import check_gradient, check_manifold

NEW = [
    Oblique(4, 3), Oblique(2, 5), Elliptope(6, 3), Elliptope(4, 4), PSDFixedRank(5, 2),
    PSDFixedRank(3, 3), Symmetric(4), SkewSymmetric(4), Positive(2, 3),
    Positive(3, 1, retraction="second_order"), PoincareBall(3),
    PoincareBall(4, retraction="projection"),
    Product(Sphere(3), Stiefel(4, 2)), Product(Sphere(3), Positive(1, 1), PoincareBall(2)),
    Product(Stiefel(4, 2, k=2), SPD(2)), FixedRankEmbedded(5, 4, 2),
    FixedRankEmbedded(4, 3, 3), Product(FixedRankEmbedded(3, 3, 1), Sphere(2)),
]
COPIES = (
    [Sphere(4, k=3), Sphere(3, 2, k=2, retraction="exp")]
    + [Stiefel(5, 2, k=3, retraction=r) for r in Stiefel.retractions]
    + [Grassmann(5, 2, k=3, retraction=r) for r in Grassmann.retractions]
    + [Orthogonal(3, k=3, retraction=r) for r in Orthogonal.retractions]
    + [Orthogonal(3, special=True, k=2)]
    + [SPD(3, k=3, retraction=r) for r in SPD.retractions]
)


def _id(m):
    return f"{m}-{m.retraction_name}" if m.retraction_name else str(m)


@pytest.mark.parametrize("manifold", NEW + COPIES, ids=_id)
def test_contract(manifold):
    """Points stay on the manifold over 300 steps, retraction first order, projection
    idempotent and orthogonal, transport tangent, exp/log/dist consistent."""
    check_manifold(manifold, rng=1, n_steps=300, atol=1e-12)


# -- k copies ---------------------------------------------------------------------------------


@pytest.mark.parametrize("make, shape", [
    (lambda k: Sphere(4, k=k), (4,)), (lambda k: Stiefel(5, 2, k=k), (5, 2)),
    (lambda k: Grassmann(5, 2, k=k), (5, 2)), (lambda k: Orthogonal(3, k=k), (3, 3)),
    (lambda k: SPD(3, k=k), (3, 3)),
])
def test_copies_shapes_and_dims(make, shape):
    one, many = make(1), make(4)
    assert one.shape == shape and many.shape == (4,) + shape
    assert many.dim == 4 * one.dim
    assert "k=" not in repr(one) and repr(many).endswith("k=4)")


@pytest.mark.parametrize("one, many", [
    (Stiefel(6, 3, retraction="qr"), Stiefel(6, 3, k=4, retraction="qr")),
    (Stiefel(6, 3, retraction="polar"), Stiefel(6, 3, k=4, retraction="polar")),
    (Stiefel(6, 2, retraction="cayley"), Stiefel(6, 2, k=4, retraction="cayley")),
    (Grassmann(6, 3, retraction="exp"), Grassmann(6, 3, k=4, retraction="exp")),
    (SPD(3), SPD(3, k=4)), (SPD(3, retraction="second_order"),
                            SPD(3, k=4, retraction="second_order")),
    (Sphere(5), Sphere(5, k=4)),
], ids=_id)
def test_batched_equals_looped(one, many):
    rng = np.random.default_rng(0)
    x = many.random_point(rng)
    u = 0.4 * many.random_tangent_vector(x, rng)
    y = many.retraction(x, u)
    for i in range(4):
        assert np.allclose(many.projection(x, 2 * u)[i], one.projection(x[i], 2 * u[i]),
                           atol=1e-13)
        assert np.allclose(y[i], one.retraction(x[i], u[i]), atol=1e-13)
        assert np.allclose(many.transport(x, y, u)[i], one.transport(x[i], y[i], u[i]),
                           atol=1e-13)
    inner = sum(one.inner_product(x[i], u[i], u[i]) for i in range(4))
    assert np.isclose(many.inner_product(x, u, u), inner, rtol=1e-13)
    if hasattr(one, "dist"):
        d = np.sqrt(sum(one.dist(x[i], y[i]) ** 2 for i in range(4)))
        assert np.isclose(many.dist(x, y), d, rtol=1e-10)


@pytest.mark.parametrize("n, p, scale", [(1, 1, 1.0), (4, 2, 1.0), (5, 5, 1.0),
                                         (40, 6, 1.0), (30, 4, 1e-8)])
def test_compiled_qr_retraction_equals_lapack(n, p, scale):
    """The compiled kernel (Householder loops, for the k copies and compiled loops) against
    LAPACK's QR with a nonnegative diagonal, down to columns of very different lengths
    (condition number about 1e8, where Gram-Schmidt loses orthogonality)."""
    from jitopt.manifolds._kernels import qr_retraction as compiled
    from jitopt.manifolds._stiefel import qr_retraction as lapack
    rng = np.random.default_rng(n + p)
    x = rng.standard_normal((n, p)) * np.geomspace(1.0, scale, p)
    u = -2.0 * x  # x + u = -x: every diagonal entry of Householder's R changes sign
    q = compiled(x, u)
    assert q.flags.c_contiguous
    assert np.abs(q - lapack(x, u)).max() < 1e-13 / max(scale, 1e-3)
    assert np.abs(q.T @ q - np.eye(p)).max() < 1e-14


def test_compiled_qr_retraction_of_dependent_columns_is_orthonormal():
    from jitopt.manifolds._kernels import qr_retraction as compiled
    x = np.ones((5, 3))
    x[:, 2] = 0.0
    q = compiled(x, np.zeros_like(x))
    assert np.abs(q.T @ q - np.eye(3)).max() < 1e-15
    assert np.allclose(q[:, 0], 1 / np.sqrt(5))


def test_check_point_names_the_copy():
    x = Stiefel(5, 2, k=3).random_point(rng=0)
    x[2, 0, 0] += 1e-3
    with pytest.raises(ValueError, match=r"copy 2"):
        Stiefel(5, 2, k=3).check_point(x)


def test_procrustes_on_copies():
    """min sum_i ||X_i - A_i||^2 over Stiefel(6, 3)^5: X_i = polar factor of A_i."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((5, 6, 3))
    M = Stiefel(6, 3, k=5)
    res = jitopt.minimize(lambda x: np.sum((x - a) ** 2), M.random_point(rng),
                          jac=lambda x: 2 * (x - a), manifold=M, tol=1e-10,
                          options={"maxiter": 500})
    w, _, vt = np.linalg.svd(a, full_matrices=False)
    assert res.success and np.allclose(res.x, w @ vt, atol=1e-8)


def test_rotations_on_copies():
    """min sum_i ||X_i - A_i||^2 over SO(3)^10: the closest rotation of each A_i, which is
    Orthogonal(3, special=True).closest_point."""
    rng = np.random.default_rng(4)
    a = rng.standard_normal((10, 3, 3))
    M = Orthogonal(3, special=True, k=10)
    res = jitopt.minimize(lambda x: np.sum((x - a) ** 2), M.random_point(rng),
                          jac=lambda x: 2 * (x - a), manifold=M, tol=1e-10, method="rgd",
                          options={"maxiter": 1000})
    w, _, vt = np.linalg.svd(a)
    d = np.ones((10, 3))
    d[:, -1] = np.sign(np.linalg.det(w @ vt))
    want = (w * d[:, None, :]) @ vt
    assert np.allclose(np.linalg.det(res.x), 1.0)
    assert np.allclose(M.closest_point(a), want, atol=1e-12)
    assert res.success and np.allclose(res.x, want, atol=1e-8)


def test_spd_copies_distance():
    """min sum_i dist(X_i, A_i)^2 over SPD(3)^4 has X_i = A_i (gradient -2 log_X A)."""
    M = SPD(3, k=4)
    a = M.random_point(rng=5)

    def egrad(x):
        rg = -2 * M.log(x, a)
        xi = np.linalg.inv(x)
        return xi @ rg @ xi  # Euclidean gradient whose Riemannian one is rg

    res = jitopt.minimize(lambda x: M.dist(x, a) ** 2, M.random_point(rng=6), jac=egrad,
                          manifold=M, tol=1e-11, method="rgd", options={"maxiter": 500})
    assert res.success and np.allclose(res.x, a, atol=1e-9)


# -- gradients through the manifolds (slope 2) --------------------------------------------


@pytest.mark.parametrize("manifold", [
    Oblique(4, 3), Elliptope(6, 3), PSDFixedRank(5, 2), Symmetric(3), SkewSymmetric(3),
    Positive(2, 2), PoincareBall(3), Product(Sphere(3), Positive(1, 2)), Stiefel(5, 2, k=3),
    SPD(2, k=3), Sphere(3, k=2),
], ids=_id)
def test_gradient_slope(manifold):
    """A cost invariant under the quotients (a function of Y Yᵀ for the factor manifolds)."""
    rng = np.random.default_rng(2)
    x0 = manifold.random_point(rng)
    c = rng.standard_normal(x0.shape)
    if isinstance(manifold, (Elliptope, PSDFixedRank)):
        a = rng.standard_normal((x0.shape[0],) * 2)
        a = a + a.T
        problem = jitopt.Problem(manifold, lambda y: np.sum((y @ y.T) * a) + np.sum(
            (y @ y.T) ** 2), lambda y: 2 * a @ y + 4 * (y @ y.T) @ y)
    else:
        problem = jitopt.Problem(manifold, lambda x: np.sum(c * x) + np.sum(x ** 4),
                                 lambda x: c + 4 * x ** 3)
    assert abs(check_gradient(problem, rng=4).slope - 2) < 0.1


# -- known optima through minimize ----------------------------------------------------------


def test_oblique_closest_unit_columns():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((5, 4))
    M = Oblique(5, 4)
    res = jitopt.minimize(lambda x: 0.5 * np.sum((x - a) ** 2), M.random_point(rng),
                          jac=lambda x: x - a, manifold=M, tol=1e-10)
    norms = np.linalg.norm(a, axis=0)
    assert np.allclose(res.x, a / norms, atol=1e-8)
    assert np.isclose(res.fun, 0.5 * np.sum((norms - 1) ** 2), rtol=1e-10)


def _maxcut_sdp(lap):
    import cvxpy as cp

    n = lap.shape[0]
    x = cp.Variable((n, n), symmetric=True)
    prob = cp.Problem(cp.Maximize(cp.trace(lap @ x) / 4), [x >> 0, cp.diag(x) == 1])
    prob.solve(solver=cp.CLARABEL)
    return prob.value


def test_elliptope_maxcut_matches_sdp():
    """Burer–Monteiro max-cut with k(k+1)/2 > n against cvxpy's SDP on a random graph."""
    rng = np.random.default_rng(1)
    n = 10
    w = np.triu((rng.random((n, n)) < 0.5).astype(float), 1)
    w = w + w.T
    lap = np.diag(w.sum(1)) - w
    k = int(np.ceil(np.sqrt(2 * n))) + 1
    M = Elliptope(n, k)
    res = jitopt.minimize(lambda y: -0.25 * np.sum((y @ y.T) * lap), M.random_point(rng),
                          jac=lambda y: -0.5 * lap @ y, manifold=M, tol=1e-9,
                          options={"maxiter": 3000})
    assert np.isclose(-res.fun, _maxcut_sdp(lap), rtol=1e-6)


def test_elliptope_odd_cycle_closed_form():
    """C_5: the SDP value (n/2)(1 + cos(pi/n)) = 4.52254249..."""
    n = 5
    w = np.roll(np.eye(n), 1, axis=1)
    w = w + w.T
    lap = np.diag(w.sum(1)) - w
    M = Elliptope(n, 4)
    res = jitopt.minimize(lambda y: -0.25 * np.sum((y @ y.T) * lap), M.random_point(0),
                          jac=lambda y: -0.5 * lap @ y, manifold=M, tol=1e-10,
                          options={"maxiter": 3000})
    assert np.isclose(-res.fun, n / 2 * (1 + np.cos(np.pi / n)), rtol=1e-9)


def test_psd_fixed_rank_best_approximation():
    """min ||Y Yᵀ - A||² for A ≻ 0: Y Yᵀ is the top-3 eigenpart, f* = the sum of the other
    λ²."""
    rng = np.random.default_rng(4)
    q, _ = np.linalg.qr(rng.standard_normal((8, 8)))
    lam = np.array([9.0, 7.0, 5.0, 2.0, 1.5, 1.0, 0.5, 0.2])
    a = (q * lam) @ q.T
    M = PSDFixedRank(8, 3)
    res = jitopt.minimize(lambda y: np.sum((y @ y.T - a) ** 2), M.random_point(rng),
                          jac=lambda y: 4 * (y @ y.T - a) @ y, manifold=M, tol=1e-10,
                          options={"maxiter": 2000})
    best = (q[:, :3] * lam[:3]) @ q[:, :3].T
    assert np.allclose(res.x @ res.x.T, best, atol=1e-8)
    assert np.isclose(res.fun, np.sum(lam[3:] ** 2), rtol=1e-10)


def test_fixed_rank_eckart_young():
    """min ½||X - A||² over rank-3 matrices: the truncated SVD, f* = ½ sum_{i>3} σ_i²."""
    rng = np.random.default_rng(9)
    m, n, k = 12, 9, 3
    w, _ = np.linalg.qr(rng.standard_normal((m, n)))
    v, _ = np.linalg.qr(rng.standard_normal((n, n)))
    sig = np.array([10.0, 8.0, 6.0, 2.0, 1.5, 1.0, 0.5, 0.3, 0.1])
    a = (w * sig) @ v.T
    M = FixedRankEmbedded(m, n, k)
    res = jitopt.minimize(lambda x: 0.5 * np.sum((x - a) ** 2), M.random_point(rng),
                          jac=lambda x: x - a, manifold=M, tol=1e-10,
                          options={"maxiter": 2000})
    assert np.allclose(res.x, (w[:, :k] * sig[:k]) @ v[:, :k].T, atol=1e-8)
    assert np.isclose(res.fun, 0.5 * np.sum(sig[k:] ** 2), rtol=1e-10)
    u, s, vt = M.factors(res.x)
    assert np.allclose(s, sig[:k], rtol=1e-10)
    assert np.allclose(M.closest_point(a), res.x, atol=1e-8)


def test_fixed_rank_check_point():
    M = FixedRankEmbedded(4, 3, 1)
    with pytest.raises(ValueError, match="rank above 1"):
        M.check_point(np.eye(4, 3))
    with pytest.raises(ValueError, match="rank below 1"):
        M.check_point(np.zeros((4, 3)))
    with pytest.raises(ValueError, match="shapes"):
        M.from_factors(np.ones((4, 2)), np.ones(2), np.ones((2, 3)))


def test_fixed_rank_tangent_chart():
    """The coordinates (M, Up, Vp) are an isometry of the tangent space: dot products are
    inner products, tangent(of(z)) is the projection of an ambient z, and the retraction
    from coordinates is the truncated SVD of x + u (computed here by NumPy)."""
    rng = np.random.default_rng(4)
    M = FixedRankEmbedded(9, 7, 3)
    x = M.random_point(rng)
    chart = M.tangent_chart(x)
    u, v = (M.random_tangent_vector(x, rng) for _ in range(2))
    wu, wv = chart.of(u), chart.of(v)
    assert wu.shape == ((9 + 7 + 3) * 3,)
    assert np.isclose(chart.inner(wu, wv), M.inner_product(x, u, v), rtol=1e-12)
    z = rng.standard_normal((9, 7))
    np.testing.assert_allclose(chart.tangent(chart.of(z)), M.projection(x, z), atol=1e-12)
    np.testing.assert_allclose(chart.of(chart.tangent(wu)), wu, atol=1e-12)
    np.testing.assert_allclose(chart.tangent(chart.gradient(z)),
                               M.euclidean_to_riemannian_gradient(x, z), atol=1e-12)
    w_, s, vt = np.linalg.svd(x + 0.3 * u)
    np.testing.assert_allclose(chart.retraction(0.3 * wu), (w_[:, :3] * s[:3]) @ vt[:3],
                               atol=1e-12)


def test_fixed_rank_chart_transport_is_the_projection():
    """transport_from moves coordinates from another point's chart as the manifold's
    transport (the projection) does, for one vector, for rows with stacked bases (one per
    row, as rlbfgs keeps its pairs), and with leading axes that broadcast."""
    rng = np.random.default_rng(5)
    M = FixedRankEmbedded(9, 7, 3)
    here = M.tangent_chart(M.random_point(rng))
    points = [M.random_point(rng) for _ in range(4)]
    charts = [M.tangent_chart(p) for p in points]
    w = np.array([c.of(M.random_tangent_vector(p, rng)) for p, c in zip(points, charts)])
    expected = np.array([here.of(M.transport(p, here.x, c.tangent(wi)))
                         for p, c, wi in zip(points, charts, w)])
    one = here.transport_from(charts[0].u, charts[0].v, w[0])
    np.testing.assert_allclose(one, expected[0], atol=1e-12)
    np.testing.assert_allclose(here.moved_from(charts[0], w[0]), expected[0], atol=1e-12)
    bases = np.array([c.u for c in charts]), np.array([c.v for c in charts])
    np.testing.assert_allclose(here.transport_from(*bases, w), expected, atol=1e-12)
    both = here.transport_from(*bases, np.stack((w, 2 * w)))
    np.testing.assert_allclose(both, np.stack((expected, 2 * expected)), atol=1e-12)


def test_fixed_rank_points_are_read_only_and_copies_get_their_own_factors():
    """The points the manifold makes are kept with their factors, so they are read-only;
    a modified copy is factorised afresh (no stale factors)."""
    M = FixedRankEmbedded(6, 5, 2)
    x = M.random_point(rng=0)
    with pytest.raises(ValueError, match="read-only"):
        x[0, 0] = 1.0
    y = np.array(x)
    y += np.outer(np.arange(6.0), np.ones(5)) * 1e-3  # rank 3: the factors must change
    u, s, vt = M.factors(y)
    exact = np.linalg.svd(y, compute_uv=False)
    np.testing.assert_allclose(s, exact[:2], rtol=1e-12)
    assert not np.allclose(s, M.factors(x)[1])


def test_product_separates():
    """min ||t x - b||² over Sphere(4) x Positive(1, 1): x = b/||b||, t = ||b||."""
    b = np.array([1.0, -2.0, 0.5, 3.0])
    M = Product(Sphere(4), Positive(1, 1))

    def cost(z):
        x, t = M.unpack(z)
        return float(np.sum((t[0, 0] * x - b) ** 2))

    def egrad(z):
        x, t = M.unpack(z)
        r = 2 * (t[0, 0] * x - b)
        return (t[0, 0] * r, np.array([[r @ x]]))  # a tuple of parts is packed

    res = jitopt.minimize(cost, (np.ones(4) / 2, np.ones((1, 1))), jac=egrad, manifold=M,
                          tol=1e-10)
    x, t = M.unpack(res.x)
    assert np.allclose(x, b / np.linalg.norm(b), atol=1e-10)
    assert np.isclose(t[0, 0], np.linalg.norm(b), rtol=1e-10)


def _ball_dist2_egrad(x, p):
    """Euclidean gradient of arcosh(z)², z = 1 + 2||x-p||²/((1-||x||²)(1-||p||²))."""
    ax, ap, d2 = 1 - x @ x, 1 - p @ p, (x - p) @ (x - p)
    z = 1 + 2 * d2 / (ax * ap)
    dz = (2 / ap) * (2 * (x - p) / ax + 2 * d2 * x / ax ** 2)
    ratio = np.arccosh(z) / np.sqrt(z * z - 1) if z > 1 + 1e-12 else 1.0  # -> 1 at x = p
    return 2 * ratio * dz


def test_poincare_distance_and_midpoint():
    M = PoincareBall(5)
    rng = np.random.default_rng(7)
    p, q = 0.6 * M.random_point(rng), 0.9 * M.random_point(rng)
    # the closed form arcosh distance against the artanh one
    z = 1 + 2 * (p - q) @ (p - q) / ((1 - p @ p) * (1 - q @ q))
    assert np.isclose(M.dist(p, q), np.arccosh(z), rtol=1e-12)
    res = jitopt.minimize(lambda x: M.dist(x, p) ** 2, np.zeros(5),
                          jac=lambda x: _ball_dist2_egrad(x, p), manifold=M, tol=1e-12)
    assert np.allclose(res.x, p, atol=1e-10)
    # the Fréchet mean of two points is the midpoint of the geodesic
    res = jitopt.minimize(lambda x: M.dist(x, p) ** 2 + M.dist(x, q) ** 2, np.zeros(5),
                          jac=lambda x: _ball_dist2_egrad(x, p) + _ball_dist2_egrad(x, q),
                          manifold=M, tol=1e-11)
    assert np.allclose(res.x, M.exp(p, 0.5 * M.log(p, q)), atol=1e-9)


def test_positive_symmetric_skew_optima():
    rng = np.random.default_rng(8)
    a = np.exp(rng.standard_normal((3, 4)))
    res = jitopt.minimize(lambda x: np.sum(a * x - np.log(x)), np.ones((3, 4)),
                          jac=lambda x: a - 1 / x, manifold=Positive(3, 4), tol=1e-11)
    assert np.allclose(res.x, 1 / a, rtol=1e-10)
    b = rng.standard_normal((5, 5))
    for M, want in ((Symmetric(5), (b + b.T) / 2), (SkewSymmetric(5), (b - b.T) / 2)):
        res = jitopt.minimize(lambda x: 0.5 * np.sum((x - b) ** 2), M.random_point(rng),
                              jac=lambda x: x - b, manifold=M, tol=1e-12)
        assert np.allclose(res.x, want, atol=1e-12)


# -- point checks ---------------------------------------------------------------------------


def test_float32_stiefel_start_is_promoted():
    """A float32-built Stiefel point (||XᵀX - I|| of order 1e-7) is accepted by minimize,
    promoted to float64 and re-orthonormalised; the optimum is the same."""
    a = np.diag([5.0, 4.0, 1.0, 0.5])
    M = Stiefel(4, 2)
    x32 = M.random_point(rng=0).astype(np.float32)
    assert np.linalg.norm(x32.T.astype(float) @ x32 - np.eye(2)) > 1e-9
    with pytest.raises(ValueError, match="XᵀX"):
        M.check_point(x32, atol=1e-9)
    res = jitopt.minimize(lambda x: -np.sum(x * (a @ x)), x32, jac=lambda x: -2 * a @ x,
                          manifold=M, tol=1e-9)
    assert res.x.dtype == np.float64 and np.isclose(res.fun, -9.0, rtol=1e-12)
    assert x32.dtype == np.float32  # not modified


def test_off_point_refused_with_distance_then_loosened():
    M = Sphere(3)
    x = np.array([0.6, 0.8, 0.0]) * (1 + 1e-3)
    with pytest.raises(ValueError, match=r"1\.000e-03.*closest_point.*point_tol"):
        jitopt.minimize(lambda x: x[0], x, jac=lambda x: np.eye(3)[0], manifold=M)
    res = jitopt.minimize(lambda x: x[0], x, jac=lambda x: np.eye(3)[0], manifold=M,
                          options={"point_tol": 1e-2})
    assert np.allclose(res.x, [-1.0, 0.0, 0.0], atol=1e-5)
    assert np.isclose(M.closest_point(x) @ M.closest_point(x), 1.0, rtol=1e-15)
    with pytest.raises(ValueError, match="point_tol"):
        jitopt.minimize(lambda x: x[0], x, manifold=M, options={"point_tol": -1.0})


def test_check_point_atol_and_validate_point():
    x = np.array([0.6, 0.8 + 1e-6])
    with pytest.raises(ValueError, match="8.000e-07"):
        Sphere(2).check_point(x)
    Sphere(2).check_point(x, atol=1e-5)
    y = Sphere(2).validate_point(x, atol=1e-5)
    assert abs(np.linalg.norm(y) - 1) < 1e-15 and x[1] == 0.8 + 1e-6


def test_pymanopt_manifold_names_the_jitopt_class():
    fake = type("Stiefel", (), {"__module__": "pymanopt.manifolds.stiefel"})()
    for call in (lambda: jitopt.Problem(fake, lambda x: 0.0, lambda x: x),
                 lambda: jitopt.minimize(lambda x: 0.0, np.eye(3, 2), manifold=fake)):
        with pytest.raises(TypeError, match=r"pymanopt manifold.*jitopt\.manifolds\.Stiefel"):
            call()
    spd = type("SymmetricPositiveDefinite", (), {"__module__": "pymanopt.manifolds.psd"})()
    with pytest.raises(TypeError, match=r"jitopt\.manifolds\.SPD"):
        jitopt.Problem(spd, lambda x: 0.0, lambda x: x)
    other = type("PSDFixedRankComplex", (), {"__module__": "pymanopt.manifolds.psd"})()
    with pytest.raises(TypeError, match=r"jitopt has no PSDFixedRankComplex; its manifolds"):
        jitopt.Problem(other, lambda x: 0.0, lambda x: x)


@pytest.mark.parametrize("manifold", [
    Oblique(4, 3), Elliptope(6, 3), PSDFixedRank(5, 2), Symmetric(3), SkewSymmetric(3),
    Positive(2, 2), PoincareBall(3), Product(Sphere(3), Positive(1, 2)), Stiefel(5, 2, k=3),
    Grassmann(5, 2, k=2), Orthogonal(3, k=2), SPD(2, k=3), Sphere(3, k=2),
    FixedRankEmbedded(6, 5, 2),
], ids=_id)
def test_riemannian_hessian(manifold):
    """euclidean_to_riemannian_hessian against a difference of transported gradients;
    symmetric and tangent."""
    from jitopt.testing import check_hessian

    rng = np.random.default_rng(5)
    x0 = manifold.random_point(rng)
    c = rng.standard_normal(x0.shape)
    if isinstance(manifold, (Elliptope, PSDFixedRank)):
        a = rng.standard_normal((x0.shape[0],) * 2)
        a = a + a.T
        problem = jitopt.Problem(
            manifold, lambda y: np.sum((y @ y.T) * a) + np.sum((y @ y.T) ** 2),
            lambda y: 2 * a @ y + 4 * (y @ y.T) @ y,
            ehess=lambda y, u: 2 * a @ u + 4 * (u @ (y.T @ y) + y @ (u.T @ y) + y @ (y.T @ u)))
    elif isinstance(manifold, Grassmann):  # f(XQ) = f(X): tr(XᵀAX) + tr(XᵀBX)²
        a, b = (m + m.T for m in rng.standard_normal((2,) + (x0.shape[-2],) * 2))

        def s(x, u):
            return np.sum(x * (b @ u))

        problem = jitopt.Problem(
            manifold, lambda x: np.sum(x * (a @ x)) + s(x, x) ** 2,
            lambda x: 2 * a @ x + 4 * s(x, x) * b @ x,
            ehess=lambda x, u: 2 * a @ u + 4 * s(x, x) * b @ u + 8 * s(x, u) * b @ x)
    else:
        problem = jitopt.Problem(manifold, lambda x: np.sum(c * x) + np.sum(x ** 4),
                                 lambda x: c + 4 * x ** 3, ehess=lambda x, u: 12 * x ** 2 * u)
    check = check_hessian(problem, rng=6)
    assert check.error < 1e-5 and check.symmetry < 1e-8 and check.tangency < 1e-10


def test_a_real_pymanopt_manifold_is_refused_by_name():
    pymanopt = pytest.importorskip("pymanopt")
    for theirs, ours in ((pymanopt.manifolds.Sphere(3), "Sphere"),
                         (pymanopt.manifolds.SymmetricPositiveDefinite(3), "SPD")):
        with pytest.raises(TypeError, match=rf"pymanopt manifold.*jitopt\.manifolds\.{ours}"):
            jitopt.minimize(lambda x: 0.0, np.eye(3)[0], manifold=theirs)
