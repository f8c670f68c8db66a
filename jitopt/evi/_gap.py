r"""The certificate of the EVI solver: the certified gaps of a finite mixture of points."""

import numpy as np

from .._core.result import OptimizeResult, Status
from .._core.stopping import verdict
from ..problems import VIProblem
from ..validation import check_array, check_choice
from ._domains import EVIDomain

__all__ = ["evi_gap", "closed_report", "report", "no_mixture", "result_message"]


def _mixture(problem, points, weights, fvals):
    d = problem.dim
    X = check_array("points", points)
    X = X.reshape(1, -1) if X.ndim == 1 else X
    if X.ndim != 2 or X.shape[1] != d or X.shape[0] == 0:
        raise ValueError(f"points must have shape (k, {d}) with k >= 1, got "
                         f"{np.shape(points)}")
    k = X.shape[0]
    w = np.full(k, 1.0 / k) if weights is None else check_array("weights", weights).ravel()
    if w.shape != (k,) or (w < 0).any() or not w.sum() > 0 or not np.isfinite(w).all():
        raise ValueError(f"weights must be {k} nonnegative numbers with a positive sum")
    for i, x in enumerate(X):
        if not problem.domain.contains(x, 1e-7):
            raise ValueError(f"points[{i}] must lie in the domain {problem.domain!r}")
    if fvals is None:
        Fx = np.array([problem.F(x) for x in X])
    else:
        Fx = check_array("fvals", fvals)
        Fx = Fx.reshape(1, -1) if Fx.ndim == 1 else Fx
        if Fx.shape != X.shape:
            raise ValueError(f"fvals must have shape {X.shape}, got {Fx.shape}")
    return X, w / w.sum(), Fx


def evi_gap(problem, points, weights=None, fvals=None, *, method="closed-form"):
    r"""Certified gaps of the mixture :math:`\mu = \sum_k w_k \delta_{x_k}`.

    With :math:`M = \sum_k w_k F(x_k) x_k^\top`, :math:`\bar F = \sum_k w_k F(x_k)` and
    :math:`s = \sum_k w_k \langle F(x_k), x_k\rangle`,
    :math:`\operatorname{Gap}_{LIN} = s - \min_{(K,c)} \langle M, K\rangle + \langle \bar F,
    c\rangle` over the affine self-maps :math:`x \mapsto Kx + c` of :math:`X`, and
    :math:`\operatorname{Gap}_{CON} = s - \min_{x' \in X} \langle \bar F, x'\rangle`.

    Closed forms: on a simplex :math:`s - \sum_b \min_a M_{ab}`; on :math:`[0,1]^d`
    :math:`s - \sum_r \min(0, \bar F_r, \min_j M_{rj}, \min_j \bar F_r - M_{rj})` (other boxes
    are rescaled); on a product of simplices the sum over blocks :math:`i` of
    :math:`s_i - \min_j \sum_b \min_a M_{ij}[a, b]` (Fujii's lemma: a linear map into block
    :math:`i` is a mixture of maps reading a single block :math:`j`). On a polytope, and with
    ``method="lp"`` on any domain, the LP of Thm D.1 of Zhang et al., *Expected variational
    inequalities*, ICML 2025 (HiGHS).

    Parameters
    ----------
    problem : jitopt.problems.VIProblem
    points : array_like, shape (k, d)
        Points of the domain.
    weights : array_like, shape (k,), optional
        Uniform by default; normalised.
    fvals : array_like, shape (k, d), optional
        The operator values at the points (evaluated, and counted, when omitted).
    method : {"closed-form", "lp"}

    Returns
    -------
    OptimizeResult
        ``gap`` (Phi_LIN), ``gap_con`` (constant deviations) and, on a product of simplices,
        per-block arrays ``gap_alce``, ``gap_ce``, ``gap_cce`` (``gap`` is the sum of
        ``gap_alce``; ``gap_ce`` is the correlated-equilibrium regret of each block).

    Examples
    --------
    The sign operator on :math:`[-1, 1]` (the paper's Example C.2): the mixture
    :math:`\frac12(\delta_{-e} + \delta_e)` has :math:`\operatorname{Gap}_{CON} = e` and
    :math:`\operatorname{Gap}_{LIN} = 2e`.

    >>> import numpy as np
    >>> from jitopt.problems import VIProblem
    >>> from jitopt.sets import Box
    >>> from jitopt.solvers import evi_gap
    >>> problem = VIProblem(np.sign, Box(-1.0, 1.0), dim=1)
    >>> g = evi_gap(problem, [[-0.25], [0.25]])
    >>> float(g.gap), float(g.gap_con)
    (0.5, 0.25)
    """
    if not isinstance(problem, VIProblem):
        raise TypeError(f"problem must be a VIProblem, got {type(problem).__name__}")
    check_choice("method", method, ("closed-form", "lp"))
    X, w, Fx = _mixture(problem, points, weights, fvals)
    dom = EVIDomain(problem.domain, problem.dim)
    if method == "lp" or dom.lift:
        lin, con = dom.lp_gaps(X, Fx, w)
        return OptimizeResult(gap=float(lin), gap_con=float(con))
    return closed_report(dom, dom.to_y(X), dom.f_to_y(Fx), w)


def closed_report(dom, Y, Fy, w):
    """The closed-form gaps of a mixture in internal coordinates (``gap``, ``gap_con`` and
    on a product of simplices the per-block ``gap_alce``, ``gap_ce``, ``gap_cce``)."""
    g = dom.closed_gaps(Y, Fy, w)
    out = OptimizeResult(gap=float(g[0].sum()), gap_con=float(g[2].sum()))
    if dom.name == "product of simplices":
        out.update(gap_alce=g[0].copy(), gap_ce=g[1].copy(), gap_cce=g[2].copy())
    return out


def result_message(status, s, limits):
    """The message of an EVI result of ``status`` at the state ``s``: the status table's
    with the run's ``limits``, or the degenerate ellipsoid's."""
    if status == Status.SMALL_STEP:
        return "The ellipsoid degenerated (its width along the cut fell below 1e-150)."
    return verdict(status, s, tol_name="tol", **limits)[1]


def no_mixture(d):
    """The mixture fields of a result before any point: no points, NaN gaps."""
    return {"points": np.empty((0, d)), "weights": np.empty(0), "gap": np.nan,
            "gap_lin": np.nan, "gap_con": np.nan, "fp_residual": 0.0}


def report(dom, Y, Fy, Fx, w, ce):
    """The gaps of a mixture (internal coordinates; original ones and an LP on a polytope):
    ``gap`` is the one of the deviations asked for (per-block linear maps when ``ce``),
    ``gap_lin`` the Phi_LIN gap."""
    if dom.lift:
        lin, con = dom.lp_gaps(dom.to_x(Y), Fx, w)
        return OptimizeResult(gap=float(lin), gap_lin=float(lin), gap_con=float(con))
    rep = closed_report(dom, Y, Fy, w)
    rep["gap_lin"] = rep["gap"]
    if ce:
        rep["gap"] = float(rep["gap_ce"].sum()) if "gap_ce" in rep else rep["gap"]
    return rep
