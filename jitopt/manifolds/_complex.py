r"""Complex manifolds: the complex circle, the unitary group, the complex Grassmann manifold
and Hermitian positive definite matrices.

Points and tangent vectors are ``complex128`` arrays. :math:`\mathbb C^{n\times p}` is
treated as a *real* inner-product space with :math:`\langle A, B\rangle = \mathrm{Re}\,
\mathrm{tr}(A^\mathsf{H} B)` (pymanopt's and Manopt's metric), so the Euclidean gradient of
a real cost :math:`f` is the complex array :math:`G = \partial f/\partial\,\mathrm{Re}X +
i\,\partial f/\partial\,\mathrm{Im}X` with :math:`\frac{d}{dt} f(X + tV)|_{t=0} =
\mathrm{Re}\,\mathrm{tr}(G^\mathsf{H} V)`; for :math:`f(z) = |z|^2` it is :math:`2z`.
"""

import numpy as np
import scipy.linalg
from numba import njit

from ..validation import check_rng
from ._base import Manifold

__all__ = ["ComplexCircle", "UnitaryGroup", "ComplexGrassmann", "HermitianPositiveDefinite"]


def _size(cls, name, v, low=1):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{cls}: {name} must be an int, got {type(v).__name__}")
    if v < low:
        raise ValueError(f"{cls}: {name} must be at least {low}, got {v}")
    return int(v)


def _cnormal(rng, shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _c(a):
    """``a`` as a C-contiguous complex128 array (no copy when it already is one)."""
    return np.ascontiguousarray(a, dtype=np.complex128)


def _herm(a):
    return 0.5 * (a + a.conj().T)


def _skewh(a):
    return 0.5 * (a - a.conj().T)


class _ComplexManifold(Manifold):
    """Complex points and tangent vectors, metric :math:`\\mathrm{Re}\\langle u, v\\rangle`."""

    dtype = np.complex128

    def inner_product(self, x, u, v):
        return float(np.vdot(u, v).real)

    def zero_vector(self, x):
        return np.zeros(self.shape, dtype=np.complex128)

    def random_tangent_vector(self, x, rng=None):
        if self.dim == 0:
            raise ValueError(f"{self} has dimension 0: it has no unit tangent vector")
        rng = check_rng(rng)
        u = self.projection(x, _cnormal(rng, self.shape))
        return u / self.norm(x, u)


# -- the complex circle -----------------------------------------------------------------


@njit(cache=True)
def _circle_projection(z, u):
    out = np.empty_like(u)
    for i in range(z.size):
        out[i] = u[i] - (np.conj(z[i]) * u[i]).real * z[i]
    return out


@njit(cache=True)
def _circle_retraction(z, u):
    out = np.empty_like(z)
    for i in range(z.size):
        w = z[i] + u[i]
        a = abs(w)
        out[i] = w / a if a > 0.0 else z[i]
    return out


class ComplexCircle(_ComplexManifold):
    r"""Complex vectors of unit-modulus entries, :math:`\{z\in\mathbb C^n : |z_i| = 1\}`.

    A Riemannian submanifold of :math:`\mathbb C^n \cong \mathbb R^{2n}` of dimension
    :math:`n`: the projection is :math:`u - \mathrm{Re}(\bar z \odot u)\odot z`, the
    retraction :math:`(z + u)/|z + u|` entrywise (compiled kernels), ``exp`` follows each
    circle, ``log`` is :math:`i\theta\odot x` with :math:`\theta = \arg(\bar x\odot y)` and
    ``dist`` is :math:`\|\theta\|_2`. Transport projects.

    Parameters
    ----------
    n : int
        Number of entries.

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.manifolds import ComplexCircle
    >>> M = ComplexCircle(3)
    >>> z = M.random_point(rng=0)
    >>> bool(np.allclose(np.abs(z), 1.0))
    True
    >>> round(M.dist(z, 1j * z) / np.pi, 12)  # a quarter turn of each of 3 entries
    0.866025403784
    """

    def __init__(self, n):
        self.n = _size("ComplexCircle", "n", n)
        super().__init__(f"ComplexCircle({self.n})", (self.n,), self.n)

    def projection(self, x, u):
        return _circle_projection(_c(x), _c(u))

    def euclidean_to_riemannian_hessian(self, x, egrad, ehess, u):
        return self.projection(x, ehess - (x * np.conj(egrad)).real * u)

    def retraction(self, x, u):
        return _circle_retraction(_c(x), _c(u))

    def exp(self, x, u):
        t = np.abs(u)
        y = x * np.cos(t) + u * np.sinc(t / np.pi)
        return y / np.abs(y)

    def log(self, x, y):
        return 1j * np.angle(np.conj(x) * y) * x

    def dist(self, x, y):
        return float(np.linalg.norm(np.angle(np.conj(x) * y)))

    def random_point(self, rng=None):
        phi = check_rng(rng).uniform(-np.pi, np.pi, self.n)
        return np.exp(1j * phi)

    def closest_point(self, x):
        """The nearest point: each entry divided by its modulus (1 for a zero entry)."""
        x = _c(x)
        a = np.abs(x)
        return np.where(a > 0, x / np.where(a > 0, a, 1.0), 1.0 + 0j)

    def _off_manifold(self, x, atol):
        err = float(np.max(np.abs(np.abs(x) - 1.0)))
        return f"max_i | |z_i| - 1 | = {err:.3e} > atol = {atol:g}" if err > atol else ""


# -- unitary matrices and complex subspaces ------------------------------------------------


def _qr_unique(a):
    """The Q factor of ``a`` with the phases fixed so that diag(R) is real positive."""
    q, r = np.linalg.qr(a)
    d = np.diagonal(r)
    mod = np.abs(d)
    phase = np.where(mod > 0, d / np.where(mod > 0, mod, 1.0), 1.0)
    return q * phase


def _polar(a):
    w, _, vh = np.linalg.svd(a, full_matrices=False)
    return w @ vh


def _orthonormality_error(x, atol):
    err = float(np.linalg.norm(x.conj().T @ x - np.eye(x.shape[1])))
    return f"||XᴴX - I||_F = {err:.3e} > atol = {atol:g}" if err > atol else ""


def _expm_skewh(omega):
    """exp(Ω) for a skew-Hermitian Ω through eigh of the Hermitian iΩ: unitary to rounding."""
    lam, v = np.linalg.eigh(1j * omega)
    return (v * np.exp(-1j * lam)) @ v.conj().T


class _Orthonormal:
    """Points with orthonormal columns (unitary matrices, bases of subspaces)."""

    def random_point(self, rng=None):
        return _qr_unique(_cnormal(check_rng(rng), self.shape))

    def closest_point(self, x):
        """The polar factor of ``x``: the nearest matrix with orthonormal columns in the
        Frobenius norm (of the same span)."""
        return _polar(_c(x))

    def _off_manifold(self, x, atol):
        return _orthonormality_error(x, atol)


class UnitaryGroup(_Orthonormal, _ComplexManifold):
    r"""The unitary group :math:`U(n) = \{X\in\mathbb C^{n\times n} : X^\mathsf{H}X = I\}`.

    Tangent vectors are kept in the embedded form :math:`U = X\Omega` with :math:`\Omega`
    skew-Hermitian (as :class:`Orthogonal` does), so Euclidean gradients and Hessian-vector
    products apply directly. The projection is :math:`X\,\mathrm{skewh}(X^\mathsf{H}Z)`, the
    Riemannian Hessian :math:`P_X(H - U\,\mathrm{herm}(X^\mathsf{H}G))`, ``exp`` is
    :math:`X\exp(X^\mathsf{H}U)` and ``log`` comes from the complex Schur form of
    :math:`X^\mathsf{H}Y` (the principal logarithm). Transport projects. Dimension
    :math:`n^2`.

    Parameters
    ----------
    n : int
        Matrix size.
    retraction : {"qr", "polar", "exp"}
        ``"qr"`` (default): the Q factor of :math:`X + U` with diag(R) real positive;
        ``"polar"``: the unitary matrix closest to :math:`X + U`; ``"exp"``: the
        exponential map.

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.manifolds import UnitaryGroup
    >>> M = UnitaryGroup(3)
    >>> X = M.random_point(rng=0)
    >>> bool(np.allclose(X.conj().T @ X, np.eye(3)))
    True
    """

    retractions = ("qr", "polar", "exp")

    def __init__(self, n, retraction=None):
        self.n = _size("UnitaryGroup", "n", n)
        super().__init__(f"UnitaryGroup({self.n})", (self.n, self.n), self.n ** 2, retraction)

    def projection(self, x, u):
        return x @ _skewh(x.conj().T @ u)

    def euclidean_to_riemannian_hessian(self, x, egrad, ehess, u):
        return self.projection(x, ehess - u @ _herm(x.conj().T @ egrad))

    def retraction(self, x, u):
        if self.retraction_name == "exp":
            return self.exp(x, u)
        if self.retraction_name == "polar":
            return _polar(x + u)
        return _qr_unique(x + u)

    def exp(self, x, u):
        return x @ _expm_skewh(_skewh(x.conj().T @ u))

    def log(self, x, y):
        t, z = scipy.linalg.schur(x.conj().T @ y, output="complex")
        theta = np.angle(np.diagonal(t))  # X^H Y is normal: its Schur form is diagonal
        return x @ _skewh((z * (1j * theta)) @ z.conj().T)

    def dist(self, x, y):
        return self.norm(x, self.log(x, y))


class ComplexGrassmann(_Orthonormal, _ComplexManifold):
    r"""The Grassmann manifold of :math:`p`-dimensional complex subspaces of
    :math:`\mathbb C^n`.

    A point is an orthonormal basis :math:`X` (:math:`X^\mathsf{H}X = I_p`) of the subspace;
    costs must be invariant under :math:`X\mapsto XQ` for unitary :math:`Q`. Tangent vectors
    are horizontal (:math:`X^\mathsf{H}U = 0`), the projection is
    :math:`U - X(X^\mathsf{H}U)`, the Riemannian Hessian :math:`P_X(H) -
    U(X^\mathsf{H}G)`; ``exp``, ``log`` and ``dist`` (principal angles) are exact.
    Transport projects. Real dimension :math:`2p(n - p)`.

    Parameters
    ----------
    n, p : int
        ``1 <= p <= n``.
    retraction : {"polar", "qr", "exp"}
        ``"polar"`` (default), ``"qr"``, or the exponential map.

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.manifolds import ComplexGrassmann
    >>> M = ComplexGrassmann(5, 2)
    >>> X = M.random_point(rng=0)
    >>> Q = np.array([[0, 1j], [1, 0]])
    >>> round(M.dist(X, X @ Q), 12)
    0.0
    """

    retractions = ("polar", "qr", "exp")

    def __init__(self, n, p, retraction=None):
        n = _size("ComplexGrassmann", "n", n)
        p = _size("ComplexGrassmann", "p", p)
        if p > n:
            raise ValueError(f"ComplexGrassmann needs 1 <= p <= n, got n={n}, p={p}")
        self.n, self.p = n, p
        super().__init__(f"ComplexGrassmann({n}, {p})", (n, p), 2 * p * (n - p), retraction)

    def projection(self, x, u):
        return u - x @ (x.conj().T @ u)

    def euclidean_to_riemannian_hessian(self, x, egrad, ehess, u):
        return self.projection(x, ehess) - u @ (x.conj().T @ egrad)

    def retraction(self, x, u):
        if self.retraction_name == "exp":
            return self.exp(x, u)
        if self.retraction_name == "qr":
            return _qr_unique(x + u)
        return _polar(x + u)

    def exp(self, x, u):
        q, s, wh = np.linalg.svd(u, full_matrices=False)
        y = (x @ wh.conj().T) * np.cos(s) @ wh + (q * np.sin(s)) @ wh
        return _qr_unique(y)  # re-orthonormalise against rounding; the span is unchanged

    def log(self, x, y):
        yhx = y.conj().T @ x
        z = np.linalg.solve(yhx, (y - x @ (x.conj().T @ y)).conj().T).conj().T
        q, s, wh = np.linalg.svd(z, full_matrices=False)
        return (q * np.arctan(s)) @ wh

    def dist(self, x, y):
        # arcsin of the sines below pi/4, arccos of the cosines above (both accurate there)
        c = np.linalg.svd(x.conj().T @ y, compute_uv=False)
        s = np.linalg.svd(y - x @ (x.conj().T @ y), compute_uv=False)[::-1]
        theta = np.arccos(np.minimum(c, 1.0))
        small = c * c >= 0.5
        theta[small] = np.arcsin(np.minimum(s[small], 1.0))
        return float(np.linalg.norm(theta))


# -- Hermitian positive definite matrices ---------------------------------------------------


def _hpd_funm(x, f):
    """``f`` applied to the eigenvalues of the Hermitian matrix ``x``."""
    w, v = np.linalg.eigh(_herm(x))
    return (v * f(w)) @ v.conj().T


def _hpd_sqrt_and_inv_sqrt(x):
    w, v = np.linalg.eigh(_herm(x))
    r = np.sqrt(w)
    return (v * r) @ v.conj().T, (v / r) @ v.conj().T


class HermitianPositiveDefinite(_ComplexManifold):
    r"""Hermitian positive definite :math:`n\times n` matrices, affine-invariant metric.

    :math:`\langle U, V\rangle_X = \mathrm{Re}\,\mathrm{tr}(X^{-1}UX^{-1}V)`; tangent vectors
    are Hermitian matrices; the Riemannian gradient is :math:`X\,\mathrm{herm}(G)\,X` and the
    Hessian :math:`X\,\mathrm{herm}(H)\,X + \mathrm{herm}(U\,\mathrm{herm}(G)\,X)`;
    :math:`\exp_X(U) = X^{1/2}\exp(X^{-1/2}UX^{-1/2})X^{1/2}`, ``log`` its inverse,
    ``transport`` is parallel transport :math:`EUE^\mathsf{H}` with
    :math:`E = X^{1/2}(X^{-1/2}YX^{-1/2})^{1/2}X^{-1/2}`, and ``dist`` is
    :math:`(\sum_i \log^2\mu_i)^{1/2}` over the generalised eigenvalues :math:`\mu` of
    :math:`(Y, X)`. The real dimension is :math:`n^2` (:class:`SPD` with
    :math:`\top\to\mathsf H`).

    Parameters
    ----------
    n : int
        Matrix size.
    retraction : {"exp", "second_order"}
        The exponential map (default) or :math:`X + U + \tfrac12 UX^{-1}U`.

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.manifolds import HermitianPositiveDefinite
    >>> M = HermitianPositiveDefinite(2)
    >>> X = np.eye(2, dtype=complex)
    >>> round(M.dist(X, np.e * X) ** 2, 12)  # log(e) on each of 2 eigenvalues
    2.0
    """

    retractions = ("exp", "second_order")

    def __init__(self, n, retraction=None):
        self.n = _size("HermitianPositiveDefinite", "n", n)
        super().__init__(f"HermitianPositiveDefinite({self.n})", (self.n, self.n),
                         self.n ** 2, retraction)

    def inner_product(self, x, u, v):
        a = np.linalg.solve(x, u)
        b = np.linalg.solve(x, v)
        return float(np.sum(a.T * b).real)  # tr(ab)

    def projection(self, x, u):
        return _herm(u)

    def euclidean_to_riemannian_gradient(self, x, egrad):
        return _herm(x @ _herm(egrad) @ x)

    def euclidean_to_riemannian_hessian(self, x, egrad, ehess, u):
        return _herm(x @ _herm(ehess) @ x) + _herm(u @ _herm(egrad) @ x)

    def retraction(self, x, u):
        if self.retraction_name == "exp":
            return self.exp(x, u)
        return _herm(x + u + 0.5 * u @ np.linalg.solve(x, u))

    def exp(self, x, u):
        s, si = _hpd_sqrt_and_inv_sqrt(x)
        return _herm(s @ _hpd_funm(si @ u @ si, np.exp) @ s)

    def log(self, x, y):
        s, si = _hpd_sqrt_and_inv_sqrt(x)
        return _herm(s @ _hpd_funm(si @ y @ si, np.log) @ s)

    def dist(self, x, y):
        mu = scipy.linalg.eigvalsh(_herm(y), _herm(x))
        return float(np.linalg.norm(np.log(mu)))

    def transport(self, x1, x2, u):
        s, si = _hpd_sqrt_and_inv_sqrt(x1)
        e = s @ _hpd_funm(si @ x2 @ si, np.sqrt) @ si
        return _herm(e @ u @ e.conj().T)

    def random_point(self, rng=None):
        rng = check_rng(rng)
        q = _qr_unique(_cnormal(rng, self.shape))
        w = np.exp(0.5 * rng.standard_normal(self.n))
        return _herm((q * w) @ q.conj().T)

    def closest_point(self, x):
        """The Hermitian part of ``x`` with its eigenvalues raised to at least ``1e-12``
        times the largest modulus: the nearest positive definite matrix, up to that floor."""
        w, v = np.linalg.eigh(_herm(_c(x)))
        w = np.maximum(w, 1e-12 * np.max(np.abs(w)))
        return (v * w) @ v.conj().T

    def _off_manifold(self, x, atol):
        asym = float(np.linalg.norm(x - x.conj().T))
        if asym > atol * max(1.0, float(np.linalg.norm(x))):
            return f"||X - Xᴴ||_F = {asym:.3e} (not Hermitian)"
        lam = float(np.linalg.eigvalsh(_herm(x))[0])
        return f"smallest eigenvalue {lam:.3e} is not positive" if lam <= 0 else ""
