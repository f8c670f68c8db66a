"""The line searches of the solvers: Armijo backtracking (rgd, rsdm, iht) and a Wolfe
search with the approximate Wolfe test of Hager and Zhang (rcg, rlbfgs)."""

import math

import numpy as np

from .._core.result import NonFiniteOracle

__all__ = ["backtracking", "armijo", "wolfe", "manifold_line"]


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


def _evaluated(trial, step, n_values):
    """``trial(step)``, whose first ``n_values`` entries (value, slope) must be finite.

    The one rule of the line searches for a non-finite value: it ends the run. A NaN or
    inf, returned by ``trial`` or raised by a counted oracle as
    :class:`~jitopt.NonFiniteOracle`, is raised as :class:`~jitopt.NonFiniteOracle`
    naming the trial step (a solver run reports it as ``Status.NONFINITE``); it is never
    read as a step too long. Trials stay where a retraction is defined through the step
    cap of :attr:`Manifold.max_step <jitopt.manifolds.Manifold.max_step>`.
    """
    try:
        out = trial(step)
    except NonFiniteOracle as err:
        raise NonFiniteOracle(f"{err} at a line-search trial (step {step:.3g})") from err
    for value in out[:n_values]:
        if not math.isfinite(value):
            raise NonFiniteOracle(f"The objective or its slope at a line-search trial "
                                  f"(step {step:.3g}) is {value}")
    return out


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
        When a trial value is NaN or inf, or the oracle raised it (a solver run reports it
        as ``Status.NONFINITE``).
    """
    backtracks = 0
    while True:
        out = _evaluated(trial, step, 1)
        if accept(step, out[0]):
            return step, out, backtracks
        step *= contraction
        backtracks += 1
        if step < min_step:
            return step, None, backtracks


def _cubic(a, fa, sa, b, fb, sb):
    """The minimizer of the cubic interpolating values and slopes at ``a`` and ``b``
    (Nocedal & Wright, eq. 3.59), or the midpoint when it does not exist."""
    d1 = sa + sb - 3.0 * (fa - fb) / (a - b)
    rad = d1 * d1 - sa * sb
    if not (math.isfinite(rad) and rad >= 0.0):
        return 0.5 * (a + b)
    d2 = math.copysign(math.sqrt(rad), b - a)
    den = sb - sa + 2.0 * d2
    if den == 0.0:
        return 0.5 * (a + b)
    t = b - (b - a) * (sb + d2 - d1) / den
    return t if math.isfinite(t) else 0.5 * (a + b)


def wolfe(phi, f0, slope0, step, *, c1=1e-4, c2=0.9, strong=False, approximate=True,
          eps_f=1e-6, expand=5.0, max_step=np.inf, max_evals=25):
    r"""A Wolfe line search on :math:`\varphi(t)`: bracketing, then zoom by safeguarded
    cubic interpolation (Nocedal & Wright, Alg. 3.5-3.6).

    A step :math:`t` is accepted when the Wolfe conditions hold,

    .. math::

        \varphi(t) \le \varphi(0) + c_1 t \varphi'(0), \qquad
        \varphi'(t) \ge c_2 \varphi'(0) \quad (\text{strong: } |\varphi'(t)| \le
        c_2|\varphi'(0)|),

    or, with ``approximate=True``, the approximate Wolfe conditions of Hager and Zhang,
    :math:`c_2\varphi'(0) \le \varphi'(t) \le (1 - 2c_1)|\varphi'(0)|` (strong: also
    :math:`|\varphi'(t)| \le c_2|\varphi'(0)|`) and :math:`\varphi(t) \le \varphi(0) +
    \epsilon_f|\varphi(0)|`: tests on the slope, which keep working where differences of
    values drown in rounding (:math:`\|\operatorname{grad} f\|^2 \lesssim L\epsilon|f|`).

    Parameters
    ----------
    phi : callable
        ``phi(t) -> tuple`` whose first two entries are :math:`\varphi(t)` and
        :math:`\varphi'(t)`; the rest (the point, its gradient) is handed back.
    f0, slope0 : float
        :math:`\varphi(0)` and :math:`\varphi'(0) < 0`.
    step : float
        The first trial step.
    c1, c2 : float
        The Wolfe constants, :math:`0 < c_1 < c_2 < 1`.
    strong : bool
        The strong curvature test (for conjugate gradients) instead of the weak one.
    approximate : bool
        Also accept the approximate Wolfe conditions.
    eps_f : float
        :math:`\epsilon_f` of the approximate test.
    expand : float
        Growth factor of the trial step while bracketing.
    max_step : float
        Largest step tried.
    max_evals : int
        Evaluations of ``phi`` at most.

    Returns
    -------
    step : float
        The step of ``out``.
    out : tuple or None
        ``phi(step)`` of the accepted step; when no step passed, of the trial of least
        value below :math:`\varphi(0)`; ``None`` when there was none.
    accepted : bool
        Whether ``out`` passed the tests.

    Raises
    ------
    NonFiniteOracle
        When a trial's value or slope is NaN or inf, or its oracle raised it: the run
        ends (``Status.NONFINITE``), the step is not shrunk.

    Examples
    --------
    >>> from jitopt._core.line_search import wolfe
    >>> phi = lambda t: ((t - 3.0) ** 2, 2.0 * (t - 3.0))
    >>> t, out, ok = wolfe(phi, 9.0, -6.0, 1.0, c2=0.1, strong=True)
    >>> ok, abs(out[1]) <= 0.6
    (True, True)
    """
    lo, f_lo, s_lo = 0.0, f0, slope0
    hi = f_hi = s_hi = None
    t = min(step, max_step)
    best = None
    approx_value = f0 + eps_f * abs(f0)
    curv = c2 * abs(slope0)
    for _ in range(max_evals):
        out = _evaluated(phi, t, 2)
        f, s = out[0], out[1]
        armijo_ok = f <= f0 + c1 * t * slope0
        curvature_ok = abs(s) <= curv if strong else s >= -curv
        if armijo_ok and curvature_ok:
            return t, out, True
        near = approximate and f <= approx_value
        if near and -curv <= s <= (1.0 - 2.0 * c1) * abs(slope0) and (not strong
                                                                       or abs(s) <= curv):
            return t, out, True
        if f < f0 and (best is None or f < best[1][0]):
            best = (t, out)
        if (not armijo_ok or f >= f_lo) and not near:
            hi, f_hi, s_hi = t, f, s
        elif s >= 0.0:
            hi, f_hi, s_hi = t, f, s
        else:
            lo, f_lo, s_lo = t, f, s
        if hi is None:
            if t >= max_step:
                break
            t = min(expand * t, max_step)
            continue
        width = hi - lo
        if abs(width) <= 1e-14 * hi:
            break
        t = _cubic(lo, f_lo, s_lo, hi, f_hi, s_hi)
        t = min(max(t, lo + 0.1 * width), hi - 0.1 * width)
    if best is None:
        return 0.0, None, False
    return best[0], best[1], False


def manifold_line(problem, x, d):
    r""":math:`\varphi(t) = f(R_x(t d))` and its slope for :func:`wolfe`:
    ``phi(t) -> (f, slope, y, egrad, rgrad)`` at :math:`y = R_x(td)`, with the slope
    :math:`\langle \operatorname{grad} f(y), T_{x\to y} d\rangle_y` (the derivative along
    the curve for the exponential map with parallel transport, a positive multiple of it
    for the projective retractions). One fused cost-and-gradient evaluation per trial. On
    an embedded manifold (the Frobenius metric, transport by the orthogonal tangent
    projection :math:`P_y`) the slope is :math:`\langle g, P_y d\rangle = \langle g,
    d\rangle`, with no transport."""
    M = problem.manifold
    embedded = M.flat_metric and M.projection_transport

    def phi(t):
        y = M.retraction(x, t * d)
        f, eg = problem.cost_and_egrad(y)
        g = M.euclidean_to_riemannian_gradient(y, eg)
        slope = float(np.vdot(g, d)) if embedded else M.inner_product(
            y, g, M.transport(x, y, d))
        return f, slope, y, eg, g
    return phi

