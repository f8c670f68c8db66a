"""The one backtracking line search of the solvers (rgd, rsdm, iht)."""

import math

from .._core.result import NonFiniteOracle

__all__ = ["backtracking", "armijo"]


def armijo(reference, slope, sufficient_decrease, allowance=0.0):
    r"""The Armijo test :math:`f(t) \le C - c\,t\,s + a` as a predicate ``accept(t, f)``.

    ``reference`` is :math:`C` (the current value, or a nonmonotone reference value),
    ``slope`` :math:`s > 0` the decrease rate along the direction (the squared gradient
    norm for a gradient step), ``sufficient_decrease`` :math:`c \in (0, 1)` and
    ``allowance`` :math:`a \ge 0` a rounding allowance on the test.
    """
    def accept(step, value):
        return value <= reference - sufficient_decrease * step * slope + allowance
    return accept


def backtracking(trial, accept, step, contraction=0.5, min_step=0.0):
    """Shrink ``step`` by ``contraction`` until the trial is accepted.

    Parameters
    ----------
    trial : callable
        ``trial(step) -> tuple`` whose first entry is the objective (or its change) at the
        trial point; the rest (the point, its gradient, ...) is handed back.
    accept : callable
        ``accept(step, value) -> bool``, e.g. :func:`armijo`.
    step : float
        The first trial step.
    contraction : float
        Factor in (0, 1) applied to the step after each rejection.
    min_step : float
        Give up once the step falls below this.

    Returns
    -------
    step : float
        The accepted step (the last one tried when none was accepted).
    out : tuple or None
        The accepted trial's output; ``None`` when the step fell below ``min_step``.
    backtracks : int
        Rejections before the accepted step.

    Raises
    ------
    NonFiniteOracle
        When a trial value is NaN or inf (a solver run reports it as ``Status.NONFINITE``).
    """
    backtracks = 0
    while True:
        out = trial(step)
        if not math.isfinite(out[0]):
            raise NonFiniteOracle(f"The objective at a trial point (step {step:.3g}) is "
                                  f"{out[0]}")
        if accept(step, out[0]):
            return step, out, backtracks
        step *= contraction
        backtracks += 1
        if step < min_step:
            return step, None, backtracks
