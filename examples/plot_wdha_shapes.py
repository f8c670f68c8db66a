"""
Exact Wasserstein barycenter of four shapes (WDHA) vs entropic barycenters
==========================================================================

The first experiment of the WDHA paper: the Wasserstein-2 barycenter of four uniform
shapes, a disk, a cross, a heart and a square, one in each quadrant of the unit square.
``jitopt.transport.wdha`` computes it without regularisation from a
``jitopt.problems.BarycenterProblem`` (see :doc:`/theory/wdha`), by default with the
changes that keep the barycenter from diffusing, and here with ``output="sharpened"``,
free of cell-scale speckle; ``variant="paper"`` is the method as published, whose iterate
shows a cell-scale checkerboard. POT's convolutional
barycenter solves the entropically regularised problem, whose result is blurred on the
scale :math:`\\sqrt{\\text{reg}/2}`.

To keep this page fast the grid is :math:`48 \\times 48`. The same comparison at
:math:`256 \\times 256`, with timings, is produced by the benchmark script:
``python -m benchmarks wdha --shapes-figure shapes.png``.

The quality measure is the paper's: the mean of :math:`W_2^2(\\nu, \\mu_i)` over the inputs
(lower is better; the barycenter minimises it), each distance computed by the
back-and-forth method, ``jitopt.transport.wasserstein2_grid``.
"""

import time

import matplotlib.pyplot as plt
import numpy as np

from jitopt.problems import BarycenterProblem
from jitopt.transport import grid_coordinates, wasserstein2_grid, wdha

n = 48
y, x = grid_coordinates((n, n))
disk = (y - 0.2) ** 2 + (x - 0.8) ** 2 <= 0.1 ** 2
cross = (((np.abs(y - 0.7) <= 0.1) & (np.abs(x - 0.8) <= 0.03))
         | ((np.abs(y - 0.7) <= 0.03) & (np.abs(x - 0.8) <= 0.1)))
u, v = (x - 0.2) / 0.11, (0.72 - y) / 0.11
heart = (u * u + v * v - 1) ** 3 - u * u * v ** 3 <= 0
square = (np.abs(y - 0.2) <= 0.1) & (np.abs(x - 0.2) <= 0.1)
A = np.array([disk, cross, heart, square], dtype=float)

# one iteration of each variant first: the times below exclude Numba's compilation
wdha(BarycenterProblem(A), maxiter=1, output="sharpened")
wdha(BarycenterProblem(A), maxiter=1, variant="paper")

results = {}
t0 = time.perf_counter()
res = wdha(BarycenterProblem(A), output="sharpened")
results["WDHA (exact)"] = res.x
print(f"WDHA: {time.perf_counter() - t0:.2f} s, {res.status.name}, {res.nit} iterations")
t0 = time.perf_counter()
res = wdha(BarycenterProblem(A), variant="paper")
results["WDHA as published"] = res.x
print(f"WDHA as published: {time.perf_counter() - t0:.2f} s, {res.nit} iterations")

try:
    import ot
except ImportError:  # POT is optional: show WDHA alone
    ot = None
if ot is not None:
    for reg in (4e-3,):
        t0 = time.perf_counter()
        results[f"POT convolutional, reg={reg:g}"] = ot.bregman.convolutional_barycenter2d(
            A / A.sum(axis=(1, 2), keepdims=True), reg, numItermax=300, stopThr=0.0,
            warn=False)
        print(f"POT reg={reg:g}: {time.perf_counter() - t0:.2f} s")

# %%
# Mean squared W2 to the inputs, and the images.

scores = {name: np.mean([wasserstein2_grid(bary, a, numItermax=40) for a in A])
          for name, bary in results.items()}
for name, score in scores.items():
    print(f"{name:>32}: mean W2^2 = {score:.5f}")

fig, axes = plt.subplots(1, len(results) + 1, figsize=(3.0 * (len(results) + 1), 3.3))
axes[0].imshow(A.sum(axis=0), cmap="Greys")
axes[0].set_title("inputs")
for ax, (name, bary) in zip(axes[1:], results.items()):
    ax.imshow(bary, cmap="Greys")
    ax.set_title(f"{name}\nmean $W_2^2$ = {scores[name]:.4f}", fontsize=9)
for ax in axes:
    ax.set_axis_off()
fig.tight_layout()
plt.show()
