"""Defaults battery: each method with its default settings against its best tuned setting.

For each method and problem: the tuned reference is the best setting of the method's main
knob on a factor-2 grid of 8 values (shifted until the best is interior), each setting
judged by its worst run over several (start, seed) pairs; the default is run with no option
but the seed. A row passes when the default's worst relative gap after 2B passes is at
most the tuned setting's worst gap after B passes (gaps below 1e-10 count as equal). The
table gives both gaps and their ratio, the passes each needs to reach the tuned gap and
their ratio (the target: within 2x; log-linear between checkpoints), the default's step
(first and last) and the passes it spends on estimating it. ``--held-out`` runs problems
of other sizes and seeds, which the default rules were not chosen on.

EVI: ``correlated_equilibrium`` with its defaults against a grid of learners, gap-check
intervals and weightings (each with the default reweighting), on zero-sum and general-sum
games, each from the uniform start and three random starts, rock-paper-scissors also
relabelled and rescaled (``tol`` scaled alike). Every setting is judged by its worst run of a
problem; a run passes when it certifies ``gap <= tol`` within half of ``maxiter``. Then
``deviations="linear"`` (ALCE gaps, same tolerances) with its defaults alone, on the same
runs.

One function per method family returns its rows (``SECTIONS``).
"""

import argparse
import itertools
import math
import time
from typing import NamedTuple

import numpy as np

from jitopt import minimize, problems, solvers
from jitopt.games import NormalFormGame, PolymatrixGame
from jitopt.solvers import serena

from ._common import print_table, warm_up

EQUAL_GAP = 1e-10  # relative gaps below this count as equal


class Row(NamedTuple):
    """One method on one problem. ``default`` and ``best`` describe the settings (a step,
    a learner, ...); gaps are worst over the runs; passes are the worst run's to reach
    ``tuned_gap``."""

    method: str
    problem: str
    budget: float
    default: str
    best: str
    default_gap: float  # after 2 * budget
    tuned_gap: float  # after budget
    default_passes: float
    tuned_passes: float
    estimation: float  # passes the default spends on choosing its setting

    @property
    def passed(self):
        return self.default_gap <= max(self.tuned_gap, EQUAL_GAP)


COLUMNS = [("method", "s"), ("problem", "s"), ("B", ".3g"), ("default", "s"),
           ("best tuned", "s"), ("default gap 2B", ".1e"), ("tuned gap B", ".1e"),
           ("gap ratio", ".2g"), ("passes to tuned gap", ".3g"), ("tuned", ".3g"),
           ("passes ratio", ".2f"), ("estimation", ".2f"), ("verdict", "s")]


def print_rows(title, rows):
    """The table of ``rows`` under ``title``, then the count of rows that pass."""
    print(f"\n=== {title} ===")
    print_table(COLUMNS, [
        (r.method, r.problem, r.budget, r.default, r.best, r.default_gap, r.tuned_gap,
         max(r.default_gap, EQUAL_GAP) / max(r.tuned_gap, EQUAL_GAP), r.default_passes,
         r.tuned_passes, r.default_passes / r.tuned_passes, r.estimation,
         "pass" if r.passed else "FAIL") for r in rows])
    print(f"{sum(r.passed for r in rows)} of {len(rows)} rows pass")


# -- SERENA: the step size ----------------------------------------------------------------

PRESETS = ("r-sgd", "r-svrg", "r-srg", "r-srm", "r-srvrg", "r-svrrm", "r-hybrid-sgd")


def _geometric(n, d, top, bottom, rng):
    return np.random.default_rng(rng).standard_normal((n, d)) * np.geomspace(top, bottom, d)


def _robust(z, p, eps):
    """Robust PCA with f* from rgd run from the PCA subspace to a gradient norm of 1e-11."""
    problem = problems.robust_pca(z, p, eps)
    ref = solvers.rgd(problem, problems.finite_sum_pca(z, p).xopt, gtol=1e-11, maxiter=20000)
    problem.fopt = ref.fun
    return problem


def _least_squares(n, d, bottom, noise, rng):
    """Least squares on R^d, columns scaled by geomspace(1, bottom); f* by lstsq."""
    rng = np.random.default_rng(rng)
    X = rng.standard_normal((n, d)) * np.geomspace(1.0, bottom, d)
    y = X @ rng.standard_normal(d) + noise * rng.standard_normal(n)
    problem = problems.least_squares(X, y)
    r = X @ np.linalg.lstsq(X, y, rcond=None)[0] - y
    problem.fopt = 0.5 * float(r @ r) / n
    return problem


def serena_problems(held_out=False):
    """``(name, problem)`` pairs of the battery (or of the held-out set), f* known."""
    if held_out:
        return [
            ("PCA Gr(20, 4), n=3000", problems.finite_sum_pca(_geometric(3000, 20, 5, 0.5, 10), 4)),
            ("PCA St(8, 3), n=8000", problems.finite_sum_pca(_geometric(8000, 8, 2, 1, 11), 3,
                                                              "stiefel")),
            ("eigenvector S^29, n=1e4", problems.leading_eigenvector(
                problems.spiked_samples(10000, 30, (2.0, 1.5), rng=12))),
            ("Karcher SPD(5), n=500", problems.karcher_mean(
                problems.commuting_spd_samples(500, 5, sigma=1.0, rng=13))),
            ("robust PCA Gr(15, 3), n=5000", _robust(
                problems.spiked_samples(5000, 15, (3.0, 2.5, 2.0), rng=14), 3, 0.5)),
            ("least squares R^60, n=2000", _least_squares(2000, 60, 0.4, 1.0, 15))]
    return [
        ("PCA Gr(12, 3), n=6000", problems.finite_sum_pca(_geometric(6000, 12, 3, 0.3, 0), 3)),
        ("PCA St(10, 2), n=4000", problems.finite_sum_pca(_geometric(4000, 10, 2, 0.5, 1), 2,
                                                           "stiefel")),
        ("eigenvector S^14, n=3000", problems.leading_eigenvector(
            problems.spiked_samples(3000, 15, (3.0, 2.5), rng=2))),
        ("Karcher SPD(4), n=2000", problems.karcher_mean(
            problems.commuting_spd_samples(2000, 4, sigma=0.7, rng=3))),
        ("robust PCA Gr(10, 2), n=3000", _robust(
            problems.spiked_samples(3000, 10, (4.0, 2.0), rng=4), 2, 1.0)),
        ("least squares R^20, n=4000", _least_squares(4000, 20, 0.3, 0.5, 5))]


def _gaps(res, fopt):
    h = res.history
    return np.asarray(h["passes"]), np.maximum((np.asarray(h["fun"]) - fopt) / abs(fopt), 0.0)


def _gap_within(run, budget):
    """The relative gap at the last checkpoint within ``budget`` passes."""
    passes, gaps = run
    return gaps[passes <= budget + 1e-9][-1]


def _passes_to(run, target):
    """The passes at which the gap reaches ``target``, log-linear between checkpoints (an
    epoch, and so the step between checkpoints, is several passes)."""
    passes, gaps = run
    target = max(target, EQUAL_GAP)
    hit = np.flatnonzero(gaps <= target)
    if not hit.size:
        return math.inf
    k = hit[0]
    if k == 0:
        return passes[0]
    lo, hi = np.log(max(gaps[k], 1e-300)), np.log(gaps[k - 1])
    return passes[k - 1] + (passes[k] - passes[k - 1]) * (hi - np.log(target)) / (hi - lo)


def _serena_runs(problem, preset, step, budget, runs):
    solver = getattr(serena, preset.replace("-", "_"))
    out = []
    for seed in range(runs):
        x0 = problem.manifold.random_point(100 + seed)
        res = solver(problem, x0, step_size=step, rng=seed, gtol=0.0, max_passes=budget,
                     history=True)
        out.append((_gaps(res, problem.fopt), res.history["step"]))
    return out


def serena_rows(args):
    """Each SERENA preset with its default step against the best constant step."""
    rows = []
    B = args.budget
    for name, problem in serena_problems(args.held_out)[:args.problems]:
        for preset in PRESETS:
            default = _serena_runs(problem, preset, None, 2 * B, args.runs)
            eta0 = max(s[0] for _, s in default)
            worst = {}  # grid exponent -> worst gap at B, over the runs

            def judge(e):
                if e not in worst:
                    runs = _serena_runs(problem, preset, eta0 * 2.0 ** e, B, args.runs)
                    worst[e] = (max(_gap_within(r, B) for r, _ in runs), runs)
                return worst[e][0]

            lo = -4  # the grid eta0 * 2^(lo .. lo + 7), shifted until its best is interior
            for _ in range(6):
                grid = range(lo, lo + 8)
                best = min(grid, key=judge)
                if best == lo and lo > -16:
                    lo -= 4
                elif best == lo + 7 and lo < 8:
                    lo += 4
                else:
                    break
            tuned_gap, tuned_runs = worst[best]
            default_gap = max(_gap_within(r, 2 * B) for r, _ in default)
            steps = default[int(np.argmax([_gap_within(r, 2 * B) for r, _ in default]))][1]
            rows.append(Row(
                preset, name, B, f"{steps[0]:.3g} -> {steps[-1]:.3g}",
                f"{eta0 * 2.0 ** best:.3g}", default_gap, tuned_gap,
                max(_passes_to(r, tuned_gap) for r, _ in default),
                max(_passes_to(r, tuned_gap) for r, _ in tuned_runs),
                max(r[0][0] for r, _ in default)))
            print(f"  {preset} on {name}: {'pass' if rows[-1].passed else 'FAIL'}", flush=True)
    return rows


def serena_minimize(args):
    """minimize's default on a FiniteSumProblem (r-srvrg, default step) against rgd: data
    passes (IFO over n plus full cost evaluations) and time to a relative gap of 1e-8,
    worst of the runs; each time the median of 5 runs after one untimed run, the two
    methods interleaved."""
    table = []
    for name, problem in serena_problems(args.held_out)[:args.problems]:
        target = problem.fopt + 1e-8 * abs(problem.fopt)
        passes = {"r-srvrg": [], "rgd": []}
        times = {"r-srvrg": [], "rgd": []}
        for seed in range(args.runs):
            x0 = problem.manifold.random_point(100 + seed)
            options = {"r-srvrg": {"gtol": 0.0, "f_target": target, "rng": seed,
                                   "max_passes": 200},
                       "rgd": {"gtol": 0.0, "f_target": target, "maxiter": 10000}}
            runs, last = {method: [] for method in options}, {}
            for repeat in range(6):
                for method in options:
                    t0 = time.perf_counter()
                    last[method] = minimize(problem, x0, method=method,
                                            options=options[method])
                    if repeat:  # the first is untimed
                        runs[method].append(time.perf_counter() - t0)
            for method, res in last.items():
                passes[method].append(res.nifo / problem.n_samples + res.nfev
                                      if res.fun <= target else math.inf)
                times[method].append(float(np.median(runs[method])))
        table.append([name] + [f(v[m]) for m in ("r-srvrg", "rgd")
                               for f, v in ((max, passes), (lambda t: 1e3 * max(t), times))])
    print("\n=== minimize's default on a FiniteSumProblem (r-srvrg) against rgd: data passes "
          "and time to a relative gap of 1e-8 ===")
    print_table([("problem", "s"), ("r-srvrg passes", ".3g"), ("ms", ".3g"),
                 ("rgd passes", ".3g"), ("ms", ".3g")], table)


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


def evi_alce_rows(quick=False):
    """One row per problem for ``deviations="linear"`` (ALCE) with its defaults, no grid:
    ``(problem, CPU seconds, rounds, gap / tol, "pass" or "FAIL")``, each the worst over the
    problem's runs (one run each, the first copy only with ``quick``)."""
    rows = []
    for name, copies in evi_battery():
        t, nit, ratio, ok = _worst(copies[:1] if quick else copies,
                                   {"deviations": "linear"}, 1)
        rows.append((name, t, nit, ratio, "pass" if ok else "FAIL"))
    return rows


def evi_section(args):
    print("\n=== evi: correlated_equilibrium with its defaults (prm+, every 100, uniform "
          'weighting, reweight="cg") against the best of the grid; CPU seconds and rounds of '
          "the worst run over the starts and copies ===")
    print_table(EVI_COLUMNS, evi_rows(args.quick, 1 if args.quick else 3))
    print('\n=== evi: correlated_equilibrium(deviations="linear") (ALCE) with its defaults '
          "(prm+, uniform weighting, reweight=True over up to 1000 iterates); CPU seconds, "
          "rounds and gap / tol of the worst run ===")
    print_table([("problem", "s"), ("default (s)", ".3f"), ("rounds", "d"),
                 ("gap/tol", ".1e"), ("default", "s")], evi_alce_rows(args.quick))


def serena_section(args):
    print_rows("serena: defaults at 2B passes against the best of the grid at B",
               serena_rows(args))
    serena_minimize(args)


#: method family -> function(args) printing its tables
SECTIONS = {"serena": serena_section, "evi": evi_section}


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks defaults",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="one run per setting and the first two problems (CI)")
    parser.add_argument("--held-out", action="store_true",
                        help="the held-out problems instead of the battery")
    parser.add_argument("--sections", default=",".join(SECTIONS),
                        help=f"comma-separated, of {', '.join(SECTIONS)}")
    parser.add_argument("--budget", type=float, default=10.0, help="B, in passes")
    parser.add_argument("--runs", type=int, default=2,
                        help="(start, seed) pairs per setting; settings are judged by "
                             "their worst run")
    args = parser.parse_args(argv)
    args.problems = 2 if args.quick else None
    if args.quick:
        args.runs = 1
    t0 = time.perf_counter()
    for section in args.sections.split(","):
        SECTIONS[section](args)
    print(f"\ntotal {time.perf_counter() - t0:.0f} s")
