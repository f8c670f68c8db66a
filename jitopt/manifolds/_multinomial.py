"""The multinomial manifold: the interior of the probability simplex with the Fisher–Rao
metric."""

import math

import numpy as np

from ..validation import check_int, check_rng
from ._base import Manifold

__all__ = ["Multinomial"]

#: entries of a retracted point stay at least this large (the exponent U/X of the
#: retraction grows without bound near the boundary)
_TINY = 1e-300


class Multinomial(Manifold):
    r"""The interior of the probability simplex, :math:`m` columns of :math:`n` positive
    entries summing to 1, with the Fisher–Rao metric.

    Points have shape ``(n,)`` (``m = 1``) or ``(n, m)``, each column a probability vector
    with positive entries; tangent vectors have columns summing to 0. The metric is
    :math:`\langle U, V\rangle_X = \sum_{ij} U_{ij}V_{ij}/X_{ij}` (each column the Fisher
    information metric, the columns a product), so
    :math:`\operatorname{grad} f = X\odot G - X\,\mathrm{diag}(\mathbf 1^\top (X\odot G))`.
    ``projection`` is the Frobenius-orthogonal projection onto the tangent space (subtract
    each column's mean), as for every jitopt manifold; the metric enters through the
    gradient and Hessian conversions. The retraction is
    :math:`R_X(U) = X\odot e^{U/X}` with columns renormalised, computed in the log domain
    (entries stay at least :math:`10^{-300}`).

    The map :math:`x \mapsto 2\sqrt{x}` is an isometry onto the positive orthant of the
    sphere of radius 2, so a column's distance is :math:`2\arccos\sum_i \sqrt{p_i q_i}`
    (computed as :math:`4\arcsin(\|\sqrt p - \sqrt q\|/2)`; the columns combine as
    :math:`(\sum_j d_j^2)^{1/2}`), and ``exp``, ``log`` and the (parallel) ``transport``
    are the sphere's through that map. Some authors scale the metric by 1/4 and get
    :math:`\arccos\sum_i\sqrt{p_iq_i}`. The manifold is not complete: a geodesic leaves
    the open simplex after a length :meth:`injectivity_radius` :math:`=
    2\arcsin\sqrt{\min_i x_i}`, where ``exp`` is no longer a point; the retraction always
    is.

    Parameters
    ----------
    n : int
        Number of entries of a column (at least 2).
    m : int
        Number of columns.

    References
    ----------
    Manopt's ``multinomialfactory``; Y. Sun, J. Gao, X. Hong, B. Mishra and B. Yin,
    "Heterogeneous tensor decomposition for clustering via manifold optimization", IEEE
    TPAMI 38 (2016); Manifolds.jl's ``ProbabilitySimplex``.

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.manifolds import Multinomial
    >>> M = Multinomial(3)
    >>> p, q = np.array([0.5, 0.25, 0.25]), np.array([0.25, 0.5, 0.25])
    >>> bool(np.isclose(M.dist(p, q), 2 * np.arccos(np.sum(np.sqrt(p * q)))))
    True
    """

    def __init__(self, n, m=1):
        n = check_int("n", n, low=2)
        m = check_int("m", m, low=1)
        self.n, self.m = n, m
        shape = (n,) if m == 1 else (n, m)
        name = f"Multinomial({n})" if m == 1 else f"Multinomial({n}, {m})"
        super().__init__(name, shape, (n - 1) * m)

    @property
    def typical_dist(self):
        """:math:`\\pi\\sqrt m`: a column's diameter is :math:`\\pi`."""
        return math.pi * math.sqrt(self.m)

    def inner_product(self, x, u, v):
        return float(np.sum(u * v / x))

    def projection(self, x, u):
        return u - np.mean(u, axis=0)

    def euclidean_to_riemannian_gradient(self, x, egrad):
        xg = x * egrad
        return xg - x * np.sum(xg, axis=0)

    def euclidean_to_riemannian_hessian(self, x, egrad, ehess, u):
        lam = -np.sum(x * egrad, axis=0)
        rgrad = x * egrad + lam * x
        dlam = -np.sum(u * egrad, axis=0) - np.sum(x * ehess, axis=0)
        drgrad = u * egrad + x * ehess + dlam * x + lam * u
        h = drgrad - 0.5 * u * rgrad / x
        return h - x * np.sum(h, axis=0)  # the metric projection onto the tangent space

    def transport(self, x1, x2, u):
        r"""Parallel transport, through the sphere: :math:`\sqrt{x}` is a point of the unit
        sphere and :math:`u/\sqrt{x}` a tangent vector there (up to the factor 2)."""
        a, b = np.sqrt(x1), np.sqrt(x2)
        w = u / a
        w = w - np.sum(b * w, axis=0) / (1.0 + np.sum(a * b, axis=0)) * (a + b)
        return b * w

    def retraction(self, x, u):
        z = np.log(x) + u / x
        e = np.maximum(np.exp(z - np.max(z, axis=0)), _TINY)
        return e / np.sum(e, axis=0)

    def _sphere(self, x, y):
        """The angles per column between :math:`\\sqrt x` and :math:`\\sqrt y` on the unit
        sphere."""
        half = np.linalg.norm(np.sqrt(x) - np.sqrt(y), axis=0) / 2.0
        return 2.0 * np.arcsin(np.minimum(half, 1.0))

    def dist(self, x, y):
        return float(2.0 * np.linalg.norm(self._sphere(x, y)))

    def exp(self, x, u):
        r = np.sqrt(x)
        v = u / (2.0 * r)
        theta = np.linalg.norm(v, axis=0)
        return (np.cos(theta) * r + np.sinc(theta / np.pi) * v) ** 2

    def log(self, x, y):
        r, s = np.sqrt(x), np.sqrt(y)
        theta = self._sphere(x, y)
        # the sphere's log at sqrt(x), mapped back by the differential 2 sqrt(x)
        return 2.0 * r * (s - np.cos(theta) * r) / np.sinc(theta / np.pi)

    def injectivity_radius(self, x):
        """The distance from ``x`` to the boundary of the simplex, :math:`2\\arcsin
        \\sqrt{\\min_i x_i}`: a geodesic from ``x`` shorter than this stays a point."""
        return float(2.0 * np.arcsin(np.sqrt(np.min(x))))

    def random_point(self, rng=None):
        """A uniform point (Dirichlet(1) columns)."""
        e = check_rng(rng).standard_exponential(self.shape)
        return e / np.sum(e, axis=0)

    def closest_point(self, x):
        """``x`` with entries clipped to :math:`10^{-300}` and columns renormalised."""
        e = np.maximum(np.asarray(x, dtype=float), _TINY)
        return e / np.sum(e, axis=0)

    def _off_manifold(self, x, atol):
        if not np.all(x > 0):
            return f"an entry is {float(np.min(x)):.3g}, not positive"
        gap = float(np.max(np.abs(np.sum(x, axis=0) - 1.0)))
        return f"a column sum differs from 1 by {gap:.3e} > atol = {atol:g}" if gap > atol else ""
