"""Defaults battery: each method with its defaults against its best tuned setting (a grid) on
a battery of problems, with time and work to the target and the final gap, as ratios.

EVI: ``correlated_equilibrium`` with its defaults against a grid of learners, gap-check
intervals and weightings (each with the default reweighting), on zero-sum and general-sum
games, each from the uniform start and three random starts, rock-paper-scissors also
relabelled and rescaled (``tol`` scaled alike). Every setting is judged by its worst run of a
problem; a run passes when it certifies ``gap <= tol`` within half of ``maxiter``.
"""

import argparse
import itertools
import time

import numpy as np

from jitopt.games import NormalFormGame, PolymatrixGame

from ._common import print_table, warm_up

# --------------------------------------------------------------------------------------
# EVI
# --------------------------------------------------------------------------------------

EVI_MAXITER = 20000  # the default of evi
EVI_STARTS = (None, 0, 1, 2)  # the uniform start and three random ones (rng)
RPS = np.array([[0.0, -1.0, 1.0], [1.0, 0.0, -1.0], [-1.0, 1.0, 0.0]])


def _zero_sum(A):
    return NormalFormGame([A, -A])


def evi_battery():
    """``[(name, [(game, tol), ...]), ...]``: each problem with its copies."""
    rng = np.random.default_rng
    copies = []
    for (p, q), scale in itertools.product([((1, 2, 0), (2, 0, 1)), ((2, 1, 0), (0, 2, 1))],
                                           (1e-3, 3.0, 1e3)):
        copies.append((_zero_sum(scale * RPS[np.ix_(p, q)]), 1e-4 * scale))
    general = [rng(10).random((2, 5, 5)), rng(11).random((3, 3, 3, 3))]
    return [
        ("rock-paper-scissors", [(_zero_sum(RPS), 1e-4)]),
        ("RPS relabelled, x1e-3 / x3 / x1e3", copies),
        ("zero-sum 5x5 U(-1,1)", [(_zero_sum(rng(0).uniform(-1, 1, (5, 5))), 1e-4)]),
        ("zero-sum 10x10 U(-1,1)", [(_zero_sum(rng(1).uniform(-1, 1, (10, 10))), 1e-4)]),
        ("general-sum 5x5 U(0,1)", [(NormalFormGame(list(general[0])), 1e-4)]),
        ("general-sum 3x3x3 U(0,1)", [(NormalFormGame(list(general[1])), 1e-4)]),
        ("Bach-Stravinsky", [(NormalFormGame([[[3.0, 0.0], [0.0, 2.0]],
                                              [[2.0, 0.0], [0.0, 3.0]]]), 1e-4)]),
        ("polymatrix ring 6x3", [(PolymatrixGame.ring(6, 3, rng=0), 1e-4)]),
        ("polymatrix ring 6x3 zero-sum",
         [(PolymatrixGame.ring(6, 3, rng=1, zero_sum=True), 1e-4)]),
        ("general-sum 5 players x 5 U(0,1)",
         [(NormalFormGame(list(rng(12).random((5,) * 6))), 1e-3)]),
        ("polymatrix ring 20x3", [(PolymatrixGame.ring(20, 3, rng=2), 1e-3)]),
    ]


def evi_grid(quick=False):
    """The tuned settings: learner x check_every x weighting (default reweighting)."""
    every = (25, 50, 100) if quick else (12, 25, 50, 100, 200)
    return [{"learner": lr, "check_every": c, "weighting": w}
            for lr, c, w in itertools.product(("rm+", "prm+"), every, ("linear", "uniform"))]


def _worst(copies, options, repeats):
    """The worst run over the copies and starts: (time, rounds, gap / tol, all passed); the
    time of a run is the least CPU time of ``repeats`` (runs are deterministic; CPU time
    is steadier than wall time on a shared machine)."""
    t_max, nit_max, ratio, ok = 0.0, 0, 0.0, True
    for game, tol in copies:
        for start in EVI_STARTS:
            times = []
            for _ in range(repeats):
                t0 = time.process_time()
                res = game.correlated_equilibrium(tol=tol, rng=start, **options)
                times.append(time.process_time() - t0)
            t_max, nit_max = max(t_max, min(times)), max(nit_max, res.nit)
            ratio = max(ratio, res.gap / tol)
            ok &= bool(res.success and res.gap <= tol and res.nit <= EVI_MAXITER // 2)
    return t_max, nit_max, ratio, ok


def _label(options):
    return f"{options['learner']}, every {options['check_every']}, {options['weighting']}"


def evi_rows(quick=False, repeats=3):
    """One row per problem: ``(problem, default CPU seconds, default rounds, best tuned
    setting, its CPU seconds, its rounds, ratio of the times default / tuned, the default's
    worst gap / tol, "pass" or "FAIL")``; times and rounds are the worst over the problem's
    runs, the best tuned setting the one of least worst time among those whose runs all
    pass."""
    warm_up(lambda: _zero_sum(RPS).correlated_equilibrium(tol=1e-4, rng=0), "EVI (defaults)")
    rows = []
    for name, copies in evi_battery():
        t_def, nit_def, gap_def, ok_def = _worst(copies, {}, repeats)
        tuned = None
        for options in evi_grid(quick):
            t, nit, _, ok = _worst(copies, options, repeats)
            if ok and (tuned is None or t < tuned[0]):
                tuned = (t, nit, _label(options))
        t_tun, nit_tun, label = tuned if tuned else (None, None, "none passes")
        rows.append((name, t_def, nit_def, label, t_tun, nit_tun,
                     t_def / t_tun if tuned else None, gap_def, "pass" if ok_def else "FAIL"))
    return rows


EVI_COLUMNS = [("problem", "s"), ("default (s)", ".3f"), ("rounds", "d"),
               ("best tuned", "s"), ("tuned (s)", ".3f"), ("rounds", "d"),
               ("ratio", ".2f"), ("gap/tol", ".1e"), ("default", "s")]


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks defaults",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smaller grid, one run per timing")
    args = parser.parse_args(argv)
    print("\nEVI: correlated_equilibrium with its defaults (prm+, every 100, uniform weighting, "
          'reweight="cg") against the best of the grid; CPU seconds and rounds of the worst '
          "run over the starts and copies")
    print_table(EVI_COLUMNS, evi_rows(args.quick, 1 if args.quick else 3))


if __name__ == "__main__":
    main()
