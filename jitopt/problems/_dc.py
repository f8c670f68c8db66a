r"""Stochastic difference-of-convex problems fed by a stream, and the online sparse robust
regression of Ye, Cui and Wang (ICML 2025, Sec. 6), a DC problem with drifting data and a
known limit optimum."""

import math

import numpy as np

from .._core.problem import BaseProblem
from .._core.result import OracleError
from ..validation import check_array, check_choice, check_int, check_real, check_shape
from ..sets import Box, ConvexSet
from . import _dc_kernels as _k
from ._dc_penalties import CappedL1, DCPenalty
from ._stream import StreamProblem

__all__ = ["DCProblem", "online_sparse_robust_regression"]

#: the built-in losses of :class:`DCProblem` and their codes in the compiled kernels
LOSSES = {"lad": _k.LAD, "squared": _k.SQUARED, "huber": _k.HUBER, "hinge": _k.HINGE}


class DCProblem(BaseProblem):
    r"""A stochastic DC problem :math:`\min_{x\in C} g(x) - h(x)` fed by a :class:`StreamProblem`.

    .. math::

        g(x) = \mathbb E_{\xi \sim P_\xi}[G(x, \xi)], \qquad
        h(x) = \mathbb E_{\zeta \sim P_\zeta}[H(x, \zeta)],

    with :math:`G(\cdot, \xi)`, :math:`H(\cdot, \zeta)` convex and possibly nonsmooth; the
    samples of iteration :math:`t` may come from laws :math:`P_{\xi,t}, P_{\zeta,t}` that
    drift towards :math:`P_\xi, P_\zeta`. The convex part is
    :math:`G(x, (a, b)) = \ell(a^\top x; b) + \lambda_g\|x\|_1` (a built-in loss plus the
    :math:`\ell_1` part of the penalty) or a user convex function; the concave part is the
    concave part :math:`h` of the penalty plus an optional stochastic :math:`H(x, \zeta)`.

    Parameters
    ----------
    stream : StreamProblem
        Where the samples come from.
    dim : int
        The dimension :math:`d` of :math:`x`.
    loss : {"lad", "squared", "huber", "hinge"} or None
        :math:`|s - b|`, :math:`(s-b)^2/2`, the Huber function of :math:`s - b` with
        threshold ``huber_delta``, or :math:`\max(0, 1 - bs)` with :math:`b \in \{-1, 1\}`;
        the samples of ``g`` are then ``(A, b)``. These losses have a compiled subproblem
        solver (:func:`jitopt.solvers.online_dca`). ``None`` when ``convex`` is given.
    huber_delta : float
        The threshold of the Huber loss.
    penalty : DCPenalty or None
        A DC penalty (:class:`CappedL1`, :class:`SCAD`, :class:`MCP`, :class:`L1MinusL2` or
        a subclass of :class:`DCPenalty`).
    constraint : jitopt.sets.ConvexSet, optional
        The closed convex set :math:`C` (default :math:`\mathbb R^d`).
    convex : callable, optional
        A user convex part (solved with cvxpy): ``convex(x, *params)`` returns a cvxpy
        expression of the sample mean :math:`\bar g(x)` from the variable ``x`` and
        ``cvxpy.Parameter`` objects shaped like the arrays of a batch (one per array); it must
        follow cvxpy's DPP rules.
    concave : callable, optional
        ``concave(x, batch)`` returns ``(value, subgradient)`` of the sample mean
        :math:`\bar h(x)` of a user concave part (``batch`` is ``None`` when the stream has no
        samples for ``h``). Any subgradient is allowed.
    xopt, fopt : optional
        The known limit optimum and its value.
    limit_fun : callable, optional
        ``limit_fun(x)``: the objective of the limit problem (for monitoring and benchmarks).
    name : str
        A name for printing.

    Notes
    -----
    Oracle counts (``counts``): ``nfev`` counts evaluations of a sample mean
    :math:`\bar g` (:meth:`convex_value`, and each subproblem solved by a solver), ``njev``
    the subgradients of :math:`\bar h` (:meth:`concave_part`) and ``nifo`` the samples
    handed out by :meth:`draw_batches` (both parts). The user's samplers, ``concave`` and
    ``convex`` are called as oracles: an exception becomes an
    :class:`~jitopt._core.result.OracleError`, a NaN or inf a
    :class:`~jitopt._core.result.NonFiniteOracle`.

    Examples
    --------
    :math:`\frac12(x - 3)^2 + \frac12\min(1, |x|)` as a squared loss on the datum
    ``(1, 3)`` and a capped-:math:`\ell_1` penalty, split as
    :math:`g(x) = \frac12(x - 3)^2 + \frac12|x|` and :math:`h(x) = \frac12\max(|x| - 1, 0)`;
    at :math:`x = 2`, :math:`g = 1.5` and :math:`h = 0.5` (the solver's example is in
    :func:`jitopt.solvers.online_dca`):

    >>> import numpy as np
    >>> from jitopt.problems import CappedL1, DCProblem, StreamProblem
    >>> stream = StreamProblem(lambda t, size, rng: (np.ones((size, 1)), np.full(size, 3.0)))
    >>> problem = DCProblem(stream, 1, loss="squared", penalty=CappedL1(0.5))
    >>> batch_g, batch_h = problem.draw_batches(1, 4, 0, np.random.default_rng(0))
    >>> x = np.array([2.0])
    >>> float(problem.convex_value(x, batch_g)), float(problem.concave_part(x, batch_h)[0])
    (1.5, 0.5)
    """

    default_method = "online_dca"

    def __init__(self, stream, dim, *, loss="lad", huber_delta=1.0, penalty=None,
                 constraint=None, convex=None, concave=None, xopt=None, fopt=None,
                 limit_fun=None, name="DC problem"):
        super().__init__()
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
        self.huber_delta = check_real("huber_delta", huber_delta,
                                      low=0.0, low_open=True, high=np.inf, high_open=True)
        if penalty is not None and not isinstance(penalty, DCPenalty):
            raise TypeError("penalty must be a DCPenalty (CappedL1, SCAD, MCP, L1MinusL2) or "
                            f"None, got {type(penalty).__name__}")
        self.penalty = penalty
        if constraint is not None and not isinstance(constraint, ConvexSet):
            raise TypeError("constraint must be a jitopt.sets.ConvexSet or None, got "
                            f"{type(constraint).__name__}")
        if constraint is not None and constraint.dim not in (None, self.dim):
            raise ValueError(f"constraint must be a set of R^{self.dim} (dim = {self.dim}), "
                             f"got {constraint!r} of dimension {constraint.dim}")
        self.constraint = constraint
        if concave is not None and not callable(concave):
            raise TypeError(f"concave must be callable or None, got {type(concave).__name__}")
        self.convex = convex
        self.concave = concave
        self.xopt = None if xopt is None else check_array("xopt", xopt)
        if self.xopt is not None and self.xopt.shape != (self.dim,):
            raise ValueError(f"xopt must have shape ({self.dim},), got {self.xopt.shape}")
        self.fopt = None if fopt is None else check_real("fopt", fopt)
        self.limit_fun = limit_fun
        self.name = name

    @property
    def lam_g(self):
        """The weight of the :math:`\\ell_1` term the penalty puts into :math:`g`."""
        return 0.0 if self.penalty is None else self.penalty.g_weight

    def project(self, x):
        """The projection of ``x`` onto :math:`C` (a new array)."""
        return x.copy() if self.constraint is None else self.constraint.project(x)

    def loss_batch(self, batch):
        """``(A, b)`` of a batch of a built-in loss; a ``ValueError`` for other shapes."""
        if len(batch) != 2 or batch[0].ndim != 2 or batch[0].shape[1] != self.dim \
                or batch[1].ndim != 1:
            raise ValueError(f"the sampler of a built-in loss must return (A, b) with A of "
                             f"shape (size, {self.dim}) and b of shape (size,), got shapes "
                             f"{[np.shape(a) for a in batch]}")
        return batch

    def draw_batches(self, t, n_g, n_h, rng):
        """Fresh batches ``(batch_g, batch_h)`` of sizes ``n_g, n_h`` at iteration ``t``
        (``batch_h`` is ``None`` when ``n_h == 0`` or :math:`h` has no samples); adds the
        samples drawn to ``counts.nifo``."""
        stream = self.stream
        batch_g, batch_h = stream.draw_pair(t, n_g, n_h, rng)
        # from the sizes, not the stream's counters, which concurrent runs share
        self.counts.add(nifo=max(n_g, n_h) if stream.shared
                        else n_g + (0 if batch_h is None else n_h))
        if self.convex is None:
            try:
                self.loss_batch(batch_g)
            except ValueError as err:
                raise OracleError("The oracle sample returned a batch of the wrong shape") \
                    from err
        return batch_g, batch_h

    def concave_part(self, x, batch_h):
        """``(value, subgradient)`` of :math:`\\bar h` at ``x`` (penalty part plus user part);
        counts one ``njev``."""
        check_shape("x", x, (self.dim,))
        self.counts.add(njev=1)
        val, sub = 0.0, np.zeros(self.dim)
        if self.penalty is not None:
            val += float(self.penalty.h_value(x))
            sub += self.penalty.h_subgradient(x)
        if self.concave is not None:
            out = self.call_oracle("concave", self.concave, x, batch_h)
            try:
                v, s = out
                v = float(v)
                s = np.asarray(s, dtype=float)
                if s.shape != (self.dim,):
                    raise ValueError(f"concave must return a subgradient of shape "
                                     f"({self.dim},), got {s.shape}")
            except (TypeError, ValueError) as err:
                raise OracleError("The oracle concave must return (value, subgradient)") \
                    from err
            val += self.check_finite("concave (value)", v)
            sub += self.check_finite("concave (subgradient)", s)
        return val, sub

    def convex_value(self, x, batch_g):
        """:math:`\\bar g(x)` on a batch (loss or user part plus the penalty's
        :math:`\\ell_1`); counts one ``nfev``."""
        check_shape("x", x, (self.dim,))
        self.counts.add(nfev=1)
        l1 = self.lam_g * np.abs(x).sum()
        if self.convex is None:
            A, b = self.loss_batch(batch_g)
            return _k.mean_loss(A, b, self.loss_code, self.huber_delta, x) + l1
        import cvxpy as cp

        xv = cp.Variable(self.dim)
        xv.value = np.asarray(x, dtype=float)
        params = []
        for a in batch_g:
            par = cp.Parameter(a.shape)
            par.value = a
            params.append(par)
        expr = self.call_oracle("convex", self.convex, xv, *params)
        return self.check_finite("convex", float(expr.value)) + l1

    def loss_subgradient(self, batch_g, x):
        r"""The subgradient :math:`\frac1N\sum_i \ell'(a_i^\top x; b_i)\,a_i` of the mean
        built-in loss on a batch (without the :math:`\ell_1` part of :math:`g`)."""
        if self.convex is not None:
            raise ValueError("the loss subgradient needs a built-in loss")
        check_shape("x", x, (self.dim,))
        A, b = self.loss_batch(batch_g)
        out = np.empty(self.dim)
        _k.mean_loss_subgradient(A, b, self.loss_code, self.huber_delta, x, out)
        return out

    def loss_variance(self, batch_g, x):
        r"""The sample variance :math:`\frac1{N-1}\sum_i\|s_i - \bar s\|^2` of the
        per-sample subgradients :math:`s_i = \ell'(a_i^\top x; b_i)\,a_i` of a built-in loss
        on a batch of at least two samples (the :math:`\ell_1` part of :math:`g` is
        deterministic and adds no variance)."""
        if self.convex is not None:
            raise ValueError("the variance of the convex part needs a built-in loss")
        check_shape("x", x, (self.dim,))
        A, b = self.loss_batch(batch_g)
        if A.shape[0] < 2:
            raise ValueError(f"batch_g must hold at least 2 samples, got {A.shape[0]}")
        return float(_k.subgradient_variance(A, b, self.loss_code, self.huber_delta, x))

    def __repr__(self):
        return f"DCProblem({self.name!r}, dim={self.dim})"


def online_sparse_robust_regression(p=50, beta_star=(10.0, -15.0), lam=0.01, alpha=1.0,
                                    drift=100.0, bound=100.0):
    r"""Online sparse robust regression with a capped-:math:`\ell_1` penalty and drifting data.

    .. math::

        \min_{\beta \in [-r, r]^p}\; \mathbb E\,|y - x^\top\beta|
        + \lambda \sum_j \min(1, \alpha|\beta_j|),

    where at iteration :math:`t` the samples are :math:`x \sim U[-1, 1]^p`,
    :math:`y = x^\top(\beta^* + \delta_t) + \varepsilon`, :math:`\varepsilon \sim N(0, 1)`,
    with the drift :math:`\delta_t = (-1)^t c\, t^{-2} \mathbf 1_p` (summable, so the laws
    converge to the limit law with :math:`\delta = 0`). DC split: the LAD loss plus
    :math:`\lambda\alpha\|\beta\|_1` is convex, :math:`\lambda\sum_j\max(0, \alpha|\beta_j|-1)`
    is the deterministic concave part.

    Under the limit law the loss is :math:`\mathbb E_x[z(2\Phi(z) - 1) + 2\varphi(z)]` with
    :math:`z = x^\top(\beta - \beta^*)`, uniquely minimized at :math:`\beta^*`; when every
    nonzero :math:`|\beta^*_j| \ge 1/\alpha` the penalty is flat there and :math:`\beta^*` is
    the global minimizer with value
    :math:`F^* = \sqrt{2/\pi} + \lambda\,\#\{j : \beta^*_j \ne 0\}` (0.817885 for the paper's
    :math:`\beta^* = (10, -15, 0, \dots)`, :math:`\lambda = 0.01`).

    Parameters
    ----------
    p : int
        Dimension.
    beta_star : array_like
        The leading coefficients of :math:`\beta^*` (the rest are zero); each nonzero must
        satisfy :math:`|\beta^*_j| \ge 1/\alpha` and lie inside the box.
    lam, alpha : float
        Penalty parameters.
    drift : float
        The drift scale :math:`c` (100 in the paper's main experiment, 5000 in App. D).
    bound : float
        The box radius :math:`r` (a bounded constraint set, as the theory requires).

    Returns
    -------
    DCProblem
        With ``xopt`` = :math:`\beta^*`, ``fopt`` = :math:`F^*` and ``limit_fun(beta, n=200000,
        seed=0)``, a Monte Carlo estimate of the limit objective (closed form in the noise).

    Examples
    --------
    >>> import jitopt
    >>> problem = jitopt.problems.online_sparse_robust_regression()
    >>> round(problem.fopt, 6), problem.dim
    (0.817885, 50)
    """
    p = check_int("p", p, low=1)
    lam = check_real("lam", lam, low=0.0, high=np.inf, high_open=True)
    alpha = check_real("alpha", alpha, low=0.0, low_open=True, high=np.inf, high_open=True)
    drift = check_real("drift", drift, low=0.0, high=np.inf, high_open=True)
    bound = check_real("bound", bound, low=0.0, low_open=True, high=np.inf, high_open=True)
    lead = check_array("beta_star", beta_star).ravel()
    if lead.size > p:
        raise ValueError(f"beta_star has {lead.size} entries, more than p = {p}")
    beta = np.zeros(p)
    beta[:lead.size] = lead
    nz = beta[beta != 0]
    if np.any(alpha * np.abs(nz) < 1) or np.any(np.abs(nz) > bound):
        raise ValueError("every nonzero of beta_star must satisfy 1/alpha <= |beta_j| <= bound")

    def sample(t, size, rng):
        X = rng.uniform(-1.0, 1.0, (size, p))
        shift = (-1.0) ** t * drift / float(t) ** 2
        y = X @ (beta + shift) + rng.standard_normal(size)
        return X, y

    penalty = CappedL1(lam, alpha)
    fopt = math.sqrt(2 / math.pi) + float(penalty.value(beta))

    def limit_fun(b, n=200000, seed=0):
        from scipy.special import ndtr

        X = np.random.default_rng(seed).uniform(-1.0, 1.0, (n, p))
        z = X @ (np.asarray(b, dtype=float) - beta)
        loss = np.mean(z * (2 * ndtr(z) - 1) + 2 * np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi))
        return float(loss + penalty.value(b))

    return DCProblem(StreamProblem(sample), p, loss="lad", penalty=penalty,
                     constraint=Box(-bound, bound), xopt=beta, fopt=fopt, limit_fun=limit_fun,
                     name=f"online sparse robust regression (p = {p})")
