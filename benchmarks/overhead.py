"""Per-call overhead on a small problem: jitopt.minimize (its default, rlbfgs, and rgd)
against scipy's BFGS.

On a 10-dimensional strongly convex quadratic with Python oracles, both solvers run to the
same gradient tolerance from the same start, after a warm-up. Reported: the median time
per call, per iteration and per oracle call of each, their ratios, and the share of
jitopt's time spent outside the user's oracles (the contract's checks, counting,
bookkeeping and the manifold kernels).
"""

import argparse
import time

import numpy as np
import scipy.optimize

import jitopt

from ._common import print_table, timed_runs, warm_up


def quadratic(d, rng):
    q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    A = (q * np.linspace(1.0, 10.0, d)) @ q.T
    b = rng.standard_normal(d)
    return A, b


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks overhead",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--dim", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--gtol", type=float, default=1e-8)
    args = parser.parse_args(argv)
    A, b = quadratic(args.dim, np.random.default_rng(0))
    xstar = np.linalg.solve(A, b)
    oracle_time = [0.0]

    def fun(x):
        t0 = time.perf_counter()
        v = 0.5 * x @ A @ x - b @ x
        oracle_time[0] += time.perf_counter() - t0
        return v

    def jac(x):
        t0 = time.perf_counter()
        g = A @ x - b
        oracle_time[0] += time.perf_counter() - t0
        return g

    x0 = np.zeros(args.dim)

    def run_jitopt():
        return jitopt.minimize(fun, x0, jac=jac, tol=args.gtol)

    def run_rgd():
        return jitopt.minimize(fun, x0, jac=jac, tol=args.gtol, method="rgd")

    def run_scipy():
        return scipy.optimize.minimize(fun, x0, jac=jac, method="BFGS", tol=args.gtol)

    warm_up(run_jitopt, "jitopt.minimize (rlbfgs)")
    warm_up(run_rgd, "jitopt.minimize (rgd)")
    warm_up(run_scipy, "scipy BFGS")
    rows = []
    for name, run in (("jitopt rlbfgs", run_jitopt), ("jitopt rgd", run_rgd),
                      ("scipy BFGS", run_scipy)):
        oracle_time[0] = 0.0
        med, times, res = timed_runs(run, args.repeats)
        calls = res.nfev + res.njev
        err = float(np.linalg.norm(res.x - xstar))
        rows.append((name, med * 1e3, res.nit, med / max(res.nit, 1) * 1e6,
                     med / calls * 1e6, oracle_time[0] / sum(times), err))
    print(f"\n{args.dim}-dimensional quadratic, gtol {args.gtol:g}, median of "
          f"{args.repeats} runs")
    print_table([("solver", "s"), ("ms/call", ".3f"), ("nit", "d"), ("us/iteration", ".1f"),
                 ("us/oracle call", ".2f"), ("oracle share", ".2f"), ("|x - x*|", ".1e")],
                rows)
    s = rows[-1]
    for j in rows[:-1]:
        print(f"\nratios {j[0]} / scipy: per call {j[1] / s[1]:.2f}, per iteration "
              f"{j[3] / s[3]:.2f}, per oracle call {j[4] / s[4]:.2f}")
