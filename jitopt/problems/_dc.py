r"""The online sparse robust regression of Ye, Cui and Wang (ICML 2025, Sec. 6), a stochastic
DC problem with drifting data and a known limit optimum."""

import math

import numpy as np
from scipy.special import ndtr

from .._validation import check_int, check_real
from ..sets import Box
from ..solvers.dc import CappedL1, DCProblem, StreamProblem

__all__ = ["online_sparse_robust_regression"]


def online_sparse_robust_regression(p=50, beta_star=(10.0, -15.0), lam=0.01, alpha=1.0,
                                    drift=100.0, bound=100.0):
    r"""Online sparse robust regression with a capped-:math:`\ell_1` penalty and drifting data.

    .. math::

        \min_{\beta \in [-r, r]^p}\; \mathbb E\,|y - x^\top\beta|
        + \lambda \sum_j \min(1, \alpha|\beta_j|),

    where at iteration :math:`t` the samples are :math:`x \sim U[-1, 1]^p`,
    :math:`y = x^\top(\beta^* + \delta_t) + \varepsilon`, :math:`\varepsilon \sim N(0, 1)`,
    with the drift :math:`\delta_t = (-1)^t c\, t^{-2} \mathbf 1_p` (summable, so the laws
    converge to the limit law with :math:`\delta = 0`). DC split: the LAD loss plus
    :math:`\lambda\alpha\|\beta\|_1` is convex, :math:`\lambda\sum_j\max(0, \alpha|\beta_j|-1)`
    is the deterministic concave part.

    Under the limit law the loss is :math:`\mathbb E_x[z(2\Phi(z) - 1) + 2\varphi(z)]` with
    :math:`z = x^\top(\beta - \beta^*)`, uniquely minimized at :math:`\beta^*`; when every
    nonzero :math:`|\beta^*_j| \ge 1/\alpha` the penalty is flat there and :math:`\beta^*` is
    the global minimizer with value
    :math:`F^* = \sqrt{2/\pi} + \lambda\,\#\{j : \beta^*_j \ne 0\}` (0.817885 for the paper's
    :math:`\beta^* = (10, -15, 0, \dots)`, :math:`\lambda = 0.01`).

    Parameters
    ----------
    p : int
        Dimension.
    beta_star : array_like
        The leading coefficients of :math:`\beta^*` (the rest are zero); each nonzero must
        satisfy :math:`|\beta^*_j| \ge 1/\alpha` and lie inside the box.
    lam, alpha : float
        Penalty parameters.
    drift : float
        The drift scale :math:`c` (100 in the paper's main experiment, 5000 in App. D).
    bound : float
        The box radius :math:`r` (a bounded constraint set, as the theory requires).

    Returns
    -------
    DCProblem
        With ``xopt`` = :math:`\beta^*`, ``fopt`` = :math:`F^*` and ``limit_fun(beta, n=200000,
        seed=0)``, a Monte Carlo estimate of the limit objective (closed form in the noise).
    """
    p = check_int("p", p, low=1)
    lam = check_real("lam", lam, low=0.0)
    alpha = check_real("alpha", alpha, low=0.0, low_open=True)
    drift = check_real("drift", drift, low=0.0)
    bound = check_real("bound", bound, low=0.0, low_open=True)
    lead = np.array(beta_star, dtype=float).ravel()
    if lead.size > p:
        raise ValueError(f"beta_star has {lead.size} entries, more than p = {p}")
    beta = np.zeros(p)
    beta[:lead.size] = lead
    nz = beta[beta != 0]
    if np.any(alpha * np.abs(nz) < 1) or np.any(np.abs(nz) > bound):
        raise ValueError("every nonzero of beta_star must satisfy 1/alpha <= |beta_j| <= bound")

    def sample(t, size, rng):
        X = rng.uniform(-1.0, 1.0, (size, p))
        shift = (-1.0) ** t * drift / float(t) ** 2
        y = X @ (beta + shift) + rng.standard_normal(size)
        return X, y

    penalty = CappedL1(lam, alpha)
    fopt = math.sqrt(2 / math.pi) + float(penalty.value(beta))

    def limit_fun(b, n=200000, seed=0):
        X = np.random.default_rng(seed).uniform(-1.0, 1.0, (n, p))
        z = X @ (np.asarray(b, dtype=float) - beta)
        loss = np.mean(z * (2 * ndtr(z) - 1) + 2 * np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi))
        return float(loss + penalty.value(b))

    return DCProblem(StreamProblem(sample), p, loss="lad", penalty=penalty,
                     constraint=Box(-bound, bound), xopt=beta, fopt=fopt, limit_fun=limit_fun,
                     name=f"online sparse robust regression (p = {p})")
