r"""The online adaptive-sampling proximal DCA for stochastic nonsmooth difference-of-convex
problems (:func:`online_dca`, also in :mod:`jitopt.solvers`), its proximal subproblem
solvers (:class:`ProxSubproblem`) and its sample-size rules (:func:`adaptive_sizes`,
:func:`norm_test_sizes`, :func:`half_variance`). The problem types are in
:mod:`jitopt.problems`.
"""

from .._lazy import lazy_names

_NAMES = {"online_dca": "._online", "ProxSubproblem": "._subproblem",
          "adaptive_sizes": "._online", "norm_test_sizes": "._online",
          "half_variance": "._online"}

__all__ = list(_NAMES)
__getattr__, __dir__ = lazy_names(__name__, _NAMES)
