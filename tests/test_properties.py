"""Property-based checks of the manifold kernels over shapes and step scales.

The contract tests in ``test_manifolds.py`` step with tangent vectors of norm 0.5; here
hypothesis draws the shape, the seed and a step norm anywhere from 1e-12 to 1e6, the range
where a retraction formula is most likely to lose orthonormality or overflow.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jitopt.manifolds import Grassmann, Orthogonal, Sphere, Stiefel

SETTINGS = settings(max_examples=40, deadline=None, derandomize=True)
scales = st.floats(min_value=1e-12, max_value=1e6)
seeds = st.integers(min_value=0, max_value=2**32 - 1)


@st.composite
def stiefel_like(draw):
    """A Stiefel, Grassmann or orthogonal manifold with any of its retractions."""
    n = draw(st.integers(min_value=2, max_value=9))
    p = draw(st.integers(min_value=1, max_value=n))
    kind = draw(st.sampled_from(["stiefel", "grassmann", "orthogonal", "special"]))
    if kind == "stiefel":
        return Stiefel(n, p, retraction=draw(st.sampled_from(Stiefel.retractions)))
    if kind == "grassmann":  # Grassmann(n, n) is a single point, with no tangent vector
        p = min(p, n - 1)
        return Grassmann(n, p, retraction=draw(st.sampled_from(Grassmann.retractions)))
    retraction = draw(st.sampled_from(Orthogonal.retractions))
    return Orthogonal(n, special=kind == "special", retraction=retraction)


def _orthonormality_error(x):
    return np.linalg.norm(x.T @ x - np.eye(x.shape[1]))


@SETTINGS
@given(manifold=stiefel_like(), seed=seeds, scale=scales)
def test_retraction_is_orthonormal_at_any_scale(manifold, seed, scale):
    rng = np.random.default_rng(seed)
    x = manifold.random_point(rng)
    u = scale * manifold.random_tangent_vector(x, rng)
    y = manifold.retraction(x, u)
    assert np.all(np.isfinite(y))
    assert _orthonormality_error(y) <= 1e-12
    if isinstance(manifold, Orthogonal):  # the retraction stays in x's component
        assert np.linalg.det(y) == pytest.approx(np.linalg.det(x), abs=1e-10)


@SETTINGS
@given(manifold=stiefel_like(), seed=seeds, scale=st.floats(min_value=1e-12, max_value=1e-7))
def test_retraction_is_first_order(manifold, seed, scale):
    """R_x(u) = x + u + O(‖u‖²): for tiny steps the retraction is the step itself."""
    rng = np.random.default_rng(seed)
    x = manifold.random_point(rng)
    u = scale * manifold.random_tangent_vector(x, rng)
    y = manifold.retraction(x, u)
    assert np.linalg.norm(y - x - u) <= 10 * scale**2 + 1e-15 * manifold.n


@SETTINGS
@given(manifold=stiefel_like(), seed=seeds, scale=scales)
def test_projection_is_idempotent_and_tangent(manifold, seed, scale):
    rng = np.random.default_rng(seed)
    x = manifold.random_point(rng)
    a = scale * rng.standard_normal(manifold.shape)
    t = manifold.projection(x, a)
    np.testing.assert_allclose(manifold.projection(x, t), t, rtol=0, atol=1e-12 * scale)
    # Stiefel tangent vectors have a skew-symmetric XᵀU; Grassmann horizontal ones XᵀU = 0
    xtu = x.T @ t
    np.testing.assert_allclose(xtu + xtu.T, 0.0, atol=1e-12 * scale)


@SETTINGS
@given(n=st.integers(min_value=2, max_value=40), seed=seeds, scale=scales)
def test_sphere_retraction_unit_norm(n, seed, scale):
    for retraction in Sphere.retractions:
        manifold = Sphere(n, retraction=retraction)
        rng = np.random.default_rng(seed)
        x = manifold.random_point(rng)
        y = manifold.retraction(x, scale * manifold.random_tangent_vector(x, rng))
        assert abs(np.linalg.norm(y) - 1.0) <= 1e-14
