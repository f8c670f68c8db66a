"""The public API's docstrings, checked with numpydoc's validator.

The public API is every function and class named in the ``__all__`` of ``jitopt`` and of
its packages. Each must have a docstring with a Parameters section matching its signature,
a Returns section (functions) and an Examples section (run as a doctest by pytest's
``--doctest-modules``).
"""

import enum
import importlib
import inspect

import numpydoc.validate as numpydoc_validate  # numpydoc is in the test extra
import pytest
from numpydoc.docscrape import get_doc_object

PACKAGES = ("jitopt", "jitopt.distributed", "jitopt.games", "jitopt.manifolds", "jitopt.problems", "jitopt.sets",
            "jitopt.solvers", "jitopt.sparse", "jitopt.testing", "jitopt.transport",
            "jitopt.validation")

# GL08 no docstring; PR01 a parameter not documented; PR02 a documented parameter not in
# the signature; RT01 no Returns section; YD01 no Yields section; EX01 no Examples section.
CHECKS = ("GL08", "PR01", "PR02", "RT01", "YD01", "EX01")

def public_api():
    """Every public function and class, once, by the first name it is exported under."""
    found = {}
    for package in PACKAGES:
        module = importlib.import_module(package)
        for name in module.__all__:
            obj = getattr(module, name)
            if name.startswith("_") or inspect.ismodule(obj) or not callable(obj):
                continue
            found.setdefault(id(obj), (f"{package}.{name}", obj))
    return sorted(found.values(), key=lambda item: item[0])


API = public_api()


def problems(obj):
    """The numpydoc errors of ``obj`` among the CHECKS, as ``"CODE message"`` strings."""
    errors = numpydoc_validate.validate(get_doc_object(obj))["errors"]
    if inspect.isclass(obj) and issubclass(obj, enum.Enum):
        # An Enum's signature is Enum's own call, not its members: no Parameters.
        errors = [e for e in errors if e[0] not in ("PR01", "PR02")]
    return [f"{code} {message}" for code, message in errors if code in CHECKS]


def test_the_api_is_collected():
    names = {name for name, _ in API}
    assert {"jitopt.minimize", "jitopt.solvers.srge", "jitopt.sparse.iht",
            "jitopt.sets.Box", "jitopt.OptimizeResult"} <= names
    assert len(names) > 80


@pytest.mark.parametrize("name, obj", API, ids=[name for name, _ in API])
def test_docstring(name, obj):
    found = problems(obj)
    assert not found, f"{name}: " + "; ".join(found)


def test_the_validator_flags_a_bare_function():
    def undocumented(x, y=1):
        """Add."""
        return x + y

    codes = {p.split()[0] for p in problems(undocumented)}
    assert {"PR01", "RT01", "EX01"} <= codes


def test_every_method_describes_the_common_options_with_the_shared_text():
    import jitopt
    from jitopt._core.docs import common_options

    heads = [line for line in common_options().splitlines() if not line.startswith(" " * 8)]
    for name in jitopt.available_methods():
        doc = jitopt.get_method(name).__doc__
        assert "{common options}" not in doc, name
        assert all(head in doc.splitlines() for head in heads), name
        text = " ".join(doc.split())
        assert "else ``callback(xk)``; raise :class:`StopIteration` to stop" in text, name
        assert "the common columns ``iteration, time, fun, stationarity, nfev" in text, name


def test_a_method_without_the_common_options_line_is_refused():
    from jitopt._core.docs import fill_common_options

    with pytest.raises(ValueError, match="'mine'.*common options"):
        fill_common_options("Solve.\n\n    Parameters\n    ----------\n", "mine")
    filled = fill_common_options("    x : int\n        X.\n    {common options}\n", "mine",
                                 unit="sweep", rng="Unused.")
    assert "Record a row per sweep" in filled and filled.endswith("        Unused.\n")
