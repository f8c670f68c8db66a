"""Multinomial, Hyperboloid and SpecialEuclidean: the manifold contract, Hessians, distances
against closed forms, Fréchet means of symmetric data and solvers reaching known optima."""

from decimal import Decimal, getcontext

import numpy as np
import pytest

import jitopt
from jitopt.manifolds import Hyperboloid, Multinomial, PoincareBall, SpecialEuclidean
from jitopt.testing import check_hessian, check_manifold

SOLVERS = ["rgd", "rcg", "rlbfgs", "rtr"]


@pytest.mark.parametrize("manifold, n_steps", [
    (Multinomial(3), 1000), (Multinomial(6, 3), 1000), (Multinomial(50), 1000),
    # far out, Minkowski products cancel: 300 steps of norm 0.5 (distance ~15) pass for
    # every seed tried, 1000 not always
    (Hyperboloid(1), 300), (Hyperboloid(3), 300), (Hyperboloid(6), 300),
    (SpecialEuclidean(1), 1000), (SpecialEuclidean(2), 1000), (SpecialEuclidean(3), 1000)],
    ids=str)
@pytest.mark.parametrize("seed", [1, 2])
def test_contract_and_hessian(manifold, n_steps, seed):
    check_manifold(manifold, rng=seed, n_steps=n_steps, atol=1e-12)
    c = np.random.default_rng(seed).standard_normal(manifold.shape)
    problem = jitopt.Problem(manifold, lambda x: np.sum(c * x) + np.sum(x ** 4),
                             lambda x: c + 4 * x ** 3, ehess=lambda x, u: 12 * x ** 2 * u)
    check = check_hessian(problem, rng=seed + 10)
    assert check.error < 1e-5 and check.symmetry < 1e-8 and check.tangency < 1e-10


def test_fisher_rao_distance_closed_form_and_columns():
    M = Multinomial(5, 3)
    rng = np.random.default_rng(0)
    for _ in range(5):
        p, q = M.random_point(rng), M.random_point(rng)
        per_column = 2 * np.arccos(np.sum(np.sqrt(p * q), axis=0))
        assert M.dist(p, q) == pytest.approx(np.linalg.norm(per_column), rel=1e-12)
        assert M.norm(p, M.log(p, q)) == pytest.approx(M.dist(p, q), rel=1e-10)
    # close points: the arcsin form keeps the digits the arccos form loses
    p = np.array([0.2, 0.3, 0.5])
    u = 1e-9 * np.array([1.0, -2.0, 1.0])
    M3 = Multinomial(3)
    assert M3.dist(p, p + u) == pytest.approx(M3.norm(p, u), rel=1e-6)


def test_multinomial_exp_leaves_the_simplex_beyond_the_injectivity_radius():
    M = Multinomial(3)
    p = np.array([0.01, 0.49, 0.5])
    u = M.projection(p, np.array([-1.0, 0.5, 0.5]))
    u = u / M.norm(p, u)
    r = M.injectivity_radius(p)
    assert r == pytest.approx(2 * np.arcsin(0.1))
    inside = M.exp(p, 0.999 * r * u)
    M.check_point(inside, atol=1e-12)
    assert inside[0] < 1e-5  # close to the edge x_0 = 0 it reaches at r
    assert M.retraction(p, 10 * u).min() > 0  # the retraction never leaves


def test_hyperboloid_distance_against_the_poincare_ball():
    H, B = Hyperboloid(3), PoincareBall(3)
    rng = np.random.default_rng(0)
    for scale in (1e-6, 1.0, 3.0):
        x = H.random_point(rng)
        y = H.exp(x, scale * H.random_tangent_vector(x, rng))
        assert H.dist(x, y) == pytest.approx(B.dist(H.to_ball(x), H.to_ball(y)), rel=1e-9)
        assert H.dist(x, y) == pytest.approx(scale, rel=1e-9)
        np.testing.assert_allclose(H.from_ball(H.to_ball(x)), x, rtol=1e-12)
    # 25 from the origin, where the ball's 1 - |b|^2 is about 1e-11
    origin = np.r_[1.0, 0.0, 0.0, 0.0]
    far = H.exp(origin, np.r_[0.0, 25.0, 0.0, 0.0])
    assert H.dist(origin, far) == pytest.approx(25.0, rel=1e-12)



def _exact_hyperbolic_distance(x, y):
    """The distance of the points with the space parts of ``x`` and ``y``, in 80 digits."""
    getcontext().prec = 80
    xs, ys = [Decimal(float(v)) for v in x[1:]], [Decimal(float(v)) for v in y[1:]]
    x0, y0 = (1 + sum(v * v for v in xs)).sqrt(), (1 + sum(v * v for v in ys)).sqrt()
    t = ((x0 * y0 - sum(a * b for a, b in zip(xs, ys)) - 1) / 2).sqrt()
    return float(2 * (t + (t * t + 1).sqrt()).ln())  # 2 arsinh(sqrt(q / 2))


@pytest.mark.parametrize("far", [10.0, 20.0])
def test_hyperboloid_distance_and_log_far_from_the_origin(far):
    """At 20 from the origin the Minkowski product of two points 0.01-3 apart cancels
    to nothing; the distance must still match an 80-digit evaluation."""
    H = Hyperboloid(4)
    rng = np.random.default_rng(3)
    origin = np.r_[1.0, np.zeros(4)]
    for _ in range(20):
        u = H.projection(origin, np.r_[0.0, rng.standard_normal(4)])
        centre = H.exp(origin, far * u / H.norm(origin, u))
        v = H.random_tangent_vector(centre, rng) * rng.uniform(0.01, 3.0)
        y = H.exp(centre, v)
        exact = _exact_hyperbolic_distance(centre, y)
        assert H.dist(centre, y) == pytest.approx(exact, rel=1e-6)
        assert H.norm(centre, H.log(centre, y)) == pytest.approx(exact, rel=1e-6)
        assert H.dist(H.exp(centre, H.log(centre, y)), y) <= 1e-6 * exact


def test_poincare_ball_distance_and_log_near_the_sphere():
    """Points 20 from the origin, within 1e-8 of the unit sphere: the distance (to itself
    too, once NaN) against an 80-digit evaluation of the ball's own formula."""
    getcontext().prec = 80
    H, B = Hyperboloid(3), PoincareBall(3)
    rng = np.random.default_rng(5)
    centre = H.exp(np.r_[1.0, 0.0, 0.0, 0.0], np.r_[0.0, 20.0, 0.0, 0.0])
    x = H.to_ball(centre)
    assert B.dist(x, x) == 0.0 and not B.log(x, x).any()
    for _ in range(10):
        y = H.to_ball(H.exp(centre, H.random_tangent_vector(centre, rng)))
        xd, yd = [Decimal(float(v)) for v in x], [Decimal(float(v)) for v in y]
        chord = sum((a - b) ** 2 for a, b in zip(xd, yd))
        t = (chord / ((1 - sum(a * a for a in xd)) * (1 - sum(b * b for b in yd)))).sqrt()
        exact = float(2 * (t + (t * t + 1).sqrt()).ln())
        # 1 - |x|^2 ~ 5e-9 is computed to a relative error of about eps / 5e-9 ~ 4e-8
        assert B.dist(x, y) == pytest.approx(exact, rel=1e-7)
        assert B.norm(x, B.log(x, y)) == pytest.approx(exact, rel=1e-7)

def _fisher_rao_mean_problem(points):
    M = Multinomial(points.shape[1])

    def cost(x):
        return sum(M.dist(x, p) ** 2 for p in points) / 2

    def egrad(x):  # of d = 2 arccos(s), s = sum sqrt(x p)
        g = np.zeros_like(x)
        for p in points:
            s = min(np.sum(np.sqrt(x * p)), 1.0)
            d = 2 * np.arccos(s)
            g -= d * np.sqrt(p / x) / np.sqrt(1 - s * s)
        return g

    return jitopt.Problem(M, cost, egrad)


def _hyperbolic_mean_problem(points):
    H = Hyperboloid(points.shape[1] - 1)

    def cost(x):
        return sum(H.dist(x, a) ** 2 for a in points) / 2

    def egrad(x):  # of d(., a)^2 / 2: -(d / sqrt(z^2 - 1)) J a, z = -<x, a>_L
        g = np.zeros_like(x)
        for a in points:
            z = a[0] * x[0] - a[1:] @ x[1:]
            d = H.dist(x, a)
            ja = np.r_[-a[0], a[1:]]
            g -= (d / np.sqrt(max(z * z - 1, 1e-300)) if d > 0 else 1.0) * ja
        return g

    return jitopt.Problem(H, cost, egrad)


@pytest.mark.parametrize("method", SOLVERS)
def test_frechet_mean_of_permuted_points_is_uniform(method):
    base = np.array([0.6, 0.3, 0.1])
    points = np.array([base[list(p)] for p in
                       ((0, 1, 2), (1, 2, 0), (2, 0, 1), (0, 2, 1), (2, 1, 0), (1, 0, 2))])
    problem = _fisher_rao_mean_problem(points)
    res = jitopt.minimize(problem, np.array([0.5, 0.3, 0.2]), method=method,
                          options={"gtol": 1e-10})
    assert res.success, res.message
    np.testing.assert_allclose(res.x, np.full(3, 1 / 3), atol=1e-9)


@pytest.mark.parametrize("method", SOLVERS)
def test_hyperbolic_mean_of_symmetric_points_is_the_centre(method):
    H = Hyperboloid(2)
    centre = H.from_ball(np.array([0.3, -0.2]))
    # four points at distance 2 from the centre in opposite pairs
    u, v = np.r_[0.0, 1.0, 0.0], np.r_[0.0, 0.0, 1.0]
    u, v = H.projection(centre, u), H.projection(centre, v)
    u = u / H.norm(centre, u)
    v = v - H.inner_product(centre, u, v) * u
    v = v / H.norm(centre, v)
    points = np.array([H.exp(centre, s * w) for w in (u, v) for s in (2.0, -2.0)])
    problem = _hyperbolic_mean_problem(points)
    res = jitopt.minimize(problem, H.from_ball(np.array([0.5, 0.4])), method=method,
                          options={"gtol": 1e-10})
    assert res.success, res.message
    assert H.dist(res.x, centre) <= 1e-8
    assert res.fun == pytest.approx(4 * 2.0 ** 2 / 2, rel=1e-10)


@pytest.mark.parametrize("method", SOLVERS)
def test_hyperbolic_midpoint_of_far_points(method):
    """The midpoint (x + y)/||x + y||_L of points 20 apart, value d^2/4."""
    H = Hyperboloid(2)
    x, y = H.from_ball(np.array([0.9, 0.0])), H.from_ball(np.array([-0.5, 0.6]))
    x = H.exp(x, 8.0 * H.log(x, H.from_ball(np.array([0.99, 0.0]))) /
              H.dist(x, H.from_ball(np.array([0.99, 0.0]))))
    d = H.dist(x, y)
    w = x + y
    mid = w / np.sqrt(w[0] ** 2 - w[1:] @ w[1:])
    problem = _hyperbolic_mean_problem(np.array([x, y]))
    res = jitopt.minimize(problem, y, method=method, options={"gtol": 1e-9})
    assert d > 10 and res.success, res.message
    assert H.dist(res.x, mid) <= 1e-8 * d
    assert res.fun == pytest.approx(d * d / 4, rel=1e-10)


@pytest.mark.parametrize("method", SOLVERS)
def test_multinomial_entropic_and_likelihood_optima(method):
    M = Multinomial(4, 2)
    c = np.array([[0.5, 2.0], [1.0, -1.0], [-0.3, 0.0], [0.0, 0.7]])
    a = np.array([[3.0, 1.0], [1.0, 1.0], [2.0, 5.0], [4.0, 1.0]])
    # <c, p> + sum p log p - sum a log p: minimum where log p + 1 + c - a/p is constant
    problem = jitopt.Problem(
        M, lambda p: np.sum(c * p + p * np.log(p)), lambda p: c + np.log(p) + 1,
        ehess=lambda p, u: u / p)
    res = jitopt.minimize(problem, M.random_point(0), method=method, options={"gtol": 1e-10})
    softmax = np.exp(-c) / np.exp(-c).sum(axis=0)
    np.testing.assert_allclose(res.x, softmax, atol=1e-9)
    mle = jitopt.Problem(M, lambda p: -np.sum(a * np.log(p)), lambda p: -a / p,
                         ehess=lambda p, u: a * u / p ** 2)
    res = jitopt.minimize(mle, M.random_point(1), method=method, options={"gtol": 1e-10})
    np.testing.assert_allclose(res.x, a / a.sum(axis=0), atol=1e-9)


@pytest.mark.parametrize("method", SOLVERS)
def test_special_euclidean_registration_is_kabsch_with_the_determinant(method):
    """min sum ||R p_i + t - q_i||^2 over SE(3), for data whose best orthogonal fit is a
    reflection: the answer is Kabsch's with D = diag(1, 1, -1)."""
    rng = np.random.default_rng(3)
    P = rng.standard_normal((3, 12))
    Q = np.diag([1.0, 1.0, -1.0]) @ P + 0.05 * rng.standard_normal((3, 12)) + 1.0
    pc, qc = P - P.mean(axis=1, keepdims=True), Q - Q.mean(axis=1, keepdims=True)
    w, _, vt = np.linalg.svd(qc @ pc.T)
    assert np.linalg.det(w @ vt) < 0  # the best orthogonal fit is a reflection
    R = w @ np.diag([1.0, 1.0, -1.0]) @ vt
    t = Q.mean(axis=1) - R @ P.mean(axis=1)
    M = SpecialEuclidean(3)
    Ph, Qh = np.vstack([P, np.ones(12)]), np.vstack([Q, np.ones(12)])
    problem = jitopt.Problem(M, lambda X: np.sum((X @ Ph - Qh) ** 2),
                             lambda X: 2 * (X @ Ph - Qh) @ Ph.T,
                             ehess=lambda X, U: 2 * U @ Ph @ Ph.T)
    res = jitopt.minimize(problem, M.random_point(0), method=method, options={"gtol": 1e-9})
    assert res.success, res.message
    got_R, got_t = M.unpack(res.x)
    np.testing.assert_allclose(got_R, R, atol=1e-8)
    np.testing.assert_allclose(got_t, t, atol=1e-8)


def test_special_euclidean_frechet_mean_of_symmetric_motions():
    M = SpecialEuclidean(2)

    def rot(a):
        return np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])

    points = [M.pack((rot(s * 0.7), s * np.array([1.0, -2.0]))) for s in (1.0, -1.0)]
    problem = jitopt.Problem(M, lambda X: sum(M.dist(X, p) ** 2 for p in points) / 2,
                             lambda X: -sum(M.log(X, p) for p in points))  # tangent: rgrad
    res = jitopt.solvers.rlbfgs(problem, M.pack((rot(0.3), np.array([0.5, 0.5]))), gtol=1e-10)
    np.testing.assert_allclose(res.x, np.eye(3), atol=1e-9)
    assert res.fun == pytest.approx(2 * 0.7 ** 2 + 5.0, rel=1e-10)  # |log R|_F^2 = 2 a^2


@pytest.mark.parametrize("n", [2, 3])
def test_rotation_logarithm_in_closed_form_matches_logm(n):
    # the closed forms of O(2) and O(3) (Rodrigues) against scipy's logm, at small angles,
    # generic ones and near pi (where the 3-D axis comes from the symmetric part), in both
    # components of O(n); at a rotation by pi there is no principal logarithm
    import scipy.linalg

    M = jitopt.manifolds.Orthogonal(n)
    rng = np.random.default_rng(n)
    flip = np.diag([-1.0] + [1.0] * (n - 1))
    for i, angle in enumerate([1e-9, 1e-4, 0.7, 1.9, 2.5, np.pi - 1e-3, np.pi - 1e-7]):
        axis = rng.standard_normal(3)
        w = angle * axis / np.linalg.norm(axis) if n == 3 else np.array([0, 0, angle])
        omega = np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])
        omega = omega[:n, :n] if n == 3 else omega[:2, :2]
        x = M.random_point(i)
        if np.linalg.det(x) * (-1) ** i < 0:  # both components: det(x) = (-1)^i
            x = x @ flip
        y = x @ scipy.linalg.expm(omega)
        u = M.log(x, y)
        np.testing.assert_allclose(u, x @ np.real(scipy.linalg.logm(x.T @ y)), atol=1e-9)
        np.testing.assert_allclose(u, x @ omega, atol=1e-9)
        assert M.dist(x, y) == pytest.approx(angle * np.sqrt(2), rel=1e-9)
    x = M.random_point(9)
    with pytest.raises(ValueError, match="cut locus"):
        M.log(x, x @ np.diag([-1.0, -1.0] + [1.0] * (n - 2)))


def test_bad_sizes_and_points_are_refused():
    with pytest.raises(ValueError, match="n must be"):
        Multinomial(1)
    with pytest.raises(ValueError, match="not positive"):
        Multinomial(3).check_point(np.array([0.5, 0.5, 0.0]))
    with pytest.raises(ValueError, match="column sum"):
        Multinomial(3).check_point(np.array([0.5, 0.5, 0.1]))
    with pytest.raises(ValueError, match="lower sheet"):
        Hyperboloid(2).check_point(np.array([-1.0, 0.0, 0.0]))
    with pytest.raises(ValueError, match="<x, x>_L"):
        Hyperboloid(2).check_point(np.array([1.0, 0.5, 0.0]))
    M = SpecialEuclidean(2)
    X = np.eye(3)
    X[2, 0] = 0.1
    with pytest.raises(ValueError, match="last row"):
        M.check_point(X)
    with pytest.raises(ValueError, match="det"):
        M.check_point(np.diag([1.0, -1.0, 1.0]))
    np.testing.assert_allclose(Multinomial(3).closest_point(np.array([0.5, 0.5, -0.1])),
                               [0.5, 0.5, 1e-300])
