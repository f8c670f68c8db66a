r"""Constrained problems on manifolds: a cost with inequality and equality constraints."""

import numpy as np

from ..validation import as_array
from .autodiff import jax_constraint_oracles
from .counts import ConstraintCounts
from .problem import BaseProblem, Problem
from .result import OracleError

__all__ = ["ConstrainedProblem"]


class _Constraints:
    """One family of user constraints (``ineq`` or ``eq``): the values and the weighted
    sum of gradients, by a Jacobian or a vector-Jacobian product; the number of
    constraints is fixed by the first evaluation."""

    def __init__(self, name, values, jac, vjp, shape, dtype):
        if "jax" in (jac, vjp):
            if (jac, vjp) not in (("jax", None), (None, "jax")):
                raise TypeError(f'{name}_egrad="jax" or {name}_vjp="jax" takes no other '
                                f'gradient oracle')
            if np.dtype(dtype).kind == "c":
                raise ValueError(f'{name}_vjp="jax" needs a real manifold')
            values, vjp = jax_constraint_oracles(values)
            jac = None
        elif isinstance(jac, str) or isinstance(vjp, str):
            raise ValueError(f'{name}_egrad and {name}_vjp must be callable, None or "jax", '
                             f'got {jac!r} and {vjp!r}')
        if values is None:
            if jac is not None or vjp is not None:
                raise TypeError(f"{name}_egrad and {name}_vjp need {name}")
            self.name, self.size = None, 0
            return
        for what, f in ((name, values), (f"{name}_egrad", jac), (f"{name}_vjp", vjp)):
            if f is not None and not callable(f):
                raise TypeError(f"{what} must be callable, got {type(f).__name__}")
        if (jac is None) == (vjp is None):
            raise TypeError(f"{name} needs exactly one gradient oracle: {name}_egrad(x) -> "
                            f"(m, *manifold.shape) or {name}_vjp(x, w) -> manifold.shape")
        self.name, self.values, self.jac, self.vjp, self.shape = name, values, jac, vjp, shape
        self.size = None  # the number of constraints, once evaluated

    def value(self, x):
        out = BaseProblem.call_oracle(self.name, self.values, x)
        try:
            out = np.asarray(out, dtype=float)
        except (TypeError, ValueError):
            raise OracleError(f"The oracle {self.name} must return an array of floats, got "
                              f"{type(out).__name__}") from None
        if out.ndim > 1:
            raise OracleError(f"The oracle {self.name} must return a 1-D array, got shape "
                              f"{out.shape}")
        out = out.reshape(-1)
        if self.size is None:
            self.size = out.size
        elif out.size != self.size:
            raise OracleError(f"The oracle {self.name} returned {out.size} values, not the "
                              f"{self.size} of its first call")
        return BaseProblem.check_finite(self.name, out)

    def weighted_gradient(self, x, w):
        if self.vjp is not None:
            out = BaseProblem.call_oracle(f"{self.name}_vjp", self.vjp, x, w.copy())
            what, want = f"{self.name}_vjp", self.shape
        else:
            out = BaseProblem.call_oracle(f"{self.name}_egrad", self.jac, x)
            what, want = f"{self.name}_egrad", (self.size,) + self.shape
        if not isinstance(out, np.ndarray) or out.shape != want:
            raise OracleError(f"The oracle {what} must return an array of shape {want}, got "
                              f"{type(out).__name__} of shape {np.shape(out)}")
        BaseProblem.check_finite(what, out)
        return out if self.vjp is not None else np.tensordot(w, out, axes=1)


def _bound(name, value, shape):
    """The finite entries of ``value`` (a scalar or an array of ``shape``) and their flat
    indices (a slice when every entry is finite); ``None`` for no bound."""
    if value is None:
        return None
    arr = as_array(name, value)
    if arr.dtype.kind not in "biuf" or np.isnan(arr).any():
        raise ValueError(f"{name} must be real numbers or +-inf (no NaN), got {value!r}")
    try:
        arr = np.broadcast_to(arr.astype(float), shape).ravel()
    except ValueError:
        raise ValueError(f"{name} must be a scalar or of shape {shape}, got shape "
                         f"{arr.shape}") from None
    finite = np.isfinite(arr)
    index = slice(None) if finite.all() else np.flatnonzero(finite)
    return arr[index].copy(), index


class ConstrainedProblem(BaseProblem):
    r"""A smooth problem with constraints, :math:`\min_{x\in\mathcal M} f(x)` subject to
    :math:`g_i(x) \le 0` (:math:`i = 1..m`) and :math:`h_j(x) = 0` (:math:`j = 1..p`).

    Constraints that are a manifold (unit norm, orthogonality) belong in ``manifold``; the
    others here. The constrained methods (``ralm``, ``repm``) take it; the unconstrained
    ones refuse it, so that no solver drops the constraints silently.

    Parameters
    ----------
    manifold : jitopt.manifolds.Manifold
        The domain.
    cost, egrad, cost_and_egrad
        The cost :math:`f` and its Euclidean gradient, as for :class:`~jitopt.Problem`
        (``egrad="jax"`` too); kept as the plain problem ``problem.objective``.
    ineq : callable, optional
        ``ineq(x) -> (m,)``: the values :math:`g(x)`; feasible where all are ``<= 0``.
    ineq_egrad : callable or "jax", optional
        ``ineq_egrad(x) -> (m, *manifold.shape)``: row ``i`` the Euclidean gradient of
        :math:`g_i`.
    ineq_vjp : callable or "jax", optional
        ``ineq_vjp(x, w) -> manifold.shape``: :math:`\sum_i w_i \nabla g_i(x)`, for many
        constraints (no :math:`m \times n` Jacobian). One of the two gradient forms is
        required with ``ineq``. ``"jax"`` (for either form): JAX differentiates ``ineq``,
        written with ``jax.numpy`` (one reverse pass per weighted sum; the extra
        ``jitopt[jax]``, real manifolds).
    eq, eq_egrad, eq_vjp : callable, optional
        The same for the equality constraints :math:`h(x) = 0`.
    lower, upper : float or array_like, optional
        Entrywise bounds ``lower <= x <= upper`` (scalars or arrays of
        ``manifold.shape``; ``-inf``/``inf`` entries are no bound), as inequality
        constraints with built-in gradients, after those of ``ineq``: ``lower=0`` is
        :math:`x \ge 0`.
    fopt, xopt : optional
        The known optimal value and minimizer, when there are any.

    Notes
    -----
    The numbers of constraints are found at the first evaluation; a later call returning
    another number is an :class:`~jitopt.OracleError`. The counters ``problem.counts`` are
    :class:`OracleCounts <jitopt.OracleCounts>` with two more: ``ncev``, the points at
    which the constraint values (``ineq`` and ``eq`` together) were evaluated, and
    ``ncjev``, the points at which their gradient oracles were (a weighted sum of all
    gradients at once). The built-in bounds call no user oracle and count in neither. Only
    weighted sums of constraint gradients are ever formed: every jitopt manifold's
    ``euclidean_to_riemannian_gradient`` is linear, so the Riemannian gradient of the
    Lagrangian :math:`L = f + \mu^\top g + \lambda^\top h` is the conversion of
    :math:`\nabla f + \sum_i \mu_i\nabla g_i + \sum_j \lambda_j \nabla h_j`, with the
    manifold's metric (see :doc:`/theory/constrained`).

    Examples
    --------
    The largest eigenvalue of a positive matrix on the sphere with :math:`x \ge 0`: the
    Perron vector, where no constraint is active.

    >>> import numpy as np, jitopt
    >>> A = np.array([[2.0, 1.0], [1.0, 3.0]])
    >>> problem = jitopt.ConstrainedProblem(jitopt.manifolds.Sphere(2), lambda x: -x @ A @ x,
    ...                                     lambda x: -2 * A @ x, lower=0.0)
    >>> x = np.array([0.6, 0.8])
    >>> problem.constraints(x)
    (array([-0.6, -0.8]), array([], dtype=float64))
    >>> problem.violation(np.array([-0.6, 0.8]))
    0.6
    """

    #: the augmented Lagrangian method (see :doc:`/theory/constrained`)
    default_method = "ralm"

    def __init__(self, manifold, cost, egrad=None, *, cost_and_egrad=None, ineq=None,
                 ineq_egrad=None, ineq_vjp=None, eq=None, eq_egrad=None, eq_vjp=None,
                 lower=None, upper=None, fopt=None, xopt=None):
        super().__init__()
        self.objective = Problem(manifold, cost, egrad, cost_and_egrad=cost_and_egrad,
                                 fopt=fopt, xopt=xopt)
        self.counts = self.objective.counts = ConstraintCounts()  # one set of counters
        self.manifold = manifold
        self.fopt, self.xopt = self.objective.fopt, xopt
        shape = manifold.shape
        self._ineq = _Constraints("ineq", ineq, ineq_egrad, ineq_vjp, shape, manifold.dtype)
        self._eq = _Constraints("eq", eq, eq_egrad, eq_vjp, shape, manifold.dtype)
        if np.dtype(manifold.dtype).kind == "c" and (lower is not None or upper is not None):
            raise ValueError(f"lower and upper need a real manifold, got {manifold!r}")
        self._lower = _bound("lower", lower, shape)
        self._upper = _bound("upper", upper, shape)
        if lower is not None and upper is not None and np.any(
                np.broadcast_to(as_array("lower", lower), shape)
                > np.broadcast_to(as_array("upper", upper), shape)):
            raise ValueError("lower must be at most upper in every entry")
        if all(c is None for c in (ineq, eq, lower, upper)):
            raise TypeError("a ConstrainedProblem needs constraints: give ineq, eq, lower or "
                            "upper (or use jitopt.Problem)")

    def constraints(self, x):
        """``(g, h)``: the inequality values (those of ``ineq``, then ``lower - x`` and
        ``x - upper`` at the bounded entries) and the equality values at ``x`` (counts one
        ``ncev`` when a user oracle is called)."""
        if np.shape(x) != self.manifold.shape:
            raise ValueError(f"x must have shape {self.manifold.shape}, got {np.shape(x)} (the "
                             f"points of {self.manifold!r})")
        parts, h = [], np.zeros(0)
        if self._ineq.name or self._eq.name:
            self.counts.add(ncev=1)
        if self._ineq.name:
            parts.append(self._ineq.value(x))
        flat = x.reshape(-1)
        if self._lower is not None:
            parts.append(self._lower[0] - flat[self._lower[1]])
        if self._upper is not None:
            parts.append(flat[self._upper[1]] - self._upper[0])
        if self._eq.name:
            h = self._eq.value(x)
        g = parts[0] if len(parts) == 1 else np.concatenate(parts) if parts else np.zeros(0)
        return g, h

    def constraint_vjp(self, x, w, v):
        r""":math:`\sum_i w_i \nabla g_i(x) + \sum_j v_j \nabla h_j(x)`, Euclidean, of
        ``manifold.shape`` (counts one ``ncjev`` when a user gradient oracle is called: not
        when the weights of its constraints are all zero)."""
        out = np.zeros(self.manifold.shape)
        m = self._ineq.size or 0
        called = False
        if self._ineq.name and np.any(w[:m]):
            out += self._ineq.weighted_gradient(x, w[:m])
            called = True
        if self._eq.name and np.any(v):
            out += self._eq.weighted_gradient(x, v)
            called = True
        if called:
            self.counts.add(ncjev=1)
        k, flat = m, out.reshape(-1)
        for bound, sign in ((self._lower, -1.0), (self._upper, 1.0)):
            if bound is not None:
                n = bound[0].size
                flat[bound[1]] += sign * w[k:k + n]
                k += n
        return out

    def violation(self, x):
        """The largest constraint violation at ``x``: :math:`\\max(\\max_i g_i^+,
        \\max_j |h_j|)` (0 when feasible)."""
        g, h = self.constraints(x)
        return max_violation(g, h)

    def kkt(self, x, ineq_multipliers, eq_multipliers, *, values=None):
        r"""The parts of the KKT residual at ``x`` with the given multipliers
        :math:`\mu` (negative entries count as 0) and :math:`\lambda`.

        Parameters
        ----------
        x : ndarray
            A point of the manifold.
        ineq_multipliers, eq_multipliers : array_like
            :math:`\mu` of shape ``(m,)`` and :math:`\lambda` of shape ``(p,)``.
        values : tuple, optional
            ``(f, egrad, g, h)`` already evaluated at ``x`` (the oracles are then not
            called for them).

        Returns
        -------
        dict
            ``lagrangian_gradient_norm`` (:math:`\|\operatorname{grad} L(x, \mu,
            \lambda)\|_x`), ``max_violation``, ``complementarity`` (:math:`\max_i |\mu_i
            g_i|`), ``kkt_residual`` (the largest of the three) and ``fun``.
        """
        mu = np.maximum(np.asarray(ineq_multipliers, dtype=float), 0.0)
        lam = np.asarray(eq_multipliers, dtype=float)
        f, gf, g, h = (self.objective.cost_and_egrad(x) + self.constraints(x)
                       if values is None else values)
        if mu.shape != g.shape or lam.shape != h.shape:
            raise ValueError(f"the multipliers must have shapes {g.shape} and {h.shape}, got "
                             f"{mu.shape} and {lam.shape}")
        M = self.manifold
        grad = M.euclidean_to_riemannian_gradient(x, gf + self.constraint_vjp(x, mu, lam))
        parts = {"lagrangian_gradient_norm": M.norm(x, grad),
                 "max_violation": max_violation(g, h),
                 "complementarity": float(np.max(np.abs(mu * g), initial=0.0))}
        return {**parts, "kkt_residual": max(parts.values()), "fun": f}

    def __repr__(self):
        return f"{type(self).__name__}({self.manifold!r})"


def max_violation(g, h):
    """:math:`\\max(\\max_i g_i^+, \\max_j |h_j|)`, 0 without constraints."""
    return float(max(np.max(g, initial=0.0), np.max(np.abs(h), initial=0.0)))
