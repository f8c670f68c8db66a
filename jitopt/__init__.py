"""jitopt: Numba-compiled solvers for recent optimization methods behind one problem/oracle
interface and a scipy-style :func:`minimize`.

The names below are loaded on first use (``import jitopt`` itself loads neither Numba nor
SciPy): ``jitopt.minimize``, ``from jitopt import Problem`` and ``jitopt.manifolds`` work as
usual, the first access paying the import of what it needs. A method's module is imported
when the method is first asked for, so that a call loads only the solver it runs.
"""

from ._lazy import lazy_names
from ._numba_cache import ensure_cache_dir, log_compilations

__version__ = "0.1.0"

ensure_cache_dir()  # a read-only install run by a user without a writable home
log_compilations()

#: public name -> the module that defines it
_NAMES = {
    "minimize": "._core.registry",
    "available_methods": "._core.registry",
    "get_method": "._core.registry",
    "Method": "._core.registry",
    "Problem": "._core.problem",
    "FiniteSumProblem": "._core.problem",
    "BaseProblem": "._core.problem",
    "OracleCounts": "._core.counts",
    "OptimizeResult": "._core.result",
    "Status": "._core.result",
    "OracleError": "._core.result",
    "NonFiniteOracle": "._core.result",
    "ConstrainedProblem": ".problems",
}

_PACKAGES = ("dc", "distributed", "evi", "games", "manifolds", "problems", "sets", "solvers",
             "sparse", "testing", "transport", "validation")

__all__ = list(_NAMES) + [p for p in _PACKAGES
                          if p not in ("distributed", "testing", "validation")]
__getattr__, __dir__ = lazy_names(__name__, {**_NAMES, **{p: f".{p}" for p in _PACKAGES}})
