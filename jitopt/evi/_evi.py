r"""Expected variational inequalities (EVIs): the front of the solver :func:`evi`.

Given a domain :math:`X \subset \mathbb R^d` (convex, compact) and any bounded operator
:math:`F : X \to \mathbb R^d` (monotone or not, even discontinuous), an
:math:`\varepsilon`-EVI solution for the deviations :math:`\Phi` is a distribution
:math:`\mu` over :math:`X` with

.. math::

    \operatorname{Gap}_\Phi(\mu) = \sup_{\phi \in \Phi}
    \mathbb E_{x \sim \mu} \langle F(x), x - \phi(x) \rangle \le \varepsilon,

(Zhang, Anagnostides, Tewolde, Berker, Farina, Conitzer and Sandholm, *Expected variational
inequalities*, ICML 2025). With :math:`\Phi` the affine self-maps of :math:`X` this is
computable in polynomial time for every bounded :math:`F`. The regret loop is in
:mod:`~jitopt.evi._ggm`, its column generation in :mod:`~jitopt.evi._cg`,
the ellipsoid against hope in :mod:`~jitopt.evi._eah`, the certificate in
:mod:`~jitopt.evi._gap` and the internal form of the domains in
:mod:`~jitopt.evi._domains`.
"""

import numpy as np

from .._core.registry import register_method
from .._core.run import run
from .._core.stopping import MaxIter, MaxTime, StepVerdict, Tolerance
from ..problems import VIProblem
from ..validation import check_array, check_choice, check_int, check_real, check_rng
from . import _kernels as _k
from ._domains import EVIDomain
from ._eah import EllipsoidAgainstHope
from ._ggm import RegretLearning, Reweighting

__all__ = ["evi"]

_LEARNERS = {"rm+": _k.LEARNER_RMP, "prm+": _k.LEARNER_PRMP, "hedge": _k.LEARNER_HEDGE}


@register_method("evi", VIProblem, tol_option="tol", doc=dict(
    unit="gap check",
    fields="``x`` (the mean of the current mixture), ``fun`` and ``stationarity`` (its "
           "certified gap) and ``nit`` (the rounds)",
    history=", and ``gap_con`` (the constant-deviation gap); ``fun`` and ``stationarity`` are "
            "the certified gap (NaN at iteration 0, before any round) and ``nfev`` counts the "
            "operator calls",
    rng="Seed of the random first point."))
def evi(problem, x0=None, *, deviations="linear", method="ggm", learner="rm+",
        weighting="linear", check_every=50, reweight=False, reweight_max=None, maxiter=20000,
        max_time=np.inf, tol=1e-3, callback=None, history=False, disp=False, rng=None):
    r"""Solve an expected variational inequality: a finite mixture of points with certified
    gap at most ``tol``.

    ``method="ggm"``: the Gordon–Greenwald–Marks :math:`\Phi`-regret loop (Gordon, Greenwald
    and Marks, ICML 2008, as used by Zhang et al., *Expected variational inequalities*,
    ICML 2025, Thm 4.3). Each round an
    external-regret learner over the affine self-maps of :math:`X` proposes :math:`(K_t, c_t)`,
    the round's point is a fixed point :math:`x_t = K_t x_t + c_t` in :math:`X`, and the
    learner is charged the linear loss :math:`(K, c) \mapsto \langle F(x_t), K x_t + c\rangle`.
    Then :math:`\operatorname{Gap}(\frac1T\sum_t \delta_{x_t}) \le \operatorname{Reg}_T / T`.
    The learners: on a simplex one learner per column of a column-stochastic :math:`K`
    (Blum–Mansour); on a product of simplices the regret circuit for
    :math:`\operatorname{conv}_j\{x \mapsto S x_j\}` per block; on a box one learner per row
    over the experts :math:`\{0, 1, x_j, 1 - x_j\}`; on a polytope a column-stochastic learner
    on barycentric coordinates over the vertices. Every simplex learner is regret
    matching+ (``"rm+"``), predictive regret matching+ (``"prm+"``) or Hedge.

    ``method="eah"``: the ellipsoid against hope (Zhang et al. 2025, Alg. 1), a slow
    reference for :math:`d \le 4`: the ellipsoid method on the infeasible program "find
    :math:`(K, c)` with :math:`\langle F(x), Kx + c - x\rangle \le -\varepsilon` for all
    :math:`x`", cut by the fixed points of its centres, then one LP for the weights.

    Parameters
    ----------
    problem : jitopt.problems.VIProblem
    x0 : array_like, optional
        The first point (a random point of :math:`X` when ``rng`` is given, else the first
        fixed point of the uniform learners). Not on a polytope.
    deviations : {"linear", "ce"}
        ``"linear"``: all affine self-maps (:math:`\Phi_{LIN}`; on a game, the anonymous
        linear correlated equilibria, ALCE). ``"ce"``: per-block linear maps on a product of
        simplices (on a game, correlated equilibria).
    method : {"ggm", "eah"}
    learner : {"rm+", "prm+", "hedge"}
    weighting : {"linear", "uniform"}
        Weights of the iterates (round ``t`` weighs ``t`` or 1) in the mixture and in the
        learners' losses.
    check_every : int
        Rounds between gap checks (the check is :math:`O(d^2)` from running sums), after
        checks at rounds 1, 2, 4, ... below it; each check is one iteration of the history
        and the callback, and the run returns the mixture of the best check (or a better
        reweighted one). For ``"eah"``: points between reweighting LPs.
    reweight : {False, True, "cg"}
        ``True``: also try the LP that minimises the gap over the weights of (at most
        ``reweight_max``, evenly spaced) iterates, after ``2 * check_every`` rounds (or at
        the first gap check within ``20 * tol``, if earlier), then each time the number of
        rounds doubles, and at the end of a run above ``tol``; its weights are kept when
        they lower the gap, and the run stops as soon as that gap is at most ``tol``. An LP
        that reaches its bound of 50 simplex pivots per row and column is skipped.
        ``"cg"`` (box, simplex, product of simplices with ``deviations="ce"``): on the same
        schedule, up to ``reweight_max`` restricted LPs of a row and column generation over
        all iterates, which also adds fixed points of the LP's dual (worst) deviations as
        new points, in the spirit of the ellipsoid against hope (one operator call each; the
        returned mixture may contain them). The restricted LPs are one HiGHS model
        (``highspy``), re-solved from the previous basis as rows and columns enter; if the
        rounds run out above ``tol``, one last call may solve ``8 * reweight_max`` of them.
        A departure from the paper, documented in the theory page.
    reweight_max : int, optional
        The most iterates in the LP of ``reweight=True`` (default 400), or the restricted
        LPs per call of ``"cg"`` (default 25).
    maxiter : int
        Maximum rounds (ellipsoid steps for ``"eah"``).
    max_time : float
        Maximum wall-clock seconds (checked before the rounds up to each gap check).
    tol : float
        Target gap :math:`\varepsilon > 0` of the deviations chosen.
    {common options}

    Returns
    -------
    OptimizeResult
        ``points`` (k, d) and ``weights`` (k,): the mixture; ``x`` its mean
        :math:`\mathbb E_\mu x`; ``fun`` = ``stationarity`` = ``gap``, its certified gap for
        ``deviations`` (``stationarity_measure`` ``"certified gap (linear)"`` or
        ``"certified gap (ce)"``); ``gap_lin`` (:math:`\Phi_{LIN}`), ``gap_con`` (constant
        deviations) and on a product of simplices the per-block arrays ``gap_alce``,
        ``gap_ce``, ``gap_cce``; ``fp_residual`` the largest fixed-point residual; ``nit``
        the rounds; ``nfev`` the operator calls (``njev = nifo = 0``); ``status`` (CONVERGED,
        MAXITER, MAXTIME, SMALL_STEP for a degenerate ellipsoid, CALLBACK; ORACLE_ERROR or
        NONFINITE when the operator raised or returned NaN, INNER_FAILURE when an LP failed,
        with the best mixture mean so far in ``x``), ``success``, ``message``, ``time``.

    Examples
    --------
    Rock-paper-scissors as a VI on the product of two simplices:

    >>> import numpy as np
    >>> from jitopt.problems import AffineOperator, VIProblem
    >>> from jitopt.sets import ProductOfSimplices
    >>> from jitopt.solvers import evi, evi_gap
    >>> A = np.array([[0.0, -1.0, 1.0], [1.0, 0.0, -1.0], [-1.0, 1.0, 0.0]])
    >>> F = AffineOperator(-np.block([[np.zeros((3, 3)), A], [-A.T, np.zeros((3, 3))]]))
    >>> problem = VIProblem(F, ProductOfSimplices([3, 3]))
    >>> res = evi(problem, tol=1e-3, deviations="ce")
    >>> res.status.name, bool(res.gap <= 1e-3)
    ('CONVERGED', True)
    >>> bool(abs(evi_gap(problem, res.points, res.weights).gap_ce.sum() - res.gap) < 1e-12)
    True
    """
    check_choice("deviations", deviations, ("linear", "ce"))
    check_choice("method", method, ("ggm", "eah"))
    check_choice("learner", learner, tuple(_LEARNERS))
    check_choice("weighting", weighting, ("linear", "uniform"))
    check_every = check_int("check_every", check_every, 1)
    if reweight not in (False, True, "cg"):
        raise ValueError(f'reweight must be False, True or "cg", got {reweight!r}')
    if reweight_max is None:
        reweight_max = 25 if reweight == "cg" else 400
    reweight_max = check_int("reweight_max", reweight_max, 2)
    maxiter = check_int("maxiter", maxiter, 0)
    max_time = check_real("max_time", max_time, 0.0)
    tol = check_real("tol", tol, 0.0, low_open=True)
    dom = EVIDomain(problem.domain, problem.dim)
    ce = deviations == "ce"
    if ce and (dom.box or dom.lift):
        raise ValueError('deviations="ce" needs a simplex or a product of simplices domain')
    if reweight == "cg" and (dom.lift or (not dom.box and not ce and dom.nblocks > 1)):
        raise ValueError('reweight="cg" needs a box, a simplex or a product of simplices with '
                         'deviations="ce"')
    if method == "eah":
        if ce:
            raise ValueError('method="eah" supports deviations="linear" only')
        dz = dom.d - (0 if dom.box or dom.lift else dom.nblocks)
        if dz > 4:
            raise ValueError(f'method="eah" is a reference for intrinsic dimension <= 4, '
                             f'got {dz}')
    gen = None if rng is None else check_rng(rng)
    y0 = None
    if x0 is not None:
        x0 = check_array("x0", x0)
        if x0.shape != (dom.d,) or not np.isfinite(x0).all() or \
                not problem.domain.contains(x0, 1e-9):
            raise ValueError(f"x0 must be a point of the domain of shape ({dom.d},)")
        if dom.lift:
            raise ValueError("x0 is not supported on a polytope (the start is a vertex mixture)")
        y0 = dom.clip(dom.to_y(x0))
    elif gen is not None:
        y0 = dom.random_point(gen)

    start = dom.to_x(dom.interior() if y0 is None else y0)
    limits = dict(tol=tol, maxiter=maxiter, max_time=max_time)
    measure = f"certified gap ({deviations})"
    if method == "eah":
        algorithm = EllipsoidAgainstHope(dom, check_every, limits, measure)
        stop = StepVerdict() | Tolerance("tol", tol)
    else:
        algorithm = RegretLearning(dom, y0, ce, _LEARNERS[learner], weighting == "linear",
                                   check_every, reweight, reweight_max, limits, measure)
        stop = Tolerance("tol", tol)
        if reweight:
            stop = stop | Reweighting(algorithm)
    return run(problem, algorithm, start, stop=stop | MaxIter(maxiter) | MaxTime(max_time),
               callback=callback, history=history, disp=disp)
