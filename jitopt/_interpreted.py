"""Kernels run by the interpreter: the same code uncompiled, for calls too few or too cheap to
repay the seconds of a compile on first use."""

from types import FunctionType

__all__ = ["interpreted"]


def interpreted(*modules, **replace):
    """The namespace of ``modules`` with each of their kernels replaced by its Python
    function (``py_func``), rebound to this namespace so that the kernels call each other
    uncompiled: the same operations, run by the interpreter. ``replace`` gives other
    objects to some names of the namespace (a NumPy function for a compiled helper that
    another module holds)."""
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
