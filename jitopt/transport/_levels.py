r"""Coarse-to-fine start of WDHA: the problem on the grid of 2 x 2 blocks, and the
prolongation of its potentials and barycenter to the grid twice as fine.

Grid convention as in :mod:`jitopt.transport._grid`: cell ``(i, j)`` of an ``n0 x n1``
grid is centred at ``((i + 1/2) / n0, (j + 1/2) / n1)``; the fine cells ``2I, 2I + 1`` make
up the coarse cell ``I``, so the fine centre ``i`` lies at the coarse index
:math:`i/2 - 1/4`.
"""

import numpy as np

from . import _kernels
from ._grid import _half_sq_norm

__all__ = []


def coarsen(a):
    """Mean over 2 x 2 blocks of the last two axes (both even): densities of mean one stay
    of mean one."""
    *lead, n0, n1 = a.shape
    return a.reshape(*lead, n0 // 2, 2, n1 // 2, 2).mean(axis=(-3, -1))


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
    return _binomial_rows(_binomial_rows(f).T).T


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
    r"""``f`` (cell values of a smooth function on an ``n0 x n1`` grid, both at least 3) at
    the centres of the ``2 n0 x 2 n1`` grid, by Keys' cubic convolution along each axis,
    with quadratic continuation past the edges: local (4 x 4 coarse values), exact for
    quadratics, third order for smooth functions. C-ordered, as the kernels take it."""
    return np.ascontiguousarray(_refine_rows(_refine_rows(f).T).T)


def prolong_potentials(psi):
    r"""Potentials :math:`\psi_i` of a coarse grid on the grid twice as fine:
    :math:`q + (\psi_i - q)` interpolated, made convex, and their transforms.

    .. math:: \psi_i^{\rm fine} = \bigl(q + R(\psi_i - q)\bigr)^{**}, \qquad
              \varphi_i^{\rm fine} = (\psi_i^{\rm fine})^*

    with :math:`R` the filter :func:`_binomial` followed by the interpolation
    :func:`refine`, and :math:`q = \tfrac12|x|^2`: the identity part of the map is exact
    on every grid and only the displacement potential is interpolated (exactly when it
    is quadratic, up to a constant). Returns ``(psi, phi)`` of shape ``(n, 2 n0, 2 n1)``.
    """
    n, n0, n1 = psi.shape
    qc = _half_sq_norm((n0, n1))
    qf = _half_sq_norm((2 * n0, 2 * n1))
    fine = np.empty((n, 2 * n0, 2 * n1))
    conj = np.empty_like(fine)
    for i in range(n):
        fine[i] = qf + refine(_binomial(psi[i] - qc))
        _kernels.legendre_2d(fine[i], conj[i])
        _kernels.legendre_2d(conj[i], fine[i])
    return fine, conj


def prolong_density(nu):
    """A coarse barycenter on the grid twice as fine, scaled to mean one: its (-1)^(i+j)
    mode filtered out (see :func:`_binomial`), interpolated, clipped at zero."""
    fine = np.maximum(refine(_binomial(nu)), 0.0)
    return fine * (fine.size / fine.sum())
