"""
Nonnegative PCA on the sphere: augmented Lagrangian and exact penalty
=====================================================================

The leading nonnegative direction of a symmetric matrix :math:`A`,

.. math::

   \\min_{\\|x\\| = 1} -x^\\top A x \\quad\\text{subject to}\\quad x \\ge 0,

is a sphere with extra constraints: a :class:`jitopt.ConstrainedProblem <jitopt.problems.ConstrainedProblem>` with
``lower=0``. When every entry of :math:`A` is positive, Perron–Frobenius makes the answer
the top eigenvector (positive, the constraints inactive), so the error of each run is
known. We start both constrained methods, :func:`jitopt.solvers.ralm` and
:func:`jitopt.solvers.repm` (see :doc:`/theory/constrained`), at a point with negative
entries and plot, per outer iteration, the KKT residual and the constraint violation read
from ``result.history``.
"""

import matplotlib.pyplot as plt
import numpy as np

import jitopt
from jitopt.manifolds import Sphere

n = 100
rng = np.random.default_rng(0)
B = rng.uniform(0.0, 1.0, (n, n))
A = B + B.T
w, V = np.linalg.eigh(A)
perron = np.abs(V[:, -1])  # positive: the known answer

problem = jitopt.ConstrainedProblem(Sphere(n), lambda x: -x @ A @ x,
                                    lambda x: -2.0 * (A @ x), lower=0.0)
x0 = Sphere(n).random_point(1)  # about half of its entries are negative

results = {"ralm": jitopt.solvers.ralm(problem, x0, history=True),
           "repm": jitopt.solvers.repm(problem, x0, history=True)}

for name, res in results.items():
    print(f"{name}: {res.status.name}, {res.nit} outer / {res.inner_nit} inner iterations, "
          f"|x - Perron| {np.linalg.norm(res.x - perron):.1e}, violation "
          f"{res.max_violation:.1e}, KKT residual {res.stationarity:.1e}")

fig, axes = plt.subplots(1, 2, figsize=(9, 3.5))
for name, res in results.items():
    h = res.history
    axes[0].semilogy(h["iteration"], h["stationarity"], marker=".", label=name)
    axes[1].semilogy(h["iteration"], np.maximum(h["max_violation"], 1e-17), marker=".",
                     label=name)
axes[0].set_title("KKT residual")
axes[1].set_title("constraint violation (0 shown at 1e-17)")
for ax in axes:
    ax.set_xlabel("outer iteration")
    ax.legend()
fig.tight_layout()
plt.show()
