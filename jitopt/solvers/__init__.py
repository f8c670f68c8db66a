"""Solvers: the loops of the methods, each registered under its name for
:func:`jitopt.minimize` and taking its problem type (:func:`jitopt.available_methods`
lists them, ``jitopt.available_methods(problem)`` those that take ``problem``).

``rgd``, ``rlbfgs``, ``rcg``, ``rtr``, ``rsdm`` and the SERENA family minimize over
manifolds; ``online_dca`` solves
stochastic difference-of-convex problems (:class:`jitopt.problems.DCProblem`) and ``evi``
expected variational inequalities (:class:`jitopt.problems.VIProblem`). The sparse and
barycenter methods live in :mod:`jitopt.sparse` and :mod:`jitopt.transport`.
"""

from .rgd import rgd
from .rlbfgs import rlbfgs
from .rcg import rcg
from .rtr import rtr
from .rsdm import rsdm
from .serena import r_hybrid_sgd, r_sgd, r_srg, r_srm, r_srvrg, r_svrg, r_svrrm, srge
from .dc import online_dca
from .evi import evi
from ._evi_cg import ColumnGeneration
from ._evi_domains import EVIDomain
from ._evi_gap import evi_gap

__all__ = ["rgd", "rlbfgs", "rcg", "rtr",
           "rsdm", "srge", "r_sgd", "r_svrg", "r_srg", "r_srm", "r_srvrg", "r_svrrm",
           "r_hybrid_sgd", "online_dca", "evi", "evi_gap", "EVIDomain", "ColumnGeneration"]
