"""The compiled specialisations of jitopt's kernels after a task run in a fresh process."""

import ast
import os
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


def specialisations(task, cache_dir=None):
    """``{kernel: number of specialisations}`` of every kernel that the Python code ``task``
    compiled or loaded from Numba's cache, run in a fresh interpreter (with Numba's cache in
    ``cache_dir``: an empty folder compiles every kernel, the ones called only from other
    kernels too, which a kernel loaded from the cache does not)."""
    env = dict(os.environ, **({"NUMBA_CACHE_DIR": str(cache_dir)} if cache_dir else {}))
    out = subprocess.run([sys.executable, "-c", _SCRIPT.format(task=task)],
                         capture_output=True, text=True, check=True, env=env)
    return ast.literal_eval(out.stdout.strip().splitlines()[-1])


def assert_compiled_once(task, reached, cache_dir=None):
    """The kernels that ``task`` runs in a fresh interpreter include one named with
    ``reached``, and each has one specialisation (a kernel reached by arrays of two types --
    layout, read-only, dtype -- or by a literal argument compiles twice on a first call).
    Returns the kernels' names."""
    counts = specialisations(task, cache_dir)
    assert any(reached in name for name in counts), counts
    assert all(n == 1 for n in counts.values()), counts
    return set(counts)
