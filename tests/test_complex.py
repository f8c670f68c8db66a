"""The complex manifolds: contract, gradients and Hessians, known optima, complex input."""

import numpy as np
import pytest
import scipy.linalg

import jitopt
from jitopt.manifolds import (ComplexCircle, ComplexGrassmann, HermitianPositiveDefinite,
                              Sphere, UnitaryGroup)
from jitopt.testing import check_gradient, check_hessian, check_manifold

MANIFOLDS = (
    [ComplexCircle(1), ComplexCircle(7)]
    + [UnitaryGroup(4, retraction=r) for r in UnitaryGroup.retractions] + [UnitaryGroup(1)]
    + [ComplexGrassmann(6, 2, retraction=r) for r in ComplexGrassmann.retractions]
    + [ComplexGrassmann(4, 3), ComplexGrassmann(5, 1)]
    + [HermitianPositiveDefinite(3, retraction=r)
       for r in HermitianPositiveDefinite.retractions]
    + [HermitianPositiveDefinite(1)]
)


def _id(m):
    return f"{m}-{m.retraction_name}" if m.retraction_name else str(m)


every_manifold = pytest.mark.parametrize("manifold", MANIFOLDS, ids=_id)


def _cnormal(rng, *shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _hermitian(rng, n):
    a = _cnormal(rng, n, n)
    return 0.5 * (a + a.conj().T)


@every_manifold
def test_contract(manifold):
    """check_manifold with complex directions: points stay on the manifold over 300
    retraction steps, first-order retraction, projection, transport, metric, exp/log."""
    check_manifold(manifold, rng=0, n_steps=300, atol=1e-12)


@every_manifold
def test_points_and_vectors_are_complex(manifold):
    x = manifold.random_point(rng=1)
    u = manifold.random_tangent_vector(x, rng=2)
    assert x.dtype == u.dtype == manifold.zero_vector(x).dtype == np.complex128
    assert isinstance(manifold.inner_product(x, u, 1j * u), float)


def test_dimensions():
    assert ComplexCircle(5).dim == 5
    assert UnitaryGroup(3).dim == 9
    assert ComplexGrassmann(5, 2).dim == 12
    assert HermitianPositiveDefinite(3).dim == 9


# -- gradients and Hessians: one quadratic-plus-quartic cost per manifold -----------------


def _problem(manifold, rng):
    """f(x) = Re<B, x> + Re<x, A x> + |x|^4 / 4 (A Hermitian acting on the first axis)."""
    n = manifold.shape[0]
    a, b = _hermitian(rng, n), _cnormal(rng, *manifold.shape)

    def cost(x):
        nx = np.vdot(x, x).real
        return np.vdot(b, x).real + np.vdot(x, a @ x).real + 0.25 * nx * nx

    def egrad(x):
        return b + 2 * a @ x + np.vdot(x, x).real * x

    def ehess(x, u):
        return 2 * a @ u + np.vdot(x, x).real * u + 2 * np.vdot(x, u).real * x

    if isinstance(manifold, ComplexGrassmann):
        return _invariant_problem(manifold, a, _hermitian(rng, n))
    return jitopt.Problem(manifold, cost, egrad, ehess=ehess)


def _invariant_problem(manifold, a, b):
    """f(X) = -Re tr(X^H A X) + ||X^H B X||_F^2 / 2, invariant under X -> XQ (Grassmann)."""
    def cost(x):
        return -np.vdot(x, a @ x).real + 0.5 * np.linalg.norm(x.conj().T @ b @ x) ** 2

    def egrad(x):
        return -2 * a @ x + 2 * b @ x @ (x.conj().T @ b @ x)

    def ehess(x, u):
        m, dm = x.conj().T @ b @ x, u.conj().T @ b @ x + x.conj().T @ b @ u
        return -2 * a @ u + 2 * b @ u @ m + 2 * b @ x @ dm

    return jitopt.Problem(manifold, cost, egrad, ehess=ehess)


@every_manifold
def test_gradient_slope_two(manifold):
    res = check_gradient(_problem(manifold, np.random.default_rng(3)), rng=4)
    assert abs(res.slope - 2) < 0.1


@every_manifold
def test_hessian_against_gradient_differences(manifold):
    res = check_hessian(_problem(manifold, np.random.default_rng(5)), rng=6)
    assert res.error < 1e-6 and res.symmetry < 1e-10 and res.tangency < 1e-12


def test_conjugated_gradient_fails_the_check():
    """f(z) = sum |z - c|^2 has G = 2(z - c); JAX's convention conj(G) must fail."""
    M, c = ComplexCircle(6), np.exp(1j * np.arange(6.0)) * 0.5

    def cost(z):
        return float(np.sum(np.abs(z - c) ** 2))

    right = jitopt.Problem(M, cost, lambda z: 2 * (z - c))
    wrong = jitopt.Problem(M, cost, lambda z: np.conj(2 * (z - c)))
    assert abs(check_gradient(right, rng=0).slope - 2) < 0.1
    assert abs(check_gradient(wrong, rng=0).slope - 1) < 0.2


# -- known optima through minimize -----------------------------------------------------------


def test_phase_synchronisation_noiseless():
    """C = z* z*^H: f(z) = -Re(z^H C z) = -|z*^H z|^2 has f* = -n^2 at e^{ia} z*."""
    n = 12
    rng = np.random.default_rng(0)
    zs = np.exp(1j * rng.uniform(-np.pi, np.pi, n))
    c = np.outer(zs, zs.conj())
    M = ComplexCircle(n)
    z0 = M.random_point(rng=1)
    z0_copy = z0.copy()
    res = jitopt.minimize(lambda z: -np.vdot(z, c @ z).real, z0, jac=lambda z: -2 * c @ z,
                          manifold=M, tol=1e-10)
    assert res.success and res.x.dtype == np.complex128
    assert abs(res.fun + n * n) <= 1e-9 * n * n
    assert abs(np.vdot(zs, res.x)) / n >= 1 - 1e-10
    np.testing.assert_array_equal(z0, z0_copy)


def test_unitary_procrustes_closed_form():
    """min ||X - A||_F^2 over U(n): X* = W V^H for A = W S V^H,
    f* = ||A||_F^2 + n - 2 ||A||_*."""
    n = 5
    a = _cnormal(np.random.default_rng(2), n, n)
    w, s, vh = np.linalg.svd(a)
    M = UnitaryGroup(n)
    res = jitopt.minimize(lambda x: np.linalg.norm(x - a) ** 2, M.random_point(rng=3),
                          jac=lambda x: 2 * (x - a), manifold=M, tol=1e-10)
    fopt = np.linalg.norm(a) ** 2 + n - 2 * s.sum()
    assert res.success
    assert abs(res.fun - fopt) <= 1e-10 * fopt
    np.testing.assert_allclose(res.x, w @ vh, atol=1e-8)


def test_dominant_complex_subspace():
    """max Re tr(X^H A X): the top-p eigenspace of the Hermitian A, f* = -sum of the top p
    eigenvalues; and the cost is invariant under X -> XQ."""
    n, p = 10, 3
    a = _hermitian(np.random.default_rng(4), n)
    lam, v = np.linalg.eigh(a)
    M = ComplexGrassmann(n, p)

    def cost(x):
        return -np.vdot(x, a @ x).real

    x0 = M.random_point(rng=5)
    q = UnitaryGroup(p).random_point(rng=6)
    assert abs(cost(x0 @ q) - cost(x0)) <= 1e-12 * abs(cost(x0))
    res = jitopt.minimize(cost, x0, jac=lambda x: -2 * a @ x, manifold=M, tol=1e-10)
    assert res.success
    assert abs(res.fun + lam[-p:].sum()) <= 1e-10 * lam[-p:].sum()
    assert M.dist(res.x, v[:, -p:]) <= 1e-8


def test_hpd_karcher_mean_of_two_is_the_geometric_mean():
    """f(X) = (dist^2(X, A) + dist^2(X, B)) / 2 has its minimum at A # B =
    A^1/2 (A^-1/2 B A^-1/2)^1/2 A^1/2, and grad f = -(log_X A + log_X B)."""
    M = HermitianPositiveDefinite(3)
    a, b = M.random_point(rng=7), M.random_point(rng=8)
    ra = scipy.linalg.sqrtm(a)
    ria = np.linalg.inv(ra)
    mean = ra @ scipy.linalg.sqrtm(ria @ b @ ria) @ ra

    def cost(x):
        return 0.5 * (M.dist(x, a) ** 2 + M.dist(x, b) ** 2)

    def egrad(x):  # the Euclidean gradient G with X herm(G) X = -(log_X A + log_X B)
        xi = np.linalg.inv(x)
        return -xi @ (M.log(x, a) + M.log(x, b)) @ xi

    res = jitopt.minimize(cost, M.random_point(rng=9), jac=egrad, manifold=M, tol=1e-10)
    assert res.success
    assert M.dist(res.x, mean) <= 1e-8
    assert abs(res.fun - 0.25 * M.dist(a, b) ** 2) <= 1e-10


def test_exp_log_closed_forms():
    M = ComplexCircle(3)
    x = np.array([1, 1j, -1], dtype=complex)
    y = x * np.exp(1j * np.array([0.5, -3.0, np.pi]))
    np.testing.assert_allclose(M.log(x, y), 1j * np.array([0.5, -3.0, np.pi]) * x)
    assert M.dist(x, y) == pytest.approx(np.sqrt(0.25 + 9 + np.pi ** 2), rel=1e-14)
    U = UnitaryGroup(2)
    t = 0.7
    rot = np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]], dtype=complex)
    assert U.dist(np.eye(2, dtype=complex), rot) == pytest.approx(np.sqrt(2) * t, rel=1e-12)
    assert U.dist(np.eye(2, dtype=complex), 1j * np.eye(2)) == pytest.approx(
        np.sqrt(2) * np.pi / 2, rel=1e-12)


# -- complex input at the boundary --------------------------------------------------------


def test_complex_x0_refused_on_a_real_manifold():
    with pytest.raises(TypeError, match="x0 must be a real numeric array"):
        jitopt.minimize(lambda x: float(np.sum(np.abs(x) ** 2)), np.array([1j, 0.0]),
                        jac=lambda x: 2 * x, manifold=Sphere(2))


def test_real_x0_promoted_on_a_complex_manifold():
    M = ComplexCircle(3)
    x = M.validate_point(np.array([1.0, -1.0, 1.0]))
    assert x.dtype == np.complex128


def test_complex_cost_value_refused():
    M = ComplexCircle(3)
    problem = jitopt.Problem(M, lambda z: np.vdot(z, z), lambda z: 2 * z)
    with pytest.raises(jitopt.OracleError, match="real scalar"):
        problem.cost(M.random_point(rng=0))
    res = jitopt.minimize(problem, M.random_point(rng=0))
    assert not res.success and res.status == jitopt.Status.ORACLE_ERROR


def test_check_point_messages():
    with pytest.raises(ValueError, match=r"\|z_i\| - 1"):
        ComplexCircle(2).check_point(np.array([1.0, 2j]))
    with pytest.raises(ValueError, match="XᴴX - I"):
        UnitaryGroup(2).check_point(np.ones((2, 2), dtype=complex))
    with pytest.raises(ValueError, match="not Hermitian"):
        HermitianPositiveDefinite(2).check_point(np.array([[1, 1j], [1j, 1]]))
    with pytest.raises(ValueError, match="not positive"):
        HermitianPositiveDefinite(2).check_point(-np.eye(2, dtype=complex))


@pytest.mark.parametrize("make, exc", [
    (lambda: ComplexCircle(0), ValueError),
    (lambda: ComplexCircle(2.0), TypeError),
    (lambda: UnitaryGroup(3, retraction="cayley"), ValueError),
    (lambda: ComplexGrassmann(2, 3), ValueError),
    (lambda: HermitianPositiveDefinite(True), TypeError),
])
def test_bad_constructor_arguments(make, exc):
    with pytest.raises(exc):
        make()


@every_manifold
def test_closest_point_projects_and_low_precision_is_promoted(manifold):
    x = manifold.random_point(rng=10)
    near = x + 1e-4 * _cnormal(np.random.default_rng(11), *manifold.shape)
    if isinstance(manifold, HermitianPositiveDefinite):
        near = 0.5 * (near + near.conj().T)
    y = manifold.closest_point(near)
    manifold.check_point(y, atol=1e-12)
    with pytest.raises(ValueError, match="is not a point"):
        manifold.check_point(x + 1e-3 * _cnormal(np.random.default_rng(12), *manifold.shape)
                             if not isinstance(manifold, HermitianPositiveDefinite)
                             else x + 1e-3j * np.eye(manifold.n))
    z = manifold.validate_point(x.astype(np.complex64))  # promoted, then re-projected
    assert z.dtype == np.complex128
    manifold.check_point(z, atol=1e-12)


def test_complex_gradient_refused_on_a_real_manifold():
    problem = jitopt.Problem(Sphere(2), lambda x: float(x[0]), lambda x: x + 1j)
    with pytest.raises(jitopt.OracleError, match="complex array on the real manifold"):
        problem.egrad(np.array([1.0, 0.0]))
