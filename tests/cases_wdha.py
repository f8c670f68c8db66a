"""The contract suite's case for ``wdha``: two translated squares on a 16 x 16 grid, whose
barycenter with weights (1/2, 1/2) is the square halfway between them."""

import numpy as np

import jitopt


def make(fault=None, at=3):
    """``(problem, x0, options)``: two squares of side 4 cells, 8 rows and 4 columns apart;
    the barycenter is the square at rows 6..9, columns 4..7, at W2^2 = 0.25^2 + 0.125^2
    from each input. ``x0`` is a uniform density (the default start is the first input)."""
    if fault is not None:
        # a barycenter problem has no user oracle (only the densities and weights), so
        # there is nothing that could raise or return NaN at its at-th call
        return None
    A = np.zeros((2, 16, 16))
    A[0, 2:6, 2:6] = 1.0
    A[1, 10:14, 6:10] = 1.0
    return jitopt.problems.BarycenterProblem(A), np.ones((16, 16)), {"maxiter": 20}
