"""Constrained problems on manifolds: ralm and repm against what a user has without them.

B1, nonnegative PCA on the sphere in the setting of Manopt.jl's constrained-optimization
tutorial: d = 150, a 15-sparse nonnegative spike v0 (entries 1/sqrt(15)) of strength
sqrt(sigma) = 0.1, Z = sqrt(sigma) v0 v0^T + N with N off-diagonal Normal(0, 1/d) and
diagonal Normal(0, 2/d) (standard deviations; Z not symmetrized), f(x) = -x^T Z x,
x >= 0, NumPy seeds. Methods, all from the same random start: ``ralm``, ``repm`` (LQH and
LSE), a quadratic penalty written by hand on jitopt's ``rlbfgs`` (rho x10 per round,
warm-started, gtol 1e-6, until the violation is at most 1e-6), the same penalty on
pymanopt's ConjugateGradient (pymanopt has no constraints), and scipy's SLSQP with the
sphere as an equality constraint and x >= 0 as bounds.

B2, a certificate by convex relaxation: at d = 30 the doubly-nonnegative SDP max <sym Z, X>
over X PSD, X >= 0 entrywise, tr X = 1 (cvxpy with SCS) bounds nonnegative PCA from above;
the best of 5 ralm starts reaching the bound certifies it as the global maximum (ralm with
ctol = 1e-10: values are compared, so the point must be feasible well below the gap).

B3, an equality-constrained eigenspace: min -tr(X^T A X) on Stiefel(n, p) with W^T X = 0,
whose answer is the top-p eigenspace of A compressed to the complement of W; ralm, repm and
the hand-written penalty, error to the closed form.

B4, an SDP with a linear constraint by Burer-Monteiro: the minimum-bisection relaxation
of max-cut, min <C, X> over X PSD with diag(X) = 1 and 1^T X 1 = 0, C = -L/4 for a G(60,
0.2) graph Laplacian L, solved as X = V^T V with V on Oblique(12, 60) (unit columns) and
the equalities V 1 = 0 by ``ralm`` from 3 starts; the lower bound of a dual certificate
built from its multipliers (S = C + diag(y) + z 11^T with y from the stationarity of V and
z maximizing lambda_min(S): <C, X> >= n min(lambda_min(S), 0) - sum(y) for every feasible
X) against cvxpy with Clarabel on the SDP itself.

Reported for B1 and B3 per method: the median warm time over the seeds and its ratio to ralm's, the
worst violation, the largest gap of f to the best f of the seed (B1: f of the point made
feasible by setting its negative entries to 0 and normalizing; nonnegative PCA has several
local maxima, so a gap can be a different local maximum) or to the closed form (B3), the
number of seeds within 1e-6 of the best, and the median gradient calls. Every method runs once untimed first (JIT compile or cache load).
"""

import argparse
import statistics
import time

import numpy as np

from ._common import print_table


def nnpca_data(seed, d=150, sigma=0.01, delta=0.1):
    rng = np.random.default_rng(seed)
    k = int(round(delta * d))
    v0 = np.zeros(d)
    v0[rng.choice(d, k, replace=False)] = 1.0 / np.sqrt(k)
    N = rng.normal(0.0, np.sqrt(1.0 / d), (d, d))
    N[np.diag_indices(d)] = rng.normal(0.0, np.sqrt(2.0 / d), d)
    Z = np.sqrt(sigma) * np.outer(v0, v0) + N
    S = Z + Z.T
    x0 = rng.standard_normal(d)
    return Z, S, x0 / np.linalg.norm(x0)


def violation_nonneg(x):
    return float(max(0.0, -x.min()))


def feasible(x):
    """The feasible point a user would take from ``x``: its negative entries set to 0, back
    on the sphere."""
    xp = np.maximum(x, 0.0)
    return xp / np.linalg.norm(xp)


def quadratic_penalty_jitopt(jitopt, M, cost, egrad, g, g_grad, x0, max_rounds=12):
    """f + rho/2 |g(x)_+|^2 by hand, rho x10 per round, warm-started rlbfgs."""
    x, rho, calls = x0, 1.0, 0
    for _ in range(max_rounds):
        def pcost(x, rho=rho):
            gp = np.maximum(g(x), 0.0)
            return cost(x) + 0.5 * rho * gp @ gp

        def pgrad(x, rho=rho):
            return egrad(x) + rho * g_grad(x, np.maximum(g(x), 0.0))

        res = jitopt.solvers.rlbfgs(jitopt.Problem(M, pcost, pgrad), x, gtol=1e-6)
        x, calls = res.x, calls + res.njev
        if np.max(g(x), initial=0.0) <= 1e-6:
            break
        rho *= 10.0
    return x, calls


def quadratic_penalty_pymanopt(S, x0, max_rounds=12):
    import pymanopt

    d = len(x0)
    manifold = pymanopt.manifolds.Sphere(d)
    opt = pymanopt.optimizers.ConjugateGradient(min_gradient_norm=1e-6, max_iterations=2000,
                                                verbosity=0)
    x, rho, calls = x0, 1.0, 0
    for _ in range(max_rounds):
        @pymanopt.function.numpy(manifold)
        def cost(x, rho=rho):
            xn = np.minimum(x, 0.0)
            return -0.5 * x @ S @ x + 0.5 * rho * xn @ xn

        @pymanopt.function.numpy(manifold)
        def grad(x, rho=rho):
            return -S @ x + rho * np.minimum(x, 0.0)

        res = opt.run(pymanopt.Problem(manifold, cost, euclidean_gradient=grad),
                      initial_point=x)
        x, calls = res.point, calls + res.iterations
        if violation_nonneg(x) <= 1e-6:
            break
        rho *= 10.0
    return x, calls


def slsqp(S, x0):
    from scipy.optimize import minimize

    res = minimize(lambda x: -0.5 * x @ S @ x, x0, jac=lambda x: -S @ x, method="SLSQP",
                   bounds=[(0.0, None)] * len(x0),
                   constraints=[{"type": "eq", "fun": lambda x: x @ x - 1.0,
                                 "jac": lambda x: 2.0 * x}],
                   options={"maxiter": 1000, "ftol": 1e-12})
    return res.x / np.linalg.norm(res.x), res.njev  # back on the sphere, as a user would


def b1_runs(jitopt, seed, with_pymanopt):
    """``{method: (x, gradient calls, seconds)}`` of one seed (each run timed warm)."""
    Z, S, x0 = nnpca_data(seed)
    M = jitopt.manifolds.Sphere(len(x0))
    cost, egrad = (lambda x: -x @ Z @ x), (lambda x: -S @ x)
    problem = lambda: jitopt.ConstrainedProblem(M, cost, egrad, lower=0.0)  # noqa: E731
    runs = {
        "ralm": lambda: _jitopt(jitopt.solvers.ralm(problem(), x0)),
        "repm (LQH)": lambda: _jitopt(jitopt.solvers.repm(problem(), x0)),
        "repm (LSE)": lambda: _jitopt(jitopt.solvers.repm(problem(), x0, smoothing="lse")),
        "penalty on rlbfgs": lambda: quadratic_penalty_jitopt(
            jitopt, M, cost, egrad, lambda x: -x, lambda x, w: -w, x0),
        "scipy SLSQP": lambda: slsqp(S, x0),
    }
    if with_pymanopt:
        runs["penalty on pymanopt CG"] = lambda: quadratic_penalty_pymanopt(S, x0)
    out = {}
    for name, run in runs.items():
        run()  # untimed: JIT compile or cache load, imports
        t0 = time.perf_counter()
        x, calls = run()
        out[name] = (x, calls, time.perf_counter() - t0)
    return out, (lambda x: -feasible(x) @ Z @ feasible(x)), violation_nonneg


def _jitopt(res):
    if not res.success:
        print(f"  ({res.message})")
    return res.x, res.njev


def b3_runs(jitopt, seed):
    n, p, q = 40, 3, 4
    rng = np.random.default_rng(seed)
    Q = np.linalg.qr(rng.standard_normal((n, n)))[0]
    A = (Q * np.linspace(3.0, 0.0, n)) @ Q.T
    W = np.linalg.qr(rng.standard_normal((n, q)))[0]
    U = np.linalg.svd(np.eye(n) - W @ W.T)[0][:, :n - q]
    fopt = -np.linalg.eigvalsh(U.T @ A @ U)[-p:].sum()
    M = jitopt.manifolds.Stiefel(n, p)
    x0 = M.random_point(seed)
    cost, egrad = (lambda X: -np.sum(X * (A @ X))), (lambda X: -2.0 * A @ X)
    problem = lambda: jitopt.ConstrainedProblem(  # noqa: E731
        M, cost, egrad, eq=lambda X: (W.T @ X).ravel(),
        eq_vjp=lambda X, v: W @ v.reshape(q, p))
    # the equalities as two inequalities each for the hand-written penalty: |h|^2 either way
    h = lambda X: np.concatenate([(W.T @ X).ravel(), -(W.T @ X).ravel()])  # noqa: E731
    h_vjp = lambda X, w: W @ (w[:q * p] - w[q * p:]).reshape(q, p)  # noqa: E731
    runs = {
        "ralm": lambda: _jitopt(jitopt.solvers.ralm(problem(), x0)),
        "repm (LQH)": lambda: _jitopt(jitopt.solvers.repm(problem(), x0)),
        "penalty on rlbfgs": lambda: quadratic_penalty_jitopt(jitopt, M, cost, egrad, h, h_vjp,
                                                              x0),
    }
    out = {}
    for name, run in runs.items():
        run()
        t0 = time.perf_counter()
        x, calls = run()
        out[name] = (x, calls, time.perf_counter() - t0)
    return out, cost, (lambda X: float(np.abs(W.T @ X).max())), fopt


def relaxation_certificate(jitopt, seed, d=30, starts=5):
    """B2: ``(best x^T Z x of ralm, its seconds, the SDP bound, SCS seconds, the ratio of
    the two largest eigenvalues of the SDP solution)``, or ``None`` without cvxpy (a
    rank-one solution, ratio near 0, is a nonnegative PCA point: the bound is then
    attained)."""
    try:
        import cvxpy as cp
    except ImportError:
        return None
    Z, S, _ = nnpca_data(seed, d=d)
    M = jitopt.manifolds.Sphere(d)
    problem = lambda: jitopt.ConstrainedProblem(M, lambda x: -x @ Z @ x,  # noqa: E731
                                                lambda x: -S @ x, lower=0.0)
    jitopt.solvers.ralm(problem(), M.random_point(0), ctol=1e-10)  # untimed
    t0 = time.perf_counter()
    best = min(jitopt.solvers.ralm(problem(), M.random_point(s), ctol=1e-10).fun
               for s in range(starts))
    elapsed = time.perf_counter() - t0
    X = cp.Variable((d, d), PSD=True)
    sdp = cp.Problem(cp.Maximize(cp.trace(0.5 * S @ X)), [cp.trace(X) == 1, X >= 0])
    t0 = time.perf_counter()
    sdp.solve(solver="SCS", eps=1e-9, max_iters=200000)
    seconds = time.perf_counter() - t0
    w = np.linalg.eigvalsh(X.value)
    return -best, elapsed, sdp.value, seconds, w[-2] / w[-1]


def burer_monteiro(jitopt, n=60, p=12, starts=3):
    """B4: ``(best value, lower bound, violation, seconds)`` of ralm and ``(value,
    seconds)`` of cvxpy/Clarabel on the SDP (``None`` without cvxpy)."""
    from scipy.optimize import minimize_scalar

    rng = np.random.default_rng(0)
    adj = np.triu((rng.random((n, n)) < 0.2).astype(float), 1)
    adj = adj + adj.T
    C = -(np.diag(adj.sum(1)) - adj) / 4.0
    M = jitopt.manifolds.Oblique(p, n)
    ones = np.ones(n)
    problem = lambda: jitopt.ConstrainedProblem(  # noqa: E731
        M, lambda V: float(np.sum((V @ C) * V)), lambda V: 2.0 * V @ C,
        eq=lambda V: V @ ones, eq_vjp=lambda V, v: np.outer(v, ones))
    jitopt.solvers.ralm(problem(), M.random_point(0))  # untimed
    t0 = time.perf_counter()
    best = min((jitopt.solvers.ralm(problem(), M.random_point(s)) for s in range(starts)),
               key=lambda r: r.fun)
    elapsed = time.perf_counter() - t0
    V = best.x  # stationarity: 2 V C + lam 1^T = V diag(d) on the oblique manifold
    y = -0.5 * np.einsum("ij,ij->j", V, 2.0 * V @ C + np.outer(best.eq_multipliers, ones))
    lmin = lambda z: np.linalg.eigvalsh(C + np.diag(y) + z)[0]  # noqa: E731
    z = minimize_scalar(lambda z: -lmin(z), bounds=(-100.0, 100.0), method="bounded").x
    bound = n * min(lmin(z), 0.0) - y.sum()
    try:
        import cvxpy as cp
    except ImportError:
        return (best.fun, bound, best.max_violation, elapsed), None
    X = cp.Variable((n, n), PSD=True)
    sdp = cp.Problem(cp.Minimize(cp.trace(C @ X)), [cp.diag(X) == 1, cp.sum(X) == 0])
    t0 = time.perf_counter()
    sdp.solve(solver="CLARABEL")
    return (best.fun, bound, best.max_violation, elapsed), (sdp.value,
                                                             time.perf_counter() - t0)


def table(title, per_seed, reference=None):
    """Print the summary over seeds: ``per_seed`` a list of ``(runs, cost, violation,
    fopt)``; the gap is to ``fopt`` when given, else to the best feasible f of the seed."""
    names = list(per_seed[0][0])
    rows, ralm_time = [], None
    for name in names:
        times, viols, gaps, calls, good = [], [], [], [], 0
        for runs, cost, viol, fopt in per_seed:
            best = fopt if fopt is not None else min(cost(x) for x, _, _ in runs.values())
            x, c, t = runs[name]
            gap = cost(x) - best
            times.append(t)
            viols.append(viol(x))
            gaps.append(abs(gap))
            calls.append(c)
            good += abs(gap) <= 1e-6 and viol(x) <= 1e-6
        t = statistics.median(times)
        ralm_time = t if name == "ralm" else ralm_time
        rows.append((name, t, t / ralm_time, max(viols), max(gaps),
                     f"{good}/{len(per_seed)}", statistics.median(calls)))
    print(title)
    print_table([("method", "s"), ("median s", ".4f"), ("x ralm", ".2f"),
                 ("max violation", ".1e"), ("max |f gap|", ".1e"), ("within 1e-6", "s"),
                 ("grad calls", ".0f")], rows)
    print()


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks constrained",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=5, help="seeds per problem (default 5)")
    parser.add_argument("--no-pymanopt", action="store_true",
                        help="leave out the penalty on pymanopt (the slowest run)")
    parser.add_argument("--no-sdp", action="store_true",
                        help="leave out B2 and B4 (the runs against cvxpy)")
    args = parser.parse_args(argv)
    import jitopt

    per_seed = []
    for seed in range(args.seeds):
        runs, cost, viol = b1_runs(jitopt, seed, not args.no_pymanopt)
        per_seed.append((runs, cost, viol, None))
    table(f"B1: nonnegative PCA, d = 150 (Manopt.jl tutorial setting), {args.seeds} seeds; "
          f"gap to the best f of each seed", per_seed)
    if not args.no_sdp:
        rows = [relaxation_certificate(jitopt, seed) for seed in range(args.seeds)]
        if rows[0] is not None:
            print("B2: nonnegative PCA, d = 30: best of 5 ralm starts against the "
                  "doubly-nonnegative SDP bound (cvxpy, SCS)")
            print_table([("seed", "d"), ("ralm max x^T Z x", ".10f"), ("ralm s", ".3f"),
                         ("SDP bound", ".10f"), ("bound - ralm", ".1e"), ("SCS s", ".2f"),
                         ("SDP l2/l1", ".1e")],
                        [(i, v, t, b, b - v, tb, r)
                         for i, (v, t, b, tb, r) in enumerate(rows)])
            print()
    per_seed = [b3_runs(jitopt, seed) for seed in range(args.seeds)]
    table(f"B3: Stiefel(40, 3) with W^T X = 0 (12 equalities), {args.seeds} seeds; gap to the "
          f"closed form", per_seed)
    if not args.no_sdp:
        (value, bound, violation, seconds), sdp = burer_monteiro(jitopt)
        rows = [("ralm, 3 starts", seconds, 1.0, value, violation)]
        if sdp is not None:
            rows.append(("cvxpy Clarabel", sdp[1], sdp[1] / seconds, sdp[0], None))
        print("B4: balanced max-cut SDP, n = 60, by Burer-Monteiro on Oblique(12, 60) with "
              f"V 1 = 0; certified lower bound {bound:.6f} (gap of ralm's value "
              f"{value - bound:.1e})")
        print_table([("method", "s"), ("s", ".3f"), ("x ralm", ".1f"), ("value", ".6f"),
                     ("violation", ".1e")], rows)
    return 0
