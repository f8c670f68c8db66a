"""SGA's order of updates: the symmetric step that ``jitopt.transport.sga`` takes (all
potentials at once) against the authors' form, which eliminates the last potential, in
its parallel (Jacobi), sequential (Gauss--Seidel) and random schemes. Dual value reached
for a budget of pushforwards, each scheme at each step scale, no guard.

The updates are written out here with the library's grid kernels (Legendre transform,
pushforward, DCT Poisson solve): a study of the choice, not a solver. Four Gaussians,
equal weights; the reference value is the symmetric step's after ten times the largest
budget.
"""

import argparse

import numpy as np

from jitopt.transport import _nd, grid_coordinates
from jitopt.transport._grid import _half_sq_norm
from jitopt.transport._poisson import _invlap_inplace

from ._common import print_table

MEANS = [(0.3, 0.35), (0.65, 0.4), (0.5, 0.7), (0.4, 0.55)]
COVS = [[[6, 2], [2, 4]], [[3, -1], [-1, 7]], [[5, 0], [0, 5]], [[4, 1], [1, 3]]]


class Dual:
    """The inputs ``mus`` (mean 1), the weights and the pieces of the dual
    :math:`D(f) = \\sum_i \\lambda_i \\int f_i^c\\,d\\mu_i`."""

    def __init__(self, n):
        y, x = grid_coordinates((n, n))
        d = [np.stack([y - m[0], x - m[1]], -1) for m in MEANS]
        mus = np.array([np.exp(-0.5 * np.einsum("...i,ij,...j->...", di,
                                                np.linalg.inv(np.array(c) * 1e-3), di))
                        for di, c in zip(d, COVS)])
        self.mus = mus / mus.mean(axis=(1, 2), keepdims=True)
        self.lam = np.full(len(MEANS), 1.0 / len(MEANS))
        self.q = _half_sq_norm((n, n))
        self.pushes = 0

    def conjugate(self, f):
        phi = self.q - f
        _nd.legendre(phi, phi)
        return phi

    def push(self, i, f):
        """:math:`\\rho_i = (\\nabla (q - f)^*)_\\#\\mu_i` (counted)."""
        self.pushes += 1
        out = np.empty_like(self.q)
        _nd.push(self.mus[i], self.conjugate(f), out, 8, 1.0, False)
        return out

    def value(self, F):
        return sum(l * np.mean(mu * (self.q - self.conjugate(f)))
                   for l, mu, f in zip(self.lam, self.mus, F))


def _invlap(r):
    r = r - r.mean()
    _invlap_inplace(r)
    return r


def symmetric(D, F, eta, rng):
    """All potentials from the same pushforwards, the constraint kept (the library's)."""
    R = np.array([D.push(i, F[i]) for i in range(len(F))])
    rbar = np.tensordot(D.lam, R, 1)
    for i in range(len(F)):
        F[i] += eta * _invlap(rbar - R[i])


def eliminated(scheme):
    """The authors' form: ``F[-1] = -sum_j lam_j F[j] / lam[-1]``; each update of ``F[j]``
    ascends along :math:`(-\\Delta)^{-1}(\\rho_n - \\rho_j)`."""
    def sweep(D, F, eta, rng):
        n, lam = len(F), D.lam

        def last():
            F[-1] = -np.tensordot(lam[:-1], F[:-1], 1) / lam[-1]
        if scheme == "parallel":
            rn = D.push(n - 1, F[-1])
            G = [_invlap(rn - D.push(j, F[j])) for j in range(n - 1)]
            for j in range(n - 1):
                F[j] += eta * G[j]
        else:
            for j in (range(n - 1) if scheme == "sequential" else rng.integers(0, n - 1, n - 1)):
                F[j] += eta * _invlap(D.push(n - 1, F[-1]) - D.push(j, F[j]))
                last()
        last()
    return sweep


SCHEMES = {"symmetric (jitopt)": symmetric, "authors', parallel": eliminated("parallel"),
           "authors', sequential": eliminated("sequential"),
           "authors', random": eliminated("random")}


def best_values(n, scheme, c, budgets):
    """The largest dual value within each of ``budgets`` pushforwards, at step
    ``c / max mu``."""
    D = Dual(n)
    F, rng, trace = np.zeros(D.mus.shape), np.random.default_rng(0), []
    while D.pushes < max(budgets):
        SCHEMES[scheme](D, F, c / D.mus.max(), rng)
        trace.append((D.pushes, D.value(F)))
    return [max([v for p, v in trace if p <= b], default=-np.inf) for b in budgets]


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks sga_order",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--grid", type=int, default=64)
    parser.add_argument("--steps", default="0.5,1,1.5,2,4")
    parser.add_argument("--budgets", default="120,300,600")
    args = parser.parse_args(argv)
    budgets = [int(b) for b in args.budgets.split(",")]
    ref = best_values(args.grid, "symmetric (jitopt)", 1.0, [10 * max(budgets)])[0]
    print(f"{args.grid}^2, four Gaussians; reference dual value {ref:.8f}; relative gap "
          "(ref - D) / ref of the best iterate")
    rows = []
    for scheme in SCHEMES:
        for c in (float(s) for s in args.steps.split(",")):
            rows.append([scheme, c] + [(ref - v) / ref for v in
                                       best_values(args.grid, scheme, c, budgets)])
    print_table([("scheme", "s"), ("c", ".1f")] + [(f"{b} pushforwards", ".1e")
                                                     for b in budgets], rows)


if __name__ == "__main__":
    main()
