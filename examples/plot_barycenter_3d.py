"""
Exact Wasserstein barycenter of a ball and a cube on a 3-D grid (WDHA and SGA)
===============================================================================

The pair of the SGA paper's 3-D example: a ball and a cube, here on a
:math:`32 \\times 32 \\times 32` grid over the unit cube, with weights
:math:`(\\tfrac12, \\tfrac12)`. ``jitopt.transport.wdha`` and ``jitopt.transport.sga``
take densities of shape ``(n, height, width, depth)`` as well as 2-D ones: every building
block (the exact Legendre transform, the Neumann inverse Laplacian, the pushforward)
separates by axis or acts cell by cell, so 3-D is the same method on 3-D kernels (see
:doc:`/theory/wdha`).

The barycenter lies halfway between the two shapes, a rounded cube. The picture shows the
slice through both centres. SGA also reports a certified lower bound of the optimal
:math:`\\sum_i\\lambda_i W_2^2` (its dual value), which the barycenters' own costs
(``fun``, an estimate) approach from above.
"""

import time

import matplotlib.pyplot as plt
import numpy as np

from jitopt.problems import BarycenterProblem
from jitopt.transport import grid_coordinates, sga, wasserstein2_grid, wdha

n = 32
y, x, z = grid_coordinates((n, n, n))
ball = ((y - 0.34) ** 2 + (x - 0.34) ** 2 + (z - 0.5) ** 2 <= 0.2 ** 2).astype(float)
cube = ((np.abs(y - 0.66) <= 0.15) & (np.abs(x - 0.66) <= 0.15)
        & (np.abs(z - 0.5) <= 0.15)).astype(float)
problem = BarycenterProblem(np.array([ball, cube]))

# a small run through every code path first: the times below exclude Numba's compilation
# (or its loading from the cache)
small = BarycenterProblem(np.array([ball, cube])[:, ::4, ::4, ::4])
wdha(small, maxiter=2)
sga(small, maxiter=2)

results = {}
for name, solver in (("WDHA", wdha), ("SGA", sga)):
    t0 = time.perf_counter()
    res = solver(problem)
    results[name] = res
    print(f"{name}: {res.status.name}, {res.nit} iterations, {time.perf_counter() - t0:.1f} s, "
          f"sum_i lambda_i W2^2 = {res.fun:.5f}")
print(f"SGA's certified lower bound (dual value): {results['SGA'].dual_value:.5f}")
gap = np.sqrt(wasserstein2_grid(results["WDHA"].x, results["SGA"].x)) * n
print(f"W2 between the two barycenters: {gap:.3f} cells")

k = n // 2  # the slice z = 0.5 through both centres
fig, axes = plt.subplots(1, 4, figsize=(12, 3.3))
panels = [("ball", ball), ("cube", cube), ("WDHA barycenter", results["WDHA"].x),
          ("SGA barycenter", results["SGA"].x)]
for ax, (title, rho) in zip(axes, panels):
    ax.imshow(rho[:, :, k] / rho.max(), cmap="Greys", vmin=0, vmax=1.2, origin="lower")
    ax.set_title(title)
    ax.set_axis_off()
fig.suptitle("slice z = 0.5 of the 32 x 32 x 32 grid")
fig.tight_layout()
plt.show()
