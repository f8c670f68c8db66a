r"""Sets outside the canonical form (not :class:`~jitopt.sets.ConvexSet`:
:func:`~jitopt.sets.project_kernel` does not handle them): the product of simplices and the
bounded polytope, the domains of the EVI solver."""

import itertools
import numbers
from collections.abc import Iterable

import numpy as np

from ..validation import as_array
from ._sets import Simplex, _tol, _vector

__all__ = ["ProductOfSimplices", "Polytope"]


class ProductOfSimplices:
    r"""The product :math:`\Delta(m_1) \times \dots \times \Delta(m_n)` of probability
    simplices (the mixed strategies of an ``n``-player normal-form game), coordinates
    concatenated.

    Not a :class:`~jitopt.sets.ConvexSet` (one kernel call projects onto one simplex);
    :meth:`~jitopt.sets.ProductOfSimplices.project` is exact, block by block.

    Parameters
    ----------
    sizes : sequence of int
        The block sizes :math:`m_i \ge 1`.

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.sets import ProductOfSimplices
    >>> ProductOfSimplices([2, 3]).project(np.array([1.0, 1.0, 3.0, 0.0, 0.0]))
    array([0.5, 0.5, 1. , 0. , 0. ])
    """

    def __init__(self, sizes):
        if isinstance(sizes, (str, bytes)) or not isinstance(sizes, Iterable):
            raise TypeError(f"sizes must be a sequence of positive integers, got "
                            f"{type(sizes).__name__}")
        sizes = list(sizes)
        for m in sizes:
            if isinstance(m, (bool, np.bool_)) or not isinstance(m, numbers.Integral):
                raise TypeError(f"sizes must be a sequence of positive integers, got an entry "
                                f"{m!r} of type {type(m).__name__}")
        sizes = [int(m) for m in sizes]
        if not sizes or min(sizes) < 1:
            raise ValueError(f"sizes must be a non-empty sequence of positive integers, "
                             f"got {sizes}")
        self.sizes = tuple(sizes)
        self.offsets = np.concatenate([[0], np.cumsum(self.sizes)]).astype(np.int64)
        self.dim = int(self.offsets[-1])

    def project(self, x):
        r"""The Euclidean projection of ``x`` (a new array): the product of the projections
        of its blocks onto their simplices (the problem separates over the blocks)."""
        x = _vector(x, dim=self.dim)
        out = np.empty(self.dim)
        simplex = Simplex()
        for lo, hi in zip(self.offsets[:-1], self.offsets[1:]):
            out[lo:hi] = simplex.project(x[lo:hi])
        return out

    def contains(self, x, tol=1e-9):
        """Whether ``x`` is in the set: every block nonnegative and summing to one, up to
        ``tol``."""
        tol = _tol(tol)
        x = _vector(x, dim=self.dim)
        sums = np.add.reduceat(x, self.offsets[:-1])
        return bool((x >= -tol).all() and (np.abs(sums - 1.0) <= tol).all())

    def __repr__(self):
        return f"ProductOfSimplices({list(self.sizes)})"


_MAX_VERTEX_COMBOS = 200_000


class Polytope:
    r"""A nonempty bounded polytope :math:`\{x \in \mathbb R^d : A x \le b\}`.

    Not a :class:`~jitopt.sets.ConvexSet`: it offers membership, its bounding box and its
    vertices, and no projection (that needs a quadratic program).

    Parameters
    ----------
    A : array_like, shape (m, d)
    b : array_like, shape (m,)

    Attributes
    ----------
    lower, upper : ndarray, shape (d,)
        The tightest bounding box, from :math:`2d` HiGHS LPs.

    Raises
    ------
    ValueError
        If the polytope is empty or unbounded (found by those LPs).

    Examples
    --------
    The triangle :math:`\{x \ge 0, x_1 + x_2 \le 1\}`:

    >>> import numpy as np
    >>> from jitopt.sets import Polytope
    >>> P = Polytope([[1, 1], [-1, 0], [0, -1]], [1, 0, 0])
    >>> P.lower, P.upper, bool(P.contains(np.array([0.5, 0.5])))
    (array([0., 0.]), array([1., 1.]), True)
    """

    def __init__(self, A, b):
        from scipy.optimize import linprog

        for name, value in (("A", A), ("b", b)):
            if as_array(name, value).dtype.kind == "c":
                raise TypeError(f"{name} must be real, got a complex array")
        try:
            A = np.array(A, dtype=float, ndmin=2)
            b = np.array(b, dtype=float).ravel()
        except (TypeError, ValueError):
            raise TypeError("A and b must be arrays of real numbers") from None
        if A.ndim != 2 or A.shape[0] != b.shape[0] or A.shape[0] == 0:
            raise ValueError(f"A must have shape (m, d) and b shape (m,), got {A.shape} and "
                             f"{b.shape}")
        if not (np.isfinite(A).all() and np.isfinite(b).all()):
            raise ValueError("A and b must be finite")
        self.A, self.b, self.dim = A, b, A.shape[1]
        lo, hi = np.empty(self.dim), np.empty(self.dim)
        for j in range(self.dim):
            for sign, store in ((1.0, lo), (-1.0, hi)):
                e = np.zeros(self.dim)
                e[j] = sign
                r = linprog(e, A_ub=A, b_ub=b, bounds=(None, None), method="highs")
                if r.status == 2:
                    raise ValueError("the polytope {x : A x <= b} is empty")
                if r.status == 3:
                    raise ValueError("the polytope {x : A x <= b} is unbounded")
                if r.status != 0:
                    raise ValueError(f"could not check the polytope: {r.message}")
                store[j] = sign * r.fun
        self.lower, self.upper = lo, hi

    def contains(self, x, tol=1e-9):
        r"""Whether :math:`A x \le b + \mathrm{tol}\,(1 + |b|)`."""
        tol = _tol(tol)
        x = _vector(x, dim=self.dim)
        return bool((self.A @ x <= self.b + tol * (1.0 + np.abs(self.b))).all())

    def vertices(self):
        """The vertices (rows), by brute force over the ``d``-subsets of the constraints."""
        A, b, d = self.A, self.b, self.dim
        m = A.shape[0]
        ncomb = 1
        for k in range(d):
            ncomb = ncomb * (m - k) // (k + 1)
        if ncomb > _MAX_VERTEX_COMBOS:
            raise ValueError(f"the polytope has too many constraint subsets ({ncomb}) for "
                             f"vertex enumeration; at most {_MAX_VERTEX_COMBOS} are supported")
        scale = 1.0 + np.abs(b).max()
        verts = []
        for rows in itertools.combinations(range(m), d):
            As = A[list(rows)]
            if abs(np.linalg.det(As)) < 1e-12 * max(1.0, np.abs(As).max()) ** d:
                continue
            v = np.linalg.solve(As, b[list(rows)])
            if (A @ v <= b + 1e-9 * scale).all():
                if not any(np.abs(v - w).max() <= 1e-9 * scale for w in verts):
                    verts.append(v)
        return np.array(verts)

    def __repr__(self):
        return f"Polytope(<{self.A.shape[0]} constraints in R^{self.dim}>)"
