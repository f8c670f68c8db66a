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

No input gives a silently wrong answer. The kernels compare norms without squaring at
extreme scales and solve for each multiplier relative to the largest entry (the threshold
:math:`\tau = z_{\max} - \delta`, solved for :math:`\delta`), so entries and radii anywhere in
``1e-300 .. 1e300`` project correctly. An empty intersection raises a ``ValueError`` (when it
is built if its dimension is fixed, else at the first ``project``, ``contains`` or
``kernel_args`` in a dimension where it is empty). :func:`project_kernel` checks its lengths
and indices in the kernel and raises ``ValueError`` instead of reading past an array.
"""

from ._kernels import project, project_kernel  # project: unchecked, for jitopt's kernels
from ._polytopes import Polytope, ProductOfSimplices
from ._sets import (Box, CappedSimplex, ConvexSet, GroupNormBall, Intersection, L1Ball, L2Ball,
                    LInfBall, NonNegative, Simplex)

__all__ = [
    "ConvexSet", "Box", "NonNegative", "LInfBall", "L1Ball", "L2Ball", "CappedSimplex",
    "Simplex", "GroupNormBall", "Intersection", "project_kernel", "ProductOfSimplices",
    "Polytope",
]
