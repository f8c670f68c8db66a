r"""The iteration of :func:`jitopt.sparse.iht`, :math:`w_{t+1} = \Pi_\Gamma(H_k(w_t - \eta
g_t))` with a fixed or backtracked step, in two implementations taking the same steps: a
Python loop for any oracle, and a Numba loop for the built-in least-squares problem
(:func:`jitopt.problems.least_squares`) with the deterministic gradient."""

import math
import sys

import numpy as np
from numba import njit

from .._core.result import NonFiniteOracle, Status
from .._core.stopping import verdict
from .._interpreted import interpreted, kernel_for
from ..problems import least_squares_kernel
from ..sets import project
from .._core.line_search import backtracking
from ._kernels import iht_step

__all__ = ["python_step", "CompiledSteps"]

_STEP_GROWTH = 1.25  # backtracking: growth of the step after one accepted at once
_CONTRACTION = 0.5
_RUNNING, _CONVERGED, _SMALL_STEP, _NONFINITE = 0, 1, 2, 3
_CHUNK = 32  # iterations between two checks of max_time (uncompiled: of the budget)


def _converged(move, wnorm, loop_tol):
    return (f"Optimization terminated successfully: the support is unchanged and the step "
            f"{move:.3e} <= tol * max(1, ||w||) = {loop_tol * max(1.0, wnorm):.3e}.")


def gradient_step(op, w, g, eta):
    """The step ``2SP(w - eta g)`` with its scalars (see :meth:`TwoStep.step`); a
    non-finite gradient shows in ``<g, w+ - w>``."""
    out = op.step(w, g, eta)
    if not math.isfinite(out[1]):
        raise NonFiniteOracle("The gradient has a non-finite entry (NaN or inf)")
    return out


def python_step(alg, s):
    """One iteration from the state ``s`` (``x = w``, ``fun = f(w)``, ``g``, the step
    ``eta``, the best iterate ``best = (f, w, g, iteration)``) with any oracle; ``alg``
    holds the operator ``op``, the ``oracle`` and the options, and gets the step ``eta``
    and the count ``n_increases`` as they change (for a fault result)."""
    op, oracle = alg.op, alg.oracle
    w, f, g, nit = s.x, s.fun, s.g, s.nit

    def trial(eta):
        # first entry: R(w+) minus its quadratic upper model at w (accepted when <= 0); a
        # trial with R(w+) = +inf (e.g. an overflowing e^eta of the Poisson loss) is
        # rejected: the largest float as its excess
        w_new, gdw, dw2, wnorm, same = gradient_step(op, w, g, eta)
        f_new, g_new = oracle(w_new, nit + 1, overflow_ok=True)
        if f_new == math.inf:
            return sys.float_info.max, f_new, g_new, w_new, dw2, wnorm, same
        return f_new - (f + gdw + dw2 / (2 * eta)), f_new, g_new, w_new, dw2, wnorm, same

    def accept(eta, excess):
        return excess <= 1e-12 * abs(f)

    if alg.backtrack:
        eta_used, out, backtracks = backtracking(trial, accept, s.eta, _CONTRACTION,
                                                 alg.min_step)
        if out is None:
            s.eta = eta_used
            return verdict(Status.SMALL_STEP, s)
        _, f_new, g_new, w_new, dw2, wnorm, same_support = out
        s.eta = eta_used * _STEP_GROWTH if backtracks == 0 else eta_used
    else:
        eta_used = s.eta
        w_new, _, dw2, wnorm, same_support = gradient_step(op, w, g, eta_used)
        f_new, g_new = oracle(w_new, nit + 1)
    s.nit += 1
    alg.n_increases += f_new > f
    alg.eta = s.eta
    move = math.sqrt(dw2)
    s.x, s.fun, s.g = w_new, f_new, g_new
    if f_new < s.best[0]:
        s.best = (f_new, w_new, g_new, s.nit)
    # the gradient mapping ||w_t - 2SP(w_t - eta g_t)|| / eta at the previous iterate
    s.stationarity, s.extra = move / eta_used, {"step": eta_used}
    if same_support and move <= alg.loop_tol * max(1.0, wnorm) and oracle.full_batch(s.nit):
        s.verdict = Status.CONVERGED, _converged(move, wnorm, alg.loop_tol)
    return None


@njit(cache=True)
def _steps(lo, hi, fpar, ipar, groups, forced, k, rule, p, X, y, b, cache, slot, last, streak,
           counter, persist, w, f, g, eta, backtrack, min_step, loop_tol, n_steps, best, best_w,
           best_g):
    """At most ``n_steps`` iterations of :func:`python_step` (the same operations in the
    same order) on least squares. ``best = [f, iteration]`` and ``best_w, best_g`` are
    updated in place (iterations counted from this call). Returns ``(code, steps, w, f, g,
    eta, eta_used, move, wnorm, n_increases, oracle calls)``, code 0 running, 1 converged,
    2 small step, 3 non-finite."""
    d = w.shape[0]
    calls = 0
    done = 0
    n_increases = 0
    eta_used = eta
    move = 0.0
    wnorm = 0.0
    code = _RUNNING
    while done < n_steps and code == _RUNNING:
        eta_used = eta
        backtracks = 0
        while True:
            w_new = np.empty(d)
            gdw, dw2, wnorm, same = iht_step(lo, hi, fpar, ipar, groups, forced, w, g,
                                             eta_used, k, rule, p, w_new)
            if not np.isfinite(gdw):
                code = _NONFINITE
                break
            f_new, g_new = least_squares_kernel(w_new, X, y, b, cache, slot, last, streak,
                                                counter, persist)
            calls += 1
            if not np.isfinite(f_new):
                code = _NONFINITE
            elif backtrack and not f_new - (f + gdw + dw2 / (2 * eta_used)) <= 1e-12 * abs(f):
                eta_used *= _CONTRACTION
                backtracks += 1
                if eta_used >= min_step:
                    continue
                eta = eta_used
                code = _SMALL_STEP
            break
        if code != _RUNNING:
            break
        if backtrack:
            eta = eta_used * _STEP_GROWTH if backtracks == 0 else eta_used
        done += 1
        if f_new > f:
            n_increases += 1
        move = np.sqrt(dw2)
        w, f, g = w_new, f_new, g_new
        if f < best[0]:
            best[0] = f
            best[1] = done
            for i in range(d):
                best_w[i] = w[i]
                best_g[i] = g[i]
        if same and move <= loop_tol * max(1.0, wnorm):
            code = _CONVERGED
    return code, done, w, f, g, eta, eta_used, move, wnorm, n_increases, calls


class CompiledSteps:
    """:func:`python_step` for :class:`jitopt.problems.LeastSquares` in Numba: one
    iteration per step when an observer wants every iterate (callback, history or disp),
    else chunks of up to :data:`_CHUNK` iterations between checks of ``max_time`` (one
    chunk to ``maxiter`` when there is no time limit)."""

    def __init__(self, s):
        self.best = np.array([s.fun, 0.0])  # [f, iteration] of the best iterate
        self.best_w, self.best_g = s.x.copy(), s.g.copy()

    def best_iterate(self):
        """``(f, w, g, iteration)`` of the best iterate so far."""
        return float(self.best[0]), self.best_w, self.best_g, int(self.best[1])

    def __call__(self, alg, s, budget):
        op, problem, best, nit = alg.op, alg.oracle.problem, self.best, s.nit
        steps = kernel_for(_steps, INTERPRETED, problem.small)
        n_steps = 1 if budget.per_iterate else budget.iterations(s)
        if not budget.per_iterate and (budget.seconds() < np.inf or steps is not _steps):
            n_steps = min(n_steps, _CHUNK)
        best[1] -= nit  # iterations counted from this chunk
        (code, done, w, f, g, eta, eta_used, move, wnorm, increases, calls) = steps(
            *op.args, op.forced, op.k, op.rule, op.p, *problem.kernel_args, s.x, s.fun, s.g, s.eta,
            alg.backtrack, alg.min_step, alg.loop_tol, n_steps, best, self.best_w,
            self.best_g)
        best[1] += nit
        problem.counts.add(nfev=calls, njev=calls, nifo=calls * problem.n_samples)
        s.nit += done
        alg.n_increases += increases
        s.eta = alg.eta = eta
        if code == _NONFINITE:
            raise NonFiniteOracle("The least-squares objective or its gradient is not finite")
        if not done:
            return verdict(Status.SMALL_STEP, s)
        s.x, s.fun, s.g = w, f, g
        s.stationarity, s.extra = move / eta_used, {"step": eta_used}
        if code == _CONVERGED:
            s.verdict = Status.CONVERGED, _converged(move, wnorm, alg.loop_tol)
        elif code == _SMALL_STEP:
            s.verdict = verdict(Status.SMALL_STEP, s)
        return None


#: the kernels of the loop uncompiled
INTERPRETED = interpreted(sys.modules[__name__], iht_step, least_squares_kernel, project)
