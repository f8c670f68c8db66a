"""The problem/oracle interface: a domain (manifold) plus counted oracles."""

import math

import numpy as np

from ..manifolds import Manifold, manifold_type_error
from .counts import OracleCounts
from ..validation import all_finite
from .result import NonFiniteOracle, OracleError

__all__ = ["BaseProblem", "Problem", "FiniteSumProblem"]


class BaseProblem:
    """What every problem type shares: oracle counters in ``counts``.

    The problem types (:class:`Problem`, :class:`FiniteSumProblem`, and those of
    :mod:`jitopt.problems`: DC, VI and barycenter problems) derive from it, so that
    :func:`jitopt.minimize` recognises a problem object in place of ``fun`` and the
    registry can tell which methods take it. A problem's oracles call the user's
    functions through :meth:`call_oracle`, which turns an exception into
    :class:`OracleError` and a non-finite value into :class:`NonFiniteOracle`; a solver
    run reports both as a failed result.

    Examples
    --------
    >>> import jitopt
    >>> issubclass(jitopt.FiniteSumProblem, jitopt.BaseProblem)
    True
    >>> jitopt.BaseProblem().counts
    OracleCounts(nfev=0, njev=0, nifo=0, nhev=0)
    """

    #: the method :func:`jitopt.minimize` runs when none is given (``None``: the first
    #: method of :func:`jitopt.available_methods` that takes the problem)
    default_method = None

    def __init__(self):
        self.counts = OracleCounts()

    @staticmethod
    def call_oracle(name, f, *args):
        """``f(*args)``, with an exception re-raised as :class:`OracleError` naming ``name``."""
        try:
            return f(*args)
        except OracleError:
            raise
        except Exception as err:
            raise OracleError(f"The oracle {name} raised an exception") from err

    @staticmethod
    def check_finite(name, value):
        """``value``, or :class:`NonFiniteOracle` if it holds NaN or inf."""
        if isinstance(value, float):
            finite = math.isfinite(value)
        else:
            finite = all_finite(value if isinstance(value, np.ndarray) else np.asarray(value))
        if not finite:
            raise NonFiniteOracle(f"The oracle {name} returned a non-finite value (NaN or inf)")
        return value


def _check_callable(name, f, required):
    if f is None:
        if required:
            hint = ' (or "jax": JAX differentiates cost, jitopt[jax])' if name == "egrad" else ""
            raise TypeError(f"{name} is required and must be callable{hint}")
        return
    if not callable(f):
        raise TypeError(f"{name} must be callable, got {type(f).__name__}")


def _autodiff(manifold, cost, egrad, cost_and_egrad, ehess):
    """The oracles with ``egrad="jax"`` and/or ``ehess="jax"`` replaced by JAX's."""
    for name, value in (("egrad", egrad), ("ehess", ehess)):
        if isinstance(value, str) and value != "jax":
            raise ValueError(f'{name} must be callable, None or "jax", got {value!r}')
    if cost_and_egrad is not None:
        raise ValueError('cost_and_egrad cannot be given with "jax": JAX builds it from cost')
    from .autodiff import jax_oracles

    jcost, jegrad, jboth, jehess = jax_oracles(cost, manifold.dtype)
    if egrad == "jax":
        cost, egrad, cost_and_egrad = jcost, jegrad, jboth
    return cost, egrad, cost_and_egrad, jehess if ehess == "jax" else ehess


class Problem(BaseProblem):
    r"""A smooth problem :math:`\min_{x \in \mathcal M} f(x)` with counted oracles.

    Parameters
    ----------
    manifold : jitopt.manifolds.Manifold
        The domain.
    cost : callable
        ``cost(x) -> float``, the cost at a point ``x`` (an array of shape
        ``manifold.shape``).
    egrad : callable or "jax", optional
        ``egrad(x) -> ndarray``, the Euclidean gradient of (any smooth extension of) the
        cost, of shape ``manifold.shape``. Solvers turn it into the Riemannian gradient with
        ``manifold.euclidean_to_riemannian_gradient``. Every method needs it but the
        derivative-free ones (``nelder_mead``, ``particle_swarm``), which take a cost
        alone; the others refuse a problem without it with a ``TypeError``. ``"jax"``:
        differentiate ``cost``, written with ``jax.numpy``, by JAX (the extra
        ``jitopt[jax]``; the fused ``cost_and_egrad`` then comes from
        ``jax.value_and_grad``; see :doc:`/theory/autodiff`).
    cost_and_egrad : callable, optional
        ``cost_and_egrad(x) -> (float, ndarray)``, both at once when they share work (for
        PCA both need ``A @ x``). Solvers use it when they need both at the same point.
    fopt, xopt : optional
        The known optimal value and a known minimizer, when there are any (built-in
        problems set them; the tour, tests and benchmarks measure errors against them).
    ehess : callable or "jax", optional
        ``ehess(x, u) -> ndarray``: the Euclidean Hessian-vector product
        :math:`\nabla^2 \bar f(x)[u]` of the same extension as ``egrad``, of shape
        ``manifold.shape``. Second-order solvers turn it into the Riemannian Hessian with
        ``manifold.euclidean_to_riemannian_hessian``. Counted in ``nhev``. ``"jax"``:
        ``jax.jvp`` of JAX's gradient of ``cost`` (forward over reverse).
    egrad_rows : callable, optional
        Row-block oracle for matrix points: ``egrad_rows(x, rows) -> ndarray`` of shape
        ``(len(rows), x.shape[1])``, the rows ``rows`` (an int64 array of distinct indices)
        of the Euclidean gradient at ``x``, i.e. ``egrad(x)[rows]`` computed without the
        other rows. Solvers that update a few rows at a time (:func:`jitopt.solvers.rsdm`)
        use it when present.
    cost_change : callable, optional
        Incremental cost after a row-block update, used with ``egrad_rows``:
        ``cost_change(x, rows, delta, grad_rows) -> float`` returns
        :math:`f(x') - f(x)`, where :math:`x'` equals ``x`` except
        ``x'[rows] = x[rows] + delta``, and ``grad_rows = egrad_rows(x, rows)`` is passed
        in so that the change of a quadratic cost,
        :math:`\langle G_I, \Delta\rangle + \tfrac12 \langle \Delta, \nabla^2 f\,[\Delta]\rangle`,
        costs only the second-order term. Neither ``x`` nor ``delta`` may be modified.
    block_affine : callable, optional
        For costs that are affine in a rotation of a row block (linear costs, Procrustes
        costs whose quadratic part is invariant under left rotations):
        ``block_affine(x, rows) -> ndarray`` of shape ``(len(rows), len(rows))``, the matrix
        :math:`L_I` such that, for ``x`` on the manifold and **every** orthogonal
        :math:`U` of size ``len(rows)``,

        .. math:: f(x') = f(x) + \langle L_I,\, U - I\rangle, \qquad
                  x'_I = U x_I, \quad x'_{I^c} = x_{I^c}.

        The minimizer of :math:`f` over the rotations of the block is then a polar factor
        of :math:`-L_I` (:func:`jitopt.solvers.rsdm` with ``step="exact"``).

    Notes
    -----
    Oracles may be plain Python/NumPy callables or Numba-jitted functions; both are called
    from the solver's Python-level loop, which in turn calls the manifold's compiled
    kernels. A jitted oracle pays off when the oracle itself does elementwise work or
    loops that NumPy would run as several passes; for BLAS-bound oracles such as
    ``A @ x`` both are equally fast. Every call made through the problem is counted in
    :attr:`counts`; the solvers report the counts in their result. A row-block gradient
    counts one ``njev`` and a ``cost_change`` one ``nfev``; a ``block_affine`` call counts
    one ``njev``.

    Examples
    --------
    The largest eigenvalue of a diagonal matrix, as a minimum on the sphere:

    >>> import numpy as np, jitopt
    >>> A = np.diag([3.0, 2.0, 1.0])
    >>> problem = jitopt.Problem(jitopt.manifolds.Sphere(3), lambda x: -x @ A @ x,
    ...                          egrad=lambda x: -2 * A @ x)
    >>> res = jitopt.solvers.rgd(problem, x0=np.ones(3) / np.sqrt(3))
    >>> round(res.fun, 6), res.nfev == problem.counts.nfev
    (-3.0, True)
    """

    n_samples = 1
    #: the fastest method of the Riemannian benchmark (docs/theory/riemannian); ``rtr`` on
    #: :class:`~jitopt.manifolds.FixedRankEmbedded`
    default_method = "rlbfgs"

    def __init__(self, manifold, cost, egrad=None, *, cost_and_egrad=None, ehess=None,
                 fopt=None, xopt=None, egrad_rows=None, cost_change=None, block_affine=None):
        super().__init__()
        if not isinstance(manifold, Manifold):
            raise manifold_type_error(manifold)
        if isinstance(egrad, str) or isinstance(ehess, str):
            cost, egrad, cost_and_egrad, ehess = _autodiff(manifold, cost, egrad,
                                                           cost_and_egrad, ehess)
        _check_callable("cost", cost, required=cost_and_egrad is None)
        _check_callable("egrad", egrad, required=False)
        _check_callable("cost_and_egrad", cost_and_egrad, required=False)
        _check_callable("ehess", ehess, required=False)
        _check_callable("egrad_rows", egrad_rows, required=False)
        _check_callable("cost_change", cost_change, required=False)
        _check_callable("block_affine", block_affine, required=False)
        if cost_change is not None and egrad_rows is None:
            raise ValueError("cost_change needs egrad_rows (it receives the row-block gradient)")
        if egrad_rows is not None and len(manifold.shape) != 2:
            raise ValueError(f"egrad_rows needs a manifold of matrices, got {manifold!r} "
                             f"with point shape {manifold.shape}")
        if block_affine is not None and len(manifold.shape) != 2:
            raise ValueError(f"block_affine needs a manifold of matrices, got {manifold!r} "
                             f"with point shape {manifold.shape}")
        self._block_affine = block_affine
        self._ehess = ehess
        self._egrad_rows = egrad_rows
        self._cost_change = cost_change
        self.manifold = manifold
        self._cost = cost
        self._egrad = egrad
        self._cost_and_egrad = cost_and_egrad
        self.fopt = None if fopt is None else float(fopt)
        self.xopt = xopt

    # -- oracles as the solvers see them (counted and checked) -------------------------

    def _check_value(self, value, oracle):
        if isinstance(value, float):  # Python and NumPy floats: the common case, fast
            if not math.isfinite(value):
                raise NonFiniteOracle(f"The oracle {oracle} returned a non-finite value "
                                      f"({value})")
            return float(value)
        if np.iscomplexobj(value):
            raise OracleError(f"The oracle {oracle} must return a real scalar, got a complex "
                              f"value (return its real part for a real cost of complex x)")
        try:
            value = float(value)
        except (TypeError, ValueError):
            raise OracleError(
                f"The oracle {oracle} must return a scalar, got {type(value).__name__} "
                f"of shape {np.shape(value)}"
            ) from None
        if not math.isfinite(value):
            raise NonFiniteOracle(f"The oracle {oracle} returned a non-finite value ({value})")
        return value

    def _check_grad(self, g, oracle, shape=None):
        shape = self.manifold.shape if shape is None else shape
        if isinstance(g, tuple) and hasattr(self.manifold, "pack"):
            g = self.manifold.pack(g)  # the parts of a Product gradient
        if not isinstance(g, np.ndarray) or g.shape != shape:
            raise OracleError(
                f"The oracle {oracle} must return an array of shape {shape}, got "
                f"{type(g).__name__} of shape {np.shape(g)}"
            )
        if g.dtype.kind == "c" and np.dtype(self.manifold.dtype).kind != "c":
            raise OracleError(f"The oracle {oracle} returned a complex array on the real "
                              f"manifold {self.manifold!r}")
        return self.check_finite(oracle, g)

    def _check_point(self, x, name="x"):
        """Refuse an array ``x`` of another shape than the manifold's, or complex on a real
        manifold: the user's oracle might broadcast it into a wrong value."""
        if isinstance(x, np.ndarray):
            M = self.manifold
            if x.shape != M.shape:
                raise ValueError(f"{name} must have shape {M.shape}, got {x.shape} (the "
                                 f"points of {M!r})")
            if x.dtype.kind == "c" and np.dtype(M.dtype).kind != "c":
                raise TypeError(f"{name} must be real on {M!r}, got a complex array")
        return x

    def cost(self, x):
        """Cost at ``x`` (counts one ``nfev``)."""
        self._check_point(x)
        self.counts.add(nfev=1)
        if self._cost is None:
            f, _ = self.call_oracle("cost_and_egrad", self._cost_and_egrad, x)
            return self._check_value(f, "cost_and_egrad")
        return self._check_value(self.call_oracle("cost", self._cost, x), "cost")

    def egrad(self, x):
        """Euclidean gradient at ``x`` (counts one ``njev``)."""
        if not self.has_egrad:
            raise TypeError('egrad is required (a callable, or "jax": JAX differentiates '
                            'cost, jitopt[jax]): the problem has a cost only')
        self._check_point(x)
        self.counts.add(njev=1, nifo=self.n_samples)
        if self._egrad is None:
            _, g = self.call_oracle("cost_and_egrad", self._cost_and_egrad, x)
            return self._check_grad(np.asarray(g), "cost_and_egrad")
        return self._check_grad(self.call_oracle("egrad", self._egrad, x), "egrad")

    def cost_and_egrad(self, x):
        """Cost and Euclidean gradient at ``x`` (counts one ``nfev`` and one ``njev``)."""
        if self._cost_and_egrad is None:
            return self.cost(x), self.egrad(x)
        self._check_point(x)
        self.counts.add(nfev=1, njev=1, nifo=self.n_samples)
        out = self.call_oracle("cost_and_egrad", self._cost_and_egrad, x)
        try:
            f, g = out
        except (TypeError, ValueError):
            raise OracleError(f"The oracle cost_and_egrad must return a pair (cost, egrad), "
                              f"got {type(out).__name__}") from None
        return (self._check_value(f, "cost_and_egrad"),
                self._check_grad(g, "cost_and_egrad"))

    def rgrad(self, x):
        """Riemannian gradient at ``x``."""
        return self.manifold.euclidean_to_riemannian_gradient(x, self.egrad(x))

    def cost_and_rgrad(self, x):
        """Cost and Riemannian gradient at ``x``."""
        f, g = self.cost_and_egrad(x)
        return f, self.manifold.euclidean_to_riemannian_gradient(x, g)

    @property
    def has_egrad(self):
        """Whether the problem has a gradient (``egrad`` or ``cost_and_egrad``)."""
        return self._egrad is not None or self._cost_and_egrad is not None

    @property
    def has_ehess(self):
        """Whether a Euclidean Hessian-vector product oracle ``ehess`` was given."""
        return self._ehess is not None

    def ehess(self, x, u):
        """Euclidean Hessian-vector product at ``x`` along ``u`` (counts one ``nhev``)."""
        if self._ehess is None:
            raise AttributeError(f"{self!r} has no ehess oracle")
        self._check_point(x)
        self._check_point(u, "u")
        self.counts.add(nhev=1)
        return self._check_grad(self.call_oracle("ehess", self._ehess, x, u), "ehess")

    @property
    def has_cost_and_egrad(self):
        """Whether a fused cost-and-gradient oracle was given."""
        return self._cost_and_egrad is not None

    # -- row-block oracle (optional) ----------------------------------------------------

    @property
    def has_egrad_rows(self):
        """Whether a row-block gradient oracle ``egrad_rows`` was given."""
        return self._egrad_rows is not None

    @property
    def has_cost_change(self):
        """Whether an incremental cost oracle ``cost_change`` was given."""
        return self._cost_change is not None

    @property
    def has_block_affine(self):
        """Whether the block-affine oracle ``block_affine`` was given."""
        return self._block_affine is not None

    def block_affine(self, x, rows):
        """The matrix :math:`L_I` of the cost restricted to rotations of the rows ``rows``
        (counts one ``njev``)."""
        if self._block_affine is None:
            raise AttributeError(f"{self!r} has no block_affine oracle")
        self.counts.add(njev=1)
        lb = self.call_oracle("block_affine", self._block_affine, x, rows)
        return self._check_grad(lb, "block_affine", (len(rows), len(rows)))

    def egrad_rows(self, x, rows):
        """Rows ``rows`` of the Euclidean gradient at ``x`` (counts one ``njev``)."""
        if self._egrad_rows is None:
            raise AttributeError(f"{self!r} has no egrad_rows oracle")
        self.counts.add(njev=1)
        g = self.call_oracle("egrad_rows", self._egrad_rows, x, rows)
        return self._check_grad(g, "egrad_rows", (len(rows), self.manifold.shape[1]))

    def cost_change(self, x, rows, delta, grad_rows):
        """:math:`f(x') - f(x)` for ``x'[rows] = x[rows] + delta`` (counts one ``nfev``)."""
        if self._cost_change is None:
            raise AttributeError(f"{self!r} has no cost_change oracle")
        self.counts.add(nfev=1)
        change = self.call_oracle("cost_change", self._cost_change, x, rows, delta, grad_rows)
        return self._check_value(change, "cost_change")

    def __repr__(self):
        return f"{type(self).__name__}({self.manifold!r})"


class FiniteSumProblem(Problem):
    r"""A finite sum :math:`\min_{x\in\mathcal M} \frac1n \sum_{i=1}^n f_i(x)`.

    Parameters
    ----------
    manifold : jitopt.manifolds.Manifold
        The domain.
    cost : callable
        ``cost(x, idx) -> float``: the mean of :math:`f_i(x)` over the sample indices
        ``idx`` (an int64 array).
    egrad : callable
        ``egrad(x, idx) -> ndarray``: the mean of the Euclidean gradients of :math:`f_i`
        over ``idx``.
    n_samples : int
        Number of terms ``n``.
    fopt, xopt : optional
        Known optimal value and minimizer, if any.

    Notes
    -----
    ``cost(x)`` and ``egrad(x)`` without indices are the full mean. Each gradient call adds
    ``len(idx)`` to ``counts.nifo`` (``n`` for a full gradient): the incremental first-order
    oracle count of the variance-reduction literature.

    The attribute :attr:`sample_kernel` is ``None`` for user problems. The built-in
    problems of :mod:`jitopt.problems` set it to ``(kind, data, aux, param)``: an integer
    code of one of their compiled per-sample oracles and its float64 arrays and scalar.
    Solvers that know the code (the stochastic solvers of ``jitopt.solvers.serena``)
    then run their inner loop in Numba end to end; every other solver uses the callables.

    Examples
    --------
    >>> import numpy as np, jitopt
    >>> Z = np.random.default_rng(0).standard_normal((50, 3))
    >>> problem = jitopt.FiniteSumProblem(
    ...     jitopt.manifolds.Sphere(3),
    ...     lambda x, idx: -np.mean((Z[idx] @ x) ** 2),
    ...     lambda x, idx: -2 * Z[idx].T @ (Z[idx] @ x) / len(idx), n_samples=50)
    >>> x = np.array([1.0, 0.0, 0.0])
    >>> bool(np.isclose(problem.cost(x), -np.mean(Z[:, 0] ** 2)))
    True
    >>> g = problem.egrad(x, np.arange(5))
    >>> problem.counts.nifo
    5
    """

    #: Compiled per-sample oracles of a built-in problem, or ``None`` (see Notes).
    sample_kernel = None
    #: R-SRVRG with its default step: fewer passes than ``rgd`` on every problem of the
    #: defaults battery but the Karcher mean (docs/theory/serena)
    default_method = "r-srvrg"

    def __init__(self, manifold, cost, egrad, n_samples, *, fopt=None, xopt=None):
        if isinstance(n_samples, bool) or not isinstance(n_samples, (int, np.integer)):
            raise TypeError(f"n_samples must be an int, got {type(n_samples).__name__}")
        if n_samples < 1:
            raise ValueError(f"n_samples must be at least 1, got {n_samples}")
        _check_callable("egrad", egrad, required=True)
        super().__init__(manifold, cost, egrad, fopt=fopt, xopt=xopt)
        self.n_samples = int(n_samples)
        self.all_samples = np.arange(self.n_samples, dtype=np.int64)

    def cost(self, x, idx=None):
        """Mean cost over ``idx`` (all samples by default); counts one ``nfev``."""
        self._check_point(x)
        self.counts.add(nfev=1)
        idx = self.all_samples if idx is None else idx
        return self._check_value(self.call_oracle("cost", self._cost, x, idx), "cost")

    def egrad(self, x, idx=None):
        """Mean Euclidean gradient over ``idx`` (all by default); counts ``len(idx)`` IFO."""
        idx = self.all_samples if idx is None else idx
        self._check_point(x)
        self.counts.add(njev=1, nifo=len(idx))
        return self._check_grad(self.call_oracle("egrad", self._egrad, x, idx), "egrad")

    def cost_and_egrad(self, x):
        return self.cost(x), self.egrad(x)

    def prefetch(self, *batches):
        """Announce the sample batches of the next steps, in order: each argument a 2-D
        int array whose row ``k`` is a batch of step ``k``. Solvers that draw their
        batches ahead (the SERENA methods, an epoch at a time) call it; a problem whose
        samples are remote (:class:`jitopt.distributed.DaskFiniteSumProblem`) gathers
        their rows ahead, an in-memory problem ignores it."""

    def rgrad(self, x, idx=None):
        """Riemannian gradient of the mean over ``idx`` (all samples by default)."""
        return self.manifold.euclidean_to_riemannian_gradient(x, self.egrad(x, idx))
