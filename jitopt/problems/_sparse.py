"""Sparse regression problems on R^d (used by ``jitopt.sparse``): least squares, and the
row-wise losses of the generalized linear models."""

import numpy as np

from .._core.problem import FiniteSumProblem
from .._interpreted import interpreted, kernel_for
from ..validation import check_array, check_int, check_real, check_rng
from ._sparse_kernels import least_squares_kernel

__all__ = ["least_squares", "sparse_regression_data", "LeastSquares"]

_GRAM_BUDGET = 2 ** 24  # floats of cached Gram rows (128 MiB)
_PERSIST = 2  # consecutive evaluations with j in the support before its Gram row is cached
# (at least; the support size m when larger)
#: problems with at most this many entries of X are ``small``
_SMALL = 50_000
_UNCOMPILED = interpreted(least_squares_kernel)


def _real(name, a):
    """``a`` as a float64 array without a copy when it already is one; complex and
    non-numeric input refused."""
    if isinstance(a, np.ndarray) and a.dtype == np.float64:
        return a
    return check_array(name, a)


def _data(X, y):
    X, y = _real("X", X), _real("y", y)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D array, got shape {X.shape}")
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ValueError(f"y must be a 1-D array of length X.shape[0] = {X.shape[0]}, "
                         f"got shape {y.shape}")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"X must have at least one row and one column, got shape {X.shape}")
    with np.errstate(over="ignore", invalid="ignore"):  # (NaN or inf entries make them so)
        norms_finite = np.isfinite(np.vdot(X, X)) and np.isfinite(y @ y)
    if not norms_finite:
        if not (np.isfinite(X).all() and np.isfinite(y).all()):
            raise ValueError("X and y must be finite (no NaN or inf)")
        raise ValueError("X and y are too large: their squared norms overflow float64 "
                         "(rescale them)")
    # writable C-ordered arrays (copies only when needed; never modified): read-only
    # inputs (e.g. memory maps) would make Numba compile a second specialization
    return np.require(X, float, "CW"), np.require(y, float, "CW")


class LeastSquares(FiniteSumProblem):
    r"""Least squares :math:`R(w) = \frac1{2n}\|y - Xw\|^2 = \frac1n\sum_i \frac12
    (x_i^\top w - y_i)^2`.

    A :class:`~jitopt.FiniteSumProblem` on :math:`\mathbb R^p`. The full gradient
    :math:`\frac1n X^\top(Xw - y)` of a sparse :math:`w` is assembled from cached rows of the
    Gram matrix :math:`G = X^\top X/n`, so an iteration of a sparse solver on a settled
    support costs :math:`O(pk)`, not :math:`O(np)`. A row costs about as much as one dense
    gradient :math:`X^\top r/n`, so it is computed only once its coordinate has stayed in the
    support for :math:`\max(2, k)` consecutive evaluations (until then the gradient is the
    dense one): short runs on a moving support compute no row. Dense ``w`` use
    :math:`X^\top r` directly. Minibatches ``idx`` use the rows of ``X``.

    Parameters
    ----------
    X : array_like, shape (n, p)
        The design matrix.
    y : array_like, shape (n,)
        The responses.
    gram : {"auto", True, False}
        Cache rows of :math:`X^\top X/n` for sparse iterates (default) or not (``False``).

    Attributes
    ----------
    X, y : ndarray
        The data (float64, C-ordered; the given arrays themselves when they already are).

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.problems import LeastSquares
    >>> X = np.array([[1.0, 0.0], [0.0, 2.0]])
    >>> problem = LeastSquares(X, np.array([1.0, 2.0]))
    >>> problem.cost(np.zeros(2)), problem.egrad(np.zeros(2))
    (1.25, array([-0.5, -2. ]))
    """

    def __init__(self, X, y, gram="auto"):
        from ..manifolds import Euclidean

        X, y = _data(X, y)
        n, p = X.shape
        self.X, self.y = X, y
        self._b = X.T @ y / n
        if gram not in ("auto", True, False):
            raise ValueError(f"gram must be 'auto', True or False, got {gram!r}")
        cap = 0 if gram is False else min(p, max(64, _GRAM_BUDGET // p))
        self._cache = np.empty((cap, p))
        self._slot = np.full(p, -1, dtype=np.int64)
        self._last = np.full(p, -2, dtype=np.int64)  # last call with j in the support
        self._streak = np.zeros(p, dtype=np.int64)  # consecutive calls with j in it
        self._counter = np.zeros(2, dtype=np.int64)  # rows cached, calls made
        self._lipschitz = None
        self._diag = self._offset = None
        super().__init__(Euclidean(p), self._cost_idx, self._egrad_idx, n)
        self._cost_and_egrad = self._full

    @property
    def kernel_args(self):
        """The arguments after ``w`` of the compiled oracle ``least_squares_kernel``,
        ``(X, y, X^T y/n, Gram cache and its bookkeeping, persistence)``, for solvers that
        run their loop in Numba (``least_squares_kernel(w, *kernel_args)`` is
        ``cost_and_egrad(w)`` uncounted; the cache is shared with the problem)."""
        return (self.X, self.y, self._b, self._cache, self._slot, self._last, self._streak,
                self._counter, _PERSIST)

    @property
    def small(self):
        """Whether ``X`` has at most 50 000 entries: then the oracle and the solvers' loops
        on it run their kernels uncompiled (below a millisecond an evaluation) until they
        are compiled (``jitopt._interpreted.kernel_for``)."""
        return self.X.size <= _SMALL

    def _full(self, w):
        w = np.ascontiguousarray(w, dtype=float)
        return kernel_for(least_squares_kernel, _UNCOMPILED, self.small)(w, *self.kernel_args)

    def _cost_idx(self, w, idx):
        if idx.shape[0] == self.n_samples:  # the columns of the support only
            w = np.asarray(w, dtype=float)
            support = np.flatnonzero(w)
            r = self.X[:, support] @ w[support] - self.y
        else:
            r = self.X[idx] @ w - self.y[idx]
        return 0.5 * float(r @ r) / idx.shape[0]

    def _egrad_idx(self, w, idx):
        if idx.shape[0] == self.n_samples:
            return self._full(w)[1]
        Xb = self.X[idx]
        return Xb.T @ (Xb @ w - self.y[idx]) / idx.shape[0]

    # the full oracles skip FiniteSumProblem's (for the Gram cache), so check x here
    def cost_and_egrad(self, x):
        self._check_point(x, "w")
        self.counts.add(nfev=1, njev=1, nifo=self.n_samples)
        f, g = self._full(x)
        return float(f), g

    def egrad(self, x, idx=None):
        if idx is not None:
            return super().egrad(x, idx)
        self._check_point(x, "w")
        self.counts.add(njev=1, nifo=self.n_samples)
        return self._full(x)[1]

    def gram_block(self, support):
        r"""``(Q, c)`` with :math:`Q = X_S^\top X_S/n` and :math:`c = X_S^\top y/n`, so that
        :math:`R(w) = \frac12 w_S^\top Q w_S - c^\top w_S + \|y\|^2/(2n)` for
        :math:`\operatorname{supp} w \subseteq S` (from the cached Gram rows when all rows of
        :math:`S` are cached, else :math:`O(n|S|^2)` from the columns of :math:`X`)."""
        support = np.asarray(support, dtype=np.int64)
        if np.all(self._slot[support] >= 0):
            Q = self._cache[self._slot[support]][:, support]
            return 0.5 * (Q + Q.T), self._b[support].copy()
        Xs = self.X[:, support]
        return Xs.T @ Xs / self.n_samples, self._b[support].copy()

    def gram_rows(self, idx, prefetch=None):
        r"""The rows ``idx`` of :math:`G = X^\top X/n`, shape ``(len(idx), p)`` (a copy; see
        :meth:`gram_rows_in_place`)."""
        A, rows = self.gram_rows_in_place(idx, prefetch)
        return A[rows]

    def gram_rows_in_place(self, idx, prefetch=None):
        r"""``(A, rows)`` with ``A[rows]`` the rows ``idx`` of :math:`G = X^\top X/n`, not
        copied: ``A`` is the cache of rows (valid until the next call) or, for more rows than
        it holds, the rows computed. Rows not cached yet are computed in one product and
        cached, with the rows ``prefetch`` not cached yet when they fit too (one pass over
        :math:`X` for all)."""
        idx = np.asarray(idx, dtype=np.int64)
        cap = self._cache.shape[0]
        if idx.shape[0] > cap:
            return (self.X[:, idx].T @ self.X) / self.n_samples, np.arange(idx.shape[0])
        missing = idx[self._slot[idx] < 0]
        if missing.shape[0] and prefetch is not None:
            extra = np.setdiff1d(prefetch[self._slot[prefetch] < 0], missing)
            if self._counter[0] + missing.shape[0] + extra.shape[0] <= cap:
                missing = np.concatenate([missing, extra])
        if missing.shape[0]:
            if self._counter[0] + missing.shape[0] > cap:
                self._slot[:] = -1
                self._counter[0] = 0
                missing = idx
            start = self._counter[0]
            block = self._cache[start:start + missing.shape[0]]  # (written in place)
            np.matmul(self.X[:, missing].T, self.X, out=block)
            block /= self.n_samples
            self._slot[missing] = np.arange(start, start + missing.shape[0])
            self._counter[0] += missing.shape[0]
        return self._cache, self._slot[idx]

    def gram_rows_cached(self, idx):
        r"""Whether the rows ``idx`` of :math:`X^\top X/n` are all cached now."""
        return bool(np.all(self._slot[idx] >= 0))

    @property
    def n_cached_rows(self):
        r"""How many rows of :math:`X^\top X/n` are cached now."""
        return int(self._counter[0])

    def gram_rhs(self):
        r""":math:`X^\top y/n`, so that :math:`\nabla R(w) = Gw - X^\top y/n`."""
        return self._b

    def gram_offset(self):
        r""":math:`\|y\|^2/(2n)`, so that :math:`R(w) = \frac12 w^\top Gw - w^\top X^\top y/n +
        \|y\|^2/(2n)`."""
        if self._offset is None:
            self._offset = 0.5 * float(self.y @ self.y) / self.n_samples
        return self._offset

    def gram_diagonal(self):
        r"""The diagonal of :math:`X^\top X/n` (squared column norms over :math:`n`)."""
        if self._diag is None:
            self._diag = np.einsum("ij,ij->j", self.X, self.X) / self.n_samples
        return self._diag

    def lipschitz(self):
        r"""An upper estimate of :math:`L = \lambda_{\max}(X^\top X/n)`, the Lipschitz constant
        of the gradient (exact for small data, else 1.05 times 30 power iterations)."""
        if self._lipschitz is None:
            self._lipschitz = _top_eigenvalue(self.X) / self.n_samples
        return self._lipschitz


def power_estimate(product, p):
    """An upper estimate of the largest eigenvalue of a symmetric positive semidefinite
    operator ``product`` on R^p: 1.05 x 30 power iterations from a seeded start."""
    v = np.random.default_rng(0).standard_normal(p)
    lam = 0.0
    for _ in range(30):
        u = product(v)
        lam = float(np.linalg.norm(u))
        if lam == 0.0:
            return 0.0
        v = u / lam
    return 1.05 * lam


def _top_eigenvalue(A):
    """lambda_max(A^T A): exact when A is small, else :func:`power_estimate`."""
    n, p = A.shape
    if min(n, p) <= 200:
        M = A @ A.T if n <= p else A.T @ A
        return float(np.linalg.eigvalsh(M)[-1])
    return power_estimate(lambda v: A.T @ (A @ v), p)


class RowLoss(FiniteSumProblem):
    r"""A generalized linear model's loss: the weighted mean over the rows of
    :math:`\ell(y_i, x_i^\top w + b)` plus :math:`\frac\alpha2\|w\|^2`, on :math:`w` or
    :math:`(w, b)` (intercept last, not penalized). It checks the data, the weights (integer
    weights give the problem of the repeated rows) and ``alpha``, and makes the oracles from
    a subclass's ``_fg(w, idx, gradient)`` (the compiled loss of the rows ``idx``) after its
    ``_check_y(y)``."""

    @staticmethod
    def _check_y(y):
        """Refuse ``y`` outside the loss's domain (here: every finite ``y``, which ``_data``
        checks, is accepted)."""

    def __init__(self, X, y, alpha=0.0, fit_intercept=False, sample_weight=None):
        from ..manifolds import Euclidean

        X, y = _data(X, y)
        self._check_y(y)
        self.sample_weight = np.empty(0)
        if sample_weight is not None:
            sw = np.require(_real("sample_weight", sample_weight), float, "CW")
            if sw.shape != y.shape or not (np.isfinite(sw).all() and (sw >= 0).all()) \
                    or not sw.any():
                raise ValueError(f"sample_weight must hold {y.shape[0]} nonnegative finite "
                                 f"weights, not all zero")
            self.sample_weight = sw
        self.alpha = check_real("alpha", alpha, low=0.0)
        self.fit_intercept = bool(fit_intercept)
        self.X, self.y = X, y
        n, p = X.shape
        super().__init__(Euclidean(p + self.fit_intercept), self._cost_idx, self._egrad_idx, n)

    def _cost_idx(self, w, idx):
        return self._fg(w, idx, False)[0]

    def _egrad_idx(self, w, idx):
        return self._fg(w, idx)[1]

    def cost_and_egrad(self, x):
        self.counts.add(nfev=1, njev=1, nifo=self.n_samples)
        self._check_point(x, "w")
        f, g = self._fg(x, self.all_samples)
        return float(f), g

    def _design(self):
        """``X``, with a column of ones for the intercept, and the total weight."""
        A = np.hstack([self.X, np.ones((self.X.shape[0], 1))]) if self.fit_intercept \
            else self.X
        total = self.sample_weight.sum() if self.sample_weight.shape[0] else self.n_samples
        return A, total


def least_squares(X, y, gram="auto"):
    r"""The problem :math:`\min_w \frac1{2n}\|y - Xw\|^2` (a :class:`LeastSquares`).

    Parameters
    ----------
    X : array_like, shape (n, p)
    y : array_like, shape (n,)
    gram : {"auto", True, False}
        Cache rows of :math:`X^\top X/n` for sparse iterates (default) or not (``False``).

    Returns
    -------
    LeastSquares
        The problem, a :class:`~jitopt.FiniteSumProblem` of ``n`` terms on
        :math:`\mathbb R^p`.

    Examples
    --------
    >>> import numpy as np, jitopt
    >>> X, y, beta = jitopt.problems.sparse_regression_data(100, 20, 3, rng=0)
    >>> problem = jitopt.problems.least_squares(X, y)
    >>> problem.n_samples, problem.manifold.shape
    (100, (20,))
    >>> res = jitopt.sparse.iht(problem, k=3, rng=0)
    >>> bool((np.flatnonzero(res.x) == np.flatnonzero(beta)).all())
    True
    """
    return LeastSquares(X, y, gram)


def sparse_regression_data(n, p, k, rho=0.0, snr=5.0, signed=False, rng=None):
    r"""A sparse linear model with AR(1)-correlated Gaussian columns.

    Columns :math:`x_{\cdot,0} \sim N(0, I)`, :math:`x_{\cdot,j} = \rho x_{\cdot,j-1} +
    \sqrt{1-\rho^2}\,N(0, I)`, scaled to norm :math:`\sqrt n`; :math:`\beta^*` has a uniformly
    random support of size ``k`` with values :math:`U[1,2]` (times a random sign if
    ``signed``); :math:`y = X\beta^* + \sigma\varepsilon` with
    :math:`\sigma = \|X\beta^*\|/(\sqrt n\,\mathrm{SNR})`.

    Parameters
    ----------
    n, p : int
        Number of samples and of features.
    k : int
        Number of nonzeros of :math:`\beta^*`, ``1 <= k <= p``.
    rho : float
        Correlation :math:`\rho \in (-1, 1)` of neighbouring columns.
    snr : float
        Signal-to-noise ratio :math:`\mathrm{SNR} > 0`.
    signed : bool
        Give the nonzeros random signs.
    rng : int or numpy.random.Generator, optional
        Seed of the data.

    Returns
    -------
    X : ndarray (n, p)
    y : ndarray (n,)
    beta : ndarray (p,)

    Examples
    --------
    >>> import numpy as np, jitopt
    >>> X, y, beta = jitopt.problems.sparse_regression_data(100, 20, 3, rng=0)
    >>> X.shape, y.shape, int(np.count_nonzero(beta))
    ((100, 20), (100,), 3)
    >>> np.round(np.linalg.norm(X, axis=0)[:3] ** 2, 6)
    array([100., 100., 100.])
    """
    n = check_int("n", n, low=1)
    p = check_int("p", p, low=1)
    k = check_int("k", k, low=0, high=p)
    rho = check_real("rho", rho, -1.0, 1.0, True, True)
    snr = check_real("snr", snr, low=0.0, low_open=True)
    rng = check_rng(rng)
    E = rng.standard_normal((n, p))
    X = np.empty((n, p))
    X[:, 0] = E[:, 0]
    c = np.sqrt(1 - rho * rho)
    for j in range(1, p):
        X[:, j] = rho * X[:, j - 1] + c * E[:, j]
    X *= np.sqrt(n) / np.linalg.norm(X, axis=0)
    beta = np.zeros(p)
    support = rng.choice(p, k, replace=False)
    beta[support] = rng.uniform(1.0, 2.0, k)
    if signed:
        beta[support] *= rng.choice([-1.0, 1.0], k)
    signal = X @ beta
    sigma = np.linalg.norm(signal) / (np.sqrt(n) * snr)
    y = signal + sigma * rng.standard_normal(n)
    return X, y, beta
