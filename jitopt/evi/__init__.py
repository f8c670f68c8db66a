r"""Expected variational inequalities: the solver :func:`evi` (the regret loop of
Gordon–Greenwald–Marks and the ellipsoid against hope), its certificate :func:`evi_gap`,
the internal form of the domains :class:`EVIDomain` and the column generation
:class:`ColumnGeneration` (Zhang et al., *Expected variational inequalities*, ICML 2025).
:mod:`jitopt.solvers` offers the same names; the problem type is
:class:`jitopt.problems.VIProblem`, the games are in :mod:`jitopt.games`.
"""

from .._lazy import lazy_names

_NAMES = {"evi": "._evi", "evi_gap": "._gap", "EVIDomain": "._domains",
          "ColumnGeneration": "._cg"}

__all__ = list(_NAMES)
__getattr__, __dir__ = lazy_names(__name__, _NAMES)
