"""Automatic differentiation through JAX: egrad="jax", ehess="jax", jac="jax"."""

import sys

import numpy as np
import pytest

import jitopt
from jitopt.manifolds import ComplexCircle, ComplexGrassmann, Euclidean, Sphere, Stiefel


def _cnormal(rng, *shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _cases(jnp):
    """Three problems, each with a jax.numpy cost and hand-written gradient and Hessian."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((8, 8))
    a = a + a.T
    b = rng.standard_normal((30, 4))
    y = np.sign(rng.standard_normal(30))
    c = _cnormal(rng, 6, 6)
    c = c + c.conj().T
    return {
        # Brockett cost with a quartic term on Stiefel(8, 3)
        "brockett": (
            Stiefel(8, 3),
            lambda x: jnp.trace(x.T @ a @ x @ jnp.diag(jnp.arange(1.0, 4.0)))
            + 0.25 * jnp.sum(x ** 4),
            lambda x: 2 * a @ x @ np.diag(np.arange(1.0, 4.0)) + x ** 3,
            lambda x, u: 2 * a @ u @ np.diag(np.arange(1.0, 4.0)) + 3 * x ** 2 * u,
        ),
        # logistic regression on R^4
        "logistic": (
            Euclidean(4),
            lambda w: jnp.sum(jnp.logaddexp(0.0, -y * (b @ w))),
            lambda w: -b.T @ (y / (1 + np.exp(y * (b @ w)))),
            lambda w, u: b.T @ ((np.exp(y * (b @ w)) / (1 + np.exp(y * (b @ w))) ** 2)
                                * (b @ u)),
        ),
        # a complex cost: the dominant complex subspace, -Re tr(X^H C X) + |X|^4 / 4
        "complex": (
            ComplexGrassmann(6, 2),
            lambda x: -jnp.real(jnp.vdot(x, c @ x)) + 0.25 * jnp.sum(jnp.abs(x) ** 4),
            lambda x: -2 * c @ x + np.abs(x) ** 2 * x,
            lambda x, u: -2 * c @ u + np.abs(x) ** 2 * u + 2 * (np.conj(x) * u).real * x,
        ),
    }


@pytest.fixture(scope="module")
def jnp():
    return pytest.importorskip("jax.numpy")


def _f64(cost, x):
    """The jax.numpy cost evaluated in float64 (JAX computes in float32 by default)."""
    import jax

    with jax.enable_x64(True):
        return float(cost(x))


@pytest.mark.parametrize("name", ["brockett", "logistic", "complex"])
def test_gradients_and_hvps_equal_hand_written(jnp, name):
    manifold, cost, egrad, ehess = _cases(jnp)[name]
    problem = jitopt.Problem(manifold, cost, egrad="jax", ehess="jax")
    rng = np.random.default_rng(1)
    for _ in range(3):
        x = manifold.random_point(rng)
        u = manifold.random_tangent_vector(x, rng)
        f, g = problem.cost_and_egrad(x)
        assert isinstance(f, float) and abs(f - _f64(cost, x)) <= 1e-12 * max(1, abs(f))
        for got, want in ((g, egrad(x)), (problem.egrad(x), egrad(x)),
                          (problem.ehess(x, u), ehess(x, u))):
            assert got.dtype == manifold.dtype and got.flags.writeable
            assert np.linalg.norm(got - want) <= 1e-10 * max(1.0, np.linalg.norm(want))


def test_counts_exact(jnp):
    manifold, cost, egrad, ehess = _cases(jnp)["brockett"]
    problem = jitopt.Problem(manifold, cost, egrad="jax", ehess="jax")
    x = manifold.random_point(rng=0)
    problem.cost(x)
    problem.egrad(x)
    problem.cost_and_egrad(x)
    problem.ehess(x, x)
    problem.ehess(x, x)
    assert problem.counts.as_dict() == {"nfev": 2, "njev": 2, "nifo": 2, "nhev": 2}


def test_minimize_jac_jax_takes_the_steps_of_the_hand_written_gradient(jnp):
    manifold, cost, egrad, _ = _cases(jnp)["brockett"]
    x0 = manifold.random_point(rng=2)
    # the first 15 steps (later ones differ by rounding, which BB steps amplify)
    opts = {"maxiter": 15}
    fun = jitopt.minimize(cost, x0, jac="jax", manifold=manifold, options=opts)
    hand = jitopt.minimize(lambda x: (_f64(cost, x), egrad(x)), x0, jac=True,
                           manifold=manifold, options=opts)
    assert (fun.nit, fun.nfev, fun.njev) == (hand.nit, hand.nfev, hand.njev)
    assert fun.nfev > fun.nit == 15
    assert abs(fun.fun - hand.fun) <= 1e-10 * abs(hand.fun)


def test_traced_once_per_problem_and_x64_left_alone(jnp):
    import jax

    traces = []
    A = np.diag(np.arange(1.0, 6.0))

    def cost(x):
        traces.append(1)  # runs when JAX traces, not when the compiled code runs
        return -x @ A @ x

    before = jax.config.jax_enable_x64
    problem = jitopt.Problem(Sphere(5), cost, egrad="jax", ehess="jax")
    res = jitopt.minimize(problem, Sphere(5).random_point(rng=0), tol=1e-10)
    x = res.x
    for _ in range(5):
        problem.cost(x), problem.egrad(x), problem.cost_and_egrad(x), problem.ehess(x, x)
    assert res.success and abs(res.fun + 5.0) <= 1e-12
    assert len(traces) <= 4  # value, gradient, value-and-gradient, HVP: once each
    assert jax.config.jax_enable_x64 == before
    # float64 throughout: the gradient is exact to rounding
    np.testing.assert_allclose(problem.egrad(x), -2 * A @ x, rtol=0, atol=1e-14)


def test_phase_synchronisation_with_jax(jnp):
    """Complex costs: JAX's gradient is conjugated back; the optimum -n^2 is reached."""
    n = 8
    zs = np.exp(1j * np.random.default_rng(3).uniform(-np.pi, np.pi, n))
    c = np.outer(zs, zs.conj())
    M = ComplexCircle(n)
    res = jitopt.minimize(lambda z: -jnp.real(jnp.vdot(z, c @ z)), M.random_point(rng=4),
                          jac="jax", manifold=M, tol=1e-10)
    assert res.success and abs(res.fun + n * n) <= 1e-9 * n * n
    assert abs(np.vdot(zs, res.x)) / n >= 1 - 1e-10


def test_args_reach_the_jax_cost(jnp):
    res = jitopt.minimize(lambda x, s: jnp.sum((x - s) ** 2), np.zeros(3), args=(2.0,),
                          jac="jax", tol=1e-10)
    np.testing.assert_allclose(res.x, 2.0, atol=1e-10)


def test_complex_cost_refused(jnp):
    M = ComplexCircle(3)
    problem = jitopt.Problem(M, lambda z: jnp.vdot(z, z), egrad="jax")
    z = M.random_point(rng=0)
    with pytest.raises(jitopt.OracleError, match="real scalar"):
        problem.cost(z)
    with pytest.raises(jitopt.OracleError):
        problem.egrad(z)


def test_bad_arguments(jnp):
    with pytest.raises(ValueError, match='egrad must be callable, None or "jax"'):
        jitopt.Problem(Sphere(3), lambda x: x[0], egrad="autograd")
    with pytest.raises(ValueError, match="cost_and_egrad cannot be given"):
        jitopt.Problem(Sphere(3), lambda x: x[0], egrad="jax",
                       cost_and_egrad=lambda x: (x[0], x))
    with pytest.raises(TypeError, match="cost must be callable"):
        jitopt.Problem(Sphere(3), None, egrad="jax")
    with pytest.raises(ValueError, match="'jax'"):
        jitopt.minimize(lambda x: x[0], np.ones(2), jac="torch")


def test_without_jax_an_import_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "jax", None)  # import jax now raises ImportError
    with pytest.raises(ImportError, match=r'jitopt\[jax\]'):
        jitopt.Problem(Sphere(3), lambda x: x[0], egrad="jax")
    with pytest.raises(ImportError, match=r'jitopt\[jax\]'):
        jitopt.minimize(lambda x: x[0], np.ones(3) / np.sqrt(3), jac="jax",
                        manifold=Sphere(3))


def test_missing_egrad_message_points_to_jax():
    problem = jitopt.Problem(Sphere(3), lambda x: x[0])  # a cost alone: derivative-free
    with pytest.raises(TypeError, match='rgd.*egrad is required.*"jax"'):
        jitopt.solvers.rgd(problem)
    with pytest.raises(TypeError, match='egrad is required.*"jax"'):
        problem.egrad(np.array([1.0, 0.0, 0.0]))
