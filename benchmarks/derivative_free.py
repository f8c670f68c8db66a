"""nelder_mead and particle_swarm vs pymanopt's NelderMead and ParticleSwarm on Rayleigh
quotients (spheres, Stiefel) and a three-well cost on the 2-sphere.

Each solver runs with its defaults from the same random points (pymanopt's NelderMead
draws its own simplex: an initial point is refused by pymanopt 2.2.1); the cost wrapper
records the evaluations and the time at which ``f - f* <= 1e-6`` was first reached. Columns:
the share of seeds ending within 1e-6 of the optimum, the median evaluations and seconds to
reach it, the median total evaluations and seconds of a run (pymanopt has no convergence
test: it spends its whole budget), and jitopt's ratio (pymanopt / jitopt) of the time to
1e-6. The first call of each jitopt method (module import, manifold kernels) is reported
apart.
"""

import argparse
import statistics
import time

import numpy as np

import jitopt
from jitopt.manifolds import Sphere, Stiefel

from ._common import print_table, warm_up

TARGET = 1e-6


def wells(x):
    """Three wells of depths 1, 1.3 and 0.8 on the unit sphere of R^3."""
    centres = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, -0.6, 0.8]])
    depths = np.array([1.0, 1.3, 0.8])
    return float(-depths @ np.exp(-4.0 * np.sum((x - centres) ** 2, axis=1)))


def wells_minimum():
    """The minimum of :func:`wells`: a dense grid, then nelder_mead from its best point."""
    t, p = np.meshgrid(np.linspace(0, np.pi, 181), np.linspace(0, 2 * np.pi, 361))
    grid = np.stack([np.sin(t) * np.cos(p), np.sin(t) * np.sin(p), np.cos(t)], -1)
    grid = grid.reshape(-1, 3)
    start = grid[np.argmin([wells(g) for g in grid])]
    res = jitopt.solvers.nelder_mead(jitopt.Problem(Sphere(3), wells), start, tol=1e-12,
                                     ftol=0.0, rng=0)
    return res.fun


def cases():
    """``{name: (jitopt manifold, pymanopt manifold factory, cost, f*)}``."""
    import pymanopt

    out = {}
    for n in (3, 5, 8):
        A = np.diag(np.arange(1.0, n + 1))
        out[f"Rayleigh S^{n - 1}"] = (Sphere(n), lambda n=n: pymanopt.manifolds.Sphere(n),
                                      lambda x, A=A: float(x @ A @ x), 1.0)
    B = np.random.default_rng(1).standard_normal((4, 4))
    B = B + B.T
    out["trace St(4,2)"] = (Stiefel(4, 2), lambda: pymanopt.manifolds.Stiefel(4, 2),
                            lambda X: float(np.trace(X.T @ B @ X)),
                            float(np.linalg.eigvalsh(B)[:2].sum()))
    out["three wells S^2"] = (Sphere(3), lambda: pymanopt.manifolds.Sphere(3), wells,
                              wells_minimum())
    return out


class Recorder:
    """The cost, recording the evaluations and seconds at which it first came within
    ``TARGET`` of ``fopt``."""

    def __init__(self, cost, fopt):
        self.cost, self.fopt = cost, fopt
        self.calls, self.hit, self.t0 = 0, None, time.perf_counter()

    def __call__(self, x):
        self.calls += 1
        f = self.cost(x)
        if self.hit is None and f - self.fopt <= TARGET:
            self.hit = (self.calls, time.perf_counter() - self.t0)
        return f


def run_jitopt(method, manifold, cost, fopt, seed):
    rec = Recorder(cost, fopt)
    res = jitopt.get_method(method).solver(jitopt.Problem(manifold, rec), rng=seed)
    return rec, res.fun, time.perf_counter() - rec.t0


def run_pymanopt(kind, factory, cost, fopt, seed):
    import pymanopt

    manifold = factory()
    rec = Recorder(cost, fopt)
    problem = pymanopt.Problem(manifold, pymanopt.function.numpy(manifold)(lambda x: rec(x)))
    cls = {"NM": pymanopt.optimizers.NelderMead, "PSO": pymanopt.optimizers.ParticleSwarm}
    np.random.seed(seed)  # pymanopt draws from the global generator
    rec.t0 = time.perf_counter()
    try:
        res = cls[kind](verbosity=0).run(problem)
    except NotImplementedError:  # NelderMead needs dist and log (none on Stiefel)
        return None
    return rec, float(res.cost), time.perf_counter() - rec.t0


def summary(runs, fopt):
    """(success share, median evaluations to target, median seconds to target, median
    evaluations, median seconds) over the seeds; dashes when the solver does not run."""
    if None in runs:
        return ("fails", None, None, None, None)
    hits = [rec.hit for rec, _, _ in runs if rec.hit is not None]
    ok = sum(f - fopt <= TARGET for _, f, _ in runs) / len(runs)
    med = statistics.median
    return (ok, med([h[0] for h in hits]) if hits else None,
            med([h[1] for h in hits]) if hits else None,
            med([rec.calls for rec, _, _ in runs]), med([t for _, _, t in runs]))


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks derivative_free",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=5, help="runs per solver and case")
    args = parser.parse_args(argv)
    table = cases()
    sphere, _, rayleigh, fopt = table["Rayleigh S^2"]
    for method in ("nelder_mead", "particle_swarm"):
        warm_up(lambda method=method: run_jitopt(method, sphere, rayleigh, fopt, 0), method)
    rows = []
    for name, (manifold, factory, cost, fopt) in table.items():
        for ours, theirs in (("nelder_mead", "NM"), ("particle_swarm", "PSO")):
            mine = summary([run_jitopt(ours, manifold, cost, fopt, s)
                            for s in range(args.seeds)], fopt)
            other = summary([run_pymanopt(theirs, factory, cost, fopt, s)
                             for s in range(args.seeds)], fopt)
            ratio = other[2] / mine[2] if mine[2] and other[2] else None
            rows.append((name, ours, *mine, ratio))
            rows.append((name, f"pymanopt {theirs}", *other, None))
    print(f"\n{args.seeds} seeds; target f - f* <= {TARGET:g}")
    print_table([("case", "s"), ("solver", "s"), ("success", ".0%"), ("fev to 1e-6", ".0f"),
                 ("s to 1e-6", ".4f"), ("fev", ".0f"), ("s", ".3f"),
                 ("time ratio", ".1f")], rows)


if __name__ == "__main__":
    main()
