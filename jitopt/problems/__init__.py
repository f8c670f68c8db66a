"""Problem types and ready-made problems.

The problem types beyond :class:`jitopt.Problem` and :class:`jitopt.FiniteSumProblem`:
stochastic difference-of-convex problems (:class:`StreamProblem`, :class:`DCProblem` and the
penalties), constrained problems on manifolds (:class:`ConstrainedProblem`, also
``jitopt.ConstrainedProblem``), variational inequalities (:class:`VIProblem` and its
operators) and Wasserstein barycenters (:class:`BarycenterProblem`). The ready-made problems have compiled oracles and
known optima (``problem.fopt``, ``problem.xopt``), used by the tour, the tests, the docs and
the benchmarks. Nothing here imports a solver."""

from .._lazy import lazy_names

_NAMES = {
    "pca": "._matrix", "procrustes": "._matrix", "brockett": "._matrix",
    "linear_cost": "._matrix", "spectrum_matrix": "._matrix", "finite_sum_pca": "._finite_sum",
    "leading_eigenvector": "._finite_sum", "robust_pca": "._finite_sum",
    "karcher_mean": "._finite_sum", "spiked_samples": "._finite_sum",
    "commuting_spd_samples": "._finite_sum", "least_squares": "._sparse",
    "logistic": "._glm_loss", "LeastSquares": "._sparse", "Logistic": "._glm_loss",
    "sparse_regression_data": "._sparse", "online_sparse_robust_regression": "._dc",
    "StreamProblem": "._stream", "DCProblem": "._dc", "DCPenalty": "._dc_penalties",
    "CappedL1": "._dc_penalties", "SCAD": "._dc_penalties", "MCP": "._dc_penalties",
    "L1MinusL2": "._dc_penalties", "VIProblem": "._vi", "AffineOperator": "._vi",
    "NormalFormOperator": "._vi", "BarycenterProblem": "._barycenter",
    "ConstrainedProblem": ".._core.constrained",
    "poisson": "._poisson", "Poisson": "._poisson",
    "cox": "._cox", "Cox": "._cox",
}

#: what the other parts of jitopt use that is not public: compiled oracles (the DC losses by
#: their codes) and data checks
_SHARED = {
    "sample_rgrad": "._finite_sum_kernel", "least_squares_kernel": "._sparse_kernels", "logistic_kernel": "._sparse_kernels",
    "power_estimate": "._sparse", "normal_form_operator": "._vi",
    **{name: "._vi" for name in ("OP_EXTERNAL", "OP_AFFINE")}, "as_density": "._barycenter",
    "as_grid": "._barycenter", "check_weights": "._barycenter",
    **{name: "._dc_kernels" for name in ("HINGE", "HUBER", "LAD", "SQUARED", "loss_deriv",
                                         "loss_value", "row_dot")},
    **{name: "._finite_sum" for name in ("top_eigenpairs", "pca_cost", "pca_egrad",
                                         "robust_cost", "robust_egrad", "karcher_cost",
                                         "karcher_egrad")},
}

__all__ = list(_NAMES)
__getattr__, __dir__ = lazy_names(__name__, {**_NAMES, **_SHARED})
