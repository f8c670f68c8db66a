r"""Euclidean gradients and Hessian-vector products by automatic differentiation (JAX).

``jitopt.Problem(manifold, cost, egrad="jax")`` (and ``ehess="jax"``), or
``jitopt.minimize(fun, x0, jac="jax", ...)``, differentiate a cost written with
``jax.numpy``. JAX is an optional extra (``pip install "jitopt[jax]"``), imported only
here and only when asked for.

* The oracles are compiled once per problem (``jax.jit``); JAX traces them again only for
  a new shape or dtype.
* They run in float64 (complex128 for the complex manifolds) inside ``jax.enable_x64``
  scopes, one per call: the user's global JAX configuration is left as it was.
* ``cost_and_egrad`` comes from ``jax.value_and_grad`` (one forward and one reverse pass)
  and is counted as one ``nfev`` and one ``njev``, like any fused oracle; ``ehess(x, u)``
  is forward-over-reverse, ``jax.jvp`` of the gradient, counted in ``nhev``.
* For a real cost of a complex point, ``jax.grad`` returns the conjugate of jitopt's
  Euclidean gradient :math:`G = \partial f/\partial\,\mathrm{Re}\,x + i\,\partial f/
  \partial\,\mathrm{Im}\,x` (JAX's convention); the oracles conjugate it back, and the
  Hessian-vector product likewise.
"""

import numpy as np

__all__ = ["jax_oracles", "jax_constraint_oracles", "JAX_EXTRA_MESSAGE"]

JAX_EXTRA_MESSAGE = ('automatic differentiation ("jax") needs JAX, an optional extra of '
                     'jitopt: pip install "jitopt[jax]" (or pip install jax)')


def _import_jax():
    try:
        import jax
    except ImportError as err:
        raise ImportError(JAX_EXTRA_MESSAGE) from err
    return jax


def jax_oracles(cost, dtype=np.float64):
    r"""Counted-oracle callables of a ``jax.numpy`` cost: cost, gradient, both, and HVP.

    Parameters
    ----------
    cost : callable
        ``cost(x) -> scalar``, written with ``jax.numpy`` (traceable by ``jax.jit``), real
        valued.
    dtype : numpy dtype
        ``np.float64`` or ``np.complex128``: the dtype of the points (the manifold's
        ``dtype``).

    Returns
    -------
    cost, egrad, cost_and_egrad, ehess : callable
        ``cost(x) -> float``, ``egrad(x) -> ndarray``, ``cost_and_egrad(x) -> (float,
        ndarray)`` and ``ehess(x, u) -> ndarray`` on NumPy arrays, returning new writable
        NumPy arrays of ``dtype``.

    Raises
    ------
    ImportError
        Without JAX, naming the extra to install.

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt._core.autodiff import jax_oracles
    >>> jnp = __import__("pytest").importorskip("jax.numpy")
    >>> f, g, fg, h = jax_oracles(lambda x: jnp.sum(x ** 3))
    >>> g(np.array([1.0, 2.0])), h(np.array([1.0, 2.0]), np.array([1.0, 0.0]))
    (array([ 3., 12.]), array([6., 0.]))
    """
    if not callable(cost):
        raise TypeError(f"cost must be callable to be differentiated, got {type(cost).__name__}")
    jax = _import_jax()
    complex_ = np.issubdtype(dtype, np.complexfloating)
    x64 = jax.enable_x64 if hasattr(jax, "enable_x64") else _legacy_x64(jax)
    value = jax.jit(cost)
    grad = jax.grad(cost)
    value_and_grad = jax.jit(jax.value_and_grad(cost))
    grad_jit = jax.jit(grad)
    hvp = jax.jit(lambda x, u: jax.jvp(grad, (x,), (u,))[1])

    def out(a):  # a writable NumPy copy; JAX's complex gradient is the conjugate of G
        a = np.array(a, dtype=dtype)
        return np.conj(a, out=a) if complex_ else a

    def scalar(v):  # a complex cost is handed on as complex, for the problem to refuse
        v = np.asarray(v)
        return complex(v) if np.iscomplexobj(v) else float(v)

    def cost_(x):
        with x64(True):
            return scalar(value(x))

    def egrad(x):
        with x64(True):
            return out(grad_jit(x))

    def cost_and_egrad(x):
        with x64(True):
            v, g = value_and_grad(x)
            return scalar(v), out(g)

    def ehess(x, u):
        with x64(True):
            return out(hvp(x, np.asarray(u, dtype=dtype)))

    return cost_, egrad, cost_and_egrad, ehess


def jax_constraint_oracles(values):
    r"""The values and the vector-Jacobian product of constraints written with
    ``jax.numpy`` (real points).

    Parameters
    ----------
    values : callable
        ``values(x) -> (m,)``, traceable by ``jax.jit``.

    Returns
    -------
    values, vjp : callable
        ``values(x) -> ndarray`` of shape ``(m,)`` and ``vjp(x, w) -> ndarray``, the
        Euclidean :math:`\sum_i w_i \nabla g_i(x)` (one reverse pass), on NumPy arrays.

    Raises
    ------
    ImportError
        Without JAX, naming the extra to install.

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt._core.autodiff import jax_constraint_oracles
    >>> jnp = __import__("pytest").importorskip("jax.numpy")
    >>> g, vjp = jax_constraint_oracles(lambda x: jnp.array([x[0] ** 2, x[0] * x[1]]))
    >>> g(np.array([1.0, 2.0])), vjp(np.array([1.0, 2.0]), np.array([1.0, 1.0]))
    (array([1., 2.]), array([4., 1.]))
    """
    if not callable(values):
        raise TypeError(f"the constraints must be callable to be differentiated, got "
                        f"{type(values).__name__}")
    jax = _import_jax()
    x64 = jax.enable_x64 if hasattr(jax, "enable_x64") else _legacy_x64(jax)
    value = jax.jit(values)
    pullback = jax.jit(lambda x, w: jax.vjp(values, x)[1](w)[0])

    def values_(x):
        with x64(True):
            return np.array(value(x), dtype=np.float64)

    def vjp(x, w):
        with x64(True):
            return np.array(pullback(x, np.asarray(w, dtype=np.float64)), dtype=np.float64)

    return values_, vjp


def _legacy_x64(jax):
    """``jax.experimental.enable_x64`` of JAX versions before ``jax.enable_x64``."""
    from jax.experimental import enable_x64

    return lambda on: enable_x64(on)
