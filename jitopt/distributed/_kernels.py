r"""The per-sample oracles of the built-in distributed problems, as module-level functions
that run on the workers (on one chunk of samples) and on the client (on gathered rows).

A *kind* bundles, for one problem family, functions of ``(x, data, idx, par)`` where
``data`` is a tuple of arrays whose first axis is the samples (one chunk, or the rows
gathered for a window of steps), ``idx`` indexes those rows and ``par`` holds the scalar
parameters:

- ``cost`` and ``egrad``: the means over ``idx``, computed by the very expressions of the
  in-memory problems of :mod:`jitopt.problems`, so that a minibatch gradient on gathered
  rows equals the in-memory one to the last bit;
- ``sums(x, data, par)``: the sums of the cost and of the gradient over *all* rows of
  ``data`` in one sweep (the full pass of a chunk);
- ``prepare(*blocks)``: the chunk's data tuple from its blocks of the input arrays, run once
  per chunk when the data are persisted (e.g. the squared sample norms of robust PCA).

Functions shipped to Dask workers must be importable (cloudpickle sends functions of
``__main__``, closures and lambdas by value, and each task then compiles them again).
"""

import numpy as np

from ..problems import (karcher_cost, karcher_egrad, logistic_kernel, pca_cost, pca_egrad,
                        robust_cost, robust_egrad)

__all__ = ["Kind", "KINDS", "block_sums"]

class Kind:
    """The block oracles of one problem family (see the module docstring): importable
    functions ``cost(x, data, idx, par)`` and ``egrad(x, data, idx, par)`` (means over the
    rows ``idx`` of the arrays ``data``), optionally ``sums(x, data, par)`` (the sums of
    both over all rows, in one sweep) and ``prepare(*blocks)`` (a chunk's data tuple from
    its blocks of the input arrays; default: the blocks as float64 arrays).

    Parameters
    ----------
    cost, egrad : callable
        ``f(x, data, idx, par)``: the mean cost and the mean Euclidean gradient over the
        rows ``idx`` (an int64 array, repeats allowed) of the arrays ``data``.
    sums : callable, optional
        ``sums(x, data, par) -> (cost sum, gradient sum)`` over all rows; default: from
        ``cost`` and ``egrad`` over all rows.
    prepare : callable, optional
        ``prepare(*blocks) -> data``, run once per chunk on the workers.

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.distributed import KINDS
    >>> X, y = np.array([[1.0, 0.0], [0.0, 2.0]]), np.array([1.0, 2.0])
    >>> KINDS["least_squares"].egrad(np.zeros(2), (X, y), np.array([0, 1]), None)
    array([-0.5, -2. ])
    """

    __slots__ = ("cost", "egrad", "sums", "prepare")

    def __init__(self, cost, egrad, sums=None, prepare=None):
        for name, f in (("cost", cost), ("egrad", egrad), ("sums", sums),
                        ("prepare", prepare)):
            if f is not None and not callable(f):
                raise TypeError(f"{name} must be callable, got {type(f).__name__}")
        self.cost, self.egrad, self.sums = cost, egrad, sums
        self.prepare = _as_tuple if prepare is None else prepare

    def __getstate__(self):
        return (self.cost, self.egrad, self.sums, self.prepare)

    def __setstate__(self, state):
        self.cost, self.egrad, self.sums, self.prepare = state


def _as_tuple(*blocks):
    return tuple(np.ascontiguousarray(b, dtype=np.float64) for b in blocks)


# -- PCA: par = (d, p), the shape of the point as the kernels see it ---------------------


def _pca_cost(x, data, idx, par):
    return pca_cost(np.reshape(x, par), data[0], idx)


def _pca_egrad(x, data, idx, par):
    return pca_egrad(np.reshape(x, par), data[0], idx).reshape(np.shape(x))


def _pca_sums(x, data, par):
    z = data[0]
    zx = z @ np.reshape(x, par)
    return -float(np.sum(zx * zx)), (-2.0 * (z.T @ zx)).reshape(np.shape(x))


# -- robust PCA: data = (Z, squared row norms), par = eps² -----------------------------


def _robust_prepare(z):
    z = np.ascontiguousarray(z, dtype=np.float64)
    return z, np.einsum("ij,ij->i", z, z)


def _robust_cost(x, data, idx, par):
    return robust_cost(x, data[0], data[1], par, idx)


def _robust_egrad(x, data, idx, par):
    return robust_egrad(x, data[0], data[1], par, idx)


# -- Karcher mean: data = (A,), A of shape (n, d, d) -----------------------------------


def _karcher_cost(x, data, idx, par):
    return karcher_cost(np.ascontiguousarray(x, dtype=np.float64), data[0], idx)


def _karcher_egrad(x, data, idx, par):
    return karcher_egrad(np.ascontiguousarray(x, dtype=np.float64), data[0], idx)


# -- least squares: data = (X, y) ------------------------------------------------------


def _ls_cost(x, data, idx, par):
    r = data[0][idx] @ x - data[1][idx]
    return 0.5 * float(r @ r) / idx.shape[0]


def _ls_egrad(x, data, idx, par):
    Xb = data[0][idx]
    return Xb.T @ (Xb @ x - data[1][idx]) / idx.shape[0]


def _ls_sums(x, data, par):
    r = data[0] @ x - data[1]
    return 0.5 * float(r @ r), data[0].T @ r


# -- logistic regression: data = (X, y), par = (alpha, fit_intercept) ------------------


def _logistic_cost(x, data, idx, par):
    return logistic_kernel(np.require(x, float, "CW"), data[0], data[1], idx, par[0], par[1])[0]


def _logistic_egrad(x, data, idx, par):
    return logistic_kernel(np.require(x, float, "CW"), data[0], data[1], idx, par[0], par[1])[1]


def _logistic_sums(x, data, par):
    n = data[0].shape[0]
    f, g = logistic_kernel(np.require(x, float, "CW"), data[0], data[1],
                     np.arange(n, dtype=np.int64), par[0], par[1])
    return n * f, n * g  # the ridge term is in each chunk's mean: its sum over n is itself


KINDS = {
    "pca": Kind(_pca_cost, _pca_egrad, _pca_sums, _as_tuple),
    "robust_pca": Kind(_robust_cost, _robust_egrad, None, _robust_prepare),
    "karcher": Kind(_karcher_cost, _karcher_egrad, None, _as_tuple),
    "least_squares": Kind(_ls_cost, _ls_egrad, _ls_sums, _as_tuple),
    "logistic": Kind(_logistic_cost, _logistic_egrad, _logistic_sums, _as_tuple),
}


def block_sums(kind, x, data, par):
    """``(sum of costs, sum of gradients)`` over all rows of ``data``."""
    if kind.sums is not None:
        return kind.sums(x, data, par)
    n = data[0].shape[0]
    idx = np.arange(n, dtype=np.int64)
    return n * kind.cost(x, data, idx, par), n * kind.egrad(x, data, idx, par)


def chunk_sums(data, kind, x, par):
    """Worker task: the sums over one whole chunk."""
    return block_sums(kind, x, data, par)


def rows_sums(data, idx, kind, x, par):
    """Worker task: the sums over the rows ``idx`` (with repeats) of one chunk."""
    m = idx.shape[0]
    return m * kind.cost(x, data, idx, par), m * kind.egrad(x, data, idx, par)


def group_sums(func, datas, extras, *args):
    """Worker task: the sum over a group of chunks of ``func(data, *extra, *args)``."""
    return add(*[func(data, *extra, *args) for data, extra in zip(datas, extras)])


def gram_sums(data, support):
    """Worker task: :math:`X_S^\\top X_S` over one chunk of least-squares data."""
    Xs = data[0][:, support]
    return Xs.T @ Xs


def _with_ones(z, intercept):
    return np.hstack([z, np.ones((z.shape[0], 1))]) if intercept else z


def normal_matrix(data, intercept):
    """Worker task: :math:`A^\\top A` of a chunk, :math:`A = Z` or :math:`[Z, 1]`."""
    a = _with_ones(data[0], intercept)
    return a.T @ a


def normal_product(data, v, intercept):
    """Worker task: :math:`A^\\top (A v)` of a chunk, :math:`A = Z` or :math:`[Z, 1]`."""
    a = _with_ones(data[0], intercept)
    return a.T @ (a @ v)


def xty(data):
    """Worker task: :math:`X^\\top y` of a chunk of regression data."""
    return data[0].T @ data[1]


def bad_labels(data):
    """Worker task: how many labels of a chunk are neither -1 nor +1."""
    return int(np.count_nonzero(np.abs(data[1]) != 1))


def add(*parts):
    """Worker task: the sum of partial results (numbers, arrays, tuples of them or None)."""
    first = parts[0]
    if isinstance(first, tuple):
        return tuple(add(*[p[i] for p in parts]) for i in range(len(first)))
    if first is None:
        return None
    total = first
    for p in parts[1:]:
        total = total + p
    return total


def take(data, rows):
    """Worker task: the rows ``rows`` of every array of a chunk."""
    return tuple(a[rows] for a in data)


def prepare_chunk(prepare, start, *blocks):
    """Worker task: a chunk's data tuple from its blocks (the chunk's first row is
    ``start``); a ``ValueError`` if a block holds NaN or inf."""
    for b in blocks:
        if not np.all(np.isfinite(b)):
            raise ValueError(f"the samples hold NaN or inf in rows {start}-"
                             f"{start + b.shape[0] - 1}")
    return prepare(*blocks)
