"""Solvers: the loops of the methods, each registered under its name for
:func:`jitopt.minimize` and taking its problem type (:func:`jitopt.available_methods`
lists them, ``jitopt.available_methods(problem)`` those that take ``problem``).

``rgd``, ``rlbfgs``, ``rcg``, ``rtr``, ``rsdm`` and the SERENA family minimize over
manifolds; ``online_dca`` solves stochastic difference-of-convex problems
(:class:`jitopt.problems.DCProblem`; it lives in ``jitopt.dc``) and ``evi`` expected
variational inequalities (:class:`jitopt.problems.VIProblem`; it lives in ``jitopt.evi``);
``ralm`` and ``repm`` minimize over manifolds with constraints
(:class:`jitopt.ConstrainedProblem <jitopt.problems.ConstrainedProblem>`); ``nelder_mead``
and ``particle_swarm`` minimize over manifolds from the cost alone (derivative-free). The
sparse and barycenter methods live in :mod:`jitopt.sparse` and :mod:`jitopt.transport`.
"""

from .._lazy import lazy_names

_NAMES = {
    "rgd": "._rgd", "rlbfgs": "._rlbfgs", "rcg": "._rcg", "rtr": "._rtr",
    "rsdm": "._rsdm", "block_gradient": "._rsdm_kernels", "exact_block": "._rsdm_kernels",
    "haar_frame": "._rsdm_kernels",
    **{name: ".serena" for name in ("srge", "r_sgd", "r_svrg", "r_srg", "r_srm", "r_srvrg",
                                     "r_svrrm", "r_hybrid_sgd")},
    "online_dca": "..dc",
    **{name: "..evi" for name in ("evi", "evi_gap", "EVIDomain", "ColumnGeneration")},
    "nelder_mead": "._nelder_mead", "particle_swarm": "._particle_swarm",
    "ralm": "._ralm", "repm": "._repm",
}

#: RSDM's compiled block steps, documented as building blocks (docs/api/solvers.rst)
_BLOCKS = ("block_gradient", "exact_block", "haar_frame")

__all__ = [name for name in _NAMES if name not in _BLOCKS]
__getattr__, __dir__ = lazy_names(__name__, _NAMES)
