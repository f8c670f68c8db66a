"""WDHA and SGA exact barycenters (the default variants and the papers') vs POT's
convolutional and debiased (entropic) barycenters on 2-D grids, and WDHA vs SGA on 3-D grids
(``--grids3d``, :mod:`benchmarks.barycenter3d`)."""

import argparse
import os
import time

import numpy as np

from jitopt.problems import BarycenterProblem
from jitopt.testing import bures_barycenter, density_moments
from jitopt.transport import grid_coordinates, sga, wasserstein2_grid, wdha

from ._common import print_table, warm_up

DISKS = [(0.3, 0.3), (0.7, 0.35), (0.35, 0.7), (0.7, 0.7)]


def disks(n):
    """Four disks of radius 0.1 and their exact barycenter, the disk at the mean centre."""
    y, x = grid_coordinates((n, n))

    def disk(c):
        return ((y - c[0]) ** 2 + (x - c[1]) ** 2 <= 0.01).astype(float)

    return np.array([disk(c) for c in DISKS]), disk(np.mean(DISKS, axis=0))


def coverage_disk(n, centre, sub=16, radius=0.1):
    """The disk rasterised by cell coverage: each cell's value is the fraction of its
    ``sub x sub`` sub-samples (at their centres) inside the disk."""
    t = (np.arange(n * sub) + 0.5) / (n * sub)
    inside = (t[:, None] - centre[0]) ** 2 + (t[None, :] - centre[1]) ** 2 <= radius ** 2
    return inside.reshape(n, sub, n, sub).sum(axis=(1, 3), dtype=np.int64) / sub ** 2


def coverage_disks(n, sub=16):
    """The four disks of :func:`disks` and their barycenter, all rasterised by cell
    coverage with ``sub x sub`` sub-samples per cell."""
    return (np.array([coverage_disk(n, c, sub) for c in DISKS]),
            coverage_disk(n, np.mean(DISKS, axis=0), sub))


def centre_offset(A, truth):
    """Distance in cells between the mean of the inputs' centres of mass and the truth's:
    a bias of the rasterisation that every mean-preserving barycenter keeps."""
    means = np.mean([density_moments(a)[0] for a in A], axis=0)
    return float(np.linalg.norm(means - density_moments(truth)[0]))


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


G3 = [((0.38, 0.36), (0.06, 0.035), 0.0), ((0.62, 0.40), (0.07, 0.04), np.pi / 4),
      ((0.50, 0.64), (0.05, 0.045), -np.pi / 3)]


def rotated_gaussians(n):
    """Three rotated Gaussians and their exact barycenter: the Gaussian with the mean mean
    and the Bures fixed-point covariance (Alvarez-Esteban et al. 2016)."""
    y, x = grid_coordinates((n, n))

    def gauss(m, c):
        d = np.stack([y - m[0], x - m[1]], axis=-1)
        return np.exp(-0.5 * np.einsum("...i,ij,...j->...", d, np.linalg.inv(c), d))

    covs = []
    for _, s, th in G3:
        r = np.array([[np.cos(th), -np.sin(th)], [np.sin(th), np.cos(th)]])
        covs.append(r @ np.diag(np.square(s)) @ r.T)
    bar = bures_barycenter(covs, np.full(len(covs), 1 / len(covs)))
    mean = np.mean([g[0] for g in G3], axis=0)
    return np.array([gauss(g[0], c) for g, c in zip(G3, covs)]), gauss(mean, bar)


def checkerboard(rho):
    """Speckle: rms of the (-1)^(i+j) component of 2 x 2 blocks inside the support (where
    the density, blurred by 1.5 cells, exceeds 0.3 of its maximum, eroded by 3 cells),
    relative to the mean there; 0 for a uniform shape."""
    from scipy.ndimage import binary_erosion, gaussian_filter

    rho = rho / rho.max()
    inner = binary_erosion(gaussian_filter(rho, 1.5) > 0.3 * rho.max(), iterations=3)
    c = 0.25 * (rho[:-1, :-1] - rho[1:, :-1] - rho[:-1, 1:] + rho[1:, 1:])
    if not inner.any():
        return np.nan
    return float(np.sqrt(np.mean(c[inner[:-1, :-1]] ** 2)) / rho[inner].mean())


def total_variation(rho):
    rho = rho / rho.sum()
    return np.abs(np.diff(rho, axis=0)).sum() + np.abs(np.diff(rho, axis=1)).sum()


def pot_runner(kind, reg, iters):
    import ot

    def norm(A):
        return A / A.sum(axis=(1, 2), keepdims=True)

    method = "sinkhorn_log" if kind.endswith("-log") else "sinkhorn"
    if kind.startswith("cwb"):
        return lambda A: ot.bregman.convolutional_barycenter2d(
            norm(A), reg, method=method, numItermax=iters, stopThr=1e-9, warn=False)
    return lambda A: ot.bregman.convolutional_barycenter2d_debiased(
        norm(A), reg, method=method, numItermax=iters, stopThr=1e-9, warn=False)


def methods(n, pot_iters, pot=True, single=False, sharpened=False, pot_kinds=None, only=""):
    """``(name, run, is_pot)`` for the methods of the accuracy tables (those whose name
    contains one of the comma-separated parts of ``only``, case-insensitive)."""
    rows = [("jitopt sharp (default)", lambda A: wdha(BarycenterProblem(A)).x, False),
            ("jitopt sharp, no polish", lambda A: wdha(BarycenterProblem(A), polish=0).x,
             False)]
    if single:
        rows.append(("jitopt sharp, one grid",
                     lambda A: wdha(BarycenterProblem(A), coarsest=max(A.shape[1:])).x, False))
    if sharpened:
        rows.append(("jitopt sharp, sharpened",
                     lambda A: wdha(BarycenterProblem(A), output="sharpened").x, False))
    rows.append(("jitopt paper (T=300)",
                 lambda A: wdha(BarycenterProblem(A), variant="paper").x, False))
    rows += [("SGA (default)", lambda A: sga(BarycenterProblem(A)).x, False),
             ("SGA, no polish", lambda A: sga(BarycenterProblem(A), polish=0).x, False),
             ("SGA paper", lambda A: sga(BarycenterProblem(A), variant="paper").x, False)]
    if pot:
        # the log-domain solvers (needed below reg ~ 1e-3) take minutes already at 64 x 64
        kinds = (pot_kinds if pot_kinds is not None
                 else (("cwb", 2e-3), ("dsb", 2e-3), ("dsb", 1e-3)))
        for kind, reg in kinds:
            rows.append((f"POT {kind.upper()} reg={reg:g}", pot_runner(kind, reg, pot_iters),
                         True))
    parts = only.lower().split(",")
    return [row for row in rows if any(part in row[0].lower() for part in parts)]


def w2_px(a, b, n, w2_iters=300):
    """W2 between two grid densities by back and forth, in pixels of an n x n grid."""
    return np.sqrt(max(wasserstein2_grid(a, b, numItermax=w2_iters), 0.0)) * n


def accuracy_rows(n, fixture, pot_iters, pot=True, w2_iters=300, repeats=3, pot_repeats=3,
                  **kinds):
    """One row per method: median time over ``repeats`` runs (``pot_repeats`` for POT;
    the methods interleaved in each round), W2 to the exact barycenter (px), covariance
    error, checkerboard, TV ratio (or, without a truth, the mean W2^2 to the inputs)."""
    data = fixture(n)
    A, truth = data if isinstance(data, tuple) else (data, None)
    runs = methods(n, pot_iters, pot, **kinds)
    times = {name: [] for name, _, _ in runs}
    results = {}
    for r in range(max(repeats, pot_repeats)):
        for name, run, is_pot in runs:
            if r >= (pot_repeats if is_pot else repeats):
                continue
            t0 = time.perf_counter()
            results[name] = np.asarray(run(A))
            times[name].append(time.perf_counter() - t0)
    rows, base = [], None
    for name, _, _ in runs:
        elapsed = float(np.median(times[name]))
        base = elapsed if base is None else base
        bary = results[name]
        label = f"{name} [{len(times[name])}]"
        if not np.all(np.isfinite(bary)) or bary.sum() <= 0:
            rows.append((label, elapsed, elapsed / base) + (None,) * 5)
            continue
        bary = np.maximum(bary, 0.0)
        speckle = checkerboard(bary)
        if truth is None:
            obj = np.mean([wasserstein2_grid(bary, a, numItermax=w2_iters) for a in A])
            rows.append((label, elapsed, elapsed / base, None, None, speckle, None, obj))
            continue
        m, c = density_moments(bary)
        mt, ct = density_moments(truth)
        rows.append((label, elapsed, elapsed / base, w2_px(bary, truth, n, w2_iters),
                     100 * np.linalg.norm(c - ct) / np.linalg.norm(ct), speckle,
                     total_variation(bary) / total_variation(truth), None))
    return rows, truth


def w2_floor(truth, n, shift=0.1, w2_iters=300):
    """The W2 (px) measured between the truth and the truth shifted by ``shift`` pixels
    along the columns (cubic-spline resampling): the scale of the metric itself for
    sub-pixel errors (a perfect measure would give ``shift``)."""
    from scipy.ndimage import shift as nd_shift

    moved = np.maximum(nd_shift(truth, (0.0, shift), order=3, mode="constant"), 0.0)
    return w2_px(truth, moved, n, w2_iters)


def uptime():
    """The load averages of the machine (1, 5, 15 minutes), as a string."""
    try:
        return "load average %.2f, %.2f, %.2f" % os.getloadavg()
    except OSError:
        return "load average unknown"


def per_iteration(n, iters, n_jobs_list, pot_kinds):
    """Milliseconds per iteration of WDHA and of POT's barycenters on the disks."""
    A, _ = disks(n)
    out = {}
    for nj in n_jobs_list:
        t0 = time.perf_counter()
        wdha(BarycenterProblem(A), maxiter=iters, n_jobs=nj, variant="paper")
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
    results.append(("jitopt sharp", wdha(BarycenterProblem(A)).x, time.perf_counter() - t0))
    t0 = time.perf_counter()
    results.append(("jitopt paper", wdha(BarycenterProblem(A), variant="paper").x,
                    time.perf_counter() - t0))
    pot = (("POT CWB reg=4e-3", "cwb", 4e-3), ("POT DSB reg=4e-3", "dsb", 4e-3))
    if n > 512:  # 300 of POT's iterations take 15 to 35 minutes each at 1024 x 1024
        print(f"POT skipped at {n}x{n}")
        pot = ()
    for name, kind, reg in pot:
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
                        help="small grids only (accuracy at 64, no timing table)")
    parser.add_argument("--grids", default="128,256,512",
                        help="grids of the accuracy runs against POT (default 128,256,512)")
    parser.add_argument("--fixtures", default="disks,disks-coverage,gaussians,shapes",
                        help="fixtures of the accuracy runs (default "
                             "disks,disks-coverage,gaussians,shapes)")
    parser.add_argument("--jitopt-grids", default="1024",
                        help="grids of extra runs of jitopt alone on the paper's shapes "
                             "(default 1024)")
    parser.add_argument("--repeats", type=int, default=3,
                        help="runs per jitopt method, the median time is reported (default 3)")
    parser.add_argument("--pot-repeats", type=int, default=3,
                        help="runs per POT method (default 3; one DSB run is minutes at 512)")
    parser.add_argument("--pot", default="cwb:2e-3,dsb:2e-3,dsb:1e-3",
                        help="POT barycenters as kind:reg (default cwb:2e-3,dsb:2e-3,dsb:1e-3; "
                             "an empty string runs no POT)")
    parser.add_argument("--single-grid", action="store_true",
                        help="also run the default variant without the coarse-to-fine start")
    parser.add_argument("--sharpened", action="store_true",
                        help="also run the default variant with output='sharpened'")
    parser.add_argument("--pot-iters", type=int, default=300,
                        help="numItermax of POT's barycenters (stopThr 1e-9; default 300)")
    parser.add_argument("--timing-grids", default="",
                        help="grids of the per-iteration timings (e.g. 256,512,1024)")
    parser.add_argument("--timing-iters", type=int, default=20)
    parser.add_argument("--shapes-figure", default=None, metavar="PNG",
                        help="also run the paper's four shapes and save the images to PNG")
    parser.add_argument("--shapes-grid", type=int, default=256)
    parser.add_argument("--only", default="",
                        help="only the methods whose name contains one of these "
                             "comma-separated parts (e.g. 'default': WDHA and SGA at 512 in "
                             "minutes; 'default,POT DSB' adds POT's debiased barycenter, "
                             "about 9 minutes per run)")
    parser.add_argument("--grids3d", default="64",
                        help="3-D grids of WDHA vs SGA (default 64; e.g. 64,128; empty: none)")
    args = parser.parse_args(argv)
    if args.quick:
        args.grids, args.timing_grids, args.jitopt_grids = "64", "", ""
    grids = [int(g) for g in args.grids.split(",") if g]
    print(f"jitopt with the default threads (n_jobs=None, {os.cpu_count()} CPUs); "
          "POT single-threaded (BLAS pinned to 1 thread)")
    timing_grids = [int(g) for g in args.timing_grids.split(",") if g]

    A, _ = disks(32)
    warm_up(lambda: wdha(BarycenterProblem(A), maxiter=5), "wdha 32x32")
    warm_up(lambda: wdha(BarycenterProblem(A), maxiter=5, coarsest=8),
            "wdha coarse-to-fine 32x32")
    warm_up(lambda: wdha(BarycenterProblem(A), maxiter=5, variant="paper"), "paper 32x32")
    warm_up(lambda: wasserstein2_grid(A[0], A[1], numItermax=5), "wasserstein2_grid 32x32")
    warm_up(lambda: sga(BarycenterProblem(A), maxiter=5), "sga 32x32")

    columns = [("method [runs]", ""), ("time (s)", ".2f"), ("/ sharp", ".2f"),
               ("W2 to exact (px)", ".3f"), ("cov err (%)", ".2f"), ("checker", ".4f"),
               ("TV / exact", ".2f"), ("mean W2^2", ".6f")]
    fixtures = {"disks": ("four translated disks (cells in or out by their centre)", disks),
                "disks-coverage": ("four translated disks, rasterised by cell coverage "
                                   "(16 x 16 samples per cell)", coverage_disks),
                "gaussians": ("three rotated Gaussians (Bures barycenter)", rotated_gaussians),
                "shapes": ("the paper's four shapes (no closed form)", shapes)}
    kinds = dict(single=args.single_grid, sharpened=args.sharpened, only=args.only,
                 pot_kinds=[(k, float(r)) for k, r in
                            (item.split(":") for item in args.pot.split(",") if item)])
    for n in grids:
        for key in args.fixtures.split(","):
            label, fixture = fixtures[key]
            print(f"\n{label}, {n}x{n} (median time of [runs], interleaved; W2 to the exact "
                  f"barycenter by back and forth, in pixels; {uptime()})", flush=True)
            rows, truth = accuracy_rows(n, fixture, args.pot_iters, repeats=args.repeats,
                                        pot_repeats=args.pot_repeats, **kinds)
            print_table(columns, rows)
            if truth is not None:
                print(f"metric scale: the truth shifted by 0.1 px measures "
                      f"{w2_floor(truth, n):.3f} px ({uptime()})", flush=True)
            if key.startswith("disks"):
                A, truth = fixture(n)
                print(f"rasterisation: the mean of the inputs' centres is "
                      f"{centre_offset(A, truth):.3f} px from the truth's centre", flush=True)
            if key == "disks-coverage":
                coarse = coverage_disks(n, sub=8)[1]
                print(f"rasterisation floor: the truth with 8 x 8 and with 16 x 16 samples "
                      f"per cell are {w2_px(coarse, truth, n):.3f} px apart", flush=True)
    for n in [int(g) for g in args.jitopt_grids.split(",") if g]:
        print(f"\nthe paper's four shapes, {n}x{n}, jitopt alone ({uptime()})", flush=True)
        A = shapes(n)
        runs = [(name, run) for name, run, _ in methods(n, 0, pot=False)]
        times = {name: [] for name, _ in runs}
        out = {}
        for r in range(args.repeats):
            for name, run in runs:
                if r and "paper" in name and n > 512:  # one run of the paper's (minutes)
                    continue
                t0 = time.perf_counter()
                res = run(A)
                times[name].append(time.perf_counter() - t0)
                out[name] = res
        rows = [(f"{name} [{len(times[name])}]", float(np.median(times[name])),
                 checkerboard(out[name])) for name, _ in runs]
        print_table([("method [runs]", ""), ("time (s)", ".1f"), ("checker", ".4f")], rows)
        print(f"({uptime()})")

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
        shapes_figure(args.shapes_grid, args.pot_iters, args.shapes_figure)
    if args.grids3d and not args.quick:
        from . import barycenter3d

        barycenter3d.tables([int(g) for g in args.grids3d.split(",") if g], args.repeats)
