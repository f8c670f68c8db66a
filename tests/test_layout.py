"""The architecture, checked from the sources: the import graph of the package has no cycle
(between modules, and between packages), dependencies point one way (problems never import
solvers, validation is a leaf), modules stay small, and ``import jitopt`` leaves the heavy
optional libraries unloaded."""

import ast
import importlib.util
import pathlib
import subprocess
import sys

import pytest

import jitopt

ROOT = pathlib.Path(jitopt.__file__).parent


def module_name(path):
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in ROOT.rglob("*.py")}


def is_package(name):
    return MODULES.get(name) is not None and MODULES[name].name == "__init__.py"


def lazy_targets(node, package):
    """The modules named by a package's table of lazily loaded names (``_NAMES = {name:
    ".module"}``, read by ``jitopt._lazy.lazy_names``): imports made on first access."""
    if not (isinstance(node, ast.Assign) and any(getattr(t, "id", None) in ("_NAMES", "_SHARED")
                                                 for t in node.targets)):
        return []
    return [importlib.util.resolve_name(c.value, package) for c in ast.walk(node.value)
            if isinstance(c, ast.Constant) and isinstance(c.value, str)
            and c.value.startswith(".")]


def imported(name):
    """The jitopt modules that module ``name`` imports anywhere (function bodies too, and
    the lazily loaded names of a package)."""
    path = MODULES[name]
    package = name if is_package(name) else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if lazy_targets(node, package):
            targets = lazy_targets(node, package)
        elif isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            # "from package import module" imports the module; other names, the package
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base
                       for a in node.names]
        else:
            continue
        out.update(t for t in targets if t.split(".")[0] == "jitopt" and t != name)
    return out


GRAPH = {name: imported(name) for name in MODULES}


def find_cycle(graph):
    """A cycle of ``graph`` as a list of nodes, or None (depth-first search)."""
    state = {}

    def visit(node, path):
        state[node] = "open"
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt, path + [nxt])
                if found:
                    return found
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node, [node])
            if found:
                return found
    return None


def unit(name):
    """The part of the package a module belongs to: ``jitopt.X`` for ``jitopt.X.Y``."""
    return ".".join(name.split(".")[:2])


def test_the_graph_sees_the_imports():
    assert "jitopt._core.result" in GRAPH["jitopt._core.registry"]
    assert "jitopt.solvers._rgd" in GRAPH["jitopt.solvers"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycle_between_modules():
    assert find_cycle(GRAPH) is None


def test_no_import_cycle_between_packages():
    packages = {}
    for name, targets in GRAPH.items():
        if name == "jitopt":
            continue  # the root imports every package to build the public front
        packages.setdefault(unit(name), set()).update(
            unit(t) for t in targets if unit(t) != unit(name) and t != "jitopt")
    assert find_cycle(packages) is None


@pytest.mark.parametrize("lower, higher", [
    ("jitopt.problems", ("jitopt.solvers", "jitopt.evi", "jitopt.dc", "jitopt.sparse",
                         "jitopt.transport", "jitopt.games", "jitopt.tour",
                         "jitopt.distributed")),
    ("jitopt.manifolds", ("jitopt._core", "jitopt.problems", "jitopt.solvers")),
    ("jitopt.sets", ("jitopt._core", "jitopt.problems", "jitopt.solvers")),
    ("jitopt._core", ("jitopt.problems", "jitopt.solvers", "jitopt.evi", "jitopt.dc",
                      "jitopt.sparse", "jitopt.transport", "jitopt.games",
                      "jitopt.distributed")),
    ("jitopt.solvers", ("jitopt.sparse", "jitopt.transport", "jitopt.games",
                        "jitopt.tour", "jitopt.distributed")),
    ("jitopt.evi", ("jitopt.solvers", "jitopt.sparse", "jitopt.transport", "jitopt.games",
                    "jitopt.tour", "jitopt.distributed")),
    ("jitopt.dc", ("jitopt.solvers", "jitopt.sparse", "jitopt.transport", "jitopt.games",
                   "jitopt.tour", "jitopt.distributed")),
    ("jitopt.distributed", ("jitopt.solvers", "jitopt.sparse", "jitopt.transport",
                            "jitopt.games", "jitopt.tour")),
])
def test_dependencies_point_one_way(lower, higher):
    for name, targets in GRAPH.items():
        if unit(name) == lower:
            bad = sorted(t for t in targets if unit(t) in higher)
            assert not bad, f"{name} imports {bad}"


def test_each_method_module_registers_its_methods():
    # the registry imports a method's module by name when the method is first asked for
    # (METHOD_MODULES): a lookup, not an import edge, so it is checked here instead
    from jitopt._core import registry

    for name, module in registry.METHOD_MODULES.items():
        assert module in MODULES, name
        method = jitopt.get_method(name)
        assert method.solver.__module__ == module, (name, method.solver.__module__)
    assert set(registry._METHODS) == set(registry.METHOD_MODULES)


def test_validation_is_a_leaf():
    assert GRAPH["jitopt.validation"] == set()


def test_nothing_imports_the_tour_but_the_entry_point():
    users = sorted(n for n, t in GRAPH.items() if "jitopt.tour" in t)
    assert users == ["jitopt.__main__"]


def test_modules_stay_small():
    sizes = {name: len(path.read_text().splitlines()) for name, path in MODULES.items()}
    assert max(sizes.values()) <= 550, sorted(sizes.items(), key=lambda kv: -kv[1])[:3]


def test_import_leaves_heavy_optional_libraries_unloaded():
    heavy = ("cvxpy", "highspy", "sklearn", "abess", "ot", "pymanopt", "matplotlib", "jax",
             "dask", "distributed")
    code = ("import sys, jitopt; "
            f"print(','.join(m for m in {heavy!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == ""


def test_the_distributed_package_imports_without_dask():
    # its modules import Dask only when a problem is built, so that the API is documented
    # and the error names the extra to install when Dask is missing
    code = ("import sys, jitopt.distributed; "
            "print(','.join(m for m in ('dask', 'distributed') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == ""


def private_imports():
    """``(importer, what)`` for every import of another part's private module or name:
    ``from jitopt.X._m import f`` or ``from jitopt.X import _f`` in a module outside
    ``jitopt.X``; a part offers what the others use on its face (its ``__init__``)."""
    found = []
    for name, path in MODULES.items():
        package = name if is_package(name) else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.ImportFrom):
                continue
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            if not base.startswith("jitopt") or unit(base) == unit(name):
                continue
            inner = base.split(".")[2:] + [a.name for a in node.names]
            bad = [part for part in inner if part.startswith("_") and not part.startswith("__")]
            if bad:
                found.append((name, f"{base}: {', '.join(a.name for a in node.names)}"))
    return found


def test_parts_use_each_other_through_their_faces():
    assert not private_imports(), private_imports()


def code_lines(function, comment_or_blank):
    """Lines of code of a function from the first statement after its docstring to its end,
    without blank and comment lines."""
    body = function.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    if not body:
        return 0
    return sum(1 for i in range(body[0].lineno, function.end_lineno + 1)
               if i not in comment_or_blank)


def test_functions_stay_short():
    long = []
    for name, path in MODULES.items():
        source = path.read_text()
        skip = {i for i, line in enumerate(source.splitlines(), 1)
                if not line.strip() or line.strip().startswith("#")}
        for node in ast.walk(ast.parse(source, str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = code_lines(node, skip)
                if n > 80:
                    long.append((n, f"{name}.{node.name}"))
    assert not long, sorted(long, reverse=True)
