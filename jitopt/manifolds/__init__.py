"""Manifolds with Numba kernels: :class:`Euclidean`, :class:`Sphere`, :class:`Stiefel`,
:class:`Grassmann`, :class:`Orthogonal` and :class:`SPD`.

Method names follow pymanopt: ``inner_product, norm, projection,
euclidean_to_riemannian_gradient, retraction, transport, random_point,
random_tangent_vector, zero_vector`` and, where cheap, ``exp, log, dist``; ``check_point``
raises a clear error for an array that is not a point.
"""

from ._base import Manifold
from ._euclidean import Euclidean, Sphere
from ._spd import SPD
from ._stiefel import Grassmann, Orthogonal, Stiefel

__all__ = ["Manifold", "Euclidean", "Sphere", "Stiefel", "Grassmann", "Orthogonal", "SPD"]
