"""Products of manifolds, with points packed in one float64 vector."""

import numpy as np

from ..validation import check_rng
from ._base import Manifold

__all__ = ["Product"]


class Product(Manifold):
    r"""The product :math:`\mathcal M_1\times\dots\times\mathcal M_r` of jitopt manifolds.

    A point (and a tangent vector, and a Euclidean gradient) is **one flat float64 vector**,
    the concatenation of the raveled parts: solvers do their arithmetic on it as on any
    array. :meth:`pack` builds it from the parts and :meth:`unpack` returns the parts as
    views of the manifold's shapes; :func:`jitopt.minimize` and ``validate_point`` also take
    a tuple of parts as ``x0``, and a ``Problem``'s ``egrad`` may return a tuple. The metric
    is the sum of the parts' metrics; every operation acts part by part; ``exp``, ``log``,
    ``dist`` (:math:`\sqrt{\sum_i \mathrm{dist}_i^2}`) and ``closest_point`` exist when every
    part has them; ``random_tangent_vector`` draws the parts jointly and normalises in the
    product norm.

    Parameters
    ----------
    *manifolds : jitopt.manifolds.Manifold
        At least one; no products of products.

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.manifolds import Product, Sphere, Stiefel
    >>> M = Product(Sphere(3), Stiefel(4, 2))
    >>> x = M.random_point(rng=0)
    >>> s, y = M.unpack(x)
    >>> x.shape, s.shape, y.shape
    ((11,), (3,), (4, 2))
    >>> bool(np.array_equal(M.pack((s, y)), x))
    True
    """

    def __init__(self, *manifolds):
        if not manifolds:
            raise TypeError("Product needs at least one manifold")
        for i, m in enumerate(manifolds):
            if not isinstance(m, Manifold):
                from ._base import manifold_type_error
                raise manifold_type_error(m, f"manifolds[{i}]")
            if isinstance(m, Product):
                raise ValueError("Product of products: list the factors in one Product")
            if getattr(m, "ambient_shape", m.shape) != m.shape:
                raise ValueError(f"{m!r} cannot be a factor of a Product (its Euclidean "
                                 f"gradients are not of its point shape)")
        self.manifolds = tuple(manifolds)
        sizes = [int(np.prod(m.shape)) for m in manifolds]
        self._offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
        name = "Product(" + ", ".join(map(repr, manifolds)) + ")"
        super().__init__(name, (int(self._offsets[-1]),), sum(m.dim for m in manifolds))
        if all(hasattr(m, f) for m in manifolds for f in ("exp", "log", "dist")):
            self.exp, self.log, self.dist = self._exp, self._log, self._dist
        if all(hasattr(m, "closest_point") for m in manifolds):
            self.closest_point = self._closest_point

    # -- the packed layout --------------------------------------------------------------

    def pack(self, parts):
        """One float64 vector from the parts (a tuple of arrays of the factors' shapes)."""
        if len(parts) != len(self.manifolds):
            raise ValueError(f"{self} has {len(self.manifolds)} parts, got {len(parts)}")
        out = np.empty(self.shape)
        for i, (m, a) in enumerate(zip(self.manifolds, parts)):
            a = np.asarray(a, dtype=float)
            if a.shape != m.shape:
                raise ValueError(f"part {i} must have shape {m.shape} (for {m!r}), "
                                 f"got {a.shape}")
            out[self._offsets[i]:self._offsets[i + 1]] = a.reshape(-1)
        return out

    def unpack(self, x):
        """The parts of a packed vector, as views of the factors' shapes."""
        x = np.asarray(x)
        return tuple(x[self._offsets[i]:self._offsets[i + 1]].reshape(m.shape)
                     for i, m in enumerate(self.manifolds))

    def _map(self, name, *arrays):
        parts = zip(*(self.unpack(a) for a in arrays))
        return self.pack([getattr(m, name)(*p) for m, p in zip(self.manifolds, parts)])

    def _sum(self, name, *arrays):
        parts = zip(*(self.unpack(a) for a in arrays))
        return [getattr(m, name)(*p) for m, p in zip(self.manifolds, parts)]

    # -- the interface ---------------------------------------------------------------------

    def inner_product(self, x, u, v):
        return float(sum(self._sum("inner_product", x, u, v)))

    def projection(self, x, u):
        return self._map("projection", x, u)

    def euclidean_to_riemannian_gradient(self, x, egrad):
        return self._map("euclidean_to_riemannian_gradient", x, egrad)

    def euclidean_to_riemannian_hessian(self, x, egrad, ehess, u):
        return self._map("euclidean_to_riemannian_hessian", x, egrad, ehess, u)

    def retraction(self, x, u):
        return self._map("retraction", x, u)

    def transport(self, x1, x2, u):
        return self._map("transport", x1, x2, u)

    def _exp(self, x, u):
        return self._map("exp", x, u)

    def _log(self, x, y):
        return self._map("log", x, y)

    def _dist(self, x, y):
        return float(np.sqrt(sum(d * d for d in self._sum("dist", x, y))))

    def _closest_point(self, x):
        """The nearest point of each part."""
        return self._map("closest_point", self._packed(x))

    def random_point(self, rng=None):
        rng = check_rng(rng)
        return self.pack([m.random_point(rng) for m in self.manifolds])

    def _packed(self, x):
        return self.pack(x) if isinstance(x, tuple) else x

    def check_point(self, x, atol=None, name="x"):
        x = self._packed(x)
        super().check_point(x, atol=atol, name=name)

    def validate_point(self, x, name="x0", atol=None):
        return super().validate_point(self._packed(x), name=name, atol=atol)

    def _off_manifold(self, x, atol):
        for i, (m, part) in enumerate(zip(self.manifolds, self.unpack(x))):
            why = m._off_manifold(part, atol)
            if why:
                return f"part {i}, a point of {m!r}: {why}"
        return ""
