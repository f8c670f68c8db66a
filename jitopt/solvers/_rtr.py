"""Riemannian trust regions with a truncated conjugate-gradient inner solver."""

import math

import numpy as np

from .._core.registry import register_method
from .._core.result import Status
from .._core.run import Algorithm, State, run
from .._core.stopping import CommonStop, verdict
from ..validation import check_choice, check_int, check_limits, check_real, check_rng

__all__ = ["rtr", "TCG_STOPS"]

#: why the truncated CG stopped, the keys of ``result.tcg_stops``
TCG_STOPS = ("negative_curvature", "boundary", "model_increased", "linear", "superlinear",
             "maxinner")

_EPS = np.finfo(float).eps
_REPROJECT = 10  # inner iterations between projections of the tCG direction
_KEEP_BYTES = 2 ** 28  # memory for the tCG products kept for reuse after a rejection


def _tcg(chart, g, gnorm, hess, delta, kappa, theta, mininner, maxinner):
    """Steihaug-Toint truncated CG on the model ``<g, e> + <e, H e>/2`` in the ball of
    radius ``delta``, in the coordinates of ``chart``: ``(eta, H eta, stop reason, inner
    iterations)``. ``hess(j, u)`` is the product with the ``j``-th direction ``u`` (from
    0)."""
    inner = chart.inner
    eta = chart.zero()
    h_eta = chart.zero()
    r = g
    rr = gnorm * gnorm
    delta_dir = -g
    ee, ed, dd, model = 0.0, 0.0, rr, 0.0
    for j in range(1, maxinner + 1):
        h_dir = hess(j - 1, delta_dir)
        kap = inner(delta_dir, h_dir)
        alpha = rr / kap if kap != 0 else math.inf
        ee_new = ee + 2.0 * alpha * ed + alpha * alpha * dd
        if kap <= 0.0 or ee_new >= delta * delta:
            tau = (-ed + math.sqrt(max(ed * ed + dd * (delta * delta - ee), 0.0))) / dd
            return (eta + tau * delta_dir, h_eta + tau * h_dir,
                    "negative_curvature" if kap <= 0.0 else "boundary", j)
        eta_new = eta + alpha * delta_dir
        h_new = h_eta + alpha * h_dir
        model_new = inner(eta_new, g) + 0.5 * inner(eta_new, h_new)
        if model_new >= model:
            return eta, h_eta, "model_increased", j
        eta, h_eta, model, ee = eta_new, h_new, model_new, ee_new
        r = r + alpha * h_dir
        rr_new = inner(r, r)
        if j >= mininner and math.sqrt(rr_new) <= gnorm * min(gnorm ** theta, kappa):
            return eta, h_eta, ("linear" if kappa < gnorm ** theta else "superlinear"), j
        beta = rr_new / rr
        delta_dir = -r + beta * delta_dir
        if j % _REPROJECT == 0:  # tangent to rounding; project now and then against drift
            delta_dir = chart.reproject(delta_dir)
        ed = beta * (ed + alpha * dd)
        dd = rr_new + beta * beta * dd
        rr = rr_new
    return eta, h_eta, "maxinner", maxinner


@register_method("rtr", tol_option="gtol", doc=dict(
    unit="outer iteration",
    history=", and ``delta`` (the radius used), ``rho``, ``inner`` (tCG iterations) and "
            "``accepted``"))
def rtr(problem, x0=None, *, hess=None, delta_bar=None, delta0=None, rho_prime=0.1,
        rho_regularization=1e3, kappa=0.1, theta=1.0, mininner=1, maxinner=None,
        fd_step=2.0 ** -14, gtol=1e-6, f_target=None, maxiter=1000, max_time=np.inf,
        callback=None, history=False, disp=False, rng=None):
    r"""Riemannian trust regions with truncated conjugate gradients (RTR-tCG).

    At :math:`x_k` the model :math:`m(\eta) = f(x_k) + \langle g, \eta\rangle +
    \tfrac12\langle \eta, \mathcal H[\eta]\rangle` on the tangent space, with
    :math:`g = \operatorname{grad} f(x_k)` and :math:`\mathcal H` the Riemannian Hessian,
    is minimised approximately in the ball :math:`\|\eta\| \le \Delta_k` by
    Steihaug–Toint truncated CG, stopped at negative curvature, at the boundary, or once
    the residual is below :math:`\|g\|\min(\|g\|^\theta, \kappa)` (a local rate of order
    :math:`\min(1 + \theta, 2)`). The step :math:`x^+ = R_{x_k}(\eta)` is accepted when

    .. math::

        \rho = \frac{f(x_k) - f(x^+) + r}{-\langle g, \eta\rangle
        - \tfrac12 \langle\eta, \mathcal H[\eta]\rangle + r} > \rho', \qquad
        r = \max(1, |f(x_k)|)\,\epsilon\,\rho_{\text{reg}}

    (the regularisation of Conn, Gould and Toint keeps :math:`\rho` meaningful once both
    decreases are at rounding level); :math:`\Delta` is divided by 4 when the step is
    rejected or :math:`\rho < 1/4`, and doubled (at most :math:`\bar\Delta`) when
    :math:`\rho > 3/4` and tCG stopped at the boundary or at negative curvature.

    The Hessian-vector products: ``hess="exact"`` (default when the problem has an
    ``ehess`` oracle) uses ``manifold.euclidean_to_riemannian_hessian(x, egrad,
    ehess(x, u), u)``, one ``nhev`` each; ``hess="fd"`` (default otherwise) the finite
    difference of gradients along the retraction,
    :math:`(T_{y\to x}\operatorname{grad} f(y) - g)/c` with :math:`y = R_x(cu)`,
    :math:`c = h/\|u\|` (``fd_step`` :math:`h`), one gradient each, counted in ``njev``
    and in ``nhev``. After a rejected step tCG starts again from the same point and takes
    the same directions until the smaller radius stops it, so the products along the last
    path are kept and reused rather than evaluated again. With a fused ``cost_and_egrad``
    oracle the trial point gets its gradient with its cost, so an accepted step needs no
    further evaluation.

    Parameters
    ----------
    problem : jitopt.Problem
        Manifold and oracles (``ehess`` optional).
    x0 : array_like, optional
        Starting point (a random point drawn with ``rng`` if omitted).
    hess : {"exact", "fd"}, optional
        The Hessian-vector product, see above.
    delta_bar : float, optional
        Largest trust radius :math:`\bar\Delta`; default ``manifold.typical_dist``
        (:math:`\pi` on the sphere, :math:`\sqrt p` on Stiefel and Grassmann,
        :math:`\pi\sqrt n` on O(n), :math:`\sqrt{n(n+1)/2}` on SPD, the dimension on
        :class:`~jitopt.manifolds.FixedRankEmbedded`, :math:`\sqrt{\dim}` otherwise).
    delta0 : float, optional
        First radius, default :math:`\bar\Delta/8`.
    rho_prime : float
        Acceptance threshold :math:`\rho' \in [0, 1/4)`.
    rho_regularization : float
        :math:`\rho_{\text{reg}} \ge 0`.
    kappa, theta : float
        The tCG residual test.
    mininner, maxinner : int, optional
        Inner iterations at least and at most (default the manifold's dimension).
    fd_step : float
        :math:`h` of ``hess="fd"``.
    gtol : float
        Stop when the Riemannian gradient norm is at most ``gtol``.
    f_target : float, optional
        Also stop (successfully, ``Status.TARGET``) when the cost is at most this.
    maxiter : int
        Maximum number of outer iterations (accepted and rejected steps).
    max_time : float
        Maximum wall-clock seconds.
    {common options}

    Returns
    -------
    OptimizeResult
        ``x, fun, success, status, message, nit, nfev, njev, nifo, nhev, time``,
        ``stationarity`` (the Riemannian gradient norm at ``x``), ``ninner`` (tCG
        iterations in all), ``n_rejected``, ``tcg_stops`` (a dict: stop reason -> count)
        and ``history`` if asked for. ``Status.SMALL_STEP`` when the radius falls below
        :math:`\epsilon\bar\Delta`.

    References
    ----------
    P.-A. Absil, C. G. Baker and K. A. Gallivan, "Trust-region methods on Riemannian
    manifolds", Found. Comput. Math. 7(3) (2007). N. Boumal, "Riemannian trust regions
    with finite-difference Hessian approximations are globally convergent", GSI (2015).
    A. R. Conn, N. I. M. Gould and Ph. L. Toint, *Trust-Region Methods*, SIAM (2000).

    Examples
    --------
    >>> import numpy as np, jitopt
    >>> A = np.diag([5.0, 4.0, 1.0, 0.5])
    >>> problem = jitopt.Problem(jitopt.manifolds.Sphere(4), lambda x: -x @ A @ x,
    ...                          lambda x: -2 * A @ x, ehess=lambda x, u: -2 * A @ u)
    >>> res = jitopt.solvers.rtr(problem, rng=0)
    >>> bool(res.success), round(res.fun, 8)
    (True, -5.0)
    """
    if hess is None:
        hess = "exact" if problem.has_ehess and hasattr(
            problem.manifold, "euclidean_to_riemannian_hessian") else "fd"
    check_choice("hess", hess, ("exact", "fd"))
    if hess == "exact" and not problem.has_ehess:
        raise ValueError("hess='exact' needs a problem with an ehess oracle; use hess='fd'")
    if hess == "exact" and not hasattr(problem.manifold, "euclidean_to_riemannian_hessian"):
        raise TypeError(f"hess='exact' needs euclidean_to_riemannian_hessian on "
                        f"{problem.manifold!r}; use hess='fd'")
    M = problem.manifold
    delta_bar = M.typical_dist if delta_bar is None else check_real(
        "delta_bar", delta_bar, low=0.0, low_open=True)
    delta = delta_bar / 8 if delta0 is None else check_real(
        "delta0", delta0, low=0.0, high=delta_bar, low_open=True)
    rho_prime = check_real("rho_prime", rho_prime, 0.0, 0.25, high_open=True)
    rho_regularization = check_real("rho_regularization", rho_regularization, low=0.0)
    kappa = check_real("kappa", kappa, 0.0, 1.0, True, True)
    theta = check_real("theta", theta, low=0.0)
    mininner = check_int("mininner", mininner, low=0)
    maxinner = max(M.dim, 1) if maxinner is None else check_int("maxinner", maxinner, low=1)
    fd_step = check_real("fd_step", fd_step, low=0.0, low_open=True)
    gtol, f_target, maxiter, max_time = check_limits(gtol, f_target, maxiter, max_time)
    x = M.random_point(check_rng(rng)) if x0 is None else M.validate_point(x0, "x0")

    return run(problem, TrustRegions(hess, delta_bar, delta, rho_prime, rho_regularization,
                                     kappa, theta, mininner, maxinner, fd_step), x,
               stop=CommonStop("gtol", gtol, f_target, maxiter, max_time),
               callback=callback, history=history, disp=disp)


class TrustRegions(Algorithm):
    r"""The model step of :func:`_tcg` in a ball of radius :math:`\Delta_k`, accepted when
    the ratio :math:`\rho_k` of actual to predicted decrease exceeds ``rho_prime``, with
    :math:`\Delta_k` divided by 4 or doubled by :math:`\rho_k`."""

    columns = ("delta", "rho", "inner", "accepted")

    def __init__(self, hess, delta_bar, delta, rho_prime, rho_regularization, kappa, theta,
                 mininner, maxinner, fd_step):
        self.hess, self.delta_bar, self.delta, self.rho_prime = hess, delta_bar, delta, \
            rho_prime
        self.rho_regularization, self.kappa, self.theta = rho_regularization, kappa, theta
        self.mininner, self.maxinner, self.fd_step = mininner, maxinner, fd_step
        self.ninner = self.n_rejected = 0
        self.stops = dict.fromkeys(TCG_STOPS, 0)

    def fields(self, x, nit):
        return {"ninner": self.ninner, "n_rejected": self.n_rejected,
                "tcg_stops": dict(self.stops)}

    def start(self, problem, x):
        self.problem = problem
        self.fused = problem.has_cost_and_egrad
        f, eg = problem.cost_and_egrad(x)
        s = State(x, f, 0.0, self.measure)
        self.move_to(s, x, eg)
        # products kept for reuse after a rejection: at most _KEEP_BYTES of them
        self.keep = max(1, _KEEP_BYTES // (16 * max(int(np.size(s.g)), 1)))
        s.hessian = self.hessian_at(s.chart, eg, s.g)
        return s

    def move_to(self, s, x, eg):
        """The chart, gradient and its norm at the new iterate ``x``."""
        s.x, s.chart = x, self.problem.manifold.tangent_chart(x)
        s.g = s.chart.gradient(eg)
        s.stationarity = math.sqrt(s.chart.inner(s.g, s.g))

    def hessian_at(self, chart, eg, g):
        """The Hessian-vector product at the chart's point, remembering its values along
        the tCG path: after a rejected step tCG runs again from the same point with a
        smaller radius, takes the same directions, and reuses them (no new oracle
        call)."""
        problem, fd_step = self.problem, self.fd_step
        if self.hess == "exact":
            product = chart.hessian(eg, problem.ehess)
        else:
            def product(w):
                wn = math.sqrt(chart.inner(w, w))
                if wn < _EPS:
                    return chart.zero()
                c = fd_step / wn
                y = problem.manifold.tangent_chart(chart.retraction(c * w))
                problem.counts.add(nhev=1)
                return (chart.moved_from(y, y.gradient(problem.egrad(y.x))) - g) / c
        path = []

        def hessian(j, w):
            if j < len(path):
                return path[j]
            hw = product(w)
            if len(path) < self.keep:
                path.append(hw)
            return hw
        return hessian

    def step(self, s, budget):
        if self.delta < _EPS * self.delta_bar:
            return verdict(Status.SMALL_STEP, s, min_step=0.0)
        chart, g, f = s.chart, s.g, s.fun
        eta, h_eta, why, inner = _tcg(chart, g, s.stationarity, s.hessian, self.delta,
                                      self.kappa, self.theta, self.mininner, self.maxinner)
        self.ninner += inner
        self.stops[why] += 1
        x_new = chart.retraction(eta)
        # with a fused oracle the gradient comes with the cost at no extra work
        f_new, eg_new = self.problem.cost_and_egrad(x_new) if self.fused else \
            (self.problem.cost(x_new), None)
        reg = max(1.0, abs(f)) * _EPS * self.rho_regularization
        den = -chart.inner(g, eta) - 0.5 * chart.inner(eta, h_eta) + reg
        rho = (f - f_new + reg) / den if den != 0 else math.nan
        accepted = den >= 0 and rho > self.rho_prime
        used = self.delta
        if not accepted or not rho >= 0.25:
            self.delta /= 4
        elif rho > 0.75 and why in ("negative_curvature", "boundary"):
            self.delta = min(2 * self.delta, self.delta_bar)
        if accepted:
            s.fun = f_new
            eg = eg_new if self.fused else self.problem.egrad(x_new)
            self.move_to(s, x_new, eg)
            s.hessian = self.hessian_at(s.chart, eg, s.g)
        else:
            self.n_rejected += 1
        s.nit += 1
        s.extra = {"delta": used, "rho": rho, "inner": inner, "accepted": int(accepted)}
        return None
