"""Stiefel manifold, Grassmann manifold and the orthogonal group."""

import math

import numpy as np
import scipy.linalg
from numba import njit
from scipy.linalg.lapack import dgeqrfp, dorgqr

from .._lapack import solve
from ..validation import as_c_float as _c, check_rng
from . import _kernels as K

from ._base import AmbientFrame, Manifold
from ._rotation_log import cut_locus, rotation_log

__all__ = ["Stiefel", "Grassmann", "Orthogonal"]


def _check_sizes(cls, n, p):
    for name, v in (("n", n), ("p", p)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"{cls}: {name} must be an int, got {type(v).__name__}")
    if not 1 <= p <= n:
        raise ValueError(f"{cls} needs 1 <= p <= n, got n={n}, p={p}")
    return int(n), int(p)


def _check_k(cls, k):
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"{cls}: k (the number of copies) must be a positive integer, "
                         f"got {k!r}")
    return int(k)


def _t(a):
    """The transpose of a matrix, or of each matrix of a stack."""
    return np.swapaxes(a, -1, -2)


def _each(f, *arrays):
    """``f`` applied to the matching slices of arrays with a leading axis, stacked."""
    return np.stack([f(*a) for a in zip(*arrays)])


def _refuse_nonfinite(**arrays):
    """The ValueError naming the first argument with NaN or inf entries, if there is one."""
    for name, a in arrays.items():
        if not np.isfinite(a).all():
            raise ValueError(f"{name} must be finite, got NaN or inf entries")


def _orthonormality_error(x, atol):
    errs = np.linalg.norm(_t(x) @ x - np.eye(x.shape[-1]), axis=(-2, -1)).reshape(-1)
    i = int(np.argmax(errs))
    where = f" (copy {i})" if x.ndim == 3 else ""
    return f"||XᵀX - I||_F = {errs[i]:.3e} > atol = {atol:g}{where}" if errs[i] > atol else ""


def q_factor(a):
    """The Q factor of the n x p matrix ``a`` (p <= n) with a nonnegative diagonal in R
    (unique when ``a`` has full rank), Fortran-ordered; ``a`` is overwritten when it is a
    Fortran-ordered float64 array.

    LAPACK's blocked QR with that sign convention (``dgeqrfp``) called from Python: a few
    microseconds of overhead for a thin matrix, faster than NumPy's QR, and nothing to
    compile on first use (the compiled :func:`~._kernels.qr_retraction` serves compiled
    loops and the k copies).
    """
    lwork = 64 * a.shape[1]  # room for the blocked algorithms (the default is unblocked)
    qr, tau, _ = dgeqrfp(a, lwork=lwork, overwrite_a=True)
    q, _, _ = dorgqr(qr, tau, lwork=lwork, overwrite_a=True)
    return q


def qr_retraction(x, u):
    """The Q factor of x + u (one n x p matrix) with a nonnegative diagonal in R (a
    function of x + u), C-contiguous."""
    return np.ascontiguousarray(q_factor(np.add(x, u, order="F")))


def stiefel_projection(x, u):
    """u - x sym(xᵀu): the projection onto {v : xᵀv + vᵀx = 0}."""
    s = x.T @ u
    return u - x @ (0.5 * (s + s.T))


def horizontal_projection(x, u):
    """u - x xᵀu: the projection onto the horizontal space {v : xᵀv = 0} (Grassmann)."""
    return u - x @ (x.T @ u)


def _looped(kernel):
    """``kernel`` over the copies of a stack, in Python."""
    return lambda x, u: _each(kernel, x, u)


# name: (kernel for one copy, for k copies)
_RETRACTIONS = {
    "qr": (qr_retraction, K.batch_qr_retraction),
    "polar": (K.polar_retraction, K.batch_polar_retraction),
    "cayley": (K.cayley_retraction, _looped(K.cayley_retraction)),
    "exp": (K.grassmann_exp, _looped(K.grassmann_exp)),
}


class _Copies(Manifold):
    """What Stiefel, Grassmann and Orthogonal share: ``k`` copies and the point checks."""

    @property
    def typical_dist(self):
        return math.sqrt(self.p)

    def _normal_coordinates(self, symmetric):
        """:meth:`Manifold.normal_coordinates`: the normal part of ``w`` is :math:`Xc` with
        :math:`c` symmetric (Stiefel, O(n)) or any :math:`p\\times p` (Grassmann: the
        transposes of the :math:`c`, which have the same inner products)."""
        if self.k != 1 or not (self.flat_metric and self.projection_transport):
            return None

        def normal(x, w):
            n, p = x.shape
            # the (X^T w_j)^T, whose inner products are those of the X^T w_j
            ct = (w.reshape(-1, n) @ x).reshape(w.shape[0], p, p)
            c = 0.5 * (ct + np.swapaxes(ct, 1, 2)) if symmetric else ct
            return c.reshape(w.shape[0], -1)
        return normal, self.p ** 2

    def copies(self, k):
        if self.k != 1:
            return None
        return self._copied(k)

    def _setup(self, cls, n, p, k, dim, retraction, name=None):
        self.k = _check_k(cls, k)
        self.n, self.p = n, p
        name = name or f"{cls}({n}, {p})"
        if self.k > 1:
            name = f"{name[:-1]}, k={self.k})"
        lead = (self.k,) if self.k > 1 else ()
        Manifold.__init__(self, name, lead + (n, p), self.k * dim, retraction)
        if self.retraction_name in _RETRACTIONS:
            self._retract = _RETRACTIONS[self.retraction_name][self.k > 1]

    def _pair(self, x, u, names=("x", "u")):
        """:meth:`_c` of both arrays, with no conversion when both already are C-contiguous
        float64 arrays of the points' shape (the common case, checked in one test)."""
        if (type(x) is np.ndarray and type(u) is np.ndarray and x.dtype.type is np.float64
                and u.dtype.type is np.float64 and x.shape == self.shape
                and u.shape == self.shape and x.flags.c_contiguous and u.flags.c_contiguous):
            return x, u
        return self._c(names[0], x), self._c(names[1], u)

    def _c(self, name, a):
        """``a`` as a C-contiguous float64 array of the points' shape, else a ValueError
        (a TypeError for complex entries) naming it: the compiled kernels would fail
        inside Numba, or drop an imaginary part."""
        if not (isinstance(a, np.ndarray) and a.shape == self.shape and a.dtype.kind in "fiu"):
            a = np.asarray(a)
            if a.dtype.kind == "c":
                raise TypeError(f"{name} must be real on {self!r}, got a complex array")
            if a.shape != self.shape:
                raise ValueError(f"{name} must have shape {self.shape} (on {self!r}), got "
                                 f"{a.shape}")
        return _c(a)

    def retraction(self, x, u):
        try:
            y = self._retract(*self._pair(x, u))
        except np.linalg.LinAlgError:  # (a compiled factorisation refuses NaN)
            _refuse_nonfinite(x=x, u=u)
            raise
        if not math.isfinite(y.sum()):  # LAPACK called from Python returns NaN instead
            _refuse_nonfinite(x=x, u=u)
        return y

    def random_point(self, rng=None):
        a = check_rng(rng).standard_normal(self.shape)
        if self.k > 1:
            return K.batch_qr_retraction(a, np.zeros(self.shape))
        return qr_retraction(a, np.zeros(self.shape))

    def closest_point(self, x):
        """The nearest point in the Frobenius norm: the polar factor :math:`WV^\\top` of
        :math:`x = W\\Sigma V^\\top` (of each copy), a basis of the same span."""
        x = _c(x)
        if self.k > 1:
            return K.batch_polar_retraction(x, np.zeros_like(x))
        w, _, vt = np.linalg.svd(x, full_matrices=False)  # once a run: nothing to compile
        return w @ vt

    def _off_manifold(self, x, atol):
        return _orthonormality_error(x, atol)


class Stiefel(_Copies):
    r"""The Stiefel manifold :math:`\mathrm{St}(n, p) = \{X \in \mathbb R^{n\times p} : X^\top X = I_p\}`.

    With the metric of the embedding: tangent vectors satisfy :math:`X^\top U + U^\top X = 0`,
    the projection is :math:`U - X\,\mathrm{sym}(X^\top U)`, vector transport projects.

    Parameters
    ----------
    n, p : int
        ``1 <= p <= n``.
    k : int
        Number of copies: points of shape ``(n, p)`` for ``k=1`` (default),
        ``(k, n, p)`` for ``k > 1`` (batched kernels over the leading axis).
    retraction : {"qr", "polar", "cayley"}
        ``"qr"`` (default): Q factor of :math:`X + U` (cost :math:`O(np^2)`); ``"polar"``:
        the orthonormal matrix closest to :math:`X + U` (second order);
        ``"cayley"``: the Cayley transform, in the low-rank form of Wen & Yin (2013).

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.manifolds import Stiefel
    >>> M = Stiefel(5, 2, k=3)
    >>> x = M.random_point(rng=0)
    >>> M, x.shape, bool(np.allclose(x[1].T @ x[1], np.eye(2)))
    (Stiefel(5, 2, k=3), (3, 5, 2), True)
    """

    retractions = ("qr", "polar", "cayley")

    @property
    def kernel_code(self):
        return K.STIEFEL if self.retraction_name == "qr" else None

    def __init__(self, n, p, retraction=None, *, k=1):
        n, p = _check_sizes("Stiefel", n, p)
        self._setup("Stiefel", n, p, k, n * p - p * (p + 1) // 2, retraction)

    def _copied(self, k):
        return Stiefel(self.n, self.p, self.retraction_name, k=k)

    def projection(self, x, u):
        x, u = self._pair(x, u)
        if self.k > 1:
            return K.batch_stiefel_projection(x, u)
        return stiefel_projection(x, u)

    def euclidean_to_riemannian_hessian(self, x, egrad, ehess, u):
        xtg = _t(x) @ egrad
        return self.projection(x, ehess - u @ (0.5 * (xtg + _t(xtg))))

    def _hessian_operator(self, x, egrad, ehess):
        xtg = _t(x) @ egrad
        sym = 0.5 * (xtg + _t(xtg))
        return lambda u: self.projection(x, ehess(x, u) - u @ sym)

    def normal_coordinates(self):
        return self._normal_coordinates(symmetric=True)


class Grassmann(_Copies):
    r"""The Grassmann manifold of :math:`p`-dimensional subspaces of :math:`\mathbb R^n`.

    A point is an orthonormal basis :math:`X \in \mathrm{St}(n, p)` of the subspace;
    tangent vectors are horizontal (:math:`X^\top U = 0`), the projection is
    :math:`U - XX^\top U`, and ``exp``, ``log`` and ``dist`` (principal angles) are exact.
    Costs must be invariant under :math:`X \mapsto XQ` for orthogonal :math:`Q`. ``log``
    at the cut locus (a principal angle of :math:`\pi/2`: :math:`X^\top Y` singular), where
    the logarithm is not unique, raises a ``ValueError``.

    Parameters
    ----------
    n, p : int
        ``1 <= p <= n``.
    k : int
        Number of copies: points of shape ``(n, p)`` for ``k=1`` (default),
        ``(k, n, p)`` for ``k > 1``.
    retraction : {"qr", "polar", "exp"}
        ``"qr"`` (default), ``"polar"``, or the exponential map.

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.manifolds import Grassmann
    >>> M = Grassmann(4, 2)
    >>> x = np.eye(4)[:, :2]
    >>> y = np.eye(4)[:, [0, 2]]  # shares one direction, the other is at a right angle
    >>> round(M.dist(x, y), 12) == round(np.pi / 2, 12)
    True
    """

    retractions = ("qr", "polar", "exp")

    @property
    def kernel_code(self):
        return K.GRASSMANN if self.retraction_name == "qr" else None

    def __init__(self, n, p, retraction=None, *, k=1):
        n, p = _check_sizes("Grassmann", n, p)
        self._setup("Grassmann", n, p, k, p * (n - p), retraction)

    def _copied(self, k):
        return Grassmann(self.n, self.p, self.retraction_name, k=k)

    def projection(self, x, u):
        x, u = self._pair(x, u)
        if self.k > 1:
            return K.batch_horizontal_projection(x, u)
        return horizontal_projection(x, u)

    def euclidean_to_riemannian_hessian(self, x, egrad, ehess, u):
        return self.projection(x, ehess - u @ (_t(x) @ egrad))

    def _hessian_operator(self, x, egrad, ehess):
        xtg = _t(x) @ egrad
        return lambda u: self.projection(x, ehess(x, u) - u @ xtg)

    def exp(self, x, u):
        x, u = self._pair(x, u)
        try:
            if self.k > 1:
                return _each(K.grassmann_exp, x, u)
            return K.grassmann_exp(x, u)
        except np.linalg.LinAlgError:
            _refuse_nonfinite(x=x, u=u)
            raise

    def log(self, x, y):
        x, y = self._pair(x, y, ("x", "y"))
        try:
            if self.k > 1:
                return _each(K.grassmann_log, x, y)
            return K.grassmann_log(x, y)
        except np.linalg.LinAlgError:
            _refuse_nonfinite(x=x, y=y)
            raise ValueError("y is at the cut locus of x (a principal angle of pi/2, "
                             "x^T y singular): the logarithm is not unique") from None

    def dist(self, x, y):
        x, y = self._pair(x, y, ("x", "y"))
        if self.k > 1:
            return float(np.linalg.norm(_each(K.principal_angles, x, y)))
        return float(np.linalg.norm(K.principal_angles(x, y)))

    def normal_coordinates(self):
        return self._normal_coordinates(symmetric=False)


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
    k : int
        Number of copies: points of shape ``(n, n)`` for ``k=1`` (default),
        ``(k, n, n)`` for ``k > 1``.
    retraction : {"qr", "polar", "cayley", "exp"}
        ``"qr"`` (default), ``"polar"``, ``"cayley"`` or the exponential map
        :math:`X \exp(X^\top U)`.

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.manifolds import Orthogonal
    >>> M = Orthogonal(3, special=True, k=10)
    >>> x = M.random_point(rng=0)
    >>> x.shape, bool(np.allclose(np.linalg.det(x), 1.0))
    ((10, 3, 3), True)
    """

    retractions = ("qr", "polar", "cayley", "exp")
    kernel_code = None  # the compiled loops handle no orthogonal group

    @property
    def typical_dist(self):
        return math.pi * math.sqrt(self.n)

    def __init__(self, n, special=False, retraction=None, *, k=1):
        n, _ = _check_sizes("Orthogonal", n, n)
        self.special = bool(special)
        name = f"SpecialOrthogonal({n})" if self.special else f"Orthogonal({n})"
        self._setup("Orthogonal", n, n, k, n * (n - 1) // 2, retraction, name)
        if self.retraction_name == "exp":
            self._retract = self.exp
        elif self.retraction_name == "cayley" and self.k == 1:
            self._retract = K.orthogonal_cayley

    def copies(self, k):
        return None  # its batched exponential is a loop: nothing to gain

    def exp(self, x, u):
        if self.k > 1:
            return _each(self._exp1, x, u)
        return self._exp1(x, u)

    @staticmethod
    def _exp1(x, u):
        omega = x.T @ u
        return x @ _expm_skew(0.5 * (omega - omega.T))

    def log(self, x, y):
        """The tangent vector :math:`X \\log(X^\\top Y)` (principal logarithm; per copy)."""
        if self.k > 1:
            return _each(self._log1, x, y)
        return self._log1(x, y)

    @staticmethod
    def _log1(x, y):
        if np.linalg.det(x) * np.linalg.det(y) < 0:
            raise ValueError("x and y lie in different components of O(n): no geodesic joins them")
        _refuse_nonfinite(x=x, y=y)
        r = x.T @ y
        if len(r) in (2, 3):
            omega = rotation_log(r)
        else:
            omega = scipy.linalg.logm(r)
            if np.abs(np.imag(omega)).max() > 1e-6:  # an eigenvalue -1: no real principal log
                raise cut_locus()
            omega = np.real(omega)
        return x @ (0.5 * (omega - omega.T))

    def dist(self, x, y):
        r""":math:`\|\log(X^\top Y)\|_F = (\sum_j \theta_j^2)^{1/2}` over the eigenvalues
        :math:`e^{i\theta_j}` of :math:`X^\top Y`: defined at the cut locus too."""
        pairs = zip(x, y) if self.k > 1 else ((x, y),)
        total = 0.0
        for a, b in pairs:
            _refuse_nonfinite(x=a, y=b)
            if np.linalg.det(a) * np.linalg.det(b) < 0:
                raise ValueError("x and y lie in different components of O(n): no geodesic "
                                 "joins them")
            total += float(np.sum(np.angle(np.linalg.eigvals(a.T @ b)) ** 2))
        return float(np.sqrt(total))

    def random_point(self, rng=None):
        x = super().random_point(rng)
        if self.special:
            flip = np.linalg.det(x) < 0
            x[..., 0] = np.where(flip[..., None], -x[..., 0], x[..., 0])
        return x

    def closest_point(self, x):
        """The nearest orthogonal matrix (of each copy); in :math:`SO(n)` with
        ``special=True``."""
        y = super().closest_point(x)
        if self.special:
            w, _, vt = np.linalg.svd(_c(x))
            w[..., -1] *= np.sign(np.linalg.det(w @ vt))[..., None]
            y = w @ vt
        return y

    def _off_manifold(self, x, atol):
        why = _orthonormality_error(x, atol)
        neg = np.reshape(np.linalg.det(x) < 0, -1)
        if not why and self.special and neg.any():
            where = f" (copy {int(np.argmax(neg))})" if self.k > 1 else ""
            why = (f"det X = -1{where} (distance 2 to SO(n)): the point lies in the other "
                   "component of O(n)")
        return why

    def pair_frame(self, isometric):
        """The Lie algebra (:class:`LieFrame`) with ``isometric``
        on one copy; else the ambient vectors."""
        if isometric and self.k == 1:
            return LieFrame(self)
        return super().pair_frame(isometric)


def _expm_skew(omega):
    """exp(Ω) for a real skew-symmetric Ω, orthogonal to rounding for any norm of Ω.

    iΩ is Hermitian: iΩ = V diag(λ) Vᴴ with V unitary, so exp(Ω) = V diag(e^{-iλ}) Vᴴ.
    Scaling and squaring (``scipy.linalg.expm``) loses orthogonality in proportion to ‖Ω‖.
    """
    lam, v = np.linalg.eigh(1j * omega)
    return np.real((v * np.exp(-1j * lam)) @ v.conj().T)


class LieFrame(AmbientFrame):
    r"""The Lie algebra of O(n): :math:`U = X\Omega \mapsto \Omega`."""

    ambient, isometric, packed_skew = False, True, True

    def __init__(self, M):
        self.M, self.flat = M, True

    def to(self, x, u):
        return x.T @ u

    def back(self, x, w):
        return x @ w

    def move(self, x, y, w):
        return w

    def line(self, problem, x, dw):
        r""":math:`\varphi(t) = f(R_x(t X\Omega))` for the Wolfe search:
        ``phi(t) -> (f, slope, y, egrad, gw)`` with :math:`g_w = \mathrm{skew}(Y^\top
        \nabla f(Y))` the coordinates of the Riemannian gradient at :math:`Y` and the slope
        :math:`\langle g_w, \Omega\rangle` (the left translation as the transport)."""
        M = problem.manifold

        def phi(t):
            y = lie_retraction(M, x, t * dw)
            f, eg = problem.cost_and_egrad(y)
            a = y.T @ eg
            gw = 0.5 * (a - a.T)
            return f, float(np.vdot(gw, dw)), y, eg, gw
        return phi


@njit(cache=True)
def _cayley_left(x, omega):
    """x (I - Ω/2)^-1 (I + Ω/2) = 2 x (I - Ω/2)^-1 - x for skew Ω, by one solve with
    (I - Ω/2)ᵀ = I + Ω/2."""
    b = np.eye(x.shape[0]) + 0.5 * omega
    z = solve(b, x.T)
    return 2.0 * z.T - x


def lie_retraction(M, x, omega):
    r"""``M.retraction(x, x @ omega)`` on :class:`~jitopt.manifolds.Orthogonal` (one copy)
    from the Lie-algebra coordinates :math:`\Omega`: :math:`X\,Q(I + \Omega)`,
    :math:`X\,\mathrm{polar}(I + \Omega)`, :math:`X\,\mathrm{cay}(\Omega)` or
    :math:`X\exp(\Omega)`, with no :math:`n\times n` product to form :math:`X\Omega`
    for the Cayley transform."""
    name = M.retraction_name
    if name == "cayley":
        return _cayley_left(x, omega)
    if name == "exp":
        return x @ _expm_skew(0.5 * (omega - omega.T))
    eye = np.eye(M.n)
    q = K.polar_retraction(eye, omega) if name == "polar" else qr_retraction(eye, omega)
    return x @ q
