"""The scipy side of the front door: :func:`jitopt.minimize` on a callable ``fun`` (a
:class:`~jitopt.Problem` built from ``fun`` and ``jac``, points reshaped to the caller's
``x0``), and the option handling shared with problem objects (``tol``, ``point_tol``,
unknown options), as :func:`scipy.optimize.minimize` does them."""

import warnings

import numpy as np

from ..validation import as_array, check_real
from ..manifolds import Euclidean, Manifold, manifold_type_error
from .problem import Problem
from .run import wants_intermediate_result

__all__ = ["minimize_function", "checked_start", "set_tol", "known_options"]


def checked_start(manifold, x0, options):
    """``x0`` checked against the ``point_tol`` option (popped), float32 promoted."""
    point_tol = options.pop("point_tol", None)
    if point_tol is not None:
        point_tol = check_real("point_tol", point_tol, low=0.0)
    if x0 is None or (point_tol is None and as_array("x0", x0).dtype == np.float64):
        return x0
    return manifold.validate_point(x0, "x0", atol=point_tol)


def set_tol(method, tol, options):
    if tol is not None:
        check_real("tol", tol, low=0.0)
        options.setdefault(method.tol_option, tol)


def known_options(method, options):
    """``options`` without those the method does not take (with an OptimizeWarning)."""
    unknown = [k for k in options if k not in method.options]
    if unknown:
        from scipy.optimize import OptimizeWarning  # scipy.optimize takes 0.3 s to import

        warnings.warn(f"Unknown solver options: {', '.join(unknown)}", OptimizeWarning,
                      stacklevel=4)
    return {k: v for k, v in options.items() if k in method.options}


def minimize_function(fun, x0, args, jac, method, manifold, tol, callback, options):
    """:func:`jitopt.minimize` (and a :class:`~jitopt.Method` called by scipy) on a callable
    ``fun``: the problem made from ``fun`` and ``jac`` on ``manifold``, solved by
    ``method`` from ``x0``, with ``result.x`` in the shape of ``x0``."""
    if not issubclass(Problem, method.problem_type):
        raise TypeError(
            f"method {method.name!r} takes a {method.problem_type.__name__}, which cannot be "
            f"built from fun and jac: build one and call jitopt.minimize(problem, "
            f"method={method.name!r}) instead")
    if not callable(fun):
        raise TypeError(f"fun must be callable or a problem object, got "
                        f"{type(fun).__name__}")
    if x0 is None:
        raise TypeError("x0 is required with a callable fun")
    if not isinstance(args, tuple):
        args = (args,)
    if manifold is not None and not isinstance(manifold, Manifold):
        raise manifold_type_error(manifold)
    if isinstance(x0, tuple) and hasattr(manifold, "pack"):
        x0 = manifold.pack(x0)  # the parts of a Product point
    x0 = as_array("x0", x0)
    if x0.ndim == 0:
        x0 = x0.reshape(1)
    if manifold is None:
        manifold = Euclidean(*x0.shape)
    user_shape = x0.shape
    if x0.ndim == 1 and x0.shape != manifold.shape and x0.size == np.prod(manifold.shape):
        x0 = x0.reshape(manifold.shape)
    x0 = checked_start(manifold, x0, options)

    def user(x):
        return x.reshape(user_shape)

    def point(g):
        if isinstance(g, tuple) and hasattr(manifold, "pack"):
            return manifold.pack(g)
        # a complex gradient on a real manifold is left complex: the problem refuses it
        g = np.asarray(g, dtype=None if np.iscomplexobj(g) else manifold.dtype)
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
        elif jac == "jax":
            egrad = "jax"  # JAX differentiates cost (jitopt[jax])
        elif jac is None and method.derivative_free:
            egrad = None  # the method calls the cost only
        elif jac is None or jac == "2-point":
            def egrad(x):
                return _forward_difference(problem.cost, x)
        else:
            raise ValueError(f"jac must be callable, True, None, '2-point' or 'jax', got "
                             f"{jac!r}")
        problem = Problem(manifold, cost, egrad)

    set_tol(method, tol, options)
    res = method.solver(problem, x0, callback=_reshaped_callback(callback, user),
                        **known_options(method, options))
    res.x = user(res.x)
    return res


def _reshaped_callback(callback, user):
    """The user's callback, seeing points in the shape of the ``x0`` it was given."""
    if callback is None or not callable(callback):
        return callback
    if wants_intermediate_result(callback):
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
