"""The step size of the SERENA methods: the one given, or the default rule of
:func:`jitopt.solvers.srge` (the theory guide's section *Step size* gives the measurements
behind it)."""

import math

import numpy as np

from .._core.result import NonFiniteOracle

#: power-iteration steps of the curvature estimate at the start
ITERS = 10
#: the default step is 1/(c L): c = 2 for an estimator whose noise vanishes at a solution,
#: c = 4 when it does not (R-SGD and the like: their noise floor grows with the step)
SAFETY, SAFETY_NOISY = 2.0, 4.0
_NO_BATCH = np.zeros((0, 0), dtype=np.int64)


def curvature(path, x, u, batch, iters):
    r"""The largest absolute eigenvalue of the Riemannian Hessian at ``x`` of the mean of
    :math:`f_i` over ``batch`` (shape ``(1, b)``): ``iters`` steps of the power iteration
    from the direction ``u``. Each Hessian-vector product is
    :math:`\operatorname{Hess} f_S(x)[u] \approx (\operatorname{grad} f_S(y) -
    \mathcal T_{x\to y}\operatorname{grad} f_S(x))/h` at :math:`y = R_x(hu)`, which is one
    step of the SVRG estimator from ``x`` with the snapshot ``x`` and a zero snapshot
    gradient: each path computes it with its own steps (``2 iters`` batch gradients,
    counted).
    """
    M = path.problem.manifold
    h = 1e-7 * max(1.0, float(np.linalg.norm(x)))  # the difference quotient's length
    zero = np.zeros_like(x)
    size, lam = float(np.linalg.norm(u)), np.nan
    for _ in range(iters):
        if not size > 0.0:  # a zero Hessian-vector product
            return size
        status, _, y, u, _, _ = path.chunk(x, -u / size, x, zero, batch, _NO_BATCH,
                                           np.array([h]), np.ones(1), True, False,
                                           checkpoint=False)
        size = np.nan if status else M.norm(y, u)
        lam = size / h
    return lam


class StepSize:
    r"""The step :math:`\eta` of the next epoch: fixed when given, else adaptive."""

    def __init__(self, eta, adaptive=False, noisy=False):
        self.eta = eta
        self.adaptive = adaptive
        self.noisy = noisy
        self.epochs = 0  # epochs since the start
        self.stage = 0  # ... at the last halving
        self.kept = False  # whether an epoch stood since the last halving

    @classmethod
    def default(cls, path, x, gnorm, batch, u, noisy):
        r""":math:`\eta_0 = 1/(c\hat L)`, with :math:`\hat L` the largest absolute
        eigenvalue of the Riemannian Hessian at ``x`` of the mean over ``batch``, from the
        direction ``u`` (see :func:`curvature`); :math:`c` is ``SAFETY_NOISY`` for an
        estimator whose noise does not vanish (``noisy``), else ``SAFETY``."""
        lam = curvature(path, x, u, batch, ITERS)
        if not math.isfinite(lam):
            raise NonFiniteOracle("The curvature estimate of the default step size is not "
                                  "finite: a batch gradient near x0 is not finite")
        c = SAFETY_NOISY if noisy else SAFETY
        return cls(1.0 / (c * lam) if lam > 0.0 else 1.0 / gnorm, adaptive=True,
                   noisy=noisy)

    def accept(self, f, f_new):
        """Whether an epoch that took the full cost from ``f`` to ``f_new`` stands. An
        adaptive step refuses an increase (beyond rounding) and halves."""
        self.epochs += 1
        if not self.adaptive or f_new <= f + 1e-12 * abs(f):
            self.kept = True
            return True
        if not (self.noisy and self.kept) or self.epochs >= 2 * self.stage:
            self.eta *= 0.5
            self.stage, self.kept = self.epochs, False
        return False
