r"""The Wasserstein barycenter problem on a 2-D or 3-D grid, and the checks of grid arrays,
densities and simplex weights that it shares with :mod:`jitopt.transport`.

Grid convention: an array of shape ``(n0, n1)`` = (height, width) holds cell values on the
unit square; cell ``(i, j)`` has centre ``((i + 1/2) / n0, (j + 1/2) / n1)``; a third axis
(depth) makes it the unit cube, alike. A density is
stored scaled to mean one over the cells, i.e. as the cell values of a probability density
on the unit square, so that the mean over the cells of ``rho * g`` is the integral of ``g``.
"""

import numpy as np

from .._core.problem import BaseProblem

__all__ = ["BarycenterProblem", "as_grid", "as_density", "check_weights"]


def as_grid(name, f, min_size=1, ndim=2, stack=False, copy=True):
    """``f`` as a float64 C-contiguous array (a new one; unless ``copy``, ``f`` itself
    when it is one) with ``ndim`` axes (a number, or a tuple of the numbers allowed), each
    grid axis (all axes; with ``stack`` all but the first, which indexes the grids and must
    not be empty) of size at least ``min_size``, all finite (errors name ``name``)."""
    allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
    dims = " or ".join(f"{d - stack}-D" for d in allowed)
    what = (f"a stack of {dims} grids, shape (n_hists, height, width[, depth])" if stack else
            f"a {dims} array (height, width{'[, depth]' if 3 in allowed else ''})")
    try:
        arr = np.asarray(f)
    except ValueError:
        raise ValueError(f"{name} must be {what}; got inputs of different shapes") from None
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.integer)
                                   or np.issubdtype(arr.dtype, np.floating)
                                   or arr.dtype == bool):
        raise TypeError(f"{name} must be a real-valued array, got dtype {arr.dtype}")
    if arr.ndim not in allowed:
        raise ValueError(f"{name} must be {what}, got an array of shape {arr.shape}")
    if stack and arr.shape[0] == 0:
        raise ValueError(f"{name} must hold at least one density, got shape {arr.shape}")
    if min(arr.shape[int(stack):]) < min_size:
        raise ValueError(f"{name} must have at least {min_size} cells along each grid axis, "
                         f"got shape {arr.shape}")
    arr = np.array(arr, dtype=np.float64, order="C", copy=True if copy else None)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite values (found NaN or inf)")
    return arr


def as_density(name, a, ndim=(2, 3), min_size=3, stack=False, copy=True):
    """A new array of nonnegative densities on a 2-D or 3-D grid (one per leading index
    with ``stack``), each scaled to mean one over the cells; unless ``copy``, ``a`` itself
    when it is a writeable float64 C-contiguous array of such densities already (each of
    mean one to ``1e-12``; writeable, as the kernels are compiled for)."""
    arr = as_grid(name, a, min_size=min_size, ndim=tuple(d + stack for d in ndim),
                  stack=stack, copy=copy)
    if np.any(arr < 0):
        raise ValueError(f"{name} must be nonnegative (found negative values)")
    # the mass after scaling by the largest entry: no overflow for huge values, no
    # underflow of the quotient for subnormal ones
    grid = tuple(range(int(stack), arr.ndim))
    top = arr.max(axis=grid, keepdims=True)
    if np.any(top <= 0):
        raise ValueError(f"{name} must have positive total mass (found an all-zero density)")
    if not copy and np.shares_memory(arr, a):
        if arr.flags.writeable and np.all(np.abs(arr.mean(axis=grid) - 1.0) <= 1e-12):
            return arr
        arr = arr.copy()
    arr /= top
    arr *= arr[(0,) * stack].size / arr.sum(axis=grid, keepdims=True)
    return arr


def check_weights(weights, n):
    """Weights on the probability simplex of dimension ``n`` as a new float64 array
    (uniform for ``None``)."""
    if weights is None:
        return np.full(n, 1.0 / n)
    w = np.asarray(weights)
    if w.dtype == object or not (np.issubdtype(w.dtype, np.integer)
                                 or np.issubdtype(w.dtype, np.floating)):
        raise TypeError(f"weights must be a real-valued array, got dtype {w.dtype}")
    w = np.array(w, dtype=np.float64)
    if w.shape != (n,):
        raise ValueError(f"weights must have shape ({n},) (one per density), got {w.shape}")
    if not np.all(np.isfinite(w)) or np.any(w < 0) or abs(w.sum() - 1.0) > 1e-8:
        raise ValueError("weights must lie on the probability simplex (nonnegative, "
                         f"summing to 1), got {w}")
    return w / w.sum()


class BarycenterProblem(BaseProblem):
    r"""The Wasserstein-2 barycenter of densities on a common 2-D or 3-D grid.

    .. math:: \min_\nu\ F(\nu) = \sum_{i=1}^n \lambda_i\, W_2^2(\nu, \mu_i)

    over probability densities :math:`\nu` on the unit square (or cube), for densities
    :math:`\mu_i` and weights :math:`\lambda` on the simplex. Solved by
    :func:`jitopt.transport.wdha` and :func:`jitopt.transport.sga`.

    Parameters
    ----------
    densities : array_like of shape (n, height, width) or (n, height, width, depth)
        Nonnegative densities on a common grid over the unit square (cell ``(i, j)``
        centred at ``((i + 1/2)/height, (j + 1/2)/width)``) or cube, each of positive mass
        (any mass: each is normalised). Every side at least 3. Not modified; kept by
        reference (not copied) when already a writeable float64 C-ordered array of
        densities of mean one over the cells.
    weights : array_like of shape (n,), optional
        Barycentric weights :math:`\lambda`, nonnegative and summing to one (up to
        :math:`10^{-8}`; they are rescaled to sum exactly one). Default uniform.

    Attributes
    ----------
    densities : ndarray of shape (n,) + the grid
        The inputs as probability densities on the unit square: each scaled to mean one
        over the cells (``densities[i] / densities[i].sum()`` sums to one); a copy, or
        ``densities`` itself when it was of that form already (writeable float64,
        C-ordered, each of mean one to :math:`10^{-12}`), which no solver writes to.
    weights : ndarray of shape (n,)
        The weights.
    shape : tuple of int
        The grid ``(height, width)`` or ``(height, width, depth)``.
    n_densities : int
        The number of inputs :math:`n`.
    counts : OracleCounts
        The work of a solver, counted by it (the problem has no user oracle): for
        :func:`~jitopt.transport.wdha`, ``nfev`` counts evaluations of the objective
        estimate, ``njev`` evaluations of the Wasserstein gradient
        :math:`x - \nabla\bar\psi(x)`, and ``nifo`` pushforwards of the inputs, one per
        input of positive weight at every evaluation (the per-input oracle, as the
        per-sample gradients of a finite sum).

    Examples
    --------
    >>> import numpy as np, jitopt
    >>> problem = jitopt.problems.BarycenterProblem(np.ones((2, 4, 5)), weights=[0.25, 0.75])
    >>> problem.shape, problem.n_densities, float(problem.densities[1].mean())
    ((4, 5), 2, 1.0)
    """

    default_method = "wdha"

    def __init__(self, densities, weights=None):
        super().__init__()
        self.densities = as_density("densities", densities, stack=True, copy=False)
        self.weights = check_weights(weights, self.densities.shape[0])

    @property
    def shape(self):
        return self.densities.shape[1:]

    @property
    def n_densities(self):
        return self.densities.shape[0]

    def __repr__(self):
        return f"BarycenterProblem({self.n_densities} densities on a {self.shape} grid)"
