"""
Online DCA with adaptive sampling on drifting robust regression
================================================================

The online sparse robust regression of Ye, Cui and Wang (ICML 2025):

.. math::

   \\min_{\\beta \\in [-100, 100]^p}\\; \\mathbb E\\,|y - x^\\top\\beta|
   + \\lambda \\sum_j \\min(1, \\alpha|\\beta_j|),

where the data of iteration :math:`t` are :math:`x \\sim U[-1, 1]^p` and
:math:`y = x^\\top(\\beta^* + \\delta_t) + \\varepsilon` with a drift
:math:`\\delta_t = (-1)^t\\, 100\\, t^{-2}` that dies out. The limit problem has the known
solution :math:`\\beta^* = (10, -15, 0, \\dots)` (``problem.xopt``).

We compare :func:`jitopt.solvers.online_dca` with the paper's adaptive sample-size rule,
with the variance-based norm test (``rule="norm_test"``, a departure from the paper), with
the schedule :math:`N_k = \\lceil k^{2.1}\\rceil`, and a projected minibatch
stochastic subgradient method (batch 100, step :math:`0.3/\\sqrt k`), all on the same
stream, and plot the distance to :math:`\\beta^*` against the number of samples drawn.
See :doc:`/theory/dc`.
"""

import math

import matplotlib.pyplot as plt
import numpy as np

import jitopt

problem = jitopt.problems.online_sparse_robust_regression(p=20)
beta_star = problem.xopt
budget = 100_000

curves = {}
for rule in ("adaptive", "norm_test", "schedule"):
    dist = []
    res = jitopt.solvers.online_dca(problem, rule=rule, max_samples=budget, maxiter=10**6,
                                    rng=0, history=True,
                                    callback=lambda x: dist.append(np.linalg.norm(x - beta_star)))
    # history row 0 is the start; the callback sees iterations 1, 2, ...
    curves[f"online DCA, {rule}"] = (res.history["samples"][1:], np.array(dist))
    print(f"{rule:>9}: {res.nit:4d} iterations, {res.samples} samples, "
          f"||beta - beta*|| = {dist[-1]:.4f}")

# projected minibatch stochastic subgradient on the same stream (8x the sample budget)
rng = np.random.default_rng(0)
pen = problem.penalty
beta = np.zeros(problem.dim)
samples, dist = [], []
for k in range(1, 8 * budget // 100 + 1):
    A, b = problem.stream.draw(k, 100, rng)
    g = A.T @ np.sign(A @ beta - b) / 100 + pen.g_weight * np.sign(beta) - pen.h_subgradient(beta)
    beta = np.clip(beta - 0.3 / math.sqrt(k) * g, -100, 100)
    if k % 10 == 0:
        samples.append(100 * k)
        dist.append(np.linalg.norm(beta - beta_star))
curves["stochastic subgradient"] = (np.array(samples), np.array(dist))
print(f"subgradient: {samples[-1]} samples, ||beta - beta*|| = {dist[-1]:.4f}")

fig, ax = plt.subplots(figsize=(6.5, 4))
for label, (s, d) in curves.items():
    ax.loglog(s, d, label=label)
ax.axhline(0.1, color="gray", lw=0.8, ls="--")
ax.set_xlabel("samples drawn")
ax.set_ylabel(r"$\|\beta_k - \beta^*\|$")
ax.set_title("Drifting robust regression (p = 20)")
ax.legend()
fig.tight_layout()
plt.show()
