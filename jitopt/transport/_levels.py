r"""Coarse-to-fine start of WDHA: the problem on the grid of 2 x 2 (x 2) blocks, and the
prolongation of its potentials and barycenter to the grid twice as fine.

Grid convention as in :mod:`jitopt.transport._grid`: cell ``(i, j)`` of an ``n0 x n1``
grid is centred at ``((i + 1/2) / n0, (j + 1/2) / n1)`` (a third axis alike); along each
axis the fine cells ``2I, 2I + 1`` make up the coarse cell ``I``, so the fine centre ``i``
lies at the coarse index :math:`i/2 - 1/4`. Every operator acts on each axis in turn.
"""

import numpy as np

from . import _nd
from ._grid import _half_sq_norm

__all__ = []


def coarsen(a, d):
    """Mean over blocks of 2 cells along each of the last ``d`` axes (all even): densities
    of mean one stay of mean one."""
    lead, grid = a.shape[:-d], a.shape[-d:]
    blocks = [k for n in grid for k in (n // 2, 2)]
    return a.reshape(*lead, *blocks).mean(axis=tuple(-1 - 2 * k for k in range(d))[::-1])


def _per_axis(op, f):
    """``op`` (which acts on axis 0) applied along each axis of ``f`` in turn; C-ordered, as
    the kernels take it."""
    for axis in range(f.ndim):
        f = np.moveaxis(op(np.moveaxis(f, axis, 0)), 0, axis)
    return np.ascontiguousarray(f)


def _extend(f, k):
    """``f`` with ``k`` cells added at both ends of axis 0 by quadratic extrapolation,
    :math:`f_{-1} = 3 f_0 - 3 f_1 + f_2` (exact for quadratics)."""
    for _ in range(k):
        f = np.concatenate([(3 * f[0] - 3 * f[1] + f[2])[None], f,
                            (3 * f[-1] - 3 * f[-2] + f[-3])[None]])
    return f


def _binomial_rows(f):
    e = _extend(f, 1)
    return 0.25 * e[:-2] + 0.5 * e[1:-1] + 0.25 * e[2:]


def _binomial(f):
    r"""``f`` filtered by :math:`(\tfrac14, \tfrac12, \tfrac14)` along each axis (quadratic
    continuation at the edges): removes the :math:`(-1)^{i+j}` mode, which centred
    differences do not see on the coarse grid but do on the fine one; a quadratic changes
    by a constant."""
    return _per_axis(_binomial_rows, f)


# Keys' cubic convolution kernel (a = -1/2) at the distances 7/4, 3/4, 1/4, 5/4 (in
# coarse cells) of a fine centre from the four nearest coarse centres, left to right
_KEYS = np.array([-3.0, 29.0, 111.0, -9.0]) / 128.0


def _refine_rows(f):
    n = f.shape[0]
    e = _extend(f, 2)  # e[k + 2] = f[k]
    w0, w1, w2, w3 = _KEYS
    out = np.empty((2 * n,) + f.shape[1:])
    # the fine centre 2k lies at the coarse coordinate k - 1/4, the centre 2k + 1 at k + 1/4
    out[0::2] = w0 * e[0:n] + w1 * e[1:n + 1] + w2 * e[2:n + 2] + w3 * e[3:n + 3]
    out[1::2] = w3 * e[1:n + 1] + w2 * e[2:n + 2] + w1 * e[3:n + 3] + w0 * e[4:n + 4]
    return out


def refine(f):
    r"""``f`` (cell values of a smooth function on an ``n0 x n1`` grid, every side at least
    3, or a 3-D grid) at the centres of the grid twice as fine, by Keys' cubic convolution
    along each axis, with quadratic continuation past the edges: local (4 coarse values per
    axis), exact for quadratics, third order for smooth functions. C-ordered, as the
    kernels take it."""
    return _per_axis(_refine_rows, f)


def prolong(f):
    """A function on a coarse grid at the centres of the grid twice as fine: the filter
    :func:`_binomial`, then :func:`refine`. Linear, so it keeps every linear relation
    between several functions (SGA's :math:`\\sum_i \\lambda_i f_i = 0`)."""
    return refine(_binomial(f))


def prolong_potentials(psi, fine=None, conj=None):
    r"""Potentials :math:`\psi_i` of a coarse grid on the grid twice as fine:
    :math:`q + (\psi_i - q)` interpolated, made convex, and their transforms.

    .. math:: \psi_i^{\rm fine} = \bigl(q + R(\psi_i - q)\bigr)^{**}, \qquad
              \varphi_i^{\rm fine} = (\psi_i^{\rm fine})^*

    with :math:`R` the filter :func:`_binomial` followed by the interpolation
    :func:`refine`, and :math:`q = \tfrac12|x|^2`: the identity part of the map is exact
    on every grid and only the displacement potential is interpolated (exactly when it
    is quadratic, up to a constant). Returns ``(psi, phi)`` on the fine grid (every side
    doubled), in ``fine`` and ``conj`` when given.
    """
    grid = psi.shape[1:]
    qc = _half_sq_norm(grid)
    qf = _half_sq_norm(tuple(2 * n for n in grid))
    fine = np.empty((len(psi),) + qf.shape) if fine is None else fine
    conj = np.empty_like(fine) if conj is None else conj
    for i in range(len(psi)):
        fine[i] = qf + prolong(psi[i] - qc)
        _nd.legendre(fine[i], conj[i])
        _nd.legendre(conj[i], fine[i])
    return fine, conj


def prolong_density(nu):
    """A coarse barycenter on the grid twice as fine, scaled to mean one: its (-1)^(i+j)
    mode filtered out (see :func:`_binomial`), interpolated, clipped at zero."""
    fine = np.maximum(prolong(nu), 0.0)
    return fine * (fine.size / fine.sum())
