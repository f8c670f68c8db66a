"""Contract-suite case of the derivative-free methods (nelder_mead, particle_swarm): a
Rayleigh quotient on Sphere(4) given by its cost alone (no gradient), whose cost can fail at
its ``at``-th call."""

import numpy as np

import jitopt
from jitopt.manifolds import Sphere

A = np.diag([1.0, 2.0, 4.0, 7.0])


class Counting:
    """The cost, counting its calls, failing from its ``at``-th call on (``fault="raise"``:
    ZeroDivisionError, ``"nan"``: a NaN value)."""

    def __init__(self, fault=None, at=3):
        self.fault, self.at, self.calls = fault, at, 0

    def __call__(self, x):
        self.calls += 1
        if self.fault is not None and self.calls >= self.at:
            if self.fault == "raise":
                raise ZeroDivisionError("injected fault")
            return np.nan
        return float(x @ A @ x)


def make(fault=None, at=3):
    problem = jitopt.Problem(Sphere(4), Counting(fault, at), fopt=1.0)
    return problem, np.full(4, 0.5), {"maxiter": 30}
