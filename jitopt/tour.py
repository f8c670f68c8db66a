"""The tour of ``python -m jitopt``: every method on a small built-in problem with a known
answer.

Each entry takes no argument and returns ``(method, problem description, result summary,
error to the known answer, error name)``. The tour sits above every other module: it imports
solvers and problems, and nothing imports it but ``jitopt.__main__``.
"""

import itertools

import numpy as np

from . import manifolds, problems, solvers
from ._core.problem import Problem
from .problems import ConstrainedProblem
from .games import NormalFormGame
from .sets import NonNegative
from .sparse import iht
from . import transport


def _status(res):
    return "converged" if res.success else "FAILED"


def rgd():
    """The top-5 eigenspace of a 200 x 200 matrix."""
    problem = problems.pca(problems.spectrum_matrix(200, rng=0), 5)
    res = solvers.rgd(problem, rng=1, gtol=1e-8)
    gap = abs(res.fun - problem.fopt) / abs(problem.fopt)
    return ("rgd", "PCA on Stiefel(200, 5)", f"{_status(res)}, {res.nit} iterations", gap,
            "rel. gap")


def riemannian():
    """Procrustes on SO(30) with an exact Hessian: rlbfgs, rcg and rtr against the closed
    form."""
    rng = np.random.default_rng(0)
    A = rng.standard_normal((60, 30))
    B = A @ np.linalg.qr(rng.standard_normal((30, 30)))[0] + 0.1 * rng.standard_normal((60, 30))
    base = problems.procrustes(A, B, special=True)
    ata = A.T @ A
    problem = Problem(base.manifold, None, None, cost_and_egrad=base.cost_and_egrad,
                      ehess=lambda x, u: 2.0 * (ata @ u), fopt=base.fopt)
    x0 = problem.manifold.random_point(1)
    runs = [solver(problem, x0, gtol=1e-8) for solver in (solvers.rlbfgs, solvers.rcg,
                                                           solvers.rtr)]
    gap = max(abs(r.fun - problem.fopt) for r in runs) / abs(problem.fopt)
    return ("rlbfgs/rcg/rtr", "Procrustes on SO(30)",
            f"{'converged' if all(r.success for r in runs) else 'FAILED'}, "
            f"{' / '.join(str(r.nit) for r in runs)} it.", gap, "rel. gap")


def rsdm():
    """A linear cost on SO(60) whose O(60) minimizer has det -1, so the answer is the
    SO-restricted optimum."""
    n = 60
    rng = np.random.default_rng(0)
    u, _ = np.linalg.qr(rng.standard_normal((n, n)))
    v, _ = np.linalg.qr(rng.standard_normal((n, n)))
    C = (u * np.r_[np.linspace(3.0, 2.0, n - 1), 1.0]) @ v.T
    if np.linalg.det(C) > 0:
        C[:, 0] = -C[:, 0]
    problem = problems.linear_cost(C, special=True)
    res = solvers.rsdm(problem, r=15, gtol=1e-9, rng=1)
    gap = abs(res.fun - problem.fopt) / abs(problem.fopt)
    return ("rsdm", f"linear cost on SO({n}), r = 15", f"{_status(res)}, {res.nit} iterations",
            gap, "rel. gap")


def serena():
    """R-SRVRG on PCA over Grassmann(20, 3), n = 2000, to the known optimum."""
    problem = problems.finite_sum_pca(problems.spiked_samples(2000, 20, (4.0, 3.0, 2.0), rng=0),
                                      3)
    res = solvers.r_srvrg(problem, rng=1, gtol=0.0, f_target=problem.fopt * (1 - 1e-8),
                          max_passes=60)  # the default step: no tuning
    gap = abs(res.fun - problem.fopt) / abs(problem.fopt)
    return ("r-srvrg", "PCA sum, Grassmann(20, 3), n=2000",
            f"{_status(res)}, {res.passes:.1f} passes", gap, "rel. gap")


def _disks(solver):
    """``solver`` on the barycenter of four translated disks on a 64 x 64 grid; the exact
    answer is the disk at the mean centre."""
    n = 64
    y, x = transport.grid_coordinates((n, n))
    centres = [(0.3, 0.3), (0.7, 0.35), (0.35, 0.7), (0.7, 0.7)]
    A = np.array([((y - a) ** 2 + (x - b) ** 2 <= 0.1 ** 2) * 1.0 for a, b in centres])
    a, b = np.mean(centres, axis=0)
    truth = ((y - a) ** 2 + (x - b) ** 2 <= 0.1 ** 2) * 1.0
    res = solver(problems.BarycenterProblem(A))
    err = np.sqrt(max(transport.wasserstein2_grid(res.x, truth), 0.0)) * n
    return (solver.__name__, "barycenter of 4 disks, 64x64 grid",
            f"{res.status.name.lower().replace('_', ' ')}, {res.nit} iterations", err, "W2 (px)")


def wdha():
    """WDHA on the barycenter of four translated disks (:func:`_disks`)."""
    return _disks(transport.wdha)


def sga():
    """SGA on the barycenter of four translated disks (:func:`_disks`)."""
    return _disks(transport.sga)


def sparse():
    """3-sparse nonnegative least squares, p = 12, against the best of all 220 supports
    (each solved by NNLS)."""
    from scipy.optimize import nnls

    X, y, _ = problems.sparse_regression_data(100, 12, 3, rho=0.7, snr=2.0, rng=0)
    best = min(nnls(X[:, list(S)], y)[1] for S in itertools.combinations(range(12), 3))
    fstar = 0.5 * best ** 2 / 100
    res = iht(problems.least_squares(X, y), k=3, constraint=NonNegative(), selection="signed",
              relax=2.0)
    return ("iht", "3-sparse NNLS 100x12 vs best subset", f"{_status(res)}, {res.nit} iterations",
            abs(res.fun - fstar) / fstar, "rel. gap")


def evi():
    """EVI on rock-paper-scissors: the marginals of an ε-CE of a zero-sum game approach its
    unique Nash equilibrium, uniform play."""
    A = np.array([[0.0, -1.0, 1.0], [1.0, 0.0, -1.0], [-1.0, 1.0, 0.0]])
    game = NormalFormGame([A, -A])
    res = game.correlated_equilibrium(tol=1e-4, deviations="ce", rng=0)
    # res.x is the mean of the mixture: the players' marginals, concatenated
    return ("evi", "rock-paper-scissors, CE (d = 6)", f"{_status(res)}, CE gap {res.gap:.0e}",
            float(np.abs(res.x - 1 / 3).max()), "|p - Nash|")


def dc():
    """Online DCA on the paper's drifting sparse robust regression (p = 20): distance to the
    known limit optimum."""
    prob = problems.online_sparse_robust_regression(p=20)
    res = solvers.online_dca(prob, rule="adaptive", max_samples=60000, maxiter=100000, rng=0)
    err = float(np.linalg.norm(res.x - prob.xopt) / np.linalg.norm(prob.xopt))
    return ("online_dca", "drifting robust regression (p = 20)",
            f"{res.samples} samples, {res.nit} it.", err, "rel. error")


def derivative_free():
    """Nelder–Mead and particle swarm on a Rayleigh quotient on Sphere(5), from the cost
    alone: the minimum is the smallest eigenvalue."""
    A = np.diag([1.0, 2.0, 3.0, 5.0, 8.0])
    problem = Problem(manifolds.Sphere(5), lambda x: x @ A @ x, fopt=1.0)
    runs = [solver(problem, rng=1) for solver in (solvers.nelder_mead, solvers.particle_swarm)]
    return ("nelder_mead", "Rayleigh, Sphere(5), no grad. (+swarm)",
            f"{'converged' if all(r.success for r in runs) else 'FAILED'}, "
            f"{' / '.join(str(r.nfev) for r in runs)} fev",
            max(abs(r.fun - problem.fopt) for r in runs), "abs. gap")


def constrained():
    """Nonnegative PCA of an entrywise positive 50 x 50 matrix, started at a point with
    negative entries: by Perron-Frobenius the answer is the top eigenvector, positive."""
    rng = np.random.default_rng(0)
    B = rng.uniform(0.0, 1.0, (50, 50))
    A = B + B.T
    w, V = np.linalg.eigh(A)
    perron = np.abs(V[:, -1])
    problem = ConstrainedProblem(manifolds.Sphere(50), lambda x: -x @ A @ x,
                                 lambda x: -2.0 * (A @ x), lower=0.0)
    x0 = manifolds.Sphere(50).random_point(1)
    runs = [solver(problem, x0) for solver in (solvers.ralm, solvers.repm)]
    err = max(float(np.linalg.norm(r.x - perron)) for r in runs)
    return ("ralm/repm", "nonnegative PCA on Sphere(50)",
            f"{'converged' if all(r.success for r in runs) else 'FAILED'}, "
            f"{' / '.join(str(r.nit) for r in runs)} it.", err, "|x - Perron|")


#: the entries of ``python -m jitopt``, in order
TOUR = (rgd, riemannian, rsdm, serena, wdha, sga, sparse, evi, dc, constrained,
        derivative_free)

#: the entry that compiles each method's kernels (``python -m jitopt --compile``)
ENTRY_OF = {"rgd": rgd, "rlbfgs": riemannian, "rcg": riemannian, "rtr": riemannian,
            "rsdm": rsdm, "wdha": wdha, "sga": sga, "iht": sparse, "evi": evi,
            "online_dca": dc, "ralm": constrained, "repm": constrained,
            **{name: serena for name in ("srge", "r-sgd", "r-svrg", "r-srg", "r-srm",
                                         "r-srvrg", "r-svrrm", "r-hybrid-sgd")},
            "nelder_mead": derivative_free, "particle_swarm": derivative_free}
