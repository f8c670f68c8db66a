"""The manifold interface (method names follow pymanopt)."""

import numpy as np

from ..validation import as_array, check_rng

__all__ = ["Manifold"]


def _default_atol(x, atol):
    """``atol``, or the default tolerance for the precision of ``x``."""
    if atol is None:
        low = (np.float32, np.float16, np.complex64)
        return 1e-5 if np.asarray(x).dtype in low else 1e-8
    atol = float(atol)
    if not atol >= 0:
        raise ValueError(f"atol must be a nonnegative number, got {atol!r}")
    return atol


#: pymanopt class names that differ from jitopt's
_PYMANOPT_NAMES = {
    "SymmetricPositiveDefinite": "SPD",
    "SpecialOrthogonalGroup": "Orthogonal(n, special=True)",
    "HermitianPositiveDefinite": "HermitianPositiveDefinite",
}


def manifold_type_error(manifold, name="manifold"):
    """The ``TypeError`` for a ``manifold`` argument that is not a jitopt manifold.

    A pymanopt manifold, whose class names match jitopt's, gets a message naming the
    jitopt class to use.
    """
    cls = type(manifold)
    msg = f"{name} must be a jitopt.manifolds.Manifold, got {cls.__name__}"
    if cls.__module__.split(".")[0] == "pymanopt":
        ours = _public_manifolds()
        jit = _PYMANOPT_NAMES.get(cls.__name__, cls.__name__)
        msg = f"{name} is a pymanopt manifold ({cls.__module__}.{cls.__name__}); jitopt "
        if jit.split("(")[0] in ours:
            msg += f"needs its own: use jitopt.manifolds.{jit} with the same sizes"
        else:
            msg += f"has no {cls.__name__}; its manifolds are {', '.join(ours)}"
    return TypeError(msg)


def _public_manifolds():
    """The names of jitopt's manifold classes (the subclasses of Manifold it defines)."""
    names, todo = [], list(Manifold.__subclasses__())
    while todo:
        c = todo.pop(0)
        todo.extend(c.__subclasses__())
        if c.__module__.startswith("jitopt.manifolds") and not c.__name__.startswith("_"):
            names.append(c.__name__)
    return sorted(set(names))


class Manifold:
    r"""Base class of the manifolds: a Riemannian submanifold of a Euclidean space of arrays.

    Points and tangent vectors are float64 arrays of shape :attr:`shape`. The defaults here
    hold for embedded submanifolds with the metric inherited from the embedding (the
    Frobenius inner product): the Riemannian gradient is the tangent projection of the
    Euclidean gradient and vector transport is the projection onto the target tangent
    space. Subclasses define :meth:`projection`, :meth:`retraction`, :meth:`random_point`
    and :meth:`_off_manifold` (why an array is not a point), and override the rest
    where the geometry differs (for example :class:`SPD`).

    Optional methods ``exp``, ``log`` and ``dist`` exist on the manifolds where they are
    cheap; ``hasattr(manifold, "exp")`` tells. Every manifold of jitopt also defines
    ``euclidean_to_riemannian_hessian(x, egrad, ehess, u)``, the Riemannian Hessian
    :math:`\operatorname{Hess} f(x)[u]` from the Euclidean gradient at ``x`` and the Euclidean
    Hessian-vector product along ``u`` (for an embedded submanifold: the tangent projection
    of ``ehess`` plus the Weingarten term of ``egrad``); second-order solvers need it only
    with an ``ehess`` oracle.

    Parameters
    ----------
    name : str
        The manifold's name, as its ``repr`` shows it (e.g. ``"Stiefel(10, 3)"``).
    shape : tuple of int
        The shape of points and tangent vectors.
    dim : int
        The dimension of the manifold.
    retraction : str, optional
        One of the subclass's :attr:`retractions` (its first by default).

    Examples
    --------
    A subclass needs its projection, retraction and random point; the unit circle in the
    plane:

    >>> import numpy as np
    >>> from jitopt.manifolds import Manifold
    >>> class Circle(Manifold):
    ...     def __init__(self):
    ...         super().__init__("Circle", (2,), 1)
    ...     def projection(self, x, u):
    ...         return u - (x @ u) * x
    ...     def retraction(self, x, u):
    ...         return (x + u) / np.linalg.norm(x + u)
    ...     def random_point(self, rng=None):
    ...         t = np.random.default_rng(rng).uniform(0, 2 * np.pi)
    ...         return np.array([np.cos(t), np.sin(t)])
    >>> c = Circle()
    >>> x = np.array([1.0, 0.0])
    >>> c.norm(x, c.projection(x, np.array([3.0, 4.0])))
    4.0
    """

    #: Names accepted by the ``retraction`` argument of the constructor.
    retractions = ()

    #: The dtype of points and tangent vectors: ``np.float64``, or ``np.complex128`` for
    #: the complex manifolds (whose inner product is the real part of the Hermitian one).
    dtype = np.float64

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

    @property
    def kernel_code(self):
        """The code of this manifold with its retraction in the compiled loop of the
        stochastic solvers (``jitopt.solvers.srge``), or ``None`` when that loop does not
        handle it (the solvers then take their Python loop)."""
        return None

    @property
    def typical_dist(self):
        """A typical distance between points (Manopt's ``typicaldist``): the largest trust
        radius of ``rtr`` and the longest step of the Wolfe searches by default;
        :math:`\\sqrt{\\dim}` unless the manifold says otherwise."""
        return float(np.sqrt(self.dim))

    @property
    def flat_metric(self):
        """Whether the metric is the Frobenius product of real arrays (the base class's)."""
        return type(self).inner_product is Manifold.inner_product and \
            np.dtype(self.dtype).kind == "f"

    @property
    def projection_transport(self):
        """Whether the transport is the projection onto the target tangent space (the base
        class's)."""
        return type(self).transport is Manifold.transport

    #: whether the manifold is a linear space (one tangent space everywhere)
    linear = False

    @property
    def max_step(self):
        """The longest step :math:`t\\|d\\|` the Wolfe searches of rcg and rlbfgs try: the
        typical distance (beyond it a retraction saturates on the compact manifolds, and
        the exponential map of SPD overflows); unbounded on Euclidean spaces."""
        return self.typical_dist

    def normal_coordinates(self):
        r"""``(normal, size)`` when the normal space at ``x`` is :math:`\{Xc\}` for small
        :math:`c`, else None (here). ``normal(x, w)`` gives the coordinates :math:`c_j`
        (flattened, ``size`` of them) of the normal parts :math:`(I - P)w_j = Xc_j` of the
        rows ``w[j]``, each the transpose of a point-shaped array, flattened, with
        :math:`\langle Xc, Xc'\rangle = \langle c, c'\rangle`; on a linear space there
        are none (size 0). rlbfgs uses them to keep its pairs unprojected."""
        if self.linear and self.flat_metric:  # no normal part
            return (lambda x, w: np.zeros((w.shape[0], 0))), 0
        return None

    def copies(self, k):
        """The manifold of ``k`` copies of this one (the product metric, points of shape
        ``(k, *shape)``) where it has batched kernels, else None (here): the
        derivative-free methods move a population through it at once."""
        return None

    def pair_frame(self, isometric):
        """The coordinates of the tangent spaces that rlbfgs stores its pairs in (see
        ``AmbientFrame``): here the ambient vectors; with ``isometric``
        those in which an isometric transport is the identity, where the manifold has
        them."""
        return AmbientFrame(self)

    def tangent_chart(self, x):
        """The coordinates of the tangent space at ``x`` that :func:`~jitopt.solvers.rtr`
        works in: here the manifold's own (ambient) vectors, with the manifold's metric,
        projection and retraction; :class:`~jitopt.manifolds.FixedRankEmbedded` has a
        chart of fewer coordinates
        (:meth:`~jitopt.manifolds.FixedRankEmbedded.tangent_chart`)."""
        return _AmbientChart(self, x)

    def _hessian_operator(self, x, egrad, ehess):
        """``u -> euclidean_to_riemannian_hessian(x, egrad, ehess(x, u), u)``; a manifold
        computes the parts that depend only on ``x`` and ``egrad`` once here."""
        return lambda u: self.euclidean_to_riemannian_hessian(x, egrad, ehess(x, u), u)

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
        rng = check_rng(rng)
        while True:
            u = self.projection(x, rng.standard_normal(self.shape))
            size = self.norm(x, u)
            if size != 0.0:  # a draw normal to the tangent space (as x itself) is redrawn
                return u / size

    def check_point(self, x, atol=None, name="x"):
        """Raise a ``ValueError`` if ``x`` is not a point of the manifold (within ``atol``).

        The message names the argument, the expected shape or the distance to the
        manifold, and what to do about it.

        Parameters
        ----------
        x : array_like
            The array to check. Lower-precision input (float32, integers) is promoted to
            float64 before the check.
        atol : float, optional
            Tolerance of the distance to the manifold; default ``1e-8`` for float64 input
            and ``1e-5`` for float32 or float16 input (about 100 float32 roundings).
        name : str
            The argument's name, for the message.

        Returns
        -------
        None

        Examples
        --------
        >>> import numpy as np
        >>> from jitopt.manifolds import Sphere
        >>> x = np.array([1.0, 1e-3, 0.0])
        >>> Sphere(3).check_point(x, atol=1e-3)
        >>> try:
        ...     Sphere(3).check_point(x)
        ... except ValueError as err:
        ...     print(err)  # doctest: +NORMALIZE_WHITESPACE
        x is not a point of Sphere(3): | ||x|| - 1 | = 5.000e-07 > atol = 1e-08;
        manifold.closest_point(x) gives the nearest point, or loosen the tolerance with
        atol= (point_tol= in jitopt.minimize)
        """
        x = as_array(name, x)
        if x.shape != self.shape:
            raise ValueError(
                f"{name} must have shape {self.shape} to be a point of {self}, "
                f"got shape {x.shape}"
            )
        complex_ok = np.issubdtype(self.dtype, np.complexfloating)
        if not np.issubdtype(x.dtype, np.number) or (np.iscomplexobj(x) and not complex_ok):
            kind = "numeric" if complex_ok else "real numeric"
            raise TypeError(f"{name} must be a {kind} array, got dtype {x.dtype}")
        if not np.all(np.isfinite(x)):
            raise ValueError(f"{name} contains NaN or inf")
        atol = _default_atol(x, atol)
        why = self._off_manifold(np.asarray(x, dtype=self.dtype), atol)
        if why:
            hint = ("manifold.closest_point(x) gives the nearest point, or loosen"
                    if hasattr(self, "closest_point") else "loosen")
            raise ValueError(f"{name} is not a point of {self}: {why}; {hint} the "
                             f"tolerance with atol= (point_tol= in jitopt.minimize)")

    def _off_manifold(self, x, atol):
        """A description of how far ``x`` (of the right shape) is off the manifold, or ``""``."""
        return ""

    def validate_point(self, x, name="x0", atol=None):
        """Check ``x`` with :meth:`check_point` and return a C-contiguous copy of dtype
        :attr:`dtype` (float64; complex128 on the complex manifolds).

        A point accepted only thanks to a loosened ``atol``, or given in lower precision
        (float32), is mapped to ``closest_point(x)`` where the manifold has one, so that a
        solver starts on the manifold to float64 rounding.

        Parameters
        ----------
        x : array_like
            The point.
        name : str
            The argument's name, for the message.
        atol : float, optional
            Tolerance of :meth:`check_point`.

        Returns
        -------
        ndarray
            A new float64 array (the user's array is never modified).

        Examples
        --------
        >>> import numpy as np
        >>> from jitopt.manifolds import Sphere
        >>> x = Sphere(2).validate_point(np.array([0.6, 0.8], dtype=np.float32))
        >>> x.dtype, bool(abs(np.linalg.norm(x) - 1) < 1e-15)
        (dtype('float64'), True)
        """
        self.check_point(x, atol=atol, name=name)
        low = np.asarray(x).dtype != self.dtype
        y = np.array(x, dtype=self.dtype, order="C", copy=True)
        if hasattr(self, "closest_point") and (low or self._off_manifold(y, 1e-8)):
            y = np.array(self.closest_point(y), dtype=self.dtype, order="C")
        return y

    def check_tangent(self, x, u, atol=1e-8, name="u"):
        """Raise a ``ValueError`` if ``u`` is not tangent at ``x`` (within ``atol``)."""
        u = np.asarray(u, dtype=self.dtype)
        if u.shape != self.shape:
            raise ValueError(f"{name} must have shape {self.shape}, got {u.shape}")
        off = float(np.linalg.norm(u - self.projection(x, u)))
        if not off <= atol * max(1.0, float(np.linalg.norm(u))):
            raise ValueError(
                f"{name} is not tangent to {self} at the given point: "
                f"distance to the tangent space = {off:.3e}"
            )


class AmbientFrame:
    """The manifold's own tangent vectors as the coordinates of the tangent spaces in which a
    quasi-Newton method stores its pairs (:meth:`Manifold.pair_frame`): ``to(x, u)`` and
    ``back(x, w)``, the inner product and the transport of stored vectors. The other frames
    (the Lie algebra of O(n), the Cholesky coordinates of SPD, the tangent charts of the
    fixed-rank matrices) live with their manifolds and have the same attributes.

    Attributes
    ----------
    flat : bool
        The metric is the Frobenius product of the coordinates.
    ambient : bool
        The coordinates are ambient vectors (an embedded manifold's pairs may carry normal
        parts, see :meth:`Manifold.normal_coordinates`).
    isometric : bool
        Stored vectors need no transport (it is the identity in the coordinates).
    packed_skew : bool
        The coordinates are skew matrices, stored by their entries above the diagonal.
    charts : bool
        Coordinates are relative to the chart of their point: stored pairs keep its
        singular bases.
    line : callable or None
        ``line(problem, x, dw)``, the line along the direction of coordinates ``dw``
        (``phi(t) -> (f, slope, y, egrad, gw)``), where the coordinates have one.
    """

    ambient, isometric, packed_skew, charts = True, False, False, False
    line = None

    def __init__(self, M):
        self.M = M
        #: the metric is the Frobenius product of the coordinates
        self.flat = M.flat_metric and (M.projection_transport or M.linear)

    def to(self, x, u):
        return u

    def back(self, x, w):
        return w

    def inner(self, x, u, v):
        return float(np.vdot(u, v)) if self.flat else self.M.inner_product(x, u, v)

    def move(self, x, y, w):
        """The transport of ``w`` from ``x`` to ``y``."""
        return self.M.transport(x, y, w)

    def forget(self, keep):
        """Drop what was kept for points other than ``keep`` (once an iteration ends)."""

    def move_rows(self, x, y, w):
        """Transport in place the vectors ``w[j]`` (rows, each reshaped to a point's shape)
        from ``x`` to ``y``."""
        stack = w.reshape((w.shape[0],) + y.shape)
        for j in range(w.shape[0]):
            w[j] = np.reshape(self.M.transport(x, y, stack[j]), -1)


class _AmbientChart:
    """The tangent space at ``x`` in the manifold's own vectors, with the interface of the
    fixed-rank chart: ``inner``, ``zero``, ``of`` (the coordinates of a tangent vector:
    itself), ``moved_from``, ``gradient``, ``hessian``, ``reproject`` and
    ``retraction``."""

    def __init__(self, manifold, x):
        self.manifold, self.x = manifold, x

    def inner(self, u, v):
        return self.manifold.inner_product(self.x, u, v)

    def zero(self):
        return self.manifold.zero_vector(self.x)

    def of(self, u):
        return u

    def moved_from(self, chart, u):
        """The manifold's transport of ``u`` from the point of ``chart`` to this one."""
        return self.manifold.transport(chart.x, self.x, u)

    def gradient(self, egrad):
        return self.manifold.euclidean_to_riemannian_gradient(self.x, egrad)

    def hessian(self, egrad, ehess):
        return self.manifold._hessian_operator(self.x, egrad, ehess)

    def reproject(self, u):
        return self.manifold.projection(self.x, u)

    def retraction(self, u):
        return self.manifold.retraction(self.x, u)
