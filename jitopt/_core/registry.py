"""The method registry, :func:`minimize`, and scipy-compatible method callables."""

import inspect
import warnings

import numpy as np
from scipy.optimize import OptimizeWarning

from .problem import Problem
from .validation import check_real

__all__ = ["register_method", "get_method", "available_methods", "minimize", "Method"]

_METHODS = {}


class Method:
    """A registered solver, callable the way :func:`scipy.optimize.minimize` calls a custom method.

    ``scipy.optimize.minimize(fun, x0, jac=jac, method=jitopt.get_method("rgd"),
    options={"manifold": jitopt.manifolds.Stiefel(n, p), ...})`` works: scipy passes the
    flattened ``x0`` and every option. The solver works on points of the manifold's shape;
    ``fun`` and ``jac`` receive ``x`` in the shape of the ``x0`` they were given (flat, for
    scipy) and ``result.x`` has that shape too.

    Attributes
    ----------
    name : str
        The registered name.
    solver : callable
        The problem-level solver, ``solver(problem, x0, **options)``.
    tol_option : str
        The solver option that scipy's ``tol`` sets.
    finite_sum : bool
        Whether the solver needs a :class:`~jitopt.FiniteSumProblem` (per-sample oracles),
        which cannot be built from ``fun`` and ``jac``: such methods are called directly.
    """

    def __init__(self, name, solver, tol_option, finite_sum=False):
        self.name = name
        self.solver = solver
        self.tol_option = tol_option
        self.finite_sum = finite_sum
        params = inspect.signature(solver).parameters
        self.options = tuple(p for p in params if p not in ("problem", "x0"))
        self.__doc__ = solver.__doc__

    def __repr__(self):
        return f"<jitopt method {self.name!r}>"

    def __call__(self, fun, x0, args=(), jac=None, hess=None, hessp=None, bounds=None,
                 constraints=(), callback=None, **options):
        if bounds is not None or constraints not in (None, (), []):
            raise ValueError(
                f"method {self.name!r} takes no bounds or constraints: express the domain "
                f"as a manifold (options={{'manifold': ...}})"
            )
        if hess is not None or hessp is not None:
            warnings.warn(f"method {self.name!r} does not use hess/hessp", RuntimeWarning,
                          stacklevel=2)
        manifold = options.pop("manifold", None)
        tol = options.pop("tol", None)
        return _minimize(fun, x0, args, jac, self, manifold, tol, callback, options)


def register_method(name, tol_option="gtol", finite_sum=False):
    """Decorator registering a solver function under ``name``: ``@register_method("rgd")``.

    The solver must have the signature ``solver(problem, x0=None, *, callback=None,
    <options>)`` and return an :class:`~jitopt.OptimizeResult`. ``finite_sum=True`` marks
    solvers that need a :class:`~jitopt.FiniteSumProblem`.
    """

    def decorator(solver):
        if name in _METHODS:
            raise ValueError(f"a method named {name!r} is already registered")
        _METHODS[name] = Method(name, solver, tol_option, finite_sum)
        return solver

    return decorator


def available_methods():
    """Names of the registered methods, in registration order."""
    return tuple(_METHODS)


def get_method(method):
    """The :class:`Method` registered under ``method`` (case-insensitive)."""
    if isinstance(method, Method):
        return method
    if not isinstance(method, str):
        raise TypeError(f"method must be a string or a jitopt Method, got {type(method).__name__}")
    key = method.lower()
    if key not in _METHODS:
        raise ValueError(
            f"Unknown method {method!r}; available methods: {', '.join(_METHODS)}"
        )
    return _METHODS[key]


def minimize(fun, x0, args=(), jac=None, method="rgd", manifold=None, tol=None,
             callback=None, options=None):
    """Minimize ``fun`` over a manifold, with :func:`scipy.optimize.minimize`'s conventions.

    Parameters
    ----------
    fun : callable
        ``fun(x, *args) -> float``.
    x0 : array_like
        Starting point, a point of ``manifold`` (any shape; a flat array of the right size
        is reshaped to the manifold's shape and ``result.x`` is returned flat).
    args : tuple
        Extra arguments of ``fun`` and ``jac``.
    jac : callable, bool, "2-point" or None
        ``jac(x, *args)``: the Euclidean gradient, of the same shape as ``x``. ``True``
        means ``fun`` returns ``(f, g)``. ``None`` or ``"2-point"``: forward differences in
        the ambient space, ``x.size`` extra cost evaluations per gradient (counted in
        ``nfev``); only sensible for small problems whose cost extends off the manifold.
    method : str or Method
        A name from :func:`available_methods` (default ``"rgd"``).
    manifold : jitopt.manifolds.Manifold, optional
        The domain; ``None`` means ``Euclidean(*x0.shape)``.
    tol : float, optional
        Tolerance; sets the method's main stopping option (``gtol`` for ``rgd``).
    callback : callable, optional
        ``callback(intermediate_result)`` or ``callback(xk)``; raising ``StopIteration``
        stops the solver with ``status=99``.
    options : dict, optional
        Method options (see each method's docstring); unknown ones raise an
        :class:`~scipy.optimize.OptimizeWarning` and are ignored.

    Returns
    -------
    OptimizeResult

    Examples
    --------
    >>> import numpy as np, jitopt
    >>> A = np.diag([3.0, 2.0, 1.0])
    >>> res = jitopt.minimize(lambda x: -x @ A @ x, np.ones(3) / np.sqrt(3),
    ...                       jac=lambda x: -2 * A @ x, manifold=jitopt.manifolds.Sphere(3))
    >>> round(res.fun, 8)
    -3.0
    """
    return _minimize(fun, x0, args, jac, get_method(method), manifold, tol, callback,
                     dict(options or {}))


def _minimize(fun, x0, args, jac, method, manifold, tol, callback, options):
    from ..manifolds import Euclidean, Manifold

    if method.finite_sum:
        raise TypeError(
            f"method {method.name!r} needs a jitopt.FiniteSumProblem (oracles over sample "
            f"indices), which cannot be built from fun and jac: call "
            f"jitopt.solvers.{method.solver.__name__}(jitopt.FiniteSumProblem(...), x0) instead"
        )
    if not callable(fun):
        raise TypeError(f"fun must be callable, got {type(fun).__name__}")
    if tol is not None:
        check_real("tol", tol, low=0.0)
    if not isinstance(args, tuple):
        args = (args,)
    x0 = np.asarray(x0)
    if x0.ndim == 0:
        x0 = x0.reshape(1)
    if manifold is None:
        manifold = Euclidean(*x0.shape)
    elif not isinstance(manifold, Manifold):
        raise TypeError(f"manifold must be a jitopt.manifolds.Manifold, got "
                        f"{type(manifold).__name__}")
    user_shape = x0.shape
    if x0.ndim == 1 and x0.shape != manifold.shape and x0.size == np.prod(manifold.shape):
        x0 = x0.reshape(manifold.shape)

    def user(x):
        return x.reshape(user_shape)

    def point(g):
        g = np.asarray(g, dtype=float)
        return g.reshape(manifold.shape) if g.size == x0.size else g

    if jac is True:
        def cost_and_egrad(x):
            f, g = fun(user(x), *args)
            return f, point(g)
        problem = Problem(manifold, None, None, cost_and_egrad=cost_and_egrad)
    else:
        def cost(x):
            return fun(user(x), *args)
        if callable(jac):
            def egrad(x):
                return point(jac(user(x), *args))
        elif jac is None or jac == "2-point":
            def egrad(x):
                return _forward_difference(problem.cost, x)
        else:
            raise ValueError(f"jac must be callable, True, None or '2-point', got {jac!r}")
        problem = Problem(manifold, cost, egrad)

    if tol is not None:
        options.setdefault(method.tol_option, tol)
    unknown = [k for k in options if k not in method.options]
    if unknown:
        warnings.warn(f"Unknown solver options: {', '.join(unknown)}", OptimizeWarning,
                      stacklevel=3)
        for k in unknown:
            del options[k]
    res = method.solver(problem, x0, callback=_reshaped_callback(callback, user), **options)
    res.x = user(res.x)
    return res


def _reshaped_callback(callback, user):
    """The user's callback, seeing points in the shape of the ``x0`` it was given."""
    if callback is None or not callable(callback):
        return callback
    from .result import _wants_intermediate_result

    if _wants_intermediate_result(callback):
        def reshaped(intermediate_result):
            intermediate_result.x = user(intermediate_result.x)
            return callback(intermediate_result=intermediate_result)
    else:
        def reshaped(xk):
            return callback(user(xk))
    return reshaped


def _forward_difference(cost, x):
    """Forward-difference gradient of ``cost`` at ``x`` in the ambient coordinates."""
    f0 = cost(x)
    g = np.empty(x.shape)
    xe = np.array(x, dtype=float)
    flat, gflat = xe.reshape(-1), g.reshape(-1)
    for i in range(flat.size):
        h = np.sqrt(np.finfo(float).eps) * max(1.0, abs(flat[i]))
        old = flat[i]
        flat[i] = old + h
        gflat[i] = (cost(xe) - f0) / h
        flat[i] = old
    return g
