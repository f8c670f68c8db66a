r"""``method="eah"`` of :func:`jitopt.solvers.evi`: the ellipsoid against hope (Zhang et al.,
*Expected variational inequalities*, ICML 2025, Alg. 1), a slow reference for intrinsic
dimension at most 4."""

import math

import numpy as np

from .._core.result import OptimizeResult, Status
from ..sets import Polytope
from . import _evi_kernels as _k
from ._evi_gap import closed_report, no_mixture

__all__ = ["eah"]


def eah(problem, dom, tol, maxiter, max_time, check_every, monitor):
    r"""The ellipsoid method on the infeasible program "find :math:`(K, c)` with
    :math:`\langle F(x), Kx + c - x\rangle \le -\varepsilon` for all :math:`x`", cut by the
    fixed points of its centres, then one LP for the weights of those points. Returns
    ``(status, nit, best)`` with ``best`` the best mixture found (``points``, ``weights``
    and its gaps; no ``points`` when no centre was a self-map)."""
    Ah, bh, x0, B = dom.intrinsic()
    dz = B.shape[1]
    verts = Polytope(Ah, bh).vertices()  # vertices of the full-dimensional description
    zc = verts.mean(axis=0)
    n = dz * dz + dz
    diam = max(np.abs(verts - zc).max(), 1e-12)
    R = 4.0 * math.sqrt(n) * (1.0 + np.abs(verts).max()) * (1.0 + diam * np.abs(Ah).sum(1).max()
                                                           / max(np.min(bh - Ah @ zc), 1e-12))
    yc = np.concatenate([np.zeros(dz * dz), zc])
    Pm = (R * R) * np.eye(n)
    X, Fx = [], []
    status, nit = None, 0
    best = OptimizeResult(gap=np.inf)

    def fields(x, nit):
        """The mixture of a fault result: the best one found, mean ``x``."""
        if "points" not in best:
            return no_mixture(dom.d)
        return {"fp_residual": 0.0, "gap_lin": best.gap, **best}

    monitor.fields = fields
    if monitor.iteration(0, x0 + B @ zc, np.nan, np.nan):
        return Status.CALLBACK, 0, best
    while status is None:
        if nit >= maxiter:
            status = Status.MAXITER
            break
        if monitor.elapsed() >= max_time:
            status = Status.MAXTIME
            break
        nit += 1
        K, c = yc[:dz * dz].reshape(dz, dz), yc[dz * dz:]
        viol = Ah @ (K @ verts.T + c[:, None]) - bh[:, None]
        i, v = np.unravel_index(int(np.argmax(viol)), viol.shape)
        if viol[i, v] > 0:  # (K, c) is not a self-map: cut a_i^T (K' z_v + c') <= b_i
            g = np.concatenate([np.outer(Ah[i], verts[v]).ravel(), Ah[i]])
        else:  # good-enough response: a fixed point z of (K, c)
            z = _fixed_point_full(K, c, zc)
            x = x0 + B @ z
            f = problem.F(x)
            X.append(x)
            Fx.append(f)
            fz = B.T @ f
            g = np.concatenate([np.outer(fz, z).ravel(), fz])
            if len(X) % check_every == 0:
                best = _weights(dom, X, Fx, best)
                mean = best.weights @ best.points if "points" in best else x
                if monitor.iteration(nit, mean, best.gap, best.gap, gap_con=best.gap_con):
                    status = Status.CALLBACK
                elif best.gap <= tol:
                    status = Status.CONVERGED
        Pg = Pm @ g
        gPg = float(g @ Pg)
        if not gPg > 1e-300:
            status = Status.SMALL_STEP
            break
        yc = yc - Pg / ((n + 1) * math.sqrt(gPg))
        Pm = (n * n / (n * n - 1.0)) * (Pm - (2.0 / (n + 1)) * np.outer(Pg, Pg) / gPg)
    if X and status not in (Status.CONVERGED, Status.CALLBACK):
        best = _weights(dom, X, Fx, best)
        if best.gap <= tol:
            status = Status.CONVERGED
    return status, nit, best


def _fixed_point_full(K, c, zc):
    """Fixed point of a self-map of a full-dimensional polytope (perturbed solve)."""
    delta = _k.DELTA
    d = K.shape[0]
    return np.linalg.solve(np.eye(d) - (1 - delta) * K, (1 - delta) * c + delta * zc)


def _weights(dom, X, Fx, best):
    """The reweighting LP over the points so far; the better of its mixture and ``best``
    (``best`` when the LP reached its pivot bound)."""
    Xa, Fa = np.array(X), np.array(Fx)
    Y, Fy = (Xa, Fa) if dom.lift else (dom.to_y(Xa), dom.f_to_y(Fa))
    lam = dom.reweight(Y, Fy)
    if lam is None:
        return best
    if dom.lift:
        lin, con = dom.lp_gaps(Xa, Fa, lam)
        rep = OptimizeResult(gap=float(lin), gap_con=float(con))
    else:
        rep = closed_report(dom, Y, Fy, lam)
    if rep.gap < best.gap:
        keep = lam > 0
        rep.update(points=Xa[keep], weights=lam[keep] / lam[keep].sum())
        return rep
    return best
