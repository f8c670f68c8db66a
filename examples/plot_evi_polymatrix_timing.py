"""
EVI: correlated equilibria of polymatrix games, time against the number of players
==================================================================================

A polymatrix game with :math:`n` players on a ring, 3 actions each, has :math:`3^n` pure
profiles: the correlated-equilibrium (CE) linear program over them grows exponentially.
The EVI solver (:func:`jitopt.solvers.evi`, block-diagonal deviations, with the column
generation over its iterates, the default of ``correlated_equilibrium``) works with the
:math:`3n` coordinates of mixed profiles. This example
times both to a CE gap of :math:`10^{-3}` (the sum over players), the LP only while it is
small (every time in the figure is measured in this run, after a first call that compiles
the kernels); ``python -m benchmarks evi`` runs the full comparison, and the theory is in
:doc:`/theory/evi`.

The figure shows the LP's time rising by a factor of about 2.5 to 3 per added player
from :math:`n = 6` on (its size is :math:`3^n`), while the EVI solver's time grows polynomially in :math:`n`
(the printed exponent) and stays under a second up to 30 players.
"""

import time

import matplotlib.pyplot as plt
import numpy as np

from jitopt.games import PolymatrixGame

PolymatrixGame.ring(4, 3, rng=0).correlated_equilibrium(rng=0)  # compile first


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


lp_n, lp_t, evi_n, evi_t = [], [], [], []
for n in range(4, 31):
    game = PolymatrixGame.ring(n, 3, rng=0)
    t, res = timed(lambda: game.correlated_equilibrium(tol=1e-3, rng=0))
    evi_n.append(n)
    evi_t.append(t)
    if n <= 8:
        t, lp = timed(lambda: game.ce_lp())
        lp_n.append(n)
        lp_t.append(t)
        nf = game.to_normal_form()
        print(f"n = {n}: CE LP {lp_t[-1]:.3f} s (CE gap {nf.ce_gap(lp.dist).sum():.1e}), "
              f"EVI {evi_t[-1]:.3f} s (CE gap {res.gap:.1e}, recomputed "
              f"{nf.ce_gap(nf.joint_distribution(res.points, res.weights)).sum():.1e})")

slope = np.polyfit(np.log(evi_n[4:]), np.log(evi_t[4:]), 1)[0]
print(f"EVI time grows like n^{slope:.2f}")

fig, ax = plt.subplots(figsize=(6, 4))
ax.semilogy(lp_n, lp_t, "o-", label="CE LP over 3^n profiles (HiGHS)")
ax.semilogy(evi_n, evi_t, "s-", label="EVI solver (CE deviations, reweighted)")
ax.set_xlabel("number of players n")
ax.set_ylabel("time to CE gap 1e-3 (s)")
ax.legend(fontsize=8)
ax.set_title("Ring polymatrix games, 3 actions")
plt.show()
