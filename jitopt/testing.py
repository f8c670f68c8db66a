r"""Contract checks for manifolds and gradients.

:func:`check_manifold` tests the properties every :class:`~jitopt.manifolds.Manifold` must
have (points stay on the manifold, the retraction is first order, the projection is a
projection, transport lands in the right tangent space, the metric is consistent, and
``exp``/``log``/``dist`` agree where they exist). :func:`check_gradient` tests a problem's
Riemannian gradient against the cost along a retraction curve, as pymanopt's
``check_gradient`` does.

Both are meant for tests: a new manifold or problem is checked with one call. The known
answers of barycenter tests are here too: :func:`density_moments` of a density on a grid
and :func:`bures_barycenter`, the covariance of the barycenter of Gaussians.
"""

from collections import namedtuple

import numpy as np

from .validation import check_int, check_real, check_rng
from .manifolds import Manifold

__all__ = ["check_manifold", "check_gradient", "GradientCheck", "check_hessian",
           "HessianCheck", "density_moments", "bures_barycenter"]

_EPS = np.finfo(float).eps


def _fail(manifold, what):
    raise AssertionError(f"{manifold}: {what}")


def _dist(a, b):
    return float(np.linalg.norm(np.asarray(a) - np.asarray(b)))


def _on_manifold(manifold, x, atol, what):
    try:
        manifold.check_point(x, atol=atol, name=what)
    except ValueError as err:
        _fail(manifold, str(err))


def _tangent(manifold, x, u, atol, what):
    try:
        manifold.check_tangent(x, u, atol=atol, name=what)
    except ValueError as err:
        _fail(manifold, str(err))


def _close(manifold, a, b, tol, what):
    """Assert ``||a - b||_F <= tol * max(1, ||b||_F)``."""
    err = _dist(a, b)
    if not err <= tol * max(1.0, float(np.linalg.norm(b))):
        _fail(manifold, f"{what}: error {err:.3e} > {tol:g} (relative)")


def _has_exp_log(manifold):
    return all(hasattr(manifold, f) for f in ("exp", "log", "dist"))


def _check_walk(manifold, x, rng, n_steps, atol, step):
    for k in range(n_steps):
        u = step * manifold.random_tangent_vector(x, rng)
        x = manifold.retraction(x, u)
        _on_manifold(manifold, x, atol, f"the point after retraction step {k + 1} of {n_steps}")


def _check_no_mutation(manifold, x, u, y):
    copies = [np.array(a, copy=True) for a in (x, u, y)]
    manifold.retraction(x, u)
    manifold.projection(x, u)
    manifold.transport(x, y, u)
    manifold.inner_product(x, u, u)
    if _has_exp_log(manifold):
        manifold.exp(x, u)
        manifold.log(x, y)
    for name, a, c in zip(("x", "u", "y"), (x, u, y), copies):
        if not np.array_equal(a, c):
            _fail(manifold, f"an operation modified its argument {name} in place")


def _check_retraction_derivative(manifold, x, u):
    r"""Central differences of :math:`t \mapsto R_x(tu)` at 0 must converge to ``u`` as O(h²).

    With ``h`` divided by 10 the error must drop by at least 20 (100 for an exact O(h²)
    error), unless it is already at the rounding level ``eps * ||x|| / h``.
    """
    errs = []
    hs = (1e-3, 1e-4)
    for h in hs:
        fd = (manifold.retraction(x, h * u) - manifold.retraction(x, -h * u)) / (2 * h)
        errs.append(_dist(fd, u))
    scale = max(1.0, float(np.linalg.norm(x)), float(np.linalg.norm(u)))
    rounding = 1e3 * _EPS * scale / hs[1]
    if not (errs[1] <= rounding or errs[1] <= errs[0] / 20):
        _fail(manifold, (
            "the derivative of t -> retraction(x, t u) at t = 0 is not u: central "
            f"differences miss u by {errs[0]:.3e} (h = {hs[0]:g}) and {errs[1]:.3e} "
            f"(h = {hs[1]:g}), not an O(h^2) decrease"
        ))


def check_manifold(manifold, rng=None, n_steps=1000, atol=1e-12):
    r"""Check that a manifold satisfies the contract the solvers rely on.

    Properties checked, in this order (the first failure raises):

    1. ``random_point`` is a point: ``check_point(x, atol)`` passes (for Stiefel,
       Grassmann and orthogonal matrices :math:`\|X^\top X - I\|_F \le` ``atol``, on the
       sphere :math:`|\|x\| - 1| \le` ``atol``, for SPD symmetric positive definite).
    2. ``projection`` is idempotent, orthogonal in the Frobenius inner product
       (:math:`\langle a - P(a), P(b)\rangle_F = 0`) and lands in the tangent space
       (``check_tangent``).
    3. ``random_tangent_vector`` is tangent with unit norm.
    4. ``n_steps`` retractions along random tangent vectors of norm 0.5 keep the point on
       the manifold to ``atol`` after every step (no drift).
    5. Operations do not modify their arguments.
    6. ``retraction(x, 0) == x`` and the curve :math:`c(t) = R_x(tu)` has
       :math:`c'(0) = u`: central differences :math:`(c(h) - c(-h))/2h` approach ``u``
       with an error that falls as :math:`O(h^2)`.
    7. ``transport(x, y, u)`` lands in the tangent space at ``y``.
    8. ``inner_product`` is symmetric and :math:`\mathrm{norm}(x, u)^2 = \langle u,
       u\rangle_x`.
    9. If the manifold has ``exp``, ``log`` and ``dist``: :math:`\exp_x(u)` is a point,
       :math:`\log_x(\exp_x(u)) = u` for a tangent ``u`` of norm 0.3 (or half the
       manifold's ``injectivity_radius(x)`` where it has one and that is less), and
       :math:`\mathrm{dist}(x, \exp_x(u)) = \|u\|_x`.

    Identities that hold in exact arithmetic (2, 3 and 6–9) are checked to the relative
    tolerance ``1e-10``; the derivative check compares the errors at :math:`h = 10^{-3}` and
    :math:`10^{-4}`, which must fall by a factor of at least 20 (100 for an exact
    :math:`O(h^2)` error) unless they are at the rounding level
    :math:`10^3\,\varepsilon \max(1, \|x\|, \|u\|) / h`.

    Parameters
    ----------
    manifold : jitopt.manifolds.Manifold
        The manifold to check.
    rng : None, int or numpy.random.Generator, optional
        Randomness for the points and tangent vectors; the same seed gives the same checks.
    n_steps : int, optional
        Number of random retraction steps of property 2.
    atol : float, optional
        Tolerance of the on-manifold checks (``check_point``).

    Returns
    -------
    None

    Raises
    ------
    AssertionError
        On the first property that fails, with a message naming the manifold, the
        property and the measured error.

    Examples
    --------
    >>> from jitopt.manifolds import Stiefel
    >>> from jitopt.testing import check_manifold
    >>> check_manifold(Stiefel(5, 2), rng=0, n_steps=50)
    """
    if not isinstance(manifold, Manifold):
        raise TypeError(
            f"manifold must be a jitopt.manifolds.Manifold, got {type(manifold).__name__}"
        )
    rng = check_rng(rng)
    n_steps = check_int("n_steps", n_steps, low=0)
    atol = check_real("atol", atol, low=0.0, low_open=True)
    tol = 1e-10
    m = manifold

    # 1. random points
    x = m.random_point(rng)
    _on_manifold(m, x, atol, "random_point()")

    # 2. projection
    a, b = rng.standard_normal((2,) + m.shape)
    if np.issubdtype(m.dtype, np.complexfloating):  # complex directions for complex manifolds
        a, b = a + 1j * rng.standard_normal(m.shape), b + 1j * rng.standard_normal(m.shape)
    v = m.projection(x, a)
    _close(m, m.projection(x, v), v, tol, "projection is not idempotent")
    pb = m.projection(x, b)
    cross = float(np.vdot(a - v, pb).real)
    if not abs(cross) <= tol * float(np.linalg.norm(a) * np.linalg.norm(b)):
        _fail(m, f"projection is not orthogonal: <a - P(a), P(b)>_F = {cross:.3e}")
    _tangent(m, x, v, tol, "projection(x, v)")

    # 3. random tangent vectors
    u = m.random_tangent_vector(x, rng)
    _tangent(m, x, u, tol, "random_tangent_vector(x)")
    nu = m.norm(x, u)
    if not abs(nu - 1.0) <= tol:
        _fail(m, f"random_tangent_vector has norm {nu!r}, expected 1")

    # 4. retractions stay on the manifold
    _check_walk(m, x, rng, n_steps, atol, step=0.5)

    # 5. no argument is modified
    y = m.retraction(x, 0.5 * m.random_tangent_vector(x, rng))
    _check_no_mutation(m, x, u, y)

    # 6. retraction(x, 0) = x and first order
    _close(m, m.retraction(x, m.zero_vector(x)), x, tol, "retraction(x, 0) != x")
    _check_retraction_derivative(m, x, u)

    # 7. transport
    _tangent(m, y, m.transport(x, y, u), tol, "transport(x, y, u)")

    # 8. the metric
    w = m.random_tangent_vector(x, rng)
    uw, wu = m.inner_product(x, u, w), m.inner_product(x, w, u)
    if not abs(uw - wu) <= tol * max(1.0, abs(uw)):
        _fail(m, f"inner_product is not symmetric: <u, w> = {uw!r}, <w, u> = {wu!r}")
    z = v + 2.0 * w
    nz2, zz = m.norm(x, z) ** 2, m.inner_product(x, z, z)
    if not (zz > 0 and abs(nz2 - zz) <= tol * zz):
        _fail(m, f"norm(x, z)**2 = {nz2!r} but inner_product(x, z, z) = {zz!r}")

    # 9. exp, log and dist (within half the injectivity radius where the manifold has one)
    if _has_exp_log(m):
        r = 0.3
        if hasattr(m, "injectivity_radius"):
            r = min(r, 0.5 * m.injectivity_radius(x))
        u3 = r * u
        e = m.exp(x, u3)
        _on_manifold(m, e, atol, "exp(x, u)")
        _close(m, m.log(x, e), u3, tol, "log(x, exp(x, u)) != u")
        d = m.dist(x, e)
        if not abs(d - r) <= tol * max(1.0, r):
            _fail(m, f"dist(x, exp(x, u)) = {d!r} but norm(x, u) = {r!r}")


GradientCheck = namedtuple("GradientCheck", ["slope", "t", "remainder", "fit"])
GradientCheck.__doc__ = """Result of :func:`check_gradient`, a named tuple.

Parameters
----------
slope : float
    Least-squares slope of ``log(remainder)`` against ``log(t)`` over the points ``fit``;
    about 2 when the gradient is right, about 1 when it is wrong; NaN when fewer than
    three remainders rise above the rounding level, which happens when the cost is
    affine along the curve: the check is then inconclusive (try another ``x`` or ``d``).
t : ndarray
    Step lengths, log-spaced from 1e-8 to 1.
remainder : ndarray
    :math:`|f(R_x(t d)) - f(x) - t\\langle \\operatorname{grad} f(x), d\\rangle_x|` at each ``t``.
fit : ndarray of bool
    The points the slope was fitted on.

Examples
--------
>>> import numpy as np, jitopt
>>> from jitopt.testing import check_gradient
>>> check = check_gradient(jitopt.problems.pca(np.diag([3.0, 2.0, 1.0]), 1), rng=0)
>>> round(check.slope), check.t.shape, check.remainder.shape
(2, (51,), (51,))
"""


def check_gradient(problem, x=None, d=None, rng=None):
    r"""Check a problem's Riemannian gradient by a Taylor expansion along a retraction curve.

    Along :math:`c(t) = R_x(t\,d)`, with :math:`c(0) = x` and :math:`c'(0) = d`,

    .. math::

        f(c(t)) = f(x) + t\,\langle \operatorname{grad} f(x), d\rangle_x + O(t^2),

    so the remainder :math:`r(t) = |f(c(t)) - f(x) - t\langle \operatorname{grad} f(x),
    d\rangle_x|` falls as :math:`t^2` when the gradient is right and only as :math:`t`
    when it is wrong (Boumal 2023, *An Introduction to Optimization on Smooth
    Manifolds*, Ch. 4). The remainder is computed for 51 values of :math:`t` log-spaced
    in :math:`[10^{-8}, 1]`, and the slope of :math:`\log r` against :math:`\log t` is
    fitted on the two decades of :math:`t` starting at the first remainder above the
    rounding level :math:`10^2\,\varepsilon\,(|f(x)| + |f(c(t))| +
    t|\langle\operatorname{grad}f, d\rangle|)`; the short window keeps clear of the range
    where third-order terms bend the curve in most cases.
    A slope near 2 means the gradient is right; near 1 means it is wrong.

    Parameters
    ----------
    problem : jitopt.Problem
        Uses ``problem.cost``, ``problem.rgrad`` and ``problem.manifold`` (the oracle
        calls are counted in ``problem.counts`` as usual).
    x : ndarray, optional
        The point; ``manifold.random_point(rng)`` by default.
    d : ndarray, optional
        A tangent vector at ``x``; ``manifold.random_tangent_vector(x, rng)`` by default.
    rng : None, int or numpy.random.Generator, optional
        Randomness for the default ``x`` and ``d``.

    Returns
    -------
    GradientCheck
        ``(slope, t, remainder, fit)``; see :class:`GradientCheck`.

    Examples
    --------
    >>> import numpy as np
    >>> import jitopt
    >>> from jitopt.manifolds import Sphere
    >>> from jitopt.testing import check_gradient
    >>> A = np.diag([1.0, 2.0, 3.0])
    >>> problem = jitopt.Problem(Sphere(3), lambda x: x @ A @ x, lambda x: 2 * A @ x)
    >>> round(check_gradient(problem, rng=0).slope)
    2
    """
    from ._core.problem import Problem

    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a jitopt.Problem, got {type(problem).__name__}")
    rng = check_rng(rng)
    m = problem.manifold
    if x is None:
        x = m.random_point(rng)
    else:
        x = m.validate_point(x, name="x")
    if d is None:
        d = m.random_tangent_vector(x, rng)
    else:
        d = np.array(d, dtype=m.dtype, copy=True)
        m.check_tangent(x, d, name="d")

    t = np.logspace(-8, 0, 51)
    f0 = problem.cost(x)
    slope0 = m.inner_product(x, problem.rgrad(x), d)
    f = np.array([problem.cost(m.retraction(x, ti * d)) for ti in t])
    if not (np.isfinite(f0) and np.isfinite(slope0) and np.all(np.isfinite(f))):
        raise ValueError("the cost or the gradient is not finite along the curve")
    remainder = np.abs(f - f0 - t * slope0)
    noise = 1e2 * _EPS * (abs(f0) + np.abs(f) + t * abs(slope0))
    above = remainder > noise
    fit = np.zeros_like(above)
    if above.any():
        first = t[np.argmax(above)]
        fit = above & (t <= 1e2 * first)
    if fit.sum() < 3:
        slope = float("nan")
    else:
        slope = float(np.polyfit(np.log10(t[fit]), np.log10(remainder[fit]), 1)[0])
    return GradientCheck(slope, t, remainder, fit)


HessianCheck = namedtuple("HessianCheck", ["error", "symmetry", "tangency"])
HessianCheck.__doc__ = """Result of :func:`check_hessian`, a named tuple (relative errors, all
near 0 when the Hessian is right).

Parameters
----------
error : float
    :math:`\\|(T\\operatorname{grad} f(y_+) - T\\operatorname{grad} f(y_-))/(2t) -
    \\operatorname{Hess} f(x)[d]\\| / \\|\\operatorname{Hess} f(x)[d]\\|`, with
    :math:`y_\\pm = R_x(\\pm t d)` and :math:`T` the transport back to :math:`x`.
symmetry : float
    :math:`|\\langle \\operatorname{Hess}[d], v\\rangle - \\langle d,
    \\operatorname{Hess}[v]\\rangle|` over :math:`\\|\\operatorname{Hess}[d]\\|\\|v\\|`, for
    a random tangent :math:`v`.
tangency : float
    Distance of :math:`\\operatorname{Hess}[d]` to the tangent space, relative to its norm.

Examples
--------
>>> import numpy as np, jitopt
>>> from jitopt.testing import HessianCheck
>>> HessianCheck(error=1e-8, symmetry=0.0, tangency=0.0).error
1e-08
"""


def check_hessian(problem, x=None, d=None, rng=None):
    r"""Check a problem's Riemannian Hessian (its ``ehess`` oracle turned Riemannian by
    ``manifold.euclidean_to_riemannian_hessian``) against a difference of gradients.

    The Riemannian Hessian is the covariant derivative of the gradient field; for the
    manifolds of :mod:`jitopt.manifolds` (projection transport on the embedded ones,
    parallel transport on SPD) it is the limit of

    .. math::

        \frac{T_{y_+\to x}\operatorname{grad} f(y_+) - T_{y_-\to x}\operatorname{grad}
        f(y_-)}{2t}, \qquad y_\pm = R_x(\pm t\,d),

    with an error :math:`O(t^2)` for any retraction (:math:`t = 10^{-4}` here, so a right
    Hessian gives ``error`` about :math:`10^{-7}` and a missing Weingarten term an error of
    order one). Also reported: the symmetry of the Hessian and its tangency.

    Parameters
    ----------
    problem : jitopt.Problem
        A problem with an ``ehess`` oracle.
    x : ndarray, optional
        The point; ``manifold.random_point(rng)`` by default.
    d : ndarray, optional
        A tangent vector at ``x``; ``manifold.random_tangent_vector(x, rng)`` by default.
    rng : None, int or numpy.random.Generator, optional
        Randomness for the default ``x``, ``d`` and the second tangent vector.

    Returns
    -------
    HessianCheck
        ``(error, symmetry, tangency)``; see :class:`HessianCheck`.

    Examples
    --------
    >>> import numpy as np
    >>> import jitopt
    >>> from jitopt.manifolds import Sphere
    >>> from jitopt.testing import check_hessian
    >>> A = np.diag([1.0, 2.0, 3.0])
    >>> problem = jitopt.Problem(Sphere(3), lambda x: x @ A @ x, lambda x: 2 * A @ x,
    ...                          ehess=lambda x, u: 2 * A @ u)
    >>> bool(check_hessian(problem, rng=0).error < 1e-6)
    True
    """
    from ._core.problem import Problem

    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a jitopt.Problem, got {type(problem).__name__}")
    if not problem.has_ehess:
        raise ValueError("problem has no ehess oracle: there is no Hessian to check")
    rng = check_rng(rng)
    m = problem.manifold
    x = m.random_point(rng) if x is None else m.validate_point(x, name="x")
    if d is None:
        d = m.random_tangent_vector(x, rng)
    else:
        d = np.array(d, dtype=m.dtype, copy=True)
        m.check_tangent(x, d, name="d")
    v = m.random_tangent_vector(x, rng)
    egrad = problem.egrad(x)

    def hess(u):
        return m.euclidean_to_riemannian_hessian(x, egrad, problem.ehess(x, u), u)

    hd, hv = hess(d), hess(v)
    t = 1e-4
    ends = [m.retraction(x, s * t * d) for s in (1.0, -1.0)]
    plus, minus = (m.transport(y, x, problem.rgrad(y)) for y in ends)
    scale = max(m.norm(x, hd), _EPS)
    error = m.norm(x, (plus - minus) / (2 * t) - hd) / scale
    symmetry = abs(m.inner_product(x, hd, v) - m.inner_product(x, d, hv)) / (
        scale * m.norm(x, v))
    tangency = _dist(hd, m.projection(x, hd)) / max(float(np.linalg.norm(hd)), _EPS)
    return HessianCheck(float(error), float(symmetry), float(tangency))


def density_moments(rho):
    """Mean and covariance of the cell masses of a 2-D or 3-D density, in cells.

    Parameters
    ----------
    rho : ndarray of shape (height, width) or (height, width, depth)
        Nonnegative masses (normalised here).

    Returns
    -------
    mean : ndarray of shape (rho.ndim,)
        The cell coordinates (row, column[, layer]) of the centre of mass.
    cov : ndarray of shape (rho.ndim, rho.ndim)
        Covariance, row coordinate first.

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.testing import density_moments
    >>> rho = np.zeros((4, 4)); rho[1, 1] = rho[1, 3] = 1.0
    >>> m, c = density_moments(rho)
    >>> m.tolist(), c.tolist()
    ([1.0, 2.0], [[0.0, 0.0], [0.0, 1.0]])
    """
    rho = rho / rho.sum()
    idx = np.indices(rho.shape, dtype=float)
    m = np.array([(rho * i).sum() for i in idx])
    d = [i - mi for i, mi in zip(idx, m)]
    c = np.array([[(rho * a * b).sum() for b in d] for a in d])
    return m, c


def _sqrtm(s):
    w, v = np.linalg.eigh(s)
    return (v * np.sqrt(w)) @ v.T


def bures_barycenter(covs, weights):
    r"""Covariance of the Wasserstein barycenter of Gaussians: the fixed point
    :math:`S = S^{-1/2}\bigl(\sum_i \lambda_i (S^{1/2} C_i S^{1/2})^{1/2}\bigr)^2 S^{-1/2}`,
    by the iteration of Álvarez-Esteban et al. (2016) run to machine precision (200
    steps from :math:`\sum_i \lambda_i C_i`). The barycenter's mean is
    :math:`\sum_i \lambda_i m_i`.

    Parameters
    ----------
    covs : sequence of ndarray of shape (d, d)
        Symmetric positive definite covariances :math:`C_i`.
    weights : sequence of float
        The weights :math:`\lambda_i` (summing to one).

    Returns
    -------
    ndarray of shape (d, d)

    Examples
    --------
    Commuting covariances: the square root of the barycenter is the mean of the roots.

    >>> import numpy as np
    >>> from jitopt.testing import bures_barycenter
    >>> S = bures_barycenter([np.diag([1.0, 4.0]), np.diag([9.0, 16.0])], [0.5, 0.5])
    >>> np.round(S, 12).tolist()
    [[4.0, 0.0], [0.0, 9.0]]
    """
    s = sum(w * c for w, c in zip(weights, covs))
    for _ in range(200):
        r = _sqrtm(s)
        ri = np.linalg.inv(r)
        m = sum(w * _sqrtm(r @ c @ r) for w, c in zip(weights, covs))
        s = ri @ m @ m @ ri
    return s
