"""Ready-made problems with compiled oracles and known optima (``problem.fopt``,
``problem.xopt``), used by the tour, the tests, the docs and the benchmarks."""

from ._matrix import brockett, pca, procrustes, spectrum_matrix

__all__ = ["pca", "procrustes", "brockett", "spectrum_matrix"]
