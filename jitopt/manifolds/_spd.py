"""Symmetric positive definite matrices with the affine-invariant metric."""

import numpy as np
import scipy.linalg

from .._interpreted import interpreted
from ..validation import as_c_float as _c, check_rng
from . import _kernels as K
from ._base import AmbientFrame, Manifold

__all__ = ["SPD"]


#: the kernels run by NumPy from Python, for the operations on one copy at a time: tens of
#: microseconds a call, and nothing to compile on first use (compiling them took 10-15 s).
#: The compiled kernels serve the exponential of k copies and the compiled loops.
_NP = interpreted(K, solve=np.linalg.solve)


def _t(a):
    """The transpose of a matrix, or of each matrix of a stack."""
    return np.swapaxes(a, -1, -2)


class SPD(Manifold):
    r"""Symmetric positive definite :math:`n\times n` matrices, affine-invariant metric.

    :math:`\langle U, V\rangle_X = \mathrm{tr}(X^{-1}UX^{-1}V)`; tangent vectors are symmetric
    matrices; the Riemannian gradient is :math:`X\,\mathrm{sym}(G)\,X`;
    :math:`\exp_X(U) = X^{1/2}\exp(X^{-1/2}UX^{-1/2})X^{1/2}`; ``transport`` is parallel
    transport :math:`EUE^\top` with :math:`E = (YX^{-1})^{1/2}`; ``dist`` is
    :math:`\|\log(X^{-1/2}YX^{-1/2})\|_F`. ``exp`` and ``dist`` at a point that is not
    positive definite, or with a NaN argument, raise a ``ValueError`` naming it.

    Parameters
    ----------
    n : int
        Matrix size.
    retraction : {"exp", "second_order"}
        The exponential map (default) or :math:`X + U + \tfrac12 UX^{-1}U`, which is
        cheaper and also stays positive definite.
    k : int
        Number of copies: points of shape ``(n, n)`` for ``k=1`` (default),
        ``(k, n, n)`` for ``k > 1`` (the product metric, batched kernels).

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.manifolds import SPD
    >>> M = SPD(2)
    >>> bool(np.isclose(M.dist(np.eye(2), np.diag([np.e, 1 / np.e])), np.sqrt(2)))
    True
    """

    retractions = ("exp", "second_order")

    @property
    def kernel_code(self):
        return K.SPD_EXP if self.retraction_name == "exp" else None

    @property
    def typical_dist(self):
        return float(np.sqrt(self.n * (self.n + 1) / 2))

    def __init__(self, n, retraction=None, *, k=1):
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"SPD needs a positive integer n, got {n!r}")
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValueError(f"SPD: k (the number of copies) must be a positive integer, "
                             f"got {k!r}")
        self.n, self.k = int(n), int(k)
        name, lead = (f"SPD({n}, k={k})", (self.k,)) if self.k > 1 else (f"SPD({n})", ())
        super().__init__(name, lead + (n, n), self.k * (n * (n + 1) // 2), retraction)

    def pair_frame(self, isometric):
        """The Cholesky coordinates (:class:`CholeskyFrame`) with
        ``isometric`` on one copy; else the ambient vectors."""
        if isometric and self.k == 1:
            return CholeskyFrame(self)
        return super().pair_frame(isometric)

    def inner_product(self, x, u, v):
        if self.k > 1:
            return float(sum(_NP["spd_inner"](*a) for a in zip(_c(x), _c(u), _c(v))))
        return float(_NP["spd_inner"](_c(x), _c(u), _c(v)))

    def projection(self, x, u):
        return 0.5 * (u + _t(u))

    def euclidean_to_riemannian_gradient(self, x, egrad):
        return x @ (0.5 * (egrad + _t(egrad))) @ x

    def euclidean_to_riemannian_hessian(self, x, egrad, ehess, u):
        # D(grad f)[u] minus the connection term sym(u X^-1 grad f)
        w = u @ (0.5 * (egrad + _t(egrad))) @ x
        return x @ (0.5 * (ehess + _t(ehess))) @ x + 0.5 * (w + _t(w))

    def retraction(self, x, u):
        if self.retraction_name == "exp":
            return self.exp(x, u)
        return self._checked("spd_second_order_retraction", x=x, u=u)

    def exp(self, x, u):
        return self._checked("spd_exp", K.batch_spd_exp, x=x, u=u)

    def _checked(self, name, batched=None, **arrays):
        """The kernel ``name`` of :data:`_NP` on ``arrays`` (on each copy, the results
        stacked; with several copies, the compiled kernel ``batched`` over all of them when
        given), or the ValueError of :meth:`_refuse` when it fails or is not finite."""
        f, args = _NP[name], [_c(a) for a in arrays.values()]
        try:
            with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
                if self.k == 1:
                    out = np.asarray(f(*args))
                elif batched is not None:
                    out = batched(*args)
                else:
                    out = np.stack([f(*a) for a in zip(*args)])
        except np.linalg.LinAlgError:
            out = np.nan
        if not np.isfinite(out).all():
            self._refuse(**arrays)
        return out

    def _refuse(self, **arrays):
        """The ValueError naming the argument that is not finite, or not SPD, when a
        kernel failed on it (NaN or a LinAlgError)."""
        for name, a in arrays.items():
            if not np.isfinite(a).all():
                raise ValueError(f"{name} must be finite, got NaN or inf entries")
        for name, a in arrays.items():
            if name in ("x", "y", "x1", "x2") and not self._is_spd(a):
                raise ValueError(f"{name} must be a symmetric positive definite point of "
                                 f"{self!r}")
        raise ValueError(f"the result on {self!r} is not finite: the arguments are too "
                         f"large in magnitude")

    def _is_spd(self, a):
        try:
            np.linalg.cholesky(a)
        except np.linalg.LinAlgError:
            return False
        return bool(np.allclose(a, _t(a), rtol=1e-8, atol=1e-12 * np.abs(a).max()))

    def log(self, x, y):
        return self._checked("spd_log", x=x, y=y)

    def dist(self, x, y):
        d = self._checked("spd_dist", x=x, y=y)
        return float(np.sqrt(np.sum(d * d))) if self.k > 1 else float(d)

    def transport(self, x1, x2, u):
        return self._checked("spd_transport", x1=x1, x2=x2, u=u)

    def random_point(self, rng=None):
        rng = check_rng(rng)
        q, _ = np.linalg.qr(rng.standard_normal(self.shape))
        w = np.exp(0.5 * rng.standard_normal(self.shape[:-1]))
        return (q * w[..., None, :]) @ _t(q)

    def closest_point(self, x):
        """The symmetric part of ``x`` (of each copy) with its eigenvalues raised to at
        least ``1e-12`` times the largest modulus: the nearest positive definite matrix,
        up to that floor."""
        w, v = np.linalg.eigh(0.5 * (x + _t(x)))
        floor = 1e-12 * np.max(np.abs(w), axis=-1, keepdims=True)
        return (v * np.maximum(w, floor)[..., None, :]) @ _t(v)

    def _off_manifold(self, x, atol):
        asym = np.linalg.norm(x - _t(x), axis=(-2, -1)).reshape(-1)
        size = np.maximum(1.0, np.linalg.norm(x, axis=(-2, -1))).reshape(-1)
        lam = np.linalg.eigvalsh(0.5 * (x + _t(x)))[..., 0].reshape(-1)
        where = (lambda i: f" (copy {i})") if self.k > 1 else (lambda i: "")
        bad = np.flatnonzero(asym > atol * size)
        if bad.size:
            i = int(bad[0])
            return f"||X - Xᵀ||_F = {asym[i]:.3e} (not symmetric){where(i)}"
        i = int(np.argmin(lam))
        return f"smallest eigenvalue {lam[i]:.3e} is not positive{where(i)}" if lam[i] <= 0 else ""


class CholeskyFrame(AmbientFrame):
    r"""SPD matrices: :math:`U \mapsto L^{-1}UL^{-\top}` with :math:`X = LL^\top`."""

    ambient, isometric = False, True

    def __init__(self, M):
        self.M, self.flat = M, True
        self._chol = (None, None)

    def _l(self, x):
        if self._chol[0] is not x:
            self._chol = (x, np.linalg.cholesky(x))
        return self._chol[1]

    def to(self, x, u):
        l = self._l(x)
        w = scipy.linalg.solve_triangular(l, u, lower=True)
        return scipy.linalg.solve_triangular(l, w.T, lower=True)

    def back(self, x, w):
        l = self._l(x)
        return l @ w @ l.T

    def move(self, x, y, w):
        return w
