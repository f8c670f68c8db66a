"""k copies of a manifold: one batched kernel call against a loop over the copies.

For ``Stiefel(n, p, k=k)`` (projection, QR and polar retractions) and ``SPD(n, k=k)``
(exponential map), the time of one call of the batched kernel is compared with a Python
loop calling the single-copy manifold on each slice (what a generic power manifold does),
and with pymanopt's ``k=`` manifolds when pymanopt is installed. Times are medians of
interleaved repeats, after a warm-up; the first call's compile/cache-load time is printed
apart.
"""

import argparse
import time

import numpy as np

from jitopt.manifolds import SPD, Stiefel

from ._common import print_table, warm_up


def _cases(k, n, p, rng):
    cases = []
    for retraction in ("qr", "polar"):
        many, one = Stiefel(n, p, k=k, retraction=retraction), Stiefel(n, p, retraction=retraction)
        x = many.random_point(rng)
        u = 0.3 * many.random_tangent_vector(x, rng)
        cases.append((f"Stiefel({n},{p}) {retraction} retraction", many, one, "retraction", x, u))
    many, one = Stiefel(n, p, k=k), Stiefel(n, p)
    x = many.random_point(rng)
    cases.append((f"Stiefel({n},{p}) projection", many, one, "projection", x,
                  rng.standard_normal(x.shape)))
    many, one = SPD(p, k=k), SPD(p)
    x = many.random_point(rng)
    cases.append((f"SPD({p}) exp", many, one, "exp", x,
                  0.3 * many.random_tangent_vector(x, rng)))
    return cases


def _pymanopt(name, k, n, p, retraction):
    try:
        import pymanopt.manifolds as pm
    except ImportError:
        return None
    if name.startswith("Stiefel"):
        return pm.Stiefel(n, p, k=k, retraction=retraction)
    return pm.SymmetricPositiveDefinite(p, k=k)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks manifold_copies",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--n", type=int, default=10)
    parser.add_argument("--p", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=21)
    args = parser.parse_args(argv)
    rows = []
    for k in args.k:
        rng = np.random.default_rng(0)
        for label, many, one, op, x, u in _cases(k, args.n, args.p, rng):
            retraction = "polar" if "polar" in label else "qr"
            anchor = _pymanopt(label, k, args.n, args.p, retraction)
            anchor_op = {"retraction": "retraction", "projection": "projection",
                         "exp": "exp"}[op]
            runs = {
                "batched": lambda: getattr(many, op)(x, u),
                "loop": lambda: np.stack([getattr(one, op)(a, b) for a, b in zip(x, u)]),
            }
            if anchor is not None:
                runs["pymanopt"] = lambda: getattr(anchor, anchor_op)(x, u)
            warm_up(runs["batched"], f"{label}, k={k}")
            times = {name: [] for name in runs}
            for _ in range(args.repeats):  # interleaved
                for name, run in runs.items():
                    t0 = time.perf_counter()
                    run()
                    times[name].append(time.perf_counter() - t0)
            med = {name: float(np.median(t)) for name, t in times.items()}
            err = float(np.max(np.abs(runs["batched"]() - runs["loop"]())))
            rows.append([label, k, 1e6 * med["batched"], 1e6 * med["loop"],
                         med["loop"] / med["batched"],
                         1e6 * med["pymanopt"] if "pymanopt" in med else None,
                         med["pymanopt"] / med["batched"] if "pymanopt" in med else None,
                         err])
    print_table([("operation", "s"), ("k", "d"), ("batched µs", ".1f"),
                 ("loop µs", ".1f"), ("loop/batched", ".1f"),
                 ("pymanopt µs", ".1f"), ("pymanopt/batched", ".1f"),
                 ("max |diff|", ".1e")], rows)
