"""Contract-suite case of ``iht``: 2-sparse least squares on 30 x 6 data whose best
2-subset is {0, 3} (a strong signal on those columns, checked by enumeration in
tests/test_iht.py). The healthy case is the built-in least-squares problem; the fault cases
are a ``jitopt.Problem`` with Python oracles on ``Euclidean(6)`` for the same cost, whose
gradient raises ``ZeroDivisionError`` (``fault="raise"``) or returns NaN (``"nan"``) from
its ``at``-th call on."""

import numpy as np

import jitopt

K = 2
SUPPORT = (0, 3)


def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 6))
    beta = np.zeros(6)
    beta[list(SUPPORT)] = [2.0, -1.5]
    return X, X @ beta + 0.1 * rng.standard_normal(30)


class FaultyGradient:
    """``X^T (X w - y) / n``, failing from its ``at``-th call on."""

    def __init__(self, X, y, fault, at):
        self.X, self.y, self.fault, self.at = X, y, fault, at
        self.calls = 0

    def __call__(self, w):
        self.calls += 1
        if self.fault is not None and self.calls >= self.at:
            if self.fault == "raise":
                raise ZeroDivisionError("injected fault")
            return np.full(w.shape, np.nan)
        return self.X.T @ (self.X @ w - self.y) / self.y.shape[0]


def make(fault=None, at=3):
    X, y = data()
    options = {"k": K, "maxiter": 30}
    x0 = np.full(6, 0.1)
    if fault is None:
        return jitopt.problems.least_squares(X, y), x0, options

    def cost(w):
        r = X @ w - y
        return 0.5 * float(r @ r) / y.shape[0]

    problem = jitopt.Problem(jitopt.manifolds.Euclidean(6), cost,
                             FaultyGradient(X, y, fault, at))
    return problem, x0, options
