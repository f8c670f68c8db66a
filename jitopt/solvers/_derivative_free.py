"""What the derivative-free methods (``nelder_mead``, ``particle_swarm``) share: the
manifold operations they use, with fallbacks where a manifold has no exponential map, the
check of a starting population and the budget of cost evaluations."""

import numpy as np

from .._core.result import Status
from .._core.stopping import Criterion, FTarget, MaxIter, MaxTime
from ..validation import check_int, check_real, check_rng

__all__ = ["inverse_retraction", "distance", "centroid", "start_points", "MaxEvaluations",
           "checked_limits", "Population"]

#: at most this many Karcher steps per centroid (a small simplex needs one to three)
_KARCHER_STEPS = 10


def inverse_retraction(M, x, y):
    """A tangent vector at ``x`` pointing to ``y``: :math:`\\log_x(y)` where the manifold
    has a logarithm, else the projection of :math:`y - x` onto the tangent space at ``x``."""
    if hasattr(M, "log"):
        return M.log(x, y)
    return M.projection(x, y - x)


class Population:
    """``k`` points of ``M`` stacked in one array of shape ``(k, *M.shape)``, with the
    manifold operations of all of them at once: on the manifold of ``k`` copies where
    ``M`` has one (``M.copies(k)``, batched kernels), else point by point."""

    def __init__(self, M, k):
        self.M, self.copies = M, M.copies(k)
        self.scalars = (k,) + (1,) * len(M.shape)  # the shape of one number per point

    def each(self, f, *arrays):
        """``f(manifold, *arrays)`` for every point: once on the manifold of copies, else
        row by row, stacked."""
        if self.copies is not None:
            return f(self.copies, *arrays)
        return np.stack([f(self.M, *rows) for rows in zip(*arrays)])

    def norm(self, x, u):
        """The norm of the stacked vectors in the product metric,
        :math:`(\\sum_i \\|u_i\\|_{x_i}^2)^{1/2}`."""
        if self.copies is not None:
            return float(self.copies.norm(x, u))
        return float(np.sqrt(sum(self.M.norm(a, b) ** 2 for a, b in zip(x, u))))


def distance(M, x, y):
    """The manifold's distance where it has one, else the ambient (chordal) distance
    :math:`\\|y - x\\|_F`."""
    if hasattr(M, "dist"):
        return float(M.dist(x, y))
    return float(np.linalg.norm(y - x))


def centroid(M, points, start):
    """A mean of ``points``: the Karcher mean by gradient steps from ``start`` where the
    manifold has ``exp`` and ``log``; else the closest point to the ambient mean where it has
    ``closest_point``; else the retraction at ``start`` of the mean of the projected
    differences."""
    k = len(points)
    if hasattr(M, "exp") and hasattr(M, "log"):
        c = start
        for _ in range(_KARCHER_STEPS):
            logs = [M.log(c, p) for p in points]
            v = sum(logs) / k
            c = M.exp(c, v)
            # the mean logarithm is the Riemannian gradient of the mean squared distance
            if M.norm(c, v) <= 1e-8 * max(M.norm(c, u) for u in logs):
                break
        return c
    if hasattr(M, "closest_point"):
        return M.closest_point(sum(points) / k)
    return M.retraction(start, sum(M.projection(start, p - start) for p in points) / k)


def start_points(M, points, name, low, high=None):
    """The user's starting population ``points`` (a sequence of at least ``low`` and at
    most ``high`` points of ``M``), each checked and copied, no two equal."""
    if isinstance(points, np.ndarray) and points.shape[1:] == M.shape:
        points = list(points)
    if not isinstance(points, (list, tuple)):
        raise TypeError(f"{name} must be a list of points of {M!r}, got "
                        f"{type(points).__name__}")
    if len(points) < low or (high is not None and len(points) > high):
        size = f"{low}" if high == low else f"at least {low}"
        raise ValueError(f"{name} must hold {size} points of {M!r} (dim = {M.dim}), got "
                         f"{len(points)}")
    out = [M.validate_point(p, f"{name}[{i}]") for i, p in enumerate(points)]
    for i in range(len(out)):
        for j in range(i):
            if np.array_equal(out[i], out[j]):
                raise ValueError(f"{name}[{i}] equals {name}[{j}]: the points must differ")
    return out


def checked_limits(name, M, tol, f_target, max_fev, maxiter, max_time, rng, fev_floor,
                   iter_floor):
    """The checked ``tol`` and ``rng`` of a derivative-free method on ``M``, and its
    limits as criteria (``FTarget | MaxIter | MaxTime | MaxEvaluations``); ``None`` for
    ``max_fev`` or ``maxiter`` is ``max(floor, 2 dim)`` or ``max(floor, 4 dim)``."""
    if M.dim < 1:
        raise ValueError(f"{name} needs a manifold of dimension at least 1, got {M!r}")
    tol = check_real("tol", tol, low=0.0)
    if f_target is not None:
        f_target = check_real("f_target", f_target)
    max_fev = max(fev_floor, 2 * M.dim) if max_fev is None else \
        check_int("max_fev", max_fev, low=1)
    maxiter = max(iter_floor, 4 * M.dim) if maxiter is None else \
        check_int("maxiter", maxiter, low=0)
    max_time = check_real("max_time", max_time, low=0.0)
    limits = FTarget(f_target) | MaxIter(maxiter) | MaxTime(max_time) | MaxEvaluations(max_fev)
    return tol, check_rng(rng), limits, maxiter, max_fev


class MaxEvaluations(Criterion):
    """``MAXITER`` once the run has made ``max_fev`` cost evaluations (tested between
    iterations: an iteration started below the budget finishes)."""

    def __init__(self, max_fev):
        self.max_fev = max_fev

    def __call__(self, s, watch):
        if watch.counts()[0] >= self.max_fev:
            return Status.MAXITER, (f"Maximum number of cost evaluations (max_fev = "
                                    f"{self.max_fev}) reached; {s.measure} "
                                    f"{s.stationarity:.3e}.")
        return None
