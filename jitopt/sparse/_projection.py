r"""The two-step projection :math:`\Pi_\Gamma(H_k(\cdot))` onto
:math:`\{\|x\|_0 \le k\} \cap \Gamma` for a support-preserving convex set :math:`\Gamma`:
the constraint and selection checks, and the operator the solver applies."""

import numpy as np

from .._interpreted import kernel_for
from ..validation import check_array, check_choice, check_int
from ..sets import Box, ConvexSet, NonNegative, project
from ._kernels import SELECTIONS, iht_step
from ._loops import INTERPRETED

#: the step runs uncompiled until compiled on at most this many coordinates (about 20 ms
#: a step uncompiled)
_SMALL = 50_000

__all__ = ["two_step_projection", "hard_threshold", "check_constraint", "resolve_selection",
           "check_always_select", "TwoStep"]

_UNCONSTRAINED = Box()


def check_constraint(constraint, p):
    """The set of ``constraint`` (None, "nonnegative" or a support-preserving
    :class:`~jitopt.sets.ConvexSet` of dimension ``p`` or of any dimension)."""
    if constraint is None:
        return _UNCONSTRAINED
    if isinstance(constraint, str):
        if constraint != "nonnegative":
            raise ValueError(f"constraint must be None, 'nonnegative' or a "
                             f"jitopt.sets.ConvexSet, got {constraint!r}")
        constraint = NonNegative()
    if not isinstance(constraint, ConvexSet):
        raise TypeError(f"constraint must be None, 'nonnegative' or a jitopt.sets.ConvexSet, "
                        f"got {type(constraint).__name__}")
    if not constraint.support_preserving:
        raise ValueError(
            f"constraint {constraint!r} is not support-preserving: projecting a k-sparse "
            f"vector onto it can create nonzeros (it does not contain every vector obtained "
            f"by zeroing coordinates of its points, e.g. a simplex with sum = r or a box "
            f"that excludes 0), so the two-step projection would leave the sparse set")
    if constraint.dim is not None and constraint.dim != p:
        raise ValueError(f"constraint has dimension {constraint.dim}, the problem has {p} "
                         f"sparse coordinates")
    return constraint


def check_always_select(always_select, p, k=None):
    """The sorted distinct indices of ``always_select`` (None: none) as an int64 array,
    each in ``[0, p)``, at most ``k`` of them."""
    if always_select is None:
        return np.empty(0, dtype=np.int64)
    try:
        idx = [check_int("always_select", i, low=0, high=p - 1) for i in always_select]
    except TypeError:
        raise TypeError(f"always_select must be None or a sequence of feature indices in "
                        f"[0, {p - 1}]") from None
    if len(set(idx)) != len(idx):
        raise ValueError(f"always_select must not repeat an index, got {list(idx)}")
    if k is not None and len(idx) > k:
        raise ValueError(f"always_select has {len(idx)} indices, more than k = {k}")
    return np.array(sorted(idx), dtype=np.int64)


def resolve_selection(selection, constraint):
    """The selection rule to use for ``constraint`` (``"auto"`` picks an exact one).

    ``"auto"``: ``"magnitude"`` for sign- and permutation-symmetric sets (the plain two-step
    projection is then exact), ``"gain"`` for boxes, ``"signed"`` for permutation-invariant
    subsets of the orthant, else ``"magnitude"``.
    """
    check_choice("selection", selection, ("auto",) + tuple(SELECTIONS))
    c = _UNCONSTRAINED if constraint is None else constraint
    if selection == "auto":
        if c.symmetric:
            return "magnitude"
        if c.separable:
            return "gain"
        if c.nonnegative and c.permutation_invariant:
            return "signed"
        return "magnitude"
    if selection == "gain" and not c.separable:
        raise ValueError(f"selection='gain' needs a separable constraint (a box), got {c!r}")
    if selection == "signed" and not c.nonnegative:
        raise ValueError(f"selection='signed' needs a constraint inside the nonnegative "
                         f"orthant, got {c!r}")
    return selection


class TwoStep:
    """The two-step projection at sparsity ``k`` on the first ``p`` coordinates of
    :math:`\\mathbb R^{p + n_\\text{free}}` (the last ``n_free`` are left as they are).

    Parameters
    ----------
    constraint : jitopt.sets.ConvexSet
        A support-preserving set (see :func:`check_constraint`).
    p, k : int
        Sparse coordinates and sparsity.
    selection : {"magnitude", "gain", "signed"}
        The rule of the first step (see :func:`two_step_projection`).
    forced : ndarray of int64, optional
        Coordinates always selected in the first step (from :func:`check_always_select`).
    """

    def __init__(self, constraint, p, k, selection, forced=None):
        self.args = constraint.kernel_args(p)
        self.lower, self.upper = self.args[0], self.args[1]
        self.p, self.k, self.rule = p, k, SELECTIONS[selection]
        self.forced = np.empty(0, dtype=np.int64) if forced is None else forced

    def __call__(self, z, k=None):
        """:math:`\\Pi_\\Gamma(H_k(z))` on the sparse coordinates (a new array)."""
        z = np.ascontiguousarray(z, dtype=float)
        out = np.empty_like(z)
        # the step from z with a zero gradient: one compiled kernel for both
        self._step_kernel()(*self.args, self.forced, z, np.zeros_like(z), 0.0,
                            self.k if k is None else k, self.rule, self.p, out)
        return out

    def step(self, w, g, eta):
        """``(w+, <g, w+ - w>, ||w+ - w||^2, ||w||, same support)`` for the step
        ``w+ = 2SP(w - eta g)`` (a plain gradient step on the free coordinates)."""
        w = np.ascontiguousarray(w, dtype=float)
        out = np.empty_like(w)
        gdw, dw2, wnorm, same = self._step_kernel()(
            *self.args, self.forced, w, np.ascontiguousarray(g, float), eta, self.k, self.rule,
            self.p, out)
        return out, gdw, dw2, wnorm, same

    def _step_kernel(self):
        """:func:`iht_step`, uncompiled for at most ``_SMALL`` coordinates
        (``jitopt._interpreted.kernel_for``)."""
        return kernel_for(iht_step, INTERPRETED, self.p <= _SMALL)

    def restricted(self, z, support):
        """Projection onto :math:`\\{x \\in \\Gamma : \\operatorname{supp} x \\subseteq S\\}`
        for ``S = support`` (the free coordinates untouched)."""
        out = np.zeros_like(z)
        proj = np.empty(support.shape[0])
        project(*self.args, support, np.ascontiguousarray(z[support]), proj)
        out[support] = proj
        out[self.p:] = z[self.p:]
        return out


def two_step_projection(z, k, constraint=None, selection="magnitude"):
    r"""The two-step projection :math:`\Pi_\Gamma(H_k(z))` onto :math:`\{\|x\|_0\le k\}\cap\Gamma`.

    Step 1 keeps ``k`` coordinates chosen by ``selection`` and zeroes the others; step 2
    projects the kept entries onto the support-preserving set :math:`\Gamma`. Ties are broken
    towards the smaller index.

    Parameters
    ----------
    z : array_like, shape (d,)
    k : int
        Sparsity, ``1 <= k <= d``.
    constraint : None, "nonnegative" or jitopt.sets.ConvexSet
        A support-preserving set :math:`\Gamma` (none by default).
    selection : {"magnitude", "gain", "signed", "auto"}
        ``"magnitude"``: the :math:`k` largest :math:`|z_i|` (the paper's operator, exact for
        sign- and permutation-symmetric :math:`\Gamma`); ``"gain"``: the :math:`k` largest
        :math:`z_i^2 - (z_i - c_i)^2` with :math:`c = \Pi_\Gamma(z)`, the exact projection for
        a box; ``"signed"``: the :math:`k` largest :math:`\max(z_i, 0)`, exact for
        permutation-invariant subsets of the orthant (orthant, capped simplex, orthant
        :math:`\cap` ball); ``"auto"``: an exact rule when there is one.

    Returns
    -------
    ndarray, shape (d,)

    Examples
    --------
    >>> from jitopt.sparse import two_step_projection
    >>> two_step_projection([3.0, -2.0, 0.5, 1.0], 2, constraint="nonnegative",
    ...                     selection="signed").tolist()
    [3.0, 0.0, 0.0, 1.0]
    """
    z = check_array("z", z, ndim=1)
    k = check_int("k", k, low=1, high=z.shape[0])
    c = check_constraint(constraint, z.shape[0])
    return TwoStep(c, z.shape[0], k, resolve_selection(selection, c))(z)


def hard_threshold(z, k):
    r""":math:`H_k(z)`: keep the ``k`` entries of largest magnitude (ties to the smaller index).

    Parameters
    ----------
    z : array_like, shape (d,)
        The vector.
    k : int
        The number of entries kept, ``0 <= k <= d``.

    Returns
    -------
    ndarray, shape (d,)
        A new array: ``z`` on the ``k`` kept entries, 0 elsewhere.

    Examples
    --------
    >>> from jitopt.sparse import hard_threshold
    >>> hard_threshold([1.0, -2.0, 2.0, 0.5], 2).tolist()
    [0.0, -2.0, 2.0, 0.0]
    """
    return two_step_projection(z, k)
