r"""The iteration of :func:`jitopt.sparse.iht`, :math:`w_{t+1} = \Pi_\Gamma(H_k(w_t - \eta
g_t))` with a fixed or backtracked step, in two implementations taking the same steps: a
Python loop for any oracle, and a Numba loop for the built-in least-squares problem
(:func:`jitopt.problems.least_squares`) with the deterministic gradient."""

import math
from types import SimpleNamespace

import numpy as np
from numba import njit

from .._core.result import NonFiniteOracle, Status
from ..problems._sparse_kernels import least_squares_kernel
from ..solvers._line_search import backtracking
from ._kernels import iht_step

__all__ = ["python_loop", "numba_loop"]

_STEP_GROWTH = 1.25  # backtracking: growth of the step after one accepted at once
_CONTRACTION = 0.5
_RUNNING, _CONVERGED, _SMALL_STEP, _NONFINITE = 0, 1, 2, 3
_CHUNK = 32  # Numba iterations between two checks of max_time


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


def python_loop(run, w, f, g, eta):
    """Iterate from ``(w, f(w), g(w))`` with the first step ``eta``; ``run`` holds the
    operator ``op``, the ``oracle``, the ``monitor`` and the limits, and gets the step
    ``eta`` and the count ``n_increases`` as they change (for a fault result). Returns a
    namespace with ``status, message, nit, eta, best = (f, w, g, iteration),
    n_increases``."""
    op, oracle, monitor = run.op, run.oracle, run.monitor
    nit = n_increases = 0
    best = (f, w, g, 0)
    status = message = None

    def trial(eta):
        # first entry: R(w+) minus its quadratic upper model at w (accepted when <= 0)
        w_new, gdw, dw2, wnorm, same = gradient_step(op, w, g, eta)
        f_new, g_new = oracle(w_new, nit + 1)
        return f_new - (f + gdw + dw2 / (2 * eta)), f_new, g_new, w_new, dw2, wnorm, same

    def accept(eta, excess):
        return excess <= 1e-12 * abs(f)

    while True:
        if nit >= run.maxiter:
            status = Status.MAXITER
            break
        if monitor.elapsed() >= run.max_time:
            status = Status.MAXTIME
            break
        if run.backtrack:
            eta_used, out, backtracks = backtracking(trial, accept, eta, _CONTRACTION,
                                                     run.min_step)
            if out is None:
                eta = eta_used
                status = Status.SMALL_STEP
                break
            _, f_new, g_new, w_new, dw2, wnorm, same_support = out
            eta = eta_used * _STEP_GROWTH if backtracks == 0 else eta_used
        else:
            eta_used = eta
            w_new, _, dw2, wnorm, same_support = gradient_step(op, w, g, eta)
            f_new, g_new = oracle(w_new, nit + 1)
        nit += 1
        n_increases += f_new > f
        run.eta, run.n_increases = eta, n_increases
        move = math.sqrt(dw2)
        w, f, g = w_new, f_new, g_new
        if f < best[0]:
            best = (f, w, g, nit)
        # the gradient mapping ||w_t - 2SP(w_t - eta g_t)|| / eta at the previous iterate
        if monitor.iteration(nit, w, f, move / eta_used, step=eta_used):
            status = Status.CALLBACK
            break
        if same_support and move <= run.loop_tol * max(1.0, wnorm) and oracle.full_batch(nit):
            status = Status.CONVERGED
            message = _converged(move, wnorm, run.loop_tol)
            break
    return SimpleNamespace(status=status, message=message, nit=nit, eta=eta, best=best,
                           n_increases=n_increases)


@njit(cache=True)
def _steps(lo, hi, fpar, ipar, groups, k, rule, p, X, y, b, cache, slot, last, streak, counter,
           persist, w, f, g, eta, backtrack, min_step, loop_tol, n_steps, best, best_w,
           best_g):
    """At most ``n_steps`` iterations of :func:`python_loop` (the same operations in the
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
            gdw, dw2, wnorm, same = iht_step(lo, hi, fpar, ipar, groups, w, g, eta_used, k,
                                             rule, p, w_new)
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


def numba_loop(run, w, f, g, eta):
    """:func:`python_loop` for :class:`jitopt.problems.LeastSquares` in Numba: in steps of
    one iteration when the monitor records each iterate (callback, history or disp), else
    in chunks of up to :data:`_CHUNK` iterations between checks of ``max_time`` (one chunk
    when there is no time limit)."""
    op, problem, monitor = run.op, run.oracle.problem, run.monitor
    args = problem.kernel_args
    n = problem.n_samples
    per_iterate = run.per_iterate
    nit = n_increases = 0
    best = np.array([f, 0.0])
    best_w, best_g = w.copy(), g.copy()
    status = message = None
    while status is None:
        if nit >= run.maxiter:
            status = Status.MAXITER
            break
        if monitor.elapsed() >= run.max_time:
            status = Status.MAXTIME
            break
        n_steps = run.maxiter - nit
        if per_iterate:
            n_steps = 1
        elif run.max_time < np.inf:
            n_steps = min(n_steps, _CHUNK)
        best[1] -= nit  # iterations counted from this chunk
        (code, done, w, f, g, eta, eta_used, move, wnorm, increases, calls) = _steps(
            *op.args, op.k, op.rule, op.p, *args, w, f, g, eta, run.backtrack, run.min_step,
            run.loop_tol, n_steps, best, best_w, best_g)
        best[1] += nit
        problem.counts.nfev += calls
        problem.counts.njev += calls
        problem.counts.nifo += calls * n
        nit += done
        n_increases += increases
        run.eta, run.n_increases = eta, n_increases
        if code == _NONFINITE:
            raise NonFiniteOracle("The least-squares objective or its gradient is not finite")
        if done and monitor.iteration(nit, w, f, move / eta_used, step=eta_used):
            status = Status.CALLBACK
        elif code == _CONVERGED:
            status = Status.CONVERGED
            message = _converged(move, wnorm, run.loop_tol)
        elif code == _SMALL_STEP:
            status = Status.SMALL_STEP
    return SimpleNamespace(status=status, message=message, nit=nit, eta=eta,
                           best=(float(best[0]), best_w, best_g, int(best[1])),
                           n_increases=n_increases)
