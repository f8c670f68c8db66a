"""Numba kernels of the matrix manifolds (float64, C-contiguous inputs).

The Stiefel, Grassmann and orthogonal manifolds of one copy project and take the QR
retraction with NumPy and LAPACK from Python (``_stiefel.py``): microseconds a call and
nothing to compile on first use. The compiled projections and QR retraction here serve
compiled loops (SERENA) and the kernels over k copies. The SPD operations on one copy run
the code of the kernels here by NumPy (``_spd.py``), for the same reason.
"""

import numpy as np
from numba import njit

from .._lapack import solve

#: codes of :attr:`Manifold.kernel_code <jitopt.manifolds.Manifold.kernel_code>`: a manifold
#: and retraction the compiled loop of the SERENA solvers handles
SPHERE, STIEFEL, GRASSMANN, SPD_EXP = range(4)


@njit(cache=True)
def sym(a):
    return 0.5 * (a + a.T)


# -- Stiefel / Grassmann / orthogonal group --------------------------------------------


@njit(cache=True)
def stiefel_projection(x, u):
    """u - x sym(xᵀu): projection onto {v : xᵀv + vᵀx = 0}."""
    return u - x @ sym(x.T @ u)


@njit(cache=True)
def horizontal_projection(x, u):
    """u - x xᵀu: projection onto the horizontal space {v : xᵀv = 0} (Grassmann)."""
    return u - x @ (x.T @ u)


@njit(cache=True)
def qr_retraction(x, u):
    """Q factor of x + u with a positive diagonal in R (unique, so a function of x + u),
    C-contiguous.

    For compiled loops; the manifolds' methods for one copy call
    :func:`~._stiefel.qr_retraction` (LAPACK from Python, nothing to compile). Householder
    reflections H_j = I - β_j v_j v_jᵀ in plain loops over the columns (stored as rows):
    for the thin matrices of manifold points as fast as LAPACK or faster, and it compiles
    in about 60 % of the time of Numba's ``np.linalg.qr``. Element loops, here and in the
    callers: an array assignment compiles Numba's formatted shape-mismatch errors, seconds
    of compilation.
    """
    n, p = x.shape
    at = np.empty((p, n))  # (x + u)ᵀ
    for i in range(n):
        for j in range(p):
            at[j, i] = x[i, j] + u[i, j]
    vt = np.zeros((p, n))  # v_j in row j, entries j..n-1
    beta = np.zeros(p)
    sign = np.ones(p)  # the signs of R's diagonal
    for j in range(p):
        t = 0.0
        for i in range(j, n):
            t += at[j, i] * at[j, i]
        # H_j maps column j's entries j.. to (r, 0, ..., 0); r of the sign opposite to
        # a_jj, so that v = a[j:, j] - r e_1 does not cancel
        r = -np.sqrt(t) if at[j, j] >= 0.0 else np.sqrt(t)
        if r < 0.0:
            sign[j] = -1.0
        for i in range(j, n):
            vt[j, i] = at[j, i]
        vt[j, j] -= r
        vv = t - 2.0 * r * at[j, j] + r * r
        if vv > 0.0:
            beta[j] = 2.0 / vv
        _reflect(at, vt, beta[j], j, j + 1)
    # Qᵀ rows: Q = H_0 ⋯ H_{p-1} I[:, :p], and H_j leaves the columns before j alone
    qt = np.zeros((p, n))
    for j in range(p):
        qt[j, j] = 1.0
    for j in range(p - 1, -1, -1):
        _reflect(qt, vt, beta[j], j, j)
    q = np.empty((n, p))
    for i in range(n):
        for j in range(p):
            q[i, j] = sign[j] * qt[j, i]
    return q


@njit(cache=True)
def _reflect(at, vt, beta, j, first):
    """Rows ``first``.. of ``at`` (columns of a matrix) <- H_j times them; H_j changes
    entries j.. only."""
    if beta == 0.0:
        return
    p, n = at.shape
    for c in range(first, p):
        s = 0.0
        for i in range(j, n):
            s += vt[j, i] * at[c, i]
        s *= beta
        for i in range(j, n):
            at[c, i] -= s * vt[j, i]


@njit(cache=True)
def polar_retraction(x, u):
    """(x + u)((x + u)ᵀ(x + u))^(-1/2), the closest orthonormal matrix to x + u.

    Computed as W Vᵀ from the thin SVD x + u = W Σ Vᵀ, which is orthonormal to rounding
    for any step (the form through the eigenvalues of (x + u)ᵀ(x + u) squares the
    condition number and drifts off the manifold for long steps).
    """
    w, _, vt = np.linalg.svd(x + u, full_matrices=False)
    return w @ vt


@njit(cache=True)
def cayley_retraction(x, u):
    """(I - W/2)⁻¹(I + W/2) x with W = P u xᵀ - x uᵀ P, P = I - x xᵀ/2, in O(n p²).

    W is skew with W x = u for tangent u; the Sherman-Morrison-Woodbury form of Wen & Yin
    (2013, Lemma 4) writes W = A Bᵀ with A = [P u, x], B = [x, -P u] and gives
    x + A (I - BᵀA/2)⁻¹ Bᵀx.
    """
    n, p = x.shape
    pu = u - 0.5 * (x @ (x.T @ u))
    if 2 * p >= n:  # the low-rank form is no cheaper: solve with W itself, (I - W/2) y = x + Wx/2
        w = pu @ x.T - x @ pu.T
        return solve(np.eye(n) - 0.5 * w, x + 0.5 * (w @ x))
    a = np.empty((n, 2 * p))
    b = np.empty((n, 2 * p))
    for i in range(n):  # (loops: slice assignments compile NumPy's broadcast errors)
        for j in range(p):
            a[i, j], a[i, p + j] = pu[i, j], x[i, j]
            b[i, j], b[i, p + j] = x[i, j], -pu[i, j]
    m = np.eye(2 * p) - 0.5 * (b.T @ a)
    return x + a @ solve(m, b.T @ x)


@njit(cache=True)
def orthogonal_cayley(x, u):
    """The Cayley retraction of :func:`cayley_retraction` for a square orthogonal x.

    There x xᵀ = I, so W = x Ω xᵀ with Ω = skew(xᵀu) and the retraction is
    x (I - Ω/2)⁻¹(I + Ω/2) = 2 x (I - Ω/2)⁻¹ - x: one solve with (I - Ω/2)ᵀ = I + Ω/2
    instead of the n×n products that form W.
    """
    a = x.T @ u
    b = np.eye(x.shape[0]) + 0.25 * (a - a.T)
    z = solve(b, x.T)
    return 2.0 * z.T - x


@njit(cache=True)
def grassmann_exp(x, u):
    """Geodesic from x with horizontal velocity u (Edelman, Arias & Smith 1998, Thm 2.3)."""
    q, s, vt = np.linalg.svd(u, full_matrices=False)
    y = (x @ vt.T) * np.cos(s) @ vt + (q * np.sin(s)) @ vt
    # re-orthonormalise against rounding; the span is unchanged
    return qr_retraction(y, np.zeros_like(y))


@njit(cache=True)
def grassmann_log(x, y):
    """Horizontal u at x with exp_x(u) spanning span(y): u = Q atan(S) Vᵀ."""
    ytx = y.T @ x
    # (I - x xᵀ) y (xᵀy)⁻¹ = Q S Vᵀ; solve instead of inverting xᵀy
    z = solve(ytx, (y - x @ (x.T @ y)).T).T
    q, s, vt = np.linalg.svd(z, full_matrices=False)
    return (q * np.arctan(s)) @ vt


@njit(cache=True)
def principal_angles(x, y):
    """Principal angles, ascending: arcsin of the sines below pi/4, arccos of the cosines above.

    arccos alone loses half the digits of small angles (cos is flat at 0).
    """
    c = np.linalg.svd(x.T @ y)[1]  # cosines, descending
    s = np.linalg.svd(y - x @ (x.T @ y), full_matrices=False)[1][::-1]  # sines, ascending
    theta = np.arccos(np.minimum(c, 1.0))
    for i in range(theta.shape[0]):
        if c[i] * c[i] >= 0.5:
            theta[i] = np.arcsin(min(s[i], 1.0))
    return theta


# -- symmetric positive definite matrices ---------------------------------------------


@njit(cache=True)
def spd_sqrt_and_inv_sqrt(x):
    w, v = np.linalg.eigh(sym(x))
    r = np.sqrt(w)
    return (v * r) @ v.T, (v / r) @ v.T


@njit(cache=True)
def sym_funm_log(a):
    w, v = np.linalg.eigh(sym(a))
    return (v * np.log(w)) @ v.T


@njit(cache=True)
def sym_funm_exp(a):
    w, v = np.linalg.eigh(sym(a))
    return (v * np.exp(w)) @ v.T


@njit(cache=True)
def sym_funm_sqrt(a):
    w, v = np.linalg.eigh(sym(a))
    return (v * np.sqrt(w)) @ v.T


@njit(cache=True)
def spd_exp(x, u):
    """x^½ exp(x^-½ u x^-½) x^½, the affine-invariant exponential map."""
    s, si = spd_sqrt_and_inv_sqrt(x)
    return sym(s @ sym_funm_exp(si @ u @ si) @ s)


@njit(cache=True)
def spd_log(x, y):
    s, si = spd_sqrt_and_inv_sqrt(x)
    return sym(s @ sym_funm_log(si @ y @ si) @ s)


@njit(cache=True)
def spd_dist(x, y):
    _, si = spd_sqrt_and_inv_sqrt(x)
    w = np.linalg.eigvalsh(sym(si @ y @ si))
    return np.sqrt(np.sum(np.log(w) ** 2))


@njit(cache=True)
def spd_transport(x, y, u):
    """Parallel transport E u Eᵀ with E = (y x⁻¹)^½ = x^½ (x^-½ y x^-½)^½ x^-½."""
    s, si = spd_sqrt_and_inv_sqrt(x)
    e = s @ sym_funm_sqrt(si @ y @ si) @ si
    return sym(e @ u @ e.T)


@njit(cache=True)
def spd_inner(x, u, v):
    """tr(x⁻¹ u x⁻¹ v)."""
    a = solve(x, u)
    b = solve(x, v)
    return np.sum(a * b.T)


@njit(cache=True)
def spd_second_order_retraction(x, u):
    """x + u + ½ u x⁻¹ u, which stays positive definite for any symmetric u."""
    return sym(x + u + 0.5 * (u @ solve(x, u)))


# -- k copies: the kernels above over a leading axis ----------------------------------
# (where one compiled call beats a Python loop over the copies clearly; see
# benchmarks/manifold_copies.py: the other operations loop in Python)


@njit(cache=True)
def _batch_project(x, u, symmetrize):
    """u - x S per copy, with S = xᵀu or sym(xᵀu): plain loops, which beat a BLAS call per
    copy for the small matrices copies usually are."""
    k, n, p = x.shape
    out = np.empty_like(u)
    s = np.empty((p, p))
    for i in range(k):
        for a in range(p):
            for b in range(p):
                t = 0.0
                for r in range(n):
                    t += x[i, r, a] * u[i, r, b]
                s[a, b] = t
        if symmetrize:
            for a in range(p):
                for b in range(a + 1, p):
                    t = 0.5 * (s[a, b] + s[b, a])
                    s[a, b] = t
                    s[b, a] = t
        for r in range(n):
            for b in range(p):
                t = u[i, r, b]
                for a in range(p):
                    t -= x[i, r, a] * s[a, b]
                out[i, r, b] = t
    return out


@njit(cache=True)
def batch_stiefel_projection(x, u):
    return _batch_project(x, u, True)


@njit(cache=True)
def batch_horizontal_projection(x, u):
    return _batch_project(x, u, False)


@njit(cache=True)
def batch_qr_retraction(x, u):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        _store(out, i, qr_retraction(x[i], u[i]))
    return out


@njit(cache=True)
def _store(out, i, a):
    """``out[i] = a`` for a 2-D ``a``, as a loop: a slice assignment compiles NumPy's
    broadcast checks and their error messages, seconds of a first run."""
    for r in range(a.shape[0]):
        for c in range(a.shape[1]):
            out[i, r, c] = a[r, c]


@njit(cache=True)
def batch_polar_retraction(x, u):
    """The polar factor of each x + u, as y (yᵀy)^(-1/2) through the p×p eigenproblem of yᵀy
    when that is well conditioned (cond <= 100: orthonormal to about 100 roundings; for a
    tangent step yᵀy = I + uᵀu), else by the SVD as in :func:`polar_retraction`."""
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        y = x[i] + u[i]
        w, v = np.linalg.eigh(y.T @ y)
        if w[0] > 1e-2 * w[-1]:
            _store(out, i, y @ ((v / np.sqrt(w)) @ v.T))
        else:
            _store(out, i, polar_retraction(x[i], u[i]))
    return out


@njit(cache=True)
def batch_spd_exp(x, u):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        _store(out, i, spd_exp(x[i], u[i]))
    return out


# -- unit-norm columns and rows (Oblique, Elliptope) ---------------------------------


@njit(cache=True)
def normalize_columns(y):
    out = np.empty_like(y)
    m, n = y.shape
    for j in range(n):
        s = 0.0
        for i in range(m):
            s += y[i, j] * y[i, j]
        s = 1.0 / np.sqrt(s)
        for i in range(m):
            out[i, j] = y[i, j] * s
    return out


@njit(cache=True)
def lyap_sym(s, c):
    """Ω with S Ω + Ω S = C for symmetric S ⪰ 0 (k×k), the minimum-norm one when singular."""
    w, q = np.linalg.eigh(sym(s))
    ct = q.T @ c @ q
    k = w.shape[0]
    cut = 1e-14 * max(np.max(np.abs(w)), 1e-300)
    for i in range(k):
        for j in range(k):
            d = w[i] + w[j]
            ct[i, j] = ct[i, j] / d if d > cut else 0.0
    return q @ ct @ q.T


# -- fixed-rank matrices ---------------------------------------------------------------


@njit(cache=True)
def fixed_rank_retraction(u, s, v, mid, up, vp):
    """The thin SVD factors ``(u, s, vt)`` of the rank-k truncation of
    U diag(s) Vᵀ + U M Vᵀ + Up Vᵀ + U Vpᵀ, from the QR factors of [U, Up] and [V, Vp]
    and the SVD of the 2k x 2k core R_u [[diag(s) + M, I], [I, 0]] R_vᵀ."""
    k = s.shape[0]
    qu, ru = np.linalg.qr(np.hstack((u, up)))
    qv, rv = np.linalg.qr(np.hstack((v, vp)))
    core = np.zeros((2 * k, 2 * k))
    for i in range(k):
        for j in range(k):
            core[i, j] = mid[i, j]
        core[i, i] += s[i]
        core[i, k + i] = 1.0
        core[k + i, i] = 1.0
    w, sig, zt = np.linalg.svd(ru @ core @ np.ascontiguousarray(rv.T))
    left = np.ascontiguousarray(qu) @ np.ascontiguousarray(w[:, :k])
    right = np.ascontiguousarray(zt[:k]) @ np.ascontiguousarray(qv.T)
    return left, sig[:k].copy(), right


# -- the kernel layout of compiled loops ------------------------------------------------
# A point or tangent vector of the sphere, Stiefel or Grassmann manifold as its transpose,
# shape (p, d), so that inner loops run over contiguous rows (the SERENA loop,
# ``jitopt.solvers._serena_kernels``). Reassociated sums (so that they vectorise), with no
# assumption that values are finite; called only from compiled code: no Python wrapper, no
# division checks.
FAST = {"reassoc", "contract"}
INNER = {"cache": True, "no_cpython_wrapper": True, "error_model": "numpy"}


@njit(fastmath=FAST, **INNER)
def axpby(out, a, x, b, y):
    """out = a x + b y elementwise (``y`` unread when b = 0); returns whether every entry
    of ``out`` is finite."""
    acc = 0.0
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            o = a * x[i, j] + (b * y[i, j] if b != 0.0 else 0.0)
            out[i, j] = o
            acc += o * 0.0  # NaN after an inf or a NaN entry
    return acc == 0.0


@njit(fastmath=FAST, **INNER)
def layout_projection(mk, x, u):
    """u <- P_x(u) in the kernel layout, ``mk`` the manifold's ``kernel_code``: the rows of
    u minus sym(u xᵀ) x (Stiefel) or (u xᵀ) x (sphere, Grassmann), i.e. U - X sym(XᵀU) or
    U - X XᵀU for U = uᵀ, X = xᵀ."""
    p, d = x.shape
    a = np.empty((p, p))
    for i in range(p):
        for j in range(p):
            s = 0.0
            for k in range(d):
                s += u[i, k] * x[j, k]
            a[i, j] = s
    for i in range(p):
        for j in range(p):
            c = 0.5 * (a[i, j] + a[j, i]) if mk == STIEFEL else a[i, j]
            for k in range(d):
                u[i, k] -= c * x[j, k]
