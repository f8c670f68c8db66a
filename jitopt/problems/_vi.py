r"""Variational inequalities: an operator :math:`F : X \to \mathbb R^d` on a compact convex
domain :math:`X` (a set of :mod:`jitopt.sets`), and the structured operators the EVI solver
evaluates inside its compiled loop."""

import numbers
import sys

import numpy as np
from numba import njit

from .._core.problem import BaseProblem
from .._core.result import OracleError
from .._interpreted import interpreted, kernel_for
from ..sets import ConvexSet, Polytope, ProductOfSimplices, Simplex
from ..validation import check_array

__all__ = ["VIProblem", "AffineOperator", "NormalFormOperator"]


#: the codes of the compiled operators in the EVI loop (an operator's ``kernel_args``)
OP_EXTERNAL = -1
OP_AFFINE = 0  # F(x) = A x + b
OP_NORMAL_FORM = 1  # F_i(x) = -grad_{x_i} u_i(x), payoff tensors flattened row-major


class AffineOperator:
    r"""The affine operator :math:`F(x) = A x + b` (evaluated inside the compiled loop of
    :func:`jitopt.solvers.evi`).

    Parameters
    ----------
    A : array_like, shape (d, d)
    b : array_like, shape (d,), optional
        Zero by default.

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.problems import AffineOperator
    >>> F = AffineOperator(np.array([[0.0, 1.0], [-1.0, 0.0]]), np.array([1.0, -1.0]))
    >>> F(np.array([1.0, 2.0]))
    array([ 3., -2.])
    """

    def __init__(self, A, b=None):
        A = check_array("A", A)
        if A.ndim == 0:
            A = A.reshape(1, 1)
        if A.ndim != 2 or A.shape[0] != A.shape[1] or A.size == 0:
            raise ValueError(f"A must be a non-empty square matrix, got shape {A.shape}")
        b = np.zeros(A.shape[0]) if b is None else check_array("b", b).ravel()
        if b.shape != (A.shape[0],):
            raise ValueError(f"b must have shape ({A.shape[0]},), got {b.shape}")
        self.A, self.b = np.ascontiguousarray(A), b
        self.dim = A.shape[0]

    def __call__(self, x):
        return self.A @ x + self.b

    def kernel_args(self):
        """``(code, A, b, U, offsets)``: what the compiled EVI loop evaluates."""
        return OP_AFFINE, self.A, self.b, np.zeros((1, 1)), np.zeros(2, np.int64)


@njit(cache=True)
def normal_form_operator(U, off, x, out):
    r"""``out <- F(x)``, :math:`F_i(x) = -\nabla_{x_i} u_i(x)`, for a normal-form game with
    payoffs ``U`` of shape ``(n, prod m)`` (row-major over the pure profiles, last player
    fastest) and block offsets ``off``: each profile adds :math:`-U_i(a)\prod_{j\ne i}
    x_j[a_j]` to coordinate :math:`a_i` of block :math:`i`."""
    n = off.shape[0] - 1
    out[:] = 0.0
    nprof = U.shape[1]
    idx = np.zeros(n, np.int64)
    pre = np.empty(n + 1)
    suf = np.empty(n + 1)
    for p in range(nprof):
        pre[0] = 1.0
        for j in range(n):
            pre[j + 1] = pre[j] * x[off[j] + idx[j]]
        suf[n] = 1.0
        for j in range(n - 1, -1, -1):
            suf[j] = suf[j + 1] * x[off[j] + idx[j]]
        for i in range(n):
            out[off[i] + idx[i]] -= U[i, p] * pre[i] * suf[i + 1]
        j = n - 1  # next profile
        while j >= 0:
            idx[j] += 1
            if idx[j] < off[j + 1] - off[j]:
                break
            idx[j] = 0
            j -= 1


class NormalFormOperator:
    r"""The VI operator :math:`F(x) = -(\nabla_{x_i} u_i(x))_i` of a normal-form game on
    concatenated mixed profiles (compiled; evaluated inside the loop of
    :func:`jitopt.solvers.evi`).

    Parameters
    ----------
    payoffs : ndarray, shape (n, m_1, ..., m_n)
        ``payoffs[i][a_1, ..., a_n]`` is player ``i``'s payoff (finite).

    Attributes
    ----------
    U : ndarray, shape (n, m_1 * ... * m_n)
        The payoffs, one row per player, flattened row-major.
    offsets : ndarray of int64
        Block offsets of the players in the concatenated profile.
    dim : int

    Examples
    --------
    Matching pennies, at the profile where both players play their first action:

    >>> import numpy as np
    >>> from jitopt.problems import NormalFormOperator
    >>> A = np.array([[1.0, -1.0], [-1.0, 1.0]])
    >>> F = NormalFormOperator(np.array([A, -A]))
    >>> F.dim, F(np.array([1.0, 0.0, 1.0, 0.0]))
    (4, array([-1.,  1.,  1., -1.]))
    """

    def __init__(self, payoffs):
        payoffs = check_array("payoffs", payoffs)
        n = payoffs.shape[0] if payoffs.ndim else 0
        if n < 1 or payoffs.ndim != n + 1 or payoffs.size == 0:
            raise ValueError(f"payoffs must have shape (n, m_1, ..., m_n) with n >= 1 and "
                             f"every m_i >= 1, got {payoffs.shape}")
        self.U = np.ascontiguousarray(payoffs.reshape(n, -1))
        self.offsets = np.concatenate([[0], np.cumsum(payoffs.shape[1:])]).astype(np.int64)
        self.dim = int(self.offsets[-1])

    def __call__(self, x):
        if np.iscomplexobj(x):
            raise TypeError("x must be real, got a complex array")
        x = np.ascontiguousarray(x, dtype=float)
        if x.shape != (self.dim,):
            raise ValueError(f"x must be a concatenated mixed profile of shape ({self.dim},), "
                             f"got {x.shape}")
        if not np.all(np.isfinite(x)):
            raise ValueError("x contains NaN or inf")
        out = np.empty(self.dim)
        kernel_for(normal_form_operator, _UNCOMPILED, self.U.size <= _SMALL)(
            self.U, self.offsets, x, out)
        return out

    def kernel_args(self):
        """``(code, A, b, U, offsets)``: what the compiled EVI loop evaluates."""
        return OP_NORMAL_FORM, np.zeros((1, 1)), np.zeros(1), self.U, self.offsets


def _domain_dim(domain, dim):
    """The dimension of a supported domain (``dim`` for a set that does not fix one)."""
    if dim is not None:
        if isinstance(dim, bool) or not isinstance(dim, numbers.Integral) or dim < 1:
            raise ValueError(f"dim must be a positive integer, got {dim!r}")
        dim = int(dim)
    if isinstance(domain, (ProductOfSimplices, Polytope)):
        d = domain.dim
    elif isinstance(domain, ConvexSet) and (isinstance(domain, Simplex) or domain.separable):
        d = domain.dim if domain.dim is not None else dim
        if d is None:
            raise ValueError(f"the domain {domain!r} has no dimension: pass dim")
        if domain.separable:
            lo, hi = domain.kernel_args(d)[:2]
            if not (np.isfinite(lo).all() and np.isfinite(hi).all()) or (hi <= lo).any():
                raise ValueError("a box domain must have finite bounds with lower < upper")
    else:
        raise TypeError("domain must be jitopt.sets.Simplex, a bounded jitopt.sets.Box, "
                        f"ProductOfSimplices or Polytope, got {type(domain).__name__}")
    if dim is not None and dim != d:
        raise ValueError(f"dim={dim} does not match the domain's dimension {d}")
    return d


class VIProblem(BaseProblem):
    r"""A variational inequality: an operator :math:`F : X \to \mathbb R^d` and a compact
    convex domain :math:`X`.

    Parameters
    ----------
    operator : callable, AffineOperator or NormalFormOperator
        ``operator(x) -> ndarray of shape (d,)``. A Python callable (or a Numba-jitted
        function) is called once per round between the compiled learner steps; an
        :class:`AffineOperator` and a :class:`NormalFormOperator` run inside the compiled
        loop of :func:`jitopt.solvers.evi`.
    domain : jitopt.sets.Simplex, Box, LInfBall, ProductOfSimplices or Polytope
        The compact convex set :math:`X` (a box needs finite bounds).
    dim : int, optional
        The dimension, for a set that does not fix it (``jitopt.sets.Simplex()``).

    Attributes
    ----------
    operator, domain
        As given.
    dim : int
        The dimension :math:`d`.
    counts : jitopt.OracleCounts
        ``nfev`` counts operator evaluations.

    Examples
    --------
    A skew-symmetric affine operator on a box; the solution sits at a corner:

    >>> import numpy as np, jitopt
    >>> from jitopt.problems import AffineOperator, VIProblem
    >>> from jitopt.sets import Box
    >>> F = AffineOperator(np.array([[0.0, 1.0], [-1.0, 0.0]]), np.array([1.0, -1.0]))
    >>> problem = VIProblem(F, Box([-1.0, -1.0], [1.0, 1.0]))
    >>> res = jitopt.solvers.evi(problem, tol=1e-3, rng=0)
    >>> problem.dim, bool(res.success), np.round(res.x, 2)
    (2, True, array([-1.,  1.]))
    """

    default_method = "evi"

    def __init__(self, operator, domain, *, dim=None):
        super().__init__()
        if not callable(operator):
            raise TypeError(f"operator must be callable, got {type(operator).__name__}")
        op_dim = getattr(operator, "dim", None)
        self.dim = _domain_dim(domain, op_dim if dim is None else dim)
        if op_dim is not None and op_dim != self.dim:
            raise ValueError(f"the operator has dimension {op_dim}, the domain {self.dim}")
        self.domain = domain
        self.operator = operator

    def F(self, x):
        """The operator at ``x`` (a new array), counted in ``counts.nfev``; an exception of
        the operator or a result of the wrong shape raises ``OracleError``,
        a NaN or inf ``NonFiniteOracle`` (a solver run reports both as a failed result)."""
        self.counts.add(nfev=1)
        f = self.call_oracle("operator", self.operator, np.array(x, dtype=float))
        if np.iscomplexobj(f):
            raise OracleError(f"The oracle operator must return a real array of shape "
                              f"({self.dim},), got a complex one")
        try:
            f = np.array(f, dtype=float)
        except (TypeError, ValueError):
            raise OracleError(f"The oracle operator must return an array of shape "
                              f"({self.dim},), got {type(f).__name__}") from None
        if f.shape != (self.dim,):
            raise OracleError(f"The oracle operator must return an array of shape "
                              f"({self.dim},), got shape {f.shape}")
        return self.check_finite("operator", f)

    def __repr__(self):
        return f"VIProblem(dim={self.dim}, domain={self.domain!r})"


#: games of at most this many payoff entries evaluate the operator uncompiled
#: (``jitopt._interpreted.kernel_for``) until it is compiled
_SMALL = 1_000
_UNCOMPILED = interpreted(sys.modules[__name__])
