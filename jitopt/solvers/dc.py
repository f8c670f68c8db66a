r"""Online adaptive-sampling proximal DCA for stochastic nonsmooth difference-of-convex problems
whose data distribution drifts over time.

The problem is

.. math::

    \min_{x \in C}\; f(x) = g(x) - h(x), \qquad
    g(x) = \mathbb E_{\xi \sim P_\xi}[G(x, \xi)], \quad
    h(x) = \mathbb E_{\zeta \sim P_\zeta}[H(x, \zeta)],

with :math:`G(\cdot, \xi)` and :math:`H(\cdot, \zeta)` convex and possibly nonsmooth, and the
samples of iteration :math:`t` drawn from laws :math:`P_{\xi,t}, P_{\zeta,t}` that converge to
:math:`P_\xi, P_\zeta` with summable drift. Iteration :math:`t` draws fresh samples,
takes any :math:`y_t \in \partial \bar h_t(x_t)` and solves

.. math::

    x_{t+1} = \operatorname*{argmin}_{x \in C}\; \bar g_t(x) - y_t^\top x
    + \frac{\mu}{2}\|x - x_t\|^2

(Ye, Cui and Wang, *An online adaptive sampling algorithm for stochastic difference-of-convex
optimization with time-varying distributions*, ICML 2025).

Building blocks: :class:`StreamProblem` (samplers with sample counters), :class:`DCProblem`
(loss, DC penalty, constraint set, optional stochastic concave part or user convex part),
the penalties :class:`CappedL1`, :class:`SCAD`, :class:`MCP`, :class:`L1MinusL2`, and the
solver :func:`online_dca`.
"""

import math
import warnings

import numpy as np

from .._core.problem import OracleCounts
from .._core.result import Monitor, Status
from .._validation import check_array, check_choice, check_int, check_real, check_rng
from ..sets import Box, ConvexSet
from . import _dc_kernels as _k

__all__ = ["StreamProblem", "DCProblem", "CappedL1", "SCAD", "MCP", "L1MinusL2",
           "online_dca"]

#: data batches with more entries than this enter the cvxpy model as constants
_CVX_PARAM_LIMIT = 50_000

LOSSES = {"lad": _k.LAD, "squared": _k.SQUARED, "huber": _k.HUBER, "hinge": _k.HINGE}


# --------------------------------------------------------------------------------------
# sample streams
# --------------------------------------------------------------------------------------

def _as_batch(name, data, size):
    """Check a sampler's output: one array or a tuple of arrays, each with ``size`` rows."""
    arrays = data if isinstance(data, tuple) else (data,)
    out = []
    for a in arrays:
        a = np.ascontiguousarray(a, dtype=float)
        if a.ndim == 0 or a.shape[0] != size:
            raise ValueError(f"{name} must return arrays with {size} rows (the requested "
                             f"size), got shape {a.shape}")
        out.append(a)
    return tuple(out)


def _batch_rows(batch, n):
    return tuple(a[:n] for a in batch)


class StreamProblem:
    r"""A stream of samples whose law may change with the iteration :math:`t`.

    Parameters
    ----------
    sample : callable
        ``sample(t, size, rng)`` returns the ``size`` samples of the convex part drawn at
        iteration ``t`` (``t = 1, 2, ...``) with the :class:`numpy.random.Generator` ``rng``:
        one array or a tuple of arrays, each with ``size`` rows. For the built-in losses of
        :class:`DCProblem` it returns ``(A, b)``, ``A`` of shape ``(size, d)`` and ``b`` of
        shape ``(size,)``.
    sample_h : callable, optional
        The same for the concave part :math:`H(x, \zeta)`, an independent stream. Leave it
        out when :math:`h` is deterministic.
    shared : bool
        Use one stream for both parts (the paper's Remark 2): iteration ``t`` draws
        :math:`\max(N_g, N_h)` samples from ``sample`` and gives the first :math:`N_g` to
        :math:`g` and the first :math:`N_h` to :math:`h`.

    Attributes
    ----------
    samples_g, samples_h : int
        Samples drawn so far from each stream (a shared stream counts into ``samples_g``).
    """

    def __init__(self, sample, sample_h=None, shared=False):
        if not callable(sample):
            raise TypeError(f"sample must be callable, got {type(sample).__name__}")
        if sample_h is not None and not callable(sample_h):
            raise TypeError(f"sample_h must be callable or None, got {type(sample_h).__name__}")
        if shared and sample_h is not None:
            raise ValueError("a shared stream takes no separate sample_h")
        self.sample = sample
        self.sample_h = sample_h
        self.shared = bool(shared)
        self.reset()

    @property
    def has_h(self):
        """Whether the concave part has samples (its own stream or the shared one)."""
        return self.shared or self.sample_h is not None

    def reset(self):
        self.samples_g = 0
        self.samples_h = 0

    def draw(self, t, size, rng, part="g"):
        """Draw ``size`` samples of ``part`` (``"g"`` or ``"h"``) at iteration ``t``, counted."""
        fn = self.sample_h if part == "h" and self.sample_h is not None else self.sample
        name = "sample_h" if fn is self.sample_h else "sample"
        batch = _as_batch(name, fn(t, size, rng), size)
        if part == "h" and self.sample_h is not None:
            self.samples_h += size
        else:
            self.samples_g += size
        return batch

    def draw_pair(self, t, n_g, n_h, rng):
        """Fresh batches for ``g`` and ``h`` (``None`` when ``n_h == 0``)."""
        if self.shared:
            batch = self.draw(t, max(n_g, n_h), rng)
            return _batch_rows(batch, n_g), (_batch_rows(batch, n_h) if n_h else None)
        bg = self.draw(t, n_g, rng)
        bh = self.draw(t, n_h, rng, part="h") if n_h and self.sample_h is not None else None
        return bg, bh


# --------------------------------------------------------------------------------------
# DC penalties: p(x) = sum_j phi(x_j) = lam_g ||x||_1 - h_pen(x)
# --------------------------------------------------------------------------------------

class _Penalty:
    """A separable DC penalty written as ``g_weight * ||x||_1 - h(x)`` with ``h`` convex.

    Subclasses set ``g_weight`` and define ``h_value(x)`` and ``h_subgradient(x)``.
    """

    g_weight = 0.0

    def value(self, x):
        return self.g_weight * np.abs(x).sum() - self.h_value(x)


class CappedL1(_Penalty):
    r"""Capped :math:`\ell_1`: :math:`\lambda\sum_j \min(1, \alpha|x_j|)`.

    DC split: :math:`\lambda\alpha\|x\|_1 - \lambda\sum_j \max(0, \alpha|x_j| - 1)`; the
    subgradient of the concave part takes 0 at the kinks :math:`|x_j| = 1/\alpha`.
    """

    def __init__(self, lam, alpha=1.0):
        self.lam = check_real("lam", lam, low=0.0)
        self.alpha = check_real("alpha", alpha, low=0.0, low_open=True)
        self.g_weight = self.lam * self.alpha

    def h_value(self, x):
        return self.lam * np.maximum(self.alpha * np.abs(x) - 1.0, 0.0).sum()

    def h_subgradient(self, x):
        return np.where(self.alpha * np.abs(x) > 1.0, self.g_weight * np.sign(x), 0.0)


class SCAD(_Penalty):
    r"""SCAD of Fan and Li with parameters :math:`\lambda` and :math:`a > 2`.

    DC split: :math:`\lambda\|x\|_1 - h` with the smooth convex
    :math:`h(t) = 0` for :math:`|t| \le \lambda`,
    :math:`(|t| - \lambda)^2 / (2(a-1))` for :math:`\lambda < |t| \le a\lambda` and
    :math:`\lambda|t| - (a+1)\lambda^2/2` beyond.
    """

    def __init__(self, lam, a=3.7):
        self.lam = check_real("lam", lam, low=0.0)
        self.a = check_real("a", a, low=2.0, low_open=True)
        self.g_weight = self.lam

    def h_value(self, x):
        t, lam, a = np.abs(x), self.lam, self.a
        mid = (t - lam) ** 2 / (2 * (a - 1))
        out = np.where(t <= a * lam, mid, lam * t - 0.5 * (a + 1) * lam ** 2)
        return np.where(t <= lam, 0.0, out).sum()

    def h_subgradient(self, x):
        t, lam, a = np.abs(x), self.lam, self.a
        return np.sign(x) * np.clip((t - lam) / (a - 1), 0.0, lam)


class MCP(_Penalty):
    r"""Minimax concave penalty with parameters :math:`\lambda` and :math:`\gamma > 0`.

    DC split: :math:`\lambda\|x\|_1 - h` with the smooth convex
    :math:`h(t) = t^2/(2\gamma)` for :math:`|t| \le \gamma\lambda` and
    :math:`\lambda|t| - \gamma\lambda^2/2` beyond.
    """

    def __init__(self, lam, gamma=3.0):
        self.lam = check_real("lam", lam, low=0.0)
        self.gamma = check_real("gamma", gamma, low=0.0, low_open=True)
        self.g_weight = self.lam

    def h_value(self, x):
        t, lam, g = np.abs(x), self.lam, self.gamma
        return np.where(t <= g * lam, t * t / (2 * g), lam * t - 0.5 * g * lam ** 2).sum()

    def h_subgradient(self, x):
        return np.clip(x / self.gamma, -self.lam, self.lam)


class L1MinusL2(_Penalty):
    r""":math:`\lambda(\|x\|_1 - \|x\|_2)`, with :math:`h = \lambda\|x\|_2` (subgradient 0 at 0).
    """

    def __init__(self, lam):
        self.lam = check_real("lam", lam, low=0.0)
        self.g_weight = self.lam

    def h_value(self, x):
        return self.lam * np.linalg.norm(x)

    def h_subgradient(self, x):
        nrm = np.linalg.norm(x)
        return self.lam * x / nrm if nrm > 0 else np.zeros_like(x)


# --------------------------------------------------------------------------------------
# the DC problem
# --------------------------------------------------------------------------------------

class DCProblem:
    r"""A stochastic DC problem :math:`\min_{x\in C} g(x) - h(x)` fed by a :class:`StreamProblem`.

    The convex part is :math:`G(x, (a, b)) = \ell(a^\top x; b) + \lambda_g\|x\|_1` (a built-in
    loss plus the convex part of the penalty) or a user convex function; the concave part is
    the concave part of the penalty plus an optional stochastic :math:`H(x, \zeta)`.

    Parameters
    ----------
    stream : StreamProblem
        Where the samples come from.
    dim : int
        The dimension :math:`d` of :math:`x`.
    loss : {"lad", "squared", "huber", "hinge"} or None
        :math:`|s - b|`, :math:`(s-b)^2/2`, the Huber function of :math:`s - b` with
        threshold ``huber_delta``, or :math:`\max(0, 1 - bs)` with :math:`b \in \{-1, 1\}`;
        the samples of ``g`` are then ``(A, b)``. These losses have the compiled subproblem
        solver. ``None`` when ``convex`` is given.
    penalty : CappedL1, SCAD, MCP, L1MinusL2 or None
        A separable DC penalty.
    constraint : jitopt.sets.ConvexSet, optional
        The closed convex set :math:`C` (default :math:`\mathbb R^d`).
    convex : callable, optional
        A user convex part for the cvxpy path: ``convex(x, *params)`` returns a cvxpy
        expression of the sample mean :math:`\bar g(x)` from the variable ``x`` and
        ``cvxpy.Parameter`` objects shaped like the arrays of a batch (one per array); it must
        follow cvxpy's DPP rules. The cvxpy problem is built once per batch shape (data sets
        of more than 50 000 entries enter as constants, built once per data set).
    concave : callable, optional
        ``concave(x, batch)`` returns ``(value, subgradient)`` of the sample mean
        :math:`\bar h(x)` of a user concave part (``batch`` is ``None`` when the stream has no
        samples for ``h``). Any subgradient is allowed.
    xopt, fopt : optional
        The known limit optimum and its value.
    limit_fun : callable, optional
        ``limit_fun(x)``: the objective of the limit problem (for monitoring and benchmarks).
    """

    def __init__(self, stream, dim, *, loss="lad", huber_delta=1.0, penalty=None,
                 constraint=None, convex=None, concave=None, xopt=None, fopt=None,
                 limit_fun=None, name="DC problem"):
        if not isinstance(stream, StreamProblem):
            raise TypeError(f"stream must be a StreamProblem, got {type(stream).__name__}")
        self.stream = stream
        self.dim = check_int("dim", dim, low=1)
        if convex is None:
            check_choice("loss", loss, tuple(LOSSES))
        elif not callable(convex):
            raise TypeError(f"convex must be callable or None, got {type(convex).__name__}")
        elif loss is not None:
            raise ValueError("give either a built-in loss or a convex callable, not both "
                             "(pass loss=None)")
        self.loss = loss
        self.loss_code = -1 if loss is None else LOSSES[loss]
        self.huber_delta = check_real("huber_delta", huber_delta, low=0.0, low_open=True)
        if penalty is not None and not isinstance(penalty, _Penalty):
            raise TypeError("penalty must be a CappedL1, SCAD, MCP or L1MinusL2 instance, got "
                            f"{type(penalty).__name__}")
        self.penalty = penalty
        if constraint is not None and not isinstance(constraint, ConvexSet):
            raise TypeError("constraint must be a jitopt.sets.ConvexSet or None, got "
                            f"{type(constraint).__name__}")
        self.constraint = constraint
        if concave is not None and not callable(concave):
            raise TypeError(f"concave must be callable or None, got {type(concave).__name__}")
        self.convex = convex
        self.concave = concave
        self.xopt = None if xopt is None else np.array(xopt, dtype=float)
        self.fopt = fopt
        self.limit_fun = limit_fun
        self.name = name
        self.counts = OracleCounts()
        self._set_args = (Box() if constraint is None else constraint).kernel_args(self.dim)
        self._box_only = self._set_args[2] is None
        self._cvx_cache = {}

    # -- pieces ---------------------------------------------------------------------------

    @property
    def lam_g(self):
        """The weight of the :math:`\\ell_1` term the penalty puts into :math:`g`."""
        return 0.0 if self.penalty is None else self.penalty.g_weight

    @property
    def has_numba_solver(self):
        """Whether the compiled subproblem solver applies (built-in loss and a set whose
        proximal point with the :math:`\\ell_1` term is exact, i.e. not a simplex)."""
        return self.convex is None and not (self._set_args[3][1] == 1 and self.lam_g > 0)

    def project(self, x):
        return x.copy() if self.constraint is None else self.constraint.project(x)

    def concave_part(self, x, batch_h):
        """``(value, subgradient)`` of :math:`\\bar h` at ``x`` (penalty part plus user part)."""
        val, sub = 0.0, np.zeros(self.dim)
        if self.penalty is not None:
            val += float(self.penalty.h_value(x))
            sub += self.penalty.h_subgradient(x)
        if self.concave is not None:
            v, s = self.concave(x, batch_h)
            s = np.asarray(s, dtype=float)
            if s.shape != (self.dim,):
                raise ValueError(f"concave must return a subgradient of shape ({self.dim},), "
                                 f"got {s.shape}")
            val += float(v)
            sub += s
        self.counts.njev += 1
        return val, sub

    def convex_value(self, x, batch_g):
        """:math:`\\bar g(x)` on a batch (loss or user part plus the penalty's :math:`\\ell_1`)."""
        self.counts.nfev += 1
        l1 = self.lam_g * np.abs(x).sum()
        if self.convex is None:
            A, b = self._loss_batch(batch_g)
            return _k.mean_loss(A, b, self.loss_code, self.huber_delta, x) + l1
        import cvxpy as cp

        prob, xv, params, _ = self._cvx_model(batch_g)
        for par, arr in zip(params, batch_g):
            if isinstance(par, cp.Parameter):
                par.value = arr
        xv.value = x
        return float(self.convex(xv, *params).value) + l1

    def loss_variance(self, batch_g, x):
        r"""The sample variance :math:`\frac1{N-1}\sum_i\|s_i - \bar s\|^2` of the
        per-sample subgradients :math:`s_i = \ell'(a_i^\top x; b_i)\,a_i` of a built-in loss
        on a batch of at least two samples (the :math:`\ell_1` part of :math:`g` is
        deterministic and adds no variance)."""
        if self.convex is not None:
            raise ValueError("the variance of the convex part needs a built-in loss")
        A, b = self._loss_batch(batch_g)
        if A.shape[0] < 2:
            raise ValueError(f"batch_g must hold at least 2 samples, got {A.shape[0]}")
        return float(_k.subgradient_variance(A, b, self.loss_code, self.huber_delta, x))

    def _loss_batch(self, batch):
        if len(batch) != 2 or batch[0].ndim != 2 or batch[0].shape[1] != self.dim \
                or batch[1].ndim != 1:
            raise ValueError(f"the sampler of a built-in loss must return (A, b) with A of "
                             f"shape (size, {self.dim}) and b of shape (size,), got shapes "
                             f"{[a.shape for a in batch]}")
        return batch

    # -- the subproblem -------------------------------------------------------------------

    def prox_step(self, batch_g, xt, y, mu, solver="auto", tol=1e-10, max_epochs=10000):
        r"""Solve :math:`\min_{x\in C} \bar g(x) - y^\top x + \frac\mu2\|x - x_t\|^2`.

        Returns ``(x, gap, value)``: the solution, a bound on its suboptimality (the duality
        gap of the compiled solver; ``nan`` for cvxpy) and the subproblem's value at ``x``.
        ``solver`` is ``"numba"``, ``"cvxpy"`` or ``"auto"`` (numba when it applies).
        """
        check_choice("solver", solver, ("auto", "numba", "cvxpy"))
        if solver == "auto":
            solver = "numba" if self.has_numba_solver else "cvxpy"
        if solver == "numba":
            if not self.has_numba_solver:
                raise ValueError("the compiled subproblem solver needs a built-in loss and a "
                                 "constraint that is not a Simplex; use solver='cvxpy'")
            A, b = self._loss_batch(batch_g)
            lo, hi, fpar, ipar, groups = self._set_args
            x = np.empty(self.dim)
            gap, val, _ = _k.solve_prox_subproblem(
                A, b, self.loss_code, self.huber_delta, self.lam_g, y, xt, float(mu), lo, hi,
                fpar, ipar, groups, self._box_only, tol, max_epochs, x)
            return x, gap, val
        return self._cvx_solve(batch_g, xt, y, mu)

    def _cvx_model(self, batch):
        """The cvxpy subproblem for batches shaped like ``batch``, built once per shape with
        the data as Parameters. Data with more than ``_CVX_PARAM_LIMIT`` entries goes in as
        constants instead (cvxpy's parameter tensors grow with the data size times the
        variable size), and that model is reused only for the very same arrays (a fixed data
        set, as in a deterministic DCA on a sample average)."""
        as_constants = sum(a.size for a in batch) > _CVX_PARAM_LIMIT
        key = tuple(a.shape for a in batch)
        if as_constants:
            key = ("constants",) + key
            hit = self._cvx_cache.get(key)
            if hit is not None and all(a is b for a, b in zip(hit[4], batch)):
                return hit[:4]
        elif key in self._cvx_cache:
            return self._cvx_cache[key]
        import cvxpy as cp

        d = self.dim
        x = cp.Variable(d)
        if as_constants:
            arrays = list(batch)
            if self.convex is None and self.loss == "hinge":
                arrays[0] = arrays[1][:, None] * arrays[0]
            params = [cp.Constant(a) for a in arrays]
        else:
            params = [cp.Parameter(a.shape) for a in batch]
        # DPP form: (mu/2)||x - x_t||^2 - y^T x = (mu/2)||x||^2 - (y + mu x_t)^T x + const
        lin = cp.Parameter(d)
        mu = cp.Parameter(nonneg=True)
        if self.convex is not None:
            gbar = self.convex(x, *params)
        else:
            A, b = params
            n = batch[0].shape[0]
            if self.loss == "lad":
                gbar = cp.sum(cp.abs(A @ x - b)) / n
            elif self.loss == "squared":
                gbar = cp.sum_squares(A @ x - b) / (2 * n)
            elif self.loss == "huber":
                gbar = cp.sum(cp.huber(A @ x - b, self.huber_delta)) / (2 * n)
            else:  # hinge on the rows b_i a_i, set in _cvx_solve
                gbar = cp.sum(cp.pos(1 - A @ x)) / n
        obj = gbar + self.lam_g * cp.norm1(x) - lin @ x + 0.5 * mu * cp.sum_squares(x)
        lo, hi, fpar, ipar, groups = self._set_args
        cons = []
        if np.isfinite(lo).any():
            j = np.flatnonzero(np.isfinite(lo))
            cons.append(x[j] >= lo[j])
        if np.isfinite(hi).any():
            j = np.flatnonzero(np.isfinite(hi))
            cons.append(x[j] <= hi[j])
        if fpar is not None:  # not a box: balls or the simplex
            if ipar[1] == 1:
                cons.append(cp.sum(x) == fpar[0])
            elif np.isfinite(fpar[0]):
                cons.append(cp.norm1(x) <= fpar[0])
            if np.isfinite(fpar[1]):
                cons.append(cp.norm2(x) <= fpar[1])
        if ipar[0] != 0:
            norms = cp.hstack([cp.norm2(x[np.flatnonzero(groups == g)])
                               for g in range(ipar[2])])
            cons.append((cp.sum(norms) if ipar[0] == 1 else cp.max(norms)) <= fpar[2])
        model = (cp.Problem(cp.Minimize(obj), cons), x, params, (lin, mu))
        self._cvx_cache[key] = model + ((tuple(batch),) if as_constants else ())
        return model

    def _cvx_solve(self, batch_g, xt, y, mu, solver_name="CLARABEL"):
        import cvxpy as cp

        prob, x, params, (lin, mup) = self._cvx_model(batch_g)
        arrays = list(batch_g)
        if self.convex is None and self.loss == "hinge":
            arrays[0] = arrays[1][:, None] * arrays[0]
        for par, arr in zip(params, arrays):
            if isinstance(par, cp.Parameter):
                par.value = arr
        lin.value, mup.value = y + mu * xt, float(mu)
        prob.solve(solver=solver_name)
        if prob.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or x.value is None:
            raise RuntimeError(f"cvxpy could not solve the subproblem (status {prob.status})")
        x = np.array(x.value, dtype=float)
        return x, float("nan"), float(prob.value) + 0.5 * mu * float(xt @ xt)

    def subproblem_value(self, batch_g, x, xt, y, mu):
        """The subproblem's objective at ``x`` (to compare solvers)."""
        return (self.convex_value(x, batch_g) - y @ x + 0.5 * mu * np.sum((x - xt) ** 2))

    def __repr__(self):
        return f"DCProblem({self.name!r}, dim={self.dim})"


# --------------------------------------------------------------------------------------
# sample-size rules
# --------------------------------------------------------------------------------------

def _ceil_int(v, cap=2 ** 62):
    return int(min(math.ceil(v), cap)) if np.isfinite(v) else cap


def _adaptive_sizes(R, A, B, a, b, with_h):
    """Smallest (N_g, N_h) with A N_g^-a + B N_h^-b <= R (N_h = 0 when h has no samples)."""
    if R <= 0:
        return 2 ** 62, (2 ** 62 if with_h else 0)
    # (A / R)^(1 / a) in logs (a tiny step must give a huge size, not an overflow)
    ng_only = _ceil_int(math.exp(min((math.log(A) - math.log(R)) / a, 700.0)))
    if not with_h:
        return ng_only, 0
    if B == 0:
        return ng_only, 1
    # KKT of min N_g + N_h: N_g = (lam a A)^(1/(a+1)), N_h = (lam b B)^(1/(b+1)); bisect log lam
    lo_l, hi_l = -200.0, 200.0
    for _ in range(200):
        mid = 0.5 * (lo_l + hi_l)
        ng = math.exp((mid + math.log(a * A)) / (a + 1))
        nh = math.exp((mid + math.log(b * B)) / (b + 1))
        if A * ng ** -a + B * nh ** -b > R:
            lo_l = mid
        else:
            hi_l = mid
    ng = math.exp((hi_l + math.log(a * A)) / (a + 1))
    nh = math.exp((hi_l + math.log(b * B)) / (b + 1))
    return _ceil_int(ng), _ceil_int(nh)


def _norm_test_sizes(R, V_g, V_h, with_h):
    """Smallest (N_g, N_h) with V_g / N_g + V_h / N_h <= R (least N_g + N_h; closed form)."""
    if R <= 0:
        return 2 ** 62, (2 ** 62 if with_h else 0)
    root = math.sqrt(V_g) + (math.sqrt(V_h) if with_h else 0.0)
    ng = _ceil_int(math.sqrt(V_g) * root / R)
    return ng, (_ceil_int(math.sqrt(V_h) * root / R) if with_h else 0)


def _half_variance(problem, x, batch_h):
    """Estimate of the one-sample variance of the subgradient of h: the difference of the
    sample-mean subgradients on the two halves (sizes m, n - m) of the batch has variance
    V (1/m + 1/(n - m))."""
    n = batch_h[0].shape[0]
    m = n // 2
    _, y1 = problem.concave_part(x, tuple(a[:m] for a in batch_h))
    _, y2 = problem.concave_part(x, tuple(a[m:] for a in batch_h))
    return float(np.sum((y1 - y2) ** 2)) / (1.0 / m + 1.0 / (n - m))


# --------------------------------------------------------------------------------------
# the solver
# --------------------------------------------------------------------------------------

def online_dca(problem, x0=None, *, mu=1.0, rule="adaptive", n0=10, n0_h=None, c_g=1.0,
               c_h=1.0, alpha_g=0.49, alpha_h=0.95, rho=0.0, schedule_g=2.1, schedule_h=1.1,
               theta=1.0, floor=0.01, max_iter=1000, max_samples=None, max_time=None,
               tol_step=1e-10, subproblem_tol=1e-10, solver="auto", callback=None,
               history=False, disp=False, rng=None):
    r"""Online adaptive-sampling proximal DCA (ospDCA) for stochastic DC problems.

    Iteration :math:`t = 1, 2, \dots` draws fresh samples of sizes :math:`N_{g,t}` and
    :math:`N_{h,t}` from the laws of iteration :math:`t`, takes
    :math:`y_t \in \partial \bar h_t(x_t)` and sets

    .. math::

        x_{t+1} = \operatorname*{argmin}_{x \in C}\; \bar g_t(x) - y_t^\top x
        + \frac{\mu}{2}\|x - x_t\|^2 .

    The next sample sizes follow ``rule``:

    * ``"adaptive"`` (the paper's Algorithm 2): the cheapest of the smallest
      :math:`(N_g, N_h)` (least :math:`N_g + N_h`) with

      .. math::

          \frac{\mu}{2}\|x_{t+1} - x_t\|^2 \ge \frac{C_g}{\mu N_g^{\alpha_g}}
          + \frac{C_h}{(2\rho + \mu) N_h^{\alpha_h}}

      and the caps :math:`(\lceil (t+1)^{a}\rceil, \lceil (t+1)^{b}\rceil)`, ``a, b =
      schedule_g, schedule_h``. A large step allows few samples; near a critical point the
      caps decide. Without samples for :math:`h`, :math:`N_h = 0` and the :math:`C_h` term
      is dropped. The caps must themselves satisfy the paper's summability condition for
      the rule's exponents (:math:`\alpha_g a > 1`, :math:`\alpha_h b > 1`), which the
      defaults :math:`\alpha_g = 0.49 \in (1/2.1, 1/2)` and :math:`\alpha_h = 0.95 \in
      (1/1.1, 1)` do; other choices give a ``UserWarning`` (the authors' code uses
      :math:`\alpha_g = 0.45`, for which :math:`\lceil t^{2.1}\rceil` is not summable).
    * ``"norm_test"`` (a departure from the paper: the norm test of Byrd et al. 2012 with the
      step of the proximal method): the smallest :math:`(N_g, N_h)` (least sum, closed form
      :math:`N_g = \sqrt{V_g}(\sqrt{V_g} + \sqrt{V_h})/R`, the same with :math:`\sqrt{V_h}`
      first for :math:`N_h`) with

      .. math::

          \frac{V_g}{N_g} + \frac{V_h}{N_h} \le R = \theta^2\mu^2\|x_{t+1} - x_t\|^2 ,

      where :math:`V_g` is the sample variance of the per-sample loss subgradients at
      :math:`x_{t+1}` and :math:`V_h` that of one sample of :math:`\partial H` (estimated
      from the two halves of the batch of :math:`h`). Since the subproblem solution is
      :math:`1/\mu`-Lipschitz in its linear term, :math:`\sqrt{V_g/N_g + V_h/N_h}/\mu` bounds
      the first-order sampling error of the step, so the test keeps it below
      :math:`\theta` times the step: the paper's condition with the sampling error of the
      *decrease* localized to the step (:math:`\|d\|\sqrt{V/N}` instead of a uniform
      :math:`C_g N^{-\alpha_g}`). The sizes are then clipped to
      :math:`[\max(2, \lceil \phi (t+1)^a\rceil), \lceil (t+1)^a\rceil]` (the same with
      :math:`b` for :math:`h`), :math:`\phi = ` ``floor``: for :math:`a > 2, b > 1` the
      lower schedule is summable, so the paper's condition 2 and hence its convergence
      theorem hold for any ``floor > 0``. Needs a built-in loss.
    * ``"schedule"``: :math:`N_{g,t} = \lceil t^{a}\rceil`, :math:`N_{h,t} = \lceil
      t^{b}\rceil` (summable when :math:`a > 2, b > 1`).
    * ``"fixed"``: :math:`N_g = ` ``n0`` and :math:`N_h = ` ``n0_h`` at every iteration.

    Every accumulation point is DC-critical for the limit problem almost surely when the
    drift is summable and the sizes satisfy the rule (Ye, Cui and Wang 2025, Thm. 4.10 and
    5.3); there is no rate.

    Parameters
    ----------
    problem : DCProblem
    x0 : array_like, shape (d,), optional
        Starting point (zeros by default), projected onto :math:`C`.
    mu : float
        Proximal parameter :math:`\mu > 0` (constant).
    rule : {"adaptive", "norm_test", "schedule", "fixed"}
    n0, n0_h : int
        Sample sizes of the first iteration (``n0_h`` defaults to ``n0``; it is 0 when
        :math:`h` has no samples; at least 2 for ``"norm_test"``).
    c_g, c_h, alpha_g, alpha_h, rho : float
        Constants of the adaptive rule: :math:`C_g, C_h > 0`,
        :math:`\alpha_g \in (0, 1/2)`, :math:`\alpha_h \in (0, 1)` and
        :math:`\rho = \rho_g + \rho_h \ge 0` (weak-convexity moduli); for ``"adaptive"``
        :math:`\alpha_g` ``* schedule_g`` and :math:`\alpha_h` ``* schedule_h`` should exceed
        1 (a ``UserWarning`` otherwise).
    schedule_g, schedule_h : float
        Exponents of the schedule and of the caps.
    theta, floor : float
        The norm test's ratio :math:`\theta > 0` of the sampling-error bound to the step,
        and the constant :math:`\phi \in [0, 1]` of its lower schedule.
    max_iter, max_samples, max_time : optional
        Stop after this many iterations, samples drawn (both parts) or seconds.
    tol_step : float
        Stop (``success``) when :math:`\|x_{t+1} - x_t\| \le` ``tol_step``.
    subproblem_tol : float
        Relative duality-gap tolerance of the compiled subproblem solver.
    solver : {"auto", "numba", "cvxpy"}
        Subproblem solver.
    callback, history, disp, rng
        As in every jitopt solver; ``rng`` (a seed or Generator) is passed to the samplers.

    Returns
    -------
    OptimizeResult
        ``x``; ``fun`` (the sample estimate :math:`\bar g_t(x) - \bar h_t(x)` of the last
        batches); ``grad_norm`` (the criticality measure :math:`\mu\|x_{t+1} - x_t\|` of the
        last step); ``nit``; ``samples``, ``samples_g``, ``samples_h`` (drawn); ``nsub``
        (subproblems solved); ``nfev, njev, nifo`` (convex-part evaluations, concave
        subgradients, samples drawn). ``status``: ``Status.CONVERGED`` when a step is at
        most ``tol_step``, ``MAXITER`` for ``max_iter`` or ``max_samples`` (the message says
        which), ``MAXTIME``, ``NONFINITE`` (non-finite samples, subgradient or subproblem
        solution; ``x`` is then the last finite iterate) or ``CALLBACK``. With
        ``history=True``: per iteration ``iteration, time, fun, criticality, step, n_g, n_h,
        samples, gap`` (``gap`` is the subproblem's duality gap, ``nan`` for cvxpy).

    References
    ----------
    Y. Ye, Y. Cui and J. Wang. An online adaptive sampling algorithm for stochastic
    difference-of-convex optimization with time-varying distributions. ICML 2025 (PMLR 267).
    """
    if not isinstance(problem, DCProblem):
        raise TypeError(f"problem must be a DCProblem, got {type(problem).__name__}")
    mu = check_real("mu", mu, low=0.0, low_open=True)
    check_choice("rule", rule, ("adaptive", "norm_test", "schedule", "fixed"))
    n0 = check_int("n0", n0, low=1)
    n0_h = n0 if n0_h is None else check_int("n0_h", n0_h, low=1)
    c_g = check_real("c_g", c_g, low=0.0, low_open=True)
    c_h = check_real("c_h", c_h, low=0.0)
    alpha_g = check_real("alpha_g", alpha_g, low=0.0, high=0.5, low_open=True, high_open=True)
    alpha_h = check_real("alpha_h", alpha_h, low=0.0, high=1.0, low_open=True, high_open=True)
    rho = check_real("rho", rho, low=0.0)
    schedule_g = check_real("schedule_g", schedule_g, low=0.0, low_open=True)
    schedule_h = check_real("schedule_h", schedule_h, low=0.0, low_open=True)
    theta = check_real("theta", theta, low=0.0, low_open=True)
    floor = check_real("floor", floor, low=0.0, high=1.0)
    max_iter = check_int("max_iter", max_iter, low=1)
    if max_samples is not None:
        max_samples = check_int("max_samples", max_samples, low=1)
    if max_time is not None:
        max_time = check_real("max_time", max_time, low=0.0, low_open=True)
    tol_step = check_real("tol_step", tol_step, low=0.0)
    subproblem_tol = check_real("subproblem_tol", subproblem_tol, low=0.0, low_open=True)
    check_choice("solver", solver, ("auto", "numba", "cvxpy"))
    if solver == "numba" and not problem.has_numba_solver:
        raise ValueError("solver='numba' needs a built-in loss and a constraint that is not a "
                         "Simplex")
    with_h = problem.stream.has_h
    for part, alpha, a in (("g", alpha_g, schedule_g), ("h", alpha_h, schedule_h)):
        if rule == "adaptive" and (part == "g" or with_h) and alpha * a <= 1.0:
            warnings.warn(f"alpha_{part} * schedule_{part} = {alpha} * {a} <= 1: the cap "
                          f"ceil(t^{a}) is not summable with the rule's exponent, so the "
                          f"convergence theorem (Thm. 5.3 with condition 2) does not apply",
                          UserWarning, stacklevel=2)
    if rule == "norm_test" and (n0 < 2 or (with_h and n0_h < 2)):
        raise ValueError("rule='norm_test' estimates variances and needs n0 >= 2 and "
                         "n0_h >= 2")
    if rule == "norm_test" and problem.convex is not None:
        raise ValueError("rule='norm_test' estimates the variance of a built-in loss; a user "
                         "convex part needs rule='adaptive', 'schedule' or 'fixed'")
    rng = check_rng(rng)
    d = problem.dim
    if x0 is None:
        x = np.zeros(d)
    else:
        x = check_array("x0", x0)
        if x.shape != (d,):
            raise ValueError(f"x0 must have shape ({d},), got {x.shape}")
    x = problem.project(x)

    stream = problem.stream
    base_g, base_h = stream.samples_g, stream.samples_h
    n_g, n_h = (n0, n0_h if with_h else 0)
    if rule == "schedule":
        n_g, n_h = 1, (1 if with_h else 0)
    A_coef, B_coef = c_g / mu, c_h / (2 * rho + mu)
    monitor = Monitor(problem, callback=callback, disp=disp)
    rows = [] if history else None
    status, message = Status.MAXITER, None
    fun, crit = float("nan"), float("nan")
    nit = 0
    nsub = 0

    def drawn():
        return (stream.samples_g - base_g) + (stream.samples_h - base_h)

    for t in range(1, max_iter + 1):
        batch_g, batch_h = stream.draw_pair(t, n_g, n_h, rng)
        if not all(np.isfinite(a).all() for a in batch_g + (batch_h or ())):
            status = Status.NONFINITE
            message = f"The sampler returned non-finite data at iteration {t}."
            break
        _, y = problem.concave_part(x, batch_h)
        if not np.isfinite(y).all():
            status = Status.NONFINITE
            message = f"The concave part returned a non-finite subgradient at iteration {t}."
            break
        x_new, gap, sub_val = problem.prox_step(batch_g, x, y, mu, solver=solver,
                                                tol=subproblem_tol)
        nsub += 1
        if not (np.isfinite(x_new).all() and np.isfinite(sub_val)):
            status = Status.NONFINITE
            message = f"The subproblem returned a non-finite point at iteration {t}."
            break
        step = float(np.linalg.norm(x_new - x))
        crit = mu * step
        # sample estimate of f at the new point: g from the subproblem value, h re-evaluated
        g_new = sub_val + y @ x_new - 0.5 * mu * step ** 2
        h_new, _ = problem.concave_part(x_new, batch_h)
        fun = float(g_new - h_new)
        if rule == "norm_test":
            V_g = problem.loss_variance(batch_g, x_new)
            V_h = _half_variance(problem, x_new, batch_h) if with_h else 0.0
        x = x_new
        nit = t
        if rows is not None:
            rows.append((t, monitor.elapsed(), fun, crit, step, n_g, n_h, drawn(), gap))
        if monitor.iteration(t, x, fun, crit):
            status = Status.CALLBACK
            break
        if step <= tol_step:
            status = Status.CONVERGED
            message = f"Step norm {step:.3e} at or below tol_step."
            break
        if max_samples is not None and drawn() >= max_samples:
            status, message = Status.MAXITER, "Maximum number of samples has been drawn."
            break
        if max_time is not None and monitor.elapsed() >= max_time:
            status = Status.MAXTIME
            break
        # the next sample sizes
        if rule == "schedule":
            n_g = _ceil_int((t + 1) ** schedule_g)
            n_h = _ceil_int((t + 1) ** schedule_h) if with_h else 0
        elif rule == "adaptive":
            cap_g = _ceil_int((t + 1) ** schedule_g)
            cap_h = _ceil_int((t + 1) ** schedule_h) if with_h else 0
            ng, nh = _adaptive_sizes(0.5 * mu * step ** 2, A_coef, B_coef, alpha_g, alpha_h,
                                     with_h)
            ng = max(ng, 1)
            nh = max(nh, 1) if with_h else 0
            # either condition 1 or both caps, whichever is cheaper
            n_g, n_h = (ng, nh) if ng + nh <= cap_g + cap_h else (cap_g, cap_h)
        elif rule == "norm_test":
            cap_g = _ceil_int((t + 1) ** schedule_g)
            ng, nh = _norm_test_sizes((theta * mu * step) ** 2, V_g, V_h, with_h)
            n_g = min(max(ng, _ceil_int(floor * (t + 1) ** schedule_g), 2), cap_g)
            if with_h:
                cap_h = _ceil_int((t + 1) ** schedule_h)
                n_h = min(max(nh, _ceil_int(floor * (t + 1) ** schedule_h), 2), cap_h)
    problem.counts.nifo += drawn()
    hist = None
    if rows is not None:
        names = ("iteration", "time", "fun", "criticality", "step", "n_g", "n_h", "samples",
                 "gap")
        cols = list(zip(*rows)) if rows else [()] * len(names)
        ints = {"iteration", "n_g", "n_h", "samples"}
        hist = {k: np.asarray(c, dtype=np.int64 if k in ints else float)
                for k, c in zip(names, cols)}
    res = monitor.result(x, fun, crit, nit, status, message,
                         samples=drawn(), samples_g=stream.samples_g - base_g,
                         samples_h=stream.samples_h - base_h, nsub=nsub)
    if hist is not None:
        res.history = hist
    return res
