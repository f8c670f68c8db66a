r"""The final polish of WDHA: a few fixed-point steps of Álvarez-Esteban et al.,
:math:`\nu \leftarrow (\sum_i \lambda_i \nabla\psi_i)_\#\nu`, with the maps
:math:`\nabla\psi_i: \nu \to \mu_i` refined by back-and-forth iterations warm-started from
the potentials of the run.
"""

import numpy as np

from . import _kernels, _nd
from ._grid import _back_and_forth

__all__ = []


def polish(nu, mus, lam, psi, phi, active, steps, iters, maxsub, pool=None, scratch=None):
    r"""``steps`` fixed-point steps from the barycenter ``nu`` (mean one).

    Each step refines, for every input ``i`` in ``active`` (in ``pool`` when given), the
    potential ``psi[i]`` (paired with ``nu``, :math:`\nabla\psi_i: \nu \to \mu_i`) by
    ``iters`` back-and-forth iterations started from the pair :math:`(\psi_i^{**},
    \psi_i^*)` (step :math:`4/\max(\nu, \mu_i)`, as :func:`wasserstein2_grid`), then pushes
    ``nu`` by the gradient of :math:`\bar\psi = \sum_i \lambda_i\psi_i`: with sub-samples
    only from a stretch of 2 on (the barycenter step of the default variant), and at the
    last step with :math:`\lceil 2\,\text{stretch}\rceil` sub-samples per axis (the
    deposit of ``output="sharpened"``). The conjugates live in one grid per thread, and
    :math:`\bar\psi` and the new barycenter too, all lent by ``scratch`` (a
    :class:`~jitopt.transport._nd.Scratch`; a new one by default).

    ``psi`` and ``phi`` are conjugate pairs, ``psi[i] = phi[i]*``. Returns the polished
    barycenter (mean one), with the refined potentials in ``psi`` and their conjugates in
    ``phi``; or ``None`` when a value becomes non-finite, with ``psi`` and ``phi`` as they
    were (``psi`` made again as ``phi*``; ``phi`` is written only at the end).
    """
    scratch, mine = _nd.Scratch(nu.shape) if scratch is None else scratch, None

    def refine(i):
        p = psi[i]
        with scratch.grid() as c:
            _nd.legendre(p, c)  # a conjugate pair, p = c*
            _nd.legendre(c, p)
            sigma = 4.0 / max(nu.max(), mus[i].max())
            try:  # (so that every thread has ended before a failure is handled)
                with np.errstate(over="ignore", invalid="ignore"):
                    return _back_and_forth(nu, mus[i], p, c, sigma, iters, 0.0)[0]
            except FloatingPointError:
                return np.nan

    def each(task):
        return _nd.each(pool, task, active)

    try:
        for step in range(steps):
            if not np.all(np.isfinite(each(refine))):
                raise FloatingPointError
            new = scratch.take()
            with scratch.grid() as pbar:
                _kernels.weighted_sum(psi, lam, active, pbar)
                last = step == steps - 1  # the fine deposit of output="sharpened"
                _nd.push(nu, pbar, new, maxsub, 2.0 if last else 1.0, not last)
            mass = new.sum()
            if not (np.isfinite(mass) and mass > 0):
                raise FloatingPointError
            new *= nu.size / mass
            if mine is not None:  # (the barycenter before, if lent)
                scratch.give(mine)
            nu = mine = new
        if not (np.all(np.isfinite(nu)) and np.all(np.isfinite(psi))):
            raise FloatingPointError
    except FloatingPointError:
        each(lambda i: _nd.legendre(phi[i], psi[i]))
        return None
    each(lambda i: _nd.legendre(psi[i], phi[i]))
    return nu
