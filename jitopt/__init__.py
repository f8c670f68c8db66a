"""jitopt: Numba-compiled solvers for recent optimization methods behind one problem/oracle
interface and a scipy-style :func:`minimize`.

The names below are loaded on first use (``import jitopt`` itself loads neither Numba nor
SciPy): ``jitopt.minimize``, ``from jitopt import Problem`` and ``jitopt.manifolds`` work as
usual, the first access paying the import of what it needs. The registry functions
(:func:`minimize`, :func:`available_methods`, :func:`get_method`) load every package that
registers methods, so that all methods are known to them.
"""

import importlib

from ._numba_cache import ensure_cache_dir

__version__ = "0.1.0"

ensure_cache_dir()  # a read-only install run by a user without a writable home

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
}

_PACKAGES = ("distributed", "games", "manifolds", "problems", "sets", "solvers", "sparse",
             "testing", "transport", "validation")

#: the packages whose modules register methods
_METHOD_PACKAGES = (".solvers", ".sparse", ".transport")

__all__ = list(_NAMES) + [p for p in _PACKAGES
                          if p not in ("distributed", "testing", "validation")]


def __getattr__(name):
    if name in _PACKAGES:
        return importlib.import_module(f".{name}", __name__)
    if name not in _NAMES:
        raise AttributeError(f"module 'jitopt' has no attribute {name!r}")
    if _NAMES[name] == "._core.registry":
        for package in _METHOD_PACKAGES:
            importlib.import_module(package, __name__)
    value = getattr(importlib.import_module(_NAMES[name], __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_NAMES) | set(_PACKAGES))
