"""rgd vs pymanopt SteepestDescent (and ConjugateGradient) on PCA over Stiefel(n, p)."""

import argparse
import time

import numpy as np

from jitopt.manifolds import Stiefel
from jitopt.problems import pca, spectrum_matrix
from jitopt.solvers import rgd

from ._common import print_table, timed_runs, warm_up

DEFAULT_SIZES = "200x5,1000x10,4000x20"


def parse_sizes(text):
    try:
        sizes = [tuple(int(v) for v in item.lower().split("x")) for item in text.split(",")]
    except ValueError:
        sizes = None
    if not sizes or any(len(s) != 2 or not 1 <= s[1] <= s[0] for s in sizes):
        raise argparse.ArgumentTypeError(
            f"--sizes must look like 200x5,1000x10 with 1 <= p <= n, got {text!r}")
    return sizes


def rgrad_norm(A, x):
    """Riemannian gradient norm of -tr(XᵀAX) on Stiefel (embedded metric), in NumPy."""
    egrad = -2.0 * (A @ x)
    xtg = x.T @ egrad
    return float(np.linalg.norm(egrad - x @ (0.5 * (xtg + xtg.T))))


def pymanopt_problem(A, n, p):
    """The natural pymanopt user code, with call counters."""
    import pymanopt

    manifold = pymanopt.manifolds.Stiefel(n, p)
    counts = {"cost": 0, "grad": 0}

    @pymanopt.function.numpy(manifold)
    def cost(X):
        counts["cost"] += 1
        return -np.sum(X * (A @ X))

    @pymanopt.function.numpy(manifold)
    def euclidean_gradient(X):
        counts["grad"] += 1
        return -2.0 * (A @ X)

    problem = pymanopt.Problem(manifold, cost, euclidean_gradient=euclidean_gradient)
    return problem, counts


def run_pymanopt(kind, A, x0, gtol, max_time):
    """One pymanopt run; returns a dict of what the table shows."""
    import pymanopt

    n, p = x0.shape
    problem, counts = pymanopt_problem(A, n, p)
    cls = {"SD": pymanopt.optimizers.SteepestDescent,
           "CG": pymanopt.optimizers.ConjugateGradient}[kind]
    opt = cls(max_time=max_time, max_iterations=10**9, min_gradient_norm=gtol,
              min_step_size=0.0, max_cost_evaluations=10**9, verbosity=0)
    res = opt.run(problem, initial_point=x0.copy())
    return {"x": res.point, "fun": float(res.cost), "nit": res.iterations,
            "nfev": counts["cost"], "njev": counts["grad"],
            "converged": "min grad norm" in res.stopping_criterion,
            "why": res.stopping_criterion}


def run_jitopt(problem, x0, gtol, max_time):
    res = rgd(problem, x0, gtol=gtol, maxiter=10**9, max_time=max_time)
    return {"x": res.x, "fun": res.fun, "nit": res.nit, "nfev": res.nfev, "njev": res.njev,
            "converged": res.success, "why": res.message}


def measure(label, run, repeats, A, fopt, gtol):
    med, times, out = timed_runs(run, repeats)
    out.update(time=med, times=times, grad_norm=rgrad_norm(A, out["x"]),
               gap=(out["fun"] - fopt) / abs(fopt))
    if not out["converged"]:
        print(f"  {label}: NOT REACHED the tolerance ({out['why']}); gradient norm reached "
              f"{out['grad_norm']:.3e} > gtol {gtol:.3e}")
    return out


def show_time(out):
    s = f"{out['time']:.4g}"
    return s if out["converged"] else f">{s} (not reached)"


def show_ratio(other, jit):
    r = f"{other['time'] / jit['time']:.2f}"
    if not other["converged"]:
        r = ">" + r
    if not jit["converged"]:
        r += " (jitopt not reached)"
    return r


def python_overhead(seed, repeats, gtol_rel=1e-6):
    """Split rgd's time per iteration at (200, 5) into oracle, manifold operations and Python.

    Uses its own tight tolerance so that the one-time set-up is spread over many iterations.
    """
    from jitopt.manifolds import _stiefel as S
    from jitopt.problems._matrix import _pca_cost_and_egrad

    n, p = 200, 5
    A = spectrum_matrix(n, rng=seed)
    x0 = Stiefel(n, p).random_point(seed + 1)
    gtol = gtol_rel * rgrad_norm(A, x0)
    plain = pca(A, p)
    med, times, res = timed_runs(lambda: rgd(plain, x0, gtol=gtol, maxiter=10**9), repeats)
    fastest, nit = min(times), res.nit

    # Instrument a fresh problem (instance attributes only): the user's oracle, the
    # Problem layer around it (counting, checks) and the manifold methods rgd calls.
    # Each wrapper adds its time to spent[name] = [seconds, calls].
    spent = {}

    def timed(name, f):
        spent[name] = [0.0, 0]

        def wrapper(*args):
            t0 = time.perf_counter()
            out = f(*args)
            rec = spent[name]
            rec[0] += time.perf_counter() - t0
            rec[1] += 1
            return out
        return wrapper

    probe = timed("probe", lambda: None)  # the timing wrapper's own cost, subtracted below
    for _ in range(100000):
        probe()
    wrap_cost = spent.pop("probe")[0] / 100000

    inner = pca(A, p)
    inner._cost_and_egrad = timed("oracle", inner._cost_and_egrad)
    inner.cost_and_egrad = timed("Problem.cost_and_egrad", inner.cost_and_egrad)
    M = inner.manifold
    methods = ("retraction", "euclidean_to_riemannian_gradient", "transport",
               "inner_product", "norm", "validate_point")
    for meth in methods:
        setattr(M, meth, timed(meth, getattr(M, meth)))
    best = None  # keep the breakdown of the fastest instrumented run (least disturbed)
    for _ in range(repeats):
        for rec in spent.values():
            rec[:] = [0.0, 0]
        t0 = time.perf_counter()
        res2 = rgd(inner, x0, gtol=gtol, maxiter=10**9)
        instr = time.perf_counter() - t0
        if best is None or instr < best[0]:
            best = (instr, {k: list(v) for k, v in spent.items()})
    instr, spent = best
    if res2.nit != nit:
        print(f"  (instrumented run took {res2.nit} iterations instead of {nit})")
    for rec in spent.values():
        rec[0] -= rec[1] * wrap_cost

    # per-call time of what each method runs underneath: NumPy and LAPACK calls
    u = Stiefel(n, p).projection(x0, -2.0 * (A @ x0))
    y = Stiefel(n, p).retraction(x0, 0.01 * u)
    below = {
        "oracle": ("_pca_cost_and_egrad (NumPy)", lambda: _pca_cost_and_egrad(x0, A)),
        "retraction": ("qr_retraction (LAPACK)", lambda: S.qr_retraction(x0, u)),
        "euclidean_to_riemannian_gradient": ("stiefel_projection (NumPy)",
                                             lambda: S.stiefel_projection(x0, u)),
        "transport": ("stiefel_projection (NumPy)", lambda: S.stiefel_projection(y, u)),
        "inner_product": ("np.vdot", lambda: np.vdot(u, u)),
        "norm": ("np.vdot, sqrt", lambda: np.sqrt(np.vdot(u, u))),
    }

    rows, kernel_total = [], 0.0
    for name, (t, calls) in spent.items():
        if name == "Problem.cost_and_egrad":
            continue
        what, f = below.get(name, ("-", None))
        k = _per_call(f) if f else None
        kern = min(k * calls * 1e-6, t) if k is not None else 0.0
        if name != "oracle":
            kernel_total += kern
        rows.append((name, calls / nit, t / nit * 1e6, t / max(calls, 1) * 1e6, what,
                     k, kern / nit * 1e6, (t - kern) / nit * 1e6))
    layer = spent["Problem.cost_and_egrad"][0] - spent["oracle"][0]
    n_wrapped = sum(v[1] for v in spent.values())
    loop = instr - spent["oracle"][0] - layer - sum(
        spent[m][0] for m in methods) - n_wrapped * wrap_cost
    rows.append(("Problem layer (counting, checks)", spent["Problem.cost_and_egrad"][1] / nit,
                 layer / nit * 1e6, None, "-", None, 0.0, layer / nit * 1e6))
    rows.append(("rgd step + run driver (rest)", None, loop / nit * 1e6, None, "-", None,
                 0.0, loop / nit * 1e6))
    oracle = spent["oracle"][0]
    python = instr - oracle - kernel_total - n_wrapped * wrap_cost

    print(f"\nrgd per-iteration cost at (n, p) = (200, 5), gtol = {gtol_rel:g} * "
          f"||grad f(x0)||: {nit} iterations, {res.nfev} fused cost+gradient calls")
    print(f"  uninstrumented, {repeats} runs: median {med / nit * 1e6:.1f} us/iteration, "
          f"fastest {fastest / nit * 1e6:.1f} us/iteration (the fastest runs are the least "
          "disturbed by other work on the machine and are used below)")
    print(f"  time in the oracle (fastest instrumented run): {oracle / nit * 1e6:.1f} "
          "us/iteration")
    print(f"  => Python-level overhead = total - oracle = "
          f"{(fastest - oracle) / nit * 1e6:.1f} us/iteration "
          f"({(fastest - oracle) / fastest:.0%} of the time)")
    print(f"  Breakdown of the fastest of {repeats} instrumented runs ({instr / nit * 1e6:.1f} "
          f"us/iteration; the "
          f"timing wrapper's {wrap_cost * 1e6:.2f} us/call is subtracted). 'below' is what the "
          "method runs underneath, timed alone (best of 9 x 500 calls); 'Python' is the "
          "rest of the method's time (argument conversion, checks, float()):")
    print_table([("part", ""), ("calls/it", ".2f"), ("us/it", ".1f"), ("us/call", ".2f"),
                 ("below", ""), ("below us/call", ".2f"), ("below us/it", ".1f"),
                 ("Python us/it", ".1f")], rows)
    print(f"  Summary per iteration: oracle {oracle / nit * 1e6:.1f} us, manifold operations "
          f"(NumPy and LAPACK calls) {kernel_total / nit * 1e6:.1f} us, Python "
          f"(wrappers, checks, loop) {python / nit * 1e6:.1f} us.")


def _per_call(f, calls=500):
    """Best of 9 batches, microseconds per call."""
    f()
    best = np.inf
    for _ in range(9):
        t0 = time.perf_counter()
        for _ in range(calls):
            f()
        best = min(best, (time.perf_counter() - t0) / calls)
    return best * 1e6


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks rgd_pca", description=__doc__)
    ap.add_argument("--sizes", type=parse_sizes, default=parse_sizes(DEFAULT_SIZES),
                    help=f"cases as NxP,... (default {DEFAULT_SIZES})")
    ap.add_argument("--repeats", type=int, default=3,
                    help="timed runs per solver, the median is shown (default 3)")
    ap.add_argument("--single-run-from", type=int, default=4000, metavar="N",
                    help="one timed run for n >= N (default 4000)")
    ap.add_argument("--gtol-rel", type=float, default=1e-3,
                    help="gradient-norm tolerance relative to the gradient norm at x0 "
                         "(default 1e-3)")
    ap.add_argument("--max-time", type=float, default=600.0,
                    help="time cap of each run, seconds (default 600)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-cg", action="store_true", help="skip pymanopt ConjugateGradient")
    ap.add_argument("--no-overhead", action="store_true",
                    help="skip the per-iteration overhead analysis at (200, 5)")
    args = ap.parse_args(argv)
    if args.repeats < 1 or not args.gtol_rel > 0 or not args.max_time > 0:
        ap.error("--repeats must be >= 1, --gtol-rel and --max-time > 0")

    print(f"PCA: min -tr(XᵀAX) over Stiefel(n, p), A = spectrum_matrix(n, rng={args.seed}) "
          "(eigenvalues geomspace(1, 100, n)),")
    print(f"x0 = Stiefel(n, p).random_point({args.seed + 1}) for every solver; stop at "
          f"Riemannian gradient norm <= gtol = {args.gtol_rel:g} * ||grad f(x0)||.")
    print(f"pymanopt: numpy backend, min_gradient_norm = gtol, max_time = {args.max_time:g} s, "
          "other stopping criteria off. jitopt: rgd defaults (BB step, nonmonotone Armijo).")
    print("Times are wall-clock seconds around the solver call, median of the timed runs.\n")

    # warm both sides up on a small problem (Numba kernels depend on dtypes, not sizes)
    wA = spectrum_matrix(50, rng=args.seed)
    wx = Stiefel(50, 3).random_point(args.seed + 1)
    wproblem, wgtol = pca(wA, 3), 1e-6 * rgrad_norm(wA, wx)
    warm_up(lambda: rgd(wproblem, wx, gtol=wgtol), "jitopt rgd, Stiefel(50, 3)")
    run_pymanopt("SD", wA, wx, wgtol, 60)
    run_pymanopt("CG", wA, wx, wgtol, 60)

    results = []
    for n, p in args.sizes:
        repeats = 1 if n >= args.single_run_from else args.repeats
        t0 = time.perf_counter()
        A = spectrum_matrix(n, rng=args.seed)
        problem = pca(A, p)
        x0 = Stiefel(n, p).random_point(args.seed + 1)
        gtol = args.gtol_rel * rgrad_norm(A, x0)
        print(f"(n, p) = ({n}, {p}): problem built in {time.perf_counter() - t0:.1f} s "
              f"(not timed), gtol = {gtol:.3e}, {repeats} timed run(s) per solver", flush=True)
        fopt = problem.fopt
        jit = measure("jitopt rgd", lambda: run_jitopt(problem, x0, gtol, args.max_time),
                      repeats, A, fopt, gtol)
        sd = measure("pymanopt SD", lambda: run_pymanopt("SD", A, x0, gtol, args.max_time),
                     repeats, A, fopt, gtol)
        cg = None if args.no_cg else measure(
            "pymanopt CG", lambda: run_pymanopt("CG", A, x0, gtol, args.max_time),
            repeats, A, fopt, gtol)
        results.append((n, p, repeats, gtol, jit, sd, cg))

    print("\nTime to the gradient tolerance (ratio = pymanopt time / jitopt time; "
          "> 1 means jitopt is faster)")
    rows = []
    for n, p, repeats, gtol, jit, sd, cg in results:
        rows.append((n, p, repeats, show_time(jit), show_time(sd), show_ratio(sd, jit),
                     jit["nit"], sd["nit"], jit["time"] / max(jit["nit"], 1) * 1e3,
                     sd["time"] / max(sd["nit"], 1) * 1e3,
                     cg and show_time(cg), cg and show_ratio(cg, jit), cg and cg["nit"]))
    print_table([("n", "d"), ("p", "d"), ("runs", "d"), ("jitopt s", ""), ("SD s", ""),
                 ("SD/jit", ""), ("jit it", "d"), ("SD it", "d"), ("jit ms/it", ".3f"),
                 ("SD ms/it", ".3f"), ("CG s", ""), ("CG/jit", ""), ("CG it", "d")], rows)

    print("\nOracle calls (cost evaluations / gradient evaluations; jitopt's are fused "
          "cost+gradient calls), final relative gap (f - f*)/|f*| and gradient norm")
    rows = []
    for n, p, repeats, gtol, jit, sd, cg in results:
        rows.append((n, p, f"{jit['nfev']}/{jit['njev']}", f"{sd['nfev']}/{sd['njev']}",
                     cg and f"{cg['nfev']}/{cg['njev']}", jit["gap"], sd["gap"],
                     cg and cg["gap"], gtol, jit["grad_norm"], sd["grad_norm"],
                     cg and cg["grad_norm"]))
    print_table([("n", "d"), ("p", "d"), ("jit f/g", ""), ("SD f/g", ""), ("CG f/g", ""),
                 ("jit gap", ".1e"), ("SD gap", ".1e"), ("CG gap", ".1e"), ("gtol", ".1e"),
                 ("jit |g|", ".1e"), ("SD |g|", ".1e"), ("CG |g|", ".1e")], rows)
    print("\nAll timed runs (s): " + "; ".join(
        f"({n},{p}) jit {fmt(j['times'])} SD {fmt(s['times'])}"
        + (f" CG {fmt(c['times'])}" if c else "")
        for n, p, _, _, j, s, c in results))

    if not args.no_overhead:
        python_overhead(args.seed, args.repeats * 3)
    return 0


def fmt(times):
    return "[" + ", ".join(f"{t:.3f}" for t in times) + "]"
