"""WDHA vs SGA exact barycenters on 3-D grids: rotated Gaussians (Bures barycenter), two
and four translated balls, and the ball and cube of the SGA paper's 3-D example (no closed
form). Run by ``python -m benchmarks wdha --grids3d 64,128`` or alone
(``python -m benchmarks barycenter3d --grids 128 --only "SGA (default)"``)."""

import argparse
import os
import time
import tracemalloc

import numpy as np

from jitopt.problems import BarycenterProblem
from jitopt.testing import bures_barycenter, density_moments
from jitopt.transport import grid_coordinates, sga, wasserstein2_grid, wdha

from ._common import print_table, warm_up

MEANS = np.array([(0.42, 0.45, 0.48), (0.55, 0.50, 0.46), (0.50, 0.56, 0.55)])
STDS = [(0.12, 0.10, 0.11), (0.125, 0.10, 0.11), (0.11, 0.12, 0.10)]  # >= 6 cells at 64^3
BALLS = np.array([(0.35, 0.40, 0.38), (0.62, 0.58, 0.60)])
LAM = np.array([0.3, 0.7])


def _rotation(axis, angle):
    r = np.eye(3)
    i, j = [a for a in range(3) if a != axis]
    r[i, i] = r[j, j] = np.cos(angle)
    r[i, j], r[j, i] = -np.sin(angle), np.sin(angle)
    return r


def gaussians(n):
    """Three anisotropic Gaussians, each rotated about another axis, weights (0.3, 0.3,
    0.4), and the exact barycenter sampled on the grid."""
    c = np.moveaxis(np.stack(grid_coordinates((n,) * 3)), 0, -1)

    def gauss(m, cov):
        d = c - m
        return np.exp(-0.5 * np.einsum("...i,ij,...j->...", d, np.linalg.inv(cov), d))

    covs = [_rotation(a, t) @ np.diag(np.square(s)) @ _rotation(a, t).T
            for a, t, s in zip((0, 1, 2), (0.5, -0.7, 0.9), STDS)]
    lam = np.array([0.3, 0.3, 0.4])
    A = np.array([gauss(m, cv) for m, cv in zip(MEANS, covs)])
    return A, lam, gauss(lam @ MEANS, bures_barycenter(covs, lam))


def ball(n, centre, radius=0.2, sub=4):
    """A ball rasterised by cell coverage (``sub``^3 samples per cell), one plane of cells
    at a time."""
    t = (np.arange(n * sub) + 0.5) / (n * sub)
    rest = (t[:, None] - centre[1]) ** 2 + (t[None, :] - centre[2]) ** 2
    out = np.empty((n, n, n))
    for i in range(n):
        first = (t[i * sub:(i + 1) * sub, None, None] - centre[0]) ** 2
        out[i] = (first + rest <= radius ** 2).reshape(sub, n, sub, n, sub).mean(axis=(0, 2, 4))
    return out


def balls(n):
    """Two translated balls of radius 0.2, weights (0.3, 0.7): the barycenter is the ball
    at the mean centre."""
    return np.array([ball(n, c) for c in BALLS]), LAM, ball(n, LAM @ BALLS)


FOUR = np.array([(0.30, 0.30, 0.35), (0.70, 0.35, 0.40), (0.35, 0.70, 0.62),
                 (0.68, 0.66, 0.65)])


def four_balls(n):
    """Four translated balls of radius 0.15, equal weights (the four inputs of the
    :math:`128^3` time target): the barycenter is the ball at the mean centre."""
    return (np.array([ball(n, c, radius=0.15) for c in FOUR]), np.full(4, 0.25),
            ball(n, FOUR.mean(axis=0), radius=0.15))


def ball_and_cube(n):
    """The SGA paper's 3-D pair: a ball of radius 0.4 and a cube of half-side 0.2, weights
    (1/2, 1/2); no closed form."""
    y, x, z = grid_coordinates((n,) * 3)
    b = ((y - 0.5) ** 2 + (x - 0.5) ** 2 + (z - 0.5) ** 2 <= 0.16).astype(float)
    cube = ((np.abs(y - 0.5) <= 0.2) & (np.abs(x - 0.5) <= 0.2)
            & (np.abs(z - 0.5) <= 0.2)).astype(float)
    return np.array([b, cube]), np.array([0.5, 0.5]), None


METHODS = [("WDHA (default)", wdha, {}), ("SGA (default)", sga, {}),
           ("SGA, no polish", sga, {"polish": 0}), ("SGA paper", sga, {"variant": "paper"})]


def accuracy_rows(n, fixture, repeats, methods=METHODS):
    """One row per method: median time, CPU time of the last run (all threads), peak NumPy
    memory over the inputs' size (``tracemalloc``; the fixtures are not normalised, so the
    problem's normalised copy counts, 1.0 of it), W2 to the exact barycenter (cells), covariance error
    (%), largest per-axis variance error (%), nit, and for SGA the dual value and gap (or,
    without a truth, the mean W2^2 to the inputs)."""
    A, lam, truth = fixture(n)
    size = A.nbytes
    rows = []
    for name, solver, options in methods:
        times = []
        for _ in range(repeats if n <= 64 else 1):
            tracemalloc.start()
            t0, c0 = time.perf_counter(), time.process_time()
            res = solver(BarycenterProblem(A, lam), **options)
            times.append(time.perf_counter() - t0)
            cpu = time.process_time() - c0
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        extra = (res.get("dual_value"), res.get("gap"))
        if truth is None:
            obj = np.mean([wasserstein2_grid(res.x, a, numItermax=300) for a in A])
            rows.append((name, np.median(times), cpu, peak / size, None, None, None, res.nit,
                         *extra, obj))
            continue
        m, c = density_moments(res.x)
        mt, ct = density_moments(truth)
        w2 = np.sqrt(max(wasserstein2_grid(res.x, truth, numItermax=300), 0.0)) * n
        var = 100 * np.max(np.abs(np.diag(c) / np.diag(ct) - 1))
        rows.append((name, np.median(times), cpu, peak / size, w2,
                     100 * np.linalg.norm(c - ct) / np.linalg.norm(ct), var, res.nit,
                     *extra, None))
    return rows


def pot_note():
    """Whether the installed POT has an N-D convolutional barycenter (POT PR #868)."""
    try:
        import ot
    except ImportError:
        return "POT: not installed"
    nd = [f for f in dir(ot.bregman) if f.startswith("convolutional_barycenter")
          and not f.endswith(("2d", "2d_debiased"))]
    if nd:
        return f"POT {ot.__version__} has {', '.join(nd)} (not run here)"
    return f"POT {ot.__version__}: no 3-D convolutional barycenter in this release"


def tables(grids, repeats=3, only=""):
    """The accuracy tables of every fixture on each grid of ``grids`` (of the methods whose
    name contains ``only``)."""
    methods = [m for m in METHODS if only.lower() in m[0].lower()]
    A, lam, _ = balls(16)
    warm_up(lambda: wdha(BarycenterProblem(A, lam), maxiter=5), "wdha 16^3")
    warm_up(lambda: sga(BarycenterProblem(A, lam), maxiter=5), "sga 16^3")
    print(pot_note())
    columns = [("method", ""), ("time (s)", ".2f"), ("cpu (s)", ".1f"), ("peak / inputs", ".1f"),
               ("W2 to exact (cells)", ".3f"), ("cov err (%)", ".2f"),
               ("var err (%)", ".2f"), ("nit", "d"), ("dual value", ".6f"), ("gap", ".2e"),
               ("mean W2^2", ".6f")]
    fixtures = (("three rotated Gaussians (Bures barycenter)", gaussians),
                ("two translated balls, coverage-rasterised", balls),
                ("four translated balls, coverage-rasterised", four_balls),
                ("the SGA paper's ball and cube (no closed form)", ball_and_cube))
    for n in grids:
        for label, fixture in fixtures:
            print(f"\n{label}, {n}^3 (median time of {repeats if n <= 64 else 1} runs; "
                  f"load average {', '.join(f'{v:.2f}' for v in os.getloadavg())})",
                  flush=True)
            rows = accuracy_rows(n, fixture, repeats, methods)
            print_table(columns, rows)
            if fixture is four_balls and n >= 128:
                targets(rows)


def targets(rows, seconds=60.0, memory=3.0):
    """The targets of 3-D barycenters on the four balls at 128^3 and above, per method:
    under ``seconds``, and a peak memory within ``memory`` times the inputs' size (the
    problem's normalised copy counted)."""
    for name, wall, _, peak, *_ in rows:
        print(f"target {name}: time {wall:.1f} s (at most {seconds:g} s: "
              f"{'PASS' if wall <= seconds else 'FAIL'}), peak memory {peak:.2f} x the "
              f"inputs (at most {memory:g} x: {'PASS' if peak <= memory else 'FAIL'})")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks barycenter3d",
                                     description=__doc__)
    parser.add_argument("--grids", default="64", help="cube sides (default 64; e.g. 64,128)")
    parser.add_argument("--repeats", type=int, default=3,
                        help="runs per method up to 64^3 (one above), median time (default 3)")
    parser.add_argument("--only", default="",
                        help="only the methods whose name contains this (e.g. SGA)")
    args = parser.parse_args(argv)
    tables([int(g) for g in args.grids.split(",") if g], args.repeats, args.only)
