"""Contract-suite case of the constrained methods (ralm, repm): nonnegative PCA of an
entrywise positive matrix on the sphere, whose answer is the Perron vector (constraints
inactive), started at a point with negative entries."""

import numpy as np

import jitopt
from jitopt.manifolds import Sphere

DIM = 5


class Counting:
    """An oracle that counts its calls and can fail at its ``at``-th call (``fault="raise"``:
    ZeroDivisionError, ``"nan"``: a NaN result)."""

    def __init__(self, f, fault=None, at=3):
        self.f, self.fault, self.at, self.calls = f, fault, at, 0

    def __call__(self, x):
        self.calls += 1
        out = self.f(x)
        if self.fault is not None and self.calls >= self.at:
            if self.fault == "raise":
                raise ZeroDivisionError("injected fault")
            return out * np.nan
        return out


def matrix():
    """A symmetric matrix with positive entries (its top eigenvector is positive)."""
    rng = np.random.default_rng(0)
    B = rng.uniform(0.1, 1.0, (DIM, DIM))
    return B + B.T


def make(fault=None, at=3):
    A = matrix()
    egrad = Counting(lambda x: -2.0 * A @ x, fault, at)
    problem = jitopt.ConstrainedProblem(Sphere(DIM), lambda x: -x @ A @ x, egrad, lower=0.0,
                                        fopt=-np.linalg.eigvalsh(A)[-1])
    x0 = np.array([0.6, -0.5, 0.4, -0.3, 0.2])
    return problem, x0 / np.linalg.norm(x0), {"maxiter": 40}
