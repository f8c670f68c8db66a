"""Adversarial property tests of the manifolds' public methods: the projection and the
retraction of Stiefel, Grassmann and O(n) (one copy and several) on faulty arrays, and
``random_point`` with careless ``rng`` values on every manifold.

A complex array is refused by name (its imaginary part was dropped), an array of another
shape or none is refused by name before the compiled kernel (which failed inside Numba or
broadcast it); an accepted array gives the result of the healthy one: a tangent vector
that the projection leaves unchanged, a point of the manifold from the retraction. The
caller's arrays are never modified.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jitopt import manifolds as Mf

from test_adversarial_faults import (COUNTS, FAULTS, PER_FAULT, SAME, SETTINGS, exercise,
                                     healthy, inject, maybe_refused, report_counts, scalars,
                                     seeds)

GROUP = "manifolds"
report = report_counts(GROUP)

MATRIX = {"Stiefel": lambda k: Mf.Stiefel(5, 2, k=k),
          "Grassmann": lambda k: Mf.Grassmann(5, 2, k=k),
          "Orthogonal": lambda k: Mf.Orthogonal(3, k=k)}
#: the array faults these methods refuse: NaN and inf are the retraction's to refuse (the
#: projection is linear: NaN in, NaN out), scaled arrays are legal tangent vectors
CHECKED = ("complex", "empty", "wrong_shape")


@pytest.mark.parametrize("k", [1, 2])
@pytest.mark.parametrize("name", sorted(MATRIX))
@pytest.mark.parametrize("fault", [f for f in FAULTS if f in CHECKED + SAME + ("int",)])
@PER_FAULT
@given(seed=seeds)
def test_projection_and_retraction(name, k, fault, seed):
    M = MATRIX[name](k)
    rng = np.random.default_rng(seed)
    x = M.random_point(rng)
    u = 0.1 * rng.standard_normal(M.shape)
    v = M.projection(x, u)

    def check_projection(w):
        np.testing.assert_allclose(w, M.projection(x, healthy(fault, u)), rtol=1e-12,
                                   atol=1e-14)
        np.testing.assert_allclose(M.projection(x, w), w, atol=1e-12)  # tangent

    def check_retraction(y):
        np.testing.assert_allclose(y, M.retraction(x, healthy(fault, v)), atol=1e-12)
        M.check_point(y, atol=1e-10)

    exercise(GROUP, f"{name}.projection", fault, inject(fault, u, rng),
             lambda a: M.projection(x, a), ("u",), check_projection)
    exercise(GROUP, f"{name}.retraction", fault, inject(fault, v, rng),
             lambda a: M.retraction(x, a), ("u",), check_retraction)
    if fault in CHECKED:  # the point argument too: refused by its own name
        COUNTS[f"{GROUP}:{name}(x)"] += 1
        for call in (lambda: M.projection(inject(fault, x, rng), u),
                     lambda: M.retraction(inject(fault, x, rng), v)):
            with pytest.raises((TypeError, ValueError), match="^x must"):
                call()


def test_a_complex_vector_is_not_truncated():
    """The case of the report: the projection of a complex U dropped its imaginary part."""
    M = Mf.Stiefel(4, 2)
    x = M.random_point(0)
    with pytest.raises(TypeError, match="u must be real"):
        M.projection(x, x + 1j)
    with pytest.raises(ValueError, match=r"u must have shape \(4, 2\)"):
        M.retraction(x, np.ones((3, 2)))


ALL = {"Euclidean": lambda: Mf.Euclidean(3), "Sphere": lambda: Mf.Sphere(3),
       "Stiefel": lambda: Mf.Stiefel(4, 2), "Grassmann": lambda: Mf.Grassmann(4, 2),
       "Orthogonal": lambda: Mf.Orthogonal(3, special=True), "SPD": lambda: Mf.SPD(3),
       "FixedRankEmbedded": lambda: Mf.FixedRankEmbedded(4, 3, 2),
       "Oblique": lambda: Mf.Oblique(3, 2), "Product": lambda: Mf.Product(
           Mf.Sphere(3), Mf.Euclidean(2)), "ComplexCircle": lambda: Mf.ComplexCircle(3)}


@pytest.mark.parametrize("name", sorted(ALL))
@SETTINGS
@given(rng=st.one_of(scalars, st.sampled_from([np.random.default_rng(0), 2 ** 40, -3, "x"])))
def test_random_point_rng(name, rng):
    """``rng`` is a seed (a nonnegative int) or a Generator: anything else is refused by
    name; a legal one gives a point of the manifold, the same for the same seed."""
    COUNTS[f"{GROUP}:{name}.random_point(rng)"] += 1
    M = ALL[name]()
    x = maybe_refused(lambda: M.random_point(rng), "rng")
    legal_seed = isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) and rng >= 0
    if x is None:
        assert not (legal_seed or rng is None or isinstance(rng, np.random.Generator))
        return
    M.check_point(x, atol=1e-10)
    if legal_seed:
        np.testing.assert_array_equal(np.asarray(M.random_point(rng)), np.asarray(x))
