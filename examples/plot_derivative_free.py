"""
A cost without a gradient on the sphere
=======================================

A cost known only by its values (a simulation, a black box) on the unit sphere of
:math:`\\mathbb R^3`: three Gaussian wells of depths 0.8, 1 and 1.3,

.. math::

   f(x) = -\\sum_{k=1}^3 d_k\\, e^{-4\\|x - c_k\\|^2}, \\qquad \\|x\\| = 1 .

The problem has a cost and no gradient (``jitopt.Problem(manifold, cost)``), which only the
derivative-free methods take (:doc:`/theory/derivative_free`). Started in the shallowest
well, Nelder–Mead converges to that well's minimum; a particle swarm of 40 points, seeded,
finds the deepest. A dense grid confirms the global minimum. We plot the best cost
against the cost evaluations.
"""

import matplotlib.pyplot as plt
import numpy as np

import jitopt
from jitopt.manifolds import Sphere

centres = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, -0.6, 0.8]])
depths = np.array([1.0, 1.3, 0.8])


def wells(x):
    return float(-depths @ np.exp(-4.0 * np.sum((x - centres) ** 2, axis=1)))


problem = jitopt.Problem(Sphere(3), wells)  # no egrad
start = centres[2]  # the bottom of the shallowest well
simplex = jitopt.solvers.nelder_mead(problem, start, rng=0, history=True)
swarm = jitopt.solvers.particle_swarm(problem, start, swarm_size=40, rng=0, history=True)

t, p = np.meshgrid(np.linspace(0, np.pi, 181), np.linspace(0, 2 * np.pi, 361))
grid = np.stack([np.sin(t) * np.cos(p), np.sin(t) * np.sin(p), np.cos(t)], -1).reshape(-1, 3)
best = min(wells(g) for g in grid)
for name, res in (("nelder_mead", simplex), ("particle_swarm", swarm)):
    print(f"{name:>14}: {res.status.name}, f = {res.fun:.6f}, {res.nfev} evaluations, "
          f"njev = {res.njev}, {res.stationarity_measure} {res.stationarity:.1e}")
print(f"{'grid':>14}: f = {best:.6f} (an upper bound of the minimum)")

# %%
# The simplex shrinks onto the minimum of the well it starts in in about a hundred
# evaluations; the swarm spends thousands, and finds the deepest well.

fig, ax = plt.subplots(figsize=(6, 4))
for name, res in (("nelder_mead", simplex), ("particle_swarm", swarm)):
    h = res.history
    ax.plot(h["nfev"], h["fun"], label=name)
ax.axhline(best, color="gray", linestyle=":", label="grid minimum")
ax.set_xscale("log")
ax.set_xlabel("cost evaluations")
ax.set_ylabel("best cost")
ax.legend()
fig.tight_layout()
plt.show()
