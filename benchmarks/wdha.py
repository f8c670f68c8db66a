"""WDHA exact barycenter vs POT convolutional (entropic) barycenters on 2-D grids."""

import argparse
import os
import time

import numpy as np

from jitopt.problems import BarycenterProblem
from jitopt.transport import grid_coordinates, wasserstein2_grid, wdha

from ._common import print_table, warm_up

DISKS = [(0.3, 0.3), (0.7, 0.35), (0.35, 0.7), (0.7, 0.7)]
GAUSSIANS = [((0.3, 0.35), (0.05, 0.09)), ((0.65, 0.4), (0.10, 0.04)),
             ((0.4, 0.7), (0.07, 0.07)), ((0.7, 0.65), (0.04, 0.06))]


def disks(n):
    """Four disks of radius 0.1 and their exact barycenter, the disk at the mean centre."""
    y, x = grid_coordinates((n, n))

    def disk(c):
        return ((y - c[0]) ** 2 + (x - c[1]) ** 2 <= 0.01).astype(float)

    return np.array([disk(c) for c in DISKS]), disk(np.mean(DISKS, axis=0))


def gaussians(n):
    """Four axis-aligned Gaussians; the barycenter has the mean means and the mean stds."""
    y, x = grid_coordinates((n, n))

    def gauss(m, s):
        return np.exp(-0.5 * ((y - m[0]) / s[0]) ** 2 - 0.5 * ((x - m[1]) / s[1]) ** 2)

    means = np.mean([g[0] for g in GAUSSIANS], axis=0)
    stds = np.mean([g[1] for g in GAUSSIANS], axis=0)
    return np.array([gauss(*g) for g in GAUSSIANS]), gauss(means, stds)


def shapes(n):
    """The four uniform shapes of the WDHA paper's first experiment (disk, cross, heart,
    square), one per quadrant."""
    y, x = grid_coordinates((n, n))
    disk = (y - 0.2) ** 2 + (x - 0.8) ** 2 <= 0.1 ** 2
    cross = (((np.abs(y - 0.7) <= 0.1) & (np.abs(x - 0.8) <= 0.03))
             | ((np.abs(y - 0.7) <= 0.03) & (np.abs(x - 0.8) <= 0.1)))
    u, v = (x - 0.2) / 0.11, (0.72 - y) / 0.11  # heart: (u^2 + v^2 - 1)^3 <= u^2 v^3
    heart = (u * u + v * v - 1) ** 3 - u * u * v ** 3 <= 0
    square = (np.abs(y - 0.2) <= 0.1) & (np.abs(x - 0.2) <= 0.1)
    return np.array([disk, cross, heart, square], dtype=float)


def moments(rho):
    rho = rho / rho.sum()
    y, x = grid_coordinates(rho.shape)
    m = np.array([(rho * y).sum(), (rho * x).sum()])
    rg = np.sqrt((rho * ((y - m[0]) ** 2 + (x - m[1]) ** 2)).sum())
    return m, rg


def pot_runner(kind, reg, iters):
    import ot

    if kind == "cwb":
        return lambda A: ot.bregman.convolutional_barycenter2d(
            A / A.sum(axis=(1, 2), keepdims=True), reg, numItermax=iters, stopThr=0.0,
            warn=False)
    if kind == "cwb-log":
        return lambda A: ot.bregman.convolutional_barycenter2d(
            A / A.sum(axis=(1, 2), keepdims=True), reg, method="sinkhorn_log",
            numItermax=iters, stopThr=0.0, warn=False)
    return lambda A: ot.bregman.convolutional_barycenter2d_debiased(
        A / A.sum(axis=(1, 2), keepdims=True), reg, numItermax=iters, stopThr=0.0, warn=False)


def accuracy_rows(n, fixture, T, with_log_domain, n_jobs):
    """One row per method: time, W2 to the exact barycenter, centre error, spread."""
    A, truth = fixture(n)
    _, rg_true = moments(truth)
    # the barycenter's mean is exactly the weighted mean of the inputs' means
    m_true = np.mean([moments(a)[0] for a in A], axis=0)
    methods = [(f"WDHA (T={T})",
                lambda A: wdha(BarycenterProblem(A), maxiter=T, n_jobs=n_jobs).x)]
    for reg in (4e-3, 2e-3):
        methods.append((f"POT CWB reg={reg:g}", pot_runner("cwb", reg, T)))
    for reg in (4e-3, 2e-3):
        methods.append((f"POT DSB reg={reg:g}", pot_runner("dsb", reg, T)))
    if with_log_domain:
        methods.append(("POT CWB-log reg=5e-4", pot_runner("cwb-log", 5e-4, T)))
    rows, base = [], None
    for name, run in methods:
        t0 = time.perf_counter()
        bary = np.asarray(run(A))
        elapsed = time.perf_counter() - t0
        base = elapsed if base is None else base
        if not np.all(np.isfinite(bary)) or bary.sum() <= 0:
            rows.append((name, elapsed, elapsed / base, "NaN", None, None, None))
            continue
        m, rg = moments(bary)
        w2 = np.sqrt(max(wasserstein2_grid(bary, truth), 0.0)) * n
        rows.append((name, elapsed, elapsed / base, w2, np.linalg.norm(m - m_true) * n,
                     rg / rg_true, abs(bary.sum() - 1)))
    return rows


def per_iteration(n, iters, n_jobs_list, pot_kinds):
    """Milliseconds per iteration of WDHA and of POT's barycenters on the disks."""
    A, _ = disks(n)
    out = {}
    for nj in n_jobs_list:
        t0 = time.perf_counter()
        wdha(BarycenterProblem(A), maxiter=iters, n_jobs=nj)
        out[f"WDHA {nj} thr"] = (time.perf_counter() - t0) / iters * 1e3
    for kind, reg in pot_kinds:
        run = pot_runner(kind, reg, iters)
        t0 = time.perf_counter()
        run(A)
        out[f"POT {kind.upper()} reg={reg:g}"] = (time.perf_counter() - t0) / iters * 1e3
    return out


def shapes_figure(n, T, path):
    """The paper's four shapes: WDHA and POT's barycenters side by side, saved to ``path``;
    prints the paper's metric, the mean W2^2 to the inputs (computed by back and forth)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    A = shapes(n)
    results = []
    t0 = time.perf_counter()
    results.append((f"WDHA (T={T})", wdha(BarycenterProblem(A), maxiter=T).x,
                    time.perf_counter() - t0))
    for name, kind, reg in (("POT CWB reg=4e-3", "cwb", 4e-3),
                            ("POT DSB reg=4e-3", "dsb", 4e-3)):
        t0 = time.perf_counter()
        bary = np.asarray(pot_runner(kind, reg, T)(A))
        results.append((name, bary, time.perf_counter() - t0))
    rows = []
    for name, bary, elapsed in results:
        obj = np.mean([wasserstein2_grid(bary, a) for a in A])
        rows.append((name, elapsed, obj))
    print(f"\nPaper shapes at {n}x{n}: mean W2^2 to the inputs (lower is better)")
    print_table([("method", ""), ("time (s)", ".2f"), ("mean W2^2", ".5f")], rows)
    fig, axes = plt.subplots(1, len(results) + 1, figsize=(3.2 * (len(results) + 1), 3.4))
    axes[0].imshow(A.sum(axis=0), cmap="Greys")
    axes[0].set_title("inputs")
    for ax, (name, bary, _), (_, _, obj) in zip(axes[1:], results, rows):
        ax.imshow(bary, cmap="Greys")
        ax.set_title(f"{name}\nmean W2² {obj:.4f}", fontsize=9)
    for ax in axes:
        ax.set_axis_off()
    fig.tight_layout()
    fig.savefig(path, dpi=120, bbox_inches="tight")
    print(f"figure saved to {path}")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks wdha", description=__doc__)
    parser.add_argument("--quick", action="store_true",
                        help="small grids only (accuracy at 64 and 96, timing at 128 and 256)")
    parser.add_argument("--grids", default="128,256",
                        help="grids of the accuracy runs (default 128,256)")
    parser.add_argument("--log-grid", type=int, default=64,
                        help="grid of the extra accuracy run with POT's log-domain solver at "
                             "a smaller reg (0 to skip; default 64)")
    parser.add_argument("--timing-grids", default="256,512,1024",
                        help="grids of the per-iteration timings (default 256,512,1024)")
    parser.add_argument("--iters", type=int, default=300,
                        help="iterations T of every accuracy run (default 300)")
    parser.add_argument("--timing-iters", type=int, default=20)
    parser.add_argument("--shapes-figure", default=None, metavar="PNG",
                        help="also run the paper's four shapes and save the images to PNG")
    parser.add_argument("--shapes-grid", type=int, default=256)
    args = parser.parse_args(argv)
    if args.quick:
        args.grids, args.log_grid, args.timing_grids = "64,96", 32, "128,256"
        args.timing_iters = 10
    grids = [int(g) for g in args.grids.split(",") if g]
    print(f"WDHA with the default threads (n_jobs=None, {os.cpu_count()} CPUs); "
          "POT single-threaded (BLAS pinned to 1 thread)")
    timing_grids = [int(g) for g in args.timing_grids.split(",") if g]

    A, _ = disks(32)
    warm_up(lambda: wdha(BarycenterProblem(A), maxiter=5), "wdha 32x32")
    warm_up(lambda: wasserstein2_grid(A[0], A[1], numItermax=5), "wasserstein2_grid 32x32")

    columns = [("method", ""), ("time (s)", ".2f"), ("/ WDHA", ".2f"), ("W2 to exact (px)", ".3f"),
               ("centre err (px)", ".3f"), ("Rg / exact", ".3f"), ("|mass - 1|", ".1e")]
    cases = [(n, False) for n in grids]
    if args.log_grid:
        cases = [(args.log_grid, True)] + cases
    for n, with_log in cases:
        for label, fixture in (("translated disks", disks), ("Gaussians", gaussians)):
            print(f"\n{label}, {n}x{n}, {args.iters} iterations each (one run per method; "
                  "W2 to the exact barycenter by back and forth, in pixels)")
            print_table(columns, accuracy_rows(n, fixture, args.iters, with_log, None))

    if timing_grids:
        print(f"\nPer-iteration time on the disks (ms, {args.timing_iters} iterations, one run)")
        table, previous = [], None
        for n in timing_grids:
            kinds = [("cwb", 4e-3), ("cwb", 2e-3)] + ([("dsb", 2e-3)] if n <= 512 else [])
            t = per_iteration(n, args.timing_iters, (1, 2), kinds)
            print(f"  {n}x{n}: " + ", ".join(f"{k} {v:.1f}" for k, v in t.items()), flush=True)
            wd = t["WDHA 2 thr"]
            growth = None if previous is None else wd / previous
            previous = wd
            table.append((f"{n}x{n}", t["WDHA 1 thr"], wd, growth, t["POT CWB reg=0.004"],
                          t["POT CWB reg=0.002"], t["POT CWB reg=0.002"] / t["WDHA 1 thr"],
                          t["POT CWB reg=0.002"] / wd, t.get("POT DSB reg=0.002")))
        print_table([("grid", ""), ("WDHA 1 thr", ".1f"), ("WDHA 2 thr", ".1f"),
                     ("growth", ".2f"), ("CWB 4e-3", ".1f"), ("CWB 2e-3", ".1f"),
                     ("CWB/WDHA 1thr", ".1f"), ("CWB/WDHA 2thr", ".1f"), ("DSB 2e-3", ".1f")],
                    table)
        print("growth: WDHA (2 threads) time per iteration over that of the previous grid "
              "(m log m predicts 4.5 for a doubling of n)")
    if args.shapes_figure:
        shapes_figure(args.shapes_grid, args.iters, args.shapes_figure)
