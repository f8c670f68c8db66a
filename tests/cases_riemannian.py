"""Contract-suite case of the Riemannian methods (rgd, rsdm, srge and the SERENA presets): a
small finite-sum PCA on the Stiefel manifold (a finite sum is also a plain problem, so
deterministic and stochastic methods both take it)."""

import numpy as np

import jitopt
from jitopt.manifolds import Stiefel

N_SAMPLES, DIM, RANK = 40, 6, 2


class Counting:
    """A per-sample oracle that counts its calls and samples and can fail at its ``at``-th
    call (``fault="raise"``: ZeroDivisionError, ``"nan"``: a NaN result)."""

    def __init__(self, f, fault=None, at=3):
        self.f, self.fault, self.at = f, fault, at
        self.calls = self.samples = 0

    def __call__(self, x, idx):
        self.calls += 1
        self.samples += len(idx)
        out = self.f(x, idx)
        if self.fault is not None and self.calls >= self.at:
            if self.fault == "raise":
                raise ZeroDivisionError("injected fault")
            return out * np.nan
        return out


def counted(fault=None, at=3):
    """``(problem, x0, options, cost, egrad)`` with the counting user oracles."""
    rng = np.random.default_rng(0)
    z = rng.standard_normal((N_SAMPLES, DIM)) * np.array([3.0, 2.0, 1.0, 0.5, 0.3, 0.2])
    cost = Counting(lambda x, idx: -np.sum((z[idx] @ x) ** 2) / len(idx))
    egrad = Counting(lambda x, idx: -2.0 * z[idx].T @ (z[idx] @ x) / len(idx), fault, at)
    fopt = -np.linalg.eigvalsh(z.T @ z / N_SAMPLES)[-RANK:].sum()
    problem = jitopt.FiniteSumProblem(Stiefel(DIM, RANK), cost, egrad, N_SAMPLES, fopt=fopt)
    return problem, Stiefel(DIM, RANK).random_point(1), {"maxiter": 30}, cost, egrad


def make(fault=None, at=3):
    return counted(fault, at)[:3]
