"""RSDM vs pymanopt SteepestDescent / ConjugateGradient and jitopt rgd (Barzilai–Borwein
steps, and the paper's baseline: a fixed step): time to a target gap."""

import argparse
import statistics

import numpy as np

from jitopt import Problem
from jitopt.manifolds import Stiefel
from jitopt.problems import linear_cost, pca
from jitopt.solvers import rgd, rsdm

from ._common import TargetClock, TargetReached, print_table, warm_up

# name: (full size, --quick size); r is given as a fraction of n; eta: RSDM's fixed step;
# rgd_eta: the fixed step of the paper's baseline, gradient descent with the QR retraction,
# the fastest to the target over steps doubling from 0.025 (PCA; the paper uses 0.1 for
# half this cost), 0.25 (Procrustes; the paper: 0.5) and 1 (linear cost); the next larger
# step oscillates without reaching the target in every case
CASES = {
    "pca": dict(full=dict(n=1000, p=800, rgd_eta=0.1), quick=dict(n=300, p=240, rgd_eta=0.1),
                r=0.3, tau=1e-4, eta=0.75),
    "procrustes": dict(full=dict(n=2000, p=500, rgd_eta=0.25),
                       quick=dict(n=600, p=150, rgd_eta=0.25), r=0.125, tau=1e-4, eta=2.0),
    "linear": dict(full=dict(n=800, p=800, rgd_eta=20.0), quick=dict(n=240, p=240, rgd_eta=10.0),
                   r=0.25, tau=1e-3, eta=None),
}


def haar(n, rng):
    q, r = np.linalg.qr(rng.standard_normal((n, n)))
    return q * np.sign(np.diag(r))


# -- the three problems: a jitopt Problem (with the row-block oracle), the same oracles
# -- for pymanopt, and the optimal value ----------------------------------------------------


def build_pca(n, p, rng):
    """-tr(XᵀAX), A = Q diag(10 logspace(-3, 0, n)) Qᵀ (the paper's 1000:1 spectrum)."""
    q = haar(n, rng)
    A = (q * (10.0 * np.logspace(-3, 0, n))) @ q.T
    A = 0.5 * (A + A.T)
    problem = pca(A, p)

    def cost(x):
        return -np.sum(x * (A @ x))

    def egrad(x):
        return -2.0 * (A @ x)

    return problem, Stiefel(n, p), cost, egrad, problem.fopt


def build_procrustes(n, p, rng):
    """‖XA - B‖²/(2p) on St(n, p), A (p x p) and B (n x p) Gaussian; M = AAᵀ, C = BAᵀ
    precomputed, so the gradient (XM - C)/p is row-separable; f* from a long rgd run.

    The quadratic part tr(X M Xᵀ)/(2p) is unchanged by a rotation X_I <- U X_I of a row
    block, so the cost is affine in U: f(X') = f(X) - <C_I X_Iᵀ, U - I>/p (``block_affine``,
    used by RSDM's exact step; pymanopt and rgd get the same cost and gradient as before)."""
    A = rng.standard_normal((p, p))
    B = rng.standard_normal((n, p))
    M = A @ A.T
    C = B @ A.T
    const = 0.5 * np.sum(B * B) / p

    def cost(x):
        return (0.5 * np.sum(x * (x @ M)) - np.sum(C * x)) / p + const

    def egrad(x):
        return (x @ M - C) / p

    def cost_and_egrad(x):
        xm = x @ M
        return (0.5 * np.sum(x * xm) - np.sum(C * x)) / p + const, (xm - C) / p

    def egrad_rows(x, rows):
        return (x[rows] @ M - C[rows]) / p

    def cost_change(x, rows, d, g):
        return np.vdot(g, d) + 0.5 * np.sum(d * (d @ M)) / p

    def block_affine(x, rows):
        return (C[rows] @ x[rows].T) / (-p)

    M_ = Stiefel(n, p)
    problem = Problem(M_, cost, egrad, cost_and_egrad=cost_and_egrad, egrad_rows=egrad_rows,
                      cost_change=cost_change, block_affine=block_affine)
    ref = rgd(problem, M_.random_point(rng), gtol=1e-9, maxiter=20000)
    return problem, M_, cost, egrad, ref.fun


def build_linear(n, p, rng):
    """-<C, X>/n on SO(n), C Gaussian; f* is the SO-restricted optimum."""
    problem = linear_cost(rng.standard_normal((n, n)) / n, special=True)
    C = -problem.egrad(problem.xopt)

    def cost(x):
        return -np.sum(C * x)

    def egrad(x):
        return -C

    return problem, problem.manifold, cost, egrad, problem.fopt


BUILD = {"pca": build_pca, "procrustes": build_procrustes, "linear": build_linear}


# -- the contenders: each returns (time to target or None, iterations, best gap) -------------


def run_pymanopt(kind, manifold, cost, egrad, x0, target, fopt, cap):
    import pymanopt

    pm = pymanopt.manifolds.Stiefel(*x0.shape)  # O(n) as St(n, n): QR keeps det X
    clock = TargetClock(target)

    @pymanopt.function.numpy(pm)
    def f(X):
        return clock.check(cost(X))

    @pymanopt.function.numpy(pm)
    def g(X):
        return egrad(X)

    cls = {"SD": pymanopt.optimizers.SteepestDescent,
           "CG": pymanopt.optimizers.ConjugateGradient}[kind]
    opt = cls(max_time=cap, max_iterations=10**9, min_gradient_norm=0.0, min_step_size=0.0,
              max_cost_evaluations=10**9, verbosity=0)
    clock.start()
    nit = None
    try:
        nit = opt.run(pymanopt.Problem(pm, f, euclidean_gradient=g),
                      initial_point=x0.copy()).iterations
    except TargetReached:
        pass
    return clock.elapsed, nit, (clock.best - fopt) / abs(fopt)


def _stop_at(target):
    def callback(intermediate_result):
        if intermediate_result.fun <= target:
            raise StopIteration
    return callback


def run_rgd(problem, x0, target, fopt, cap, step="bb"):
    res = rgd(problem, x0, gtol=0.0, maxiter=10**9, max_time=cap, history=True,
              callback=_stop_at(target), step=step)
    hit = res.history["fun"][-1] <= target
    return (res.history["time"][-1] if hit else None), res.nit, (res.fun - fopt) / abs(fopt)


def run_rsdm(problem, x0, target, fopt, cap, **options):
    res = rsdm(problem, x0, gtol=0.0, f_target=target, maxiter=10**9, max_time=cap,
               history=True, rng=0, **options)
    hit = res.history["fun"][-1] <= target
    return (res.history["time"][-1] if hit else None), res.nit, (res.fun - fopt) / abs(fopt)


def median_run(run, repeats):
    outs = [run() for _ in range(repeats)]
    times = [o[0] for o in outs]
    t = None if any(v is None for v in times) else statistics.median(times)
    return t, outs[-1][1], min(o[2] for o in outs), times


def fmt_time(t, cap):
    return f">{cap:g} (not reached)" if t is None else f"{t:.2f}"


def r_sweep(args, size, name, title, steps):
    """Print iterations and time to target of RSDM-P over r = n/8, n/4, n/2 for the steps
    ``(label, options)`` on case ``name``; iterations should grow like (n/r)^2."""
    spec = CASES[name]
    n, p = spec[size]["n"], spec[size]["p"]
    problem, manifold, cost, egrad, fopt = BUILD[name](n, p, np.random.default_rng(args.seed))
    x0 = manifold.random_point(np.random.default_rng(args.seed + 1))
    target = fopt + spec["tau"] * abs(fopt)
    print(f"\nr-sweep on {title}, {n}x{p}, RSDM-P ({', '.join(label for label, _ in steps)}), "
          f"target gap {spec['tau']:g}, {args.repeats} run(s) each")
    rows = []
    for r in (n // 8, n // 4, n // 2):
        for label, opts in steps:
            t, nit, gap, _ = median_run(
                lambda: run_rsdm(problem, x0, target, fopt, args.cap, r=r, **opts), args.repeats)
            rows.append((r, label, fmt_time(t, args.cap), nit, gap, nit * (r / n) ** 2))
    print_table([("r", "d"), ("step", ""), ("time s", ""), ("iterations", "d"),
                 ("best gap", ".1e"), ("iter * (r/n)^2", ".0f")], rows)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks rsdm", description=__doc__)
    ap.add_argument("--quick", action="store_true",
                    help="small sizes (PCA 300x240, Procrustes 600x150, SO(240)) instead of "
                         "the spec's (1000x800, 2000x500, SO(800))")
    ap.add_argument("--cases", default="pca,procrustes,linear")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs, median shown")
    ap.add_argument("--cap", type=float, default=120.0, help="time cap per run, seconds")
    ap.add_argument("--no-sweep", action="store_true",
                    help="skip the r-sweeps (PCA; exact vs Armijo on the linear cost)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    cases = args.cases.split(",")
    for c in cases:
        if c not in CASES:
            ap.error(f"unknown case {c!r}; choose from {', '.join(CASES)}")

    # JIT warm-up on small instances (kernels depend on dtypes, not sizes)
    wp, wM, *_ = build_pca(40, 10, np.random.default_rng(1))
    wx = wM.random_point(2)
    warm_up(lambda: rsdm(wp, wx, r=10, maxiter=300, gtol=0, history=True, rng=0),
            "rsdm permutation")
    warm_up(lambda: rsdm(wp, wx, r=10, maxiter=300, gtol=0, sampling="orthogonal",
                         history=True, rng=0), "rsdm orthogonal")
    warm_up(lambda: rgd(wp, wx, maxiter=100, history=True), "rgd")
    wl = linear_cost(np.random.default_rng(3).standard_normal((20, 20)), special=True)
    warm_up(lambda: rsdm(wl, r=5, maxiter=300, gtol=0, rng=0), "rsdm linear SO(20)")
    warm_up(lambda: rsdm(wl, r=5, maxiter=300, gtol=0, step="exact", history=True, rng=0),
            "rsdm exact step, linear SO(20)")

    size = "quick" if args.quick else "full"
    summary = []
    for name in cases:
        spec = CASES[name]
        n, p = spec[size]["n"], spec[size]["p"]
        r = max(2, int(round(spec["r"] * n)))
        rng = np.random.default_rng(args.seed)
        problem, manifold, cost, egrad, fopt = BUILD[name](n, p, rng)
        x0 = manifold.random_point(np.random.default_rng(args.seed + 1))
        target = fopt + spec["tau"] * abs(fopt)
        print(f"\n== {name}: n = {n}, p = {p}, r = {r}, target relative gap "
              f"{spec['tau']:g}, f* = {fopt:.10g}, rgd fixed step {spec[size]['rgd_eta']:g}, "
              f"cap {args.cap:g} s, {args.repeats} run(s) each", flush=True)
        contenders = [
            ("pymanopt SD", lambda: run_pymanopt("SD", manifold, cost, egrad, x0, target,
                                                 fopt, args.cap)),
            ("pymanopt CG", lambda: run_pymanopt("CG", manifold, cost, egrad, x0, target,
                                                 fopt, args.cap)),
            ("jitopt rgd", lambda: run_rgd(problem, x0, target, fopt, args.cap)),
            ("rgd fixed step", lambda: run_rgd(problem, x0, target, fopt, args.cap,
                                               step=spec[size]["rgd_eta"])),
            ("RSDM-P armijo", lambda: run_rsdm(problem, x0, target, fopt, args.cap, r=r)),
            ("RSDM-O armijo", lambda: run_rsdm(problem, x0, target, fopt, args.cap, r=r,
                                               sampling="orthogonal")),
        ]
        if problem.has_block_affine:  # the closed-form block minimizer
            contenders.append(("RSDM-P exact", lambda: run_rsdm(
                problem, x0, target, fopt, args.cap, r=r, step="exact")))
        if spec["eta"] is not None:
            eta = spec["eta"]
            contenders.append((f"RSDM-P eta={eta:g}", lambda: run_rsdm(
                problem, x0, target, fopt, args.cap, r=r, step=eta)))
            contenders.append((f"RSDM-O eta={eta:g}", lambda: run_rsdm(
                problem, x0, target, fopt, args.cap, r=r, step=eta, sampling="orthogonal")))
        results = {}
        for label, run in contenders:
            results[label] = median_run(run, args.repeats)
            t, nit, gap, times = results[label]
            print(f"  {label:<16} time to target {fmt_time(t, args.cap):>18}  iterations "
                  f"{nit}  best gap {gap:.2e}  runs {['-' if v is None else round(v, 2) for v in times]}",
                  flush=True)
        summary.append((name, n, p, r, results))

    print("\nTime-to-target ratios: other / RSDM (> 1 means RSDM is faster); a '>' ratio "
          "means the other solver hit the cap, '<' that RSDM did")
    rows = []
    for name, n, p, r, results in summary:
        for label in [k for k in results if k.startswith("RSDM")]:
            t = results[label][0]
            row = [name, f"{n}x{p}", r, label, t if t is not None else None]
            for other in ("pymanopt SD", "pymanopt CG", "jitopt rgd", "rgd fixed step"):
                to = results[other][0]
                if t is None and to is None:
                    row.append("both capped")
                elif t is None:
                    row.append(f"<{to / args.cap:.2f}")
                elif to is None:
                    row.append(f">{args.cap / t:.2f}")
                else:
                    row.append(f"{to / t:.2f}")
            rows.append(row)
    print_table([("case", ""), ("size", ""), ("r", "d"), ("RSDM", ""), ("RSDM s", ".2f"),
                 ("SD/RSDM", ""), ("CG/RSDM", ""), ("rgd/RSDM", ""), ("rgd-fixed/RSDM", "")],
                rows)

    if not args.no_sweep:
        eta = CASES["pca"]["eta"]
        sweeps = {"pca": ("PCA", (("armijo", {}), (f"eta={eta:g}", {"step": eta}))),
                  # the exact step against Armijo, over r
                  "linear": ("the linear cost on SO(n)",
                             (("exact", {"step": "exact"}), ("armijo", {})))}
        for name, (title, steps) in sweeps.items():
            if name in cases:
                r_sweep(args, size, name, title, steps)
    return 0
