"""jitopt: Numba-compiled solvers for recent optimization methods behind one problem/oracle
interface and a scipy-style :func:`minimize`."""

from . import games, manifolds, problems, sets, solvers, sparse, transport
from ._core.problem import FiniteSumProblem, OracleCounts, Problem
from ._core.registry import Method, available_methods, get_method, minimize
from ._core.result import OptimizeResult, Status

__version__ = "0.1.0"

__all__ = [
    "minimize",
    "Problem",
    "FiniteSumProblem",
    "OracleCounts",
    "OptimizeResult",
    "Status",
    "Method",
    "available_methods",
    "get_method",
    "games",
    "manifolds",
    "problems",
    "sets",
    "solvers",
    "sparse",
    "transport",
]
