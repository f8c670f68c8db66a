"""
EVI: correlated equilibria and ALCE of Bach or Stravinsky
=========================================================

Bach or Stravinsky: both players prefer to meet, player 1 at Bach (payoffs (3, 2)), player 2
at Stravinsky ((2, 3)); 0 if they miss each other. Its correlated equilibria (CE) have
marginals :math:`(x, y)` (the probabilities that each player goes to Bach) filling a
polygon; the anonymous linear correlated equilibria (ALCE, the solutions of the EVI for all
affine deviations) are a strict subset whose boundary the EVI paper conjectures to be the
hyperbola :math:`10x^2 - 25xy + 10y^2 - 6x + 11y = 0` (its Figure 1; see
:doc:`/theory/evi`).

This example draws the CE marginals by the CE linear program over pure profiles, the ALCE
marginals by a linear program over distributions supported on a grid of mixed profiles
(the ALCE constraints are linear in the weights once the support is fixed), and the
marginals of ALCE computed by :func:`jitopt.solvers.evi` from random starts. From those
starts the solver ends at the two pure Nash equilibria, which are exact ALCE; the grid LP
shows the whole set, whose lower-right boundary follows the hyperbola.
"""

import matplotlib.pyplot as plt
import numpy as np
from scipy.optimize import linprog

from jitopt.games import NormalFormGame

game = NormalFormGame([[[3.0, 0.0], [0.0, 2.0]], [[2.0, 0.0], [0.0, 3.0]]])
angles = np.linspace(0, 2 * np.pi, 32, endpoint=False)

# %%
# CE marginals: the support function of the CE polytope in each direction. The pure
# profiles are ordered (B, B), (B, S), (S, B), (S, S); :math:`x` and :math:`y` are linear in
# the distribution.
A_ub = game.ce_constraints()
mx, my = np.array([1.0, 1.0, 0.0, 0.0]), np.array([1.0, 0.0, 1.0, 0.0])


def hull(A, objective_x, objective_y, A_eq):
    pts = []
    for a in angles:
        c = -(np.cos(a) * objective_x + np.sin(a) * objective_y)
        r = linprog(c, A_ub=A, b_ub=np.zeros(A.shape[0]), A_eq=A_eq, b_eq=[1.0],
                    bounds=(0, None), method="highs")
        pts.append((objective_x @ r.x, objective_y @ r.x))
    return np.array(pts + pts[:1])


ce = hull(A_ub, mx, my, np.ones((1, 4)))

# %%
# ALCE marginals on a grid of mixed profiles: for each player :math:`i`, source block
# :math:`j` and deterministic column-stochastic :math:`2 \times 2` matrix :math:`S`,
# :math:`\mathbb E_\mu[u_i(S x_j, x_{-i}) - u_i(x)] \le 0`, linear in the weights of
# :math:`\mu`.
g = np.linspace(0, 1, 26)
P, Q = [a.ravel() for a in np.meshgrid(g, g, indexing="ij")]
X = np.stack([P, 1 - P, Q, 1 - Q], axis=1)  # points of the product of simplices
F = np.array([game.operator(x) for x in X])
maps = [np.array(S, dtype=float) for S in ([[1, 1], [0, 0]], [[0, 0], [1, 1]],
                                           [[1, 0], [0, 1]], [[0, 1], [1, 0]])]
rows = []
for i in range(2):
    for j in range(2):
        for S in maps:
            dev = X[:, 2 * j:2 * j + 2] @ S.T  # S x_j
            # gain of the deviation = <F_i, x_i> - <F_i, S x_j>  (F = -grad u)
            rows.append(np.einsum("ka,ka->k", F[:, 2 * i:2 * i + 2], X[:, 2 * i:2 * i + 2] - dev))
alce = hull(np.array(rows), P, Q, np.ones((1, P.size)))

# %%
# ALCE from the EVI solver (all affine deviations, ``deviations="linear"``, with the
# reweighting LP) from random starts.
evi_marginals = []
for seed in range(6):
    res = game.correlated_equilibrium(tol=1e-4, deviations="linear", rng=seed, reweight=True)
    m = res.weights @ res.points
    evi_marginals.append((m[0], m[2]))
evi_marginals = np.array(evi_marginals)
print("largest x - y over the EVI solutions:", (evi_marginals[:, 0] - evi_marginals[:, 1]).max())
print("CE: max x - y =", (ce[:, 0] - ce[:, 1]).max(), " ALCE (grid LP): max x - y =",
      (alce[:, 0] - alce[:, 1]).max())

# %%
fig, ax = plt.subplots(figsize=(5.2, 5))
ax.fill(ce[:, 0], ce[:, 1], color="tab:blue", alpha=0.25, label="CE marginals")
ax.fill(alce[:, 0], alce[:, 1], color="tab:orange", alpha=0.5, label="ALCE marginals (grid LP)")
xx, yy = np.meshgrid(np.linspace(0, 1, 400), np.linspace(0, 1, 400))
hyperbola = 10 * xx**2 - 25 * xx * yy + 10 * yy**2 - 6 * xx + 11 * yy
hyperbola[xx - yy > 0.45] = np.nan  # keep the branch through the three equilibria
ax.contour(xx, yy, hyperbola, levels=[0],
           colors="k", linewidths=0.8, linestyles="--")
ax.plot([], [], "k--", lw=0.8, label="conjectured ALCE boundary")
ax.scatter([1, 0, 0.6], [1, 0, 0.4], marker="*", s=160, c="k", zorder=3, label="Nash equilibria")
ax.scatter(evi_marginals[:, 0], evi_marginals[:, 1], facecolors="none", edgecolors="tab:red",
           s=70, lw=1.5, zorder=4, label="EVI solver (ALCE), 6 starts")
ax.set_xlabel("x = P(player 1 plays B)")
ax.set_ylabel("y = P(player 2 plays B)")
ax.set_xlim(-0.02, 1.02)
ax.set_ylim(-0.02, 1.02)
ax.legend(loc="upper left", fontsize=8)
ax.set_title("Bach or Stravinsky: CE vs ALCE marginals")
plt.show()
