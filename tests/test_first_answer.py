"""What a user meets first, kept from coming back: a first call imports only what it needs,
each kernel on the tour's path compiles once per task, the compile log and the command that
prepares the cache work."""

import json
import os
import subprocess
import sys

import pytest

import jitopt
from jitopt.__main__ import compile_kernels
from jitopt.tour import ENTRY_OF, TOUR


def run_python(code, cache_dir=None):
    """The lines ``python -c code`` prints (its stdout and stderr), in a fresh process with
    Numba's cache in ``cache_dir`` (by default the one of this process)."""
    env = dict(os.environ, **({"NUMBA_CACHE_DIR": str(cache_dir)} if cache_dir else {}))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=env)
    return out.stdout.strip().splitlines(), out.stderr.strip().splitlines()


#: what a smooth problem solved by minimize's default never needs
NOT_NEEDED = ("scipy.optimize", "cvxpy", "highspy", "sklearn", "matplotlib", "jax", "dask",
              "jitopt.sparse", "jitopt.transport", "jitopt.games", "jitopt.distributed",
              "jitopt.problems", "jitopt.solvers.serena", "jitopt.evi._evi",
              "jitopt.dc._online", "jitopt.solvers._rgd", "jitopt.solvers._rsdm")


@pytest.mark.parametrize("setup, call", [
    ("import numpy as np; A = np.diag(np.arange(1.0, 6.0))",
     "jitopt.minimize(lambda x: 0.5 * x @ A @ x - x.sum(), np.zeros(5), jac=lambda x: A @ x - 1)"),
    ("import numpy as np; from jitopt.manifolds import Stiefel; A = np.diag(np.arange(8.0)); "
     "M = Stiefel(8, 2); p = jitopt.Problem(M, lambda X: -np.sum(X * (A @ X)), "
     "lambda X: -2 * A @ X)",
     "jitopt.minimize(p, M.random_point(rng=0))"),
], ids=["euclidean", "stiefel"])
def test_a_first_minimize_imports_only_what_it_runs(setup, call):
    code = (f"import sys, jitopt; {setup}; res = {call}; print(res.success); "
            f"print(','.join(m for m in {NOT_NEEDED!r} if m in sys.modules))")
    success, loaded = (run_python(code)[0] + [""])[:2]
    assert success == "True"
    assert loaded == ""


def test_each_kernel_compiles_once_per_tour_entry():
    # the number of specialisations each jitopt kernel gains while one tour entry runs
    # (compiled or loaded from the cache alike): a second one means that some argument
    # reaches it with another type (layout, dtype, read-only flag) and compiles twice
    code = """
import json, sys
from numba.core.dispatcher import Dispatcher
from jitopt.tour import TOUR

def counts():
    found = {}
    for name, module in list(sys.modules.items()):
        if name.startswith("jitopt") and module is not None:
            for obj in vars(module).values():
                if isinstance(obj, Dispatcher):
                    f = obj.py_func
                    found[f"{f.__module__}.{f.__qualname__}"] = len(obj.overloads)
    return found

out = {}
for entry in TOUR:
    before = counts()
    entry()
    after = counts()
    out[entry.__name__] = {k: n - before.get(k, 0) for k, n in after.items()
                           if n - before.get(k, 0) > 1}
print(json.dumps(out))
"""
    twice = json.loads(run_python(code)[0][-1])
    assert set(twice) == {entry.__name__ for entry in TOUR}
    assert twice == {name: {} for name in twice}


def test_every_method_has_an_entry_that_compiles_it():
    assert set(ENTRY_OF) == set(jitopt.available_methods())
    assert set(ENTRY_OF.values()) <= set(TOUR)


def test_compile_command_checks_its_methods():
    with pytest.raises(ValueError, match="unknown methods nope"):
        compile_kernels(["rgd", "nope"])


def test_compile_command_fills_the_cache(tmp_path):
    # a fresh cache, filled by the command; the tour entry then loads every kernel it
    # runs from there and compiles none
    code = ("import jitopt.__main__ as m; m.main(['--compile', 'RGD']); "
            "from numba.core.dispatcher import Dispatcher; import sys; from jitopt import tour; "
            "tour.rgd(); ds = [o for n, mod in list(sys.modules.items()) "
            "if n.startswith('jitopt') and mod for o in vars(mod).values() "
            "if isinstance(o, Dispatcher)]; "
            "print(sum(sum(d.stats.cache_misses.values()) for d in ds))")
    first = run_python(code, tmp_path)[0]
    assert first[0].startswith("compiled the kernels of RGD") and str(tmp_path) in first[0]
    assert run_python(code, tmp_path)[0][-1] == "0"


def test_compile_command_compiles_what_small_problems_run_uncompiled(tmp_path):
    # the tour's equilibrium is small enough to run its rounds uncompiled, but the command
    # compiles them; a later first call then loads them from the cache
    code = ("import jitopt.__main__ as m; m.main(['--compile', 'evi']); "
            "from jitopt.evi import _kernels; print(len(_kernels.run_rounds.signatures))")
    assert run_python(code, tmp_path)[0][-1] == "1"
    code = ("import jitopt.tour, jitopt._interpreted as i; jitopt.tour.evi(); "
            "from jitopt.evi import _kernels; print(i._spent, "
            "sum(_kernels.run_rounds.stats.cache_hits.values()))")
    assert run_python(code, tmp_path)[0][-1] == "0.0 1"


def test_compilations_are_logged(tmp_path):
    # a kernel compiled (in an empty cache) is logged on the "jitopt" logger
    code = """
import logging, numpy as np
logging.basicConfig(level=logging.INFO, format="%(name)s %(message)s")
from jitopt.manifolds import _kernels
_kernels.sym(np.eye(2))
"""
    lines = [line for line in run_python(code, tmp_path)[1] if "manifolds._kernels.sym" in line]
    assert lines[0].startswith("jitopt compiling jitopt.manifolds._kernels.sym")
    assert lines[1].startswith("jitopt compiled jitopt.manifolds._kernels.sym in ")


def test_no_kernel_compiles_numpys_error_messages_or_its_solve(tmp_path):
    # an array assigned to a slice (a[:, :p] = b, out[i] = f(x)) compiles NumPy's broadcast
    # checks with their formatted messages, and Numba's np.linalg.solve compiles its copies
    # with them: seconds of a first run each. The kernels that had them, compiled in an
    # empty cache, must contain neither.
    code = """
import sys
import numpy as np
from numba.core.dispatcher import Dispatcher
from jitopt.manifolds import _kernels as K, _stiefel
from jitopt.transport import _kernels3d

rng = np.random.default_rng(0)
q = lambda n, p: np.linalg.qr(rng.standard_normal((n, p)))[0]
x, y, u = q(6, 2), q(6, 2), 0.1 * rng.standard_normal((6, 2))
K.cayley_retraction(x, u)
K.cayley_retraction(q(3, 2), u[:3])
K.orthogonal_cayley(q(3, 3), 0.1 * np.eye(3))
_stiefel._cayley_left(q(3, 3), np.zeros((3, 3)))
K.grassmann_log(x, y)
K.principal_angles(x, y)
s = np.eye(3) * 2.0
K.spd_inner(s, np.eye(3), np.eye(3))
K.spd_second_order_retraction(s, np.eye(3))
K.batch_qr_retraction(np.stack([x, y]), np.stack([u, u]))
K.batch_polar_retraction(np.stack([x, y]), np.stack([u, u]))
K.batch_spd_exp(np.stack([s, s]), np.stack([s, s]))
_kernels3d.legendre_3d(rng.standard_normal((4, 5, 3)), np.empty((4, 5, 3)))
for name, module in list(sys.modules.items()):
    if name.startswith("jitopt") and module is not None:
        for key, obj in vars(module).items():
            if isinstance(obj, Dispatcher):
                for sig in obj.overloads:
                    ir = obj.inspect_llvm(sig)
                    for mark in ("raise_with_shape_context", "solve_impl"):
                        if mark in ir:
                            print(name + "." + key, mark)
print("scanned")
"""
    lines = run_python(code, tmp_path)[0]
    assert lines == ["scanned"]


def test_a_first_spd_solve_compiles_no_manifold_kernel(tmp_path):
    # one SPD matrix is handled by NumPy from Python: a first solve in an empty cache
    # compiles none of the manifold kernels (they took 10-15 s) and finds the known
    # minimiser of the squared distance to a point, the point itself
    code = """
import numpy as np, jitopt
from jitopt.manifolds import SPD, _kernels
M = SPD(3)
a = np.array([[2.0, 0.5, 0.0], [0.5, 1.0, 0.2], [0.0, 0.2, 3.0]])
def egrad(X):  # the Riemannian gradient -log_X(a) is X egrad X
    return -np.linalg.solve(X, np.linalg.solve(X, M.log(X, a)).T)
res = jitopt.minimize(jitopt.Problem(M, lambda X: 0.5 * M.dist(X, a) ** 2, egrad), np.eye(3))
print(res.success, float(np.abs(res.x - a).max()))
print(sorted(k for k, v in vars(_kernels).items() if getattr(v, "signatures", None)))
"""
    lines = run_python(code, tmp_path)[0]
    success, err = lines[-2].split()
    assert success == "True" and float(err) < 1e-6
    assert lines[-1] == "[]"


def test_small_sparse_fits_and_equilibria_compile_no_kernel(tmp_path):
    # on small problems the IHT loop with its step and oracle, the exchange search and the
    # EVI rounds run their kernels uncompiled until compiled (they took 5-7 s each to
    # compile): in an empty cache a first fit on the diabetes data, the tour's sparse entry
    # and a first correlated equilibrium of rock-paper-scissors compile no kernel, and
    # find the best 5-subset (by brute force), the best 3-subset NNLS and the uniform play
    code = """
import itertools, sys
import numpy as np
from numba.core.dispatcher import Dispatcher
from sklearn.datasets import load_diabetes
from jitopt.games import NormalFormGame
from jitopt.sparse import IHTRegressor
from jitopt.tour import sparse
X, y = load_diabetes(return_X_y=True)
model = IHTRegressor(5).fit(X, y)
Xc, yc = X - X.mean(axis=0), y - y.mean()
best = min(np.sum((yc - Xc[:, s] @ np.linalg.lstsq(Xc[:, s], yc, rcond=None)[0]) ** 2)
           for s in map(list, itertools.combinations(range(10), 5)))
mse = np.sum((y - model.predict(X)) ** 2)
A = np.array([[0.0, -1.0, 1.0], [1.0, 0.0, -1.0], [-1.0, 1.0, 0.0]])
res = NormalFormGame([A, -A]).correlated_equilibrium(tol=1e-4, rng=0)
print(abs(mse - best) / best, sparse()[3], res.gap, np.abs(res.x - 1 / 3).max())
print(sorted(name + "." + key for name, module in list(sys.modules.items())
             if name.startswith("jitopt.") for key, obj in vars(module).items()
             if isinstance(obj, Dispatcher) and obj.signatures))
"""
    lines = run_python(code, tmp_path)[0]
    fit_gap, tour_gap, ce_gap, nash = map(float, lines[-2].split())
    assert fit_gap < 1e-12 and tour_gap < 1e-12 and ce_gap <= 1e-4 and nash < 1e-3
    assert lines[-1] == "[]"


def test_a_box_constrained_online_dca_compiles_no_projection(tmp_path):
    # the subproblem's projection is a clip on a box, decided at compile time, and the
    # start's projection runs uncompiled: the tour's online DCA (a box) compiles no
    # projection kernel (0.6 s of its first run) and reaches its known limit
    from specialisations import specialisations

    counts = specialisations("from jitopt import tour; assert tour.dc()[3] < 1e-2", tmp_path)
    assert any(name.endswith("solve_prox_subproblem") for name in counts), counts
    assert not any(name.endswith(".project") for name in counts), counts
