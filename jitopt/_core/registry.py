"""The method registry, :func:`minimize`, and scipy-compatible method callables (the
scipy side of both in :mod:`jitopt._core.scipy_api`)."""

import functools
import importlib
import inspect
import warnings
from collections.abc import Mapping

from ..manifolds import FixedRankEmbedded
from .docs import fill_common_options
from .problem import BaseProblem, Problem
from .result import OptimizeResult
from .scipy_api import checked_start, known_options, minimize_function, set_tol

__all__ = ["register_method", "get_method", "available_methods", "minimize", "Method"]

#: every method's name and the module that registers it, in the order
#: :func:`available_methods` lists them; a module is imported when one of its methods is
#: first asked for, so that a call loads only the solver it runs
METHOD_MODULES = {
    "rgd": "jitopt.solvers._rgd",
    "rlbfgs": "jitopt.solvers._rlbfgs",
    "rcg": "jitopt.solvers._rcg",
    "rtr": "jitopt.solvers._rtr",
    "rsdm": "jitopt.solvers._rsdm",
    **{name: "jitopt.solvers.serena" for name in (
        "srge", "r-sgd", "r-svrg", "r-srg", "r-srm", "r-srvrg", "r-svrrm", "r-hybrid-sgd")},
    "online_dca": "jitopt.dc._online",
    "evi": "jitopt.evi._evi",
    "iht": "jitopt.sparse._iht",
    "wdha": "jitopt.transport._wdha",
    "sga": "jitopt.transport._sga",
    "nelder_mead": "jitopt.solvers._nelder_mead",
    "particle_swarm": "jitopt.solvers._particle_swarm",
    "ralm": "jitopt.solvers._ralm",
    "repm": "jitopt.solvers._repm",
}

_METHODS = {}

#: the options every solver takes, with the same meaning everywhere (docs/theory/interface)
COMMON_OPTIONS = ("maxiter", "max_time", "callback", "history", "disp", "rng")


class Method:
    """A registered solver, callable the way :func:`scipy.optimize.minimize` calls a custom method.

    ``scipy.optimize.minimize(fun, x0, jac=jac, method=jitopt.get_method("rgd"),
    options={"manifold": jitopt.manifolds.Stiefel(n, p), ...})`` works for the methods that
    take a plain :class:`~jitopt.Problem`: scipy passes the flattened ``x0`` and every
    option. The solver works on points of the manifold's shape; ``fun`` and ``jac`` receive
    ``x`` in the shape of the ``x0`` they were given (flat, for scipy) and ``result.x`` has
    that shape too. Methods are made by ``register_method``; :func:`get_method` returns them.

    Parameters
    ----------
    name : str
        The registered name.
    solver : callable
        The problem-level solver, ``solver(problem, x0=None, **options)``.
    problem_type : type
        The problem type the solver takes (instances of subclasses too).
    tol_option : str
        The solver option that :func:`minimize`'s ``tol`` sets.
    manifolds : tuple of type, optional
        The manifold classes of the problems the solver takes (``None``: any).
    derivative_free : bool
        The solver calls the cost only, never a gradient.

    Attributes
    ----------
    name : str
        The registered name.
    solver : callable
        The problem-level solver, ``solver(problem, x0=None, **options)``.
    problem_type : type
        The problem type the solver takes (instances of subclasses too).
    manifolds : tuple of type or None
        The manifold classes of the problems the solver takes (``None``: any).
    tol_option : str
        The solver option that :func:`minimize`'s ``tol`` sets.
    options : tuple of str
        The solver's keyword options.
    derivative_free : bool
        The solver calls the cost only: a :class:`~jitopt.Problem` without ``egrad`` is
        enough, and :func:`minimize` with ``jac=None`` gives it no gradient.

    Examples
    --------
    >>> import jitopt
    >>> method = jitopt.get_method("rgd")
    >>> method.name, method.tol_option, method.problem_type.__name__
    ('rgd', 'gtol', 'Problem')
    >>> "maxiter" in method.options
    True
    """

    def __init__(self, name, solver, problem_type, tol_option, manifolds=None,
                 derivative_free=False):
        self.name = name
        self.derivative_free = bool(derivative_free)
        self.solver = solver
        self.problem_type = problem_type
        self.manifolds = manifolds
        self.tol_option = tol_option
        params = inspect.signature(solver).parameters
        self.options = tuple(p for p in params if p not in ("problem", "x0"))
        self.__doc__ = solver.__doc__

    def takes(self, problem):
        """Whether the method solves ``problem`` (its type, its manifold if it has one, and
        its gradient unless the method is derivative-free)."""
        return isinstance(problem, self.problem_type) and (
            self.manifolds is None or isinstance(problem.manifold, self.manifolds)) and (
            self.derivative_free or getattr(problem, "has_egrad", True))

    def __repr__(self):
        return f"<jitopt method {self.name!r}>"

    def __call__(self, fun, x0, args=(), jac=None, hess=None, hessp=None, bounds=None,
                 constraints=(), callback=None, **options):
        if hess is not None or hessp is not None:
            warnings.warn(f"method {self.name!r} does not use hess/hessp", RuntimeWarning,
                          stacklevel=2)
        manifold = options.pop("manifold", None)
        tol = options.pop("tol", None)
        return minimize_function(fun, x0, args, jac, self, manifold, tol, callback, options,
                                 bounds, constraints or ())


def _check_takes(method, problem):
    if isinstance(problem, method.problem_type) and not (
            method.derivative_free or getattr(problem, "has_egrad", True)):
        raise TypeError(f'method {method.name!r} needs the gradient: egrad is required (a '
                        f'callable, or "jax": JAX differentiates cost, jitopt[jax]); the '
                        f'methods that take a cost alone: '
                        f'{", ".join(available_methods(problem))}')
    if isinstance(problem, method.problem_type) and not method.takes(problem):
        names = ", ".join(m.__name__ for m in method.manifolds)
        raise TypeError(f"method {method.name!r} takes a {method.problem_type.__name__} on "
                        f"{names}, got one on {problem.manifold!r}; the methods for it: "
                        f"{', '.join(available_methods(problem)) or 'none'}")
    if not method.takes(problem):
        others = ""
        if isinstance(problem, BaseProblem):
            others = (f"; the methods that take a {type(problem).__name__}: "
                      f"{', '.join(available_methods(problem)) or 'none'}")
        raise TypeError(f"problem must be a {method.problem_type.__name__} for method "
                        f"{method.name!r}, got a {type(problem).__name__}{others}")


def register_method(name, problem_type=Problem, tol_option="gtol", manifolds=None,
                    doc=None, derivative_free=False):
    """Decorator registering a solver function under ``name``: ``@register_method("rgd")``.

    The solver must have the signature ``solver(problem, x0=None, *, <options>, maxiter,
    max_time, callback=None, history=False, disp=False, rng=None)``, take instances of
    ``problem_type`` (on one of ``manifolds``, a tuple of manifold classes, when given)
    and return the :class:`~jitopt.OptimizeResult` of :func:`jitopt._core.run.run` (which
    turns any exception raised after the start into a failed result; exceptions before the
    start, bad arguments, propagate). The decorator returns the solver wrapped so that it
    refuses other problem types with a ``TypeError`` (and a problem without a gradient,
    naming ``egrad``, unless the method is ``derivative_free``: it calls the cost only) and a
    result of another type with a ``TypeError`` naming the method.

    The solver's docstring has the line ``{common options}`` where its Parameters section
    describes ``callback, history, disp, rng``: the registered solver's docstring has
    there the entries of :func:`jitopt._core.docs.common_options`, with the method's
    particulars ``doc`` (a dict of its keywords).
    """

    def decorator(solver):
        if name in _METHODS:
            raise ValueError(f"a method named {name!r} is already registered")
        if name not in METHOD_MODULES:
            raise ValueError(f"method {name!r} is not listed in METHOD_MODULES")

        @functools.wraps(solver)
        def run(problem, x0=None, **options):
            _check_takes(method, problem)
            res = solver(problem, x0, **options)
            if not isinstance(res, OptimizeResult):
                raise TypeError(f"method {name!r} returned a {type(res).__name__}, not an "
                                f"OptimizeResult")
            return res

        run.__doc__ = fill_common_options(solver.__doc__, name, **(doc or {}))
        method = Method(name, run, problem_type, tol_option, manifolds, derivative_free)
        _METHODS[name] = method
        return run

    return decorator


def available_methods(problem=None):
    """Names of the registered methods, in registration order; with ``problem``, those that
    take it.

    Parameters
    ----------
    problem : problem object, optional
        A problem (a :class:`~jitopt.Problem`, :class:`~jitopt.FiniteSumProblem` or a
        problem type of :mod:`jitopt.problems`); by default every method is listed.

    Returns
    -------
    tuple of str
        The method names, as :func:`minimize` and :func:`get_method` accept them.

    Examples
    --------
    >>> import numpy as np, jitopt
    >>> "rgd" in jitopt.available_methods()
    True
    >>> problem = jitopt.problems.pca(np.diag([3.0, 2.0, 1.0]), 1)
    >>> "rgd" in jitopt.available_methods(problem), "iht" in jitopt.available_methods(problem)
    (True, False)
    """
    if problem is None:
        return tuple(METHOD_MODULES)
    return tuple(name for name in METHOD_MODULES if get_method(name).takes(problem))


def get_method(method):
    """The :class:`Method` registered under ``method`` (case-insensitive).

    Parameters
    ----------
    method : str or Method
        A name from :func:`available_methods` (a :class:`Method` is returned as it is).

    Returns
    -------
    Method
        The registered method; ``scipy.optimize.minimize`` accepts it as ``method``.

    Examples
    --------
    >>> import jitopt
    >>> jitopt.get_method("RGD")
    <jitopt method 'rgd'>
    """
    if isinstance(method, Method):
        return method
    if not isinstance(method, str):
        raise TypeError(f"method must be a string or a jitopt Method, got {type(method).__name__}")
    key = method.lower()
    if key not in METHOD_MODULES:
        raise ValueError(
            f"Unknown method {method!r}; available methods: {', '.join(METHOD_MODULES)}"
        )
    if key not in _METHODS:
        importlib.import_module(METHOD_MODULES[key])
    return _METHODS[key]


def minimize(fun, x0=None, args=(), jac=None, method=None, manifold=None, tol=None,
             callback=None, options=None, bounds=None, constraints=()):
    """Minimize ``fun`` over a manifold, or solve a problem object, with
    :func:`scipy.optimize.minimize`'s conventions.

    Parameters
    ----------
    fun : callable or problem
        ``fun(x, *args) -> float``; or a problem object of any type (a
        :class:`~jitopt.Problem`, :class:`~jitopt.FiniteSumProblem`, or a DC, VI or
        barycenter problem of :mod:`jitopt.problems`), handed to ``method`` as it is
        (``args``, ``jac`` and ``manifold`` must then be left out).
    x0 : array_like, optional
        Starting point, a point of ``manifold`` (any shape; a flat array of the right size
        is reshaped to the manifold's shape and ``result.x`` is returned flat). Required
        with a callable ``fun``; with a problem object, the method's default when omitted.
    args : tuple
        Extra arguments of ``fun`` and ``jac``.
    jac : callable, bool, "2-point", "jax" or None
        ``jac(x, *args)``: the Euclidean gradient, of the same shape as ``x``. ``True``
        means ``fun`` returns ``(f, g)``. ``"jax"``: JAX differentiates ``fun``, written
        with ``jax.numpy`` (the extra ``jitopt[jax]``, :doc:`/theory/autodiff`).
        ``None`` or ``"2-point"``: forward differences in the ambient space, ``x.size``
        extra cost evaluations per gradient (counted in ``nfev``); only sensible for small
        problems whose cost extends off the manifold. A derivative-free method
        (``"nelder_mead"``, ``"particle_swarm"``) with ``jac=None`` gets no gradient at all.
    method : str or Method, optional
        A name from :func:`available_methods`; default ``"rlbfgs"`` for a callable ``fun``
        or a plain :class:`~jitopt.Problem` (smooth and deterministic; ``"rtr"`` on
        :class:`~jitopt.manifolds.FixedRankEmbedded`), ``"r-srvrg"`` for a
        :class:`~jitopt.FiniteSumProblem`, ``"nelder_mead"`` for a problem without a
        gradient, else the problem type's ``default_method``. A method that does not take the
        problem's type raises a ``TypeError`` naming both.
    manifold : jitopt.manifolds.Manifold, optional
        The domain; ``None`` means ``Euclidean(*x0.shape)``.
    tol : float, optional
        Tolerance; sets the method's main stopping option (``gtol`` for the Riemannian
        solvers, ``tol`` for the others: ``get_method(name).tol_option``).
    callback : callable, optional
        ``callback(intermediate_result)`` or ``callback(xk)``; raising ``StopIteration``
        stops the solver with ``status=99``.
    options : dict, optional
        Method options (see each method's docstring); unknown ones raise an
        :class:`~scipy.optimize.OptimizeWarning` and are ignored. One option is taken by
        ``minimize`` itself: ``point_tol``, the tolerance of the check that ``x0`` is a
        point of the manifold (``check_point``'s ``atol``; default ``1e-8``, ``1e-5``
        for float32 input). A start accepted only thanks to a loosened tolerance, or
        given in float32 (promoted to float64), is moved to the nearest point of the
        manifold (``manifold.closest_point``) before the method starts.
    bounds : scipy.optimize.Bounds or sequence of (min, max), optional
        Bounds on the coordinates of ``x`` (``None`` in a pair for none), as in scipy.
    constraints : dict or sequence of dict
        scipy's constraint dicts ``{"type": "ineq" or "eq", "fun": c, "jac": J, "args":
        (...)}``: ``"ineq"`` means :math:`c(x) \\ge 0`, ``J(x)`` is the Jacobian of shape
        ``(m, x.size)`` (forward differences without it). With bounds or constraints the
        problem is a :class:`~jitopt.problems.ConstrainedProblem` on ``manifold`` and the
        method ``"ralm"`` by default (see :doc:`/theory/constrained`); the unconstrained
        methods refuse them with a ``ValueError``.

    Returns
    -------
    OptimizeResult
        The method's result: ``x, fun, success, status, message, nit``, the oracle counts
        ``nfev, njev, nifo``, ``stationarity`` and ``stationarity_measure``, ``time``, and
        ``history`` with ``options={"history": True}`` (see :doc:`/theory/interface`).

    Examples
    --------
    >>> import numpy as np, jitopt
    >>> A = np.diag([3.0, 2.0, 1.0])
    >>> res = jitopt.minimize(lambda x: -x @ A @ x, np.ones(3) / np.sqrt(3),
    ...                       jac=lambda x: -2 * A @ x, manifold=jitopt.manifolds.Sphere(3))
    >>> round(res.fun, 8)
    -3.0

    A problem object goes to the methods that take it:

    >>> problem = jitopt.problems.pca(np.diag([5.0, 4.0, 1.0]), 1)
    >>> res = jitopt.minimize(problem, method="rsdm", options={"rng": 0})
    >>> round(res.fun, 6)
    -5.0
    """
    if options is not None and not isinstance(options, Mapping):
        raise TypeError(f"options must be a dict of method options or None, got "
                        f"{type(options).__name__}")
    options = dict(options or {})
    if isinstance(fun, BaseProblem):
        given = [name for name, value in (("args", args), ("jac", jac), ("manifold", manifold),
                                          ("bounds", bounds), ("constraints", constraints))
                 if value is not None and not (isinstance(value, (tuple, list)) and not value)]
        if given:
            raise TypeError(f"{', '.join(given)} cannot be given with a problem object: "
                            f"its oracles and domain are part of it")
        method = get_method(_default_method(fun) if method is None else method)
        _check_takes(method, fun)
        if hasattr(fun, "manifold"):
            x0 = checked_start(fun.manifold, x0, options)
        set_tol(method, tol, options)
        return method.solver(fun, x0, callback=callback, **known_options(method, options))
    if method is None:
        method = ("ralm" if bounds is not None or constraints else
                  "rtr" if isinstance(manifold, FixedRankEmbedded) else Problem.default_method)
    return minimize_function(fun, x0, args, jac, get_method(method), manifold, tol, callback,
                             options, bounds, constraints)


def _default_method(problem):
    """``nelder_mead`` for a problem without a gradient; the problem type's
    ``default_method``, else the first method that takes ``problem``; ``rtr`` in place of
    ``rlbfgs`` on the fixed-rank matrices, where the L-BFGS pairs moved by projection help
    little (``rtr`` is the fastest there in the benchmark's completion
    case, with or without ``ehess``)."""
    if not getattr(problem, "has_egrad", True):
        return "nelder_mead"  # a cost alone
    name = problem.default_method
    if name is None:
        names = available_methods(problem)
        if not names:
            raise TypeError(f"no registered method takes a {type(problem).__name__}")
        name = names[0]
    if name == "rlbfgs" and isinstance(problem.manifold, FixedRankEmbedded):
        return "rtr"
    return name
