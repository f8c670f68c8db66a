r"""The zeroth-order gradient estimator of the zeroth-order IHT variant (HZO-HT)."""

import math

import numpy as np

from .._core.result import NonFiniteOracle, OracleError
from ..validation import check_array, check_choice, check_int, check_real, check_rng

__all__ = ["zo_gradient"]


def _value(fun, x):
    """``fun(x)`` as a finite float: an estimate from a NaN or inf value would be NaN or
    inf itself, with no word of why."""
    f = fun(x)
    if np.ndim(f) != 0 or np.iscomplexobj(f) or isinstance(f, (bool, str, bytes)):
        raise OracleError(f"fun must return a real scalar, got {type(f).__name__} of shape "
                          f"{np.shape(f)}")
    try:
        f = float(f)
    except (TypeError, ValueError):
        raise OracleError(f"fun must return a real scalar, got {type(f).__name__}") from None
    if not math.isfinite(f):
        raise NonFiniteOracle(f"fun returned a non-finite value ({f})")
    return f


def zo_gradient(fun, x, n_directions=10, smoothing=1e-4, subspace_size=None, rng=None,
                f0=None, estimator="sphere"):
    r"""Zeroth-order gradient estimate from function values only.

    ``estimator="sphere"`` (default) averages random-direction forward differences

    .. math::

        \hat g(x) = \frac{d}{q\mu}\sum_{j=1}^q \bigl(f(x + \mu u_j) - f(x)\bigr)\,u_j ,

    each :math:`u_j` uniform on the unit sphere of a random coordinate subspace of dimension
    :math:`s_2` (``subspace_size``, default :math:`d`), as in de Vazelhes et al. (2022). Since
    :math:`\mathbb E[u u^\top] = I/d` and :math:`u` is sign-symmetric, :math:`\hat g` is
    unbiased on quadratics for any :math:`\mu`. ``estimator="coordinate"`` takes central
    differences along each coordinate (:math:`2d` queries, deterministic).

    Parameters
    ----------
    fun : callable
        ``fun(x) -> float``.
    x : ndarray (d,)
    n_directions : int
        :math:`q`.
    smoothing : float
        :math:`\mu > 0`.
    subspace_size : int, optional
        :math:`s_2 \in [1, d]`.
    rng : int or numpy.random.Generator, optional
    f0 : float, optional
        :math:`f(x)` if already known (saves one query).
    estimator : {"sphere", "coordinate"}

    Returns
    -------
    g : ndarray (d,)
    n_queries : int
        Calls made to ``fun``.

    Raises
    ------
    jitopt.NonFiniteOracle
        When ``fun`` returns NaN or inf (the estimate would be NaN or inf).
    jitopt.OracleError
        When ``fun`` returns something other than a real scalar.

    Examples
    --------
    The coordinate estimator is exact on a quadratic (central differences):

    >>> import numpy as np
    >>> from jitopt.sparse import zo_gradient
    >>> g, n_queries = zo_gradient(lambda x: 0.5 * x @ x, np.array([1.0, -2.0]),
    ...                            estimator="coordinate")
    >>> np.round(g, 6), n_queries
    (array([ 1., -2.]), 4)
    """
    x = check_array("x", x, ndim=1)
    d = x.shape[0]
    mu = check_real("smoothing", smoothing, low=0.0, low_open=True)
    check_choice("estimator", estimator, ("sphere", "coordinate"))
    g = np.zeros(d)
    if estimator == "coordinate":
        for i in range(d):
            e = np.zeros(d)
            e[i] = mu
            g[i] = (_value(fun, x + e) - _value(fun, x - e)) / (2 * mu)
        return g, 2 * d
    q = check_int("n_directions", n_directions, low=1)
    s2 = d if subspace_size is None else check_int("subspace_size", subspace_size, 1, d)
    rng = check_rng(rng)
    queries = 0
    if f0 is None:
        f0 = _value(fun, x)
        queries += 1
    else:
        f0 = check_real("f0", f0, -np.inf, np.inf, True, True)
    # all directions at once: Gaussian entries on a random s2-subset of coordinates, normalized
    U = rng.standard_normal((q, d))
    if s2 < d:
        keep = np.argsort(rng.random((q, d)), axis=1)[:, :s2]
        mask = np.zeros((q, d), dtype=bool)
        np.put_along_axis(mask, keep, True, axis=1)
        U[~mask] = 0.0
    U /= np.linalg.norm(U, axis=1)[:, None]
    diffs = np.empty(q)
    for j in range(q):
        diffs[j] = _value(fun, x + mu * U[j]) - f0
    queries += q
    g = diffs @ U
    return g * (d / (q * mu)), queries
