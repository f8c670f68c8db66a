"""
WDHA: time per iteration against the grid size
===============================================

One WDHA iteration costs :math:`O(n\\,m\\log m)` for :math:`n` inputs of :math:`m` cells:
one Poisson solve, two exact Legendre transforms and one pushforward per input (see
:doc:`/theory/wdha`). POT's convolutional barycenter applies its Gaussian kernel by dense
matrix products, :math:`O(m^{3/2})` per blur. This example times a few iterations of both on
four translated disks for small grids (to keep the page fast) and plots the time per
iteration; the benchmark ``python -m benchmarks wdha`` extends the comparison to
:math:`1024 \\times 1024` and reports the accuracy of both against the exact barycenter.
"""

import time

import matplotlib.pyplot as plt
import numpy as np

from jitopt.problems import BarycenterProblem
from jitopt.transport import grid_coordinates, wdha

try:
    import ot
except ImportError:  # POT is optional: time WDHA alone
    ot = None


def disks(n):
    y, x = grid_coordinates((n, n))
    centres = [(0.3, 0.3), (0.7, 0.35), (0.35, 0.7), (0.7, 0.7)]
    return np.array([((y - a) ** 2 + (x - b) ** 2 <= 0.01) for a, b in centres], dtype=float)


def per_iteration(run, iters):
    t0 = time.perf_counter()
    run(iters)
    return (time.perf_counter() - t0) / iters


# compile (or load from the cache) first; the paper's variant has no warm start and no
# coarse-to-fine start, so its run time is the iterations alone (the same iteration as the
# default's)
wdha(BarycenterProblem(disks(16)), maxiter=2, variant="paper")
sizes = [32, 64, 96, 128]
iters = 5
times = {"WDHA": []}
if ot is not None:
    times["POT convolutional"] = []
for n in sizes:
    A = disks(n)
    problem = BarycenterProblem(A)
    times["WDHA"].append(per_iteration(lambda k: wdha(problem, maxiter=k, variant="paper"),
                                       iters))
    if ot is not None:
        An = A / A.sum(axis=(1, 2), keepdims=True)
        times["POT convolutional"].append(per_iteration(
            lambda k: ot.bregman.convolutional_barycenter2d(An, 2e-3, numItermax=k,
                                                            stopThr=0.0, warn=False), iters))
for name, t in times.items():
    print(f"{name:>18}: " + ", ".join(f"{n}^2 {1e3 * s:.1f} ms" for n, s in zip(sizes, t)))

# %%
# Log-log plot against the number of cells :math:`m = n^2`, with the slopes of
# :math:`m \log m` and :math:`m^{3/2}` for reference.

m = np.array(sizes, dtype=float) ** 2
fig, ax = plt.subplots(figsize=(6, 4))
for name, t in times.items():
    ax.loglog(m, 1e3 * np.array(t), "o-", label=name)
ref = 1e3 * times["WDHA"][0]
ax.loglog(m, ref * (m * np.log(m)) / (m[0] * np.log(m[0])), "k--", lw=0.8,
          label=r"$\propto m \log m$")
ax.loglog(m, ref * (m / m[0]) ** 1.5, "k:", lw=0.8, label=r"$\propto m^{3/2}$")
ax.set_xlabel("cells $m$")
ax.set_ylabel("ms per iteration (4 inputs)")
ax.legend()
fig.tight_layout()
plt.show()
