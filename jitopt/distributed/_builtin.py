"""The built-in finite-sum problems of :mod:`jitopt.problems` on Dask arrays."""

import numpy as np

from ..manifolds import SPD, Euclidean, Grassmann, Sphere, Stiefel
from ..validation import check_choice, check_int, check_real
from ..problems import power_estimate, top_eigenpairs
from . import _kernels as K
from ._problem import _MIB, DaskFiniteSumProblem

__all__ = ["finite_sum_pca", "leading_eigenvector", "robust_pca", "karcher_mean",
           "least_squares", "logistic", "DaskLeastSquares", "DaskLogistic"]


def _dims(name, a, ndim):
    shape = getattr(a, "shape", None)
    if shape is None or len(shape) != ndim:
        raise ValueError(f"{name} must be a {ndim}-D Dask array, got shape {shape}")
    return shape


def _top_eigenpairs(problem, p):
    """Top ``p`` eigenpairs of the second moment :math:`Z^\\top Z/n`, from one distributed
    pass."""
    w, v = top_eigenpairs(problem.store.map_sum(K.normal_matrix, False) / problem.n_samples,
                          p)
    return w[:p], v


def finite_sum_pca(Z, p, manifold="grassmann", *, client=None, client_memory=256 * _MIB):
    r"""PCA as a finite sum over samples held on a Dask cluster (see
    :func:`jitopt.problems.finite_sum_pca`).

    Parameters
    ----------
    Z : dask.array.Array, shape (n, d)
        The samples as rows, chunked along the rows.
    p : int
        Subspace dimension.
    manifold : {"grassmann", "stiefel"}
        The domain.
    client : distributed.Client, optional
        Default: the current client.
    client_memory : int
        Bytes of gathered rows the client may hold (see :class:`DaskFiniteSumProblem`).

    Returns
    -------
    DaskFiniteSumProblem
        With ``fopt`` and ``xopt`` from the top eigenpairs of :math:`Z^\top Z/n` (one
        pass).

    Examples
    --------
    >>> import numpy as np, dask.array as da, jitopt
    >>> from distributed import Client, LocalCluster
    >>> client = Client(LocalCluster(n_workers=1, processes=False, dashboard_address=None))
    >>> Z = jitopt.problems.spiked_samples(400, 8, rng=0)
    >>> problem = jitopt.distributed.finite_sum_pca(da.from_array(Z, chunks=100), 2)
    >>> res = jitopt.solvers.r_svrg(problem, max_passes=30, rng=0)
    >>> bool(abs(res.fun - problem.fopt) < 1e-8 * abs(problem.fopt))
    True
    >>> client.close(); client.cluster.close()
    """
    _, d = _dims("Z", Z, 2)
    p = check_int("p", p, 1, d)
    check_choice("manifold", manifold, ("grassmann", "stiefel"))
    M = Grassmann(d, p) if manifold == "grassmann" else Stiefel(d, p)
    problem = DaskFiniteSumProblem(M, K.KINDS["pca"], {"Z": Z}, (d, p), client=client,
                                   client_memory=client_memory)
    w, v = _top_eigenpairs(problem, p)
    problem.fopt, problem.xopt = -float(w.sum()), v
    return problem


def leading_eigenvector(Z, *, client=None, client_memory=256 * _MIB):
    """The leading eigenvector on the sphere over samples on a Dask cluster (see
    :func:`jitopt.problems.leading_eigenvector`).

    Parameters
    ----------
    Z : dask.array.Array, shape (n, d)
        The samples as rows, chunked along the rows.
    client, client_memory
        As in :func:`finite_sum_pca`.

    Returns
    -------
    DaskFiniteSumProblem
        On :class:`~jitopt.manifolds.Sphere` ``(d)`` with ``fopt`` and ``xopt``.

    Examples
    --------
    >>> import numpy as np, dask.array as da, jitopt
    >>> from distributed import Client, LocalCluster
    >>> client = Client(LocalCluster(n_workers=1, processes=False, dashboard_address=None))
    >>> Z = jitopt.problems.spiked_samples(1000, 4, scales=(3.0, 2.0), rng=0)
    >>> problem = jitopt.distributed.leading_eigenvector(da.from_array(Z, chunks=250))
    >>> bool(np.isclose(problem.fopt, jitopt.problems.leading_eigenvector(Z).fopt))
    True
    >>> client.close(); client.cluster.close()
    """
    _, d = _dims("Z", Z, 2)
    problem = DaskFiniteSumProblem(Sphere(d), K.KINDS["pca"], {"Z": Z}, (d, 1),
                                   client=client, client_memory=client_memory)
    w, v = _top_eigenpairs(problem, 1)
    problem.fopt, problem.xopt = -float(w[0]), v[:, 0].copy()
    return problem


def robust_pca(Z, p, eps=1.0, *, client=None, client_memory=256 * _MIB):
    """Robust PCA over samples on a Dask cluster (see :func:`jitopt.problems.robust_pca`);
    the squared sample norms are computed and kept with each chunk.

    Parameters
    ----------
    Z : dask.array.Array, shape (n, d)
        The samples as rows, chunked along the rows.
    p : int
        Subspace dimension.
    eps : float
        Smoothing :math:`\\varepsilon > 0`.
    client, client_memory
        As in :func:`finite_sum_pca`.

    Returns
    -------
    DaskFiniteSumProblem
        On :class:`~jitopt.manifolds.Grassmann` ``(d, p)``.

    Examples
    --------
    >>> import numpy as np, dask.array as da, jitopt
    >>> from distributed import Client, LocalCluster
    >>> client = Client(LocalCluster(n_workers=1, processes=False, dashboard_address=None))
    >>> Z = jitopt.problems.spiked_samples(1000, 4, scales=(3.0, 2.0), rng=0)
    >>> problem = jitopt.distributed.robust_pca(da.from_array(Z, chunks=250), 1)
    >>> x = np.eye(4)[:, :1]
    >>> bool(np.isclose(problem.cost(x), jitopt.problems.robust_pca(Z, 1).cost(x)))
    True
    >>> client.close(); client.cluster.close()
    """
    _, d = _dims("Z", Z, 2)
    p = check_int("p", p, 1, d)
    eps = check_real("eps", eps, low=0.0, low_open=True)
    return DaskFiniteSumProblem(Grassmann(d, p), K.KINDS["robust_pca"], {"Z": Z}, eps * eps,
                                client=client, client_memory=client_memory)


def karcher_mean(A, retraction="exp", *, client=None, client_memory=256 * _MIB):
    """The Karcher mean of SPD matrices on a Dask cluster (see
    :func:`jitopt.problems.karcher_mean`; the matrices are not checked for symmetry and
    definiteness here, and ``fopt``, ``xopt`` are not set).

    Parameters
    ----------
    A : dask.array.Array, shape (n, d, d)
        Symmetric positive definite matrices, chunked along the first axis.
    retraction : {"exp", "second_order"}
        Retraction of the :class:`~jitopt.manifolds.SPD` manifold.
    client, client_memory
        As in :func:`finite_sum_pca`.

    Returns
    -------
    DaskFiniteSumProblem
        On :class:`~jitopt.manifolds.SPD` ``(d)``.

    Examples
    --------
    >>> import numpy as np, dask.array as da, jitopt
    >>> from distributed import Client, LocalCluster
    >>> client = Client(LocalCluster(n_workers=1, processes=False, dashboard_address=None))
    >>> A = jitopt.problems.commuting_spd_samples(40, 3, rng=0)
    >>> problem = jitopt.distributed.karcher_mean(da.from_array(A, chunks=10))
    >>> res = jitopt.solvers.r_srg(problem, rng=0)
    >>> bool(np.allclose(res.x, jitopt.problems.karcher_mean(A).xopt, atol=1e-5))
    True
    >>> client.close(); client.cluster.close()
    """
    _, d, d2 = _dims("A", A, 3)
    if d != d2:
        raise ValueError(f"A must have shape (n, d, d), got {A.shape}")
    return DaskFiniteSumProblem(SPD(d, retraction=retraction), K.KINDS["karcher"], {"A": A},
                                client=client, client_memory=client_memory)


class DaskLeastSquares(DaskFiniteSumProblem):
    r"""Least squares :math:`\frac1{2n}\|y - Xw\|^2` over rows on a Dask cluster (see
    :class:`jitopt.problems.LeastSquares`), with :math:`X^\top y/n` from one pass at
    construction, :meth:`lipschitz` and the support Gram block :meth:`gram_block` (used by
    the refit of :func:`jitopt.sparse.iht`) from one pass each.

    Parameters
    ----------
    X : dask.array.Array, shape (n, p)
        The design matrix, chunked along the rows.
    y : dask.array.Array, shape (n,)
        The responses.
    client, client_memory
        As in :func:`finite_sum_pca`.

    Examples
    --------
    >>> import numpy as np, dask.array as da, jitopt
    >>> from distributed import Client, LocalCluster
    >>> client = Client(LocalCluster(n_workers=1, processes=False, dashboard_address=None))
    >>> X, y, beta = jitopt.problems.sparse_regression_data(200, 20, 3, rng=0)
    >>> problem = jitopt.distributed.least_squares(da.from_array(X, chunks=50),
    ...                                            da.from_array(y, chunks=50))
    >>> res = jitopt.sparse.iht(problem, k=3)
    >>> bool((np.flatnonzero(res.x) == np.flatnonzero(beta)).all())
    True
    >>> client.close(); client.cluster.close()
    """

    def __init__(self, X, y, *, client=None, client_memory=256 * _MIB):
        _, p = _dims("X", X, 2)
        _dims("y", y, 1)
        super().__init__(Euclidean(p), K.KINDS["least_squares"], {"X": X, "y": y},
                         client=client, client_memory=client_memory)
        self._b = self.store.map_sum(K.xty) / self.n_samples
        self._gram = self.store.map_sum(K.normal_matrix, False) / self.n_samples \
            if p <= 200 else None
        self._lipschitz = None

    def gram_rhs(self):
        r""":math:`X^\top y/n`."""
        return self._b

    def gram_block(self, support):
        r"""``(Q, c)`` with :math:`Q = X_S^\top X_S/n`, :math:`c = X_S^\top y/n`."""
        support = np.asarray(support, dtype=np.int64)
        if self._gram is not None:
            Q = self._gram[np.ix_(support, support)]
        else:
            Q = self.store.map_sum(K.gram_sums, support) / self.n_samples
        return 0.5 * (Q + Q.T), self._b[support].copy()

    def lipschitz(self):
        r""":math:`\lambda_{\max}(X^\top X/n)` as :meth:`jitopt.problems.LeastSquares.lipschitz`
        computes it (exact for ``p <= 200``, else 1.05 times 30 power iterations, one pass
        each)."""
        if self._lipschitz is None:
            self._lipschitz = _top_eigenvalue(self, False) / self.n_samples
        return self._lipschitz


class DaskLogistic(DaskFiniteSumProblem):
    r"""Logistic regression over rows on a Dask cluster (see
    :class:`jitopt.problems.Logistic`).

    Parameters
    ----------
    X : dask.array.Array, shape (n, p)
        The features, chunked along the rows.
    y : dask.array.Array, shape (n,)
        The labels, each -1 or +1 (checked in one pass).
    alpha : float
        Weight of the ridge term.
    fit_intercept : bool
        Add the intercept (the last coordinate).
    client, client_memory
        As in :func:`finite_sum_pca`.

    Examples
    --------
    >>> import numpy as np, dask.array as da, jitopt
    >>> from distributed import Client, LocalCluster
    >>> client = Client(LocalCluster(n_workers=1, processes=False, dashboard_address=None))
    >>> X, y, _ = jitopt.problems.sparse_regression_data(200, 5, 2, rng=0)
    >>> problem = jitopt.distributed.logistic(da.from_array(X, chunks=50),
    ...                                       da.from_array(np.sign(y), chunks=50))
    >>> bool(np.isclose(problem.cost(np.zeros(5)), np.log(2)))
    True
    >>> client.close(); client.cluster.close()
    """

    def __init__(self, X, y, alpha=0.0, fit_intercept=False, *, client=None,
                 client_memory=256 * _MIB):
        _, p = _dims("X", X, 2)
        _dims("y", y, 1)
        self.alpha = check_real("alpha", alpha, low=0.0)
        self.fit_intercept = bool(fit_intercept)
        super().__init__(Euclidean(p + self.fit_intercept), K.KINDS["logistic"],
                         {"X": X, "y": y}, (self.alpha, self.fit_intercept), client=client,
                         client_memory=client_memory)
        if self.store.map_sum(K.bad_labels):
            raise ValueError("y must hold labels -1 and +1")
        self._lipschitz = None

    def lipschitz(self):
        r""":math:`\lambda_{\max}(\tilde X^\top\tilde X)/(4n) + \alpha` as
        :meth:`jitopt.problems.Logistic.lipschitz` computes it."""
        if self._lipschitz is None:
            self._lipschitz = (_top_eigenvalue(self, self.fit_intercept)
                               / (4 * self.n_samples) + self.alpha)
        return self._lipschitz


def _top_eigenvalue(problem, intercept):
    r""":math:`\lambda_{\max}(A^\top A)` of the data (with a column of ones if
    ``intercept``) as in memory: exact from the Gram matrix when the dimension is at most
    200 (one pass), else :func:`~jitopt.problems._sparse.power_estimate` (a pass per
    iteration)."""
    p = problem.manifold.shape[0]
    if p <= 200:
        return float(np.linalg.eigvalsh(problem.store.map_sum(K.normal_matrix, intercept))[-1])
    return power_estimate(lambda v: problem.store.map_sum(K.normal_product, v, intercept), p)


# the names of jitopt.problems: the classes themselves, which take the same arguments
least_squares = DaskLeastSquares
logistic = DaskLogistic
