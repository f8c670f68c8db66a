"""Stiefel manifold, Grassmann manifold and the orthogonal group."""

import numpy as np
import scipy.linalg

from ..validation import as_c_float as _c
from . import _kernels as K
from ._base import Manifold

__all__ = ["Stiefel", "Grassmann", "Orthogonal"]


def _check_sizes(cls, n, p):
    for name, v in (("n", n), ("p", p)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"{cls}: {name} must be an int, got {type(v).__name__}")
    if not 1 <= p <= n:
        raise ValueError(f"{cls} needs 1 <= p <= n, got n={n}, p={p}")
    return int(n), int(p)


def _orthonormality_error(x, atol):
    err = float(np.linalg.norm(x.T @ x - np.eye(x.shape[1])))
    return f"||XᵀX - I||_F = {err:.3e} > atol = {atol:g}" if err > atol else ""


_RETRACTIONS = {
    "qr": K.qr_retraction,
    "polar": K.polar_retraction,
    "cayley": K.cayley_retraction,
    "exp": K.grassmann_exp,
}


class Stiefel(Manifold):
    r"""The Stiefel manifold :math:`\mathrm{St}(n, p) = \{X \in \mathbb R^{n\times p} : X^\top X = I_p\}`.

    With the metric of the embedding: tangent vectors satisfy :math:`X^\top U + U^\top X = 0`,
    the projection is :math:`U - X\,\mathrm{sym}(X^\top U)`, vector transport projects.

    Parameters
    ----------
    n, p : int
        ``1 <= p <= n``.
    retraction : {"qr", "polar", "cayley"}
        ``"qr"`` (default): Q factor of :math:`X + U` (cost :math:`O(np^2)`); ``"polar"``:
        the orthonormal matrix closest to :math:`X + U` (second order);
        ``"cayley"``: the Cayley transform, in the low-rank form of Wen & Yin (2013).
    """

    retractions = ("qr", "polar", "cayley")

    def __init__(self, n, p, retraction=None):
        n, p = _check_sizes("Stiefel", n, p)
        self.n, self.p = n, p
        super().__init__(f"Stiefel({n}, {p})", (n, p), n * p - p * (p + 1) // 2, retraction)
        self._retract = _RETRACTIONS[self.retraction_name]

    def projection(self, x, u):
        return K.stiefel_projection(_c(x), _c(u))

    def retraction(self, x, u):
        return self._retract(_c(x), _c(u))

    def random_point(self, rng=None):
        a = np.random.default_rng(rng).standard_normal(self.shape)
        return K.qr_retraction(a, np.zeros(self.shape))

    def _off_manifold(self, x, atol):
        return _orthonormality_error(x, atol)


class Grassmann(Manifold):
    r"""The Grassmann manifold of :math:`p`-dimensional subspaces of :math:`\mathbb R^n`.

    A point is an orthonormal basis :math:`X \in \mathrm{St}(n, p)` of the subspace;
    tangent vectors are horizontal (:math:`X^\top U = 0`), the projection is
    :math:`U - XX^\top U`, and ``exp``, ``log`` and ``dist`` (principal angles) are exact.
    Costs must be invariant under :math:`X \mapsto XQ` for orthogonal :math:`Q`.

    Parameters
    ----------
    n, p : int
        ``1 <= p <= n``.
    retraction : {"qr", "polar", "exp"}
        ``"qr"`` (default), ``"polar"``, or the exponential map.
    """

    retractions = ("qr", "polar", "exp")

    def __init__(self, n, p, retraction=None):
        n, p = _check_sizes("Grassmann", n, p)
        self.n, self.p = n, p
        super().__init__(f"Grassmann({n}, {p})", (n, p), p * (n - p), retraction)
        self._retract = _RETRACTIONS[self.retraction_name]

    def projection(self, x, u):
        return K.horizontal_projection(_c(x), _c(u))

    def retraction(self, x, u):
        return self._retract(_c(x), _c(u))

    def exp(self, x, u):
        return K.grassmann_exp(_c(x), _c(u))

    def log(self, x, y):
        return K.grassmann_log(_c(x), _c(y))

    def dist(self, x, y):
        return float(np.linalg.norm(K.principal_angles(_c(x), _c(y))))

    def random_point(self, rng=None):
        a = np.random.default_rng(rng).standard_normal(self.shape)
        return K.qr_retraction(a, np.zeros(self.shape))

    def _off_manifold(self, x, atol):
        return _orthonormality_error(x, atol)


class Orthogonal(Stiefel):
    r"""The orthogonal group :math:`O(n)`, or :math:`SO(n)` with ``special=True``.

    Points are :math:`n\times n` orthogonal matrices and tangent vectors are
    :math:`X\Omega` with :math:`\Omega` skew-symmetric (the embedded representation, so that
    Euclidean gradients apply directly). Every retraction offered keeps :math:`\det X`, so a
    solver started in one component of :math:`O(n)` stays there.

    Parameters
    ----------
    n : int
        Matrix size.
    special : bool
        Restrict to :math:`\det X = +1` (checked by
        :meth:`~jitopt.manifolds.Manifold.check_point`; ``random_point`` returns such a
        point).
    retraction : {"qr", "polar", "cayley", "exp"}
        ``"qr"`` (default), ``"polar"``, ``"cayley"`` or the exponential map
        :math:`X \exp(X^\top U)`.
    """

    retractions = ("qr", "polar", "cayley", "exp")

    def __init__(self, n, special=False, retraction=None):
        n, _ = _check_sizes("Orthogonal", n, n)
        self.special = bool(special)
        self.n = self.p = n
        name = f"SpecialOrthogonal({n})" if self.special else f"Orthogonal({n})"
        Manifold.__init__(self, name, (n, n), n * (n - 1) // 2, retraction)
        if self.retraction_name == "exp":
            self._retract = self.exp
        else:
            self._retract = _RETRACTIONS[self.retraction_name]

    def exp(self, x, u):
        omega = x.T @ u
        return x @ _expm_skew(0.5 * (omega - omega.T))

    def log(self, x, y):
        """The tangent vector :math:`X \\log(X^\\top Y)` (principal logarithm)."""
        if np.linalg.det(x) * np.linalg.det(y) < 0:
            raise ValueError("x and y lie in different components of O(n): no geodesic joins them")
        omega = scipy.linalg.logm(x.T @ y)
        omega = np.real(omega)
        return x @ (0.5 * (omega - omega.T))

    def dist(self, x, y):
        return float(np.linalg.norm(self.log(x, y)))

    def random_point(self, rng=None):
        x = super().random_point(rng)
        if self.special and np.linalg.det(x) < 0:
            x[:, 0] = -x[:, 0]
        return x

    def _off_manifold(self, x, atol):
        why = _orthonormality_error(x, atol)
        if not why and self.special and np.linalg.det(x) < 0:
            why = ("det X = -1 (distance 2 to SO(n)): the point lies in the other "
                   "component of O(n)")
        return why


def _expm_skew(omega):
    """exp(Ω) for a real skew-symmetric Ω, orthogonal to rounding for any norm of Ω.

    iΩ is Hermitian: iΩ = V diag(λ) Vᴴ with V unitary, so exp(Ω) = V diag(e^{-iλ}) Vᴴ.
    Scaling and squaring (``scipy.linalg.expm``) loses orthogonality in proportion to ‖Ω‖.
    """
    lam, v = np.linalg.eigh(1j * omega)
    return np.real((v * np.exp(-1j * lam)) @ v.conj().T)
