"""Entry point: ``python -m benchmarks`` lists the benchmarks and
``python -m benchmarks <name> [args...]`` runs ``main(args)`` of ``benchmarks/<name>.py``."""

import ast
import importlib
import pkgutil
import sys
from pathlib import Path

from jitopt._interpreted import always_compiled

from . import environment_report

HERE = Path(__file__).resolve().parent


def available():
    """``{name: summary}`` of the modules ``benchmarks/<name>.py``; the summary is the
    first paragraph of the module docstring, joined into one line."""
    out = {}
    for info in pkgutil.iter_modules([str(HERE)]):
        if info.name.startswith("_") or info.ispkg:
            continue
        source = (HERE / f"{info.name}.py").read_text(encoding="utf-8")
        doc = (ast.get_docstring(ast.parse(source)) or "").strip()
        out[info.name] = " ".join(doc.split("\n\n")[0].split())  # first paragraph
    return dict(sorted(out.items()))


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    benches = available()
    if not argv or argv[0] in ("-h", "--help", "list"):
        print("usage: python -m benchmarks <name> [args...]   (<name> --help for its options)")
        print("\navailable benchmarks:")
        width = max((len(n) for n in benches), default=0)
        for name, doc in benches.items():
            print(f"  {name:<{width}}  {doc}")
        return 0
    name, args = argv[0], argv[1:]
    if name not in benches:
        print(f"unknown benchmark {name!r}; available: {', '.join(benches) or 'none'}",
              file=sys.stderr)
        return 2
    environment_report()
    print()
    module = importlib.import_module(f"{__package__}.{name}")
    # the steady state: no kernel runs uncompiled, so that the warm-ups compile what the
    # timed runs use (a first answer is measured in fresh processes of its own)
    with always_compiled():
        return module.main(args) or 0


if __name__ == "__main__":
    sys.exit(main())
