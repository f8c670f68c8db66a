"""The pair memory of rlbfgs with its compiled two-loop recursion, in the coordinates the
manifold gives its pairs (:meth:`~jitopt.manifolds.Manifold.pair_frame`)."""

import numpy as np
from numba import njit

__all__ = ["PairMemory"]


@njit(cache=True)
def _two_loop(s, y, a, b, rho, order, g, gamma):
    r""":math:`-\mathcal H g` by the two-loop recursion over the pairs ``order`` (oldest
    first), pair ``j`` being the rows ``s[j]``, ``y[j]`` with ``rho[j]`` :math:`= 1/\langle
    s_j, y_j\rangle` and the initial scaling ``gamma``. With normal coordinates (the columns
    of ``a``, ``b``, from ``Manifold.normal_coordinates``) the pairs are used projected
    onto the tangent space, :math:`(Ps_j, Py_j)`, through :math:`\langle Pu, Pv\rangle =
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


def transposed_row(v):
    """The row of the array ``v`` for ``Manifold.normal_coordinates``: its transpose, flattened
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
    ``Manifold.normal_coordinates``) through the normal coordinates of each pair at the
    current point, with no pair projected (a new pair is :math:`(t d, g_{k+1} - g_k)` as it is,
    see :meth:`new_pair`); elsewhere :math:`P y_j` is formed at each point, and the
    :math:`s_j` meet tangent vectors only, in inner products (:math:`\langle P s,
    q\rangle = \langle s, q\rangle`), and in the direction, which is projected once at
    the end.
    """

    def __init__(self, frame, memory, shape):
        self.frame, self.memory, self.shape = frame, memory, tuple(shape)
        normal = frame.M.normal_coordinates() if frame.ambient else None
        self._normal = None if normal is None else normal[0]
        self._transposed = normal is not None and normal[1] > 0  # rows: transposes
        if frame.flat:
            size = int(np.prod(self.shape))
            if frame.packed_skew:
                # skew coordinates: keep the n(n-1)/2 entries above the diagonal (half
                # the memory traffic; the recursion is invariant under the factor 2 this
                # puts on every inner product)
                self._upper = np.triu_indices(self.shape[0], 1)
                size = len(self._upper[0])
            # s and y in one array: the normal coordinates of both come from one call
            self._sy = np.zeros((2 * memory, size))
            self.s, self.y = self._sy[:memory], self._sy[memory:]
            # the y of each pair moved to the current point (the other embedded manifolds),
            # and the s (the charts' coordinates, with the singular bases where each pair
            # was stored)
            moved = frame.charts or (frame.ambient and self._normal is None)
            self.ty = np.zeros((memory, size)) if moved else self.y
            self.ts = np.zeros((memory, size)) if frame.charts else self.s
            if frame.charts:
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
        if self.frame.packed_skew:
            return v[self._upper]
        if self._transposed:
            return transposed_row(v)
        return np.ascontiguousarray(v, dtype=float).reshape(-1)

    def _vector(self, row):
        if self.frame.packed_skew:
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
            return self.frame.M.projection(x, d) if self.frame.ambient else d
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
        if frame.isometric:  # nothing moves
            return min(self.cos[r] for r in self.order)
        if frame.flat:
            rows = np.array(self.order, dtype=np.int64)
            if frame.charts:  # from where each pair was stored
                self.ts[rows], self.ty[rows] = frame.chart(x_new).transport_from(
                    self.bases[0][rows], self.bases[1][rows],
                    np.stack((self.s[rows], self.y[rows])))
                sy, norms = _curvatures(self.ts, self.ty, rows)
                cos = sy / norms
            elif self._normal is not None:
                # all rows at once (unused rows are zero)
                ab = self._normal(x_new, self._sy)
                self.a, self.b = ab[:self.memory], ab[self.memory:]
                a, b, products = self.a[rows], self.b[rows], self.products[rows]
                sy = products[:, 0] - np.einsum("ij,ij->i", a, b)
                ss = products[:, 1] - np.einsum("ij,ij->i", a, a)
                yy = products[:, 2] - np.einsum("ij,ij->i", b, b)
                with np.errstate(invalid="ignore", divide="ignore"):
                    cos = sy / np.sqrt(ss * yy)
                    self.rho[rows] = 1.0 / sy
            else:
                moved = self.y[rows]
                frame.move_rows(x, x_new, moved)
                self.ty[rows] = moved
                sy, norms = _curvatures(self.s, self.ty, rows)
                cos = sy / norms  # with |s| for |P s|: a lower bound
            if self._normal is None:
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
        cs, cy = (self._row(s), self._row(y)) if self.frame.flat else (None, None)
        if self._normal is not None:  # as tangent vectors at x: less the normal parts
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
        self.s[j], self.y[j], self.ts[j], self.ty[j] = cs, cy, cs, cy
        if self.frame.charts:
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
