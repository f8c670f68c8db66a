"""Manifolds with Numba kernels: :class:`Euclidean`, :class:`Sphere`, :class:`Stiefel`,
:class:`Grassmann`, :class:`Orthogonal` and :class:`SPD` (the last five with ``k=`` copies);
:class:`Product`, :class:`Oblique`, :class:`Elliptope`, :class:`PSDFixedRank`,
:class:`FixedRankEmbedded`, :class:`PoincareBall`, :class:`Positive`, :class:`Symmetric`,
:class:`SkewSymmetric`; and the complex manifolds.

Method names follow pymanopt: ``inner_product, norm, projection,
euclidean_to_riemannian_gradient, retraction, transport, random_point,
random_tangent_vector, zero_vector`` and, where cheap, ``exp, log, dist``; ``check_point``
raises a clear error for an array that is not a point (tolerance ``atol``), and
``closest_point`` maps an array to the nearest point where that is cheap.
"""

from ._base import Manifold
from ._complex import ComplexCircle, ComplexGrassmann, HermitianPositiveDefinite, UnitaryGroup
from ._euclidean import Euclidean, Sphere
from ._fixed_rank import FixedRankEmbedded
from ._hyperbolic import PoincareBall
from ._oblique import Elliptope, Oblique, PSDFixedRank
from ._product import Product
from ._spd import SPD
from ._stiefel import Grassmann, Orthogonal, Stiefel
from ._vector_spaces import Positive, SkewSymmetric, Symmetric

__all__ = ["Manifold", "Euclidean", "Sphere", "Stiefel", "Grassmann", "Orthogonal", "SPD"]
__all__ += ["Product", "Oblique", "Elliptope", "FixedRankEmbedded", "PSDFixedRank",
            "PoincareBall", "Positive", "Symmetric", "SkewSymmetric"]
__all__ += ["ComplexCircle", "UnitaryGroup", "ComplexGrassmann", "HermitianPositiveDefinite"]
