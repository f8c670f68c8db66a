"""Grassmann PCA on a Dask cluster: time per full pass and per SERENA epoch with 1 and 2
worker processes against the in-memory problem, the client's peak memory, and the overhead
of each kind of distributed oracle call.

The samples (n x d, default 2e6 x 50: 800 MB) are generated on the workers by
``dask.array.random`` and never on the client. Each configuration runs in its own process
so that its peak resident memory is its own: ``in-memory`` builds the same data with
NumPy in the process. Per configuration: seconds per full pass (the gradient at a new point,
the median of ``--repeats``), seconds per R-SVRG epoch (one full gradient and
ceil(sqrt n) steps of ceil(sqrt n) samples, the rows gathered a window at a time), the
resident memory after start-up and its peak growth. The overhead table times, on small data
(so that the time is the fixed cost): a full pass, a minibatch computed on the workers (one
round trip), the scheduler's cost per task, and the gather of rows (per MB).

Usage: ``python -m benchmarks distributed [--n N] [--d D] [--chunk ROWS] [--workers 1,2]
[--repeats R] [--client-memory MB]``.
"""

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import time

import numpy as np

SCALES = (20.0, 10.0, 5.0, 3.0, 2.0)


def _rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2 ** 20


def _peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _time_passes(problem, repeats, rng):
    """Median seconds of a full gradient at a new point (one pass over the samples)."""
    times = []
    for _ in range(repeats):
        x = problem.manifold.random_point(rng)
        t0 = time.perf_counter()
        problem.egrad(x)
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def _time_epoch(problem, rng, jit):
    from jitopt import solvers

    m = math.ceil(math.sqrt(problem.n_samples))
    x0 = problem.manifold.random_point(rng)
    options = dict(maxiter=m, max_passes=1e9, rng=1, step_size=1e-3)
    if jit is not None:
        options["jit"] = jit
    t0 = time.perf_counter()
    res = solvers.r_svrg(problem, x0, **options)
    return time.perf_counter() - t0, res


def run_one(config, n, d, chunk, repeats, client_memory):
    """One configuration in this process; returns a dict of measurements."""
    import jitopt  # noqa: F401  (imported before the baseline)
    from jitopt import problems as jp

    rng = np.random.default_rng(0)
    out = {"config": config}
    if config == "in-memory":
        base = _rss_mb()
        t0 = time.perf_counter()
        Z = rng.standard_normal((n, d))
        Z[:, :len(SCALES)] *= SCALES
        problem = jp.finite_sum_pca(Z, 5)
        out["setup_s"] = time.perf_counter() - t0
        _time_passes(problem, 1, rng)  # compile or load the kernels
        out["pass_s"] = _time_passes(problem, repeats, rng)
        out["pass_peak_growth_mb"] = _peak_mb() - base
        _time_epoch(jp.finite_sum_pca(Z[:2000], 5), rng, "auto")
        out["epoch_numba_s"], _ = _time_epoch(problem, rng, "auto")
        out["epoch_python_s"], _ = _time_epoch(problem, rng, False)
    else:
        import dask.array as da
        from distributed import Client, LocalCluster

        from jitopt import distributed as jd

        workers = int(config.split(":")[1])
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        client = Client(cluster)
        base = _rss_mb()
        t0 = time.perf_counter()
        Z = da.random.default_rng(0).standard_normal((n, d), chunks=(chunk, d))
        Z = Z * np.concatenate([SCALES, np.ones(d - len(SCALES))])
        problem = jd.finite_sum_pca(Z, 5, client=client, client_memory=client_memory)
        out["setup_s"] = time.perf_counter() - t0  # generation, persist, one moment pass
        _time_passes(problem, 1, rng)
        out["pass_s"] = _time_passes(problem, repeats, rng)
        out["pass_peak_growth_mb"] = _peak_mb() - base
        # the client's own kernels (minibatch gradients, retraction, transport), loaded once
        _time_epoch(jp.finite_sum_pca(rng.standard_normal((2000, d)), 5), rng, False)
        out["kernels_mb"] = _rss_mb() - base
        out["epoch_dask_s"], res = _time_epoch(problem, rng, None)
        out["gathers"] = problem.gathers
        out["max_window_mb"] = problem.max_window_bytes / 2 ** 20
        out["peak_growth_mb"] = _peak_mb() - base
        out["overheads"] = overheads(client)
        client.close()
        cluster.close()
    out["base_rss_mb"] = base
    out.setdefault("peak_growth_mb", _peak_mb() - base)
    out["data_mb"] = n * d * 8 / 2 ** 20
    return out


def _median_ms(call, repeats=10):
    call()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    return 1e3 * float(np.median(times))


def overheads(client):
    """Fixed costs on small data (10 000 x 50 samples in 20 chunks): a full pass (one task
    per worker thread and the reduction), a minibatch of 100 rows computed on the workers,
    the scheduler's cost per task (200 trivial tasks), and the gather of rows to the client
    (per MB)."""
    import dask.array as da

    from jitopt import distributed as jd
    from jitopt.distributed import _kernels as K

    rng = np.random.default_rng(1)
    Z = da.random.default_rng(1).standard_normal((10000, 50), chunks=(500, 50))
    small = jd.finite_sum_pca(Z, 5, client=client)
    full = _median_ms(lambda: small.egrad(small.manifold.random_point(rng)))
    x = small.manifold.random_point(rng)
    rows = _median_ms(lambda: small.egrad(x, rng.integers(0, 10000, 100)))
    tasks = _median_ms(lambda: client.gather(client.map(K.add, range(200), pure=False)),
                       repeats=5) / 200
    big = jd.finite_sum_pca(da.random.default_rng(2).standard_normal(
        (400000, 50), chunks=(20000, 50)), 5, client=client)
    keys = np.unique(rng.integers(0, 400000, 100000))
    big.store.take(keys[:10])
    t0 = time.perf_counter()
    big.store.take(keys)
    gather_s = time.perf_counter() - t0
    return {"full_pass_ms": full, "minibatch_on_workers_ms": rows, "per_task_ms": tasks,
            "gather_ms_per_mb": 1e3 * gather_s / (keys.size * 50 * 8 / 2 ** 20)}


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks distributed")
    parser.add_argument("--n", type=int, default=2_000_000)
    parser.add_argument("--d", type=int, default=50)
    parser.add_argument("--chunk", type=int, default=100_000)
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--client-memory", type=float, default=64.0,
                        help="MB of gathered rows the client may hold (two windows)")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    budget = int(args.client_memory * 2 ** 20)
    if args.one:
        print(json.dumps(run_one(args.one, args.n, args.d, args.chunk, args.repeats, budget)))
        return 0
    configs = ["in-memory"] + [f"dask:{w}" for w in args.workers.split(",")]
    results = {}
    for config in configs:
        cmd = [sys.executable, "-m", "benchmarks.distributed", "--one", config,
               "--n", str(args.n), "--d", str(args.d), "--chunk", str(args.chunk),
               "--repeats", str(args.repeats), "--client-memory", str(args.client_memory)]
        done = subprocess.run(cmd, capture_output=True, text=True, check=True,
                              cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        results[config] = json.loads(done.stdout.strip().splitlines()[-1])
    report(results, args)
    return 0


def report(results, args):
    mem = results["in-memory"]
    print(f"Grassmann PCA, n = {args.n}, d = {args.d}, p = 5, chunks of {args.chunk} rows "
          f"({mem['data_mb']:.0f} MB of data); client budget {args.client_memory:.0f} MB\n")
    print(f"{'configuration':<14}{'pass s':>9}{'vs mem':>8}{'epoch s':>10}{'vs mem':>8}"
          f"{'setup s':>9}{'base MB':>9}{'peak+ pass':>11}{'/data':>7}{'peak+ all':>10}"
          f"{'/data':>7}")
    for config, r in results.items():
        epoch = r.get("epoch_dask_s", r.get("epoch_python_s"))
        print(f"{config:<14}{r['pass_s']:>9.3f}{r['pass_s'] / mem['pass_s']:>8.2f}"
              f"{epoch:>10.2f}{epoch / mem['epoch_python_s']:>8.2f}{r['setup_s']:>9.1f}"
              f"{r['base_rss_mb']:>9.0f}{r['pass_peak_growth_mb']:>11.0f}"
              f"{r['pass_peak_growth_mb'] / r['data_mb']:>7.3f}{r['peak_growth_mb']:>10.0f}"
              f"{r['peak_growth_mb'] / r['data_mb']:>7.3f}")
    print("(peak+: growth of the peak resident memory over the base after start-up, after "
          "the passes and after the epoch)")
    for config, r in results.items():
        if "kernels_mb" in r:
            print(f"{config}: of the growth, {r['kernels_mb']:.0f} MB is the resident memory "
                  f"after loading the client's compiled kernels (on a 2000-sample problem), "
                  f"independent of n")
    print(f"\nin-memory epoch with the compiled inner loop: {mem['epoch_numba_s']:.2f} s "
          f"(the python-loop epoch above is the Dask problem's path)")
    for config, r in results.items():
        if "overheads" in r:
            o = r["overheads"]
            print(f"{config}: full pass over 10 000 rows {o['full_pass_ms']:.1f} ms, "
                  f"minibatch of 100 rows on the workers {o['minibatch_on_workers_ms']:.1f} "
                  f"ms, {o['per_task_ms']:.2f} ms per task, gather "
                  f"{o['gather_ms_per_mb']:.1f} ms/MB; epoch: {r['gathers']} window "
                  f"gathers, largest {r['max_window_mb']:.1f} MB")


if __name__ == "__main__":
    sys.exit(main())
