"""The manifold interface (method names follow pymanopt)."""

import numpy as np

__all__ = ["Manifold"]


class Manifold:
    """Base class of the manifolds: a Riemannian submanifold of a Euclidean space of arrays.

    Points and tangent vectors are float64 arrays of shape :attr:`shape`. The defaults here
    hold for embedded submanifolds with the metric inherited from the embedding (the
    Frobenius inner product): the Riemannian gradient is the tangent projection of the
    Euclidean gradient and vector transport is the projection onto the target tangent
    space. Subclasses define :meth:`projection`, :meth:`retraction`, :meth:`random_point`
    and :meth:`_off_manifold` (why an array is not a point), and override the rest
    where the geometry differs (for example :class:`SPD`).

    Optional methods ``exp``, ``log`` and ``dist`` exist on the manifolds where they are
    cheap; ``hasattr(manifold, "exp")`` tells.
    """

    #: Names accepted by the ``retraction`` argument of the constructor.
    retractions = ()

    def __init__(self, name, shape, dim, retraction=None):
        self._name = name
        self.shape = tuple(int(s) for s in shape)
        self.dim = int(dim)
        if self.retractions:
            retraction = self.retractions[0] if retraction is None else retraction
            if retraction not in self.retractions:
                raise ValueError(
                    f"retraction must be one of {self.retractions}, got {retraction!r}"
                )
        self.retraction_name = retraction

    def __repr__(self):
        return self._name

    # -- metric -------------------------------------------------------------------------

    def inner_product(self, x, u, v):
        """Riemannian inner product of tangent vectors ``u`` and ``v`` at ``x``."""
        return float(np.vdot(u, v))

    def norm(self, x, u):
        """Riemannian norm of the tangent vector ``u`` at ``x``."""
        return float(np.sqrt(self.inner_product(x, u, u)))

    def euclidean_to_riemannian_gradient(self, x, egrad):
        """Riemannian gradient at ``x`` from the Euclidean gradient ``egrad``."""
        return self.projection(x, egrad)

    def euclidean_to_riemannian_hessian(self, x, egrad, ehess, u):
        r"""Riemannian Hessian :math:`\operatorname{Hess} f(x)[u]` from the Euclidean
        gradient ``egrad`` at ``x`` and the Euclidean Hessian-vector product ``ehess``
        :math:`= \nabla^2 \bar f(x)[u]` along the tangent vector ``u``: for an embedded
        submanifold, the tangent projection of ``ehess`` plus the Weingarten term of
        ``egrad``. Each manifold defines it (``NotImplementedError`` here)."""
        raise NotImplementedError(f"{type(self).__name__} has no euclidean_to_riemannian_hessian")

    def transport(self, x1, x2, u):
        """Transport the tangent vector ``u`` at ``x1`` into the tangent space at ``x2``."""
        return self.projection(x2, u)

    # -- points and vectors ------------------------------------------------------------

    def zero_vector(self, x):
        """The zero tangent vector at ``x``."""
        return np.zeros(self.shape)

    def random_tangent_vector(self, x, rng=None):
        """A random unit-norm tangent vector at ``x`` (``rng``: seed or Generator)."""
        if self.dim == 0:
            raise ValueError(f"{self} has dimension 0: it has no unit tangent vector")
        rng = np.random.default_rng(rng)
        u = self.projection(x, rng.standard_normal(self.shape))
        return u / self.norm(x, u)

    def check_point(self, x, atol=1e-8, name="x"):
        """Raise a ``ValueError`` if ``x`` is not a point of the manifold (within ``atol``).

        The message names the argument, the expected shape or the distance to the
        manifold.
        """
        x = np.asarray(x)
        if x.shape != self.shape:
            raise ValueError(
                f"{name} must have shape {self.shape} to be a point of {self}, "
                f"got shape {x.shape}"
            )
        if not np.issubdtype(x.dtype, np.number) or np.iscomplexobj(x):
            raise TypeError(f"{name} must be a real numeric array, got dtype {x.dtype}")
        if not np.all(np.isfinite(x)):
            raise ValueError(f"{name} contains NaN or inf")
        why = self._off_manifold(np.asarray(x, dtype=float), atol)
        if why:
            raise ValueError(f"{name} is not a point of {self}: {why}")

    def _off_manifold(self, x, atol):
        """A description of how far ``x`` (of the right shape) is off the manifold, or ``""``."""
        return ""

    def validate_point(self, x, name="x0", atol=1e-8):
        """Check ``x`` with :meth:`check_point` and return a float64 C-contiguous copy."""
        self.check_point(x, atol=atol, name=name)
        return np.array(x, dtype=np.float64, order="C", copy=True)

    def check_tangent(self, x, u, atol=1e-8, name="u"):
        """Raise a ``ValueError`` if ``u`` is not tangent at ``x`` (within ``atol``)."""
        u = np.asarray(u, dtype=float)
        if u.shape != self.shape:
            raise ValueError(f"{name} must have shape {self.shape}, got {u.shape}")
        off = float(np.linalg.norm(u - self.projection(x, u)))
        if not off <= atol * max(1.0, float(np.linalg.norm(u))):
            raise ValueError(
                f"{name} is not tangent to {self} at the given point: "
                f"distance to the tangent space = {off:.3e}"
            )
