"""rgd, rcg, rlbfgs, rtr vs pymanopt SteepestDescent, ConjugateGradient, TrustRegions on PCA,
Procrustes on SO(n), the Karcher mean on SPD, a Brockett cost and low-rank matrix completion.

Every solver starts from the same point and stops at the same absolute gradient norm,
``gtol = 1e-6 * ||grad f(x0)||``; the table gives iterations, oracle calls (counted by the
wrappers here, the same for both libraries), the median time over ``--repeats`` runs
(interleaved, after a warm-up run that holds the JIT compilation), the final relative gap
to the optimum, and the ratios. Both libraries get the same NumPy oracles; jitopt's are
given as one fused ``cost_and_egrad``, its natural form. On SO(n) jitopt uses its Cayley
retraction (one n x n solve) and pymanopt its default QR retraction; on the fixed-rank
matrices both get the dense m x n Euclidean gradient (jitopt's points are dense matrices,
pymanopt's are factors, to which the gradient is carried by the chain rule), and both start
from a point whose factors are known (an SVD of the start is no part of either time).
"""

import argparse

import numpy as np

import jitopt
from jitopt.manifolds import SPD, FixedRankEmbedded, Orthogonal, Stiefel
from jitopt.problems import spectrum_matrix

from ._common import print_table, timed_runs, warm_up

JITOPT = ("rgd", "rcg", "rlbfgs", "rtr")
PYMANOPT = ("SD", "CG", "TR")


class Oracles:
    """The NumPy oracles of one case, counting their calls."""

    def __init__(self, cost_and_egrad, ehess):
        self._ce, self._eh = cost_and_egrad, ehess
        self.reset()

    def reset(self):
        self.nfev = self.njev = self.nhev = 0

    def cost_and_egrad(self, x):
        self.nfev += 1
        self.njev += 1
        return self._ce(x)

    def cost(self, x):
        self.nfev += 1
        return self._ce(x)[0]

    def egrad(self, x):
        self.njev += 1
        return self._ce(x)[1]

    def ehess(self, x, u):
        self.nhev += 1
        return self._eh(x, u)


def pca_case(n, p, high, seed):
    A = spectrum_matrix(n, 1.0, high, rng=seed)
    lam = np.geomspace(1.0, high, n)

    def cost_and_egrad(x):
        ax = A @ x
        return -np.sum(x * ax), -2.0 * ax
    return (f"PCA St({n},{p}) 1e{int(np.log10(high))}", Stiefel(n, p), cost_and_egrad,
            lambda x, u: -2.0 * (A @ u), -lam[-p:].sum())


def brockett_case(n, p, seed):
    A = spectrum_matrix(n, 1.0, 100.0, rng=seed)
    lam = np.geomspace(1.0, 100.0, n)
    mu = np.arange(p, 0, -1, dtype=float)

    def cost_and_egrad(x):
        ax = A @ x
        return np.sum(x * ax * mu), 2.0 * ax * mu
    return (f"Brockett St({n},{p})", Stiefel(n, p), cost_and_egrad,
            lambda x, u: 2.0 * (A @ u) * mu, float(np.sum(mu * lam[:p])))


def procrustes_case(n, seed):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((2 * n, n)) * np.geomspace(1.0, 30.0, n)  # ill-conditioned
    r0, _ = np.linalg.qr(rng.standard_normal((n, n)))
    B = A @ r0 + rng.standard_normal((2 * n, n))
    AtA, AtB = A.T @ A, A.T @ B
    u, s, vt = np.linalg.svd(AtB)
    d = np.ones(n)
    d[-1] = np.sign(np.linalg.det(u @ vt))
    fopt = np.sum(A * A) + np.sum(B * B) - 2.0 * np.sum(s * d)
    c = np.sum(B * B)

    def cost_and_egrad(x):
        ax = AtA @ x
        return np.sum(x * ax) - 2.0 * np.sum(x * AtB) + c, 2.0 * (ax - AtB)
    return (f"Procrustes SO({n})", Orthogonal(n, special=True, retraction="cayley"),
            cost_and_egrad, lambda x, u: 2.0 * (AtA @ u), fopt)


def completion_case(m, n, k, fraction, seed):
    """0.5 ||P_Omega(X - A)||^2 over the rank-k matrices, A of rank k: f* = 0."""
    rng = np.random.default_rng(seed)
    A = (rng.standard_normal((m, k)) * np.geomspace(1.0, 10.0, k)) @ rng.standard_normal((k, n))
    mask = rng.random((m, n)) < fraction

    def cost_and_egrad(x):
        r = (x - A) * mask
        return 0.5 * np.sum(r * r), r
    return (f"Completion rank {k} {m}x{n}", FixedRankEmbedded(m, n, k), cost_and_egrad,
            lambda x, u: u * mask, 0.0)


def karcher_case(n, k, seed):
    rng = np.random.default_rng(seed)
    mats = []
    for _ in range(k):
        q, _ = np.linalg.qr(rng.standard_normal((n, n)))
        mats.append((q * np.exp(rng.standard_normal(n))) @ q.T)

    def cost_and_egrad(x):
        w, v = np.linalg.eigh(x)
        xs = (v / np.sqrt(w)) @ v.T
        f, g = 0.0, np.zeros_like(x)
        for a in mats:
            lw, lv = np.linalg.eigh(xs @ a @ xs)
            log = (lv * np.log(lw)) @ lv.T
            f += 0.5 * np.sum(log * log) / k
            g -= xs @ log @ xs / k
        return f, 0.5 * (g + g.T)
    # f* from rlbfgs to a gradient norm 1e-13 (cross-checked by rtr in the run)
    ref = jitopt.Problem(SPD(n), None, None, cost_and_egrad=cost_and_egrad)
    fopt = jitopt.solvers.rlbfgs(ref, np.eye(n), gtol=1e-13, maxiter=10**5).fun
    return f"Karcher SPD({n}), K={k}", SPD(n), cost_and_egrad, None, fopt


def pymanopt_problem(manifold, oracles):
    import pymanopt

    if isinstance(manifold, FixedRankEmbedded):
        return fixed_rank_problem(manifold, oracles)
    n = manifold.shape[0]
    if isinstance(manifold, Orthogonal):
        pm = pymanopt.manifolds.SpecialOrthogonalGroup(n)
    elif isinstance(manifold, SPD):
        pm = pymanopt.manifolds.SymmetricPositiveDefinite(n)
    else:
        pm = pymanopt.manifolds.Stiefel(*manifold.shape)

    @pymanopt.function.numpy(pm)
    def cost(x):
        return oracles.cost(x)

    @pymanopt.function.numpy(pm)
    def egrad(x):
        return oracles.egrad(x)

    hess = None
    if oracles._eh is not None:
        @pymanopt.function.numpy(pm)
        def hess(x, u):
            return oracles.ehess(x, u)
    return pymanopt.Problem(pm, cost, euclidean_gradient=egrad, euclidean_hessian=hess)


def fixed_rank_problem(manifold, oracles):
    """pymanopt's FixedRankEmbedded takes points (u, s, vt) and the gradient with respect
    to the factors: (G V diag(s), diag(U^T G V), diag(s) U^T G) for the dense gradient G."""
    import pymanopt

    pm = pymanopt.manifolds.FixedRankEmbedded(manifold.m, manifold.n, manifold.k)

    @pymanopt.function.numpy(pm)
    def cost(u, s, vt):
        return oracles.cost((u * s) @ vt)

    @pymanopt.function.numpy(pm)
    def egrad(u, s, vt):
        g = oracles.egrad((u * s) @ vt)
        gv, utg = g @ vt.T, u.T @ g
        return gv * s, np.einsum("ik,ik->k", u, gv), s[:, None] * utg
    return pymanopt.Problem(pm, cost, euclidean_gradient=egrad)


def to_pymanopt(manifold, x):
    if isinstance(manifold, FixedRankEmbedded):
        from pymanopt.manifolds.fixed_rank import _FixedRankPoint
        return _FixedRankPoint(*(a.copy() for a in manifold.factors(x)))
    return x.copy()


def from_pymanopt(x):
    if isinstance(x, tuple):  # fixed-rank factors
        u, s, vt = x
        return (u * s) @ vt
    return x


def run_pymanopt(kind, manifold, oracles, start, gtol, max_time):
    import pymanopt

    problem = pymanopt_problem(manifold, oracles)
    cls = {"SD": pymanopt.optimizers.SteepestDescent,
           "CG": pymanopt.optimizers.ConjugateGradient,
           "TR": pymanopt.optimizers.TrustRegions}[kind]
    opt = cls(max_time=max_time, max_iterations=10**9, min_gradient_norm=gtol,
              min_step_size=0.0, max_cost_evaluations=10**9, verbosity=0, log_verbosity=0)
    res = opt.run(problem, initial_point=start)
    return from_pymanopt(res.point), res.iterations, "min grad norm" in res.stopping_criterion


def run_jitopt(method, problem, x0, gtol, max_time):
    res = jitopt.minimize(problem, x0, method=method, tol=gtol,
                          options={"maxiter": 10**9, "max_time": max_time})
    return res.x, res.nit, res.success


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks riemannian",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--max-time", type=float, default=60.0)
    parser.add_argument("--large", action="store_true",
                        help="add PCA on Stiefel(4000, 20) (a 4000 x 4000 matrix; the case "
                             "pca4000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cases", default="pca,pca1e4,procrustes,karcher,brockett,completion",
                        help="comma-separated subset of pca,pca1e4,pca4000,procrustes,karcher,"
                             "brockett,completion")
    args = parser.parse_args(argv)

    cases = {"pca": lambda: pca_case(1000, 10, 1e2, args.seed),
             "pca1e4": lambda: pca_case(1000, 10, 1e4, args.seed),
             "pca4000": lambda: pca_case(4000, 20, 1e2, args.seed),
             "procrustes": lambda: procrustes_case(200, args.seed),
             "karcher": lambda: karcher_case(20, 10, args.seed),
             "brockett": lambda: brockett_case(500, 5, args.seed),
             "completion": lambda: completion_case(400, 300, 5, 0.2, args.seed)}
    chosen = args.cases.split(",")
    if args.large and "pca4000" not in chosen:
        chosen.insert(min(2, len(chosen)), "pca4000")
    builders = [cases[c] for c in chosen]
    summary = []
    for build in builders:
        name, manifold, ce, eh, fopt = build()
        oracles = Oracles(ce, eh)
        problem = jitopt.Problem(manifold, None, None, cost_and_egrad=oracles.cost_and_egrad,
                                 ehess=None if eh is None else oracles.ehess)
        x0 = manifold.random_point(args.seed + 1)
        gtol = 1e-6 * manifold.norm(x0, manifold.euclidean_to_riemannian_gradient(
            x0, ce(x0)[1]))
        pm_start = to_pymanopt(manifold, x0)  # pymanopt's optimizers do not modify it
        runs = {f"jitopt {m}": (lambda m=m: run_jitopt(m, problem, x0, gtol, args.max_time))
                for m in JITOPT}
        for kind in PYMANOPT:
            if kind == "TR" and (eh is None or isinstance(manifold, FixedRankEmbedded)):
                continue  # no Hessian: pymanopt's NumPy backend cannot form it, and its
                # FixedRankEmbedded has no Euclidean-to-Riemannian Hessian
            runs[f"pymanopt {kind}"] = (lambda k=kind: run_pymanopt(
                k, manifold, oracles, pm_start, gtol, args.max_time))
        print(f"\n== {name}: gtol = {gtol:.3e} (1e-6 relative), f* = {fopt:.10g}")
        for label, run in runs.items():
            if label.startswith("jitopt"):
                warm_up(run, label)
            else:
                run()
        times = {label: [] for label in runs}
        out = {}
        for _ in range(args.repeats):  # interleaved
            for label, run in runs.items():
                oracles.reset()
                med, _, res = timed_runs(run, 1)
                times[label].append(med)
                out[label] = res + (oracles.nfev, oracles.njev, oracles.nhev)
        rows = []
        for label in runs:
            x, nit, ok, nfev, njev, nhev = out[label]
            f = ce(x)[0]
            t = float(np.median(times[label]))
            rows.append((label, "yes" if ok else "NO", nit, nfev, njev, nhev, t * 1e3,
                         t * 1e3 / max(nit, 1), abs(f - fopt) / max(1.0, abs(fopt))))
        print_table([("solver", "s"), ("converged", "s"), ("nit", "d"), ("nfev", "d"),
                     ("njev", "d"), ("nhev", "d"), ("ms", ".1f"), ("ms/it", ".2f"),
                     ("gap", ".1e")], rows)
        best_j = min((r for r in rows if r[0].startswith("jitopt") and r[1] == "yes"),
                     key=lambda r: r[6])
        # pymanopt's best among its converged runs; if none converged, its runs stopped at
        # max_time and the ratio is a lower bound
        pm = [r for r in rows if r[0].startswith("pymanopt")]
        done = [r for r in pm if r[1] == "yes"]
        best_p = min(done or pm, key=lambda r: r[6])
        ratio = best_p[6] / best_j[6]
        rgd_t = rows[0][6]
        second = min(r[6] for r in rows if r[0] in ("jitopt rlbfgs", "jitopt rtr"))
        summary.append((name, best_j[0], best_p[0] + ("" if done else " (capped)"),
                        f"{ratio:.2f}" if done else f">= {ratio:.2f}", rgd_t / second))
    print("\n== Summary (time ratios; the machine is shared, so ratios, not times)")
    print_table([("case", "s"), ("jitopt best", "s"), ("pymanopt best", "s"),
                 ("pymanopt best / jitopt best", "s"), ("rgd / best of rlbfgs, rtr", ".2f")],
                summary)
    return 0
