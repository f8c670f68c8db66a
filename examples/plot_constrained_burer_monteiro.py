"""
A balanced cut by Burer–Monteiro: an SDP with a linear constraint, on a factor
==============================================================================

The minimum-bisection relaxation of a graph with Laplacian :math:`L` is the semidefinite
program

.. math::

   \\min_{X \\succeq 0} \\langle C, X\\rangle, \\quad C = -L/4, \\quad
   \\operatorname{diag}(X) = 1, \\quad \\langle \\mathbf 1\\mathbf 1^\\top, X\\rangle = 0

(its negative bounds the largest balanced cut from above). Burer and Monteiro write
:math:`X = V^\\top V` with :math:`V` of size :math:`p \\times n`: the unit diagonal makes
the columns of :math:`V` unit vectors, the :class:`~jitopt.manifolds.Oblique` manifold,
and the one linear constraint :math:`V\\mathbf 1 = 0` is left to
:func:`jitopt.solvers.ralm` (see :doc:`/theory/constrained`) as ``p`` equalities.

The run's multipliers give a certificate: with :math:`y_i` the multipliers of the unit
columns read from the stationarity condition and any scalar :math:`z`,
:math:`\\langle C, X\\rangle \\ge n\\min(\\lambda_{\\min}(C + \\operatorname{diag}(y) +
z\\mathbf 1\\mathbf 1^\\top), 0) - \\sum_i y_i` for every feasible :math:`X`, so the
distance of the value found to that bound is a certified optimality gap. A balanced cut
is then read off by a random hyperplane, split at its median.
"""

import matplotlib.pyplot as plt
import numpy as np
from scipy.optimize import minimize_scalar

import jitopt
from jitopt.manifolds import Oblique

n, p = 60, 12
rng = np.random.default_rng(0)
adjacency = np.triu((rng.random((n, n)) < 0.2).astype(float), 1)
adjacency += adjacency.T
laplacian = np.diag(adjacency.sum(1)) - adjacency
C = -laplacian / 4.0
ones = np.ones(n)

problem = jitopt.ConstrainedProblem(
    Oblique(p, n), lambda V: float(np.sum((V @ C) * V)), lambda V: 2.0 * V @ C,
    eq=lambda V: V @ ones, eq_vjp=lambda V, v: np.outer(v, ones))
res = jitopt.solvers.ralm(problem, Oblique(p, n).random_point(0), history=True)

# The certificate: stationarity on the oblique manifold reads 2 V C + lam 1^T = V diag(d),
# so y = -d/2 are the multipliers of the unit columns; z is chosen to raise the bound.
V = res.x
y = -0.5 * np.einsum("ij,ij->j", V, 2.0 * V @ C + np.outer(res.eq_multipliers, ones))


def smallest_eigenvalue(z):
    return np.linalg.eigvalsh(C + np.diag(y) + z)[0]


z = minimize_scalar(lambda z: -smallest_eigenvalue(z), bounds=(-100.0, 100.0),
                    method="bounded").x
bound = n * min(smallest_eigenvalue(z), 0.0) - y.sum()

# A balanced cut from random hyperplanes through the factor (the best of 100).
cuts = []
for _ in range(100):
    side = rng.standard_normal(p) @ V
    signs = np.where(side > np.median(side), 1.0, -1.0)
    cuts.append((signs @ laplacian @ signs / 4.0, signs))
best_cut, signs = max(cuts, key=lambda item: item[0])

print(f"ralm: {res.status.name}, {res.nit} outer iterations, violation "
      f"{res.max_violation:.1e}, KKT residual {res.stationarity:.1e}")
print(f"SDP value {res.fun:.6f} >= certified bound {bound:.6f} "
      f"(gap {res.fun - bound:.1e})")
print(f"balanced cut {best_cut:.0f} edges of {adjacency.sum() / 2:.0f}, "
      f"at most {-bound:.2f} by the certificate")

fig, axes = plt.subplots(1, 2, figsize=(9, 3.8))
h = res.history
axes[0].semilogy(h["iteration"], h["stationarity"], marker=".", label="KKT residual")
axes[0].semilogy(h["iteration"], np.maximum(h["max_violation"], 1e-17), marker=".",
                 label="violation of V1 = 0")
axes[0].set_xlabel("outer iteration")
axes[0].legend()
axes[0].set_title("ralm on Oblique(12, 60)")
axes[1].bar(np.arange(1, p + 1), np.linalg.svd(V, compute_uv=False) ** 2)
axes[1].set_xlabel("i")
axes[1].set_title("eigenvalues of X = VᵀV (its rank)")
fig.tight_layout()
plt.show()
