r"""jitopt on a Dask cluster: finite-sum problems whose samples are Dask arrays, and many
independent solves mapped over the workers (optional extra ``jitopt[dask]``).

A :class:`DaskFiniteSumProblem` is a :class:`~jitopt.FiniteSumProblem` to every solver:
the SERENA methods and the stochastic IHT run on it unchanged. Full passes run on the
workers, chunk by chunk, and only partial sums travel; the minibatches a solver announces
ahead (:meth:`~jitopt.FiniteSumProblem.prefetch`) are gathered to the client a window of
steps at a time; other minibatches are computed on the workers that hold their rows.

The built-in problems mirror those of :mod:`jitopt.problems` by name:
:func:`finite_sum_pca`, :func:`leading_eigenvector`, :func:`robust_pca`,
:func:`karcher_mean`, :func:`least_squares`, :func:`logistic`. Other problems are built from
a :class:`Kind`: importable module-level functions ``cost(x, data, idx, par)`` and
``egrad(x, data, idx, par)`` (means over the rows ``idx`` of a tuple of arrays ``data``),
optionally a fused ``sums(x, data, par)`` over all rows and ``prepare(*blocks)``.

:func:`map_solve` maps a solver over many independent jobs (barycenters, sparse fits,
equilibria), one task per group of jobs, and reports a failing job in its place.

See the guide page "Running on a Dask cluster" for the measured costs.
"""

from ._batch import JobError, map_solve
from ._builtin import (DaskLeastSquares, DaskLogistic, finite_sum_pca, karcher_mean,
                       leading_eigenvector, least_squares, logistic, robust_pca)
from ._chunks import ChunkLost, ChunkStore
from ._kernels import KINDS, Kind
from ._problem import DaskFiniteSumProblem

__all__ = ["DaskFiniteSumProblem", "DaskLeastSquares", "DaskLogistic", "Kind", "KINDS",
           "ChunkStore", "ChunkLost", "finite_sum_pca", "leading_eigenvector", "robust_pca",
           "karcher_mean", "least_squares", "logistic", "map_solve", "JobError"]
