"""The first answer: each method's task in fresh processes, cold (an empty Numba cache) and
warm, against the peer library end to end.

A user meets jitopt in a fresh process: a script run once, a notebook, a CI job, a Docker
image, a cluster's worker. Each task here is a whole ``python -c`` process timed from the
outside (interpreter start, imports, compilation or cache loads, the solve):

- cold: ``NUMBA_CACHE_DIR`` an empty folder (a new one for each repeat);
- warm: the same folder again, filled by a first run;
- peer: the library a user would otherwise pick, for the same task, end to end.

The cold runs also report the specialisations Numba compiled (jitopt's own and Numba's
internal ones) and the slowest compilations (Numba's ``"numba:compile"`` events; times are
inclusive of the kernels compiled on the way). Targets (issue "first answer"): cold at most
5 s per method, the tour at most 30 s, warm at most 1.5 times the peer + 0.3 s.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from ._common import print_table

#: name -> (jitopt's code, the peer's name, the peer's code or None)
TASKS = {
    "minimize, quadratic (20)": ("""
import numpy as np, jitopt
A = np.diag(np.arange(1.0, 21.0)); b = np.ones(20)
res = jitopt.minimize(lambda x: 0.5 * x @ A @ x - b @ x, np.zeros(20), jac=lambda x: A @ x - b)
assert res.success and np.abs(res.x - b / np.diag(A)).max() < 1e-6
""", "scipy BFGS", """
import numpy as np
from scipy.optimize import minimize
A = np.diag(np.arange(1.0, 21.0)); b = np.ones(20)
res = minimize(lambda x: 0.5 * x @ A @ x - b @ x, np.zeros(20), jac=lambda x: A @ x - b,
               method="BFGS")
assert np.abs(res.x - b / np.diag(A)).max() < 1e-5
"""),
    "Rayleigh quotient, Stiefel(100, 3)": ("""
import numpy as np, jitopt
from jitopt.manifolds import Stiefel
rng = np.random.default_rng(0)
B = rng.standard_normal((100, 100)); A = (B + B.T) / 2
M = Stiefel(100, 3)
problem = jitopt.Problem(M, lambda X: -np.sum(X * (A @ X)), lambda X: -2 * A @ X)
res = jitopt.minimize(problem, M.random_point(rng=1), tol=1e-6)
assert res.success and abs(res.fun + np.linalg.eigvalsh(A)[-3:].sum()) < 1e-8
""", "pymanopt CG", """
import numpy as np, pymanopt
from pymanopt.manifolds import Stiefel
from pymanopt.optimizers import ConjugateGradient
rng = np.random.default_rng(0)
B = rng.standard_normal((100, 100)); A = (B + B.T) / 2
M = Stiefel(100, 3)
@pymanopt.function.numpy(M)
def cost(X): return -np.sum(X * (A @ X))
@pymanopt.function.numpy(M)
def egrad(X): return -2 * A @ X
res = ConjugateGradient(verbosity=0).run(pymanopt.Problem(M, cost, euclidean_gradient=egrad))
assert abs(res.cost + np.linalg.eigvalsh(A)[-3:].sum()) < 1e-4
"""),
    "rgd, PCA Stiefel(200, 5)": ("""
from jitopt import tour
assert tour.rgd()[3] < 1e-10
""", None, None),
    "rlbfgs/rcg/rtr, Procrustes": ("""
from jitopt import tour
assert tour.riemannian()[3] < 1e-10
""", None, None),
    "rsdm, linear cost SO(60)": ("""
from jitopt import tour
assert tour.rsdm()[3] < 1e-10
""", None, None),
    "r_srvrg, PCA sum 2000 x 20": ("""
from jitopt import tour
assert tour.serena()[3] < 1e-6
""", None, None),
    "IHTRegressor(5), diabetes": ("""
import numpy as np
from sklearn.datasets import load_diabetes
from jitopt.sparse import IHTRegressor
X, y = load_diabetes(return_X_y=True)
model = IHTRegressor(5).fit(X, y)
assert np.count_nonzero(model.coef_) == 5
""", "abess", """
import numpy as np
from sklearn.datasets import load_diabetes
from abess import LinearRegression
X, y = load_diabetes(return_X_y=True)
model = LinearRegression(support_size=5).fit(X, y)
assert np.count_nonzero(model.coef_) == 5
"""),
    "IHTRegressorCV(), 300 x 2000": ("""
import numpy as np
from jitopt.sparse import IHTRegressorCV
rng = np.random.default_rng(0)
X = rng.standard_normal((300, 2000))
beta = np.zeros(2000); beta[rng.choice(2000, 10, replace=False)] = rng.uniform(1, 2, 10)
y = X @ beta + 0.5 * rng.standard_normal(300)
model = IHTRegressorCV().fit(X, y)
assert set(np.flatnonzero(beta)) <= set(np.flatnonzero(model.coef_))  # (all found)
""", "abess cv=5", """
import numpy as np
from abess import LinearRegression
rng = np.random.default_rng(0)
X = rng.standard_normal((300, 2000))
beta = np.zeros(2000); beta[rng.choice(2000, 10, replace=False)] = rng.uniform(1, 2, 10)
y = X @ beta + 0.5 * rng.standard_normal(300)
model = LinearRegression(cv=5).fit(X, y)
assert set(np.flatnonzero(beta)) <= set(np.flatnonzero(model.coef_))  # (all found)
"""),
    "wdha_barycenter, four 64x64 disks": ("""
import numpy as np
from jitopt.transport import grid_coordinates, wdha_barycenter
y, x = grid_coordinates((64, 64))
A = np.array([((y - a) ** 2 + (x - b) ** 2 <= 0.01) * 1.0
              for a, b in [(0.3, 0.3), (0.7, 0.35), (0.35, 0.7), (0.7, 0.7)]])
A /= A.sum(axis=(1, 2), keepdims=True)
bary = wdha_barycenter(A)
assert abs(bary.sum() - 1) < 1e-9
""", "POT convolutional", """
import numpy as np, ot
n = 64
y, x = np.meshgrid((np.arange(n) + 0.5) / n, (np.arange(n) + 0.5) / n, indexing="ij")
A = np.array([((y - a) ** 2 + (x - b) ** 2 <= 0.01) * 1.0
              for a, b in [(0.3, 0.3), (0.7, 0.35), (0.35, 0.7), (0.7, 0.7)]])
A /= A.sum(axis=(1, 2), keepdims=True)
bary = ot.bregman.convolutional_barycenter2d(A, reg=0.004)
assert abs(bary.sum() - 1) < 1e-6
"""),
    "wdha_barycenter, two 32x32x32 balls": ("""
import numpy as np
from jitopt.transport import grid_coordinates, wdha_barycenter
y, x, z = grid_coordinates((32, 32, 32))
A = np.array([((y - a) ** 2 + (x - b) ** 2 + (z - c) ** 2 <= 0.04) * 1.0
              for a, b, c in [(0.35, 0.40, 0.38), (0.62, 0.58, 0.60)]])
bary = wdha_barycenter(A)
assert abs(bary.sum() - 1) < 1e-9
""", None, None),
    "correlated equilibrium, RPS": ("""
import numpy as np
from jitopt.games import NormalFormGame
A = np.array([[0.0, -1.0, 1.0], [1.0, 0.0, -1.0], [-1.0, 1.0, 0.0]])
res = NormalFormGame([A, -A]).correlated_equilibrium(tol=1e-4, rng=0)
assert res.success and res.gap <= 1e-4
""", "cvxpy LP", """
import itertools
import numpy as np, cvxpy as cp
A = np.array([[0.0, -1.0, 1.0], [1.0, 0.0, -1.0], [-1.0, 1.0, 0.0]])
p = cp.Variable((3, 3), nonneg=True)
cons = [cp.sum(p) == 1]
for a, b in itertools.permutations(range(3), 2):
    cons.append(cp.sum(cp.multiply(p[a, :], A[b, :] - A[a, :])) <= 0)
    cons.append(cp.sum(cp.multiply(p[:, a], A[:, a] - A[:, b])) <= 0)
cp.Problem(cp.Maximize(0), cons).solve()
assert p.value is not None
"""),
    "online_dca, drifting regression": ("""
from jitopt import tour
assert tour.dc()[3] < 1e-2
""", None, None),
}

#: runs first in each jitopt process: Numba's compile events, summed per function
_PROFILE = """
import atexit, json, time
from numba.core import event
_stack, _times, _count, _total = [], {}, {}, [0.0]
class _Listener(event.Listener):
    def on_start(self, ev):
        _stack.append(time.perf_counter())
    def on_end(self, ev):
        f = ev.data["dispatcher"].py_func
        name = f"{f.__module__}.{f.__qualname__}"
        seconds = time.perf_counter() - _stack.pop()
        _times[name] = _times.get(name, 0.0) + seconds
        _count[name] = _count.get(name, 0) + 1
        if not _stack:
            _total[0] += seconds
event.register("numba:compile", _Listener())
def _report():
    with open(__PATH__, "w") as out:
        json.dump({"times": _times, "count": _count, "total": _total[0]}, out)
atexit.register(_report)
"""


def run_process(code, cache_dir, profile=False):
    """Seconds of ``python -c code`` end to end, and its compile profile (or None)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    path = os.path.join(cache_dir, "compile-profile.json")
    prelude = _PROFILE.replace("__PATH__", repr(path)) if profile else ""
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", prelude + code], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    seconds = time.perf_counter() - t0
    if not profile:
        return seconds, None
    with open(path) as f:
        return seconds, json.load(f)


def measure(code, repeats):
    """Cold and warm medians (seconds) and the profile of the last cold run."""
    cold, warm, profile = [], [], None
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as cache:
            seconds, profile = run_process(code, cache, profile=True)
            cold.append(seconds)
    with tempfile.TemporaryDirectory() as cache:
        run_process(code, cache)
        warm = [run_process(code, cache)[0] for _ in range(repeats)]
    return statistics.median(cold), statistics.median(warm), profile


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks first_answer",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="runs per figure (median)")
    parser.add_argument("--tasks", help="comma-separated substrings of the task names")
    parser.add_argument("--no-tour", action="store_true",
                        help="skip the cold run of python -m jitopt")
    args = parser.parse_args(argv)
    chosen = [name for name in TASKS if not args.tasks
              or any(part.strip().lower() in name.lower() for part in args.tasks.split(","))]

    rows, slowest = [], []
    for name in chosen:
        code, peer, peer_code = TASKS[name]
        cold, warm, profile = measure(code, args.repeats)
        peer_time = None
        if peer_code is not None:
            with tempfile.TemporaryDirectory() as cache:
                peer_time = statistics.median(run_process(peer_code, cache)[0]
                                              for _ in range(args.repeats))
        ours = {k: v for k, v in profile["count"].items() if k.startswith("jitopt")}
        target = None if peer_time is None else 1.5 * peer_time + 0.3
        rows.append((name, cold, profile["total"], warm, peer or None, peer_time,
                     None if peer_time is None else warm / peer_time,
                     "yes" if cold <= 5 and (target is None or warm <= target) else "no",
                     len(ours), sum(ours.values()), sum(profile["count"].values())))
        slowest.append((name, sorted(profile["times"].items(), key=lambda kv: -kv[1])[:10]))
        print(f"  measured {name}", flush=True)

    print("\nFresh processes, end to end (s), median of", args.repeats)
    print_table([("task", ""), ("cold", ".2f"), ("compiling", ".2f"), ("warm", ".2f"),
                 ("peer", ""),
                 ("peer (s)", ".2f"), ("warm/peer", ".2f"), ("targets met", ""),
                 ("kernels", "d"), ("their specs", "d"), ("all specs", "d")], rows)
    print("\n'compiling': the cold run's time in Numba's compiler; 'kernels': jitopt kernels "
          "compiled cold; 'their specs': their specialisations; 'all specs': with Numba's "
          "internal ones. Targets: cold <= 5 s, warm <= 1.5 x peer + 0.3 s.")
    print("\nThe ten slowest compilations of each cold run (s, inclusive of the functions "
          "they compile on the way):")
    for name, top in slowest:
        print(f"\n{name}")
        for func, seconds in top:
            print(f"  {seconds:6.2f}  {func}")

    if not args.no_tour and not args.tasks:
        with tempfile.TemporaryDirectory() as cache:
            seconds = run_process("import jitopt.__main__ as m; m.main([])", cache)[0]
        print(f"\npython -m jitopt with an empty cache: {seconds:.1f} s (target 30 s)")
