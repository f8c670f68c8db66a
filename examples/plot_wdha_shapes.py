"""
Exact Wasserstein barycenter of the paper's four shapes (WDHA) at 512 x 512 and 1024 x 1024
===========================================================================================

The first experiment of the WDHA paper: the Wasserstein-2 barycenter of four uniform
shapes, a disk, a cross, a heart and a square, one in each quadrant of the unit square,
on grids of :math:`512 \\times 512` and (the paper's size) :math:`1024 \\times 1024` cells.
``jitopt.transport.wdha`` computes it without regularisation from a
``jitopt.problems.BarycenterProblem`` (see :doc:`/theory/wdha`), with the default
variant: on grids larger than :math:`128 \\times 128` it first solves the problem on the
grids of :math:`2 \\times 2` blocks, coarsest first, and refines (``res.levels`` lists
those runs), which is what keeps the run within seconds.

At :math:`1024 \\times 1024` the run takes 30--90 s on a two-core machine (measured warm,
about three times the :math:`512 \\times 512` run); the progress lines below show it moving.
``python -m benchmarks wdha --grids "" --jitopt-grids 1024`` times it on its own, and
``python -m benchmarks wdha --grids "" --jitopt-grids "" --shapes-figure shapes.png
--shapes-grid 1024`` draws the figure with the paper's variant next to it.

The entropic barycenters the paper compares with (POT's convolutional and debiased
barycenters) take minutes already at :math:`512 \\times 512` on one core; the benchmark
``python -m benchmarks wdha`` runs them side by side with WDHA, against exact barycenters,
and times both.
"""

import time

import matplotlib.pyplot as plt
import numpy as np

from jitopt.problems import BarycenterProblem
from jitopt.transport import grid_coordinates, wdha


def shapes(n):
    y, x = grid_coordinates((n, n))
    disk = (y - 0.2) ** 2 + (x - 0.8) ** 2 <= 0.1 ** 2
    cross = (((np.abs(y - 0.7) <= 0.1) & (np.abs(x - 0.8) <= 0.03))
             | ((np.abs(y - 0.7) <= 0.03) & (np.abs(x - 0.8) <= 0.1)))
    u, v = (x - 0.2) / 0.11, (0.72 - y) / 0.11
    heart = (u * u + v * v - 1) ** 3 - u * u * v ** 3 <= 0
    square = (np.abs(y - 0.2) <= 0.1) & (np.abs(x - 0.2) <= 0.1)
    return np.array([disk, cross, heart, square], dtype=float)


# a small run through every code path first: the times below exclude Numba's compilation
# (or its loading from the cache)
wdha(BarycenterProblem(shapes(32)), maxiter=2, coarsest=8)


class Progress:
    """Print the iteration on the finest grid every ``every`` iterations."""

    def __init__(self, label, every=20):
        self.label, self.every, self.start = label, every, time.perf_counter()

    def __call__(self, intermediate_result):
        r = intermediate_result
        if r.nit % self.every == 0:
            print(f"  {self.label}: iteration {r.nit:3d} on the finest grid, "
                  f"sum W2^2 ~ {r.fun:.5f}, {time.perf_counter() - self.start:5.1f} s")


SIZES = (512, 1024)
results = {}
for n in SIZES:
    A = shapes(n)
    t0 = time.perf_counter()
    res = wdha(BarycenterProblem(A), callback=Progress(f"{n}x{n}"))
    elapsed = time.perf_counter() - t0
    results[n] = (res.x, elapsed)
    coarse = ", ".join(f"{h}x{w}: {k} it." for h, w, k in res.levels)
    print(f"{n}x{n}: {elapsed:.1f} s, {res.status.name}, {res.nit} iterations after "
          f"the coarser grids ({coarse})")

# %%
# The inputs and the barycenter (a crop around the centre of the square, where the
# barycenter lies).

fig, axes = plt.subplots(1, 1 + len(results), figsize=(3.5 * (1 + len(results)), 3.7))
axes[0].imshow(shapes(512).sum(axis=0), cmap="Greys")
axes[0].set_title("inputs")
for ax, (n, (bary, elapsed)) in zip(axes[1:], results.items()):
    lo, hi = int(0.3 * n), int(0.7 * n)
    ax.imshow(bary[lo:hi, lo:hi], cmap="Greys", extent=(0.3, 0.7, 0.7, 0.3))
    ax.set_title(f"WDHA, {n}x{n}: {elapsed:.1f} s", fontsize=10)
for ax in axes:
    ax.set_axis_off()
fig.tight_layout()
plt.show()
