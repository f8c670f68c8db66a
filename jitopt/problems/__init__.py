"""Problem types and ready-made problems.

The problem types beyond :class:`jitopt.Problem` and :class:`jitopt.FiniteSumProblem`:
stochastic difference-of-convex problems (:class:`StreamProblem`, :class:`DCProblem` and the
penalties), variational inequalities (:class:`VIProblem` and its operators) and Wasserstein
barycenters (:class:`BarycenterProblem`). The ready-made problems have compiled oracles and
known optima (``problem.fopt``, ``problem.xopt``), used by the tour, the tests, the docs and
the benchmarks. Nothing here imports a solver."""

from ._barycenter import BarycenterProblem
from ._dc import DCProblem, online_sparse_robust_regression
from ._dc_penalties import MCP, SCAD, CappedL1, DCPenalty, L1MinusL2
from ._finite_sum import (commuting_spd_samples, finite_sum_pca, karcher_mean,
                          leading_eigenvector, robust_pca, spiked_samples)
from ._matrix import brockett, linear_cost, pca, procrustes, spectrum_matrix
from ._sparse import LeastSquares, Logistic, least_squares, logistic, sparse_regression_data
from ._stream import StreamProblem
from ._vi import AffineOperator, NormalFormOperator, VIProblem

__all__ = ["pca", "procrustes", "brockett", "linear_cost", "spectrum_matrix",
           "finite_sum_pca", "leading_eigenvector", "robust_pca", "karcher_mean",
           "spiked_samples", "commuting_spd_samples", "least_squares", "logistic",
           "LeastSquares", "Logistic",
           "sparse_regression_data", "online_sparse_robust_regression",
           "StreamProblem", "DCProblem", "DCPenalty", "CappedL1", "SCAD", "MCP", "L1MinusL2",
           "VIProblem", "AffineOperator", "NormalFormOperator", "BarycenterProblem"]
