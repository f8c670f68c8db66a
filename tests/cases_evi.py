"""The contract suite's case for ``evi``: the strongly monotone operator F(x) = x - c on the
probability simplex of R^3, whose VI solution is c (a point of the simplex). A mixture with
constant-deviation gap eps has E||x - c||^2 <= eps (the deviation to c), so the returned
mean is within sqrt(tol) = 0.1 of c; the healthy case converges within its 100 rounds."""

import numpy as np

from jitopt.problems import VIProblem
from jitopt.sets import Simplex

C = np.array([0.2, 0.3, 0.5])


class Operator:
    """``F(x) = x - c``, counting its calls; at its ``at``-th call and after it raises
    ZeroDivisionError (``fault="raise"``) or returns NaN (``fault="nan"``)."""

    def __init__(self, fault=None, at=3):
        self.fault, self.at, self.calls = fault, at, 0

    def __call__(self, x):
        self.calls += 1
        if self.fault is not None and self.calls >= self.at:
            if self.fault == "raise":
                raise ZeroDivisionError("injected fault")
            return np.full(3, np.nan)
        return x - C


def make(fault=None, at=3):
    """``(problem, x0, options)``: one gap check per round (``check_every=1``), so each
    round is one iteration of the callback and the history."""
    problem = VIProblem(Operator(fault, at), Simplex(), dim=3)
    return problem, None, {"tol": 1e-2, "check_every": 1, "maxiter": 100}
