r"""Closed convex sets with exact Euclidean projections compiled by Numba.

Every set is stored in one canonical form: a box :math:`\{l \le x \le u\}` (bounds may be
infinite), intersected with optional balls :math:`\|x\|_1 \le r_1`, :math:`\|x\|_2 \le r_2`, a
group-norm ball :math:`(\sum_g \|x_g\|_2^q)^{1/q} \le r_g` with :math:`q \in \{1, \infty\}`,
or (only for :class:`Simplex`) the equality :math:`\sum_i x_i = r` with :math:`x \ge 0`.
Boxes, the nonnegative orthant and :math:`\ell_\infty` balls merge into the box part of an
:class:`Intersection`; balls of the same kind merge into the smallest one.

One compiled kernel, :func:`project_kernel`, projects onto any set in that form, so solvers
written in Numba call it as a global function with the arguments of
:meth:`ConvexSet.kernel_args` (no function is passed as an argument, so a cached solver never
recompiles for a new set)::

    lo, hi, fpar, ipar, groups = constraint.kernel_args(d)
    project_kernel(lo, hi, fpar, ipar, groups, idx, z, out)   # out <- Pi(z) on coordinates idx

The parts a set lacks are None (``fpar`` for a box, ``groups`` without a group ball): Numba
drops the code behind an ``is None`` test at compile time, so a caller compiles one
specialization per set family (box, balls, balls with a group ball) holding only its code.

The projection is exact: in closed form for a box or a group ball alone, and by solving the
one-dimensional equation of the KKT multiplier (bisection to the bracket's rounding level,
then an exact solve on the active set) for a box with one :math:`\ell_1` or :math:`\ell_2`
ball, the capped and the probability simplex. Intersections with two or more balls are
projected by Dykstra's alternating projections between these exact pieces, run until the
iterates stop changing at rounding level.
"""

import itertools
import numbers

import numpy as np
from numba import njit

from ._validation import check_array, check_real

__all__ = [
    "ConvexSet", "Box", "NonNegative", "LInfBall", "L1Ball", "L2Ball", "CappedSimplex",
    "Simplex", "GroupNormBall", "Intersection", "project_kernel", "ProductOfSimplices",
    "Polytope",
]

_INF = np.inf


# --------------------------------------------------------------------------------------
# kernels
# --------------------------------------------------------------------------------------

@njit(cache=True)
def _clip(v, lo, hi):
    return min(max(v, lo), hi)


@njit(cache=True)
def _box_l1(lo, hi, idx, z, r, out):
    """out <- argmin ||x - z|| over lo <= x <= hi, ||x||_1 <= r: x = clip(soft(z, tau))."""
    m = idx.shape[0]
    s = 0.0
    zmax = 0.0
    for j in range(m):
        out[j] = _clip(z[j], lo[idx[j]], hi[idx[j]])
        s += abs(out[j])
        zmax = max(zmax, abs(z[j]))
    if s <= r:
        return
    a, b = 0.0, zmax  # phi(a) > r >= phi(b)
    for _ in range(200):
        t = 0.5 * (a + b)
        if t <= a or t >= b:
            break
        s = 0.0
        for j in range(m):
            v = max(abs(z[j]) - t, 0.0) * np.sign(z[j])
            s += abs(_clip(v, lo[idx[j]], hi[idx[j]]))
        if s > r:
            a = t
        else:
            b = t
    # exact finish: on the free set phi is affine in tau
    t = 0.5 * (a + b)
    c = 0.0
    sz = 0.0
    nf = 0
    for j in range(m):
        v = max(abs(z[j]) - t, 0.0) * np.sign(z[j])
        lj, hj = lo[idx[j]], hi[idx[j]]
        if v != 0.0 and lj < v < hj:
            sz += abs(z[j])
            nf += 1
        else:
            c += abs(_clip(v, lj, hj))
    if nf > 0:
        tt = (sz + c - r) / nf
        if a <= tt <= b:
            t = tt
    for j in range(m):
        v = max(abs(z[j]) - t, 0.0) * np.sign(z[j])
        out[j] = _clip(v, lo[idx[j]], hi[idx[j]])


@njit(cache=True)
def _box_l2(lo, hi, idx, z, r, out):
    """out <- argmin ||x - z|| over lo <= x <= hi, ||x||_2 <= r: x = clip(t z), t in [0, 1]."""
    m = idx.shape[0]
    s = 0.0
    for j in range(m):
        out[j] = _clip(z[j], lo[idx[j]], hi[idx[j]])
        s += out[j] * out[j]
    if s <= r * r:
        return
    a, b = 0.0, 1.0  # ||x(a)|| <= r < ||x(b)||
    for _ in range(200):
        t = 0.5 * (a + b)
        if t <= a or t >= b:
            break
        s = 0.0
        for j in range(m):
            v = _clip(t * z[j], lo[idx[j]], hi[idx[j]])
            s += v * v
        if s > r * r:
            b = t
        else:
            a = t
    t = 0.5 * (a + b)
    c = 0.0
    sz = 0.0
    for j in range(m):
        v = t * z[j]
        lj, hj = lo[idx[j]], hi[idx[j]]
        if lj < v < hj:
            sz += z[j] * z[j]
        else:
            c += _clip(v, lj, hj) ** 2
    if sz > 0.0 and r * r >= c:
        tt = np.sqrt((r * r - c) / sz)
        if a <= tt <= b:
            t = tt
    for j in range(m):
        out[j] = _clip(t * z[j], lo[idx[j]], hi[idx[j]])


@njit(cache=True)
def _box_sum_eq(lo, hi, idx, z, r, out):
    """out <- argmin ||x - z|| over lo <= x <= hi, sum x = r: x = clip(z - tau)."""
    m = idx.shape[0]
    if m == 0:
        return
    # phi(tau) = sum clip(z - tau) decreases; the simplex has lo = 0, hi = inf and r > 0
    a = np.min(z) - abs(r) - 1.0
    b = np.max(z) + 1.0
    for _ in range(300):
        t = 0.5 * (a + b)
        if t <= a or t >= b:
            break
        s = 0.0
        for j in range(m):
            s += _clip(z[j] - t, lo[idx[j]], hi[idx[j]])
        if s > r:
            a = t
        else:
            b = t
    t = 0.5 * (a + b)
    c = 0.0
    sz = 0.0
    nf = 0
    for j in range(m):
        v = z[j] - t
        lj, hj = lo[idx[j]], hi[idx[j]]
        if lj < v < hj:
            sz += z[j]
            nf += 1
        else:
            c += _clip(v, lj, hj)
    if nf > 0:
        tt = (sz + c - r) / nf
        if a <= tt <= b:
            t = tt
    for j in range(m):
        out[j] = _clip(z[j] - t, lo[idx[j]], hi[idx[j]])


@njit(cache=True)
def _group_ball(groups, ngroups, q, idx, z, r, out):
    """Projection onto (sum_g ||x_g||^q)^(1/q) <= r, q = 1 (code 1) or inf (code 2)."""
    m = idx.shape[0]
    norms = np.zeros(ngroups)
    for j in range(m):
        norms[groups[idx[j]]] += z[j] * z[j]
    for g in range(ngroups):
        norms[g] = np.sqrt(norms[g])
    scale = np.ones(ngroups)
    if q == 2:
        for g in range(ngroups):
            if norms[g] > r:
                scale[g] = r / norms[g]
    else:
        total = norms.sum()
        if total > r:
            # project the vector of group norms onto the l1 ball: soft threshold tau
            a, b = 0.0, norms.max()
            for _ in range(200):
                t = 0.5 * (a + b)
                if t <= a or t >= b:
                    break
                s = 0.0
                for g in range(ngroups):
                    s += max(norms[g] - t, 0.0)
                if s > r:
                    a = t
                else:
                    b = t
            t = 0.5 * (a + b)
            sz = 0.0
            nf = 0
            for g in range(ngroups):
                if norms[g] > t:
                    sz += norms[g]
                    nf += 1
            if nf > 0:
                tt = (sz - r) / nf
                if a <= tt <= b:
                    t = tt
            for g in range(ngroups):
                scale[g] = max(norms[g] - t, 0.0) / norms[g] if norms[g] > 0 else 0.0
    for j in range(m):
        out[j] = z[j] * scale[groups[idx[j]]]


@njit(cache=True)
def _piece(p, lo, hi, fpar, ipar, groups, idx, z, out):
    """Exact projection onto piece p of a Dykstra splitting: 0 box+l1, 1 l2 ball, 2 group."""
    if p == 0:
        _box_l1(lo, hi, idx, z, fpar[0], out)
    elif p == 1:
        for j in range(idx.shape[0]):
            out[j] = z[j]
        nrm = np.sqrt(np.sum(z * z))
        if nrm > fpar[1]:
            for j in range(idx.shape[0]):
                out[j] = z[j] * (fpar[1] / nrm)
    elif groups is not None:  # pruned at compile time for sets without a group ball
        _group_ball(groups, ipar[2], ipar[0], idx, z, fpar[2], out)


@njit(cache=True)
def _box(lo, hi, idx, z, out):
    """out <- the projection of z onto the box lo <= x <= hi (restricted to idx)."""
    for j in range(idx.shape[0]):
        out[j] = _clip(z[j], lo[idx[j]], hi[idx[j]])


@njit(cache=True)
def project_kernel(lo, hi, fpar, ipar, groups, idx, z, out):
    """Project ``z`` onto the set restricted to the coordinates ``idx``; write into ``out``.

    Parameters
    ----------
    lo, hi : float64 arrays (d,)
        Box bounds.
    fpar : float64 array (3,) or None
        Radii ``(r1, r2, rg)`` of the l1, l2 and group balls (``inf`` when absent); for a
        simplex, ``r1`` holds the sum. None for a box (no ball and no simplex).
    ipar : int64 array (3,)
        ``(group_code, simplex_flag, n_groups)``; group_code 0 none, 1 sum of group norms,
        2 max of group norms.
    groups : int64 array (d,) or None
        Group id of each coordinate; None when there is no group ball.
    idx : int64 array (m,)
        Coordinates the vector ``z`` lives on; the set is restricted to them (for a
        support-preserving set this is the projection of the vector that is ``z`` on ``idx``
        and zero elsewhere).
    z, out : float64 arrays (m,)
        Input and output (they may not alias).

    Notes
    -----
    Numba removes the branches of an ``is None`` test on an argument at compile time, so a
    caller compiles only the code of its set family: a box (``fpar`` None), balls without a
    group ball (``groups`` None), or the general case.
    """
    if fpar is None:
        _box(lo, hi, idx, z, out)
    else:
        _project_balls(lo, hi, fpar, ipar, groups, idx, z, out)


@njit(cache=True)
def _project_balls(lo, hi, fpar, ipar, groups, idx, z, out):
    """:func:`project_kernel` for a set with a ball or the simplex equality."""
    m = idx.shape[0]
    has_l1 = fpar[0] < np.inf
    has_l2 = fpar[1] < np.inf
    gq = 0
    if groups is not None:
        gq = ipar[0]
    if ipar[1] == 1:
        _box_sum_eq(lo, hi, idx, z, fpar[0], out)
        return
    if not has_l2 and gq == 0:
        _box_l1(lo, hi, idx, z, fpar[0], out)
        return
    if not has_l1 and gq == 0:
        _box_l2(lo, hi, idx, z, fpar[1], out)
        return
    free_box = True
    for j in range(m):
        if lo[idx[j]] > -np.inf or hi[idx[j]] < np.inf:
            free_box = False
            break
    if gq != 0 and not has_l1 and not has_l2 and free_box:
        if groups is not None:
            _group_ball(groups, ipar[2], gq, idx, z, fpar[2], out)
        return
    # Dykstra's algorithm between the exact pieces: box+l1, l2 ball, group ball
    pieces = np.empty(3, dtype=np.int64)
    npieces = 0
    pieces[npieces] = 0
    npieces += 1
    if has_l2:
        pieces[npieces] = 1
        npieces += 1
    if gq != 0:
        pieces[npieces] = 2
        npieces += 1
    incr = np.zeros((npieces, m))
    x = z.copy()
    y = np.empty(m)
    xn = np.empty(m)
    scale = 1.0 + np.sqrt(np.sum(z * z))
    for _ in range(20000):
        change = 0.0
        for i in range(npieces):
            for j in range(m):
                y[j] = x[j] + incr[i, j]
            _piece(pieces[i], lo, hi, fpar, ipar, groups, idx, y, xn)
            for j in range(m):
                incr[i, j] = y[j] - xn[j]
                change = max(change, abs(xn[j] - x[j]))
                x[j] = xn[j]
        if change <= 4e-16 * scale:
            break
    for j in range(m):
        out[j] = x[j]


# --------------------------------------------------------------------------------------
# Python classes
# --------------------------------------------------------------------------------------

def _radius(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a positive real number, got {type(value).__name__}")
    value = float(value)
    if not (value > 0 and np.isfinite(value)):
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    return value


def _bound(name, value):
    try:
        arr = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a real number or a 1-D array of them, got "
                        f"{type(value).__name__}") from None
    if arr.ndim > 1:
        raise ValueError(f"{name} must be a scalar or a 1-D array, got shape {arr.shape}")
    if np.isnan(arr).any():
        raise ValueError(f"{name} must not contain NaN")
    if (name == "lower" and (arr == _INF).any()) or (name == "upper" and (arr == -_INF).any()):
        raise ValueError(f"{name} must not be {'+' if name == 'lower' else '-'}inf "
                         f"(the set would be empty)")
    return arr


def _vector(x, name="x", dim=None):
    """A writable float copy of the real finite 1-D array ``x`` (of length ``dim``)."""
    x = check_array(name, x, ndim=1)
    if dim is not None and x.shape[0] != dim:
        raise ValueError(f"{name} must have length {dim}, got {x.shape[0]}")
    return x


class ConvexSet:
    r"""A closed convex set of :math:`\mathbb R^d` with an exact Euclidean projection.

    Use the subclasses (:class:`Box`, :class:`NonNegative`, :class:`L1Ball`, ...) and
    ``a & b`` (or :class:`Intersection`) to combine them.

    Attributes
    ----------
    support_preserving : bool
        Whether projecting a vector never creates nonzeros outside its support,
        :math:`\operatorname{supp}\Pi(v) \subseteq \operatorname{supp} v`. True for every set
        that is closed under zeroing coordinates (all balls centred at 0, boxes with
        :math:`l \le 0 \le u`, and their intersections).
    separable : bool
        A box (a product of intervals): the ``"gain"`` selection of the two-step projection
        is then the exact projection onto :math:`\{\|x\|_0 \le k\} \cap \Gamma`.
    symmetric : bool
        Invariant under sign flips and permutations of coordinates (uniform balls and cubes):
        the plain two-step projection is then exact.
    nonnegative : bool
        Contained in the nonnegative orthant (the ``"signed"`` selection applies; it is exact
        when the set is also permutation-invariant, see ``permutation_invariant``).
    permutation_invariant : bool
        Invariant under permutations of coordinates.
    dim : int or None
        The dimension fixed by array-valued parameters, or None if the set fits any ``d``.
    """

    def __init__(self, lo=-_INF, hi=_INF, r1=_INF, r2=_INF, groups=None, rg=_INF, gq=0,
                 simplex=False):
        self._lo = _bound("lower", lo)
        self._hi = _bound("upper", hi)
        self._r1, self._r2, self._rg = float(r1), float(r2), float(rg)
        self._groups = None if groups is None else np.asarray(groups, dtype=np.int64)
        self._gq = int(gq)
        self._simplex = bool(simplex)
        dims = {a.shape[0] for a in (self._lo, self._hi) if a.ndim == 1}
        if self._groups is not None:
            dims.add(self._groups.shape[0])
        if len(dims) > 1:
            raise ValueError(f"the array-valued parameters of the set have different lengths "
                             f"{sorted(dims)}")
        self.dim = dims.pop() if dims else None
        lo_b, hi_b = np.broadcast_arrays(self._lo, self._hi)
        if (lo_b > hi_b).any():
            raise ValueError("the set is empty: some lower bound exceeds its upper bound")
        # the smallest-norm point of the box must fit in the balls
        near0 = np.clip(0.0, lo_b, hi_b)
        n = self.dim or 1
        near0 = np.broadcast_to(near0, (n,)) if near0.ndim == 0 else near0
        if (np.abs(near0).sum() > self._r1 * (1 + 1e-12) and not self._simplex) or \
                np.sqrt((near0 ** 2).sum()) > self._r2 * (1 + 1e-12):
            raise ValueError("the set is empty: the box does not meet the ball")

    # -- flags ---------------------------------------------------------------------------

    @property
    def support_preserving(self):
        return (not self._simplex) and bool((self._lo <= 0).all() and (self._hi >= 0).all())

    @property
    def separable(self):
        return (self._r1 == _INF and self._r2 == _INF and self._gq == 0
                and not self._simplex)

    @property
    def permutation_invariant(self):
        return (self._lo.ndim == 0 or np.all(self._lo == self._lo[0])) and \
            (self._hi.ndim == 0 or np.all(self._hi == self._hi[0])) and self._gq == 0

    @property
    def symmetric(self):
        lo, hi = np.broadcast_arrays(self._lo, self._hi)
        return self.permutation_invariant and bool(np.all(lo == -hi)) and not self._simplex

    @property
    def nonnegative(self):
        return bool((self._lo >= 0).all())

    # -- use -----------------------------------------------------------------------------

    def _check_dim(self, d):
        if self.dim is not None and d != self.dim:
            raise ValueError(f"{self!r} has dimension {self.dim}, got a vector of length {d}")

    def kernel_args(self, d):
        """The arguments ``(lo, hi, fpar, ipar, groups)`` of :func:`project_kernel` in
        dimension ``d``: ``fpar`` is None for a box, ``groups`` None without a group ball
        (so a compiled caller holds only the projection code of its set family)."""
        self._check_dim(d)
        # fresh writable C arrays: read-only views would make Numba compile a second
        # specialization of the kernels
        lo = np.array(np.broadcast_to(self._lo, (d,)), dtype=float)
        hi = np.array(np.broadcast_to(self._hi, (d,)), dtype=float)
        fpar = None if self.separable else np.array([self._r1, self._r2, self._rg])
        groups = None if self._gq == 0 else self._groups.copy()
        ngroups = int(groups.max()) + 1 if groups is not None else 0
        ipar = np.array([self._gq, int(self._simplex), ngroups], dtype=np.int64)
        return lo, hi, fpar, ipar, groups

    def _vector(self, x, name="x"):
        x = _vector(x, name)
        self._check_dim(x.shape[0])
        return x

    def project(self, x):
        """The Euclidean projection of ``x`` onto the set (a new array)."""
        x = self._vector(x)
        d = x.shape[0]
        out = np.empty(d)
        project_kernel(*self.kernel_args(d), np.arange(d, dtype=np.int64), x, out)
        return out

    def contains(self, x, tol=1e-9):
        """Whether ``x`` is in the set, up to an absolute/relative tolerance ``tol``."""
        tol = check_real("tol", tol, low=0.0)
        x = self._vector(x)
        lo, hi, fpar, ipar, groups = self.kernel_args(x.shape[0])
        ok = bool(np.all(x >= lo - tol) and np.all(x <= hi + tol))
        if self._simplex:
            return ok and abs(x.sum() - self._r1) <= tol * max(1.0, self._r1)
        ok &= np.abs(x).sum() <= self._r1 + tol * max(1.0, self._r1)
        ok &= np.sqrt(x @ x) <= self._r2 + tol * max(1.0, self._r2)
        if self._gq:
            norms = np.sqrt(np.bincount(groups, weights=x * x, minlength=ipar[2]))
            val = norms.sum() if self._gq == 1 else norms.max()
            ok &= val <= self._rg + tol * max(1.0, self._rg)
        return bool(ok)

    def __and__(self, other):
        return Intersection(self, other)

    def __repr__(self):
        return f"{type(self).__name__}()"


class Box(ConvexSet):
    r"""The box :math:`\{x : l_i \le x_i \le u_i\}` (scalars or arrays; infinite bounds allowed).

    Support-preserving when :math:`l_i \le 0 \le u_i` for every :math:`i`.
    """

    def __init__(self, lower=-_INF, upper=_INF):
        super().__init__(lo=lower, hi=upper)

    def __repr__(self):
        return f"Box({self._lo.tolist()!r}, {self._hi.tolist()!r})"


class NonNegative(ConvexSet):
    r"""The nonnegative orthant :math:`\{x \ge 0\}`."""

    def __init__(self):
        super().__init__(lo=0.0)


class LInfBall(ConvexSet):
    r"""The ball :math:`\{\|x\|_\infty \le r\}` (the cube :math:`[-r, r]^d`)."""

    def __init__(self, radius=1.0):
        r = _radius("radius", radius)
        super().__init__(lo=-r, hi=r)

    def __repr__(self):
        return f"LInfBall({float(self._hi)!r})"


class L1Ball(ConvexSet):
    r"""The ball :math:`\{\|x\|_1 \le r\}`."""

    def __init__(self, radius=1.0):
        super().__init__(r1=_radius("radius", radius))

    def __repr__(self):
        return f"L1Ball({self._r1!r})"


class L2Ball(ConvexSet):
    r"""The ball :math:`\{\|x\|_2 \le r\}`."""

    def __init__(self, radius=1.0):
        super().__init__(r2=_radius("radius", radius))

    def __repr__(self):
        return f"L2Ball({self._r2!r})"


class CappedSimplex(ConvexSet):
    r"""The capped simplex :math:`\{x \ge 0, \sum_i x_i \le r\}` (support-preserving)."""

    def __init__(self, radius=1.0):
        super().__init__(lo=0.0, r1=_radius("radius", radius))

    def __repr__(self):
        return f"CappedSimplex({self._r1!r})"


class Simplex(ConvexSet):
    r"""The simplex :math:`\{x \ge 0, \sum_i x_i = r\}`.

    Not support-preserving: the projection of a sparse vector is in general dense
    (:math:`\Pi(0.2, 0, 0) = (0.4\overline{6}, 0.2\overline{6}, 0.2\overline{6})` for
    :math:`r = 1`), so the two-step projection refuses it.
    """

    def __init__(self, radius=1.0):
        super().__init__(lo=0.0, r1=_radius("radius", radius), simplex=True)

    def __repr__(self):
        return f"Simplex({self._r1!r})"


class GroupNormBall(ConvexSet):
    r"""A group-norm ball :math:`\bigl(\sum_g \|x_g\|_2^q\bigr)^{1/q} \le r`.

    Parameters
    ----------
    groups : array_like of int, shape (d,)
        The group of each coordinate, labels ``0, ..., G-1`` (every label used).
    radius : float
        The radius :math:`r`.
    q : {1, inf}
        ``1`` for the :math:`\ell_{2,1}` ball (sum of group norms, the group-lasso ball),
        ``inf`` for the :math:`\ell_{2,\infty}` ball (every group norm at most :math:`r`).
    """

    def __init__(self, groups, radius=1.0, q=1):
        g = np.asarray(groups)
        if g.ndim != 1 or g.size == 0 or not np.issubdtype(g.dtype, np.integer):
            raise TypeError("groups must be a non-empty 1-D array of integer labels")
        if g.min() < 0 or np.unique(g).size != g.max() + 1:
            raise ValueError("groups must use every label 0, ..., G-1 (G the number of groups)")
        if q not in (1, np.inf):
            raise ValueError(f"q must be 1 or inf, got {q!r}")
        super().__init__(groups=g, rg=_radius("radius", radius), gq=1 if q == 1 else 2)

    def __repr__(self):
        q = "1" if self._gq == 1 else "inf"
        return f"GroupNormBall(<{self._groups.max() + 1} groups>, {self._rg!r}, q={q})"


class Intersection(ConvexSet):
    r"""The intersection of convex sets (boxes merge; balls of one kind keep the smallest).

    At most one :class:`GroupNormBall` (and no :class:`Simplex`) may take part.
    """

    def __init__(self, *sets):
        if not sets:
            raise ValueError("Intersection needs at least one set")
        for s in sets:
            if not isinstance(s, ConvexSet):
                raise TypeError(f"Intersection takes ConvexSet objects, got {type(s).__name__}")
            if s._simplex:
                raise ValueError("Simplex cannot take part in an Intersection")
        with_groups = [s for s in sets if s._gq]
        if len(with_groups) > 1:
            raise ValueError("at most one GroupNormBall may take part in an Intersection")
        g = with_groups[0] if with_groups else None
        dims = sorted({s.dim for s in sets if s.dim is not None})
        if len(dims) > 1:
            raise ValueError(f"the sets of an Intersection must have one dimension, got {dims}")
        lo, hi = sets[0]._lo, sets[0]._hi
        for s in sets[1:]:
            lo, hi = np.maximum(lo, s._lo), np.minimum(hi, s._hi)
        self.sets = tuple(sets)
        super().__init__(lo=lo, hi=hi, r1=min(s._r1 for s in sets),
                         r2=min(s._r2 for s in sets), groups=None if g is None else g._groups,
                         rg=_INF if g is None else g._rg, gq=0 if g is None else g._gq)

    def __repr__(self):
        return " & ".join(repr(s) for s in self.sets)


# --------------------------------------------------------------------------------------
# sets outside the canonical form (not ConvexSet: project_kernel does not handle them)
# --------------------------------------------------------------------------------------

class ProductOfSimplices:
    r"""The product :math:`\Delta(m_1) \times \dots \times \Delta(m_n)` of probability
    simplices (the mixed strategies of an ``n``-player normal-form game), coordinates
    concatenated.

    Not a :class:`~jitopt.sets.ConvexSet` (one kernel call projects onto one simplex);
    :meth:`~jitopt.sets.ProductOfSimplices.project` is exact, block by block.

    Parameters
    ----------
    sizes : sequence of int
        The block sizes :math:`m_i \ge 1`.
    """

    def __init__(self, sizes):
        try:
            sizes = [int(m) for m in sizes]
        except (TypeError, ValueError):
            raise TypeError("sizes must be a sequence of positive integers") from None
        if not sizes or min(sizes) < 1:
            raise ValueError(f"sizes must be a non-empty sequence of positive integers, "
                             f"got {sizes}")
        self.sizes = tuple(sizes)
        self.offsets = np.concatenate([[0], np.cumsum(self.sizes)]).astype(np.int64)
        self.dim = int(self.offsets[-1])

    def project(self, x):
        r"""The Euclidean projection of ``x`` (a new array): the product of the projections
        of its blocks onto their simplices (the problem separates over the blocks)."""
        x = _vector(x, dim=self.dim)
        out = np.empty(self.dim)
        simplex = Simplex()
        for lo, hi in zip(self.offsets[:-1], self.offsets[1:]):
            out[lo:hi] = simplex.project(x[lo:hi])
        return out

    def contains(self, x, tol=1e-9):
        """Whether ``x`` is in the set: every block nonnegative and summing to one, up to
        ``tol``."""
        tol = check_real("tol", tol, low=0.0)
        x = _vector(x, dim=self.dim)
        sums = np.add.reduceat(x, self.offsets[:-1])
        return bool((x >= -tol).all() and (np.abs(sums - 1.0) <= tol).all())

    def __repr__(self):
        return f"ProductOfSimplices({list(self.sizes)})"


_MAX_VERTEX_COMBOS = 200_000


class Polytope:
    r"""A nonempty bounded polytope :math:`\{x \in \mathbb R^d : A x \le b\}`.

    Not a :class:`~jitopt.sets.ConvexSet`: it offers membership, its bounding box and its
    vertices, and no projection (that needs a quadratic program).

    Parameters
    ----------
    A : array_like, shape (m, d)
    b : array_like, shape (m,)

    Attributes
    ----------
    lower, upper : ndarray, shape (d,)
        The tightest bounding box, from :math:`2d` HiGHS LPs.

    Raises
    ------
    ValueError
        If the polytope is empty or unbounded (found by those LPs).
    """

    def __init__(self, A, b):
        from scipy.optimize import linprog

        A = np.array(A, dtype=float, ndmin=2)
        b = np.array(b, dtype=float).ravel()
        if A.ndim != 2 or A.shape[0] != b.shape[0] or A.shape[0] == 0:
            raise ValueError(f"A must have shape (m, d) and b shape (m,), got {A.shape} and "
                             f"{b.shape}")
        if not (np.isfinite(A).all() and np.isfinite(b).all()):
            raise ValueError("A and b must be finite")
        self.A, self.b, self.dim = A, b, A.shape[1]
        lo, hi = np.empty(self.dim), np.empty(self.dim)
        for j in range(self.dim):
            for sign, store in ((1.0, lo), (-1.0, hi)):
                e = np.zeros(self.dim)
                e[j] = sign
                r = linprog(e, A_ub=A, b_ub=b, bounds=(None, None), method="highs")
                if r.status == 2:
                    raise ValueError("the polytope {x : A x <= b} is empty")
                if r.status == 3:
                    raise ValueError("the polytope {x : A x <= b} is unbounded")
                if r.status != 0:
                    raise ValueError(f"could not check the polytope: {r.message}")
                store[j] = sign * r.fun
        self.lower, self.upper = lo, hi

    def contains(self, x, tol=1e-9):
        r"""Whether :math:`A x \le b + \mathrm{tol}\,(1 + |b|)`."""
        tol = check_real("tol", tol, low=0.0)
        x = _vector(x, dim=self.dim)
        return bool((self.A @ x <= self.b + tol * (1.0 + np.abs(self.b))).all())

    def vertices(self):
        """The vertices (rows), by brute force over the ``d``-subsets of the constraints."""
        A, b, d = self.A, self.b, self.dim
        m = A.shape[0]
        ncomb = 1
        for k in range(d):
            ncomb = ncomb * (m - k) // (k + 1)
        if ncomb > _MAX_VERTEX_COMBOS:
            raise ValueError(f"the polytope has too many constraint subsets ({ncomb}) for "
                             f"vertex enumeration; at most {_MAX_VERTEX_COMBOS} are supported")
        scale = 1.0 + np.abs(b).max()
        verts = []
        for rows in itertools.combinations(range(m), d):
            As = A[list(rows)]
            if abs(np.linalg.det(As)) < 1e-12 * max(1.0, np.abs(As).max()) ** d:
                continue
            v = np.linalg.solve(As, b[list(rows)])
            if (A @ v <= b + 1e-9 * scale).all():
                if not any(np.abs(v - w).max() <= 1e-9 * scale for w in verts):
                    verts.append(v)
        return np.array(verts)

    def __repr__(self):
        return f"Polytope(<{self.A.shape[0]} constraints in R^{self.dim}>)"
