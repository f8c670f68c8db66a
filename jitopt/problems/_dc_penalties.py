r"""Separable DC penalties :math:`p(x) = \lambda_g\|x\|_1 - h(x)` with :math:`h` convex."""

import numpy as np

from ..validation import check_real

__all__ = ["DCPenalty", "CappedL1", "SCAD", "MCP", "L1MinusL2"]


def _check_plateau(c, lam, what):
    """Refuse a ``lam`` whose plateau value ``c lam^2 / 2`` overflows float64."""
    if not np.isfinite(c * lam * lam):
        raise ValueError(f"lam is too large: {what} * lam^2 overflows float64, got lam = "
                         f"{lam!r}")


class DCPenalty:
    r"""A DC penalty written as :math:`p(x) = \lambda_g\|x\|_1 - h(x)` with :math:`h` convex.

    The :math:`\ell_1` part goes into the convex part of a :class:`~jitopt.problems.DCProblem`
    (where the subproblem solver handles it exactly), :math:`h` into its concave part. A
    subclass sets :attr:`g_weight` (:math:`\lambda_g \ge 0`) and defines ``h_value(x)``,
    the convex part :math:`h(x)` that is subtracted, and ``h_subgradient(x)``, a
    subgradient of :math:`h` at ``x`` (an array of the shape of ``x``).

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.problems import CappedL1, DCPenalty
    >>> penalty = CappedL1(0.5)
    >>> isinstance(penalty, DCPenalty), penalty.g_weight
    (True, 0.5)
    >>> x = np.array([0.0, 0.5, 2.0])
    >>> bool(penalty.value(x) == penalty.g_weight * np.abs(x).sum() - penalty.h_value(x))
    True
    """

    #: the weight :math:`\lambda_g` of the :math:`\ell_1` part
    g_weight = 0.0

    def value(self, x):
        """The penalty :math:`p(x)`."""
        return self.g_weight * np.abs(x).sum() - self.h_value(x)


class CappedL1(DCPenalty):
    r"""Capped :math:`\ell_1`: :math:`\lambda\sum_j \min(1, \alpha|x_j|)`.

    DC split: :math:`\lambda\alpha\|x\|_1 - \lambda\sum_j \max(0, \alpha|x_j| - 1)`; the
    subgradient of the concave part takes 0 at the kinks :math:`|x_j| = 1/\alpha`.

    Parameters
    ----------
    lam : float
        The weight :math:`\lambda > 0`.
    alpha : float
        The slope :math:`\alpha > 0`: the penalty is flat beyond :math:`|x_j| = 1/\alpha`.

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.problems import CappedL1
    >>> float(CappedL1(0.5).value(np.array([0.0, 0.5, 2.0])))
    0.75
    """

    def __init__(self, lam, alpha=1.0):
        self.lam = check_real("lam", lam, low=0.0, high=np.inf, high_open=True)
        self.alpha = check_real("alpha", alpha, low=0.0, low_open=True,
                                high=np.inf, high_open=True)
        if not np.isfinite(self.lam * self.alpha):
            raise ValueError(f"lam * alpha must be finite, got {lam!r} * {alpha!r}")
        self.g_weight = self.lam * self.alpha

    def h_value(self, x):
        return self.lam * np.maximum(self.alpha * np.abs(x) - 1.0, 0.0).sum()

    def h_subgradient(self, x):
        return np.where(self.alpha * np.abs(x) > 1.0, self.g_weight * np.sign(x), 0.0)


class SCAD(DCPenalty):
    r"""SCAD of Fan and Li with parameters :math:`\lambda` and :math:`a > 2`.

    DC split: :math:`\lambda\|x\|_1 - h` with the smooth convex
    :math:`h(t) = 0` for :math:`|t| \le \lambda`,
    :math:`(|t| - \lambda)^2 / (2(a-1))` for :math:`\lambda < |t| \le a\lambda` and
    :math:`\lambda|t| - (a+1)\lambda^2/2` beyond.

    Parameters
    ----------
    lam : float
        The weight :math:`\lambda > 0` (the slope at 0).
    a : float
        The shape :math:`a > 2`: the penalty is constant, :math:`(a+1)\lambda^2/2`, beyond
        :math:`a\lambda`.

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.problems import SCAD
    >>> round(float(SCAD(1.0).value(np.array([0.5, 10.0]))), 12)
    2.85
    """

    def __init__(self, lam, a=3.7):
        self.lam = check_real("lam", lam, low=0.0, high=np.inf, high_open=True)
        self.a = check_real("a", a, low=2.0, low_open=True, high=np.inf, high_open=True)
        _check_plateau(self.a + 1.0, self.lam, "(a + 1)")
        self.g_weight = self.lam

    def h_value(self, x):
        t, lam, a = np.abs(x), self.lam, self.a
        mid = (t - lam) ** 2 / (2 * (a - 1))
        out = np.where(t <= a * lam, mid, lam * t - 0.5 * (a + 1) * lam ** 2)
        return np.where(t <= lam, 0.0, out).sum()

    def h_subgradient(self, x):
        t, lam, a = np.abs(x), self.lam, self.a
        return np.sign(x) * np.clip((t - lam) / (a - 1), 0.0, lam)


class MCP(DCPenalty):
    r"""Minimax concave penalty with parameters :math:`\lambda` and :math:`\gamma > 0`.

    DC split: :math:`\lambda\|x\|_1 - h` with the smooth convex
    :math:`h(t) = t^2/(2\gamma)` for :math:`|t| \le \gamma\lambda` and
    :math:`\lambda|t| - \gamma\lambda^2/2` beyond.

    Parameters
    ----------
    lam : float
        The weight :math:`\lambda > 0` (the slope at 0).
    gamma : float
        The shape :math:`\gamma > 0`: the penalty is constant, :math:`\gamma\lambda^2/2`,
        beyond :math:`\gamma\lambda`.

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.problems import MCP
    >>> float(MCP(1.0).value(np.array([0.0, 10.0])))
    1.5
    """

    def __init__(self, lam, gamma=3.0):
        self.lam = check_real("lam", lam, low=0.0, high=np.inf, high_open=True)
        self.gamma = check_real("gamma", gamma, low=0.0, low_open=True,
                                high=np.inf, high_open=True)
        _check_plateau(self.gamma, self.lam, "gamma")
        self.g_weight = self.lam

    def h_value(self, x):
        t, lam, g = np.abs(x), self.lam, self.gamma
        return np.where(t <= g * lam, t * t / (2 * g), lam * t - 0.5 * g * lam ** 2).sum()

    def h_subgradient(self, x):
        return np.clip(x / self.gamma, -self.lam, self.lam)


class L1MinusL2(DCPenalty):
    r""":math:`\lambda(\|x\|_1 - \|x\|_2)`, with :math:`h = \lambda\|x\|_2` (subgradient 0
    at 0).

    Parameters
    ----------
    lam : float
        The weight :math:`\lambda > 0`.

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.problems import L1MinusL2
    >>> float(L1MinusL2(1.0).value(np.array([3.0, 4.0])))
    2.0
    """

    def __init__(self, lam):
        self.lam = check_real("lam", lam, low=0.0, high=np.inf, high_open=True)
        self.g_weight = self.lam

    def h_value(self, x):
        return self.lam * np.linalg.norm(x)

    def h_subgradient(self, x):
        nrm = np.linalg.norm(x)
        return self.lam * x / nrm if nrm > 0 else np.zeros_like(x)
