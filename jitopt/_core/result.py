"""The one result, status table, history and oracle errors shared by every solver; the
run driver (:mod:`jitopt._core.run`) makes the results."""

import enum

import numpy as np

__all__ = ["OptimizeResult", "Status", "History", "OracleError", "NonFiniteOracle"]


class Status(enum.IntEnum):
    """Why a solver stopped: one code per stopping reason, the same in every solver.

    ``result.success`` is ``status.success``: true for :attr:`CONVERGED`, :attr:`TARGET` and
    :attr:`SCHEDULE_DONE`, the three ways a method ends as designed.

    Examples
    --------
    >>> import jitopt
    >>> jitopt.Status.MAXITER == 1, jitopt.Status.MAXITER.success
    (True, False)
    >>> jitopt.Status(5).name, jitopt.Status.TARGET.success
    ('TARGET', True)
    """

    #: the method's tolerance is met (the message names the quantity, its value and the tolerance)
    CONVERGED = 0
    #: ``maxiter`` iterations done before the tolerance was met
    MAXITER = 1
    #: ``max_time`` seconds spent
    MAXTIME = 2
    #: the line search or step rule found no step above ``min_step``
    SMALL_STEP = 3
    #: an oracle returned NaN or inf (``x`` is the best finite iterate)
    NONFINITE = 4
    #: the cost reached ``f_target``
    TARGET = 5
    #: ``max_passes`` passes over the samples of a finite sum done
    MAX_PASSES = 6
    #: ``max_samples`` samples drawn from a stream
    MAX_SAMPLES = 7
    #: a method with a fixed schedule (WDHA's step sizes) ran all of it
    SCHEDULE_DONE = 8
    #: an inner solver (subproblem, LP, factorisation) failed
    INNER_FAILURE = 9
    #: a user oracle raised an exception
    ORACLE_ERROR = 10
    #: a constrained method stalled (or its penalty reached its cap) with the constraints
    #: still violated beyond ``ctol``: they may be infeasible
    INFEASIBLE = 11
    #: the callback raised :class:`StopIteration` (scipy's code)
    CALLBACK = 99

    @property
    def success(self):
        """Whether this status is a successful end."""
        return self in (Status.CONVERGED, Status.TARGET, Status.SCHEDULE_DONE)

    def describe(self, **values):
        """The default message of this status, filled with ``values`` (limits, measured
        quantities); a shorter generic message when a value it names is missing."""
        try:
            return _MESSAGES[self].format(**values)
        except (KeyError, ValueError, TypeError):
            return _GENERIC[self]


_MESSAGES = {
    Status.CONVERGED: "Optimization terminated successfully: {measure} {stationarity:.3e} "
                      "<= {tol_name} = {tol:.3g}.",
    Status.MAXITER: "Maximum number of iterations (maxiter = {maxiter}) reached; "
                    "{measure} {stationarity:.3e}.",
    Status.MAXTIME: "Maximum time (max_time = {max_time:.3g} s) exceeded after "
                    "{nit} iterations.",
    Status.SMALL_STEP: "The step size fell below min_step = {min_step:.3g} at iteration "
                       "{nit} before the tolerance was met; {measure} {stationarity:.3e}.",
    Status.NONFINITE: "An oracle returned a non-finite value (NaN or inf) at iteration {nit}.",
    Status.TARGET: "Optimization terminated successfully: cost {fun:.10g} <= "
                   "f_target = {f_target:.10g}.",
    Status.MAX_PASSES: "Maximum number of passes over the samples (max_passes = "
                       "{max_passes:g}) reached; {measure} {stationarity:.3e}.",
    Status.MAX_SAMPLES: "Maximum number of samples (max_samples = {max_samples}) drawn; "
                        "{measure} {stationarity:.3e}.",
    Status.SCHEDULE_DONE: "The schedule of {maxiter} iterations is finished; "
                          "{measure} {stationarity:.3e}.",
    Status.INNER_FAILURE: "An inner solver failed at iteration {nit}: {error}.",
    Status.ORACLE_ERROR: "An oracle raised an exception at iteration {nit}: {error}.",
    Status.INFEASIBLE: "The constraint violation {violation:.2e} > ctol = {ctol:.3g} at "
                       "iteration {nit}, where the run stalled or its penalty reached its "
                       "cap: the constraints may be infeasible (x is then a local minimizer "
                       "of the violation) or the start is poor.",
    Status.CALLBACK: "`callback` raised `StopIteration`.",
}

_GENERIC = {
    Status.CONVERGED: "Optimization terminated successfully.",
    Status.MAXITER: "Maximum number of iterations reached.",
    Status.MAXTIME: "Maximum time exceeded.",
    Status.SMALL_STEP: "The step size fell below min_step before the tolerance was met.",
    Status.NONFINITE: "An oracle returned a non-finite value (NaN or inf).",
    Status.TARGET: "Optimization terminated successfully: the cost reached f_target.",
    Status.MAX_PASSES: "Maximum number of passes over the samples reached.",
    Status.MAX_SAMPLES: "Maximum number of samples drawn.",
    Status.SCHEDULE_DONE: "The schedule is finished.",
    Status.INNER_FAILURE: "An inner solver failed.",
    Status.ORACLE_ERROR: "An oracle raised an exception.",
    Status.INFEASIBLE: "The constraints are violated beyond ctol: they may be infeasible.",
    Status.CALLBACK: "`callback` raised `StopIteration`.",
}


class OracleError(Exception):
    """Raised by a problem's counted oracle when the user's function raised (the original
    exception is the ``__cause__``); a solver run turns it into ``Status.ORACLE_ERROR``.

    Examples
    --------
    >>> import numpy as np, jitopt
    >>> def cost(x):
    ...     raise ZeroDivisionError("no cost here")
    >>> problem = jitopt.Problem(jitopt.manifolds.Sphere(2), cost, egrad=lambda x: x)
    >>> try:
    ...     problem.cost(np.array([1.0, 0.0]))
    ... except jitopt.OracleError as err:
    ...     print(type(err.__cause__).__name__, err.status.name)
    ZeroDivisionError ORACLE_ERROR
    """

    status = Status.ORACLE_ERROR


class NonFiniteOracle(OracleError):
    """Raised by a problem's counted oracle when it returned NaN or inf; a solver run turns
    it into ``Status.NONFINITE``.

    Examples
    --------
    >>> import numpy as np, jitopt
    >>> problem = jitopt.Problem(jitopt.manifolds.Sphere(2), lambda x: np.nan,
    ...                          egrad=lambda x: x)
    >>> res = jitopt.solvers.rgd(problem, x0=np.array([1.0, 0.0]))
    >>> res.status.name, res.success
    ('NONFINITE', False)
    """

    status = Status.NONFINITE


class OptimizeResult(dict):
    """Result of a jitopt solver: a dict with attribute access, with the fields of
    :class:`scipy.optimize.OptimizeResult` and more.

    It is not a subclass of scipy's class (importing :mod:`scipy.optimize` would add about
    0.3 s to every first call), but reads and prints the same way.

    Attributes
    ----------
    x : ndarray
        The solution (for a fault, the best iterate seen before it).
    fun : float
        Objective at ``x`` (for stochastic methods, the estimate the method has).
    stationarity : float
        The method's stationarity measure at ``x``: the quantity its tolerance is tested on.
    stationarity_measure : str
        What ``stationarity`` measures (``"Riemannian gradient norm"``, ``"gradient mapping
        norm"``, ``"certified gap"``, ...); each solver's docstring says which.
    success : bool
        ``status.success``: the method ended as designed (tolerance, target or schedule).
    status : Status
        Why the solver stopped (an ``enum.IntEnum``, so it compares with ints).
    message : str
        Why the solver stopped, with the quantity and its value.
    nit : int
        Number of iterations.
    nfev, njev, nifo, nhev : int
        Oracle calls: cost evaluations, gradient evaluations, per-sample gradients
        (incremental first-order oracle calls; a full gradient of a finite sum of ``n``
        terms counts ``n``, of a plain problem counts 1) and Hessian-vector products. Each
        method's docstring says what they count for its problem type.
    time : float
        Wall-clock seconds spent in the solver.
    history : dict of ndarray, optional
        With ``history=True``: one entry per iteration, the columns listed in :doc:`/theory/interface`.

    Examples
    --------
    >>> import numpy as np, jitopt
    >>> problem = jitopt.problems.pca(np.diag([3.0, 2.0, 1.0]), 1)
    >>> res = jitopt.solvers.rgd(problem, rng=0, history=True)
    >>> res.success, round(res.fun, 6), res.stationarity_measure
    (True, -3.0, 'Riemannian gradient norm')
    >>> len(res.history["fun"]) == res.nit + 1
    True
    """

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    __setattr__ = dict.__setitem__
    __delattr__ = dict.__delitem__

    def __dir__(self):
        return list(self.keys())

    def __repr__(self):
        if not self:
            return f"{type(self).__name__}()"
        first = ("message", "success", "status", "fun", "x", "nit")
        keys = [k for k in first if k in self] + sorted(k for k in self if k not in first)
        width = max(len(k) for k in keys)
        lines = []
        for key in keys:
            text = repr(self[key]).replace("\n", "\n" + " " * (width + 2))
            lines.append(f"{key:>{width}}: {text}")
        return "\n".join(lines)


class History:
    """Per-iteration records as a dict of arrays: the common columns
    ``iteration, time, fun, stationarity, nfev, njev, nifo`` and a method's own ``extra``
    columns (int64 when every entry is an integer, else float; NaN where an iterate has no
    value)."""

    FIELDS = ("iteration", "time", "fun", "stationarity", "nfev", "njev", "nifo")
    _INT = {"iteration", "nfev", "njev", "nifo"}

    def __init__(self, extra=()):
        self.extra = tuple(extra)
        self._rows = []

    def record(self, iteration, elapsed, fun, stationarity, counts, extra=()):
        self._rows.append((iteration, elapsed, fun, stationarity) + tuple(counts)
                          + tuple(extra))

    def as_arrays(self):
        names = self.FIELDS + self.extra
        columns = list(zip(*self._rows)) if self._rows else [()] * len(names)
        return {name: np.asarray(col, dtype=np.int64 if self._integer(name, col) else float)
                for name, col in zip(names, columns)}

    def _integer(self, name, column):
        if name in self._INT:
            return True
        return name in self.extra and bool(column) and all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in column)
