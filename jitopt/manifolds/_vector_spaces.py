"""Linear and flat manifolds of matrices: Symmetric, SkewSymmetric and Positive."""

import numpy as np

from ..validation import check_rng
from ._base import Manifold
from ._euclidean import _Flat
from ._oblique import _sizes

__all__ = ["Symmetric", "SkewSymmetric", "Positive"]


class _Subspace(_Flat, Manifold):
    """A linear subspace of the n×n matrices with the Frobenius metric."""

    _sign = 1.0

    def __init__(self, cls, n, dim):
        n, _ = _sizes(cls, n, 1, ("n", "n"))
        self.n = n
        super().__init__(f"{cls}({n})", (n, n), dim(n))

    def projection(self, x, u):
        return 0.5 * (u + self._sign * np.swapaxes(u, -1, -2))

    def euclidean_to_riemannian_hessian(self, x, egrad, ehess, u):
        return self.projection(x, ehess)

    def transport(self, x1, x2, u):
        return np.array(u, dtype=float)

    def random_point(self, rng=None):
        return self.projection(None, check_rng(rng).standard_normal(self.shape))

    def closest_point(self, x):
        """The nearest point: the orthogonal projection of ``x`` onto the subspace."""
        return self.projection(None, np.asarray(x, dtype=float))

    def _off_manifold(self, x, atol):
        off = float(np.linalg.norm(x - self.projection(None, x)))
        what = "symmetric" if self._sign > 0 else "skew-symmetric"
        if off > atol * max(1.0, float(np.linalg.norm(x))):
            return f"distance {off:.3e} to the {what} matrices > atol = {atol:g}"
        return ""


class Symmetric(_Subspace):
    r"""Symmetric :math:`n\times n` matrices, a linear space with the Frobenius metric.

    Projection :math:`\mathrm{sym}(U)`, retraction and ``exp`` :math:`X + U`, transport the
    identity.

    Parameters
    ----------
    n : int
        Matrix size.

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.manifolds import Symmetric
    >>> Symmetric(2).projection(None, np.array([[1.0, 2.0], [0.0, 1.0]]))
    array([[1., 1.],
           [1., 1.]])
    """

    def __init__(self, n):
        super().__init__("Symmetric", n, lambda n: n * (n + 1) // 2)


class SkewSymmetric(_Subspace):
    r"""Skew-symmetric :math:`n\times n` matrices, a linear space with the Frobenius metric.

    Projection :math:`\mathrm{skew}(U)`, retraction and ``exp`` :math:`X + U`, transport the
    identity.

    Parameters
    ----------
    n : int
        Matrix size.

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.manifolds import SkewSymmetric
    >>> SkewSymmetric(2).projection(None, np.array([[1.0, 2.0], [0.0, 1.0]]))
    array([[ 0.,  1.],
           [-1.,  0.]])
    """

    _sign = -1.0

    def __init__(self, n):
        super().__init__("SkewSymmetric", n, lambda n: n * (n - 1) // 2)


class Positive(Manifold):
    r"""Entrywise positive :math:`m\times n` matrices with the metric
    :math:`\langle U, V\rangle_X = \sum_{ij} U_{ij}V_{ij}/X_{ij}^2` (the :math:`1\times 1`
    SPD metric in each entry).

    :math:`\operatorname{grad} f = X \odot X \odot G`; :math:`\exp_X(U) = X\odot\exp(U\oslash X)`,
    :math:`\log_X(Y) = X\odot\log(Y\oslash X)`, :math:`\mathrm{dist} = \|\log(Y\oslash X)\|_F`;
    the transport is the parallel one, :math:`U \odot Y \oslash X`.

    Parameters
    ----------
    m, n : int
        Shape of the matrices.
    retraction : {"exp", "second_order"}
        The exponential map (default) or :math:`X + U + U\odot U \oslash (2X)`, which stays
        positive.

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.manifolds import Positive
    >>> M = Positive(1, 2)
    >>> x = np.array([[1.0, 2.0]])
    >>> M.exp(x, M.log(x, np.array([[3.0, 0.5]])))
    array([[3. , 0.5]])
    """

    retractions = ("exp", "second_order")

    def __init__(self, m, n, retraction=None):
        m, n = _sizes("Positive", m, n, ("m", "n"))
        self.m, self.n = m, n
        super().__init__(f"Positive({m}, {n})", (m, n), m * n, retraction)

    def inner_product(self, x, u, v):
        return float(np.sum(u * v / (x * x)))

    def projection(self, x, u):
        return np.array(u, dtype=float)

    def euclidean_to_riemannian_gradient(self, x, egrad):
        return x * x * egrad

    def euclidean_to_riemannian_hessian(self, x, egrad, ehess, u):
        return x * x * ehess + u * egrad * x

    def retraction(self, x, u):
        if self.retraction_name == "exp":
            return self.exp(x, u)
        return x + u + u * u / (2.0 * x)

    def exp(self, x, u):
        return x * np.exp(u / x)

    def log(self, x, y):
        return x * np.log(y / x)

    def dist(self, x, y):
        return float(np.linalg.norm(np.log(y / x)))

    def transport(self, x1, x2, u):
        return u * x2 / x1

    def random_point(self, rng=None):
        return np.exp(check_rng(rng).standard_normal(self.shape))

    def _off_manifold(self, x, atol):
        low = float(np.min(x))
        return f"smallest entry {low:.3e} is not positive" if low <= 0 else ""
