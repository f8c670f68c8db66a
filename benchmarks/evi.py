"""EVI solver vs the CE LP (HiGHS) and projected extragradient: games and nonmonotone VIs.

B1 random normal-form games, B2 ring polymatrix games (3 actions), B3 random nonmonotone
affine VIs on the simplex and the box. Times to a certified gap of 1e-3 (CE gap summed over
players for games); the CE LP anchor on ring polymatrix games (anchors §5) took 208 s at 12
players.
"""

import argparse
import math
import time

import numpy as np

from jitopt.games import NormalFormGame, PolymatrixGame
from jitopt.problems import AffineOperator, VIProblem
from jitopt.sets import Box, Simplex
from jitopt.solvers import evi

from ._common import print_table, warm_up

TOL = 1e-3
ANCHOR_LP_N12 = 208.0  # seconds, CE LP on the 12-player ring (anchors.md §5)
#: the plain regret loop (correlated_equilibrium's defaults add reweight="cg", uniform
#: weights and checks every 100 rounds: the rows "EVI-CE default")
PLAIN = {"reweight": False, "weighting": "linear", "check_every": 50}


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def _lp_alce_gap(game, dist):
    """ALCE gap of the LP's distribution read as a mixture of pure profiles."""
    idx = np.argwhere(dist > 1e-12)
    pts = np.array([np.concatenate([np.eye(m)[a] for m, a in zip(game.sizes, prof)])
                    for prof in idx])
    return float(game.mixture_gaps(pts, dist[tuple(idx.T)]).gap)


def bench_normal_form(sizes, seeds):
    print("\nB1: random normal-form games, payoffs U(0,1); time to CE gap (sum over players) "
          f"<= {TOL:g}")
    rows = []
    for n, m in sizes:
        for seed in seeds:
            rng = np.random.default_rng(seed)
            game = NormalFormGame([rng.random((m,) * n) for _ in range(n)])
            for label, opts in (("EVI-CE", PLAIN), ("EVI-CE+rw", {**PLAIN, "reweight": True}),
                                ("EVI-ALCE+rw", {**PLAIN, "reweight": True,
                                                 "deviations": "linear"}),
                                ("EVI-CE default", {})):
                t, r = _timed(lambda: game.correlated_equilibrium(
                    tol=TOL, rng=seed, maxiter=20000, **{"deviations": "ce", **opts}))
                rows.append((f"{n}x{m}", seed, label, t, r.nit, r.nfev, r.gap_ce.sum(),
                             r.gap_alce.sum(), "yes" if r.gap <= TOL else "no", None))
            t, lp = _timed(lambda: game.ce_lp("welfare"))
            rows.append((f"{n}x{m}", seed, "CE LP", t, None, None, game.ce_gap(lp.dist).sum(),
                         _lp_alce_gap(game, lp.dist), "yes" if lp.success else "no", lp.n_variables))
    print_table([("game", "s"), ("seed", "d"), ("solver", "s"), ("time (s)", ".4f"),
                 ("rounds", "d"), ("F calls", "d"), ("CE gap", ".2e"), ("ALCE gap", ".2e"),
                 ("reached", "s"), ("LP vars", "d")], rows)
    return rows


def bench_polymatrix(ns, lp_max_n, seeds):
    print(f"\nB2: ring polymatrix games, 3 actions, edge payoffs U(-1,1); time to CE gap <= {TOL:g}")
    rows, stats = [], {}
    for n in ns:
        for seed in seeds:
            game = PolymatrixGame.ring(n, 3, rng=seed)
            for label, opts in (("EVI-CE", {**PLAIN, "maxiter": 200000}),
                                ("EVI-CE+rw", {**PLAIN, "reweight": True}),
                                ("EVI-CE default", {})):
                t, r = _timed(lambda: game.correlated_equilibrium(tol=TOL, rng=seed, **opts))
                stats.setdefault((label, n), []).append((t, r.nit, r.gap <= TOL))
                rows.append((n, seed, label, t, r.nit, r.nfev, r.gap, None,
                             "yes" if r.gap <= TOL else "no"))
            if n <= lp_max_n:
                t, lp = _timed(lambda: game.ce_lp("welfare"))
                stats.setdefault(("CE LP", n), []).append((t, 0, lp.success))
                gap = game.to_normal_form().ce_gap(lp.dist).sum() if n <= 12 else None
                rows.append((n, seed, "CE LP", t, None, None, gap, lp.n_variables,
                             "yes" if lp.success else "no"))
    print_table([("n", "d"), ("seed", "d"), ("solver", "s"), ("time (s)", ".4f"),
                 ("rounds", "d"), ("F calls", "d"), ("CE gap", ".2e"), ("LP vars", "d"),
                 ("reached", "s")], rows)

    summary = []
    for (label, n), v in sorted(stats.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        t = np.array([a for a, _, _ in v])
        per_round = [a / b for a, b, _ in v if b] or [None]
        summary.append((n, label, float(np.median(t)), float(t.max()),
                        None if per_round[0] is None else 1e6 * float(np.median(per_round)),
                        f"{sum(ok for _, _, ok in v)}/{len(v)}"))
    print("\nB2 summary over seeds")
    print_table([("n", "d"), ("solver", "s"), ("median (s)", ".4f"), ("max (s)", ".4f"),
                 ("us/round", ".1f"), ("reached", "s")], summary)

    def slope(xs, ys):
        return float(np.polyfit(xs, ys, 1)[0]) if len(xs) >= 2 else float("nan")

    big = [n for n in ns if n >= 8]
    med = {k: float(np.median([a for a, _, _ in v])) for k, v in stats.items()}
    worst = {k: max(a for a, _, _ in v) for k, v in stats.items()}
    per_round = {k: float(np.median([a / b for a, b, _ in v])) for k, v in stats.items()
                 if k[0] == "EVI-CE"}
    e_rw = slope(np.log(big), np.log([med[("EVI-CE+rw", n)] for n in big]))
    e_rw_max = slope(np.log(big), np.log([worst[("EVI-CE+rw", n)] for n in big]))
    e_round = slope(np.log(big), np.log([per_round[("EVI-CE", n)] for n in big]))
    e_plain = slope(np.log(big), np.log([med[("EVI-CE", n)] for n in big]))
    print(f"fitted exponents over n = {big[0]}..{big[-1]} (log-log): EVI-CE+rw median time "
          f"n^{e_rw:.2f}, max time n^{e_rw_max:.2f}; EVI-CE time per round n^{e_round:.2f}; "
          f"EVI-CE median time n^{e_plain:.2f} (its round counts vary by instance)")
    lp_n = [n for n in ns if ("CE LP", n) in med and n >= 6]
    pred12 = None
    if len(lp_n) >= 2:
        b = slope(lp_n, np.log([med[("CE LP", n)] for n in lp_n]))
        pred12 = math.exp(math.log(med[("CE LP", lp_n[-1])]) + b * (12 - lp_n[-1]))
        print(f"CE LP: time ~ {math.exp(b):.2f}^n over n = {lp_n[0]}..{lp_n[-1]} "
              f"(extrapolated to n = 12: {pred12:.1f} s; anchor measured {ANCHOR_LP_N12:.0f} s)")
    if ("EVI-CE", 12) in med:
        refs = [(med[("CE LP", 12)], "CE LP measured here")] if ("CE LP", 12) in med else \
            [(ANCHOR_LP_N12, "CE LP anchor")] + ([(pred12, "CE LP extrapolated")] if pred12 else [])
        for lp12, src in refs:
            for label in ("EVI-CE", "EVI-CE+rw", "EVI-CE default"):
                print(f"n = 12 vs {src} {lp12:.1f} s: {label} median {med[(label, 12)]:.3f} s "
                      f"({lp12 / med[(label, 12)]:.0f}x), slowest seed {worst[(label, 12)]:.3f} s "
                      f"({lp12 / worst[(label, 12)]:.0f}x); target >= 100x")
    return rows


def _linear_min(domain, f):
    r""":math:`\min_{x \in X} \langle f, x\rangle` on the probability simplex or the unit box."""
    return float(f.min()) if isinstance(domain, Simplex) else float(np.minimum(f, 0.0).sum())


def extragradient(problem, x0, nsteps, step):
    """Projected extragradient (the projections of jitopt.sets) on the simplex or the unit
    box; returns (final VI gap, best VI gap)."""
    domain = problem.domain

    def vigap(x, f):
        return float(f @ x - _linear_min(domain, f))

    x = x0.copy()
    best = np.inf
    for _ in range(nsteps):
        f = problem.F(x)
        best = min(best, vigap(x, f))
        xh = domain.project(x - step * f)
        x = domain.project(x - step * problem.F(xh))
    f = problem.F(x)
    return vigap(x, f), min(best, vigap(x, f))


def hard_vi(d, rng):
    """A = 3 J - I/2 + 0.3 G / sqrt(d) (J skew, G Gaussian), scaled to ||A||_2 = 1: a rotation
    with an expanding part, indefinite symmetric part; F(x) = A (x - c), c the barycentre."""
    G = rng.standard_normal((d, d))
    A = 3.0 * (G - G.T) / math.sqrt(2 * d) - 0.5 * np.eye(d) + \
        0.3 * rng.standard_normal((d, d)) / math.sqrt(d)
    return A / np.linalg.norm(A, 2)


def bench_vi(dims, seeds, domains=("simplex", "box")):
    print(f"\nB3: nonmonotone affine VIs F(x) = A (x - c) (rotation + expansion, ||A|| = 1); "
          f"certified gap <= {TOL:g}")
    rows = []
    makers = {"simplex": lambda: Simplex(), "box": lambda: Box(0.0, 1.0)}
    centres = {"simplex": lambda d: np.full(d, 1.0 / d), "box": lambda d: np.full(d, 0.5)}
    for dom_name in domains:
        make = makers[dom_name]
        for d in dims:
            for seed in seeds:
                rng = np.random.default_rng(seed)
                A = hard_vi(d, rng)
                c = centres[dom_name](d)  # the barycentre
                problem = VIProblem(AffineOperator(A, -A @ c), make(), dim=d)
                t, r = _timed(lambda: evi(problem, tol=TOL, rng=seed, maxiter=20000))
                rows.append((dom_name, d, seed, "EVI", t, r.nit, r.nfev, r.gap, None,
                             "yes" if r.gap <= TOL else "no"))
                if d <= 20:  # the spec's protocol: the reweighting LP for d <= 20
                    t, r2 = _timed(lambda: evi(problem, tol=TOL, rng=seed, maxiter=20000,
                                               reweight=True, reweight_max=200))
                    rows.append((dom_name, d, seed, "EVI+rw", t, r2.nit, r2.nfev, r2.gap, None,
                                 "yes" if r2.gap <= TOL else "no"))
                t, r3 = _timed(lambda: evi(problem, tol=TOL, rng=seed, maxiter=20000,
                                           reweight="cg"))
                rows.append((dom_name, d, seed, "EVI+cg", t, r3.nit, r3.nfev, r3.gap, None,
                             "yes" if r3.gap <= TOL else "no"))
                steps = max(r.nfev, 2000) // 2  # as many operator calls as the EVI run
                x0 = problem.domain.project(c + 0.01 * rng.standard_normal(d))
                t, (final, best) = _timed(lambda: extragradient(problem, x0, steps, 0.5))
                rows.append((dom_name, d, seed, "extragradient", t, steps, 2 * steps + 1, final,
                             best, "yes" if final <= TOL else "no"))
    print_table([("domain", "s"), ("d", "d"), ("seed", "d"), ("solver", "s"), ("time (s)", ".4f"),
                 ("rounds", "d"), ("F calls", "d"), ("gap", ".2e"), ("best VI gap", ".2e"),
                 ("reached", "s")], rows)
    summary = []
    for dom_name in domains:
        for d in dims:
            for label in ("EVI", "EVI+rw", "EVI+cg"):
                sel = [r for r in rows if r[:2] == (dom_name, d) and r[3] == label]
                if sel:
                    summary.append((dom_name, d, label, float(np.median([r[4] for r in sel])),
                                    int(np.median([r[5] for r in sel])),
                                    max(r[7] for r in sel),
                                    f"{sum(r[9] == 'yes' for r in sel)}/{len(sel)}"))
    print("\nB3 summary over seeds")
    print_table([("domain", "s"), ("d", "d"), ("solver", "s"), ("median time (s)", ".3f"),
                 ("median rounds", "d"), ("worst gap", ".2e"), ("reached", "s")], summary)
    print("EVI (at most 20000 rounds; +rw: reweighting LP, d <= 20; +cg: column generation): "
          "'gap' is the certified Phi_LIN gap of its mixture; "
          "extragradient (as many operator calls, step 0.5/||A||): 'gap' is the VI gap of its "
          "last iterate, 'best' the smallest along the run")
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks evi", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, one seed")
    parser.add_argument("--lp-max-n", type=int, default=None,
                        help="largest ring size for the CE LP (default 10, quick 8)")
    parser.add_argument("--only", choices=("B1", "B2", "B3"), default=None,
                        help="run one part only")
    parser.add_argument("--dims", type=int, nargs="+", default=None,
                        help="B3 dimensions (default 5 10 20 50 100, quick 5 20)")
    parser.add_argument("--domains", nargs="+", choices=("simplex", "box"),
                        default=("simplex", "box"), help="B3 domains (default both)")
    args = parser.parse_args(argv)
    seeds = [0] if args.quick else [0, 1, 2]
    lp_max_n = args.lp_max_n if args.lp_max_n is not None else (8 if args.quick else 10)
    warm = PolymatrixGame.ring(4, 3, rng=0)
    warm_up(lambda: (warm.correlated_equilibrium(tol=TOL, rng=0),
                     warm.correlated_equilibrium(tol=TOL, rng=0, reweight=True),
                     warm.correlated_equilibrium(tol=TOL, rng=0, deviations="linear", maxiter=200),
                     warm.to_normal_form().correlated_equilibrium(tol=TOL, rng=0, maxiter=200),
                     evi(VIProblem(AffineOperator(np.eye(3)), Box(0.0, 1.0), dim=3), maxiter=200)),
            "EVI kernels")
    tiny = VIProblem(AffineOperator(np.eye(3)), Simplex(), dim=3)
    warm_up(lambda: (extragradient(tiny, np.full(3, 1 / 3), 2, 0.5),
                     extragradient(VIProblem(AffineOperator(np.eye(3)), Box(0.0, 1.0), dim=3),
                                   np.full(3, 0.5), 2, 0.5)), "projections (jitopt.sets)")
    parts = {
        "B1": lambda: bench_normal_form([(2, 10), (3, 5)] if args.quick else
                                        [(2, 10), (2, 30), (3, 5), (3, 10), (4, 6), (5, 5),
                                         (6, 4), (7, 4)], seeds),
        "B2": lambda: bench_polymatrix([4, 6, 8, 12, 16] if args.quick else
                                       [4, 6, 8, 10, 12, 14, 20, 30], lp_max_n, seeds),
        "B3": lambda: bench_vi(args.dims or ([5, 20] if args.quick else [5, 10, 20, 50, 100]),
                               seeds, args.domains),
    }
    for name, run in parts.items():
        if args.only in (None, name):
            run()


if __name__ == "__main__":
    main()
