"""Which gradient path is fastest: hand-written NumPy, Numba, or JAX autodiff (egrad="jax").

Two problems, each at three sizes: the Brockett cost -tr(XᵀAXD) on Stiefel(n, 5) (BLAS-bound:
one product AX dominates) and the smoothed packing cost of pymanopt's packing example,
s + ε log Σ_{i<j} exp((y_ij - s)/ε) with Y = XXᵀ, on Elliptope(n, 3) (elementwise work on
an n×n matrix). For each path the table gives the median time of one fused cost-and-gradient
call through the problem (what the solvers call), and the median time of 3 runs of 100
rgd iterations from the same start, all interleaved; first calls (Numba compilation, JAX
tracing) are warmed up and not timed. XLA's thread pool is pinned to one thread, like the
BLAS pools.
"""

import argparse
import os
import statistics
import time

# XLA runs its own thread pool: pin it to one thread like the BLAS pools
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                                   "intra_op_parallelism_threads=1")

import numpy as np
from numba import njit

from ._common import print_table


@njit(cache=True)
def _packing_numba(x, eps):
    n = x.shape[0]
    y = x @ x.T
    s = -np.inf
    for i in range(n):
        for j in range(i + 1, n):
            s = max(s, y[i, j])
    total = 0.0
    w = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            e = np.exp((y[i, j] - s) / eps)
            w[i, j] = e
            w[j, i] = e
            total += e
    # d/dY of eps log(sum) is W / sum on the upper triangle; dY/dX gives (W + Wᵀ) X
    return s + eps * np.log(total), (w @ x) / total


def packing(n, rng):
    import jitopt.manifolds as jm

    eps = 0.05
    iu = np.triu_indices(n, 1)

    def numpy_fg(x):
        y = x @ x.T
        v = y[iu]
        s = v.max()
        e = np.exp((v - s) / eps)
        total = e.sum()
        w = np.zeros((n, n))
        w[iu] = e
        return s + eps * np.log(total), ((w + w.T) @ x) / total

    def jax_cost(x):
        import jax.numpy as jnp

        y = x @ x.T
        s = jnp.triu(y, 1).max()
        e = jnp.triu(jnp.exp((y - s) / eps), 1)
        return s + eps * jnp.log(e.sum())

    return jm.Elliptope(n, 3), numpy_fg, lambda x: _packing_numba(x, eps), jax_cost


@njit(cache=True)
def _brockett_numba(x, a, d):
    ax = a @ x
    return -np.sum(x * ax * d), -2.0 * ax * d


def brockett(n, rng):
    import jitopt.manifolds as jm

    p = 5
    a = rng.standard_normal((n, n))
    a = a + a.T
    d = np.arange(1.0, p + 1)

    def numpy_fg(x):
        ax = a @ x
        return -np.sum(x * ax * d), -2.0 * ax * d

    def jax_cost(x):
        import jax.numpy as jnp

        return -jnp.sum(x * (a @ x) * d)

    return jm.Stiefel(n, p), numpy_fg, lambda x: _brockett_numba(x, a, d), jax_cost


def measure(problem_of, n, calls, seed):
    import jitopt

    rng = np.random.default_rng(seed)
    manifold, numpy_fg, numba_fg, jax_cost = problem_of(n, rng)
    x0 = manifold.random_point(rng)
    problems = {
        "numpy": jitopt.Problem(manifold, None, None, cost_and_egrad=numpy_fg),
        "numba": jitopt.Problem(manifold, None, None, cost_and_egrad=numba_fg),
        "jax": jitopt.Problem(manifold, jax_cost, egrad="jax"),
    }
    for problem in problems.values():  # warm up: compile or trace
        problem.cost_and_egrad(x0)
        jitopt.minimize(problem, x0, tol=0.0, options={"maxiter": 3})
    calls_s = {name: [] for name in problems}
    runs_s = {name: [] for name in problems}
    for rep in range(calls):  # the paths interleaved, so that load on the machine hits all
        for name, problem in problems.items():
            t0 = time.perf_counter()
            problem.cost_and_egrad(x0)
            calls_s[name].append(time.perf_counter() - t0)
            if rep < 3:
                t0 = time.perf_counter()
                res = jitopt.minimize(problem, x0, tol=0.0, options={"maxiter": 100})
                runs_s[name].append(time.perf_counter() - t0)
    out = {name: (statistics.median(calls_s[name]), statistics.median(runs_s[name]), res.nit)
           for name in problems}
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks autodiff_paths",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=50, help="oracle calls per median")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        import jax  # noqa: F401
    except ImportError:
        print('needs JAX: pip install "jitopt[jax]"')
        return 1
    rows = []
    for label, problem_of, sizes in (("Brockett, Stiefel(n, 5)", brockett, (10, 200, 2000)),
                                     ("packing, Elliptope(n, 3)", packing, (24, 200, 1000))):
        for n in sizes:
            res = measure(problem_of, n, args.calls, args.seed)
            fastest = min(res, key=lambda k: res[k][0])
            rows.append((label, n) + tuple(1e6 * res[k][0] for k in ("numpy", "numba", "jax"))
                        + tuple(res[k][1] for k in ("numpy", "numba", "jax"))
                        + (fastest, res["numpy"][2]))
    print_table([("problem", ""), ("n", "d"), ("numpy µs", ".1f"), ("numba µs", ".1f"),
                 ("jax µs", ".1f"), ("rgd numpy s", ".3f"), ("rgd numba s", ".3f"),
                 ("rgd jax s", ".3f"), ("fastest call", ""), ("rgd nit", "d")], rows)
    return 0
