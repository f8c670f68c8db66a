"""Riemannian limited-memory BFGS with a cautious update and a Wolfe line search."""

import inspect

import numpy as np

from .._core.registry import register_method
from .._core.result import Status
from .._core.run import Algorithm, State, run
from .._core.stopping import CommonStop, verdict
from ..validation import check_choice, check_int, check_limits, check_real, check_rng
from .._core.line_search import manifold_line, wolfe
from ._riemannian_kernels import PairMemory

__all__ = ["rlbfgs"]


@register_method("rlbfgs", tol_option="gtol", doc=dict(
    unit="iteration (accepted step)",
    history=r", and ``step`` (the accepted :math:`t_k`), ``pairs`` (pairs stored) and "
            r"``min_curvature`` (the least :math:`\langle s_i, y_i\rangle/(\|s_i\|\|y_i\|)` of "
            r"the stored pairs, NaN without pairs)"))
def rlbfgs(problem, x0=None, *, memory=10, cautious=1e-4, c1=1e-4, c2=0.9, approximate=True,
           transport="isometric", gtol=1e-6, f_target=None, maxiter=1000, max_time=np.inf,
           callback=None, history=False, disp=False, rng=None):
    r"""Riemannian limited-memory BFGS (L-BFGS) with a cautious update.

    Iterates :math:`x_{k+1} = R_{x_k}(t_k d_k)` with :math:`d_k = -\mathcal H_k
    \operatorname{grad} f(x_k)`, :math:`\mathcal H_k` the L-BFGS inverse Hessian
    approximation built by the two-loop recursion from the last ``memory`` pairs
    :math:`(s_i, y_i)`, moved to the tangent space at :math:`x_k` (see ``transport``),
    and :math:`t_k` a weak Wolfe step (first trial 1) from the line search of
    :doc:`/theory/riemannian`. After a step, with :math:`T` the
    manifold's transport from :math:`x_k` to :math:`x_{k+1}`,

    .. math::

        s = T(t_k d_k), \qquad y = \operatorname{grad} f(x_{k+1}) - T
        \operatorname{grad} f(x_k),

    and the pair is stored only when :math:`\langle s, y\rangle / \|s\|^2 \ge \theta
    \|\operatorname{grad} f(x_k)\|` (the cautious update of Li and Fukushima in the
    Riemannian form of Huang, Absil and Gallivan, 2018), so that :math:`\mathcal H_k`
    stays positive definite; a stored pair whose curvature :math:`\langle s_i,
    y_i\rangle` is no longer positive after transport is dropped. The initial scaling is
    :math:`\gamma = 1/\|\operatorname{grad} f(x_0)\|` (a first step of unit length), then
    :math:`\langle s, y\rangle/\langle y, y\rangle` of the newest pair. A direction that is
    not a descent direction, or a line search with no decrease, clears the memory and
    steps along :math:`-\gamma\operatorname{grad} f`; a second failure in a row stops
    with ``Status.SMALL_STEP``.

    Parameters
    ----------
    problem : jitopt.Problem
        Manifold and oracles; each line-search trial calls the fused ``cost_and_egrad``.
    x0 : array_like, optional
        Starting point (a random point drawn with ``rng`` if omitted).
    memory : int
        Number of pairs kept (at least 1).
    cautious : float
        :math:`\theta \ge 0` of the cautious test (0 keeps every pair of positive
        curvature).
    c1, c2 : float
        Wolfe constants, :math:`0 < c_1 < c_2 < 1`.
    approximate : bool
        Also accept the approximate Wolfe conditions (needed for gradient norms below
        about :math:`\sqrt{L\epsilon|f|}`).
    transport : {"isometric", "manifold"}
        How the pairs move between tangent spaces. ``"isometric"`` (default): on
        :class:`~jitopt.manifolds.Orthogonal` the left translation
        :math:`X\Omega \mapsto Y\Omega` and on :class:`~jitopt.manifolds.SPD`
        :math:`U \mapsto L_Y L_X^{-1} U L_X^{-\top} L_Y^\top` (Cholesky factors), both
        isometric and free once the pairs are stored in the matching coordinates; on
        the other manifolds, which have no cheap isometric transport, the manifold's
        ``transport``. ``"manifold"``: the manifold's ``transport`` everywhere. Where
        that transport is the tangent projection :math:`P` (the embedded manifolds) a
        stored pair is moved straight from where it was made to the current point,
        :math:`(Ps, Py)`, through the normal coordinates of the pairs on Stiefel,
        O(n), Grassmann and the sphere, in the tangent charts (factored, with no
        :math:`m\times n` product) on :class:`~jitopt.manifolds.FixedRankEmbedded`,
        forming :math:`Py` only on the others (see :doc:`/theory/riemannian`);
        elsewhere every pair is transported at every iteration.
    gtol : float
        Stop when the Riemannian gradient norm is at most ``gtol``.
    f_target : float, optional
        Also stop (successfully, ``Status.TARGET``) when the cost is at most this.
    maxiter : int
        Maximum number of iterations (accepted steps).
    max_time : float
        Maximum wall-clock seconds.
    {common options}

    Returns
    -------
    OptimizeResult
        ``x, fun, success, status, message, nit, nfev, njev, nifo, time``,
        ``stationarity`` (the Riemannian gradient norm at ``x``), ``n_skipped`` (pairs
        refused by the cautious test), ``n_resets`` (memory clearings) and ``history``
        if asked for.

    References
    ----------
    W. Huang, P.-A. Absil and K. A. Gallivan, "A Riemannian BFGS method without
    differentiated retraction for nonconvex optimization problems", SIAM J. Optim. 28(1)
    (2018). W. Huang, K. A. Gallivan and P.-A. Absil, "A Broyden class of quasi-Newton
    methods for Riemannian optimization", SIAM J. Optim. 25(3) (2015). D.-H. Li and
    M. Fukushima, "On the global convergence of the BFGS method for nonconvex
    unconstrained optimization problems", SIAM J. Optim. 11(4) (2001).

    Examples
    --------
    >>> import numpy as np, jitopt
    >>> problem = jitopt.problems.pca(np.diag([5.0, 4.0, 1.0, 0.5]), p=2)
    >>> res = jitopt.solvers.rlbfgs(problem, rng=0)
    >>> bool(res.success), round(res.fun, 8)
    (True, -9.0)
    """
    algorithm = checked_lbfgs(memory, cautious, c1, c2, approximate, transport)
    gtol, f_target, maxiter, max_time = check_limits(gtol, f_target, maxiter, max_time)
    M = problem.manifold
    x = M.random_point(check_rng(rng)) if x0 is None else M.validate_point(x0, "x0")
    return run(problem, algorithm, x, stop=CommonStop("gtol", gtol, f_target, maxiter, max_time),
               callback=callback, history=history, disp=disp)


def checked_lbfgs(memory, cautious, c1, c2, approximate, transport):
    """The :class:`LBFGS` of :func:`rlbfgs`'s options, checked."""
    check_choice("transport", transport, ("isometric", "manifold"))
    c1 = check_real("c1", c1, 0.0, 1.0, True, True)
    return LBFGS(check_int("memory", memory, low=1), check_real("cautious", cautious, low=0.0),
                 c1, check_real("c2", c2, c1, 1.0, True, True), approximate, transport)


class Sequence:
    """rlbfgs on a sequence of costs on one manifold, each solve from the point where the
    last one ended (the subproblems of the constrained methods), with rlbfgs's ``options``.

    ``solve(problem, x, keep, gtol, maxiter, max_time)`` returns the result of rlbfgs on
    ``problem`` from ``x``; with ``keep`` it starts with the pairs and the scaling the last
    solve ended with (the costs differ little: their gradients, not their curvature, moved),
    else with an empty memory. (``rng`` is unused: every solve starts from a given point.)
    """

    def __init__(self, options):
        bound = inspect.signature(rlbfgs).bind_partial(None, **options)
        bound.apply_defaults()
        self.algorithm = checked_lbfgs(*(bound.arguments[name] for name in (
            "memory", "cautious", "c1", "c2", "approximate", "transport")))
        self.f_target = check_limits(0.0, bound.arguments["f_target"], 0, 0.0)[1]

    def solve(self, problem, x, keep, gtol, maxiter, max_time):
        self.algorithm.keep = keep
        return run(problem, self.algorithm, x,
                   stop=CommonStop("gtol", gtol, self.f_target, maxiter, max_time))


class LBFGS(Algorithm):
    r""":math:`x_{k+1} = R_{x_k}(t_k d_k)`, :math:`d_k = -\mathcal H_k
    \operatorname{grad} f(x_k)` from the two-loop recursion over the kept pairs, with a
    Wolfe step; the memory is cleared when :math:`d_k` is no descent direction or a search
    fails, and the run ends when a search fails twice in a row. With ``keep`` set, a run
    from the point where the last one ended starts with its pairs and scaling."""

    columns = ("step", "pairs", "min_curvature")

    def __init__(self, memory, cautious, c1, c2, approximate, transport):
        self.memory, self.cautious, self.c1, self.c2 = memory, cautious, c1, c2
        self.approximate, self.isometric = approximate, transport == "isometric"
        self.n_skipped = self.n_resets = 0
        self.keep, self.last = False, None

    def fields(self, x, nit):
        return {"n_skipped": self.n_skipped, "n_resets": self.n_resets}

    def start(self, problem, x):
        self.problem, M = problem, problem.manifold
        self.reach = M.max_step
        f, g = problem.cost_and_rgrad(x)
        gnorm = M.norm(x, g)
        if self.keep and self.last is not None and len(self.pairs) and \
                np.array_equal(x, self.last.x):
            frame, gamma = self.frame, self.last.gamma
        else:
            self.frame = frame = M.pair_frame(self.isometric)
            self.pairs = PairMemory(frame, self.memory, np.shape(frame.to(x, g)))
            gamma = 1.0 / gnorm if gnorm > 0 else 1.0
        self.n_skipped = self.n_resets = 0
        # on O(n) the whole iteration runs in the Lie algebra, on the fixed-rank matrices in
        # the tangent charts: no ambient vectors
        self.coords = frame.line is not None and problem.has_cost_and_egrad
        self.failed = False  # the last line search found no decrease
        self.last = State(x, f, gnorm, self.measure, extra={"pairs": len(self.pairs)}, g=g,
                          gw=frame.to(x, g),  # the gradient in the frame's coordinates
                          gamma=gamma)
        return self.last

    def reset(self, s):
        self.pairs.clear()
        s.gamma = 1.0 / s.stationarity
        self.n_resets += 1

    def search(self, s):
        """``(t, out, dw)``: the Wolfe step along the L-BFGS direction (reset to the
        scaled steepest descent when it is no descent direction)."""
        M, x, g, gw, gnorm, pairs = self.problem.manifold, s.x, s.g, s.gw, s.stationarity, \
            self.pairs
        dw = pairs.direction(x, gw, s.gamma)
        if self.coords:
            slope, dnorm = float(np.vdot(gw, dw)), float(np.linalg.norm(dw))
        else:
            d = self.frame.back(x, dw) if len(pairs) else -s.gamma * g
            slope, dnorm = M.inner_product(x, g, d), M.norm(x, d)
        if not (slope < -1e-12 * dnorm * gnorm):  # not a descent direction
            self.reset(s)
            dw, slope, dnorm = -s.gamma * gw, -s.gamma * gnorm * gnorm, s.gamma * gnorm
            d = None if self.coords else -s.gamma * g
        line = self.frame.line(self.problem, x, dw) if self.coords else \
            manifold_line(self.problem, x, d)
        t, out, _ = wolfe(line, s.fun, slope, 1.0, c1=self.c1, c2=self.c2,
                          approximate=self.approximate, max_step=self.reach / dnorm)
        return t, out, dw

    def step(self, s, budget):
        while True:
            t, out, dw = self.search(s)
            if out is not None:
                break
            if self.failed or not len(self.pairs):
                return verdict(Status.SMALL_STEP, s, min_step=0.0)
            self.failed = True
            self.reset(s)
        self.failed = False
        if self.coords:
            f_new, _, x_new, eg, gw_new = out
            g_new = None
        else:
            f_new, _, x_new, eg, g_new = out
            gw_new = self.frame.to(x_new, g_new)
        pairs = self.pairs
        step, y = pairs.new_pair(s.x, x_new, t * dw, s.gw, gw_new)
        least = pairs.move(s.x, x_new)
        kept = pairs.add(x_new, step, y, self.cautious * s.stationarity)
        if kept is None:
            self.n_skipped += 1
        else:
            sy, yy, cos = kept
            least = min(least, cos)
            s.gamma = sy / yy
        s.x, s.fun, s.g, s.gw = x_new, f_new, g_new, gw_new
        self.frame.forget(keep=x_new)
        s.stationarity = float(np.linalg.norm(gw_new)) if self.coords else \
            self.problem.manifold.norm(x_new, g_new)
        s.nit += 1
        s.extra = {"step": t, "pairs": len(pairs),
                   "min_curvature": least if len(pairs) else np.nan}
        return None
