r"""The convex sets of the canonical form: a box intersected with optional balls, or the
simplex; one compiled projection (:func:`~jitopt.sets.project_kernel`) for all of them."""

import numbers

import numpy as np

from .._interpreted import interpreted, kernel_for
from ..validation import as_array, check_array, check_real
from ._kernels import project

#: :meth:`ConvexSet.project` runs the projection uncompiled in at most this many dimensions
#: until it is compiled (``jitopt._interpreted.kernel_for``)
_SMALL = 1_000
_UNCOMPILED = interpreted(project)

__all__ = ["ConvexSet", "Box", "NonNegative", "LInfBall", "L1Ball", "L2Ball", "CappedSimplex",
           "Simplex", "GroupNormBall", "Intersection"]

_INF = np.inf


def _radius(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a positive real number, got {type(value).__name__}")
    value = float(value)
    if not (value > 0 and np.isfinite(value)):
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    return value


def _bound(name, value):
    if as_array(name, value).dtype.kind in "USVO" and any(
            isinstance(v, (str, bytes)) for v in np.asarray(value, dtype=object).ravel()):
        raise TypeError(f"{name} must be a real number or a 1-D array of them, got text")
    if np.iscomplexobj(value):
        raise TypeError(f"{name} must be a real number or a 1-D array of them, got complex "
                        f"values")
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
    a = as_array(name, x) if not isinstance(x, np.ndarray) else x
    if a.dtype.kind in "USV" or (a.dtype.kind == "O" and any(
            isinstance(v, (str, bytes)) for v in a.ravel())):
        raise TypeError(f"{name} must be an array of real numbers, got {a.dtype} entries")
    x = check_array(name, x, ndim=1)
    if dim is not None and x.shape[0] != dim:
        raise ValueError(f"{name} must have length {dim}, got {x.shape[0]}")
    return x


def _tol(tol):
    return check_real("tol", tol, low=0.0, high=_INF, high_open=True)


def _norm2(x):
    """The Euclidean norm, scaled by the largest entry (no overflow or underflow)."""
    m = np.abs(x).max(initial=0.0)
    return m * np.sqrt(np.sum((x / m) ** 2)) if 0.0 < m < _INF else m


def _group_norms(x, groups, ngroups):
    m = np.zeros(ngroups)
    np.maximum.at(m, groups, np.abs(x))
    safe = np.where(m > 0, m, 1.0)
    return m * np.sqrt(np.bincount(groups, weights=(x / safe[groups]) ** 2, minlength=ngroups))


def _ball_radius(name, value):
    """A radius of the canonical form: positive, ``inf`` meaning no ball."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a positive real number, got {type(value).__name__}")
    value = float(value)
    if not value > 0:  # NaN included
        raise ValueError(f"{name} must be positive (inf: no ball), got {value!r}")
    return value


class ConvexSet:
    r"""A closed convex set of :math:`\mathbb R^d` with an exact Euclidean projection.

    Use the subclasses (:class:`Box`, :class:`NonNegative`, :class:`L1Ball`, ...) and
    ``a & b`` (or :class:`Intersection`) to combine them.

    Parameters
    ----------
    lo, hi : float or array_like
        Box bounds (infinite: no bound).
    r1, r2 : float
        Radii of an :math:`\ell_1` and an :math:`\ell_2` ball (``inf``: none); with
        ``simplex``, ``r1`` is the sum.
    groups : array_like of int, optional
        Group of each coordinate, for a group-norm ball of radius ``rg``.
    rg : float
        Radius of the group-norm ball.
    gq : {0, 1, 2}
        The group norm: none, the sum of group norms, or their maximum.
    simplex : bool
        The set is the simplex :math:`\{x \ge 0, \sum_i x_i = r_1\}` (with the box).

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
    cone : bool
        A cone (:math:`cx` is in the set with :math:`x`, for every :math:`c > 0`): a box whose
        finite bounds are 0 (the whole space, the orthant, ...). Problems over a cone can be
        rescaled exactly.
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

    Examples
    --------
    The subclasses build the set; the projection is exact:

    >>> import numpy as np
    >>> from jitopt.sets import Box, L2Ball
    >>> s = Box(0.0, 2.0) & L2Ball(1.0)
    >>> s.project(np.array([3.0, -1.0])), s.support_preserving
    (array([1., 0.]), True)
    """

    def __init__(self, lo=-_INF, hi=_INF, r1=_INF, r2=_INF, groups=None, rg=_INF, gq=0,
                 simplex=False):
        self._lo = _bound("lower", lo)
        self._hi = _bound("upper", hi)
        self._r1, self._r2, self._rg = (_ball_radius(n, v) for n, v in
                                        (("r1", r1), ("r2", r2), ("rg", rg)))
        if gq not in (0, 1, 2) or isinstance(gq, bool):
            raise ValueError(f"gq must be 0, 1 or 2, got {gq!r}")
        if (gq == 0) != (groups is None):
            raise ValueError("groups must be given exactly when gq is 1 or 2")
        if groups is not None:
            g = np.asarray(groups)
            if g.ndim != 1 or g.size == 0 or not np.issubdtype(g.dtype, np.integer):
                raise TypeError("groups must be a non-empty 1-D array of integer labels")
            if g.min() < 0 or np.unique(g).size != g.max() + 1:
                raise ValueError("groups must use every label 0, ..., G-1 (G the number of "
                                 "groups)")
        self._groups = None if groups is None else np.asarray(groups, dtype=np.int64)
        self._gq = int(gq)
        self._simplex = bool(simplex)
        if self._simplex and (self._r1 == _INF or (self._lo != 0).any()
                              or (self._hi != _INF).any()):
            raise ValueError("simplex=True needs lo=0, hi=inf and a finite sum r1")
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
        self._check_nonempty(1 if self.dim is None else self.dim)

    def _check_nonempty(self, d):
        """Raise if the set is empty in dimension ``d``.

        The box point closest to the origin, :math:`c = \\operatorname{clip}(0, l, u)`, has the
        smallest :math:`|x_i|` of the box in every coordinate at once, so it has the smallest
        norm for every ball of the form: the set is nonempty exactly when :math:`c` is in the
        balls (up to the rounding of its norms). The simplex is empty only in dimension 0.
        """
        if self._simplex:
            if d == 0:
                raise ValueError("the set is empty: a simplex in dimension 0")
            return
        near0 = np.array(np.broadcast_to(np.clip(0.0, self._lo, self._hi), (d,)))
        slack = 1.0 + 4.0 * (d + 1) * np.finfo(float).eps
        with np.errstate(over="ignore"):
            norms = [("l1", np.abs(near0).sum(), self._r1), ("l2", _norm2(near0), self._r2)]
            if self._gq and d:
                gn = _group_norms(near0, self._groups, int(self._groups.max()) + 1)
                norms.append(("group", gn.sum() if self._gq == 1 else gn.max(), self._rg))
        for kind, value, radius in norms:
            if value > radius * slack:
                raise ValueError(f"the intersection is empty in dimension {d}: the box point "
                                 f"nearest 0 has {kind} norm {value:.6g} > radius {radius:.6g}")

    # -- flags ---------------------------------------------------------------------------

    @property
    def support_preserving(self):
        return (not self._simplex) and bool((self._lo <= 0).all() and (self._hi >= 0).all())

    @property
    def separable(self):
        return (self._r1 == _INF and self._r2 == _INF and self._gq == 0
                and not self._simplex)

    @property
    def cone(self):
        return self.separable and not any(
            (np.isfinite(b) & (b != 0)).any() for b in (self._lo, self._hi))

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
            raise ValueError(f"x must have length {self.dim} (the dimension of {self!r}), "
                             f"got length {d}")

    def kernel_args(self, d):
        """The arguments ``(lo, hi, fpar, ipar, groups)`` of :func:`project_kernel` in
        dimension ``d``: ``fpar`` is None for a box, ``groups`` None without a group ball
        (so a compiled caller holds only the projection code of its set family)."""
        self._check_dim(d)
        self._check_nonempty(d)
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
        kernel_for(project, _UNCOMPILED, d <= _SMALL)(*self.kernel_args(d),
                                                      np.arange(d, dtype=np.int64), x, out)
        return out

    def contains(self, x, tol=1e-9):
        """Whether ``x`` is in the set, up to ``tol`` times ``max(1, |bound|)`` for each
        bound and radius."""
        tol = _tol(tol)
        x = self._vector(x)
        lo, hi, fpar, ipar, groups = self.kernel_args(x.shape[0])

        def slack(bound):  # tol * max(1, |bound|), and no slack needed for infinite bounds
            return tol * np.maximum(1.0, np.where(np.isfinite(bound), np.abs(bound), 0.0))

        ok = bool(np.all(x >= lo - slack(lo)) and np.all(x <= hi + slack(hi)))
        with np.errstate(over="ignore"):  # a norm past the largest double exceeds any radius
            if self._simplex:
                return ok and abs(x.sum() - self._r1) <= slack(self._r1)
            ok &= np.abs(x).sum() <= self._r1 + slack(self._r1)
            ok &= _norm2(x) <= self._r2 + slack(self._r2)
            if self._gq:
                norms = _group_norms(x, groups, ipar[2])
                val = norms.sum() if self._gq == 1 else norms.max(initial=0.0)
                ok &= val <= self._rg + slack(self._rg)
        return bool(ok)

    def __and__(self, other):
        return Intersection(self, other)

    def __repr__(self):
        return f"{type(self).__name__}()"


class Box(ConvexSet):
    r"""The box :math:`\{x : l_i \le x_i \le u_i\}` (scalars or arrays; infinite bounds allowed).

    Support-preserving when :math:`l_i \le 0 \le u_i` for every :math:`i`.

    Parameters
    ----------
    lower, upper : float or array_like
        The bounds :math:`l` and :math:`u` (scalars apply to every coordinate).

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.sets import Box
    >>> Box(-1.0, 1.0).project(np.array([2.0, -3.0, 0.5]))
    array([ 1. , -1. ,  0.5])
    """

    def __init__(self, lower=-_INF, upper=_INF):
        super().__init__(lo=lower, hi=upper)

    def __repr__(self):
        return f"Box({self._lo.tolist()!r}, {self._hi.tolist()!r})"


class NonNegative(ConvexSet):
    r"""The nonnegative orthant :math:`\{x \ge 0\}`.

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.sets import NonNegative
    >>> NonNegative().project(np.array([2.0, -3.0]))
    array([2., 0.])
    """

    def __init__(self):
        super().__init__(lo=0.0)


class LInfBall(ConvexSet):
    r"""The ball :math:`\{\|x\|_\infty \le r\}` (the cube :math:`[-r, r]^d`).

    Parameters
    ----------
    radius : float
        The radius :math:`r > 0`.

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.sets import LInfBall
    >>> LInfBall(1.0).project(np.array([2.0, -0.5]))
    array([ 1. , -0.5])
    """

    def __init__(self, radius=1.0):
        r = _radius("radius", radius)
        super().__init__(lo=-r, hi=r)

    def __repr__(self):
        return f"LInfBall({float(self._hi)!r})"


class L1Ball(ConvexSet):
    r"""The ball :math:`\{\|x\|_1 \le r\}`.

    Parameters
    ----------
    radius : float
        The radius :math:`r > 0`.

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.sets import L1Ball
    >>> np.round(L1Ball(1.0).project(np.array([2.0, 0.5])), 12)
    array([1., 0.])
    >>> bool(L1Ball(1.0).contains(np.array([0.5, 0.5])))
    True
    """

    def __init__(self, radius=1.0):
        super().__init__(r1=_radius("radius", radius))

    def __repr__(self):
        return f"L1Ball({self._r1!r})"


class L2Ball(ConvexSet):
    r"""The ball :math:`\{\|x\|_2 \le r\}`.

    Parameters
    ----------
    radius : float
        The radius :math:`r > 0`.

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.sets import L2Ball
    >>> L2Ball(1.0).project(np.array([3.0, 4.0]))
    array([0.6, 0.8])
    """

    def __init__(self, radius=1.0):
        super().__init__(r2=_radius("radius", radius))

    def __repr__(self):
        return f"L2Ball({self._r2!r})"


class CappedSimplex(ConvexSet):
    r"""The capped simplex :math:`\{x \ge 0, \sum_i x_i \le r\}` (support-preserving).

    Parameters
    ----------
    radius : float
        The cap :math:`r > 0` on the sum.

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.sets import CappedSimplex
    >>> CappedSimplex(1.0).project(np.array([0.2, -0.1]))
    array([0.2, 0. ])
    """

    def __init__(self, radius=1.0):
        super().__init__(lo=0.0, r1=_radius("radius", radius))

    def __repr__(self):
        return f"CappedSimplex({self._r1!r})"


class Simplex(ConvexSet):
    r"""The simplex :math:`\{x \ge 0, \sum_i x_i = r\}`.

    Not support-preserving: the projection of a sparse vector is in general dense
    (:math:`\Pi(0.2, 0, 0) = (0.4\overline{6}, 0.2\overline{6}, 0.2\overline{6})` for
    :math:`r = 1`), so the two-step projection refuses it.

    Parameters
    ----------
    radius : float
        The sum :math:`r > 0`.

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.sets import Simplex
    >>> np.round(Simplex(1.0).project(np.array([0.2, 0.0, 0.0])), 6)
    array([0.466667, 0.266667, 0.266667])
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

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.sets import GroupNormBall
    >>> GroupNormBall([0, 0, 1], radius=1.0).project(np.array([3.0, 4.0, 0.0]))
    array([0.6, 0.8, 0. ])
    """

    def __init__(self, groups, radius=1.0, q=1):
        if isinstance(q, (bool, np.bool_)) or q not in (1, np.inf):
            raise ValueError(f"q must be 1 or inf, got {q!r}")
        super().__init__(groups=groups, rg=_radius("radius", radius), gq=1 if q == 1 else 2)

    def __repr__(self):
        q = "1" if self._gq == 1 else "inf"
        return f"GroupNormBall(<{self._groups.max() + 1} groups>, {self._rg!r}, q={q})"


class Intersection(ConvexSet):
    r"""The intersection of convex sets (boxes merge; balls of one kind keep the smallest).

    At most one :class:`GroupNormBall` (and no :class:`Simplex`) may take part.

    Parameters
    ----------
    *sets : ConvexSet
        The sets to intersect (``a & b`` is ``Intersection(a, b)``).

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.sets import Box, Intersection, L2Ball
    >>> Intersection(Box(0.0, 2.0), L2Ball(1.0)).project(np.array([3.0, -1.0]))
    array([1., 0.])
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

