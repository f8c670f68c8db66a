"""The Neumann inverse Laplacian of the grid transport (the Poisson solve of every
back-and-forth, WDHA and SGA step), on the grids of :mod:`jitopt.transport._grid`."""

import functools

import numpy as np
import scipy.fft

from ..problems import as_grid
from . import _kernels

__all__ = ["inverse_laplacian"]


def _neumann_eigenvalues(*shape):
    r"""Eigenvalues of minus the Neumann Laplacian on a grid of ``shape`` (any number of
    axes, cells of width :math:`1/n_a`) in the DCT-II basis:
    :math:`\sum_a 4n_a^2\sin^2(\pi k_a/2n_a)`, an array of that shape."""
    per_axis = (4.0 * n * n * np.sin(np.pi * np.arange(n) / (2 * n)) ** 2 for n in shape)
    return functools.reduce(np.add.outer, per_axis)


@functools.lru_cache(maxsize=16)
def _inverse_eigenvalues(*shape):
    """Reciprocal eigenvalues of minus the Neumann Laplacian on a grid of ``shape`` (any
    number of axes) in the DCT-II basis; the constant mode gets 0."""
    lam = _neumann_eigenvalues(*shape)
    lam.flat[0] = np.inf
    inv = np.divide(1.0, lam, out=lam)  # (no second grid)
    inv.setflags(write=False)
    return inv


@functools.lru_cache(maxsize=16)
def _neumann_pivots(*shape):
    """The reciprocal pivots of :func:`~jitopt.transport._kernels.neumann_lines` on a grid of
    ``shape``: shape ``(n0, m)``, for the ``m`` cells of a plane of the last axes (column 0,
    the singular constant mode, set to 0)."""
    n0, s = shape[0], float(shape[0]) ** 2
    lam = _neumann_eigenvalues(*shape[1:]).ravel()
    mult = np.empty((n0, lam.size))
    with np.errstate(divide="ignore"):  # (column 0 only)
        for i in range(n0):
            pivot = ((i > 0) + (i < n0 - 1)) * s + lam
            if i:
                pivot -= s * s * mult[i - 1]
            mult[i] = 1.0 / pivot
    mult[:, 0] = 0.0
    mult.setflags(write=False)
    return mult


#: grids of this many cells or more solve the first axis by elimination, whose compiled
#: kernel (about half a second to compile on a first run) repays itself within a run on
#: such a grid; smaller grids transform along every axis (nothing to compile)
ELIMINATION_CELLS = 1 << 16


def _invlap_inplace(r):
    r"""Overwrite ``r`` by :math:`u = (-\Delta)^{-1} r`
    (:func:`inverse_laplacian`, with no new grid); returns ``mean(u * r)`` of the old ``r``,
    by Parseval's identity for the orthonormal DCTs.

    On grids of at least :data:`ELIMINATION_CELLS` cells, DCT-II along every axis but the
    first turns the operator into one tridiagonal system per line along the first axis, each
    solved by elimination (:func:`~jitopt.transport._kernels.neumann_lines`), the line of the
    planes' constant mode (a singular system, the 1-D Neumann problem) by a DCT along it.
    Smaller grids are transformed along every axis."""
    if r.size < ELIMINATION_CELLS:
        inv = _inverse_eigenvalues(*r.shape)
        coef = scipy.fft.dctn(r, type=2, norm="ortho", overwrite_x=True)
        axes = "ijk"[:r.ndim]
        res = float(np.einsum(f"{axes},{axes},{axes}->", coef, coef, inv))
        coef *= inv
        u = scipy.fft.idctn(coef, type=2, norm="ortho", overwrite_x=True)
    else:
        n0, axes = r.shape[0], tuple(range(1, r.ndim))
        coef = np.ascontiguousarray(scipy.fft.dctn(r, type=2, norm="ortho", axes=axes,
                                                   overwrite_x=True))
        lines = coef.reshape(n0, -1)  # (a view)
        acc = np.zeros(lines.shape[1])
        _kernels.neumann_lines(lines, _neumann_pivots(*r.shape), float(n0) ** 2, acc)
        inv0 = _inverse_eigenvalues(n0)
        c = scipy.fft.dct(lines[:, 0], type=2, norm="ortho")
        res = float(acc.sum() + c @ (c * inv0))
        c *= inv0
        lines[:, 0] = scipy.fft.idct(c, type=2, norm="ortho", overwrite_x=True)
        u = scipy.fft.idctn(coef, type=2, norm="ortho", axes=axes, overwrite_x=True)
    if not np.shares_memory(u, r):  # (scipy transforms in place; not promised)
        r[...] = u
    return res / r.size


def inverse_laplacian(g):
    r"""Solve :math:`-\Delta u = g - \bar g` with Neumann boundary conditions, mean-zero
    :math:`u`, on the unit square (or cube).

    :math:`\Delta` is the 5-point (in 3-D 7-point) Laplacian on the cell-centre grid with
    spacings :math:`1/n_a` and mirror (zero-flux) ghost cells. Its eigenvectors are the
    DCT-II basis, with eigenvalues :math:`\sum_a 4 n_a^2 \sin^2(\pi k_a / 2n_a)`, so the
    solve is a forward and an inverse DCT, :math:`O(m \log m)`; from :math:`2^{16}` cells on
    they run along every axis but the first, where each line of coefficients is then a
    tridiagonal system, solved by elimination (faster). The mean :math:`\bar g` is removed
    (the constant mode is the kernel of the Neumann Laplacian).

    Parameters
    ----------
    g : array_like of shape (height, width) or (height, width, depth)

    Returns
    -------
    ndarray of the shape of ``g``
        The mean-zero solution :math:`u`.

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.transport import grid_coordinates, inverse_laplacian
    >>> y, x = grid_coordinates((16, 16))
    >>> u = inverse_laplacian(np.sin(3 * y) * np.cos(2 * x))
    >>> bool(abs(u.mean()) < 1e-15)  # the mean-zero solution
    True
    """
    u = as_grid("g", g, ndim=(2, 3))  # (a new C-contiguous array)
    _invlap_inplace(u)
    return u
