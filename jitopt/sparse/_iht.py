r"""Iterative hard thresholding with the two-step projection (IHT-2SP and its variants)."""

import math

import numpy as np

from .._core.problem import FiniteSumProblem, Problem
from .._core.result import Monitor, Status
from .._validation import check_array, check_choice, check_int, check_real, check_rng
from ..sets import Box, ConvexSet, NonNegative, project_kernel
from ._kernels import SELECTIONS, box_qp, iht_step, splice_round, two_step

__all__ = ["iht", "iht_path", "two_step_projection", "hard_threshold", "zo_gradient",
           "resolve_selection"]

_UNCONSTRAINED = Box()
_VARIANTS = ("deterministic", "stochastic", "zeroth_order")
RELAXED_TOL = 1e-5
RELAXED_TOL_SWAP = 1e-2  # the relaxed run before the exchange search
_SWAP = 5  # default largest exchange of the support refinement after relax -> prune -> refit
_STEP_GROWTH = 1.25  # backtracking: growth of the step after one accepted at once


# --------------------------------------------------------------------------------------
# the operator
# --------------------------------------------------------------------------------------

def _constraint(constraint, p):
    """The set of ``constraint`` (None, "nonnegative" or a ConvexSet), checked for IHT."""
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


class _Operator:
    """The two-step projection at sparsity k on the first p coordinates of R^(p + free)."""

    def __init__(self, constraint, p, k, selection, n_free):
        self.args = constraint.kernel_args(p)
        self.p, self.k, self.rule, self.n_free = p, k, SELECTIONS[selection], n_free

    def __call__(self, z, k=None):
        p = self.p
        out = np.empty_like(z)
        zp = np.require(z[:p], float, "CW")
        two_step(*self.args, zp, self.k if k is None else k, self.rule, out[:p])
        out[p:] = z[p:]
        return out

    def step(self, w, g, eta):
        """``(2SP(w - eta g), <g, dw>, ||dw||^2, ||w||, same support)`` with dw the move."""
        out = np.empty_like(w)
        gdw, dw2, wnorm, same = iht_step(*self.args, w, np.require(g, float, "CW"),
                                         eta, self.k, self.rule, self.p, out)
        return out, gdw, dw2, wnorm, same

    def restricted(self, z, support):
        """Projection onto {x in the set, supp x in support} (free tail untouched)."""
        out = np.zeros_like(z)
        proj = np.empty(support.shape[0])
        project_kernel(*self.args, support, np.ascontiguousarray(z[support]), proj)
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
    """
    z = check_array("z", z, ndim=1)
    k = check_int("k", k, low=1, high=z.shape[0])
    c = _constraint(constraint, z.shape[0])
    return _Operator(c, z.shape[0], k, resolve_selection(selection, c), 0)(z)


def hard_threshold(z, k):
    r""":math:`H_k(z)`: keep the ``k`` entries of largest magnitude (ties to the smaller index)."""
    return two_step_projection(z, k)


# --------------------------------------------------------------------------------------
# zeroth-order estimator
# --------------------------------------------------------------------------------------

def zo_gradient(fun, x, n_directions=10, smoothing=1e-4, subspace_size=None, rng=None,
                f0=None, estimator="sphere"):
    r"""Zeroth-order gradient estimate from function values only.

    ``estimator="sphere"`` (default) averages random-direction forward differences

    .. math::

        \hat g(x) = \frac{d}{q\mu}\sum_{j=1}^q \bigl(f(x + \mu u_j) - f(x)\bigr)\,u_j ,

    each :math:`u_j` uniform on the unit sphere of a random coordinate subspace of dimension
    :math:`s_2` (``subspace_size``, default :math:`d`), as in de Vazelhes et al. (2022). Since
    :math:`\mathbb E[u u^\top] = I/d` and :math:`u` is sign-symmetric, :math:`\hat g` is
    unbiased on quadratics for any :math:`\mu`. ``estimator="coordinate"`` takes central
    differences along each coordinate (:math:`2d` queries, deterministic).

    Parameters
    ----------
    fun : callable
        ``fun(x) -> float``.
    x : ndarray (d,)
    n_directions : int
        :math:`q`.
    smoothing : float
        :math:`\mu > 0`.
    subspace_size : int, optional
        :math:`s_2 \in [1, d]`.
    rng : int or numpy.random.Generator, optional
    f0 : float, optional
        :math:`f(x)` if already known (saves one query).
    estimator : {"sphere", "coordinate"}

    Returns
    -------
    g : ndarray (d,)
    n_queries : int
        Calls made to ``fun``.
    """
    x = check_array("x", x, ndim=1)
    d = x.shape[0]
    mu = check_real("smoothing", smoothing, low=0.0, low_open=True)
    check_choice("estimator", estimator, ("sphere", "coordinate"))
    g = np.zeros(d)
    if estimator == "coordinate":
        for i in range(d):
            e = np.zeros(d)
            e[i] = mu
            g[i] = (fun(x + e) - fun(x - e)) / (2 * mu)
        return g, 2 * d
    q = check_int("n_directions", n_directions, low=1)
    s2 = d if subspace_size is None else check_int("subspace_size", subspace_size, 1, d)
    rng = check_rng(rng)
    queries = 0
    if f0 is None:
        f0 = fun(x)
        queries += 1
    # all directions at once: Gaussian entries on a random s2-subset of coordinates, normalized
    U = rng.standard_normal((q, d))
    if s2 < d:
        keep = np.argsort(rng.random((q, d)), axis=1)[:, :s2]
        mask = np.zeros((q, d), dtype=bool)
        np.put_along_axis(mask, keep, True, axis=1)
        U[~mask] = 0.0
    U /= np.linalg.norm(U, axis=1)[:, None]
    diffs = np.empty(q)
    for j in range(q):
        diffs[j] = fun(x + mu * U[j]) - f0
    queries += q
    g = diffs @ U
    return g * (d / (q * mu)), queries


# --------------------------------------------------------------------------------------
# the solver
# --------------------------------------------------------------------------------------

def iht(problem, k, x0=None, *, constraint=None, variant="deterministic",
        selection="magnitude", step="auto", lipschitz=None, maxiter=1000, tol=1e-7,
        relax=1.0, refit=None, swap="auto", n_unconstrained=0, batch_size=10, batch_growth=1.1,
        n_directions=10, direction_growth=1.1, max_directions=None, smoothing=1e-4,
        subspace_size=None, estimator="sphere", min_step=1e-14, refit_maxiter=5000,
        callback=None, history=False, disp=False, rng=None):
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
    block for least squares and with central differences on :math:`S` for the zeroth-order
    variant.

    Parameters
    ----------
    problem : jitopt.Problem
        A problem on ``jitopt.manifolds.Euclidean(d)``; a :class:`jitopt.FiniteSumProblem`
        for ``variant="stochastic"``. Only ``problem.cost`` is called by the zeroth-order
        variant. :func:`jitopt.problems.least_squares` gives a least-squares problem whose
        gradients of sparse points cost :math:`O(dk)` (cached Gram rows).
    k : int
        Sparsity of the returned point, ``1 <= k <= d - n_unconstrained``.
    x0 : array_like, optional
        Warm start; ``2SP`` of it is the first iterate (zero by default).
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
        :math:`R(w^+) \le R(w) + \langle g, w^+ - w\rangle + \|w^+ - w\|^2/(2\eta)`.
        ``"auto"`` is ``"backtracking"`` for the deterministic variant, else
        ``"lipschitz"``.
    lipschitz : float, optional
        A Lipschitz constant of :math:`\nabla R`.
    maxiter : int
        Iterations at most.
    tol : float
        Stop when the support is unchanged and
        :math:`\|w_{t+1} - w_t\| \le \text{tol}\cdot\max(1, \|w_t\|)` (for the stochastic
        variant, once the batch is full).
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
        does. The objective never increases, the
        point stays feasible with at most ``k`` nonzeros (exactly ``k`` unless no coordinate
        outside the support can lower :math:`R`). This is the splicing step of abess
        (Zhu et al. 2020) with the bounds in the refit; it is not part of the paper's method.
        It needs a least-squares problem (:func:`jitopt.problems.least_squares`), a
        separable constraint (a box, the orthant or none), the deterministic variant and
        ``n_unconstrained=0``. ``"auto"``: 5 when ``relax > 1`` and these hold, else 0.
    n_unconstrained : int
        The last ``n_unconstrained`` coordinates (e.g. an intercept) are neither thresholded
        nor constrained.
    batch_size, batch_growth : int, float
        :math:`b_0` and :math:`\gamma \ge 1` of the stochastic variant.
    n_directions, direction_growth, max_directions : int, float, int
        :math:`q_0`, :math:`\gamma` and :math:`q_{\max}` (default :math:`d`) of the
        zeroth-order variant.
    smoothing, subspace_size, estimator
        :math:`\mu`, :math:`s_2` and the estimator of :func:`zo_gradient`.
    min_step : float
        Backtracking gives up (``success=False``) below this step.
    refit_maxiter : int
        Iterations of the refit at most.
    callback, history, disp
        As in :func:`jitopt.solvers.rgd`.
    rng : int or numpy.random.Generator, optional
        Seed of the minibatches and directions.

    Returns
    -------
    OptimizeResult
        ``x`` (the best iterate, or the refitted point), ``fun``, ``grad_norm`` (norm of the
        gradient mapping :math:`\|w - 2SP(w - \eta g)\|/\eta`), ``success``, ``status``,
        ``message``, ``nit``, ``nfev`` (for the zeroth-order variant: the exact number of
        function queries), ``njev``, ``nifo``, ``time``, and ``support``, ``n_nonzero``,
        ``k_work`` (the relaxed sparsity), ``best_iteration``, ``n_increases`` (iterations
        where the objective went up), ``step`` (the last :math:`\eta`), ``selection``,
        ``n_swaps`` (exchanges accepted by the ``swap`` search).

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
    >>> res = iht(jitopt.problems.least_squares(X, y), 3, constraint=NonNegative())
    >>> bool(np.array_equal(res.support, np.flatnonzero(beta)))
    True
    """
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a jitopt.Problem, got {type(problem).__name__}")
    inner_options = dict(
        constraint=constraint, variant=variant, step=step, lipschitz=lipschitz,
        maxiter=maxiter, tol=tol, refit=True, swap=0, n_unconstrained=n_unconstrained,
        batch_size=batch_size, batch_growth=batch_growth, n_directions=n_directions,
        direction_growth=direction_growth, max_directions=max_directions, smoothing=smoothing,
        subspace_size=subspace_size, estimator=estimator, min_step=min_step,
        refit_maxiter=refit_maxiter)
    shape = problem.manifold.shape
    if len(shape) != 1 or type(problem.manifold).__name__ != "Euclidean":
        raise ValueError(f"iht needs a problem on jitopt.manifolds.Euclidean(d), got "
                         f"{problem.manifold!r}")
    d = shape[0]
    n_free = check_int("n_unconstrained", n_unconstrained, low=0, high=d - 1)
    p = d - n_free
    k = check_int("k", k, low=1, high=p)
    check_choice("variant", variant, _VARIANTS)
    if variant == "stochastic" and not isinstance(problem, FiniteSumProblem):
        raise TypeError("variant='stochastic' needs a jitopt.FiniteSumProblem")
    c = _constraint(constraint, p)
    selection = resolve_selection(selection, c)
    relax = check_real("relax", relax, low=1.0)
    k_work = min(p, int(math.ceil(relax * k - 1e-12)))
    refit = relax > 1 if refit is None else bool(refit)
    can_swap = (hasattr(problem, "gram_rows") and c.separable and n_free == 0
                and variant == "deterministic")
    if isinstance(swap, str) and swap == "auto":
        swap = _SWAP if relax > 1 and can_swap else 0
    else:
        swap = check_int("swap", swap, low=0)
        if swap > 0 and not can_swap:
            raise ValueError("swap > 0 needs a least-squares problem (jitopt.problems."
                             "least_squares), a separable constraint (a box, the orthant or "
                             "none), variant='deterministic' and n_unconstrained=0")
    maxiter = check_int("maxiter", maxiter, low=0)
    tol = check_real("tol", tol, low=0.0)
    min_step = check_real("min_step", min_step, low=0.0)
    refit_maxiter = check_int("refit_maxiter", refit_maxiter, low=0)
    rng = check_rng(rng)
    inner_options.update(selection=selection, rng=rng)
    if lipschitz is not None:
        lipschitz = check_real("lipschitz", lipschitz, low=0.0, low_open=True)
    if isinstance(step, str):
        check_choice("step", step, ("auto", "lipschitz", "backtracking"))
        if step == "auto":
            step = "backtracking" if variant == "deterministic" else "lipschitz"
        if step == "backtracking" and variant != "deterministic":
            raise ValueError("step='backtracking' is for variant='deterministic'; give a "
                             "float step or step='lipschitz'")
        backtracking = step == "backtracking"
        L = lipschitz
        if L is None and (step == "lipschitz"):
            if not hasattr(problem, "lipschitz"):
                raise ValueError("step='lipschitz' needs lipschitz=... (this problem has no "
                                 "lipschitz() method); or give step='backtracking' or a float")
            L = float(problem.lipschitz())
        if L is None:
            eta = 1.0
        else:
            eta = (0.5 if variant == "zeroth_order" else 1.0) / max(L, 1e-300)
    else:
        eta = check_real("step", step, low=0.0, low_open=True)
        backtracking = False
    if variant == "stochastic":
        b0 = check_int("batch_size", batch_size, low=1)
        b_growth = check_real("batch_growth", batch_growth, low=1.0)
    if variant == "zeroth_order":
        q0 = check_int("n_directions", n_directions, low=1)
        q_growth = check_real("direction_growth", direction_growth, low=1.0)
        q_max = d if max_directions is None else check_int("max_directions", max_directions,
                                                           low=1)
        q_max = max(q_max, q0)
        mu = check_real("smoothing", smoothing, low=0.0, low_open=True)
        s2 = None if subspace_size is None else check_int("subspace_size", subspace_size, 1, d)
        check_choice("estimator", estimator, ("sphere", "coordinate"))

    op = _Operator(c, p, k_work, selection, n_free)
    # the relaxed run only provides starts for the pruning: a looser tolerance suffices
    loop_tol = tol if k_work == k else \
        max(tol, RELAXED_TOL_SWAP if swap > 0 else RELAXED_TOL)
    w = np.zeros(d) if x0 is None else check_array("x0", x0, ndim=1)
    if w.shape != (d,):
        raise ValueError(f"x0 must have shape ({d},), got {w.shape}")
    w = op(w)

    monitor = Monitor(problem, callback, history, disp)

    def oracle(x, t):
        """(f(x), gradient estimate at x) of the chosen variant."""
        if variant == "deterministic":
            return problem.cost_and_egrad(x)
        if variant == "stochastic":
            b = min(problem.n_samples, int(math.ceil(b0 * b_growth ** t - 1e-9)))
            idx = problem.all_samples if b >= problem.n_samples else \
                np.sort(rng.choice(problem.n_samples, b, replace=False))
            return problem.cost(x), problem.egrad(x, idx)
        fx = problem.cost(x)
        q = min(q_max, int(math.ceil(q0 * q_growth ** t - 1e-9)))
        g, _ = zo_gradient(problem.cost, x, q, mu, s2, rng, f0=fx, estimator=estimator)
        return fx, g

    f, g = oracle(w, 0)
    nit = 0
    best = (f, w, g, 0)
    n_increases = 0
    status = None
    message = None
    if not (np.isfinite(f) and np.isfinite(g).all()):
        status, message = Status.NONFINITE, "The oracles returned a non-finite value at x0."
    elif monitor.iteration(0, w, f, np.nan):
        status = Status.CALLBACK
    while status is None:
        if nit >= maxiter:
            status = Status.MAXITER
            break
        tried = 0
        while True:
            w_new, gdw, dw2, wnorm, same_support = op.step(w, g, eta)
            if not backtracking:
                break
            tried += 1
            f_new, g_new = oracle(w_new, nit + 1)
            if not np.isfinite(f_new) or f_new <= f + gdw + dw2 / (2 * eta) + 1e-12 * abs(f):
                break
            eta *= 0.5
            if eta < min_step:
                status = Status.SMALL_STEP
                break
        if status is not None:
            break
        eta_used = eta
        if not backtracking:
            f_new, g_new = oracle(w_new, nit + 1)
        elif tried == 1:
            eta *= _STEP_GROWTH
        nit += 1
        if not (np.isfinite(f_new) and np.isfinite(g_new).all()):
            status = Status.NONFINITE
            message = (f"An oracle returned a non-finite value at iteration {nit}; x is the "
                       f"best finite iterate.")
            break
        n_increases += f_new > f
        move = math.sqrt(dw2)
        small = move <= loop_tol * max(1.0, wnorm)
        w, f, g = w_new, f_new, g_new
        if f < best[0]:
            best = (f, w, g, nit)
        # the gradient mapping ||w_t - 2SP(w_t - eta g_t)|| / eta at the previous iterate
        if monitor.iteration(nit, w, f, move / eta_used):
            status = Status.CALLBACK
            break
        full_batch = variant != "stochastic" or \
            b0 * b_growth ** nit >= problem.n_samples
        if same_support and small and full_batch:
            status = Status.CONVERGED
            message = ("Optimization terminated successfully: the support is unchanged and "
                       "the step is below tol.")

    f_best, x, g_best, best_it = best
    gmap = np.linalg.norm(x - op(x - eta * g_best)) / eta
    n_swaps = 0
    lo, hi = op.args[0], op.args[1]
    if k_work > k:
        # two starts pruned to k by the selection rule: the best relaxed iterate and its
        # refit on its own support; from each, the exchange search (swap > 0), or IHT at k
        # (refitted at the end) with the refit of the pruned start itself as a fallback;
        # the best of these is returned
        x_relaxed, _ = _refit_on(problem, op, x, variant, eta, refit_maxiter)
        f_best = np.inf
        seen = []
        for start in (x, x_relaxed):
            pruned = op(start, k)
            support = np.flatnonzero(pruned)
            if any(np.array_equal(support, s) for s in seen):
                continue  # same pruned support as the first start: nothing new to try
            seen.append(support)
            if swap > 0:
                cand, f_cand, n = _splice(problem, pruned, k, lo, hi, swap)
                n_swaps += n
                cands = [(cand, f_cand, np.nan)]
            else:
                polish = iht(problem, k, pruned, **inner_options)
                nit += polish.nit
                n_increases += polish.n_increases
                refitted = _refit_on(problem, op, pruned, variant, eta, refit_maxiter)
                cands = [(polish.x, polish.fun, polish.grad_norm), refitted + (np.nan,)]
            for cand, f_cand, gm in cands:
                if f_cand < f_best:
                    x, f_best, gmap = cand, f_cand, gm
    elif swap > 0 and status not in (Status.NONFINITE, Status.CALLBACK):
        x, f_best, n_swaps = _splice(problem, x, k, lo, hi, swap)
        gmap = np.nan
    elif refit:
        x, f_best = _refit_on(problem, op, x, variant, eta, refit_maxiter)
        gmap = np.nan
    res = monitor.result(x, f_best, gmap, nit, status, message)
    res.support = np.flatnonzero(x[:p])
    res.n_nonzero = int(res.support.shape[0])
    res.k_work = k_work
    res.best_iteration = best_it
    res.n_increases = int(n_increases)
    res.step = eta
    res.selection = selection
    res.n_swaps = n_swaps
    return res


def _splice(problem, x, k, lo, hi, max_swap, maxiter=200):
    r"""Local search over supports of size ``k`` for least squares in a box (``lo``, ``hi``).

    With :math:`S` the support, :math:`w` the exact box-constrained fit on it, :math:`g` the
    gradient and :math:`G = X^\top X/n`, each :math:`j \in S` costs
    :math:`R(w - w_j e_j) - R(w) = -w_j g_j + G_{jj} w_j^2/2` to drop, and each
    :math:`i \notin S` gains :math:`-\min_{l_i\le t\le u_i}(g'_i t + G_{ii} t^2/2)` to add,
    with :math:`g' = g - \sum_{j\in D} w_j G_j` the gradient once the dropped set :math:`D`
    is removed. For :math:`s = s_{\max}, \dots, 1` the :math:`s` cheapest coordinates of
    :math:`S` are exchanged with the :math:`s` best outside; if none of these lowers
    :math:`R`, each single :math:`j\in S` is tried with its best replacement. Every
    candidate support is refitted exactly (:func:`box_qp` on its Gram block) and the first
    one that lowers :math:`R` is kept; the search ends when none does. Returns
    ``(w, R(w), number of exchanges)``.
    """
    p = x.shape[0]
    diag = problem.gram_diagonal()
    rhs = problem.gram_rhs()
    X, n = problem.X, problem.n_samples
    S = np.flatnonzero(x)
    if S.shape[0] < k:  # fill the support up to k with the best coordinates to add
        gain = _add_gain(x[S] @ problem.gram_rows(S) - rhs, diag, lo, hi)
        gain[S] = -np.inf
        S = np.sort(np.concatenate([S, np.argsort(-gain, kind="stable")[:k - S.shape[0]]]))
    G = problem.gram_rows(S)
    v = x[S].copy()
    q = box_qp(_sym(G[:, S]), rhs[S], lo[S], hi[S], v, 10 * k + 10)
    thresh = 1e-10 * max(1.0, abs(problem.cost(x)))  # relative to R, not to q
    n_swaps = 0
    s_max = min(max_swap, k, p - k)
    for _ in range(maxiter):
        accepted, S, v, q = splice_round(G, S, v, q, X, rhs, diag, lo, hi, s_max, thresh)
        if not accepted:
            break
        G = problem.gram_rows(S)
        n_swaps += 1
    w = np.zeros(p)
    w[S] = v
    return w, problem.cost(w), n_swaps


def _sym(Q):
    return np.ascontiguousarray(0.5 * (Q + Q.T))


def _add_gain(g, diag, lo, hi):
    """Decrease of R from the best feasible value of each coordinate added alone."""
    t = np.clip(-g / np.maximum(diag, 1e-300), lo, hi)
    return -(g * t + 0.5 * diag * t * t)


def _refit_on(problem, op, x, variant, eta, maxiter):
    """Refit on the support of x: min R over {w in the set, supp w in supp x}.

    Least squares works on the k x k Gram block of the support (no oracle call but one
    cost evaluation of the result); other problems call their gradient on the support
    (central differences of the cost for the zeroth-order variant).
    """
    d, p = x.shape[0], op.p
    support = np.flatnonzero(x[:p])
    if hasattr(problem, "gram_block") and d == p:
        Q, c = problem.gram_block(support)
        args = op.args

        def proj(v):
            out = np.empty_like(v)
            project_kernel(*args, support, v, out)
            return out

        def cost(v):
            return 0.5 * v @ (Q @ v) - c @ v

        def fg(v):
            Qv = Q @ v
            return 0.5 * v @ Qv - c @ v, Qv - c

        v, _, _ = _refit(fg, proj, np.ascontiguousarray(x[support]), 1.0 / eta, maxiter, cost)
        w = np.zeros(d)
        w[support] = v
        return w, problem.cost(w)
    if variant == "zeroth_order":
        def fg(v):
            fv = problem.cost(v)
            gv = np.zeros(d)
            for i in np.concatenate([support, np.arange(p, d)]):
                e = np.zeros(d)
                e[i] = 1e-6 * max(1.0, abs(v[i]))
                gv[i] = (problem.cost(v + e) - problem.cost(v - e)) / (2 * e[i])
            return fv, gv
    else:
        def fg(v):
            return problem.cost_and_egrad(v)
    x, f, _ = _refit(fg, lambda v: op.restricted(v, support), x, 1.0 / eta, maxiter,
                     problem.cost)
    return x, f


def _refit(fg, proj, x, L, maxiter, cost):
    """FISTA with backtracking and function-value restart for min R over a fixed support.

    Stops when a step moves the point by at most 1e-12 relative, or when a restarted
    (plain projected-gradient) step no longer decreases the objective.
    """
    x = proj(x)
    fx = cost(x)
    y, t = x.copy(), 1.0
    restarted = False
    for _ in range(maxiter):
        fy, gy = fg(y)
        if not np.isfinite(fy):
            break
        while True:
            xn = proj(y - gy / L)
            fn = cost(xn)
            dv = xn - y
            if fn <= fy + gy @ dv + 0.5 * L * (dv @ dv) + 1e-13 * abs(fy) or L > 1e300:
                break
            L *= 2.0
        if fn >= fx and (restarted or fn > fx):
            if restarted:  # no decrease even from a gradient step at x: converged
                break
            y, t, restarted = x.copy(), 1.0, True
            continue
        restarted = False
        tn = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
        y = xn + ((t - 1.0) / tn) * (xn - x)
        done = np.linalg.norm(xn - x) <= 1e-12 * max(1.0, np.linalg.norm(x))
        x, fx, t = xn, fn, tn
        if done:
            break
    return x, fx, 1.0 / L


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
        Passed to :func:`iht`.

    Returns
    -------
    list of OptimizeResult
        One result per sparsity, in increasing order of ``k`` (``result.k`` holds it).
    """
    try:
        ks = sorted(int(check_int("ks", k, low=1)) for k in ks)
    except TypeError:
        raise TypeError("ks must be a sequence of positive integers") from None
    if not ks:
        raise ValueError("ks must not be empty")
    results = []
    for k in ks:
        res = iht(problem, k, x0, **options)
        res.k = k
        results.append(res)
        x0 = res.x
    return results
