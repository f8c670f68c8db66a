"""The contract-suite case of ``online_dca``: a noise-free regression whose batches all have
the same minimizer.

Squared loss on rows drawn at random from a fixed data set with ``b = A @ beta``, plus a
capped-l1 penalty that is flat at ``beta`` (every ``|beta_j| >= 1``): ``beta`` is the
critical point the proximal DCA reaches from 0, whatever the batches.
"""

import numpy as np

from jitopt.problems import CappedL1, DCProblem, StreamProblem

BETA = np.array([2.0, -1.5, 1.25])


def make(fault=None, at=3):
    """``(problem, x0, options)``; ``fault="raise"`` or ``"nan"``: the sampler raises
    ``ZeroDivisionError`` or returns NaN data at its ``at``-th call."""
    data = np.random.default_rng(0).standard_normal((200, BETA.size))
    calls = [0]

    def sample(t, size, rng):
        calls[0] += 1
        if calls[0] == at and fault == "raise":
            raise ZeroDivisionError("the sampler failed")
        A = data[rng.integers(0, len(data), size)]
        b = A @ BETA
        if calls[0] == at and fault == "nan":
            b[0] = np.nan
        return A, b

    problem = DCProblem(StreamProblem(sample), BETA.size, loss="squared",
                        penalty=CappedL1(0.01), xopt=BETA)
    return problem, None, {"rule": "fixed", "n0": 20, "maxiter": 30}
