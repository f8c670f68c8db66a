"""Solvers.

The minimizers on manifolds (``rgd``, ``rsdm`` and the SERENA family) are registered as
methods of :func:`jitopt.minimize` (:func:`jitopt.available_methods` lists them); ``evi``
(expected variational inequalities) and ``online_dca`` (stochastic difference-of-convex
problems) take their own problem types and are called directly.
"""

from .dc import online_dca
from ._evi_cg import ColumnGeneration
from ._evi_domains import EVIDomain
from ._evi_gap import evi_gap
from .evi import evi
from .rgd import rgd
from .rsdm import rsdm
from .serena import r_hybrid_sgd, r_sgd, r_srg, r_srm, r_srvrg, r_svrg, r_svrrm, srge

__all__ = ["rgd", "rsdm", "srge", "r_sgd", "r_svrg", "r_srg", "r_srm", "r_srvrg", "r_svrrm",
           "r_hybrid_sgd", "evi", "online_dca",
           "evi_gap", "EVIDomain", "ColumnGeneration"]
