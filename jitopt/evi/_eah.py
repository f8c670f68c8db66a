r"""``method="eah"`` of :func:`jitopt.solvers.evi`: the ellipsoid against hope (Zhang et al.,
*Expected variational inequalities*, ICML 2025, Alg. 1), a slow reference for intrinsic
dimension at most 4."""

import math

import numpy as np

from .._core.result import OptimizeResult, Status
from .._core.run import Algorithm, State
from .._core.stopping import verdict
from ..sets import Polytope
from . import _kernels as _k
from ._gap import closed_report, no_mixture, result_message

__all__ = ["EllipsoidAgainstHope"]


class EllipsoidAgainstHope(Algorithm):
    r"""The ellipsoid method on the infeasible program "find :math:`(K, c)` with
    :math:`\langle F(x), Kx + c - x\rangle \le -\varepsilon` for all :math:`x`", cut by
    the fixed points of its centres; every ``check_every`` points, one LP for the weights
    of those points (the gap check, one step of the run). The result is the best mixture
    found."""

    columns = ("gap_con",)
    final_row = True

    def __init__(self, dom, check_every, limits, measure):
        self.dom, self.check_every, self.limits = dom, check_every, limits
        self.measure = measure
        self.best = OptimizeResult(gap=np.inf)
        self.finished = False

    def fields(self, x, nit):
        """The best mixture found (none before its first point)."""
        if "points" not in self.best:
            return no_mixture(self.dom.d)
        rep = {k: v for k, v in self.best.items() if k not in ("points", "weights")}
        return {"points": self.best.points, "weights": self.best.weights, "fp_residual": 0.0,
                "gap_lin": self.best.gap, **rep}

    def start(self, problem, x):
        self.problem, self.start_x = problem, x
        Ah, bh, self.x0, self.B = self.dom.intrinsic()
        dz = self.B.shape[1]
        verts = Polytope(Ah, bh).vertices()  # vertices of the full-dimensional description
        zc = verts.mean(axis=0)
        n = dz * dz + dz
        diam = max(np.abs(verts - zc).max(), 1e-12)
        R = 4.0 * math.sqrt(n) * (1.0 + np.abs(verts).max()) * (
            1.0 + diam * np.abs(Ah).sum(1).max() / max(np.min(bh - Ah @ zc), 1e-12))
        self.Ah, self.bh, self.verts, self.zc = Ah, bh, verts, zc
        self.yc = np.concatenate([np.zeros(dz * dz), zc])
        self.Pm = (R * R) * np.eye(n)
        self.X, self.Fx = [], []
        return State(self.x0 + self.B @ zc, np.nan, np.nan, self.measure)

    def cut(self, s):
        """One ellipsoid step: the cut of the centre's violation or of its fixed point's
        operator value; ``True`` when a new point made a gap check."""
        dz = self.B.shape[1]
        K, c = self.yc[:dz * dz].reshape(dz, dz), self.yc[dz * dz:]
        viol = self.Ah @ (K @ self.verts.T + c[:, None]) - self.bh[:, None]
        i, v = np.unravel_index(int(np.argmax(viol)), viol.shape)
        if viol[i, v] > 0:  # (K, c) is not a self-map: cut a_i^T (K' z_v + c') <= b_i
            return np.concatenate([np.outer(self.Ah[i], self.verts[v]).ravel(), self.Ah[i]]), \
                False
        # good-enough response: a fixed point z of (K, c)
        z = _fixed_point_full(K, c, self.zc)
        x = self.x0 + self.B @ z
        f = self.problem.F(x)
        self.X.append(x)
        self.Fx.append(f)
        fz = self.B.T @ f
        checked = len(self.X) % self.check_every == 0
        if checked:
            best = self.best = _weights(self.dom, self.X, self.Fx, self.best)
            s.x = best.weights @ best.points if "points" in best else x
            s.fun = s.stationarity = best.gap
            s.extra = {"gap_con": best.gap_con}
        return np.concatenate([np.outer(fz, z).ravel(), fz]), checked

    def step(self, s, budget):
        n = self.Pm.shape[0]
        while True:
            s.nit += 1
            g, checked = self.cut(s)
            Pg = self.Pm @ g
            gPg = float(g @ Pg)
            if not gPg > 1e-300:
                if checked:  # seen first
                    s.verdict = verdict(Status.SMALL_STEP, s)
                    return None
                return verdict(Status.SMALL_STEP, s)
            self.yc = self.yc - Pg / ((n + 1) * math.sqrt(gPg))
            self.Pm = (n * n / (n * n - 1.0)) * (
                self.Pm - (2.0 / (n + 1)) * np.outer(Pg, Pg) / gPg)
            if checked:
                return None
            if budget.iterations(s) <= 0:
                return verdict(Status.MAXITER, s)
            if budget.seconds() <= 0:
                return verdict(Status.MAXTIME, s)

    def finish(self, s, ended, budget):
        status = ended[0]
        if self.X and status not in (Status.CONVERGED, Status.CALLBACK):
            self.best = _weights(self.dom, self.X, self.Fx, self.best)
            if self.best.gap <= self.limits["tol"]:
                status = Status.CONVERGED
        best = self.best
        if "points" not in best:
            s.x, s.fun, s.stationarity = self.start_x, np.nan, np.nan
        else:
            s.x, s.fun, s.stationarity = best.weights @ best.points, best.gap, best.gap
            s.extra = {"gap_con": best.gap_con}
        return status, result_message(status, s, self.limits)


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
