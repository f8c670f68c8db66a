r"""Built-in finite-sum problems :math:`F(x) = \frac1n\sum_i f_i(x)` with per-sample oracles.

Each constructor returns a :class:`~jitopt.FiniteSumProblem` whose oracles are Numba
kernels of this module, and sets ``problem.sample_kernel`` so that the stochastic solvers
(``jitopt.solvers.serena``) can run their inner loop in Numba end to end. The kernels
work on 2-D points (a point of the sphere is stored as a ``(d, 1)`` column) and take the
samples as the rows of a 2-D float64 array (the SPD matrices of the Karcher mean as a
C-contiguous ``(n, d, d)`` array), so one compiled specialisation serves every problem of a
kind.
"""

import numpy as np
from numba import njit

from .._core.problem import FiniteSumProblem
from ..validation import as_array, check_array, check_choice, check_int, check_real, check_rng
from ..manifolds import SPD, Grassmann, Sphere, Stiefel, spd_sqrt_and_inv_sqrt, sym

__all__ = ["finite_sum_pca", "leading_eigenvector", "robust_pca", "karcher_mean",
           "spiked_samples", "commuting_spd_samples"]

# codes of ``sample_kernel[0]``, the problem's kind (the compiled loops tell the kinds apart
# by the types of their data: ``_finite_sum_kernel.sample_rgrad``)
PCA, ROBUST_PCA, KARCHER = 0, 1, 2


# -- per-sample kernels (mean over the sample indices ``idx``) ---------------------------


@njit(cache=True)
def pca_cost(x, z, idx):
    """mean over idx of -||xᵀz_i||²."""
    zx = z[idx] @ x
    return -np.sum(zx * zx) / idx.size


@njit(cache=True, no_cpython_wrapper=True, error_model="numpy",
      fastmath={"reassoc", "contract"})
def sample_gradients(out, xt, z, sq, eps2, idx):
    r"""The mean over ``idx`` of the Euclidean gradients of PCA (``sq`` empty) or of robust
    PCA, written transposed into ``out`` (shape ``(p, d)``, like ``xt`` = :math:`X^\top`);
    returns the mean cost.

    With :math:`s_i = X^\top z_i`, PCA's :math:`f_i = -\|s_i\|^2` has gradient
    :math:`-2 z_i s_i^\top`; robust PCA's :math:`f_i = r_i =
    \sqrt{\varepsilon^2 + \|z_i\|^2 - \|s_i\|^2}` has gradient :math:`-z_i s_i^\top / r_i`.
    Samples go four at a time, so each row of ``out`` is read and written once per four
    samples and every inner loop runs over a contiguous row (reassociated sums, which
    vectorise).
    """
    p, d = xt.shape
    b = idx.size
    for j in range(p):
        for k in range(d):
            out[j, k] = 0.0
    s = np.empty((4, p))  # row l: the weighted s_i of the group's sample l
    cost = 0.0
    for start in range(0, b, 4):
        # a short last group repeats its last sample, with weight 0
        i0, i1 = idx[start], idx[min(start + 1, b - 1)]
        i2, i3 = idx[min(start + 2, b - 1)], idx[min(start + 3, b - 1)]
        for j in range(p):
            s0 = s1 = s2 = s3 = 0.0
            for k in range(d):
                xjk = xt[j, k]
                s0 += xjk * z[i0, k]
                s1 += xjk * z[i1, k]
                s2 += xjk * z[i2, k]
                s3 += xjk * z[i3, k]
            s[0, j], s[1, j], s[2, j], s[3, j] = s0, s1, s2, s3
        for l in range(4):
            w = 0.0
            if start + l < b:
                q = 0.0
                for j in range(p):
                    q += s[l, j] * s[l, j]
                if sq.size:
                    r = np.sqrt(eps2 + max(sq[idx[start + l]] - q, 0.0))
                    cost += r
                    w = -1.0 / (b * r)
                else:
                    cost -= q
                    w = -2.0 / b
            for j in range(p):
                s[l, j] *= w
        for j in range(p):
            c0, c1, c2, c3 = s[0, j], s[1, j], s[2, j], s[3, j]
            for k in range(d):
                out[j, k] += c0 * z[i0, k] + c1 * z[i1, k] + c2 * z[i2, k] + c3 * z[i3, k]
    return cost / b


@njit(cache=True)
def _transposed(a):
    out = np.empty((a.shape[1], a.shape[0]))
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            out[j, i] = a[i, j]
    return out


@njit(cache=True)
def pca_egrad(x, z, idx):
    """mean over idx of -2 z_i z_iᵀ x."""
    g = np.empty((x.shape[1], x.shape[0]))
    sample_gradients(g, _transposed(x), z, np.zeros(0), 0.0, idx)
    return _transposed(g)


@njit(cache=True)
def robust_cost(x, z, sq, eps2, idx):
    """mean over idx of sqrt(eps² + ||z_i - x xᵀz_i||²)."""
    zx = z[idx] @ x
    total = 0.0
    for k in range(idx.size):
        total += np.sqrt(eps2 + max(sq[idx[k]] - np.sum(zx[k] * zx[k]), 0.0))
    return total / idx.size


@njit(cache=True)
def robust_egrad(x, z, sq, eps2, idx):
    """mean over idx of -z_i z_iᵀ x / sqrt(eps² + ||z_i - x xᵀz_i||²)."""
    g = np.empty((x.shape[1], x.shape[0]))
    sample_gradients(g, _transposed(x), z, sq, eps2, idx)
    return _transposed(g)


@njit(cache=True)
def _jacobi_eigh(a):
    """Eigenvalues and eigenvectors of a small symmetric matrix by cyclic Jacobi rotations.

    For the d x d matrices of the Karcher mean (d of a few units) this is several times
    faster than a LAPACK call, whose set-up dominates at that size, and it is accurate to
    rounding. Returns ``(w, v)`` with ``a = v diag(w) vᵀ``.
    """
    d = a.shape[0]
    a = a.copy()
    v = np.eye(d)
    total = np.sum(a * a)
    for _ in range(100):
        off = 0.0
        for p in range(d):
            for q in range(p + 1, d):
                off += a[p, q] * a[p, q]
        if off <= 1e-30 * total:  # off-diagonal norm below 1e-15 of the matrix norm
            break
        for p in range(d - 1):
            for q in range(p + 1, d):
                apq = a[p, q]
                if apq == 0.0:
                    continue
                theta = (a[q, q] - a[p, p]) / (2.0 * apq)
                t = 1.0 / (abs(theta) + np.sqrt(theta * theta + 1.0))
                if theta < 0.0:
                    t = -t
                c = 1.0 / np.sqrt(t * t + 1.0)
                s = t * c
                # a <- Jᵀ a J, which zeroes a[p, q] (symmetric update)
                a[p, p] -= t * apq
                a[q, q] += t * apq
                a[p, q] = 0.0
                a[q, p] = 0.0
                for k in range(d):
                    if k != p and k != q:
                        akp, akq = a[k, p], a[k, q]
                        a[k, p] = a[p, k] = c * akp - s * akq
                        a[k, q] = a[q, k] = s * akp + c * akq
                for k in range(d):  # v <- v J
                    vkp, vkq = v[k, p], v[k, q]
                    v[k, p] = c * vkp - s * vkq
                    v[k, q] = s * vkp + c * vkq
    return np.diag(a).copy(), v


@njit(cache=True)
def _karcher_log_sum(x, a, idx):
    """x^{±1/2}, the sum over idx of logm(x^{-1/2} A_i x^{-1/2}) (A_i = a[i], d x d) and the
    squared norms of those logarithms."""
    d = x.shape[0]
    s, si = spd_sqrt_and_inv_sqrt(x)
    acc = np.zeros((d, d))
    sq = np.zeros(idx.size)
    b = np.empty((d, d))
    tmp = np.empty((d, d))
    for k in range(idx.size):
        ai = a[idx[k]]
        for i in range(d):  # tmp = A_i x^{-1/2}
            for j in range(d):
                acc_ij = 0.0
                for m in range(d):
                    acc_ij += ai[i, m] * si[m, j]
                tmp[i, j] = acc_ij
        for i in range(d):  # b = x^{-1/2} tmp, symmetrised
            for j in range(i, d):
                bij = 0.0
                for m in range(d):
                    bij += si[i, m] * tmp[m, j]
                b[i, j] = bij
                b[j, i] = bij
        w, v = _jacobi_eigh(b)
        lw = np.log(w)
        sq[k] = np.sum(lw * lw)
        for i in range(d):
            for j in range(d):
                acc_ij = 0.0
                for m in range(d):
                    acc_ij += v[i, m] * lw[m] * v[j, m]
                acc[i, j] += acc_ij
    return s, si, acc, sq


@njit(cache=True)
def karcher_cost(x, a, idx):
    """mean over idx of ½ d²(x, A_i), affine-invariant distance."""
    _, _, _, sq = _karcher_log_sum(x, a, idx)
    return 0.5 * np.sum(sq) / idx.size


@njit(cache=True)
def karcher_egrad(x, a, idx):
    """Euclidean gradient -x^{-1/2} mean(logm(x^{-1/2}A_i x^{-1/2})) x^{-1/2}."""
    _, si, acc, _ = _karcher_log_sum(x, a, idx)
    return sym(si @ acc @ si) * (-1.0 / idx.size)


@njit(cache=True)
def karcher_rgrad(x, a, idx):
    """Riemannian gradient -mean Log_x(A_i) = -x^{1/2} mean(logm(x^{-1/2}A_i x^{-1/2})) x^{1/2}."""
    s, _, acc, _ = _karcher_log_sum(x, a, idx)
    return sym(s @ acc @ s) * (-1.0 / idx.size)


# -- validation and data -------------------------------------------------------------------


def _samples(name, z):
    z = as_array(name, z)
    if z.ndim != 2 or z.shape[0] < 1 or z.shape[1] < 1:
        raise ValueError(f"{name} must be a 2-D array (n_samples, dim), got shape {z.shape}")
    if not np.issubdtype(z.dtype, np.number) or np.iscomplexobj(z):
        raise TypeError(f"{name} must be a real numeric array, got dtype {z.dtype}")
    if not np.all(np.isfinite(z)):
        raise ValueError(f"{name} contains NaN or inf")
    z = np.array(z, dtype=np.float64, order="C", copy=True)
    with np.errstate(over="ignore"):
        if not np.isfinite(np.einsum("ij,ij->", z, z)):
            raise ValueError(f"{name} is too large: the squared norms of its samples "
                             f"overflow float64 (rescale it)")
    return z


def top_eigenpairs(c, p):
    """The eigenvalues of the symmetric ``c`` in decreasing order and the eigenvectors of
    the largest ``p``, as columns."""
    w, v = np.linalg.eigh(0.5 * (c + c.T))
    return w[::-1], np.ascontiguousarray(v[:, ::-1][:, :p])


def spiked_samples(n, d, scales=(20.0, 10.0, 5.0, 3.0, 2.0), rng=None):
    """Gaussian samples ``Z`` of shape ``(n, d)`` whose first columns have standard
    deviations ``scales`` and the others 1 (the PCA data of the variance-reduction
    literature).

    Parameters
    ----------
    n, d : int
        Number of samples and dimension.
    scales : sequence of float
        Standard deviations of the first columns (cut to ``d``).
    rng : int or numpy.random.Generator, optional
        Seed of the samples.

    Returns
    -------
    ndarray of shape (n, d)
        The samples as rows.

    Examples
    --------
    >>> import numpy as np, jitopt
    >>> Z = jitopt.problems.spiked_samples(1000, 4, scales=(3.0, 2.0), rng=0)
    >>> Z.shape, np.round(Z.std(axis=0), 1)
    ((1000, 4), array([3. , 1.9, 1. , 1. ]))
    """
    n = check_int("n", n, 1)
    d = check_int("d", d, 1)
    s = np.ones(d)
    scales = check_array("scales", np.atleast_1d(scales), ndim=1)[:d]
    s[:scales.size] = scales
    return check_rng(rng).standard_normal((n, d)) * s


def commuting_spd_samples(n, d, sigma=0.5, rng=None):
    """``n`` commuting SPD matrices :math:`A_i = Q\\,\\mathrm{diag}(e^{a_i})\\,Q^\\top` with a
    common random orthogonal :math:`Q` and :math:`a_i \\sim N(0, \\sigma^2 I)`; shape
    ``(n, d, d)``. Their Karcher mean has a closed form (see :func:`karcher_mean`).

    Parameters
    ----------
    n, d : int
        Number of matrices and their size.
    sigma : float
        Standard deviation :math:`\\sigma` of the log-eigenvalues.
    rng : int or numpy.random.Generator, optional
        Seed of :math:`Q` and of the :math:`a_i`.

    Returns
    -------
    ndarray of shape (n, d, d)
        The matrices :math:`A_i`.

    Examples
    --------
    >>> import numpy as np, jitopt
    >>> A = jitopt.problems.commuting_spd_samples(30, 3, rng=0)
    >>> A.shape, bool(np.allclose(A[0] @ A[1], A[1] @ A[0]))
    ((30, 3, 3), True)
    """
    n = check_int("n", n, 1)
    d = check_int("d", d, 1)
    # e^{±sigma·a_i} must stay far from overflow and underflow (|a_i| < 10 in practice)
    sigma = check_real("sigma", sigma, low=0.0, high=50.0)
    rng = check_rng(rng)
    q, r = np.linalg.qr(rng.standard_normal((d, d)))
    q *= np.sign(np.diag(r))
    a = sigma * rng.standard_normal((n, d))
    out = np.einsum("ij,nj,kj->nik", q, np.exp(a), q)
    return 0.5 * (out + out.transpose(0, 2, 1))


# -- problems ------------------------------------------------------------------------------


def _pca_problem(manifold, z, shape, fopt, xopt):
    # the full sums straight from Z (the kernels copy the rows Z[idx] first)
    def cost(x, idx):
        if idx is problem.all_samples:
            zx = z @ np.reshape(x, shape)
            return -float(np.sum(zx * zx)) / z.shape[0]
        return pca_cost(np.reshape(x, shape), z, idx)

    def egrad(x, idx):
        if idx is problem.all_samples:
            return ((-2.0 / z.shape[0]) * (z.T @ (z @ np.reshape(x, shape)))).reshape(
                manifold.shape)
        return pca_egrad(np.reshape(x, shape), z, idx).reshape(manifold.shape)

    problem = FiniteSumProblem(manifold, cost, egrad, z.shape[0], fopt=fopt, xopt=xopt)
    problem.sample_kernel = (PCA, z, np.zeros(0), 0.0)
    return problem


def finite_sum_pca(Z, p, manifold="grassmann"):
    r"""PCA as a finite sum: :math:`\min_X -\frac1n \sum_i \|X^\top z_i\|^2`.

    The cost equals :math:`-\mathrm{tr}(X^\top C X)` with :math:`C = Z^\top Z / n`.

    Parameters
    ----------
    Z : (n, d) array_like
        The samples :math:`z_i` as rows; :math:`C = Z^\top Z / n`.
    p : int
        Subspace dimension, ``1 <= p <= d``.
    manifold : {"grassmann", "stiefel"}
        The domain (the cost is invariant under :math:`X \mapsto XQ`).

    Returns
    -------
    FiniteSumProblem
        Per-sample cost :math:`f_i(X) = -\|X^\top z_i\|^2` and Euclidean gradient
        :math:`-2 z_i z_i^\top X`; ``fopt`` is minus the sum of the top ``p`` eigenvalues of
        :math:`C` and ``xopt`` their eigenvectors.

    Examples
    --------
    >>> import jitopt
    >>> Z = jitopt.problems.spiked_samples(400, 8, rng=0)
    >>> problem = jitopt.problems.finite_sum_pca(Z, 2)
    >>> problem.n_samples, problem.manifold.shape
    (400, (8, 2))
    >>> res = jitopt.solvers.r_srg(problem, rng=0)
    >>> bool(abs(res.fun - problem.fopt) < 1e-8 * abs(problem.fopt))
    True
    """
    z = _samples("Z", Z)
    p = check_int("p", p, 1, z.shape[1])
    check_choice("manifold", manifold, ("grassmann", "stiefel"))
    w, v = top_eigenpairs(z.T @ z / z.shape[0], p)
    d = z.shape[1]
    M = Grassmann(d, p) if manifold == "grassmann" else Stiefel(d, p)
    return _pca_problem(M, z, (d, p), -float(w[:p].sum()), v)


def leading_eigenvector(Z):
    r"""Leading eigenvector on the sphere: :math:`\min_{\|x\|=1} -\frac1n\sum_i (z_i^\top x)^2`.

    Parameters
    ----------
    Z : (n, d) array_like
        The samples as rows.

    Returns
    -------
    FiniteSumProblem
        On :class:`~jitopt.manifolds.Sphere` ``(d)``, with ``fopt`` minus the largest
        eigenvalue of :math:`C = Z^\top Z/n` and ``xopt`` its eigenvector.

    Examples
    --------
    >>> import jitopt
    >>> Z = jitopt.problems.spiked_samples(1000, 4, scales=(3.0, 2.0), rng=0)
    >>> problem = jitopt.problems.leading_eigenvector(Z)
    >>> res = jitopt.solvers.r_srg(problem, rng=0)
    >>> bool(abs(res.fun - problem.fopt) < 1e-8 * abs(problem.fopt))
    True
    """
    z = _samples("Z", Z)
    w, v = top_eigenpairs(z.T @ z / z.shape[0], 1)
    d = z.shape[1]
    return _pca_problem(Sphere(d), z, (d, 1), -float(w[0]), v[:, 0].copy())


def robust_pca(Z, p, eps=1.0):
    r"""Robust PCA on the Grassmann manifold with a smooth absolute loss.

    .. math::

        \min_{X \in \mathrm{Gr}(d, p)} \frac1n \sum_i
        \sqrt{\varepsilon^2 + \|z_i - XX^\top z_i\|^2},

    whose per-sample Euclidean gradient is
    :math:`-z_i z_i^\top X / \sqrt{\varepsilon^2 + \|z_i - XX^\top z_i\|^2}`. Unlike PCA the
    sum does not reduce to a small matrix, so every gradient reads the samples.

    Parameters
    ----------
    Z : (n, d) array_like
        The samples as rows.
    p : int
        Subspace dimension.
    eps : float
        Smoothing :math:`\varepsilon > 0`.

    Returns
    -------
    FiniteSumProblem
        ``fopt`` and ``xopt`` are ``None`` (no closed form).

    Examples
    --------
    The direction of largest spread of the samples, found without forming their covariance:

    >>> import numpy as np, jitopt
    >>> Z = jitopt.problems.spiked_samples(1000, 4, scales=(3.0, 2.0), rng=0)
    >>> problem = jitopt.problems.robust_pca(Z, 1)
    >>> res = jitopt.solvers.r_svrg(problem, max_passes=20, rng=0)
    >>> bool(abs(res.x[0, 0]) > 0.99)
    True
    """
    z = _samples("Z", Z)
    d = z.shape[1]
    p = check_int("p", p, 1, d)
    eps = check_real("eps", eps, low=0.0, low_open=True, high=1e150)
    sq = np.einsum("ij,ij->i", z, z)
    eps2 = eps * eps

    def cost(x, idx):
        return robust_cost(x, z, sq, eps2, idx)

    def egrad(x, idx):
        return robust_egrad(x, z, sq, eps2, idx)

    problem = FiniteSumProblem(Grassmann(d, p), cost, egrad, z.shape[0])
    problem.sample_kernel = (ROBUST_PCA, z, sq, eps2)
    return problem


def karcher_mean(A, retraction="exp"):
    r"""Karcher (Riemannian) mean of SPD matrices: :math:`\min_X \frac1{2n}\sum_i d^2(X, A_i)`.

    With the affine-invariant distance
    :math:`d(X, A) = \|\log(X^{-1/2} A X^{-1/2})\|_F`; the per-sample Riemannian gradient is
    :math:`-\mathrm{Log}_X(A_i)`.

    Parameters
    ----------
    A : (n, d, d) array_like
        Symmetric positive definite matrices.
    retraction : {"exp", "second_order"}
        Retraction of the :class:`~jitopt.manifolds.SPD` manifold.

    Returns
    -------
    FiniteSumProblem
        When the :math:`A_i` commute (:math:`A_i = Q\,\mathrm{diag}(e^{a_i})Q^\top`), the
        minimizer is :math:`X^* = Q\,\mathrm{diag}(e^{\bar a})Q^\top` with
        :math:`\bar a` the mean of the :math:`a_i`, and
        :math:`f^* = \frac1{2n}\sum_i\|a_i - \bar a\|^2`; ``fopt`` and ``xopt`` are set
        then, ``None`` otherwise.

    Examples
    --------
    >>> import numpy as np, jitopt
    >>> A = jitopt.problems.commuting_spd_samples(30, 3, rng=0)
    >>> problem = jitopt.problems.karcher_mean(A)
    >>> res = jitopt.solvers.r_srg(problem, rng=0)
    >>> bool(np.allclose(res.x, problem.xopt, atol=1e-5))
    True
    """
    a = as_array("A", A)
    if a.ndim != 3 or a.shape[1] != a.shape[2] or a.shape[0] < 1 or a.shape[1] < 1:
        raise ValueError(f"A must have shape (n, d, d) with n, d >= 1, got {a.shape}")
    if not np.issubdtype(a.dtype, np.number) or np.iscomplexobj(a):
        raise TypeError(f"A must be a real numeric array, got dtype {a.dtype}")
    a = np.array(a, dtype=np.float64, order="C", copy=True)
    if not np.all(np.isfinite(a)):
        raise ValueError("A contains NaN or inf")
    n, d, _ = a.shape
    if not np.allclose(a, a.transpose(0, 2, 1), rtol=1e-10, atol=1e-12 * np.abs(a).max()):
        raise ValueError("A must hold symmetric matrices")
    lam = np.linalg.eigvalsh(a)
    if np.any(lam[:, 0] <= 0):
        raise ValueError(f"A must hold positive definite matrices; A[{np.argmin(lam[:, 0])}] "
                         f"has smallest eigenvalue {lam[:, 0].min():.3e}")
    fopt = xopt = None
    # commuting data: eigenvectors of a generic combination diagonalise every A_i
    weights = np.random.default_rng(0).uniform(1.0, 2.0, n)
    _, q = np.linalg.eigh(np.einsum("n,nij->ij", weights, a))
    diag = np.einsum("ji,njk,ki->ni", q, a, q)
    off = np.einsum("ji,njk,kl->nil", q, a, q) - diag[:, :, None] * np.eye(d)
    if np.abs(off).max() <= 1e-10 * np.abs(diag).max() and np.all(diag > 0):
        la = np.log(diag)
        mean = la.mean(0)
        fopt = 0.5 * float(np.sum((la - mean) ** 2)) / n
        xopt = (q * np.exp(mean)) @ q.T
        xopt = 0.5 * (xopt + xopt.T)

    def cost(x, idx):
        return karcher_cost(np.ascontiguousarray(x, dtype=np.float64), a, idx)

    def egrad(x, idx):
        return karcher_egrad(np.ascontiguousarray(x, dtype=np.float64), a, idx)

    problem = FiniteSumProblem(SPD(d, retraction=retraction), cost, egrad, n, fopt=fopt,
                               xopt=xopt)
    problem.sample_kernel = (KARCHER, a, np.zeros(0), 0.0)
    return problem
