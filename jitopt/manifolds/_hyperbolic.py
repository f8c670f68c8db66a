"""Hyperbolic space: the Poincaré ball and the hyperboloid (Lorentz) models."""

import numpy as np

from ..validation import check_rng
from ._base import Manifold
from ._oblique import _sizes

__all__ = ["PoincareBall", "Hyperboloid"]

#: points stay at least this far inside the unit sphere (1 - ||x||^2 stays accurate)
_MARGIN = 1e-10


def _mobius_add(x, y):
    xy, xx, yy = x @ y, x @ x, y @ y
    return ((1.0 + 2.0 * xy + yy) * x + (1.0 - xx) * y) / (1.0 + 2.0 * xy + xx * yy)


def _gyration(a, b, w):
    """gyr[a, b] w for curvature -1."""
    ab, aw, bw, aa, bb = a @ b, a @ w, b @ w, a @ a, b @ b
    alpha = -aw * bb + bw + 2.0 * ab * bw
    beta = -bw * aa - aw
    return w + 2.0 * (alpha * a + beta * b) / (1.0 + 2.0 * ab + aa * bb)


def _inside(y):
    """``y`` pulled back radially to norm at most 1 - margin."""
    r = np.linalg.norm(y)
    return y * ((1.0 - _MARGIN) / r) if r > 1.0 - _MARGIN else y


class PoincareBall(Manifold):
    r"""Hyperbolic space of dimension :math:`n` (curvature :math:`-1`) in the Poincaré ball
    :math:`\{x \in \mathbb R^n : \|x\| < 1\}`.

    Metric :math:`\lambda_x^2\,u^\top v` with :math:`\lambda_x = 2/(1 - \|x\|^2)`, so
    :math:`\operatorname{grad} f = G/\lambda_x^2`. With Möbius addition :math:`\oplus`:
    :math:`\exp_x(u) = x \oplus \tanh(\lambda_x\|u\|/2)\,u/\|u\|`,
    :math:`\mathrm{dist}(x, y) = 2\,\mathrm{arsinh}(\|x - y\|/((1 - \|x\|^2)(1 -
    \|y\|^2))^{1/2})` (the :math:`\mathrm{arcosh}` form's argument :math:`1 + 2\|x -
    y\|^2/((1 - \|x\|^2)(1 - \|y\|^2))`, accurate for nearby points and near the
    sphere), :math:`\log_x(y) = (d/\lambda_x)\,w/\|w\|` with :math:`w` the numerator
    :math:`(1 - \|x\|^2)\,y - (1 - 2x^\top y + \|y\|^2)\,x` of :math:`(-x)\oplus y`
    (its denominator rounds to 0 near the sphere), and the transport is the parallel one,
    :math:`(\lambda_x/\lambda_y)\,\mathrm{gyr}[y, -x]\,u`. Points stay at least
    :math:`10^{-10}` inside the unit sphere: a step beyond is pulled back radially.

    Parameters
    ----------
    n : int
        Dimension.
    retraction : {"exp", "projection"}
        The exponential map (default), or :math:`x + u` pulled back into the ball (first
        order, cheaper).

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.manifolds import PoincareBall
    >>> M = PoincareBall(1)
    >>> bool(np.isclose(M.dist(np.zeros(1), np.array([0.5])), 2 * np.arctanh(0.5)))
    True
    """

    retractions = ("exp", "projection")

    def __init__(self, n, retraction=None):
        n, _ = _sizes("PoincareBall", n, 1, ("n", "n"))
        self.n = n
        super().__init__(f"PoincareBall({n})", (n,), n, retraction)

    @staticmethod
    def _lambda(x):
        return 2.0 / (1.0 - x @ x)

    def inner_product(self, x, u, v):
        return float(self._lambda(x) ** 2 * (u @ v))

    def projection(self, x, u):
        return np.array(u, dtype=float)

    def euclidean_to_riemannian_gradient(self, x, egrad):
        return egrad / self._lambda(x) ** 2

    def euclidean_to_riemannian_hessian(self, x, egrad, ehess, u):
        lam = self._lambda(x)
        return ((egrad @ x) * u - (x @ u) * egrad - (egrad @ u) * x + ehess / lam) / lam

    def retraction(self, x, u):
        if self.retraction_name == "exp":
            return self.exp(x, u)
        return _inside(x + u)

    def exp(self, x, u):
        nu = np.linalg.norm(u)
        if nu == 0.0:
            return np.array(x, dtype=float)
        return _inside(_mobius_add(x, np.tanh(0.5 * self._lambda(x) * nu) * (u / nu)))

    def log(self, x, y):
        # the direction of (-x) (+) y is that of its numerator (the denominator, about
        # (1 - |x|^2)^2 near the sphere, is positive and may round to 0)
        xy, xx, yy = x @ y, x @ x, y @ y
        w = (1.0 - xx) * y - (1.0 - 2.0 * xy + yy) * x
        nw = np.linalg.norm(w)
        if nw == 0.0:
            return np.zeros(self.shape)
        return (self.dist(x, y) / self._lambda(x)) * (w / nw)

    def dist(self, x, y):
        # cosh d = 1 + 2|x - y|^2 / ((1 - |x|^2)(1 - |y|^2)), as 2 arsinh of a square root
        return float(2.0 * np.arcsinh(np.linalg.norm(x - y)
                                      / np.sqrt((1.0 - x @ x) * (1.0 - y @ y))))

    def transport(self, x1, x2, u):
        return (self._lambda(x1) / self._lambda(x2)) * _gyration(x2, -x1, u)

    def random_point(self, rng=None):
        v = check_rng(rng).standard_normal(self.n) / np.sqrt(self.n)
        nv = np.linalg.norm(v)
        return np.tanh(nv) * v / nv

    def closest_point(self, x):
        """``x`` pulled back radially to norm at most :math:`1 - 10^{-10}`."""
        return _inside(np.asarray(x, dtype=float))

    def _off_manifold(self, x, atol):
        r = float(np.linalg.norm(x))
        return f"||x|| = {r:.6g} is not below 1" if r >= 1.0 else ""


def _minkowski(u, v):
    return float(u[1:] @ v[1:] - u[0] * v[0])


def _cosh_minus_one(x, y):
    r""":math:`q = \cosh d(x, y) - 1 = -\langle x, y\rangle_L - 1` from the space parts
    alone, as a sum of nonnegative terms.

    Coordinates grow like :math:`e^D` at a distance :math:`D` from the origin, so the
    Minkowski product cancels to an error of about :math:`\epsilon e^{2D}`. With
    :math:`s = \bar x^\top\bar y`: if :math:`s \le 0`, :math:`q = (x_0y_0 - 1) - s`;
    else, with :math:`\delta = \bar y - \bar x = \delta_\parallel + \delta_\perp`
    split along :math:`\sigma = \bar x + \bar y`, the identities
    :math:`y_0 - x_0 = \delta^\top\sigma/(x_0 + y_0)` and :math:`(x_0 + y_0)^2 -
    \|\sigma\|^2 = 4 + 2q` give :math:`q\,2(x_0y_0 - 1 + s)/\|\sigma\|^2 =
    \|\delta_\perp\|^2/2 + 2\|\delta_\parallel\|^2/(x_0 + y_0)^2`. In both,
    :math:`x_0y_0 - 1 = (\|\bar x\|^2 + \|\bar y\|^2 + \|\bar x\|^2\|\bar
    y\|^2)/(x_0y_0 + 1)`. The error is then about :math:`\epsilon e^{D}`.
    """
    xs, ys = x[1:], y[1:]
    xx, yy, s = xs @ xs, ys @ ys, xs @ ys
    x0, y0 = np.sqrt(1.0 + xx), np.sqrt(1.0 + yy)
    m = (xx + yy + xx * yy) / (x0 * y0 + 1.0)
    if s <= 0.0:
        return float(m - s)
    chord, total = ys - xs, xs + ys
    tt = total @ total
    along = (chord @ total) / tt
    across = chord - along * total
    q = (0.5 * (across @ across) + 2.0 * along * along * tt / (x0 + y0) ** 2) * tt
    return float(q / (2.0 * (m + s)))


class Hyperboloid(Manifold):
    r"""Hyperbolic space of dimension :math:`n` (curvature :math:`-1`) in the hyperboloid
    (Lorentz) model :math:`\{x \in \mathbb R^{n+1} : \langle x, x\rangle_L = -1,\ x_0 > 0\}`,
    the time coordinate first.

    With the Minkowski product :math:`\langle u, v\rangle_L = -u_0v_0 + \sum_{i\ge1}
    u_iv_i` and :math:`J = \mathrm{diag}(-1, 1, \dots, 1)`: tangent vectors satisfy
    :math:`\langle x, u\rangle_L = 0`, the metric is :math:`\langle u, v\rangle_L`,
    :math:`\operatorname{grad} f = \Pi_x(JG)` with :math:`\Pi_x(u) = u + \langle x,
    u\rangle_L\,x`, :math:`\operatorname{Hess} f[u] = \Pi_x(JH) + (x^\top G)\,u`,
    :math:`\exp_x(u) = \cosh\|u\|\,x + \sinh\|u\|\,u/\|u\|` (also the retraction),
    :math:`\log_x(y) = (d/\sinh d)\,\Pi_x(y)`, :math:`d(x, y) =
    \operatorname{arccosh}(-\langle x, y\rangle_L)` and the parallel transport
    :math:`u + \langle y, u\rangle_L/(1 - \langle x, y\rangle_L)\,(x + y)`.
    ``projection`` is the Frobenius-orthogonal projection onto the tangent space, as for
    every jitopt manifold.

    Coordinates grow like :math:`e^{d}` with the distance :math:`d` from the origin
    :math:`(1, 0, \dots, 0)`, and Minkowski products cancel there. So the metric of tangent
    vectors is computed from their space parts alone (:math:`\langle u, v\rangle =
    (\bar u^\top \bar v + \|\bar x\|^2\,\bar u_\perp^\top \bar v_\perp)/x_0^2`, with
    :math:`\bar u_\perp` the part of :math:`\bar u` orthogonal to :math:`\bar x`), the
    time coordinate of a retracted point is recomputed as :math:`x_0 = (1 +
    \|\bar x\|^2)^{1/2}`, distances and logarithms come from :math:`\cosh d - 1`
    written as a sum of nonnegative terms of the space parts (relative error about
    :math:`\epsilon e^{D}` at a distance :math:`D` from the origin, against
    :math:`\epsilon e^{2D}` through the Minkowski product), and ``check_point`` tests
    :math:`|\langle x, x\rangle_L + 1| \le` ``atol`` :math:`\max(1, \|x\|^2)`. The map
    :meth:`to_ball` (:meth:`from_ball` back) is an isometry onto :class:`PoincareBall`,
    whose points stay within :math:`10^{-10}` of the unit sphere, that is within a
    distance of about 23.7 of the origin; this model holds points as far as
    :math:`e^{D}` does not overflow.

    Parameters
    ----------
    n : int
        Dimension (points have ``n + 1`` coordinates).

    References
    ----------
    Manopt's ``hyperbolicfactory``; M. Nickel and D. Kiela, "Learning continuous
    hierarchies in the Lorentz model of hyperbolic geometry", ICML (2018).

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.manifolds import Hyperboloid, PoincareBall
    >>> H = Hyperboloid(2)
    >>> x, y = H.random_point(0), H.random_point(1)
    >>> bool(np.isclose(H.dist(x, y), PoincareBall(2).dist(H.to_ball(x), H.to_ball(y))))
    True
    """

    def __init__(self, n):
        n, _ = _sizes("Hyperboloid", n, 1, ("n", "n"))
        self.n = n
        super().__init__(f"Hyperboloid({n})", (n + 1,), n)

    def inner_product(self, x, u, v):
        xs, us, vs = x[1:], u[1:], v[1:]
        xx = xs @ xs
        if xx == 0.0:
            return float(us @ vs)
        ou = us - (xs @ us / xx) * xs
        ov = vs - (xs @ vs / xx) * xs
        return float((us @ vs + xx * (ou @ ov)) / (1.0 + xx))

    def projection(self, x, u):
        jx = np.array(x, dtype=float)
        jx[0] = -jx[0]
        return u - (jx @ u / (x @ x)) * jx

    def _minkowski_projection(self, x, u):
        return u + _minkowski(x, u) * x

    def euclidean_to_riemannian_gradient(self, x, egrad):
        jg = np.array(egrad, dtype=float)
        jg[0] = -jg[0]
        return self._minkowski_projection(x, jg)

    def euclidean_to_riemannian_hessian(self, x, egrad, ehess, u):
        return self.euclidean_to_riemannian_gradient(x, ehess) + (x @ egrad) * u

    def _on_sheet(self, y):
        """``y`` with its time coordinate recomputed from the space part."""
        y = np.array(y, dtype=float)
        y[0] = np.sqrt(1.0 + y[1:] @ y[1:])
        return y

    def exp(self, x, u):
        nu = self.norm(x, u)
        if nu == 0.0:
            return np.array(x, dtype=float)
        return self._on_sheet(np.cosh(nu) * x + (np.sinh(nu) / nu) * u)

    retraction = exp

    def dist(self, x, y):
        return float(2.0 * np.arcsinh(np.sqrt(0.5 * _cosh_minus_one(x, y))))

    def log(self, x, y):
        q = _cosh_minus_one(x, y)
        d = 2.0 * np.arcsinh(np.sqrt(0.5 * q))
        if d == 0.0:
            return np.zeros(self.shape)
        xs, ys = x[1:], y[1:]
        chord = ys - xs
        time = chord @ (xs + ys) / (np.sqrt(1.0 + xs @ xs) + np.sqrt(1.0 + ys @ ys))
        # Pi_x(y) = Pi_x(y - x) = (y - x) - q x, with y - x free of cancellation
        return (d / np.sinh(d)) * (np.r_[time, chord] - q * x)

    def transport(self, x1, x2, u):
        return u + (_minkowski(x2, u) / (1.0 - _minkowski(x1, x2))) * (x1 + x2)

    def random_point(self, rng=None):
        """The point over a standard normal space part."""
        return self._on_sheet(np.r_[0.0, check_rng(rng).standard_normal(self.n)])

    def closest_point(self, x):
        """The point with the space part of ``x``."""
        return self._on_sheet(x)

    def to_ball(self, x):
        r"""The point of :class:`PoincareBall` (``n``) that ``x`` maps to,
        :math:`\bar x/(1 + x_0)`."""
        return x[1:] / (1.0 + x[0])

    def from_ball(self, b):
        r"""The point that the point ``b`` of :class:`PoincareBall` (``n``) maps to,
        :math:`(1 + \|b\|^2, 2b)/(1 - \|b\|^2)`."""
        bb = b @ b
        return self._on_sheet(np.r_[1.0 + bb, 2.0 * b] / (1.0 - bb))

    def _off_manifold(self, x, atol):
        if not x[0] > 0:
            return f"x[0] = {x[0]:.6g} is not positive (the lower sheet)"
        gap = abs(_minkowski(x, x) + 1.0)
        if gap > atol * max(1.0, float(x @ x)):
            return f"|<x, x>_L + 1| = {gap:.3e} > atol * max(1, ||x||^2)"
        return ""
