"""Kernels run by the interpreter: the same code uncompiled, for calls too few or too cheap to
repay the seconds of a compile on first use.

A kernel neither compiled in the process nor found in Numba's cache runs uncompiled for a
call of small work (:func:`kernel_for`) until the uncompiled calls of the process have
taken :data:`BUDGET` seconds of CPU in all; from then on it compiles, as a process that
keeps calling it repays the compile. The uncompiled code does the same operations in the
same order, so it returns the same values, bit for bit."""

import contextlib
import functools
import os
import sys
import time
from types import FunctionType, ModuleType

__all__ = ["always_compiled", "interpreted", "kernel_for"]

#: CPU seconds of uncompiled calls per process, after which kernels compile
BUDGET = 1.0
_spent = 0.0


def interpreted(*modules, **replace):
    """The namespace of ``modules`` (modules, or kernels standing for the modules that
    define them) with each of their kernels replaced by its Python function
    (``py_func``), rebound to this namespace so that the kernels call each other
    uncompiled: the same operations, run by the interpreter. ``replace`` gives other
    objects to some names of the namespace (a NumPy function for a compiled helper that
    another module holds)."""
    modules = [m if isinstance(m, ModuleType)
               else sys.modules[getattr(m, "py_func", m).__module__] for m in modules]
    names = {m.__name__ for m in modules}
    ns = {}
    for m in modules:
        ns.update(vars(m))
    ns.update(replace)
    for name, obj in list(ns.items()):
        f = getattr(obj, "py_func", None)
        if f is not None and f.__module__ in names:
            ns[name] = FunctionType(f.__code__, ns, f.__name__, f.__defaults__, f.__closure__)
    return ns


def kernel_for(kernel, namespace, small):
    """``kernel``, or its code uncompiled (``namespace[kernel.__name__]``, its CPU time
    counted against :data:`BUDGET`) for a ``small`` call while the budget lasts and the
    kernel is neither compiled in this process nor in Numba's cache (a plain function
    when the JIT is disabled: itself)."""
    if (not small or not hasattr(kernel, "py_func") or kernel.overloads
            or _spent >= BUDGET or in_cache(kernel)):
        return kernel
    return functools.partial(_timed, namespace[kernel.__name__])


@contextlib.contextmanager
def always_compiled():
    """Within this context every kernel runs compiled (to fill Numba's cache)."""
    global BUDGET
    budget, BUDGET = BUDGET, 0.0
    try:
        yield
    finally:
        BUDGET = budget


def _timed(function, *args):
    """``function(*args)``, its CPU time added to the budget's account."""
    global _spent
    start = time.process_time()
    try:
        return function(*args)
    finally:
        _spent += time.process_time() - start


def in_cache(kernel):
    """Whether Numba's cache holds ``kernel`` from an earlier process (its index file): then
    a call loads it rather than compiles it."""
    index = getattr(getattr(getattr(kernel, "_cache", None), "_cache_file", None),
                    "_index_path", None)
    return index is not None and os.path.exists(index)
