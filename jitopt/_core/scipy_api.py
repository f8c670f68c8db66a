"""The scipy side of the front door: :func:`jitopt.minimize` on a callable ``fun`` (a
:class:`~jitopt.Problem` built from ``fun`` and ``jac``, points reshaped to the caller's
``x0``), and the option handling shared with problem objects (``tol``, ``point_tol``,
unknown options), as :func:`scipy.optimize.minimize` does them."""

import warnings

import numpy as np

from ..validation import as_array, check_real
from ..manifolds import Euclidean, Manifold, manifold_type_error
from .constrained import ConstrainedProblem
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


def minimize_function(fun, x0, args, jac, method, manifold, tol, callback, options,
                      bounds=None, constraints=()):
    """:func:`jitopt.minimize` (and a :class:`~jitopt.Method` called by scipy) on a callable
    ``fun``: the problem made from ``fun`` and ``jac`` on ``manifold`` (a
    :class:`~jitopt.problems.ConstrainedProblem` with scipy-style ``bounds`` and
    ``constraints``), solved by ``method`` from ``x0``, with ``result.x`` in the shape of
    ``x0``."""
    constrained = bounds is not None or bool(constraints)
    kind = ConstrainedProblem if constrained else Problem
    if not issubclass(kind, method.problem_type):
        if constrained:
            raise ValueError(f"method {method.name!r} takes no bounds or constraints: express "
                             f"the domain as a manifold, or use a method for a "
                             f"ConstrainedProblem (ralm, the default with constraints, or repm)")
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

    oracles = {"cost": None, "egrad": None}
    if jac is True:
        def cost_and_egrad(x):
            f, g = fun(user(x), *args)
            return f, point(g)
        oracles["cost_and_egrad"] = cost_and_egrad
    else:
        def cost(x):
            return fun(user(x), *args)
        oracles["cost"] = cost
        if callable(jac):
            def egrad(x):
                return point(jac(user(x), *args))
        elif jac == "jax":
            egrad = "jax"  # JAX differentiates cost (jitopt[jax])
        elif jac is None and method.derivative_free:
            egrad = None  # the method calls the cost only
        elif jac is None or jac == "2-point":
            def egrad(x):  # the objective's counted cost
                return _forward_difference(getattr(problem, "objective", problem).cost, x)
        else:
            raise ValueError(f"jac must be callable, True, None, '2-point' or 'jax', got "
                             f"{jac!r}")
        oracles["egrad"] = egrad
    if constrained:
        oracles.update(scipy_constraints(constraints, user, manifold.shape))
        oracles.update(scipy_bounds(bounds, x0.size, manifold.shape))
    problem = kind(manifold, **oracles)

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


def _forward_difference(fun, x):
    """Forward differences of ``fun`` at ``x`` in the ambient coordinates: the gradient of a
    scalar function, the Jacobian ``(m, *x.shape)`` of one with ``m`` values."""
    f0 = np.asarray(fun(x), dtype=float)
    J = np.empty((f0.size, x.size))
    xe = np.array(x, dtype=float)
    flat = xe.reshape(-1)
    for i in range(flat.size):
        h = np.sqrt(np.finfo(float).eps) * max(1.0, abs(flat[i]))
        old = flat[i]
        flat[i] = old + h
        J[:, i] = (np.asarray(fun(xe), dtype=float).reshape(-1) - f0.reshape(-1)) / h
        flat[i] = old
    return J.reshape(x.shape) if f0.ndim == 0 else J.reshape((f0.size,) + x.shape)


def scipy_constraints(constraints, user, shape):
    """The ``ineq`` and ``eq`` oracles of a :class:`ConstrainedProblem` from scipy's
    constraint dicts ``{"type": "ineq" or "eq", "fun": c, "jac": J, "args": (...)}``, where
    ``"ineq"`` means :math:`c(x) \\ge 0` (so :math:`g = -c`) and ``J(x)`` is the Jacobian
    ``(m, x.size)`` (forward differences without it, like scipy); as in scipy, a constraint
    gets its own ``args``, not the objective's."""
    if isinstance(constraints, dict):
        constraints = (constraints,)
    families = {"ineq": [], "eq": []}
    for i, c in enumerate(constraints):
        if not isinstance(c, dict) or c.get("type") not in families or \
                not callable(c.get("fun")) or not (c.get("jac") is None or callable(c["jac"])):
            raise TypeError(f"constraints[{i}] must be a dict with 'type' 'ineq' or 'eq', a "
                            f"callable 'fun' and optionally a callable 'jac' and 'args' "
                            f"(scipy's form), got {c!r}")
        families[c["type"]].append((c["fun"], c.get("jac"), tuple(c.get("args", ()))))
    out = {}
    for name, parts in families.items():
        if not parts:
            continue
        sign = -1.0 if name == "ineq" else 1.0  # scipy's c(x) >= 0 is g(x) = -c(x) <= 0

        def values(x, parts=parts, sign=sign):
            return sign * np.concatenate([np.atleast_1d(np.asarray(f(user(x), *a), float))
                                          for f, _, a in parts])

        def jacobian(x, parts=parts, sign=sign):
            rows = []
            for f, J, a in parts:
                Jx = (_forward_difference(lambda z: f(user(z), *a), x) if J is None
                      else np.asarray(J(user(x), *a), dtype=float))
                rows.append(Jx.reshape(-1, *shape))
            return sign * np.concatenate(rows)

        out[name], out[f"{name}_egrad"] = values, jacobian
    return out


def scipy_bounds(bounds, size, shape):
    """``lower`` and ``upper`` of a :class:`ConstrainedProblem` from scipy's ``bounds``: a
    ``scipy.optimize.Bounds`` or one ``(min, max)`` pair per coordinate, ``None`` for
    no bound."""
    if bounds is None:
        return {}
    if hasattr(bounds, "lb") and hasattr(bounds, "ub"):  # scipy.optimize.Bounds
        lower, upper = (np.broadcast_to(np.asarray(b, dtype=float), (size,)).copy()
                        for b in (bounds.lb, bounds.ub))
    else:
        try:
            pairs = [(-np.inf if lo is None else lo, np.inf if hi is None else hi)
                     for lo, hi in bounds]
            lower, upper = np.array(pairs, dtype=float).reshape(-1, 2).T
        except (TypeError, ValueError):
            raise TypeError("bounds must be a scipy.optimize.Bounds or a sequence of "
                            "(min, max) pairs") from None
        if lower.size != size:
            raise ValueError(f"bounds must have one (min, max) pair per coordinate of x0 "
                             f"({size}), got {lower.size}")
    return {"lower": lower.reshape(shape), "upper": upper.reshape(shape)}
