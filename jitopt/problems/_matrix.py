"""Built-in problems on Stiefel, Grassmann and the orthogonal group, with known optima."""

import numpy as np
from numba import njit

from .._core.problem import Problem
from .._core.validation import check_choice, check_int, check_rng
from ..manifolds import Grassmann, Orthogonal, Stiefel

__all__ = ["pca", "procrustes", "brockett", "spectrum_matrix"]


def _square_matrix(name, a, symmetric=False):
    a = np.asarray(a)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError(f"{name} must be a square 2-D array, got shape {a.shape}")
    if not np.issubdtype(a.dtype, np.number) or np.iscomplexobj(a):
        raise TypeError(f"{name} must be a real numeric array, got dtype {a.dtype}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains NaN or inf")
    a = np.array(a, dtype=np.float64, order="C", copy=True)
    if symmetric and not np.allclose(a, a.T, rtol=1e-10, atol=1e-12 * np.abs(a).max()):
        raise ValueError(f"{name} must be symmetric")
    return a


@njit(cache=True)
def _pca_cost_and_egrad(x, a):
    ax = a @ x
    return -np.sum(x * ax), -2.0 * ax


@njit(cache=True)
def _pca_cost(x, a):
    return -np.sum(x * (a @ x))


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
        eigenvectors.
    """
    A = _square_matrix("A", A, symmetric=True)
    n = A.shape[0]
    p = check_int("p", p, 1, n)
    check_choice("manifold", manifold, ("stiefel", "grassmann"))
    w, v = np.linalg.eigh(A)
    M = Stiefel(n, p) if manifold == "stiefel" else Grassmann(n, p)
    return Problem(M, lambda x: _pca_cost(x, A), None,
                   cost_and_egrad=lambda x: _pca_cost_and_egrad(x, A),
                   fopt=-w[::-1][:p].sum(), xopt=np.ascontiguousarray(v[:, ::-1][:, :p]))


@njit(cache=True)
def _procrustes_cost_and_egrad(x, a, b):
    r = a @ x - b
    return np.sum(r * r), 2.0 * (a.T @ r)


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
        :math:`D` the diagonal of signs used.
    """
    A = np.array(A, dtype=np.float64, order="C", copy=True)
    B = np.array(B, dtype=np.float64, order="C", copy=True)
    if A.ndim != 2 or A.shape != B.shape:
        raise ValueError(f"A and B must be 2-D arrays of the same shape, got {A.shape} and "
                         f"{B.shape}")
    if not (np.all(np.isfinite(A)) and np.all(np.isfinite(B))):
        raise ValueError("A and B must be finite")
    n = A.shape[1]
    u, s, vt = np.linalg.svd(A.T @ B)
    d = np.ones(n)
    if special and np.linalg.det(u @ vt) < 0:
        d[-1] = -1.0
    xopt = (u * d) @ vt
    fopt = np.sum(A * A) + np.sum(B * B) - 2.0 * np.sum(s * d)
    return Problem(Orthogonal(n, special=special), None, None,
                   cost_and_egrad=lambda x: _procrustes_cost_and_egrad(x, A, B),
                   fopt=fopt, xopt=xopt)


@njit(cache=True)
def _brockett_cost_and_egrad(x, a, mu):
    axn = (a @ x) * mu
    return np.sum(x * axn), 2.0 * axn


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
    """
    A = _square_matrix("A", A, symmetric=True)
    mu = np.array(mu, dtype=np.float64, copy=True).reshape(-1)
    n, p = A.shape[0], mu.size
    check_int("len(mu)", p, 1, n)
    if not (np.all(mu > 0) and np.all(np.diff(mu) < 0)):
        raise ValueError("mu must be strictly decreasing and positive")
    w, v = np.linalg.eigh(A)
    return Problem(Stiefel(n, p), None, None,
                   cost_and_egrad=lambda x: _brockett_cost_and_egrad(x, A, mu),
                   fopt=float(np.sum(mu * w[:p])), xopt=np.ascontiguousarray(v[:, :p]))


def spectrum_matrix(n, low=1.0, high=100.0, rng=None):
    """A random symmetric matrix :math:`Q\\,\\mathrm{diag}(\\lambda)\\,Q^\\top` with
    eigenvalues ``geomspace(low, high, n)`` and Haar-random :math:`Q` (the benchmark PCA
    matrix)."""
    n = check_int("n", n, 1)
    rng = check_rng(rng)
    q, r = np.linalg.qr(rng.standard_normal((n, n)))
    q *= np.sign(np.diag(r))
    a = (q * np.geomspace(low, high, n)) @ q.T
    return 0.5 * (a + a.T)
