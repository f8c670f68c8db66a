r"""The proximal subproblem of one online DCA step, by the compiled dual coordinate ascent
(built-in losses) or by cvxpy (any convex part):

.. math::

    \min_{x \in C}\; \bar g(x) - y^\top x + \frac\mu2\|x - x_t\|^2 .
"""

import numpy as np

from ..validation import check_choice
from ..problems import DCProblem
from ..sets import Box
from . import _kernels as _k

__all__ = ["ProxSubproblem"]

#: data batches with more entries than this enter the cvxpy model as constants
_CVX_PARAM_LIMIT = 50_000


class ProxSubproblem:
    r"""The proximal subproblems of a :class:`~jitopt.problems.DCProblem`.

    :meth:`solve` returns the solution of
    :math:`\min_{x\in C} \bar g(x) - y^\top x + \frac\mu2\|x - x_t\|^2` for a batch of the
    convex part. ``solver="numba"`` is the compiled dual coordinate ascent (a built-in loss
    and a set whose proximal point with the :math:`\ell_1` term is exact, i.e. not a
    simplex when :math:`\lambda_g > 0`), with a duality-gap certificate; ``"cvxpy"`` a cvxpy
    model (Clarabel) built once per batch shape with the data as Parameters, and kept for
    the next batches (data of more than 50 000 entries enter as constants instead, and that
    model is reused for the very same arrays only); ``"auto"`` the compiled solver when it
    applies.

    Parameters
    ----------
    problem : DCProblem
    solver : {"auto", "numba", "cvxpy"}
    tol : float
        Relative duality-gap tolerance of the compiled solver.
    max_epochs : int
        Passes over the data of the compiled solver.

    Attributes
    ----------
    method : str
        The solver used: ``"numba"`` or ``"cvxpy"``.
    has_numba_solver : bool
        Whether the compiled solver applies to the problem.
    n_models : int
        The cvxpy models built so far.
    """

    def __init__(self, problem, solver="auto", tol=1e-10, max_epochs=10000):
        if not isinstance(problem, DCProblem):
            raise TypeError(f"problem must be a DCProblem, got {type(problem).__name__}")
        check_choice("solver", solver, ("auto", "numba", "cvxpy"))
        self.problem = problem
        self.tol = float(tol)
        self.max_epochs = int(max_epochs)
        constraint = Box() if problem.constraint is None else problem.constraint
        self._set_args = constraint.kernel_args(problem.dim)
        self._idx = np.arange(problem.dim)
        simplex = self._set_args[3][1] == 1
        self.has_numba_solver = problem.convex is None and not (simplex and problem.lam_g > 0)
        if solver == "numba" and not self.has_numba_solver:
            raise ValueError("solver='numba' needs a built-in loss and a constraint that is "
                             "not a Simplex (with an l1 term); use solver='cvxpy'")
        if solver == "auto":
            solver = "numba" if self.has_numba_solver else "cvxpy"
        self.method = solver
        self._models = {}

    @property
    def n_models(self):
        return len(self._models)

    def solve(self, batch_g, xt, y, mu):
        """``(x, gap, value)``: the solution, a bound on its suboptimality (the duality gap
        of the compiled solver; ``nan`` for cvxpy) and the subproblem's value at ``x``.
        Counts one ``nfev`` of the problem (an evaluation of :math:`\\bar g`)."""
        problem = self.problem
        problem.counts.add(nfev=1)
        if self.method == "numba":
            A, b = problem.loss_batch(batch_g)
            lo, hi, fpar, ipar, groups = self._set_args
            x = np.empty(problem.dim)
            gap, val, _ = _k.solve_prox_subproblem(
                A, b, problem.loss_code, problem.huber_delta, problem.lam_g, y, xt, float(mu),
                lo, hi, fpar, ipar, groups, self._idx, self.tol, self.max_epochs, x)
            return x, gap, val
        return self._cvx_solve(batch_g, xt, y, mu)

    def value(self, batch_g, x, xt, y, mu):
        """The subproblem's objective at ``x`` (to compare solvers)."""
        return (self.problem.convex_value(x, batch_g) - y @ x
                + 0.5 * mu * np.sum((x - xt) ** 2))

    def _hinge_rows(self, batch):
        """The hinge loss enters cvxpy on the rows b_i a_i."""
        arrays = list(batch)
        if self.problem.convex is None and self.problem.loss == "hinge":
            arrays[0] = arrays[1][:, None] * arrays[0]
        return arrays

    def _cvx_model(self, batch):
        """The cvxpy subproblem for batches shaped like ``batch`` (see the class)."""
        as_constants = sum(a.size for a in batch) > _CVX_PARAM_LIMIT
        key = tuple(a.shape for a in batch)
        if as_constants:
            key = ("constants",) + key
            hit = self._models.get(key)
            if hit is not None and all(a is b for a, b in zip(hit[4], batch)):
                return hit[:4]
        elif key in self._models:
            return self._models[key]
        import cvxpy as cp

        problem = self.problem
        d = problem.dim
        x = cp.Variable(d)
        if as_constants:
            params = [cp.Constant(a) for a in self._hinge_rows(batch)]
        else:
            params = [cp.Parameter(a.shape) for a in batch]
        # DPP form: (mu/2)||x - x_t||^2 - y^T x = (mu/2)||x||^2 - (y + mu x_t)^T x + const
        lin = cp.Parameter(d)
        mu = cp.Parameter(nonneg=True)
        if problem.convex is not None:
            gbar = problem.call_oracle("convex", problem.convex, x, *params)
        else:
            A, b = params
            n = batch[0].shape[0]
            if problem.loss == "lad":
                gbar = cp.sum(cp.abs(A @ x - b)) / n
            elif problem.loss == "squared":
                gbar = cp.sum_squares(A @ x - b) / (2 * n)
            elif problem.loss == "huber":
                gbar = cp.sum(cp.huber(A @ x - b, problem.huber_delta)) / (2 * n)
            else:  # hinge on the rows b_i a_i
                gbar = cp.sum(cp.pos(1 - A @ x)) / n
        obj = gbar + problem.lam_g * cp.norm1(x) - lin @ x + 0.5 * mu * cp.sum_squares(x)
        lo, hi, fpar, ipar, groups = self._set_args
        cons = []
        if np.isfinite(lo).any():
            j = np.flatnonzero(np.isfinite(lo))
            cons.append(x[j] >= lo[j])
        if np.isfinite(hi).any():
            j = np.flatnonzero(np.isfinite(hi))
            cons.append(x[j] <= hi[j])
        if fpar is not None:  # not a box: balls or the simplex
            if ipar[1] == 1:
                cons.append(cp.sum(x) == fpar[0])
            elif np.isfinite(fpar[0]):
                cons.append(cp.norm1(x) <= fpar[0])
            if np.isfinite(fpar[1]):
                cons.append(cp.norm2(x) <= fpar[1])
        if ipar[0] != 0:
            norms = cp.hstack([cp.norm2(x[np.flatnonzero(groups == g)])
                               for g in range(ipar[2])])
            cons.append((cp.sum(norms) if ipar[0] == 1 else cp.max(norms)) <= fpar[2])
        model = (cp.Problem(cp.Minimize(obj), cons), x, params, (lin, mu))
        self._models[key] = model + ((tuple(batch),) if as_constants else ())
        return model

    def _cvx_solve(self, batch_g, xt, y, mu):
        import cvxpy as cp

        prob, x, params, (lin, mup) = self._cvx_model(batch_g)
        for par, arr in zip(params, self._hinge_rows(batch_g)):
            if isinstance(par, cp.Parameter):
                par.value = arr
        lin.value, mup.value = y + mu * xt, float(mu)
        prob.solve(solver="CLARABEL")
        if prob.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or x.value is None:
            raise RuntimeError(f"cvxpy could not solve the subproblem (status {prob.status})")
        x = np.array(x.value, dtype=float)
        return x, float("nan"), float(prob.value) + 0.5 * mu * float(xt @ xt)
