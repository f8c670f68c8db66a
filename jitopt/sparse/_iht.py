r"""Iterative hard thresholding with the two-step projection (IHT-2SP and its variants):
the solver's loop, its post-processing (relax, prune, refit, exchange search) and the path."""

import math

import numpy as np

from .._core.problem import FiniteSumProblem, Problem
from .._core.registry import register_method
from .._core.result import NonFiniteOracle, Status
from .._core.run import Algorithm, State, run
from .._core.stopping import MaxIter, MaxTime, StepVerdict, verdict
from ..manifolds import Euclidean
from ..validation import check_array, check_choice, check_int, check_real, check_rng
from ._glm import glm_exchange_search
from ._loops import CompiledSteps, gradient_step, python_step
from ._projection import TwoStep, check_always_select, check_constraint, resolve_selection
from ._refit import exchange_search, refit_on_support
from ._zeroth_order import zo_gradient

__all__ = ["iht", "iht_path"]

_VARIANTS = ("deterministic", "stochastic", "zeroth_order")
_RELAXED_TOL = 1e-5
_RELAXED_TOL_SWAP = 1e-2  # the relaxed run before the exchange search
_SWAP = 5  # default largest exchange of the support refinement after relax -> prune -> refit
_MEASURE = "gradient mapping norm"


class _Oracle:
    """``(f(x), gradient or its estimate at x)`` of a variant at iteration ``t``, and the
    gradient used for the stationarity of a refitted point."""

    def __init__(self, problem, variant, rng):
        self.problem, self.variant, self.rng = problem, variant, rng
        # batch sizes b0 * b_growth^t; directions q0 * q_growth^t up to q_max, smoothing mu,
        # subspace size s2 and the estimator of zo_gradient (set by iht when they apply)
        self.b0 = self.b_growth = self.q0 = self.q_growth = self.q_max = None
        self.mu = self.s2 = self.estimator = None

    def __call__(self, x, t, overflow_ok=False):
        """``overflow_ok``: return ``f = +inf`` (a backtracking trial to reject) instead of
        raising :class:`NonFiniteOracle`."""
        problem = self.problem
        if self.variant == "deterministic":
            f, g = problem.cost_and_egrad(x)
        elif self.variant == "stochastic":
            n = problem.n_samples
            b = min(n, int(math.ceil(self.b0 * self.b_growth ** t - 1e-9)))
            idx = problem.all_samples if b >= n else \
                np.sort(self.rng.choice(n, b, replace=False))
            f, g = problem.cost(x), problem.egrad(x, idx)
        else:
            f = problem.cost(x)
            q = min(self.q_max, int(math.ceil(self.q0 * self.q_growth ** t - 1e-9)))
            g, _ = zo_gradient(problem.cost, x, q, self.mu, self.s2, self.rng, f0=f,
                               estimator=self.estimator)
        if not math.isfinite(f) and not (overflow_ok and f == math.inf):
            raise NonFiniteOracle(f"The objective is {f}")
        return f, g

    def full_batch(self, t):
        return self.variant != "stochastic" or \
            self.b0 * self.b_growth ** t >= self.problem.n_samples

    def gradient(self, x):
        """The full gradient at ``x`` (central differences for the zeroth-order variant)."""
        if self.variant == "zeroth_order":
            return zo_gradient(self.problem.cost, x, smoothing=self.mu,
                               estimator="coordinate")[0]
        return self.problem.egrad(x)


def _check_step(step, lipschitz, variant, problem):
    """``(eta, backtrack)``: the first step size and whether it is backtracked."""
    if lipschitz is not None:
        lipschitz = check_real("lipschitz", lipschitz, low=0.0, low_open=True)
    if not isinstance(step, str):
        return check_real("step", step, low=0.0, low_open=True), False
    check_choice("step", step, ("auto", "lipschitz", "backtracking"))
    if step == "auto":
        step = "backtracking" if variant == "deterministic" else "lipschitz"
    if step == "backtracking" and variant != "deterministic":
        raise ValueError("step='backtracking' is for variant='deterministic'; give a "
                         "float step or step='lipschitz'")
    L = lipschitz
    if L is None and step == "lipschitz":
        if not hasattr(problem, "lipschitz"):
            raise ValueError("step='lipschitz' needs lipschitz=... (this problem has no "
                             "lipschitz() method); or give step='backtracking' or a float")
        L = float(problem.lipschitz())
    if L is None:
        return 1.0, step == "backtracking"
    return (0.5 if variant == "zeroth_order" else 1.0) / max(L, 1e-300), \
        step == "backtracking"


@register_method("iht", Problem, tol_option="tol", manifolds=(Euclidean,), doc=dict(
    unit="iteration of the main run",
    callback="A relaxed iterate is then pruned to ``k`` and not refitted.",
    history=r", and ``step`` (the :math:`\eta` of each step); the refits and runs at ``k`` "
            "after the main run add to the result's counts, not to the history",
    rng="Seed of the minibatches and directions: same seed, same result."))
def iht(problem, x0=None, *, k, constraint=None, variant="deterministic",
        selection="magnitude", step="auto", lipschitz=None, relax=1.0, refit=None,
        swap="auto", n_unconstrained=0, always_select=None, batch_size=10, batch_growth=1.1, n_directions=10,
        direction_growth=1.1, max_directions=None, smoothing=1e-4, subspace_size=None,
        estimator="sphere", min_step=1e-14, refit_maxiter=5000, jit="auto", maxiter=1000,
        max_time=np.inf, tol=1e-7, callback=None, history=False, disp=False, rng=None):
    r"""Iterative hard thresholding with the two-step projection (IHT-2SP, HSG-HT-2SP, HZO-HT-2SP).

    Solves :math:`\min_w R(w)` subject to :math:`\|w\|_0 \le k` and :math:`w \in \Gamma`, for a
    support-preserving convex set :math:`\Gamma`, by

    .. math::

        w_{t+1} = \Pi_\Gamma\bigl(H_k(w_t - \eta\, g_t)\bigr),

    where :math:`g_t` is the gradient (``variant="deterministic"``), a minibatch gradient over
    :math:`b_t = \min(n, \lceil b_0\,\gamma^t\rceil)` samples drawn without replacement
    (``"stochastic"``, the hybrid stochastic gradient of Zhou, Yuan & Feng 2018), or the
    zeroth-order estimate of :func:`zo_gradient` with
    :math:`q_t = \min(q_{\max}, \lceil q_0\gamma^t\rceil)` directions (``"zeroth_order"``,
    only function values). The objective is not monotone in general, so the best iterate
    seen is returned (its full objective is evaluated at every iterate).

    With ``relax > 1`` the iteration runs at the relaxed sparsity
    :math:`k' = \lceil\text{relax}\cdot k\rceil` (the paper's :math:`k \ge \bar k` trade-off),
    then prunes to ``k`` coordinates by the same selection rule, from two starts: the best
    relaxed iterate and its refit on its own support. From each pruned start it runs the
    exchange search of ``swap`` when that applies (least squares in a box, the default
    there), else IHT at ``k`` with a refit on the final support; the best of these (and of
    the refits of the pruned starts) is returned. The relaxed run, which only provides the
    starts, stops at the tolerance :math:`\max(\text{tol}, 10^{-5})` (:math:`10^{-2}` before
    the exchange search). The refit solves
    :math:`\min\{R(w) : w\in\Gamma, \operatorname{supp} w \subseteq S\}` by accelerated
    projected gradient (FISTA with restarts and backtracking), on the :math:`k\times k` Gram
    block for least squares (exactly, by a primal active-set method, in a box), by projected
    Newton for :class:`~jitopt.problems.Poisson` in a box, and with
    central differences on :math:`S` for the zeroth-order variant.

    Parameters
    ----------
    problem : jitopt.Problem
        A problem on ``jitopt.manifolds.Euclidean(d)``; a :class:`jitopt.FiniteSumProblem`
        for ``variant="stochastic"``. Only ``problem.cost`` is called by the zeroth-order
        variant. :func:`jitopt.problems.least_squares` gives a least-squares problem whose
        gradients of sparse points cost :math:`O(dk)` (cached Gram rows).
    x0 : array_like, optional
        Warm start; ``2SP`` of it is the first iterate (zero by default).
    k : int
        Sparsity of the returned point, ``1 <= k <= d - n_unconstrained`` (required, by
        keyword).
    constraint : None, "nonnegative" or jitopt.sets.ConvexSet
        The support-preserving set :math:`\Gamma`; sets that are not (e.g.
        :class:`~jitopt.sets.Simplex`) raise a ``ValueError``.
    variant : {"deterministic", "stochastic", "zeroth_order"}
    selection : {"magnitude", "gain", "signed", "auto"}
        Rule of the first step, see :func:`two_step_projection`; ``"magnitude"`` is the
        paper's operator (the one its guarantees are stated for).
    step : float or {"auto", "lipschitz", "backtracking"}
        A fixed :math:`\eta`; ``"lipschitz"``: :math:`\eta = 1/L` (``0.5/L`` for the
        zeroth-order variant) with :math:`L` from ``lipschitz`` or ``problem.lipschitz()``;
        ``"backtracking"`` (deterministic only): start from :math:`1/L` (or 1) and halve
        :math:`\eta` until
        :math:`R(w^+) \le R(w) + \langle g, w^+ - w\rangle + \|w^+ - w\|^2/(2\eta)`
        (a trial with :math:`R(w^+) = +\infty`, e.g. an overflowing :math:`e^\eta` of
        :class:`~jitopt.problems.Poisson`, is rejected; NaN is a fault).
        ``"auto"`` is ``"backtracking"`` for the deterministic variant, else
        ``"lipschitz"``.
    lipschitz : float, optional
        A Lipschitz constant of :math:`\nabla R`.
    relax : float
        Relaxation factor :math:`\ge 1` of the working sparsity (relax → prune → refit).
    refit : bool, optional
        Refit on the final support; default: ``relax > 1``.
    swap : int or "auto"
        Largest exchange :math:`s_{\max}` of a local search over supports after the
        iteration (0: none). Each round ranks the coordinates of the support :math:`S` by the
        increase of :math:`R` when one is dropped, :math:`-w_j g_j + G_{jj}w_j^2/2`, and
        those outside by the decrease when one is added at its best feasible value,
        :math:`-\min_{l_i\le t\le u_i}(g_i t + G_{ii}t^2/2)` (:math:`g` the gradient,
        :math:`G = X^\top X/n`, :math:`g` taken without the dropped coordinates); for
        :math:`s = s_{\max},\dots,1` it exchanges the :math:`s` cheapest with the :math:`s`
        best, then tries each single coordinate of :math:`S` with its best replacement,
        refits each new support exactly under the bounds (a primal active-set solve on its
        Gram block) and keeps the first exchange that lowers :math:`R`; it stops when none
        does. The objective never increases, the point stays feasible with at most ``k`` nonzeros (exactly ``k`` unless no coordinate
        outside the support can lower :math:`R`): abess's splicing (Zhu et al. 2020) with
        the bounds in the refit, not part of the paper's method.
        It needs a least-squares problem (:func:`jitopt.problems.least_squares`) with
        ``n_unconstrained=0`` or a GLM loss (Poisson, logistic: :func:`glm_exchange_search`,
        the same search on the quadratic model of the loss with the diagonal of its
        Hessian for :math:`G_{ii}`, each support refitted by Newton's method), a separable
        constraint (a box, the orthant or none) and the deterministic variant.
        ``"auto"``: 5 when ``relax > 1`` and these hold, else 0.
    n_unconstrained : int
        The last ``n_unconstrained`` coordinates (e.g. an intercept) are neither thresholded
        nor constrained.
    always_select : sequence of int, optional
        Coordinates :math:`F` always in the support (abess's ``always_select``): the first
        step of the two-step projection ranks them first and fills the other
        :math:`k - |F|` by the rule, the exchange search never drops them; they count in
        ``k``, and they are still projected onto :math:`\Gamma` (a forced coordinate can be
        0, e.g. a nonnegative one whose gradient pushes it below 0).
    batch_size, batch_growth : int, float
        :math:`b_0` and :math:`\gamma \ge 1` of the stochastic variant.
    n_directions, direction_growth, max_directions : int, float, int
        :math:`q_0`, :math:`\gamma` and :math:`q_{\max}` (default :math:`d`) of the
        zeroth-order variant.
    smoothing, subspace_size, estimator
        :math:`\mu`, :math:`s_2` and the estimator of :func:`zo_gradient`.
    min_step : float
        Backtracking gives up (``Status.SMALL_STEP``) below this step.
    refit_maxiter : int
        Iterations of the refit at most.
    jit : {"auto", False}
        ``"auto"`` runs the iteration in a Numba kernel for the built-in least squares
        (:func:`jitopt.problems.least_squares`) with the deterministic variant: the Python
        loop's steps without its microseconds per iteration (uncompiled at first on a
        ``small`` problem); ``False`` always runs the Python loop. ``result.loop`` says
        which ran (``"numba"``, the kernel, or ``"python"``).
    maxiter : int
        Iterations at most (``Status.MAXITER``); the runs at ``k`` after a relaxed run
        have the same limit, and their iterations are added to ``nit``.
    max_time : float
        Wall-clock seconds at most (``Status.MAXTIME``), checked before each iteration;
        once it is spent, a relaxed iterate is pruned to ``k`` and nothing is refitted.
    tol : float
        Stop (``Status.CONVERGED``) when the support is unchanged and
        :math:`\|w_{t+1} - w_t\| \le \text{tol}\cdot\max(1, \|w_t\|)` (for the stochastic
        variant, once the batch is full); ``tol`` of :func:`jitopt.minimize`.
    {common options}

    Returns
    -------
    OptimizeResult
        ``x``: the best iterate, or the refitted / exchanged point; ``fun``: :math:`R(x)`;
        ``stationarity``: the norm of the gradient mapping
        :math:`\|x - \Pi_\Gamma(H_k(x - \eta g))\|/\eta` at ``x`` (``stationarity_measure``
        is ``"gradient mapping norm"``), with :math:`\eta` the last step and :math:`g` the
        gradient the method has at ``x`` (the minibatch gradient or zeroth-order estimate of
        the best iterate; for a refitted point one more full gradient, by central
        differences for the zeroth-order variant); it is 0 exactly at the fixed points of
        the iteration. In ``history`` (and the callback), row :math:`t` holds
        :math:`\|w_t - w_{t-1}\|/\eta_{t-1}`, the gradient mapping of the previous iterate
        (row 0: that of the start). ``nfev``, ``njev``: cost and gradient calls (for the
        zeroth-order variant ``nfev`` is the exact number of function queries and ``njev``
        is 0); ``nifo``: per-sample gradients (``n`` per full gradient, the batch size per
        minibatch). Also ``support``, ``n_nonzero``, ``k_work`` (the relaxed sparsity),
        ``best_iteration``, ``n_increases`` (iterations where the objective went up),
        ``step`` (the last :math:`\eta`), ``selection``, ``n_swaps`` (exchanges accepted by
        the ``swap`` search).

    References
    ----------
    W. de Vazelhes, X.-T. Yuan and B. Gu, "Optimization over Sparse Support-Preserving Sets:
    Two-Step Projection with Global Optimality Guarantees", ICML 2025 (arXiv:2506.08558).
    P. Zhou, X.-T. Yuan and J. Feng, "Efficient Stochastic Gradient Hard Thresholding",
    NeurIPS 2018. W. de Vazelhes, H. Zhang, H. Wu, X.-T. Yuan and B. Gu, "Zeroth-Order
    Hard-Thresholding: Gradient Error vs. Expansivity", NeurIPS 2022. J. Zhu, C. Wen,
    J. Zhu, H. Zhang and X. Wang, "A polynomial algorithm for best-subset selection
    problem", PNAS 117(52), 2020 (splicing, used by ``swap``).

    Examples
    --------
    >>> import numpy as np, jitopt
    >>> from jitopt.sets import NonNegative
    >>> from jitopt.sparse import iht
    >>> X, y, beta = jitopt.problems.sparse_regression_data(100, 30, 3, rng=0)
    >>> res = iht(jitopt.problems.least_squares(X, y), k=3, constraint=NonNegative())
    >>> bool(np.array_equal(res.support, np.flatnonzero(beta))), res.status.name
    (True, 'CONVERGED')
    """
    if not isinstance(problem.manifold, Euclidean) or len(problem.manifold.shape) != 1:
        raise ValueError(f"iht needs a problem on jitopt.manifolds.Euclidean(d), got "
                         f"{problem.manifold!r}")
    d = problem.manifold.shape[0]
    n_free = check_int("n_unconstrained", n_unconstrained, low=0, high=d - 1)
    p = d - n_free
    k = check_int("k", k, low=1, high=p)
    forced = check_always_select(always_select, p, k)
    check_choice("variant", variant, _VARIANTS)
    if variant == "stochastic" and not isinstance(problem, FiniteSumProblem):
        raise TypeError("variant='stochastic' needs a jitopt.FiniteSumProblem")
    c = check_constraint(constraint, p)
    selection = resolve_selection(selection, c)
    relax = check_real("relax", relax, low=1.0)
    k_work = min(p, int(math.ceil(relax * k - 1e-12)))
    refit = relax > 1 if refit is None else bool(refit)
    swap = _check_swap(swap, relax, problem, c, n_free, variant)
    maxiter = check_int("maxiter", maxiter, low=0)
    max_time = check_real("max_time", max_time, low=0.0)
    tol = check_real("tol", tol, low=0.0)
    min_step = check_real("min_step", min_step, low=0.0)
    refit_maxiter = check_int("refit_maxiter", refit_maxiter, low=0)
    if variant != "deterministic" or not (rng is None or isinstance(rng, np.random.Generator)):
        rng = check_rng(rng)  # (the deterministic variant draws nothing: no generator made)
    eta, backtrack = _check_step(step, lipschitz, variant, problem)
    check_choice("jit", jit, ("auto", False))
    # a problem with a compiled oracle (least squares) runs the compiled loop
    compiled = (jit == "auto" and getattr(problem, "kernel_args", None) is not None
                and variant == "deterministic")
    oracle = _Oracle(problem, variant, rng)
    if variant == "stochastic":
        oracle.b0 = check_int("batch_size", batch_size, low=1)
        oracle.b_growth = check_real("batch_growth", batch_growth, low=1.0)
    oracle.mu = check_real("smoothing", smoothing, low=0.0, low_open=True)
    if variant == "zeroth_order":
        oracle.q0 = check_int("n_directions", n_directions, low=1)
        oracle.q_growth = check_real("direction_growth", direction_growth, low=1.0)
        q_max = d if max_directions is None else check_int("max_directions", max_directions,
                                                           low=1)
        oracle.q_max = max(q_max, oracle.q0)
        oracle.s2 = None if subspace_size is None else \
            check_int("subspace_size", subspace_size, 1, d)
        oracle.estimator = check_choice("estimator", estimator, ("sphere", "coordinate"))
    op = TwoStep(c, p, k_work, selection, forced)
    w = np.zeros(d) if x0 is None else check_array("x0", x0, ndim=1)
    if w.shape != (d,):
        raise ValueError(f"x0 must have shape ({d},), got {w.shape}")
    w = op(w)
    # the relaxed run only provides starts for the pruning: a looser tolerance suffices
    loop_tol = tol if k_work == k else max(tol, _RELAXED_TOL_SWAP if swap > 0 else _RELAXED_TOL)

    if k_work > k:
        inner = dict(constraint=c, variant=variant, selection=selection, step=step,
                     lipschitz=lipschitz, maxiter=maxiter, tol=tol, refit=True, swap=0,
                     n_unconstrained=n_free, batch_size=batch_size,
                     batch_growth=batch_growth, n_directions=n_directions,
                     direction_growth=direction_growth, max_directions=max_directions,
                     smoothing=smoothing, subspace_size=subspace_size, estimator=estimator,
                     min_step=min_step, refit_maxiter=refit_maxiter, jit=jit, rng=rng,
                     max_time=max_time, always_select=forced)
        finish = PruneAndPolish(k, swap, inner)
    elif swap > 0:
        finish = ExchangeSearch(k, swap)
    elif refit:
        finish = Refit(variant, refit_maxiter)
    else:
        finish = None
    method = HardThresholding(op, oracle, compiled, eta, backtrack, loop_tol, finish,
                              k, selection, dict(maxiter=maxiter, max_time=max_time, tol=tol,
                                                 min_step=min_step))
    return run(problem, method, w,
               stop=StepVerdict() | MaxIter(maxiter) | MaxTime(max_time),
               callback=callback, history=history, disp=disp)


def _check_swap(swap, relax, problem, constraint, n_free, variant):
    """``swap`` checked, ``"auto"`` resolved (see :func:`iht`)."""
    can_swap = constraint.separable and variant == "deterministic" and (
        (hasattr(problem, "gram_rows_in_place") and n_free == 0)
        or hasattr(problem, "gradient_and_curvature"))
    if isinstance(swap, str) and swap == "auto":
        return _SWAP if relax > 1 and can_swap else 0
    swap = check_int("swap", swap, low=0)
    if swap > 0 and not can_swap:
        raise ValueError("swap > 0 needs a least-squares problem (jitopt.problems."
                         "least_squares) with n_unconstrained=0 or a GLM loss (Poisson, "
                         "Logistic), a separable constraint (a box, the orthant or "
                         "none) and variant='deterministic'")
    return swap


class HardThresholding(Algorithm):
    """The IHT loop (:func:`~jitopt.sparse._loops.python_step` or its compiled chunks,
    chosen once) at the working sparsity ``op.k``, then the post-processing ``finish``
    (prune and polish, exchange search or refit; ``None`` for none) of its best iterate,
    unless the run was stopped by the callback or the time limit."""

    measure = _MEASURE
    columns = ("step",)

    def __init__(self, op, oracle, compiled, eta, backtrack, loop_tol, finish, k, selection,
                 limits):
        self.op, self.oracle, self.compiled, self.eta = op, oracle, compiled, eta
        self.backtrack, self.loop_tol, self.post = backtrack, loop_tol, finish
        self.k, self.selection, self.limits = k, selection, limits
        self.min_step = limits["min_step"]
        self.n_increases = self.n_swaps = 0
        self.best_iteration = None  # of the iterate the result reports, once finished

    def fields(self, x, nit):
        p = self.op.p
        return {"support": np.flatnonzero(x[:p]), "n_nonzero": int(np.count_nonzero(x[:p])),
                "k_work": self.op.k, "n_increases": int(self.n_increases), "step": self.eta,
                "best_iteration": nit if self.best_iteration is None else
                self.best_iteration, "selection": self.selection, "n_swaps": self.n_swaps,
                "loop": "numba" if self.compiled else "python"}

    def start(self, problem, w):
        self.problem = problem
        f, g = self.oracle(w, 0)
        gmap = math.sqrt(gradient_step(self.op, w, g, self.eta)[2]) / self.eta
        g = np.ascontiguousarray(g)
        s = State(w, f, gmap, self.measure, extra={"step": self.eta}, g=g, eta=self.eta,
                  best=(f, w, g, 0))
        self.steps = CompiledSteps(s) if self.compiled else python_step
        return s

    def step(self, s, budget):
        if self.compiled:
            return self.steps(self, s, budget)
        return python_step(self, s)

    def finish(self, s, ended, budget):
        status, message = ended
        f, x, g, self.best_iteration = self.steps.best_iterate() if self.compiled else s.best
        eta, op, k = s.eta, self.op, self.k
        quick = status in (Status.CALLBACK, Status.MAXTIME)  # stop without the polishing runs
        changed = True
        if op.k > k and quick:
            x = op(x, k)
            f = self.problem.cost(x)
        elif self.post is not None and not quick:
            x, f, polished = self.post(self, x, eta, budget)
            s.nit += sum(r.nit for r in polished)
            self.n_increases += sum(r.n_increases for r in polished)
            if any(r.status == Status.MAXTIME for r in polished):
                status = Status.MAXTIME
        else:
            changed = False
        g_x = self.oracle.gradient(x) if changed else g
        s.x, s.fun = x, f
        s.stationarity = float(np.linalg.norm(x - op(x - eta * g_x, k))) / eta
        self.eta = eta
        if status != ended[0] or status != Status.CONVERGED:  # the message of the result
            message = verdict(status, s, tol_name="tol", **self.limits)[1]
        return status, message


class Refit:
    """The refit on the support of the best iterate (:func:`refit_on_support`)."""

    def __init__(self, variant, maxiter):
        self.variant, self.maxiter = variant, maxiter

    def __call__(self, alg, x, eta, budget):
        return refit_on_support(alg.problem, alg.op, x, self.variant, eta, self.maxiter) + ((),)


class ExchangeSearch:
    """The exchange search over supports of size ``k`` from the best iterate."""

    def __init__(self, k, swap):
        self.k, self.swap = k, swap

    def __call__(self, alg, x, eta, budget):
        x, f, alg.n_swaps = search_supports(alg.problem, x, self.k, alg.op.lower,
                                            alg.op.upper, self.swap, alg.op.forced)
        return x, f, ()


def search_supports(problem, x, k, lower, upper, swap, forced):
    """:func:`exchange_search`, or :func:`glm_exchange_search` for a GLM loss."""
    search = glm_exchange_search if hasattr(problem, "gradient_and_curvature") else \
        exchange_search
    return search(problem, x, k, lower, upper, swap, always_select=forced)


class PruneAndPolish:
    """Relax -> prune -> refit after the run at the relaxed sparsity (:func:`_prune_and_polish`)."""

    def __init__(self, k, swap, inner):
        self.k, self.swap, self.inner = k, swap, inner

    def __call__(self, alg, x, eta, budget):
        x, f, alg.n_swaps, polished = _prune_and_polish(
            alg.problem, alg.op, x, self.k, self.swap, eta, self.inner, budget.seconds)
        return x, f, polished


def _prune_and_polish(problem, op, x, k, swap, eta, inner, seconds_left):
    """Relax -> prune -> refit after a run at the relaxed sparsity ``op.k`` that ended at
    ``x``: two starts pruned to ``k`` by the selection rule (``x`` and its refit on its own
    support); from each, the exchange search (``swap > 0``), or :func:`iht` at ``k`` with
    the options ``inner`` (refitted at the end) and the refit of the pruned start itself as
    a fallback; ``seconds_left()`` is the time the runs at ``k`` may take. Returns ``(the best point, its cost, exchanges made, the results of the
    runs at k)``; an oracle fault in a run at ``k`` is raised again, stopping the caller."""
    variant, maxiter = inner["variant"], inner["refit_maxiter"]
    starts = (x, refit_on_support(problem, op, x, variant, eta, maxiter)[0])
    best, f_best, n_swaps, runs, seen = x, np.inf, 0, [], []
    for start in starts:
        pruned = op(start, k)
        support = np.flatnonzero(pruned)
        if any(np.array_equal(support, s) for s in seen):
            continue  # same pruned support as the first start: nothing new to try
        seen.append(support)
        if swap > 0:
            cand, f_cand, n = search_supports(problem, pruned, k, op.lower, op.upper, swap,
                                              op.forced)
            n_swaps += n
            cands = [(cand, f_cand)]
        else:
            time_left = max(seconds_left(), 0.0)
            res = iht(problem, pruned, k=k, **{**inner, "max_time": time_left})
            if "fault" in res:  # an oracle fault of the run at k stops this one
                raise res.fault
            runs.append(res)
            cands = [(res.x, res.fun),
                     refit_on_support(problem, op, pruned, variant, eta, maxiter)]
        for cand, f_cand in cands:
            if f_cand < f_best:
                best, f_best = cand, f_cand
    return best, f_best, n_swaps, runs


def iht_path(problem, ks, x0=None, **options):
    """:func:`iht` over an increasing list of sparsities, each warm-started from the last.

    Parameters
    ----------
    problem : jitopt.Problem
    ks : sequence of int
        Sparsity levels (sorted increasingly before use).
    x0 : array_like, optional
        Warm start of the first fit.
    **options
        Passed to :func:`iht` (all but ``k``).

    Returns
    -------
    list of OptimizeResult
        One result per sparsity, in increasing order of ``k`` (``result.k`` holds it).

    Examples
    --------
    >>> import jitopt
    >>> from jitopt.sparse import iht_path
    >>> X, y, beta = jitopt.problems.sparse_regression_data(60, 12, 3, rng=0)
    >>> path = iht_path(jitopt.problems.least_squares(X, y), [3, 1, 2])
    >>> [r.k for r in path], [r.n_nonzero for r in path]
    ([1, 2, 3], [1, 2, 3])
    """
    if "k" in options:
        raise TypeError("iht_path takes the sparsities in ks, not k")
    try:
        ks = sorted(int(check_int("ks", k, low=1)) for k in ks)
    except TypeError:
        raise TypeError("ks must be a sequence of positive integers") from None
    if not ks:
        raise ValueError("ks must not be empty")
    results = []
    for k in ks:
        res = iht(problem, x0, k=k, **options)
        res.k = k
        results.append(res)
        x0 = res.x
    return results
