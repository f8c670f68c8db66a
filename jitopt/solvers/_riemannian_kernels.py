"""The pieces of rlbfgs and rtr that run once per iteration or inner iteration: the
coordinates the L-BFGS pairs live in, the pair memory with its compiled two-loop
recursion, and the line of rlbfgs in the Lie algebra of O(n)."""

import numpy as np
import scipy.linalg
from numba import njit

from ..manifolds import SPD, FixedRankEmbedded, Grassmann, Manifold, Orthogonal, Sphere, Stiefel
from ..manifolds import _kernels as K
from ..manifolds._euclidean import _Flat
from ..manifolds._stiefel import _expm_skew, qr_retraction

__all__ = ["Frame", "PairMemory"]


def _linear(M):
    """Whether ``M`` is a real linear space with the Frobenius metric (Euclidean, the
    matrix subspaces): one tangent space everywhere, so pairs need no transport."""
    return (isinstance(M, _Flat) and type(M).inner_product is Manifold.inner_product
            and np.dtype(getattr(M, "dtype", float)).kind == "f")


def _embedded(M):
    """Whether ``M`` has the Frobenius metric and transport by projection (the base
    class's), so that pairs can be stacked and their inner products are plain dots."""
    return (type(M).inner_product is Manifold.inner_product
            and type(M).transport is Manifold.transport
            and np.dtype(getattr(M, "dtype", float)).kind == "f")


class Frame:
    r"""Coordinates of the tangent spaces in which the pairs are stored: ``to(x, u)``,
    ``back(x, w)``, the inner product and the transport of stored vectors. On O(n)
    (:math:`U = X\Omega \mapsto \Omega`, left translation) and on SPD
    (:math:`U \mapsto L^{-1}UL^{-\top}`, :math:`X = LL^\top`) the coordinates make an
    isometric transport the identity and the metric the Frobenius product; on
    :class:`~jitopt.manifolds.FixedRankEmbedded` they are those of its tangent charts
    (the Frobenius product, and the manifold's transport in :math:`O((m+n)k^2)`, see
    ``TangentChart.transport_from``); elsewhere they are the ambient vectors with the
    manifold's metric and transport. ``coordinate_line`` is the line of rlbfgs in the
    coordinates, where it has one (on O(n) and the fixed-rank matrices)."""

    def __init__(self, M, isometric):
        self.M = M
        self.kind = None
        isometric = isometric and getattr(M, "k", 1) == 1  # one copy: plain matrices
        if isometric and isinstance(M, Orthogonal):
            self.kind = "orthogonal"
        elif isometric and isinstance(M, SPD):
            self.kind = "spd"
        elif isinstance(M, FixedRankEmbedded):  # the charts' transport is the manifold's
            self.kind = "chart"
            self._charts = {}  # id -> (point, chart): the charts in use
        #: the metric is the Frobenius product of the coordinates
        self.flat = self.kind is not None or _embedded(M) or _linear(M)
        self._chol = (None, None)

    def _l(self, x):
        if self._chol[0] is not x:
            self._chol = (x, np.linalg.cholesky(x))
        return self._chol[1]

    def chart(self, x):
        """The tangent chart at ``x`` (the kind "chart"), the same one until
        :meth:`forget` drops it: coordinates are in one chart, and a point's singular
        vectors, computed again, may change sign."""
        key, chart = self._charts.get(id(x), (None, None))
        if key is not x:
            chart = self.M.tangent_chart(x)
            self._charts[id(x)] = (x, chart)
        return chart

    def forget(self, keep):
        """Drop the charts of the points other than ``keep`` (once an iteration ends)."""
        if self.kind == "chart":
            self._charts = {id(keep): self._charts[id(keep)]} if id(keep) in self._charts else {}

    def to(self, x, u):
        if self.kind == "chart":
            return self.chart(x).of(u)
        if self.kind == "orthogonal":
            return x.T @ u
        if self.kind == "spd":
            l = self._l(x)
            w = scipy.linalg.solve_triangular(l, u, lower=True)
            return scipy.linalg.solve_triangular(l, w.T, lower=True)
        return u

    def back(self, x, w):
        if self.kind == "chart":
            return self.chart(x).tangent(w)
        if self.kind == "orthogonal":
            return x @ w
        if self.kind == "spd":
            l = self._l(x)
            return l @ w @ l.T
        return w

    def inner(self, x, u, v):
        return float(np.vdot(u, v)) if self.flat else self.M.inner_product(x, u, v)

    def move(self, x, y, w):
        """The transport of ``w`` (with the kind "chart", coordinates along the last
        axis)."""
        if self.kind == "chart":
            return self.chart(y).moved_from(self.chart(x), w)
        return w if self.kind else self.M.transport(x, y, w)

    def coordinate_line(self, problem, x, dw):
        r""":math:`\varphi(t) = f(R_x(t d))` for :func:`wolfe` along the direction of
        coordinates ``dw``: ``phi(t) -> (f, slope, y, egrad, gw)`` with ``gw`` the
        coordinates at :math:`y` of the Riemannian gradient and the slope
        :math:`\langle \operatorname{grad} f(y), T_{x\to y} d\rangle`."""
        if self.kind == "orthogonal":
            return lie_line(problem, x, dw)
        chart = self.chart(x)

        def phi(t):
            y = chart.retraction(t * dw)
            f, eg = problem.cost_and_egrad(y)
            here = self.chart(y)
            gw = here.gradient(eg)
            return f, float(np.dot(gw, here.moved_from(chart, dw))), y, eg, gw
        return phi

    def move_rows(self, x, y, w):
        """Transport in place the vectors ``w[j]`` (rows, each reshaped to a point's shape)
        from ``x`` to ``y`` (the embedded manifolds without normal coordinates)."""
        stack = w.reshape((w.shape[0],) + y.shape)
        for j in range(w.shape[0]):
            w[j] = np.reshape(self.M.transport(x, y, stack[j]), -1)


@njit(cache=True)
def _two_loop(s, y, a, b, rho, order, g, gamma):
    r""":math:`-\mathcal H g` by the two-loop recursion over the pairs ``order`` (oldest
    first), pair ``j`` being the rows ``s[j]``, ``y[j]`` with ``rho[j]`` :math:`= 1/\langle
    s_j, y_j\rangle` and the initial scaling ``gamma``. With normal coordinates (the columns
    of ``a``, ``b``, from :func:`normal_coordinates`) the pairs are used projected onto the
    tangent space, :math:`(Ps_j, Py_j)`, through :math:`\langle Pu, Pv\rangle =
    \langle u, v\rangle - \langle N u, N v\rangle`: the vectors are carried as ambient
    vectors with their normal coordinates, no pair is projected, and the result, ambient,
    is projected by the caller; with none (zero columns) this is the plain recursion. The
    dot products go to BLAS (a loop reduction would not vectorise without fastmath)."""
    k = order.shape[0]
    n = g.shape[0]
    r = a.shape[1]
    q = g.copy()  # g is tangent: its normal coordinates are 0
    nq = np.zeros(r)
    alpha = np.empty(k)
    for i in range(k - 1, -1, -1):
        j = order[i]
        t = rho[j] * (np.dot(s[j], q) - np.dot(a[j], nq))
        alpha[i] = t
        for l in range(n):
            q[l] -= t * y[j, l]
        for l in range(r):
            nq[l] -= t * b[j, l]
    for l in range(n):
        q[l] *= gamma
    for l in range(r):
        nq[l] *= gamma
    for i in range(k):
        j = order[i]
        t = alpha[i] - rho[j] * (np.dot(y[j], q) - np.dot(b[j], nq))
        for l in range(n):
            q[l] = t * s[j, l] + q[l]
        for l in range(r):
            nq[l] += t * a[j, l]
    for l in range(n):
        q[l] = -q[l]
    return q


def normal_coordinates(M):
    r"""``(normal, size)`` for the manifolds of one copy whose normal space at ``x`` is
    :math:`\{Xc\}` for small :math:`c` (Stiefel and O(n): :math:`c` symmetric, Grassmann:
    any :math:`p\times p`, the sphere: a scalar), else None: ``normal(x, w)`` gives the
    coordinates :math:`c_j` (flattened, ``size`` of them; on Grassmann their transposes,
    which have the same inner products) of the normal parts :math:`(I - P)w_j = Xc_j` of
    the rows ``w[j]``, with :math:`\langle Xc, Xc'\rangle = \langle c, c'\rangle`. A row
    is the transpose of an :math:`n\times p` matrix, flattened (:func:`transposed_row`), so
    that the :math:`w_j^\top X` of all rows are one matrix product. On Euclidean space
    and the matrix subspaces (one tangent space, in which the pairs lie) there are none:
    size 0."""
    if _linear(M):  # no normal part
        return (lambda x, w: np.zeros((w.shape[0], 0))), 0
    if getattr(M, "k", 1) != 1 or not _embedded(M):
        return None
    if type(M) in (Stiefel, Orthogonal, Grassmann):
        symmetric = type(M) is not Grassmann

        def normal(x, w):
            n, p = x.shape
            # the (X^T w_j)^T, whose inner products are those of the X^T w_j
            ct = (w.reshape(-1, n) @ x).reshape(w.shape[0], p, p)
            c = 0.5 * (ct + np.swapaxes(ct, 1, 2)) if symmetric else ct
            return c.reshape(w.shape[0], -1)
        return normal, M.shape[1] ** 2
    if type(M) is Sphere and len(M.shape) == 1:
        return (lambda x, w: (w @ x).reshape(-1, 1)), 1
    return None


def transposed_row(v):
    """The row of the array ``v`` for :func:`normal_coordinates`: its transpose, flattened
    (a vector as it is)."""
    return np.ascontiguousarray(np.transpose(v), dtype=float).reshape(-1)


@njit(cache=True)
def _curvatures(s, y, order):
    """(<s, y>, |s| |y|) of the pairs ``order``."""
    k = order.shape[0]
    sy, norms = np.empty(k), np.empty(k)
    for i in range(k):
        j = order[i]
        sy[i] = np.dot(s[j], y[j])
        norms[i] = np.sqrt(np.dot(s[j], s[j]) * np.dot(y[j], y[j]))
    return sy, norms


class PairMemory:
    r"""The last ``memory`` pairs ``(s, y)`` of rlbfgs in the coordinates of ``frame``.

    With a flat frame (the Frobenius metric in the coordinates) the pairs are the rows
    ``s[j]``, ``y[j]`` of preallocated arrays and the compiled two-loop recursion uses them;
    otherwise a list of pairs with the manifold's metric. On the embedded manifolds (the
    transport is the projection :math:`P` onto the new tangent space) the pairs stay as
    they were stored and are used as :math:`(Ps_j, Py_j)`: where the normal space is
    :math:`\{Xc\}` for small :math:`c` (Stiefel, Grassmann, the sphere; see
    :func:`normal_coordinates`) through the normal coordinates of each pair at the current
    point, with no pair projected (a new pair is :math:`(t d, g_{k+1} - g_k)` as it is,
    see :meth:`new_pair`); elsewhere :math:`P y_j` is formed at each point, and the
    :math:`s_j` meet tangent vectors only, in inner products (:math:`\langle P s,
    q\rangle = \langle s, q\rangle`), and in the direction, which is projected once at
    the end.
    """

    def __init__(self, frame, memory, shape):
        self.frame, self.memory, self.shape = frame, memory, tuple(shape)
        normal = normal_coordinates(frame.M) if frame.kind is None else None
        self._normal = None if normal is None else normal[0]
        self._transposed = normal is not None and normal[1] > 0  # rows: transposes
        if frame.flat:
            size = int(np.prod(self.shape))
            if frame.kind == "orthogonal":
                # skew coordinates: keep the n(n-1)/2 entries above the diagonal (half
                # the memory traffic; the recursion is invariant under the factor 2 this
                # puts on every inner product)
                self._upper = np.triu_indices(self.shape[0], 1)
                size = len(self._upper[0])
            self.s = np.zeros((memory, size))
            self.y = np.zeros((memory, size))
            # the y of each pair moved to the current point (the other embedded manifolds),
            # and the s (the charts' coordinates, with the singular bases where each pair
            # was stored)
            moved = frame.kind == "chart" or (frame.kind is None and self._normal is None)
            self.ty = np.zeros((memory, size)) if moved else self.y
            self.ts = np.zeros((memory, size)) if frame.kind == "chart" else self.s
            if frame.kind == "chart":
                M = frame.M
                self.bases = np.zeros((memory, M.m, M.k)), np.zeros((memory, M.n, M.k))
            self.rho = np.zeros(memory)
            self.cos = np.zeros(memory)  # <s, y>/(|s||y|) of each pair
            # the normal coordinates of s and y at the current point (none: zero columns),
            # and <s, y>, <s, s>, <y, y> as stored
            width = 0 if normal is None else normal[1]
            self.a, self.b = np.zeros((memory, width)), np.zeros((memory, width))
            if normal is not None:
                self.products = np.zeros((memory, 3))
        self.clear()

    def clear(self):
        self.order = []  # column indices (flat) or pairs (s, y, rho), oldest first

    def __len__(self):
        return len(self.order)

    def _row(self, v):
        if self.frame.kind == "orthogonal":
            return v[self._upper]
        if self._transposed:
            return transposed_row(v)
        return np.ascontiguousarray(v, dtype=float).reshape(-1)

    def _vector(self, row):
        if self.frame.kind == "orthogonal":
            z = np.zeros(self.shape)
            z[self._upper] = row
            return z - z.T
        if self._transposed:
            return row.reshape(self.shape[::-1]).T
        return row.reshape(self.shape)

    def direction(self, x, g, gamma):
        r""":math:`-\mathcal H g` (``g`` in the frame's coordinates)."""
        if not self.order:
            return -gamma * g
        if self.frame.flat:
            d = self._vector(_two_loop(self.ts, self.ty, self.a, self.b, self.rho,
                                       np.array(self.order, dtype=np.int64), self._row(g),
                                       gamma))
            return d if self.frame.kind else self.frame.M.projection(x, d)
        frame = self.frame
        q = np.array(g, copy=True)
        alphas = []
        for s, y, rho in reversed(self.order):
            a = rho * frame.inner(x, s, q)
            q -= a * y
            alphas.append(a)
        r = gamma * q
        for (s, y, rho), a in zip(self.order, reversed(alphas)):
            r += (a - rho * frame.inner(x, y, r)) * s
        return -r

    def move(self, x, x_new):
        r"""Transport the pairs to ``x_new`` (nothing to do in isometric coordinates);
        drop those whose curvature is no longer positive. Returns the least cosine
        :math:`\langle s, y\rangle/(\|s\|\|y\|)` of the pairs kept (inf if none)."""
        frame, M = self.frame, self.frame.M
        if not self.order:
            return np.inf
        if frame.kind in ("orthogonal", "spd"):  # isometric coordinates: nothing moves
            return min(self.cos[r] for r in self.order)
        if frame.flat:
            rows = np.array(self.order, dtype=np.int64)
            if frame.kind == "chart":  # from where each pair was stored
                self.ts[rows], self.ty[rows] = frame.chart(x_new).transport_from(
                    self.bases[0][rows], self.bases[1][rows],
                    np.stack((self.s[rows], self.y[rows])))
                sy, norms = _curvatures(self.ts, self.ty, rows)
                cos = sy / norms
            elif self._normal is not None:
                # all rows at once (a view of the arrays; unused rows are zero)
                self.a, self.b = self._normal(x_new, self.s), self._normal(x_new, self.y)
                a, b = self.a[rows], self.b[rows]
                sy, ss, yy = (self.products[rows].T
                              - [np.sum(a * b, 1), np.sum(a * a, 1), np.sum(b * b, 1)])
                with np.errstate(invalid="ignore"):
                    cos = sy / np.sqrt(ss * yy)
            else:
                moved = self.y[rows]
                frame.move_rows(x, x_new, moved)
                self.ty[rows] = moved
                sy, norms = _curvatures(self.s, self.ty, rows)
                cos = sy / norms  # with |s| for |P s|: a lower bound
            with np.errstate(divide="ignore"):
                self.rho[rows] = 1.0 / sy
            self.cos[rows] = cos
            self.order = [r for r, c in zip(self.order, cos) if c > 1e-12]
            return min((self.cos[r] for r in self.order), default=np.inf)
        kept, least = [], np.inf
        for si, yi, _ in self.order:
            si, yi = M.transport(x, x_new, si), M.transport(x, x_new, yi)
            sy = M.inner_product(x_new, si, yi)
            cos = sy / (M.norm(x_new, si) * M.norm(x_new, yi))
            if cos > 1e-12:
                kept.append((si, yi, 1.0 / sy))
                least = min(least, cos)
        self.order = kept
        return least

    def new_pair(self, x, x_new, step, g, g_new):
        """The pair ``(s, y)`` of a step from ``x`` to ``x_new`` (``step`` and ``g`` tangent
        at ``x``, ``g_new`` at ``x_new``, in the frame's coordinates): moved to ``x_new``,
        or, with normal coordinates, as they are (used as :math:`(Ps, Py)`)."""
        if self._normal is not None:
            return step, g_new - g
        move = self.frame.move
        return move(x, x_new, step), g_new - move(x, x_new, g)

    def add(self, x, s, y, cautious=0.0):
        r"""Store the pair ``(s, y)`` given at ``x`` (tangent there; with normal
        coordinates, the vectors of :meth:`new_pair`, used as :math:`(Ps, Py)`) if
        :math:`\langle s, y\rangle > 0` and :math:`\langle s, y\rangle/\langle s,
        s\rangle \ge` ``cautious``; the oldest pair goes when the memory is full. Returns
        :math:`(\langle s, y\rangle, \langle y, y\rangle, \cos)` of the pair stored, or
        None."""
        if self._normal is not None:  # as tangent vectors at x: less the normal parts
            cs, cy = self._row(s), self._row(y)
            a, b = self._normal(x, np.stack((cs, cy)))
            sy, ss, yy = np.vdot(cs, cy), np.vdot(cs, cs), np.vdot(cy, cy)
            products = sy, ss, yy
            sy, ss, yy = sy - a @ b, ss - a @ a, yy - b @ b
        else:
            inner = self.frame.inner
            sy, ss, yy = inner(x, s, y), inner(x, s, s), inner(x, y, y)
        if not (ss > 0 and sy > 0 and sy / ss >= cautious):
            return None
        cos = sy / np.sqrt(ss * yy)
        if not self.frame.flat:
            self.order.append((s, y, 1.0 / sy))
            if len(self.order) > self.memory:
                self.order.pop(0)
            return sy, yy, cos
        if len(self.order) == self.memory:
            j = self.order.pop(0)
        else:
            j = min(set(range(self.memory)) - set(self.order))
        cs, cy = self._row(s), self._row(y)
        self.s[j], self.y[j], self.ts[j], self.ty[j] = cs, cy, cs, cy
        if self.frame.kind == "chart":
            chart = self.frame.chart(x)
            self.bases[0][j], self.bases[1][j] = chart.u, chart.v
        self.cos[j] = cos
        if self._normal is not None:
            self.rho[j] = 1.0 / sy
            self.products[j] = products
            self.a[j], self.b[j] = a, b
        else:  # the rows' own product (half the inner product in packed skew rows)
            self.rho[j] = 1.0 / np.vdot(cs, cy)
        self.order.append(j)
        return sy, yy, cos


@njit(cache=True)
def _cayley_left(x, omega):
    """x (I - Ω/2)^-1 (I + Ω/2) = 2 x (I - Ω/2)^-1 - x for skew Ω, by one solve with
    (I - Ω/2)ᵀ = I + Ω/2."""
    b = np.eye(x.shape[0]) + 0.5 * omega
    z = np.linalg.solve(b, np.ascontiguousarray(x.T))
    return 2.0 * z.T - x


def lie_retraction(M, x, omega):
    r"""``M.retraction(x, x @ omega)`` on :class:`~jitopt.manifolds.Orthogonal` (one copy)
    from the Lie-algebra coordinates :math:`\Omega`: :math:`X\,Q(I + \Omega)`,
    :math:`X\,\mathrm{polar}(I + \Omega)`, :math:`X\,\mathrm{cay}(\Omega)` or
    :math:`X\exp(\Omega)`, with no :math:`n\times n` product to form :math:`X\Omega`
    for the Cayley transform."""
    name = M.retraction_name
    if name == "cayley":
        return _cayley_left(x, omega)
    if name == "exp":
        return x @ _expm_skew(0.5 * (omega - omega.T))
    eye = np.eye(M.n)
    q = K.polar_retraction(eye, omega) if name == "polar" else qr_retraction(eye, omega)
    return x @ q


def lie_line(problem, x, dw):
    r""":math:`\varphi(t) = f(R_x(t X\Omega))` on O(n) for :func:`wolfe`, in the Lie-algebra
    coordinates of rlbfgs: ``phi(t) -> (f, slope, y, egrad, gw)`` with
    :math:`g_w = \mathrm{skew}(Y^\top \nabla f(Y))` the coordinates of the Riemannian
    gradient at :math:`Y` and the slope :math:`\langle g_w, \Omega\rangle` (the left
    translation as the transport)."""
    M = problem.manifold

    def phi(t):
        y = lie_retraction(M, x, t * dw)
        f, eg = problem.cost_and_egrad(y)
        a = y.T @ eg
        gw = 0.5 * (a - a.T)
        return f, float(np.vdot(gw, dw)), y, eg, gw
    return phi
