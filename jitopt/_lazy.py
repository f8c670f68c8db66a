"""Packages that import a public name's module on its first use (PEP 562), so that a call
loads only the modules it needs."""

import importlib
import sys

__all__ = ["lazy_names"]


def lazy_names(package, names):
    """The ``__getattr__`` and ``__dir__`` of the package named ``package`` whose public
    names are loaded on first access from the modules ``names[name]`` (relative to the
    package; a subpackage named ``.name`` is itself the value); the value is then kept in
    the package, so later accesses cost nothing."""

    def __getattr__(name):
        if name not in names:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = importlib.import_module(names[name], package)
        value = module if names[name] == f".{name}" else getattr(module, name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__():
        return sorted(set(vars(sys.modules[package])) | set(names))

    return __getattr__, __dir__
