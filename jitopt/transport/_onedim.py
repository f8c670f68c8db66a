"""Exact 1-D Wasserstein-2 distance and barycenter of histogram densities, by quantile
functions."""

import numpy as np

from ..problems import as_grid, check_weights

__all__ = ["wasserstein2_1d", "barycenter_1d"]


def _cdfs(name, A):
    """Validate a stack of 1-D nonnegative histograms (rows) and return their CDFs at the
    cell edges, shape (n_hists, n + 1), from exactly 0 to exactly 1."""
    if np.ndim(A) != 2:
        raise ValueError(f"{name} must be a 2-D array (n_hists, n), got shape {np.shape(A)}")
    A = as_grid(name, A, ndim=2)
    if np.any(A < 0):
        raise ValueError(f"{name} must be nonnegative (found negative values)")
    cdf = np.zeros((A.shape[0], A.shape[1] + 1))
    top = A.max(axis=1, keepdims=True)
    # scaled by each row's largest entry first, so that sums near the largest float do not
    # overflow (the CDF is invariant to the scale)
    np.cumsum(A / np.where(top > 0, top, 1.0), axis=1, out=cdf[:, 1:])
    if np.any(cdf[:, -1] <= 0):
        raise ValueError(f"{name} must have positive total mass (found an all-zero density)")
    return cdf / cdf[:, -1:]  # exactly 1 from the last nonzero cell on


def _quantile_pieces(cdf):
    """Common breakpoints ``u`` of the quantile functions and, for each input, its values at
    the left and right ends of every interval ``(u_k, u_{k+1})`` (it is affine inside)."""
    n = cdf.shape[1] - 1
    u = np.unique(cdf)
    mid = 0.5 * (u[:-1] + u[1:])
    left = np.empty((cdf.shape[0], mid.size))
    right = np.empty_like(left)
    for i, c in enumerate(cdf):
        cell = np.clip(np.searchsorted(c, mid, side="right") - 1, 0, n - 1)
        lo = c[cell]
        width = np.maximum(c[cell + 1] - lo, np.finfo(float).tiny)
        left[i] = (cell + np.clip((u[:-1] - lo) / width, 0.0, 1.0)) / n
        right[i] = (cell + np.clip((u[1:] - lo) / width, 0.0, 1.0)) / n
    return u, left, right


def wasserstein2_1d(a, b):
    r"""Exact :math:`W_2^2` between two histogram densities on ``[0, 1]``.

    ``a`` and ``b`` are taken constant on the ``n`` cells ``[j/n, (j+1)/n]``; their quantile
    functions are then piecewise affine and

    .. math:: W_2^2(a, b) = \int_0^1 |Q_a(u) - Q_b(u)|^2\,du

    is summed exactly over the merged breakpoints, in :math:`O(n \log n)`.

    Parameters
    ----------
    a, b : array_like of shape (n,)
        Nonnegative, any total mass (each is normalised to unit mass).

    Returns
    -------
    float

    Examples
    --------
    Two boxes of width 0.2, 0.3 apart: :math:`W_2^2 = 0.3^2`.

    >>> import numpy as np
    >>> from jitopt.transport import wasserstein2_1d
    >>> a, b = np.zeros(10), np.zeros(10)
    >>> a[2:4], b[5:7] = 1.0, 1.0
    >>> round(float(wasserstein2_1d(a, b)), 12)
    0.09
    """
    a = np.asarray(a)
    b = np.asarray(b)
    for name, v in (("a", a), ("b", b)):
        if v.ndim != 1:
            raise ValueError(f"{name} must be a 1-D array, got shape {v.shape}")
    if a.shape != b.shape:
        raise ValueError(f"a and b must have the same shape, got {a.shape} and {b.shape}")
    cdf = np.vstack([_cdfs("a", a[None]), _cdfs("b", b[None])])
    u, left, right = _quantile_pieces(cdf)
    d0 = left[0] - left[1]
    d1 = right[0] - right[1]
    return float(np.sum(np.diff(u) * (d0 * d0 + d0 * d1 + d1 * d1) / 3.0))


def barycenter_1d(A, weights=None):
    r"""Exact Wasserstein-2 barycenter of 1-D histogram densities by quantile averaging.

    On the line the barycenter's quantile function is the weighted mean of the inputs'
    quantile functions, :math:`Q_{\bar\nu} = \sum_i \lambda_i Q_{\mu_i}`. With inputs
    constant on the cells of ``[0, 1]``, every :math:`Q_{\mu_i}` is piecewise affine, so
    :math:`Q_{\bar\nu}` is too and its inverse, the barycenter's CDF, is evaluated exactly at
    the cell edges; the result is the barycenter's mass in each cell.

    Parameters
    ----------
    A : array_like of shape (n_hists, n)
        Nonnegative histograms, any normalisation (each is normalised to unit mass).
    weights : array_like of shape (n_hists,), optional
        Weights on the simplex (default uniform).

    Returns
    -------
    ndarray of shape (n,)
        Nonnegative, summing to 1.

    Examples
    --------
    The midpoint of two boxes is the box halfway between them:

    >>> import numpy as np
    >>> from jitopt.transport import barycenter_1d
    >>> a, b = np.zeros(10), np.zeros(10)
    >>> a[2:4], b[5:7] = 1.0, 1.0
    >>> np.round(barycenter_1d(np.stack([a, b])), 6)
    array([0.  , 0.  , 0.  , 0.25, 0.5 , 0.25, 0.  , 0.  , 0.  , 0.  ])
    """
    cdf = _cdfs("A", A)
    lam = check_weights(weights, cdf.shape[0])
    n = cdf.shape[1] - 1
    u, left, right = _quantile_pieces(cdf)
    lo = (lam[:, None] * left).sum(axis=0)
    hi = (lam[:, None] * right).sum(axis=0)
    xp = np.column_stack([lo, hi]).ravel()
    fp = np.column_stack([u[:-1], u[1:]]).ravel()
    F = np.interp(np.arange(n + 1) / n, np.maximum.accumulate(xp), fp)
    F[0], F[-1] = 0.0, 1.0
    return np.maximum(np.diff(F), 0.0)
