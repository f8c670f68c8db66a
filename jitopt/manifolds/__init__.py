"""Manifolds with Numba kernels: :class:`Euclidean`, :class:`Sphere`, :class:`Stiefel`,
:class:`Grassmann`, :class:`Orthogonal` and :class:`SPD` (the last five with ``k=`` copies);
:class:`Product`, :class:`Oblique`, :class:`Elliptope`, :class:`PSDFixedRank`,
:class:`FixedRankEmbedded`, :class:`PoincareBall`, :class:`Positive`, :class:`Symmetric`,
:class:`SkewSymmetric`, :class:`Multinomial`, :class:`Hyperboloid`,
:class:`SpecialEuclidean`; and the complex manifolds.

Method names follow pymanopt: ``inner_product, norm, projection,
euclidean_to_riemannian_gradient, retraction, transport, random_point,
random_tangent_vector, zero_vector`` and, where cheap, ``exp, log, dist``; ``check_point``
raises a clear error for an array that is not a point (tolerance ``atol``), and
``closest_point`` maps an array to the nearest point where that is cheap.
"""

from .._lazy import lazy_names

_NAMES = {
    "Manifold": "._base", "Euclidean": "._euclidean", "Sphere": "._euclidean",
    "Stiefel": "._stiefel", "Grassmann": "._stiefel", "Orthogonal": "._stiefel", "SPD": "._spd",
    "Product": "._product", "Oblique": "._oblique", "Elliptope": "._oblique",
    "PSDFixedRank": "._oblique", "FixedRankEmbedded": "._fixed_rank",
    "PoincareBall": "._hyperbolic", "Positive": "._vector_spaces",
    "Symmetric": "._vector_spaces", "SkewSymmetric": "._vector_spaces",
    "ComplexCircle": "._complex", "UnitaryGroup": "._complex", "ComplexGrassmann": "._complex",
    "HermitianPositiveDefinite": "._complex",
    "Multinomial": "._multinomial", "Hyperboloid": "._hyperbolic",
    "SpecialEuclidean": "._special_euclidean",
}

#: what the other parts of jitopt use that is not public: the QR factor and retraction, the
#: error for what is not a manifold, and the
#: compiled geometry of the SERENA kernels (codes, retraction, transport, projection)
_SHARED = {"q_factor": "._stiefel", "qr_retraction": "._stiefel", "manifold_type_error": "._base",
           **{name: "._kernels" for name in (
               "FAST", "INNER", "SPD_EXP", "axpby", "layout_projection", "spd_exp",
               "spd_transport", "sym", "spd_sqrt_and_inv_sqrt")}}

__all__ = list(_NAMES)
__getattr__, __dir__ = lazy_names(__name__, {**_NAMES, **_SHARED})
