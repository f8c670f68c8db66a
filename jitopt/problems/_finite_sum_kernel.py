"""The per-sample oracle of the compiled SERENA loop (``jitopt.solvers._serena_kernels``)
for the built-in finite sums of :mod:`jitopt.problems`: a new built-in problem adds its
branch here, and no solver changes."""

import numpy as np
from numba import njit

from ..manifolds import INNER, axpby, layout_projection, sym
from ._finite_sum import _karcher_log_sum, sample_gradients


@njit(**INNER)
def sample_rgrad(mk, data, aux, par, out, x, idx):
    """``out`` <- the Riemannian gradient at ``x`` of the mean of f_i over ``idx``, in the
    kernel layout of the manifold code ``mk`` (``manifolds._kernels``); returns that mean
    cost: the per-sample oracle of the compiled SERENA loop, for the problem whose
    ``sample_kernel`` is ``(code, data, aux, par)``.

    The problem is told apart by the types of its data, which lets Numba drop the other
    problems' code at compile time (a branch on ``data.ndim`` is pruned before type
    inference), so a problem compiles only its own oracle:

    - PCA and robust PCA: ``data`` the samples as rows (2-D), ``aux`` their squared norms
      (empty for PCA), ``par`` eps²; both share one specialisation;
    - Karcher mean: ``data`` the matrices, shape ``(n, d, d)``.
    """
    if data.ndim == 3:
        s, _, acc, sq = _karcher_log_sum(x, data, idx)
        axpby(out, -1.0 / idx.size, sym(s @ acc @ s), 0.0, out)
        return 0.5 * np.sum(sq) / idx.size
    cost = sample_gradients(out, x, data, aux, par, idx)
    layout_projection(mk, x, out)
    return cost
