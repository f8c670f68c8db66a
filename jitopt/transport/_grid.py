"""Building blocks of exact optimal transport on regular 2-D and 3-D grids: discrete
Legendre transform and c-transform, pushforward by the gradient of a convex potential, and
the back-and-forth method for W2 between two grid densities (with the Neumann inverse
Laplacian of :mod:`jitopt.transport._poisson`).

Grid convention: an array of shape ``(n0, n1)`` = (height, width) holds cell values on the
unit square; cell ``(i, j)`` has centre ``((i + 1/2) / n0, (j + 1/2) / n1)``, row coordinate
first. A 3-D array ``(n0, n1, n2)`` holds cell values on the unit cube, cell ``(i, j, k)``
centred at ``((i + 1/2) / n0, (j + 1/2) / n1, (k + 1/2) / n2)``. Densities are nonnegative
cell values of any total mass; internally they are scaled to mean one, so that the mean over
the cells of ``rho * g`` is the integral of ``g`` against the normalised measure.
"""

import numpy as np

from .._core.counts import OracleCounts
from .._core.result import Status
from .._core.run import Algorithm, State, sub_run
from .._core.stopping import Criterion, MaxIter
from ..validation import check_int, check_real
from ..problems import as_density, as_grid
from . import _nd
from ._poisson import _invlap_inplace

__all__ = [
    "grid_coordinates",
    "legendre_transform",
    "c_transform",
    "potential_gradient",
    "pushforward",
    "wasserstein2_grid",
]


def grid_coordinates(shape):
    """Cell-centre coordinates of a grid of ``shape = (n0, n1)`` on the unit square, or
    ``(n0, n1, n2)`` on the unit cube.

    Parameters
    ----------
    shape : tuple of int
        ``(n0, n1)``, the numbers of rows and columns (and ``n2``, of layers).

    Returns
    -------
    y, x[, z] : ndarray of shape ``shape``
        ``y[i, j] = (i + 1/2) / n0`` (row coordinate) and ``x[i, j] = (j + 1/2) / n1`` (and
        ``z[i, j, k] = (k + 1/2) / n2``).

    Examples
    --------
    >>> from jitopt.transport import grid_coordinates
    >>> y, x = grid_coordinates((2, 4))
    >>> y[:, 0], x[0]
    (array([0.25, 0.75]), array([0.125, 0.375, 0.625, 0.875]))
    """
    if isinstance(shape, (str, bytes)) or not hasattr(shape, "__len__"):
        raise TypeError(f"shape must be a pair (n0, n1) or a triple (n0, n1, n2) of positive "
                        f"integers, got {type(shape).__name__}")
    if len(shape) not in (2, 3):
        raise ValueError(f"shape must be a pair (n0, n1) or a triple (n0, n1, n2) of positive "
                         f"integers, got {shape!r}")
    sides = [check_int(f"shape[{a}]", n, low=1) for a, n in enumerate(shape)]
    return tuple(np.broadcast_to(((np.arange(n) + 0.5) / n).reshape(
        [-1 if b == a else 1 for b in range(len(sides))]), sides).copy()
        for a, n in enumerate(sides))


def _half_sq_norm(shape):
    """:math:`q = |x|^2 / 2` at the cell centres (one grid: the squares broadcast)."""
    total = 0.0
    for a, n in enumerate(shape):
        c = (np.arange(n) + 0.5) / n
        total = total + (c * c).reshape([-1 if b == a else 1 for b in range(len(shape))])
    total *= 0.5
    return total


# ------------------------------------------------------------------------ Legendre transform

def legendre_transform(f):
    r"""Exact discrete Legendre--Fenchel transform on the cell-centre grid.

    .. math:: f^*(s) = \max_{x \in G} \langle s, x\rangle - f(x), \qquad s \in G,

    where :math:`G` is the grid of cell centres of ``f`` (the same grid for :math:`x` and
    :math:`s`). The maximisation separates over the axes (two or three); each 1-D transform
    takes the lower convex hull of the line and sweeps the slopes, so the cost is
    :math:`O(m)` for :math:`m` cells, exact (no tolerance).

    Parameters
    ----------
    f : array_like of shape (height, width) or (height, width, depth)
        Finite function values at the cell centres.

    Returns
    -------
    ndarray of the shape of ``f``
        :math:`f^*` on the same grid. :math:`f^{**}` is the convex envelope of :math:`f`
        restricted to the grid, and :math:`f^{***} = f^*`.

    Examples
    --------
    The half squared norm is its own transform, exactly on the grid:

    >>> import numpy as np
    >>> from jitopt.transport import grid_coordinates, legendre_transform
    >>> y, x = grid_coordinates((16, 16))
    >>> q = 0.5 * (y ** 2 + x ** 2)
    >>> float(np.abs(legendre_transform(q) - q).max())
    0.0
    """
    f = as_grid("f", f, ndim=(2, 3))
    out = np.empty_like(f)
    _nd.legendre(f, out)
    return out


def c_transform(f):
    r"""Discrete c-transform for the cost :math:`c(x, y) = \tfrac12|x - y|^2` on the grid.

    .. math::

        f^c(y) &= \min_{x \in G} \tfrac12|x - y|^2 - f(x) \\
               &= q(y) - (q - f)^*(y), \qquad q = \tfrac12|\cdot|^2,

    computed exactly in :math:`O(m)` through :func:`legendre_transform`.

    Parameters
    ----------
    f : array_like of shape (height, width) or (height, width, depth)

    Returns
    -------
    ndarray of the shape of ``f``

    Examples
    --------
    The c-transform of the zero function is zero (the minimum of the cost is on the
    diagonal):

    >>> import numpy as np
    >>> from jitopt.transport import c_transform
    >>> float(np.abs(c_transform(np.zeros((8, 8)))).max())
    0.0
    """
    f = as_grid("f", f, ndim=(2, 3))
    q = _half_sq_norm(f.shape)
    out = np.empty_like(f)
    _nd.legendre(q - f, out)
    return q - out


# --------------------------------------------------------------------------- pushforward

def potential_gradient(f):
    """Gradient of a grid function at the cell centres (row component first).

    Centred differences inside, second-order one-sided differences on the boundary (exact
    for quadratic ``f``).

    Parameters
    ----------
    f : array_like of shape (height, width) or (height, width, depth), every side at least 3

    Returns
    -------
    ndarray of shape ``f.shape + (f.ndim,)``
        ``[..., 0]`` the derivative along rows (the y coordinate), ``[..., 1]`` along columns
        (``[..., 2]`` along the depth).

    Examples
    --------
    The gradient of the half squared norm is the identity map, exactly:

    >>> import numpy as np
    >>> from jitopt.transport import grid_coordinates, potential_gradient
    >>> y, x = grid_coordinates((8, 8))
    >>> g = potential_gradient(0.5 * (y ** 2 + x ** 2))
    >>> float(np.abs(g[..., 0] - y).max()), float(np.abs(g[..., 1] - x).max())
    (0.0, 0.0)
    """
    f = as_grid("f", f, min_size=3, ndim=(2, 3))
    g = np.empty((f.ndim,) + f.shape)
    _nd.gradients(f, g)
    return np.moveaxis(g, 0, -1).copy()


def pushforward(density, potential, max_subsamples=16):
    r"""Push a grid density forward by the gradient of a convex potential:
    :math:`(\nabla f)_\# \rho`.

    The density is constant on each cell. The map :math:`\nabla f` is taken at the cell
    centres by finite differences (second order on the boundary), interpolated bilinearly
    (extrapolated linearly in the outer half cells) at :math:`k_0 \times k_1` sub-samples of
    each cell, :math:`k` being the local stretch of the map in output cells, and each
    sub-sample's mass is deposited on the four nearest cell centres with bilinear weights
    (clamped to the grid). On a 3-D grid the same with trilinear interpolation,
    :math:`k_0 \times k_1 \times k_2` sub-samples (at most 8 per axis) and deposits on the
    eight nearest centres. Total mass is conserved exactly, the identity map returns the
    density unchanged and the first moment of a translated density moves by the translation
    (up to rounding) as long as the image stays inside the grid. Cost :math:`O(m)` plus the
    sub-samples of stretched cells.

    Parameters
    ----------
    density : array_like of shape (height, width) or (height, width, depth)
        Nonnegative cell values (any total mass; the output has the same mass).
    potential : array_like of the shape of ``density``
        The convex potential :math:`f` at the cell centres; :math:`\nabla f` should map into
        the unit square (points outside are clamped to the boundary cells).
    max_subsamples : int, default 16
        Cap on the sub-samples per cell and axis. A cap with which the potential would
        need more than :math:`\max(10^8, 256\,m)` sub-samples in all (:math:`m` cells;
        the default's worst case is :math:`256\,m`) is refused, rather than run for
        minutes.

    Returns
    -------
    ndarray of the shape of ``density``

    Examples
    --------
    The identity map (the gradient of the half squared norm) leaves a density unchanged:

    >>> import numpy as np
    >>> from jitopt.transport import grid_coordinates, pushforward
    >>> y, x = grid_coordinates((16, 16))
    >>> rho = np.exp(-((y - 0.5) ** 2 + (x - 0.5) ** 2) / 0.02)
    >>> rho /= rho.mean()
    >>> float(np.abs(pushforward(rho, 0.5 * (y ** 2 + x ** 2)) - rho).max())
    0.0
    """
    rho = as_grid("density", density, min_size=3, ndim=(2, 3))
    if np.any(rho < 0):
        raise ValueError("density must be nonnegative (found negative values)")
    f = as_grid("potential", potential, min_size=3, ndim=(2, 3))
    if f.shape != rho.shape:
        raise ValueError(f"potential must have the shape of density {rho.shape}, "
                         f"got {f.shape}")
    maxsub = check_int("max_subsamples", max_subsamples, low=1)
    if maxsub > 16 and rho.ndim == 2:  # (in 3-D at most 8 per axis)
        _check_subsamples(rho, f, maxsub)
    out = np.empty_like(rho)
    _nd.push(rho, f, out, maxsub, 1.0, False)
    return out


def _check_subsamples(rho, f, maxsub):
    """Refuse ``maxsub`` when :func:`pushforward` would deposit more than
    ``max(1e8, 256 m)`` sub-samples: the sum over the cells of positive mass of
    ``k0 k1``, ``k`` the stretch of the map in output cells rounded up, at most ``maxsub``
    (the rule of the kernel, in NumPy)."""
    n0, n1 = rho.shape
    p = potential_gradient(f) * np.array([n0, n1])  # the map in output cells
    with np.errstate(over="ignore", invalid="ignore"):
        stretch = []
        for axis, n in ((0, n0), (1, n1)):
            i = np.arange(n)
            lo, hi = np.maximum(i - 1, 0), np.minimum(i + 1, n - 1)
            d = np.abs(np.take(p, hi, axis) - np.take(p, lo, axis)).max(axis=-1)
            e = d / np.expand_dims(hi - lo, 1 - axis)
            stretch.append(np.where(e < maxsub, np.maximum(1.0, np.ceil(e - 1e-9)), maxsub))
        total = float(np.sum((stretch[0] * stretch[1])[rho > 0]))
    budget = max(1e8, 256.0 * rho.size)
    if total > budget:
        raise ValueError(f"max_subsamples = {maxsub} is too large for this potential: its "
                         f"gradient stretches cells so far that the pushforward would deposit "
                         f"{total:.3g} sub-samples (more than {budget:.3g}); lower "
                         f"max_subsamples")


# ------------------------------------------------------------------------ back and forth

def _armijo(sigma, gain, gs):
    """Step-size rule of the back-and-forth method: grow the step when the dual value grew
    by more than 3/4 of the first-order prediction, shrink it below 1/4."""
    if gain > 0.75 * sigma * gs:
        return sigma / 0.95
    if gain < 0.25 * sigma * gs:
        return sigma * 0.95
    return sigma


def _back_and_forth(a, b, phi, psi, sigma, numItermax, stopThr, duals=None, errs=None,
                    verbose=False):
    """The back-and-forth iterations of :func:`wasserstein2_grid` from a given conjugate
    pair: ``phi`` (paired with ``a``) and ``psi = phi*`` (paired with ``b``) are updated in
    place; ``a``, ``b`` are densities of mean one. Appends the dual value and the two
    residuals of every iteration to ``duals`` and ``errs`` when given. Returns
    ``(dual, sigma, it, converged)``: the final dual value and step, the iterations run and
    whether the relative change of the dual value reached ``stopThr``."""
    method = BackAndForth(phi, psi, sigma, duals, errs, verbose)
    s, status, _ = sub_run(_Pair(a, b), method, phi, DualSettled(stopThr) | MaxIter(numItermax))
    return s.fun, s.sigma, s.nit, status is Status.CONVERGED


class _Pair:
    """The two densities of a back-and-forth run (its counts stay zero: the function
    reports no oracle calls)."""

    def __init__(self, a, b):
        self.a, self.b, self.counts = a, b, OracleCounts()


class BackAndForth(Algorithm):
    """One iteration: an :math:`\\dot H^1` ascent step on ``phi`` (paired with ``a``), then
    on ``psi`` (paired with ``b``), each followed by the two Legendre transforms; the step
    size by :func:`_armijo`. ``state.fun`` is the dual value, ``state.before`` the one of
    the iteration before."""

    measure = "dual value change"
    inplace = True

    def __init__(self, phi, psi, sigma, duals, errs, verbose):
        self.phi, self.psi, self.sigma = phi, psi, sigma
        self.duals, self.errs, self.verbose = duals, errs, verbose

    def start(self, pair, x):
        self.a, self.b, self.rho = pair.a, pair.b, np.empty_like(pair.a)
        value = _nd.dual(self.phi, self.psi, self.a, self.b)
        return State(self.phi, value, np.nan, self.measure, sigma=self.sigma, before=value)

    def step(self, s, budget):
        phi, psi, a, b, rho = self.phi, self.psi, self.a, self.b, self.rho
        s.before, err, s.promised = s.fun, [], 0.0
        for (pot, conj, mine, other) in ((phi, psi, a, b), (psi, phi, b, a)):
            _nd.push(other, conj, rho, 64, 1.0, False)
            rho -= mine
            gs = _invlap_inplace(rho)  # rho is now the gradient
            rho *= s.sigma
            pot += rho
            _nd.legendre(pot, conj)
            _nd.legendre(conj, pot)
            value = _nd.dual(phi, psi, a, b)
            s.promised = max(s.promised, s.sigma * gs)
            s.sigma = _armijo(s.sigma, value - s.fun, gs)
            s.fun = value
            err.append(gs)
        s.nit += 1
        if self.duals is not None:
            self.duals.append(s.fun)
            self.errs.append(err)
        if not np.isfinite(s.fun):
            raise FloatingPointError("wasserstein2_grid: the dual value became non-finite")
        if self.verbose and (s.nit == 1 or s.nit % 10 == 0):
            print(f"{s.nit:5d}  dual {s.fun:.8e}  h1_err {err[0]:.3e} {err[1]:.3e}")


class DualSettled(Criterion):
    """``CONVERGED`` once an iteration changed the dual value by at most ``stopThr`` times
    its magnitude, unless its steps promised more than a tenth of that magnitude (to first
    order, the step size times the squared residual): a dual value that stands still
    although the steps promise that much is a step too large for the grid, which the
    Legendre transforms undo, not a maximum; the step size then goes on shrinking."""

    def __init__(self, stopThr):
        self.stopThr = stopThr

    def __call__(self, s, watch):
        if (s.nit and abs(s.fun - s.before) <= self.stopThr * abs(s.fun)
                and not (s.fun != 0.0 and s.promised > 0.1 * abs(s.fun))):
            return Status.CONVERGED, "The dual value settled."
        return None


def wasserstein2_grid(a, b, numItermax=200, stopThr=1e-8, sigma=None, verbose=False,
                      log=False):
    r"""Squared Wasserstein-2 distance between two densities on the same grid, by the
    back-and-forth method.

    With cost :math:`\tfrac12|x-y|^2` and convex potentials,

    .. math:: \tfrac12 W_2^2(a, b) = \max_{\varphi\ \text{convex}}
              \int (q - \varphi)\,da + \int (q - \varphi^*)\,db, \qquad q = \tfrac12|x|^2,

    and :math:`\nabla\varphi` is the optimal map from ``a`` to ``b``. The method alternates
    :math:`\dot H^1` gradient-ascent steps on :math:`\varphi` (paired with ``a``) and on
    :math:`\psi = \varphi^*` (paired with ``b``), each followed by the exact grid Legendre
    transforms that make the pair conjugate (Jacobs & Léger, 2020):

    .. math:: \varphi \leftarrow \varphi + \sigma(-\Delta)^{-1}\bigl((\nabla\psi)_\# b - a\bigr),
              \quad \psi \leftarrow \varphi^*,\ \varphi \leftarrow \psi^*,

    and symmetrically for :math:`\psi`. The step :math:`\sigma` starts at
    :math:`4/\max(a, b)` (densities of mean one) and follows an Armijo-type rule. Each
    iteration costs :math:`O(m \log m)`.

    Parameters
    ----------
    a, b : array_like of shape (height, width) or (height, width, depth)
        Nonnegative densities (any total mass; each is normalised to unit mass). Every side
        at least 3.
    numItermax : int, default 200
        Maximum number of back-and-forth iterations.
    stopThr : float, default 1e-8
        Stop when an iteration changes the dual value by less than ``stopThr`` times its
        magnitude. (The :math:`\dot H^{-1}` residuals, logged, level off at a
        discretisation floor instead of reaching zero.)
    sigma : float, optional
        Initial step size (default :math:`4/\max(a, b)` for densities of mean one). A step
        too large for the grid, whose updates the Legendre transforms undo, leaves the dual
        value standing although it promises more: the step then shrinks until the
        iterations move again (not taken for convergence). A step with which the iterations
        stall at a dual value no higher than at the start (too small to move the
        potentials, or too large to shrink back in ``numItermax`` iterations), or reach one
        above the largest possible value, is refused: a ``ValueError`` naming ``sigma``.
    verbose : bool, default False
        Print the dual value and residuals every 10 iterations.
    log : bool, default False
        Also return a dict of diagnostics.

    Returns
    -------
    w2 : float
        :math:`W_2^2(a, b)` on the unit square, estimated as twice the final dual value
        (a lower bound up to discretisation), and 0 if that is negative (possible when
        ``numItermax`` runs out early: ``log["converged"]`` says whether the change of the
        dual value reached ``stopThr``).
    log : dict
        Only if ``log=True``: ``dual`` (dual value per iteration), ``h1_err`` (residuals of
        both half steps per iteration), ``phi``, ``psi`` (the conjugate potentials),
        ``map`` (:math:`\nabla\varphi` at the cells, shape ``a.shape + (a.ndim,)``, row
        coordinate first: the transport map from ``a`` to ``b``), ``inverse_map``
        (:math:`\nabla\psi`, from ``b`` to ``a``), ``niter``, ``converged``, ``sigma``.

    References
    ----------
    M. Jacobs and F. Léger, "A fast approach to optimal transport: the back-and-forth
    method", Numerische Mathematik 146 (2020), 513--544.

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.transport import grid_coordinates, wasserstein2_grid
    >>> y, x = grid_coordinates((16, 16))
    >>> rho = np.exp(-((y - 0.5) ** 2 + (x - 0.5) ** 2) / 0.02)
    >>> float(wasserstein2_grid(rho, rho))
    0.0
    """
    a = as_density("a", a)
    b = as_density("b", b)
    if a.shape != b.shape:
        raise ValueError(f"a and b must have the same shape, got {a.shape} and {b.shape}")
    numItermax = check_int("numItermax", numItermax, low=1)
    stopThr = check_real("stopThr", stopThr, low=0.0)
    if sigma is None:
        sigma = 4.0 / max(a.max(), b.max())
    sigma = check_real("sigma", sigma, low=0.0, low_open=True)
    q = _half_sq_norm(a.shape)
    phi = q.copy()
    psi = q.copy()
    duals, errs = [], []
    sigma0 = sigma
    start = _nd.dual(phi, psi, a, b)
    old, sigma, it, converged = _back_and_forth(a, b, phi, psi, sigma, numItermax, stopThr,
                                                duals, errs, verbose)
    # W2^2 is at most the largest squared distance between two cell centres
    top = sum(((n - 1) / n) ** 2 for n in a.shape)
    stalled = converged and not old > start and np.max(errs) > 0.0  # (a == b: no residual)
    if stalled or not 2.0 * old <= top * (1 + 1e-9):
        why = (f"stalled after {it} iterations at a dual value {old:.3e} no higher than at "
               f"the start ({start:.3e})" if stalled else
               f"diverged: W2^2 would be {2.0 * old:.3e}, above the largest squared distance "
               f"{top:.3g} between two cells")
        raise ValueError(f"sigma = {sigma0:g} made no progress: the iterations {why} (the "
                         f"default sigma is {4.0 / max(a.max(), b.max()):g})")
    w2 = 2.0 * max(old, 0.0)  # W2² >= 0: an early iterate's dual value may be below it
    if not log:
        return w2
    return w2, {
        "dual": np.array(duals),
        "h1_err": np.array(errs),
        "phi": phi,
        "psi": psi,
        "map": potential_gradient(phi),
        "inverse_map": potential_gradient(psi),
        "niter": it,
        "converged": converged,
        "sigma": sigma,
    }
