"""The compiled specialisations of jitopt's kernels after a task run in a fresh process."""

import ast
import subprocess
import sys

_SCRIPT = """
import sys
from numba.core.dispatcher import Dispatcher
{task}
counts = {{}}
for name, module in list(sys.modules.items()):
    if name.startswith("jitopt."):
        for key, obj in vars(module).items():
            if isinstance(obj, Dispatcher) and obj.signatures:
                counts[name + "." + key] = len(obj.signatures)
print(repr(counts))
"""


def specialisations(task):
    """``{kernel: number of specialisations}`` of every kernel that the Python code ``task``
    compiled or loaded from Numba's cache, run in a fresh interpreter."""
    out = subprocess.run([sys.executable, "-c", _SCRIPT.format(task=task)],
                         capture_output=True, text=True, check=True)
    return ast.literal_eval(out.stdout.strip().splitlines()[-1])


def assert_compiled_once(task, reached):
    """The kernels that ``task`` runs in a fresh interpreter include one named with
    ``reached``, and each has one specialisation (a kernel reached by arrays of two types --
    layout, read-only, dtype -- or by a literal argument compiles twice on a first call)."""
    counts = specialisations(task)
    assert any(reached in name for name in counts), counts
    assert all(n == 1 for n in counts.values()), counts
