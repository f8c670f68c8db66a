r"""SERENA: Riemannian stochastic recursive variance-reduced gradient methods.

One estimator, :func:`srge`, and its presets registered as methods: ``r-srvrg``,
``r-svrrm``, ``r-hybrid-sgd`` (proposed by Liu et al., 2025) and the methods it subsumes,
``r-sgd``, ``r-svrg``, ``r-srg`` and ``r-srm``.
"""

import inspect
import math

import numpy as np

from .._core.problem import FiniteSumProblem
from .._core.registry import register_method
from .._core.result import NonFiniteOracle
from .._core.run import Algorithm, State, run
from .._core.stopping import FTarget, MaxIter, MaxPasses, MaxTime, Tolerance
from ..validation import check_choice, check_int, check_real, check_rng
from ._serena_steps import estimator_steps, steps_path
from ._serena_step_size import StepSize

__all__ = ["srge", "r_sgd", "r_svrg", "r_srg", "r_srm", "r_srvrg", "r_svrrm", "r_hybrid_sgd",
           "estimator_steps"]

_POWERS = {"constant": 0.0, "decay": 1.0, "sqrt": 0.5, "cbrt": 1.0 / 3.0}
_NO_BATCHES = np.zeros((0, 0), dtype=np.int64)


#: the particulars of srge's (and its presets') common options
_SRGE_DOC = dict(
    unit="checkpoint",
    history=r", and ``passes`` (passes over the data so far) and ``step`` (:math:`\eta_t`)",
    rng="Seed of the batches (and of ``x0`` when omitted): same seed, same iterates.")


@register_method("srge", FiniteSumProblem, tol_option="gtol", doc=_SRGE_DOC)
def srge(problem, x0=None, *, step_size=None, batch_size=None, epoch_length="auto",
         big_batch=None, beta=0.0, control_variate=False, independent=False,
         batch_size2=None, step_schedule="constant", step_decay=0.01,
         beta_schedule="constant", gtol=1e-6, f_target=None, max_passes=50.0, maxiter=None,
         max_time=np.inf, jit="auto", callback=None, history=False, disp=False, rng=None):
    r"""Stochastic recursive gradient estimator on a manifold (SERENA's unified method).

    For :math:`F(x) = \frac1n \sum_i f_i(x)` on a manifold with retraction :math:`R` and
    vector transport :math:`\mathcal T_{y \to x}`, the iterates are
    :math:`x_{t+1} = R_{x_t}(-\eta_t v_t)` with the estimator

    .. math::

        r_t &= \operatorname{grad} f_{S_t}(x_t)
               + \mathcal T_{x_{t-1}\to x_t}\bigl(v_{t-1}
               - \operatorname{grad} f_{S_t}(x_{t-1})\bigr),\\
        u_t &= \operatorname{grad} f_{S'_t}(x_t)
               - \alpha\,\mathcal T_{\tilde x\to x_t}\bigl(\operatorname{grad}
               f_{S'_t}(\tilde x) - \tilde g\bigr),\\
        v_t &= (1 - \beta_t)\, r_t + \beta_t\, u_t ,

    a convex combination of the recursive (SARAH/SPIDER) estimator :math:`r_t` and an
    unbiased one :math:`u_t` (SGD for :math:`\alpha = 0`, SVRG for :math:`\alpha = 1`).
    :math:`\operatorname{grad} f_S` is the *mean* Riemannian gradient over the batch
    :math:`S`. At a restart (every ``epoch_length`` steps, and at :math:`t = 0`) the
    snapshot becomes :math:`\tilde x = x_t`, :math:`\tilde g = \operatorname{grad}
    f_B(\tilde x)` over a batch of size ``big_batch`` and :math:`v_t = \tilde g`.
    Batches are drawn uniformly with replacement; a batch of size ``n`` is all samples.
    Terms with weight 0 are not evaluated, and every per-sample gradient is counted in
    ``nifo`` (a step with :math:`0 < \beta < 1`, :math:`\alpha = 1` and :math:`S' = S`
    costs :math:`3b`).

    Parameters
    ----------
    problem : jitopt.FiniteSumProblem
        Manifold and per-sample oracles (``egrad(x, idx)`` returns the mean).
    x0 : array_like, optional
        Starting point (random, drawn with ``rng``, if omitted).
    step_size : float, optional
        :math:`\eta_0 > 0`, kept for the whole run. Default: chosen and safeguarded by the
        solver, no tuning needed. It starts at :math:`\eta_0 = 1/(2\hat L)`
        (:math:`1/(4\hat L)` for an estimator that does not reduce the sampling noise:
        ``beta=1`` without ``control_variate``, or no restarts), where :math:`\hat L` is
        the largest absolute eigenvalue of the Riemannian Hessian of one batch's mean at
        ``x0``, from 10 steps of the power iteration on differences of batch gradients
        (:math:`20b` IFO, counted in ``passes``). An epoch that ends with a larger full
        cost than it started from is discarded (the iterate returns to the checkpoint,
        its IFO stay counted) and the step halves (for the noise-limited estimators, once
        an epoch has stood, at most once per doubling of the epochs run); the step never
        grows. The theory guide gives the rule's measurements against tuned steps.
    batch_size : int, optional
        :math:`b = |S_t|`, ``1 <= b <= n``; default :math:`\lceil\sqrt n\,\rceil`.
    epoch_length : int, "auto" or None
        Steps :math:`m` between restarts; ``"auto"`` is :math:`\lceil\sqrt n\,\rceil`,
        ``None`` restarts only at :math:`t = 0` (single loop).
    big_batch : int or "batch_size", optional
        :math:`B`, the snapshot batch size, ``1 <= B <= n``; default ``n`` (full
        gradient); ``"batch_size"`` means :math:`B = b`.
    beta : float
        :math:`\beta \in [0, 1]`, the weight of the unbiased part.
    control_variate : bool
        :math:`\alpha = 1` (SVRG control variate in :math:`u_t`) or :math:`\alpha = 0`.
    independent : bool
        Draw :math:`S'_t` independently of :math:`S_t` (else :math:`S'_t = S_t`).
    batch_size2 : int, optional
        :math:`|S'_t|` when ``independent``; default ``batch_size``.
    step_schedule : {"constant", "decay", "sqrt", "cbrt"}
        :math:`\eta_t = \eta_0 / (1 + \lambda t)^{p}` with :math:`p = 0, 1, 1/2, 1/3`.
    step_decay : float
        :math:`\lambda \ge 0`.
    beta_schedule : {"constant", "storm", "decay"}
        :math:`\beta_t = \beta`, the STORM coupling
        :math:`\beta_t = \min(1, \beta\,(\eta_t/\eta_0)^2)`, or
        :math:`\beta_t = \beta/(1 + \lambda t)^2` whatever the step schedule (the noise
        :math:`\beta_t^2\sigma^2/b` the unbiased part adds then vanishes while the step stays
        constant).
    gtol : float
        Stop when the full Riemannian gradient norm at a checkpoint is at most ``gtol``
        (``tol`` of :func:`jitopt.minimize`).
    f_target : float, optional
        Also stop (successfully, ``Status.TARGET``) when the cost at a checkpoint is at
        most ``f_target``.
    max_passes : float
        Stop (``Status.MAX_PASSES``) after this many passes over the data (``nifo / n``),
        checked at checkpoints.
    maxiter : int, optional
        Maximum number of steps (the last epoch is cut short to end there).
    max_time : float
        Maximum wall-clock seconds.
    jit : {"auto", False}
        ``"auto"`` runs the inner loop in Numba when the problem is a built-in one with
        compiled per-sample oracles (``problem.sample_kernel``) on a manifold and retraction
        the kernel knows (``problem.manifold.kernel_code`` is not ``None``: sphere, Stiefel
        and Grassmann with the QR retraction, SPD with ``exp``); ``False`` always uses the
        Python loop. ``result.loop`` says which ran.
    {common options}

    Returns
    -------
    OptimizeResult
        ``stationarity`` is the full Riemannian gradient norm at the last checkpoint; with
        ``passes`` and ``loop`` (``"numba"`` or ``"python"``). Checkpoints come after
        each epoch (every :math:`\lceil n/b\rceil` steps of a single loop); each evaluates
        the full cost and gradient for the stopping tests, ``callback`` and ``history``.
        ``nfev``, ``njev`` and ``nifo`` count every oracle call, checkpoints included;
        ``passes`` (also a column of ``history``) is the method's own IFO over :math:`n`:
        ``nifo`` minus the checkpoint gradients the method does not use (with
        :math:`B = n` a checkpoint's gradient is the next snapshot gradient, which counts).
        ``history`` also has the column ``step``, the :math:`\eta_0` of the next epoch.

    References
    ----------
    Y. Liu, M. Chen, C. Ji, H. Zhang and R. Wang, "SERENA: A unified stochastic recursive
    variance reduced gradient framework for Riemannian non-convex optimization", ICML 2025,
    PMLR 267:38144–38168. H. Kasai, H. Sato and B. Mishra, "Riemannian stochastic recursive
    gradient algorithm", ICML 2018. H. Zhang, S. J. Reddi and S. Sra, "Riemannian SVRG",
    NeurIPS 2016. A. Han and J. Gao, "Riemannian stochastic recursive momentum method for
    non-convex optimization", IJCAI 2021. Q. Tran-Dinh et al., "Hybrid stochastic gradient
    descent algorithms for stochastic nonconvex optimization", arXiv:1905.05920.

    Examples
    --------
    The top-2 principal subspace of 400 samples in dimension 8, with the recursive
    estimator (``beta=0``, R-SRG) and restarts every :math:`\lceil\sqrt n\,\rceil` steps:

    >>> import jitopt
    >>> Z = jitopt.problems.spiked_samples(400, 8, rng=0)
    >>> problem = jitopt.problems.finite_sum_pca(Z, 2)
    >>> res = jitopt.solvers.srge(problem, beta=0.0, max_passes=30, rng=0)
    >>> bool(abs(res.fun - problem.fopt) < 1e-10 * abs(problem.fopt)), res.loop
    (True, 'numba')
    """
    n = problem.n_samples
    if step_size is not None:
        step_size = check_real("step_size", step_size, low=0.0, low_open=True)
    root = math.ceil(math.sqrt(n))
    b = min(root, n) if batch_size is None else check_int("batch_size", batch_size, 1, n)
    if epoch_length == "auto":
        m = root
    elif epoch_length is None:
        m = None
    else:
        m = check_int("epoch_length", epoch_length, 1)
    if big_batch is None:
        B = n
    elif isinstance(big_batch, str) and big_batch == "batch_size":
        B = b
    else:
        B = check_int("big_batch", big_batch, 1, n)
    beta = check_real("beta", beta, 0.0, 1.0)
    control = bool(control_variate)
    independent = bool(independent)
    b2 = b if batch_size2 is None else check_int("batch_size2", batch_size2, 1, n)
    check_choice("step_schedule", step_schedule, tuple(_POWERS))
    lam = check_real("step_decay", step_decay, low=0.0)
    check_choice("beta_schedule", beta_schedule, ("constant", "storm", "decay"))
    gtol = check_real("gtol", gtol, low=0.0)
    if f_target is not None:
        f_target = check_real("f_target", f_target)
    max_passes = check_real("max_passes", max_passes, low=0.0, low_open=True)
    maxiter = None if maxiter is None else check_int("maxiter", maxiter, low=0)
    max_time = check_real("max_time", max_time, low=0.0)
    check_choice("jit", jit, ("auto", False))
    rng = check_rng(rng)
    M = problem.manifold
    x = M.random_point(rng) if x0 is None else M.validate_point(x0, "x0")

    noisy = m is None or (beta == 1.0 and not control)
    schedule = _Schedule(beta, beta_schedule, lam, step_schedule)
    algorithm = Srge(steps_path(problem, jit), rng, schedule, step_size, gtol, noisy, b, b2,
                     B, m, control, independent)
    stop = (Tolerance("gtol", gtol) | FTarget(f_target) | MaxPasses(max_passes)
            | MaxIter(math.inf if maxiter is None else maxiter) | MaxTime(max_time))
    return run(problem, algorithm, x, stop=stop, callback=callback, history=history,
               disp=disp)


class _Schedule:
    r"""The steps :math:`\eta_t` and weights :math:`\beta_t` of an epoch, by the rules of
    ``step_schedule`` and ``beta_schedule`` (chosen once)."""

    def __init__(self, beta, beta_schedule, lam, step_schedule):
        self.beta, self.lam, self.power = beta, lam, _POWERS[step_schedule]
        self.betas = {"constant": self._constant, "storm": self._storm,
                      "decay": self._decay}[beta_schedule]

    def __call__(self, nit, n_steps, eta0):
        """``(etas, betas)`` of the steps ``nit, ..., nit + n_steps - 1`` from the step
        ``eta0`` of the epoch."""
        t = np.arange(nit, nit + n_steps, dtype=float)
        etas = eta0 / (1.0 + self.lam * t) ** self.power
        return etas, self.betas(t, etas, eta0)

    def _constant(self, t, etas, eta0):
        return np.full(t.size, self.beta)

    def _storm(self, t, etas, eta0):
        return np.minimum(1.0, self.beta * (etas / eta0) ** 2)

    def _decay(self, t, etas, eta0):
        return self.beta / (1.0 + self.lam * t) ** 2


class Srge(Algorithm):
    """:func:`srge` as the driver runs it: each step is one epoch, from a checkpoint to the
    next, on the ``path`` chosen at setup (the compiled chunk or the Python chunk of
    :mod:`~jitopt.solvers._serena_steps`); an epoch that raises the full cost is discarded
    (:class:`~jitopt.solvers._serena_step_size.StepSize`)."""

    columns = ("passes", "step")

    def __init__(self, path, rng, schedule, step_size, gtol, noisy, batch_size, batch_size2,
                 big_batch, epoch_length, control, independent):
        self.path, self.rng, self.schedule = path, rng, schedule
        self.step_size, self.gtol, self.noisy = step_size, gtol, noisy
        self.b, self.b2, self.B, self.m = batch_size, batch_size2, big_batch, epoch_length
        self.control, self.independent = control, independent
        self.n = n = path.problem.n_samples
        # steps per epoch: m, or a pass's worth of batches without restarts
        self.epoch = max(math.ceil(n / batch_size), 1) if epoch_length is None else epoch_length

    def batches(self, rows, size):
        """``rows`` batches of ``size`` samples, drawn with replacement (all samples when
        ``size`` is ``n``)."""
        if size == self.n:
            return np.tile(self.path.problem.all_samples, (rows, 1))
        return self.rng.integers(0, self.n, size=(rows, size), dtype=np.int64)

    def passes(self):
        """The method's own IFO over ``n``: the run's ``nifo`` less the checkpoint
        gradients the method does not use."""
        return (self.problem.counts.own()[2] - self.ifo0 - self.unused) / self.n

    def fields(self, x, nit):
        return {"passes": self.passes(), "loop": self.path.loop}

    def start(self, problem, x):
        self.problem, M = problem, problem.manifold
        self.ifo0, self.unused = problem.counts.own()[2], 0
        f, g = self.path.checkpoint(x)
        self.unused += self.n
        gnorm = M.norm(x, g)
        if not np.isfinite(gnorm):
            raise NonFiniteOracle("The Riemannian gradient at x0 is not finite")
        if self.step_size is not None or gnorm <= self.gtol:  # (at a stationary start: unused)
            self.stepsize = StepSize(1.0 if self.step_size is None else self.step_size)
        else:  # an estimator that does not reduce the sampling noise gets a smaller step
            self.stepsize = StepSize.default(self.path, x, gnorm, self.batches(1, self.b),
                                             self.rng.standard_normal(M.shape), self.noisy)
        # fresh: g is a checkpoint gradient no snapshot has used yet
        return State(x, f, gnorm, self.measure, g=g, fresh=True,
                     extra={"passes": self.passes(), "step": self.stepsize.eta})

    def restart(self, s):
        """A new snapshot at ``s.x``: its gradient over a batch of size ``big_batch``
        (the checkpoint's full gradient when that is all samples)."""
        if self.B == self.n:
            s.ga = s.g  # the checkpoint's full gradient at x: the method uses it
            if s.fresh:
                self.unused -= self.n
                s.fresh = False
        else:
            s.ga = self.problem.rgrad(s.x, self.batches(1, self.B)[0])
        s.xa, s.v = s.x, s.ga

    def step(self, s, budget):
        if self.m is not None or s.nit == 0:
            self.restart(s)
        n_steps = self.epoch
        n_updates = n_steps - 1 if self.m is not None else n_steps
        left = budget.iterations(s)
        if n_steps > left:  # a last, shorter epoch
            n_steps = left
            n_updates = min(n_updates, n_steps - 1)
        idx = self.batches(n_updates, self.b)
        idx2 = self.batches(n_updates, self.b2) if self.independent else _NO_BATCHES
        etas, betas = self.schedule(s.nit, n_steps, self.stepsize.eta)
        try:
            status, steps, x, v, f, g = self.path.chunk(
                s.x, s.v, s.xa, s.ga, idx, idx2, etas, betas, self.control, self.independent)
        except np.linalg.LinAlgError as err:  # a factorisation met NaN or inf
            raise NonFiniteOracle(f"A matrix factorisation failed ({err}) within steps "
                                  f"{s.nit + 1}-{s.nit + n_steps} (try a smaller "
                                  f"step_size)") from err
        if status:
            raise NonFiniteOracle(f"A gradient estimate or the iterate became non-finite "
                                  f"at step {s.nit + steps}")
        s.nit += steps
        self.unused += self.n
        gnorm = self.problem.manifold.norm(x, g)
        if not (np.isfinite(gnorm) and np.isfinite(f)):
            raise NonFiniteOracle(f"The full cost or Riemannian gradient is not finite at "
                                  f"step {s.nit}")
        if self.stepsize.accept(s.fun, f):  # else back to the last checkpoint, with half the step
            s.x, s.v, s.fun, s.g, s.stationarity, s.fresh = x, v, f, g, gnorm, True
        s.extra = {"passes": self.passes(), "step": self.stepsize.eta}


# -- presets ---------------------------------------------------------------------------------

_PRESET_DOC = """{title}

    :func:`srge` with {setting}. Every option of :func:`srge` can be given and overrides
    the preset{extra}. The defaults in the signature are the preset's.

{sections}    References
    ----------
    {ref}

    Examples
    --------
    The top-2 principal subspace of 400 samples in dimension 8:

    >>> import jitopt
    >>> Z = jitopt.problems.spiked_samples(400, 8, rng=0)
    >>> problem = jitopt.problems.finite_sum_pca(Z, 2)
    >>> res = jitopt.solvers.{func}(problem, max_passes=30, rng=0)
    >>> bool(abs(res.fun - problem.fopt) < {tol} * abs(problem.fopt))
    True
    """


def _srge_sections():
    # The presets take srge's options: its Parameters and Returns sections, verbatim (the
    # common options filled in at their registration).
    doc = srge.__wrapped__.__doc__
    return doc[doc.index("    Parameters\n"):doc.index("    References\n")]


def _preset(name, title, setting, ref, extra="", tol=1e-5, **preset):
    def solver(problem, x0=None, **options):
        return srge(problem, x0, **{**preset, **options})

    solver.__name__ = name.replace("-", "_")
    solver.__qualname__ = solver.__name__
    solver.__doc__ = _PRESET_DOC.format(title=title, setting=setting, ref=ref, extra=extra,
                                        sections=_srge_sections(), func=solver.__name__,
                                        tol=tol)
    solver.preset = dict(preset)
    # the registry reads the option names from the signature: srge's, with the preset's
    # defaults
    sig = inspect.signature(srge)
    solver.__signature__ = sig.replace(parameters=[
        p.replace(default=preset[p.name]) if p.name in preset else p
        for p in sig.parameters.values()])
    return register_method(name, FiniteSumProblem, tol_option="gtol", doc=_SRGE_DOC)(solver)


r_sgd = _preset(
    "r-sgd", "Riemannian stochastic gradient descent.",
    r"``beta=1`` (:math:`v_t = \operatorname{grad} f_{S_t}(x_t)`), no restarts, "
    "``big_batch=batch_size`` and a decaying step "
    r":math:`\eta_t = \eta_0/(1 + \lambda t)` with :math:`\lambda = 0.01`",
    "S. Bonnabel, \"Stochastic gradient descent on Riemannian manifolds\", IEEE Trans. "
    "Automat. Control 58 (2013).",
    extra="; the first step also uses one batch of size ``batch_size``", tol=1e-3,
    beta=1.0, epoch_length=None, big_batch="batch_size", step_schedule="decay")
r_svrg = _preset(
    "r-svrg", "Riemannian stochastic variance-reduced gradient (R-SVRG).",
    r"``beta=1, control_variate=True``: :math:`v_t = \operatorname{grad} f_S(x_t) - "
    r"\mathcal T(\operatorname{grad} f_S(\tilde x) - \tilde g)`, restarts every "
    r":math:`m = \lceil\sqrt n\rceil` steps with the full gradient",
    "H. Zhang, S. J. Reddi and S. Sra, \"Riemannian SVRG: fast stochastic optimization on "
    "Riemannian manifolds\", NeurIPS 2016; H. Sato, H. Kasai and B. Mishra, \"Riemannian "
    "stochastic variance reduced gradient algorithm with retraction and vector transport\", "
    "SIAM J. Optim. 29 (2019).",
    beta=1.0, control_variate=True)
r_srg = _preset(
    "r-srg", "Riemannian stochastic recursive gradient (SARAH / SPIDER).",
    r"``beta=0``: :math:`v_t = \operatorname{grad} f_S(x_t) + \mathcal T(v_{t-1} - "
    r"\operatorname{grad} f_S(x_{t-1}))`, restarts every :math:`\lceil\sqrt n\rceil` steps "
    "with the full gradient",
    "H. Kasai, H. Sato and B. Mishra, \"Riemannian stochastic recursive gradient "
    "algorithm\", ICML 2018; P. Zhou, X.-T. Yuan and J. Feng, \"Faster first-order methods "
    "for stochastic non-convex optimization on Riemannian manifolds\", AISTATS 2019.",
    beta=0.0)
r_srm = _preset(
    "r-srm", "Riemannian stochastic recursive momentum (STORM).",
    r"``beta=0.1, beta_schedule='decay', step_decay=0.05``: "
    r":math:`v_t = \operatorname{grad} f_S(x_t) + (1-\beta_t)\mathcal T(v_{t-1} - "
    r"\operatorname{grad} f_S(x_{t-1}))` with a momentum weight "
    r":math:`\beta_t = \beta/(1 + \lambda t)^2 \to 0` and a constant step, restarts every "
    r":math:`\lceil\sqrt n\rceil` steps with the full gradient",
    "A. Han and J. Gao, \"Riemannian stochastic recursive momentum method for non-convex "
    "optimization\", IJCAI 2021; A. Cutkosky and F. Orabona, \"Momentum-based variance "
    "reduction in non-convex SGD\", NeurIPS 2019.",
    extra=". Both the vanishing weight and the restarts are needed on a finite sum: a "
          "constant :math:`\\beta` leaves a noise floor of order :math:`\\beta^2\\sigma^2/b`, "
          "and without restarts (``epoch_length=None``) the carried error of the recursion "
          "does not vanish; STORM's own coupling, :math:`\\beta_t \\propto \\eta_t^2` with "
          ":math:`\\eta_t \\propto t^{-1/3}`, is ``beta_schedule='storm', "
          "step_schedule='cbrt'``",
    beta=0.1, beta_schedule="decay", step_decay=0.05)
r_srvrg = _preset(
    "r-srvrg", "Riemannian stochastic recursive variance-reduced gradient (R-SRVRG).",
    r"``beta=0.1, control_variate=True`` and :math:`S' = S`: "
    r":math:`v_t = (1-\beta)\,r_t + \beta\,u_t^{\mathrm{SVRG}}`, the STORM recursion "
    r"applied to the SVRG estimator, restarts every :math:`\lceil\sqrt n\rceil` steps with "
    "the full gradient (a step costs :math:`3b` IFO)",
    "Y. Liu, M. Chen, C. Ji, H. Zhang and R. Wang, \"SERENA: A unified stochastic recursive "
    "variance reduced gradient framework for Riemannian non-convex optimization\", ICML "
    "2025, PMLR 267:38144-38168.",
    beta=0.1, control_variate=True)
r_svrrm = _preset(
    "r-svrrm", "Riemannian stochastic variance-reduced recursive momentum (R-SVRRM).",
    r"``beta=0.1, control_variate=True, independent=True``: recursive momentum "
    r":math:`v_t = (1-\beta)\,r_t + \beta\,u_t` whose unbiased part is the SVRG estimator "
    r"on a batch :math:`S'_t` drawn independently of :math:`S_t`, restarts every "
    r":math:`\lceil\sqrt n\rceil` steps with the full gradient (a step costs :math:`4b` IFO)",
    "Y. Liu, M. Chen, C. Ji, H. Zhang and R. Wang, \"SERENA\", ICML 2025 (the preset's settings are "
    "this library's choice; see the theory guide); Q. Tran-Dinh et al., "
    "arXiv:1905.05920 (the SARAH/SVRG hybrid with independent batches).",
    extra="; the other reading, STORM with periodic full-gradient restarts, is "
          "``control_variate=False, independent=False``",
    beta=0.1, control_variate=True, independent=True)
r_hybrid_sgd = _preset(
    "r-hybrid-sgd", "Riemannian hybrid stochastic gradient descent (R-Hybrid-SGD).",
    r"``beta=0.1, independent=True, beta_schedule='decay', step_decay=0.05``: "
    r":math:`v_t = (1-\beta_t) r_t + \beta_t\operatorname{grad} f_{S'_t}(x_t)` with an "
    r"independent batch :math:`S'_t`, a weight :math:`\beta_t = \beta/(1 + \lambda t)^2 "
    r"\to 0` and a constant step, restarts every :math:`\lceil\sqrt n\rceil` steps with "
    "the full gradient",
    "Y. Liu et al., \"SERENA\", ICML 2025; Q. Tran-Dinh, N. H. Pham, D. T. Phan and L. M. "
    "Nguyen, \"Hybrid stochastic gradient descent algorithms for stochastic nonconvex "
    "optimization\", arXiv:1905.05920 (2019).",
    extra=". With a constant :math:`\\beta` the estimator keeps a noise floor of order "
          r":math:`\beta^2\sigma^2/b`, and without restarts (``epoch_length=None``) the "
          "carried error of the recursion does not vanish",
    beta=0.1, independent=True, beta_schedule="decay", step_decay=0.05)
