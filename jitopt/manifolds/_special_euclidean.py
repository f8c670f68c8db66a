"""The special Euclidean group SE(n) of rigid motions, in homogeneous coordinates."""

import numpy as np

from ..validation import check_int, check_rng
from ._base import Manifold
from ._stiefel import Orthogonal

__all__ = ["SpecialEuclidean"]


def _skew(a):
    return 0.5 * (a - a.T)


def _sym(a):
    return 0.5 * (a + a.T)


class SpecialEuclidean(Manifold):
    r"""Rigid motions of :math:`\mathbb R^n`, :math:`SE(n) = SO(n) \times \mathbb R^n`, as
    homogeneous matrices :math:`X = \begin{pmatrix} R & t \\ 0 & 1\end{pmatrix}` of size
    :math:`n + 1`.

    Tangent vectors are :math:`\begin{pmatrix} R\Omega & v \\ 0 & 0\end{pmatrix}` with
    :math:`\Omega` skew-symmetric; the Frobenius product of these is the product metric of
    :math:`SO(n)` (embedded in the matrices) and :math:`\mathbb R^n`, so the Riemannian
    gradient is the projection :math:`(R\,\mathrm{skew}(R^\top G_R), G_t)` of the Euclidean
    one and the Hessian adds the Weingarten term of :math:`SO(n)`,
    :math:`-R\,\mathrm{skew}(R^\top U_R\,\mathrm{sym}(R^\top G_R))`. The retraction is the
    polar factor of :math:`R + U_R` (which keeps :math:`\det R = 1`) and :math:`t + v`;
    ``exp``, ``log`` and ``dist`` are those of the product,
    :math:`\mathrm{dist}^2 = \|\log(R^\top S)\|_F^2 + \|s - t\|^2` (not the screw motions
    of the group exponential). This is Manopt's ``specialeuclideanfactory`` geometry in
    homogeneous coordinates: a cost written with the matrix :math:`X` acting on
    homogeneous points :math:`(p, 1)` needs no unpacking. :meth:`unpack` and :meth:`pack`
    convert to and from the pair :math:`(R, t)`.

    Parameters
    ----------
    n : int
        Dimension of the space moved (points are ``(n + 1, n + 1)`` matrices).

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.manifolds import SpecialEuclidean
    >>> M = SpecialEuclidean(2)
    >>> X = M.pack((np.array([[0.0, -1.0], [1.0, 0.0]]), np.array([1.0, 2.0])))
    >>> X @ np.array([1.0, 0.0, 1.0])  # rotate (1, 0) by 90 degrees, then translate
    array([1., 3., 1.])
    """

    def __init__(self, n):
        n = check_int("n", n, low=1)
        self.n = n
        self._rotations = Orthogonal(n, special=True, retraction="polar")
        super().__init__(f"SpecialEuclidean({n})", (n + 1, n + 1), n * (n - 1) // 2 + n)

    def unpack(self, x):
        """The rotation :math:`R` and translation :math:`t` of the point ``x``."""
        n = self.n
        return np.array(x[:n, :n]), np.array(x[:n, n])

    def pack(self, parts):
        """The homogeneous matrix of the pair ``(R, t)``."""
        rotation, translation = parts
        x = np.eye(self.n + 1)
        x[:self.n, :self.n] = rotation
        x[:self.n, self.n] = translation
        return x

    def _tangent(self, rotation_part, translation_part):
        u = np.zeros(self.shape)
        u[:self.n, :self.n] = rotation_part
        u[:self.n, self.n] = translation_part
        return u

    def projection(self, x, u):
        n, r = self.n, x[:self.n, :self.n]
        return self._tangent(r @ _skew(r.T @ u[:n, :n]), u[:n, n])

    def euclidean_to_riemannian_hessian(self, x, egrad, ehess, u):
        n, r = self.n, x[:self.n, :self.n]
        weingarten = u[:n, :n] @ _sym(r.T @ egrad[:n, :n])
        return self.projection(x, ehess - self._tangent(weingarten, 0.0))

    def retraction(self, x, u):
        n = self.n
        w, _, vt = np.linalg.svd(x[:n, :n] + u[:n, :n])
        return self.pack((w @ vt, x[:n, n] + u[:n, n]))

    def exp(self, x, u):
        n = self.n
        return self.pack((self._rotations.exp(x[:n, :n], u[:n, :n]), x[:n, n] + u[:n, n]))

    def log(self, x, y):
        n = self.n
        return self._tangent(self._rotations.log(x[:n, :n], y[:n, :n]), y[:n, n] - x[:n, n])

    def dist(self, x, y):
        n = self.n
        return float(np.hypot(self._rotations.dist(x[:n, :n], y[:n, :n]),
                              np.linalg.norm(y[:n, n] - x[:n, n])))

    def random_point(self, rng=None):
        """A uniform rotation and a standard normal translation."""
        rng = check_rng(rng)
        return self.pack((self._rotations.random_point(rng), rng.standard_normal(self.n)))

    def closest_point(self, x):
        """The nearest rotation to the upper-left block, the translation column, and the
        last row :math:`(0, \\dots, 0, 1)`."""
        x = np.asarray(x, dtype=float)
        n = self.n
        return self.pack((self._rotations.closest_point(x[:n, :n]), x[:n, n]))

    def _off_manifold(self, x, atol):
        n = self.n
        row = float(np.max(np.abs(x[n] - np.r_[np.zeros(n), 1.0])))
        if row > atol:
            return f"the last row differs from (0, ..., 0, 1) by {row:.3e} > atol = {atol:g}"
        why = self._rotations._off_manifold(x[:n, :n], atol)
        return f"the rotation block: {why}" if why else ""
