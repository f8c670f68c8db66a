"""Built-in problems on Stiefel, Grassmann and the orthogonal group, with known optima."""

import numpy as np

from .._core.problem import Problem
from ..validation import as_array, check_array, check_choice, check_int, check_real, check_rng
from ..manifolds import Grassmann, Orthogonal, Stiefel

__all__ = ["pca", "procrustes", "brockett", "linear_cost", "spectrum_matrix"]

_MAX_CONDITION = 1e8  # of spectrum_matrix: its eigenvalues are exact to about n eps high


def _square_matrix(name, a, symmetric=False):
    a = as_array(name, a)
    if a.ndim != 2 or a.shape[0] != a.shape[1] or a.size == 0:
        raise ValueError(f"{name} must be a square 2-D array, non-empty, got shape {a.shape}")
    if not np.issubdtype(a.dtype, np.number) or np.iscomplexobj(a):
        raise TypeError(f"{name} must be a real numeric array, got dtype {a.dtype}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains NaN or inf")
    a = np.array(a, dtype=np.float64, order="C", copy=True)
    if symmetric and not np.allclose(a, a.T, rtol=1e-10, atol=1e-12 * np.abs(a).max()):
        raise ValueError(f"{name} must be symmetric")
    return a


def _finite_optimum(fopt, names):
    """``fopt`` as a float, refused when it overflows float64 (entries of ``names`` too
    large for the cost to be representable)."""
    if not np.isfinite(fopt):
        raise ValueError(f"{names} are too large: the optimal cost overflows float64 "
                         f"(rescale them)")
    return float(fopt)


# The oracles are NumPy: BLAS products of ordinary size, as fast as compiled code and with
# nothing to compile on first use.


def _block_quadratic(a, rows, d):
    """``<d, a[rows][:, rows] d>`` in O(len(rows)^2 p)."""
    return np.vdot(d, a.take(rows, 0).take(rows, 1) @ d)


def _pca_cost_and_egrad(x, a):
    ax = a @ x
    return -np.vdot(x, ax), -2.0 * ax


def _pca_cost(x, a):
    return -np.vdot(x, a @ x)


def pca(A, p, manifold="stiefel"):
    r"""Top-:math:`p` eigenspace: :math:`\min_{X^\top X = I} -\mathrm{tr}(X^\top A X)`.

    Parameters
    ----------
    A : (n, n) array_like
        Symmetric matrix (a covariance, say).
    p : int
        Subspace dimension, ``1 <= p <= n``.
    manifold : {"stiefel", "grassmann"}
        Solve on :class:`~jitopt.manifolds.Stiefel` or
        :class:`~jitopt.manifolds.Grassmann` (the cost is invariant under
        :math:`X \mapsto XQ`).

    Returns
    -------
    Problem
        With ``fopt`` = minus the sum of the top ``p`` eigenvalues and ``xopt`` = their
        eigenvectors, and the row-block oracle: for the rows :math:`I`,
        :math:`G_I = -2 A_{I,:} X` in :math:`O(|I|np)` and, after
        :math:`X_I \leftarrow X_I + \Delta`, the cost change
        :math:`\langle G_I, \Delta\rangle - \langle \Delta, A_{II}\Delta\rangle` in
        :math:`O(|I|^2 p)`.

    Notes
    -----
    For :math:`p > n/2`, ``pca(-A, n - p)`` is cheaper for every solver: its minimizers are
    orthonormal bases :math:`Z` of the complement of the top-:math:`p` eigenspace, its
    gradients have :math:`n - p` columns, and its cost is :math:`f(X) + \mathrm{tr}A` when
    :math:`Z` spans the complement of :math:`X` (see the theory page of RSDM).

    Examples
    --------
    >>> import numpy as np, jitopt
    >>> problem = jitopt.problems.pca(np.diag([5.0, 4.0, 1.0]), 2)
    >>> problem.fopt
    -9.0
    >>> res = jitopt.solvers.rgd(problem, rng=0)
    >>> round(res.fun, 6)
    -9.0
    """
    A = _square_matrix("A", A, symmetric=True)
    n = A.shape[0]
    p = check_int("p", p, 1, n)
    check_choice("manifold", manifold, ("stiefel", "grassmann"))
    w, v = np.linalg.eigh(A)
    M = Stiefel(n, p) if manifold == "stiefel" else Grassmann(n, p)
    return Problem(M, lambda x: _pca_cost(x, A), None,
                   cost_and_egrad=lambda x: _pca_cost_and_egrad(x, A),
                   fopt=_finite_optimum(-w[::-1][:p].sum(), "the entries of A"),
                   xopt=np.ascontiguousarray(v[:, ::-1][:, :p]),
                   egrad_rows=lambda x, rows: -2.0 * (A.take(rows, 0) @ x),
                   cost_change=lambda x, rows, d, g: (np.vdot(g, d)
                                                      - _block_quadratic(A, rows, d)))


def _procrustes_cost_and_egrad(x, a, b):
    r = a @ x - b
    return np.vdot(r, r), 2.0 * (a.T @ r)


def procrustes(A, B, special=False):
    r"""Orthogonal Procrustes: :math:`\min_{X \in O(n)} \|AX - B\|_F^2`.

    Parameters
    ----------
    A : (m, n) array_like
    B : (m, n) array_like
    special : bool
        Restrict to :math:`SO(n)`.

    Returns
    -------
    Problem
        On :class:`~jitopt.manifolds.Orthogonal`, with the closed-form optimum: for
        :math:`A^\top B = U\Sigma V^\top`, :math:`X^* = UV^\top` (on :math:`SO(n)`, the
        last singular pair is flipped when :math:`\det UV^\top < 0`), and
        :math:`f^* = \|A\|_F^2 + \|B\|_F^2 - 2\,\mathrm{tr}(\Sigma D)` with
        :math:`D` the diagonal of signs used. Row-block oracle: with :math:`M = A^\top A`
        and :math:`C = A^\top B` (precomputed), :math:`G_I = 2(M_{I,:}X - C_I)` and the
        cost change after :math:`X_I \leftarrow X_I + \Delta` is
        :math:`\langle G_I, \Delta\rangle + \langle \Delta, M_{II}\Delta\rangle`.
        On :math:`O(n)`, :math:`\|AX\|_F^2 = \mathrm{tr}(M X X^\top) = \mathrm{tr}\,M` is
        constant, so the cost is affine in a rotation :math:`X_I \leftarrow U X_I` of a row
        block: ``block_affine`` returns :math:`L_I = -2\,C_I X_I^\top`, with
        :math:`f(X') = f(X) + \langle L_I, U - I\rangle`.

    Examples
    --------
    ``B`` an exact rotation of ``A``: the optimum is that rotation, at cost 0.

    >>> import numpy as np, jitopt
    >>> rng = np.random.default_rng(0)
    >>> A = rng.standard_normal((6, 3))
    >>> Q = np.linalg.qr(rng.standard_normal((3, 3)))[0]
    >>> problem = jitopt.problems.procrustes(A, A @ Q)
    >>> bool(abs(problem.fopt) < 1e-12), bool(np.allclose(problem.xopt, Q))
    (True, True)
    >>> res = jitopt.solvers.rgd(problem, rng=0)
    >>> bool(res.fun < 1e-10)
    True
    """
    A, B = check_array("A", A), check_array("B", B)
    if A.ndim != 2 or A.shape != B.shape or A.size == 0:
        raise ValueError(f"A and B must be non-empty 2-D arrays of the same shape, got "
                         f"{A.shape} and {B.shape}")
    n = A.shape[1]
    u, s, vt = np.linalg.svd(A.T @ B)
    d = np.ones(n)
    if special and np.linalg.det(u @ vt) < 0:
        d[-1] = -1.0
    xopt = (u * d) @ vt
    with np.errstate(over="ignore", invalid="ignore"):
        fopt = np.sum(A * A) + np.sum(B * B) - 2.0 * np.sum(s * d)
    fopt = _finite_optimum(fopt, "A and B")
    M = np.ascontiguousarray(A.T @ A)
    C = np.ascontiguousarray(A.T @ B)
    return Problem(Orthogonal(n, special=special), None, None,
                   cost_and_egrad=lambda x: _procrustes_cost_and_egrad(x, A, B),
                   fopt=fopt, xopt=xopt,
                   egrad_rows=lambda x, rows: 2.0 * (M.take(rows, 0) @ x - C[rows]),
                   cost_change=lambda x, rows, d, g: (np.vdot(g, d)
                                                      + _block_quadratic(M, rows, d)),
                   block_affine=lambda x, rows: -2.0 * (C[rows] @ x[rows].T))


def linear_cost(C, special=False):
    r"""Linear cost :math:`\min_{X^\top X = I} -\langle C, X\rangle = -\mathrm{tr}(C^\top X)`.

    Parameters
    ----------
    C : (n, p) array_like
        Real matrix, ``p <= n``.
    special : bool
        For ``p == n`` only: restrict to :math:`SO(n)` instead of :math:`O(n)`.

    Returns
    -------
    Problem
        On :class:`~jitopt.manifolds.Stiefel` for ``p < n`` and
        :class:`~jitopt.manifolds.Orthogonal` for ``p == n``. With the thin SVD
        :math:`C = U\Sigma V^\top`, the minimizer is the polar factor :math:`X^* = UV^\top`
        and :math:`f^* = -\sum_i \sigma_i`. On :math:`SO(n)`, when
        :math:`\det UV^\top < 0`, the minimizer is :math:`U\,\mathrm{diag}(1, \dots, 1,
        -1)V^\top` and :math:`f^* = -\sum_i \sigma_i + 2\sigma_{\min}`. The gradient
        :math:`-C` is constant, so the row-block oracle is :math:`G_I = -C_I` and the cost
        change after :math:`X_I \leftarrow X_I + \Delta` is :math:`-\langle C_I, \Delta\rangle`.
        After a rotation :math:`X_I \leftarrow U X_I` the change is
        :math:`\langle L_I, U - I\rangle` with :math:`L_I = -C_I X_I^\top` (``block_affine``).

    Examples
    --------
    >>> import numpy as np, jitopt
    >>> C = np.array([[3.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    >>> problem = jitopt.problems.linear_cost(C)
    >>> problem.fopt, type(problem.manifold).__name__
    (-4.0, 'Stiefel')
    >>> round(jitopt.solvers.rgd(problem, rng=0).fun, 6)
    -4.0
    """
    C = check_array("C", C)
    if C.ndim != 2 or C.shape[1] > C.shape[0] or C.size == 0:
        raise ValueError(f"C must be a 2-D array of shape (n, p) with 1 <= p <= n, got "
                         f"shape {C.shape}")
    n, p = C.shape
    if special and p != n:
        raise ValueError(f"special=True needs a square C, got shape {C.shape}")
    u, s, vt = np.linalg.svd(C, full_matrices=False)
    d = np.ones(p)
    if special and np.linalg.det(u @ vt) < 0:
        d[-1] = -1.0
    xopt = np.ascontiguousarray((u * d) @ vt)
    fopt = _finite_optimum(-np.sum(s * d), "the entries of C")
    M = Orthogonal(n, special=special) if p == n else Stiefel(n, p)
    neg = -C
    return Problem(M, lambda x: -np.vdot(C, x), lambda x: neg.copy(),
                   cost_and_egrad=lambda x: (-np.vdot(C, x), neg.copy()),
                   fopt=fopt, xopt=xopt,
                   egrad_rows=lambda x, rows: neg[rows],
                   cost_change=lambda x, rows, d, g: np.vdot(g, d),
                   block_affine=lambda x, rows: neg[rows] @ x[rows].T)


def _brockett_cost_and_egrad(x, a, mu):
    axn = (a @ x) * mu
    return np.vdot(x, axn), 2.0 * axn


def brockett(A, mu):
    r"""Brockett cost :math:`\min_{X \in \mathrm{St}(n,p)} \mathrm{tr}(X^\top A X N)`, :math:`N = \mathrm{diag}(\mu)`.

    Parameters
    ----------
    A : (n, n) array_like
        Symmetric matrix.
    mu : (p,) array_like
        Strictly decreasing positive weights :math:`\mu_1 > \dots > \mu_p > 0`.

    Returns
    -------
    Problem
        On :class:`~jitopt.manifolds.Stiefel`; the minimum pairs the largest weight with the
        smallest eigenvalue: :math:`f^* = \sum_i \mu_i \lambda_i` (:math:`\lambda`
        ascending), attained by the corresponding eigenvectors (up to column signs).

    Examples
    --------
    >>> import numpy as np, jitopt
    >>> problem = jitopt.problems.brockett(np.diag([1.0, 2.0, 3.0, 4.0]), [2.0, 1.0])
    >>> problem.fopt
    4.0
    >>> round(jitopt.solvers.rgd(problem, rng=0).fun, 6)
    4.0
    """
    A = _square_matrix("A", A, symmetric=True)
    mu = check_array("mu", mu)
    if mu.ndim > 1:
        raise ValueError(f"mu must be a 1-D array of weights, got shape {mu.shape}")
    mu = mu.reshape(-1)
    n, p = A.shape[0], mu.size
    check_int("len(mu)", p, 1, n)
    if not (np.all(mu > 0) and np.all(np.diff(mu) < 0)):
        raise ValueError("mu must be strictly decreasing and positive")
    w, v = np.linalg.eigh(A)
    return Problem(Stiefel(n, p), None, None,
                   cost_and_egrad=lambda x: _brockett_cost_and_egrad(x, A, mu),
                   fopt=_finite_optimum(np.sum(mu * w[:p]), "A and mu"),
                   xopt=np.ascontiguousarray(v[:, :p]))


def spectrum_matrix(n, low=1.0, high=100.0, rng=None):
    """A random symmetric matrix :math:`Q\\,\\mathrm{diag}(\\lambda)\\,Q^\\top` with
    eigenvalues ``geomspace(low, high, n)`` and Haar-random :math:`Q` (the benchmark PCA
    matrix).

    Parameters
    ----------
    n : int
        The size, ``n >= 1``.
    low, high : float
        The smallest and the largest eigenvalue, :math:`0 < low \\le high < \\infty` with
        ``high / low <= 1e8`` (the rounding of the product, about :math:`n \\epsilon\\,`
        ``high``, would swamp the smallest eigenvalues of a worse-conditioned matrix).
    rng : int or numpy.random.Generator, optional
        Seed of :math:`Q`.

    Returns
    -------
    ndarray of shape (n, n)
        The symmetric matrix.

    Examples
    --------
    >>> import numpy as np, jitopt
    >>> A = jitopt.problems.spectrum_matrix(20, rng=0)
    >>> bool(np.allclose(A, A.T)), np.round(np.linalg.eigvalsh(A)[[0, -1]], 6)
    (True, array([  1., 100.]))
    """
    n = check_int("n", n, 1)
    low = check_real("low", low, low=0.0, low_open=True)
    high = check_real("high", high, low=low, high=np.inf, high_open=True)
    if high > _MAX_CONDITION * low:
        raise ValueError(f"high / low must be at most {_MAX_CONDITION:g}, got {high / low:.3g}: "
                         f"the rounding of Q diag(lambda) Q^T, about n * eps * high, would "
                         f"swamp the smallest eigenvalues")
    rng = check_rng(rng)
    q, r = np.linalg.qr(rng.standard_normal((n, n)))
    q *= np.sign(np.diag(r))
    a = (q * np.geomspace(low, high, n)) @ q.T
    return 0.5 * (a + a.T)
