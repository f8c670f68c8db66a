r"""The final polish of WDHA: a few fixed-point steps of Álvarez-Esteban et al.,
:math:`\nu \leftarrow (\sum_i \lambda_i \nabla\psi_i)_\#\nu`, with the maps
:math:`\nabla\psi_i: \nu \to \mu_i` refined by back-and-forth iterations warm-started from
the potentials of the run.
"""

import numpy as np

from . import _kernels, _nd
from ._grid import _back_and_forth

__all__ = []


def polish(nu, mus, lam, psi, phi, active, steps, iters, maxsub, pool=None, copy=True):
    r"""``steps`` fixed-point steps from the barycenter ``nu`` (mean one).

    Each step refines, for every input ``i`` in ``active`` (in ``pool`` when given), the
    conjugate pair ``psi[i]`` (paired with ``nu``, :math:`\nabla\psi_i: \nu \to \mu_i`) and
    ``phi[i] = psi[i]*`` by ``iters`` back-and-forth iterations started from the current
    pair (step :math:`4/\max(\nu, \mu_i)`, as :func:`wasserstein2_grid`), then pushes
    ``nu`` by the gradient of :math:`\bar\psi = \sum_i \lambda_i\psi_i`: with sub-samples
    only from a stretch of 2 on (the barycenter step of the default variant), and at the
    last step with :math:`\lceil 2\,\text{stretch}\rceil` sub-samples per axis (the
    deposit of ``output="sharpened"``).

    Returns the polished barycenter (mean one) and writes the refined pairs to ``psi`` and
    ``phi``; returns ``None`` when a value becomes non-finite, and then leaves them
    unchanged if ``copy`` (the pairs are refined in copies), else in an unspecified state.
    """
    work_psi = psi.copy() if copy else psi
    work_phi = phi.copy() if copy else phi
    pbar = np.empty(nu.shape)

    def refine(i):
        p, c = work_psi[i], work_phi[i]
        _nd.legendre(p, c)  # a conjugate pair, p = c*
        _nd.legendre(c, p)
        sigma = 4.0 / max(nu.max(), mus[i].max())
        with np.errstate(over="ignore", invalid="ignore"):
            return _back_and_forth(nu, mus[i], p, c, sigma, iters, 0.0)[0]

    try:
        for step in range(steps):
            duals = list(pool.map(refine, active)) if pool else [refine(i) for i in active]
            if not np.all(np.isfinite(duals)):
                return None
            _kernels.weighted_sum(work_psi, lam, active, pbar)
            new = np.empty_like(nu)
            last = step == steps - 1  # the fine deposit of output="sharpened"
            _nd.push(nu, pbar, new, maxsub, 2.0 if last else 1.0, not last)
            mass = new.sum()
            if not (np.isfinite(mass) and mass > 0):
                return None
            new *= nu.size / mass
            nu = new
    except FloatingPointError:
        return None
    if not (np.all(np.isfinite(nu)) and np.all(np.isfinite(work_psi))):
        return None
    if copy:
        psi[:] = work_psi
        phi[:] = work_phi
    return nu
