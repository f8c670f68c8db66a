"""3-D grids: the building blocks (Legendre transform, inverse Laplacian, gradient,
pushforward) against brute force, closed forms and the 2-D kernels extruded; W2 between
translated balls; WDHA and SGA at 32^3 against the Bures barycenter of rotated Gaussians and
translated balls, a unit weight and identical inputs."""

import numpy as np
import pytest

from jitopt import Status
from jitopt.problems import BarycenterProblem
from jitopt.testing import bures_barycenter, density_moments
from jitopt.transport import (c_transform, grid_coordinates, inverse_laplacian,
                              legendre_transform, potential_gradient, pushforward, sga,
                              wasserstein2_grid, wdha, wdha_barycenter)

N = 32


def _cube(shape):
    return np.stack(grid_coordinates(shape))


def test_legendre_transform_is_exact():
    rng = np.random.default_rng(0)
    f = rng.normal(size=(5, 6, 7))
    X = _cube(f.shape).reshape(3, -1)
    brute = (X.T @ X - f.reshape(1, -1)).max(axis=1).reshape(f.shape)
    fs = legendre_transform(f)
    assert np.abs(fs - brute).max() <= 1e-14
    assert np.abs(legendre_transform(legendre_transform(fs)) - fs).max() <= 1e-14
    q = 0.5 * np.sum(_cube((8, 9, 10)) ** 2, axis=0)
    assert np.abs(legendre_transform(q) - q).max() <= 1e-15
    # separable: f(x, y, z) = g(x, y) + h(z) has f* = g* + h*
    g, h = rng.normal(size=(5, 6)), rng.normal(size=7)
    z = (np.arange(7) + 0.5) / 7
    hs = (z[:, None] * z[None, :] - h[None, :]).max(axis=1)
    np.testing.assert_allclose(legendre_transform(g[:, :, None] + h),
                               legendre_transform(g)[:, :, None] + hs, rtol=0, atol=1e-14)
    assert np.abs(c_transform(np.zeros((4, 5, 6)))).max() <= 1e-15


def test_inverse_laplacian_solves_the_neumann_problem():
    rng = np.random.default_rng(1)
    g = rng.normal(size=(6, 7, 8))
    u = inverse_laplacian(g)
    # the 7-point Laplacian with mirror ghosts, spacings 1 / n_a
    lap = np.zeros_like(u)
    for axis, n in enumerate(u.shape):
        e = np.concatenate([np.take(u, [0], axis), u, np.take(u, [-1], axis)], axis)
        lap += n * n * (np.take(e, range(2, n + 2), axis) - 2 * u
                        + np.take(e, range(0, n), axis))
    np.testing.assert_allclose(-lap, g - g.mean(), rtol=0, atol=1e-10)
    assert abs(u.mean()) <= 1e-15
    # in place, with the residual mean(u g) by Parseval
    from jitopt.transport._poisson import _invlap_inplace

    r = g.copy()
    assert abs(_invlap_inplace(r) - np.mean(u * g)) <= 1e-15 * np.mean(u * g)
    assert np.abs(r - u).max() <= 1e-15
    # constant along the depth: the 2-D solution, extruded
    g2 = rng.normal(size=(6, 7))
    np.testing.assert_allclose(inverse_laplacian(np.repeat(g2[:, :, None], 4, axis=2)),
                               np.repeat(inverse_laplacian(g2)[:, :, None], 4, axis=2),
                               rtol=0, atol=1e-13)


def test_gradient_and_pushforward():
    c = _cube((8, 9, 10))
    q = 0.5 * np.sum(c ** 2, axis=0)
    g = potential_gradient(q + 0.3 * c[0] * c[2])  # exact for quadratics
    assert g.shape == (8, 9, 10, 3)
    np.testing.assert_allclose(g[..., 0], c[0] + 0.3 * c[2], rtol=0, atol=1e-13)
    np.testing.assert_allclose(g[..., 2], c[2] + 0.3 * c[0], rtol=0, atol=1e-13)
    rng = np.random.default_rng(2)
    rho = rng.uniform(size=(8, 9, 10))
    assert np.abs(pushforward(rho, q) - rho).max() <= 1e-13  # the identity
    # a translation by (0.5, 0, 1.5) cells moves the mean by it, mass kept
    box = np.zeros((12, 12, 12))
    box[4:7, 3:6, 2:5] = 1.0
    c = _cube(box.shape)
    out = pushforward(box, 0.5 * np.sum(c ** 2, axis=0) + (0.5 * c[0] + 1.5 * c[2]) / 12)
    assert abs(out.sum() - box.sum()) <= 1e-12 and np.all(out >= 0)
    shift = [((out - box) * c[a]).sum() / box.sum() * 12 for a in range(3)]
    np.testing.assert_allclose(shift, [0.5, 0.0, 1.5], rtol=0, atol=1e-12)
    # a map that is the identity in depth on a density constant in depth: the 2-D
    # pushforward extruded (stretched cells included)
    r2 = rng.uniform(size=(10, 11))
    y, x = grid_coordinates((10, 11))
    f2 = 0.5 * (y ** 2 + x ** 2) + 0.05 * np.sin(3 * y) * np.cos(2 * x) + 0.4 * y * y
    z = (np.arange(5) + 0.5) / 5
    out = pushforward(np.repeat(r2[:, :, None], 5, axis=2), f2[:, :, None] + 0.5 * z * z)
    np.testing.assert_allclose(out, np.repeat(pushforward(r2, f2)[:, :, None], 5, axis=2),
                               rtol=0, atol=1e-12)


def test_pushforward_of_a_sparse_density_is_the_sum_of_its_parts():
    """The map is computed only in the rows that cells with mass read: the pushforward is
    still linear, a sparse density pushed as the sum of its parts, each pushed alone, and as
    the difference of two densities with mass everywhere (every row of the map computed),
    with stretched cells (sub-samples that read the next rows and planes) on the faces and
    inside."""
    c = _cube((9, 10, 11))
    f = (0.5 * np.sum(c ** 2, axis=0) + 0.35 * c[0] ** 2 + 0.2 * c[1] ** 2
         + 0.03 * np.sin(4 * c[0] + 3 * c[1]) * np.cos(5 * c[2]))
    rng = np.random.default_rng(4)
    parts = []
    for cells in ([(0, 0, 0)], [(4, 5, 6), (4, 6, 6)], [(8, 9, 10), (7, 2, 3)], [(2, 9, 0)]):
        part = np.zeros(f.shape)
        for cell in cells:
            part[cell] = rng.uniform(0.5, 2.0)
        parts.append(part)
    background = rng.uniform(0.5, 1.0, size=f.shape)
    whole = pushforward(sum(parts) + background, f) - pushforward(background, f)
    assert np.abs(pushforward(sum(parts), f, max_subsamples=1) - whole).max() > 1e-2
    np.testing.assert_allclose(pushforward(sum(parts), f), whole, rtol=0, atol=1e-13)
    np.testing.assert_allclose(sum(pushforward(p, f) for p in parts), whole, rtol=0,
                               atol=1e-13)


def test_prolongation_keeps_identity_and_translation_maps():
    from jitopt.transport._levels import coarsen, prolong_potentials

    c = _cube((6, 7, 8))
    q = 0.5 * np.sum(c ** 2, axis=0)
    a = np.array([0.03, -0.05, 0.02])
    psi, phi = prolong_potentials(np.array([q, q + np.tensordot(a, c, 1)]))
    cf = _cube((12, 14, 16))
    qf = 0.5 * np.sum(cf ** 2, axis=0)
    assert psi.shape == (2, 12, 14, 16)
    assert np.abs(psi[0] - qf).max() <= 1e-15 and np.abs(phi[0] - qf).max() <= 1e-15
    g = potential_gradient(psi[1])[4:-4, 4:-4, 4:-4]
    for axis in range(3):
        assert np.abs(g[..., axis] - cf[axis][4:-4, 4:-4, 4:-4] - a[axis]).max() <= 1e-12
    rho = np.random.default_rng(3).uniform(0, 2, (12, 14, 16))
    assert coarsen(rho, 3).shape == (6, 7, 8) and np.isclose(coarsen(rho, 3).mean(), rho.mean())


def _ball(centre, radius=0.2, sub=4):
    """A ball rasterised by cell coverage (sub^3 samples per cell)."""
    y, x, z = grid_coordinates((N * sub,) * 3)
    b = ((y - centre[0]) ** 2 + (x - centre[1]) ** 2 + (z - centre[2]) ** 2 <= radius ** 2)
    return b.astype(float).reshape(N, sub, N, sub, N, sub).mean(axis=(1, 3, 5))


CENTRES = np.array([(0.35, 0.40, 0.38), (0.62, 0.58, 0.60)])


def test_w2_between_translated_balls():
    w2 = wasserstein2_grid(_ball(CENTRES[0]), _ball(CENTRES[1]))
    assert abs(w2 - np.sum((CENTRES[1] - CENTRES[0]) ** 2)) <= 0.01 * w2


def _rotation(axis, angle):
    r = np.eye(3)
    i, j = [a for a in range(3) if a != axis]
    r[i, i] = r[j, j] = np.cos(angle)
    r[i, j], r[j, i] = -np.sin(angle), np.sin(angle)
    return r


def _gaussian(mean, cov):
    d = np.moveaxis(_cube((N,) * 3), 0, -1) - mean
    return np.exp(-0.5 * np.einsum("...i,ij,...j->...", d, np.linalg.inv(cov), d))


@pytest.mark.parametrize("solver", [wdha, sga])
def test_gaussians_mean_and_bures_covariance(solver):
    # each input rotated about another axis (covariances that do not commute), standard
    # deviations >= 3.2 cells
    means = np.array([(0.42, 0.45, 0.48), (0.55, 0.50, 0.46), (0.50, 0.56, 0.55)])
    stds = [(0.12, 0.10, 0.11), (0.125, 0.10, 0.11), (0.11, 0.12, 0.10)]
    covs = [_rotation(a, t) @ np.diag(np.square(s)) @ _rotation(a, t).T
            for a, t, s in zip((0, 1, 2), (0.5, -0.7, 0.9), stds)]
    lam = np.array([0.3, 0.3, 0.4])
    A = np.array([_gaussian(m, c) for m, c in zip(means, covs)])
    truth = _gaussian(lam @ means, bures_barycenter(covs, lam))
    res = solver(BarycenterProblem(A, lam))
    assert res.success and res.x.shape == (N,) * 3
    m, c = density_moments(res.x)
    mt, ct = density_moments(truth)
    assert np.linalg.norm(m - mt) <= 0.3
    assert np.linalg.norm(c - ct) / np.linalg.norm(ct) <= 0.06


@pytest.mark.parametrize("solver, options", [(wdha, {}), (sga, {}), (wdha, {"coarsest": 16}),
                                             (sga, {"coarsest": 16})])
def test_translated_balls_give_the_ball_at_the_mean_translation(solver, options):
    lam = np.array([0.3, 0.7])
    A = np.array([_ball(c) for c in CENTRES])
    truth = _ball(lam @ CENTRES)
    res = solver(BarycenterProblem(A, lam), **options)
    assert len(res.get("levels", [])) == bool(options)  # the coarse-to-fine start, 16^3
    assert np.all(res.x >= 0) and abs(res.x.sum() - 1) <= 1e-12
    m, c = density_moments(res.x)
    mt, ct = density_moments(truth)
    assert np.linalg.norm(m - mt) <= 0.3
    assert np.max(np.abs(np.diag(c) / np.diag(ct) - 1)) <= 0.08
    assert np.abs(res.x - truth / truth.sum()).sum() <= 0.25


def test_peak_memory_of_the_3d_solvers():
    """Four balls on a background, already densities of mean one, so that the problem keeps
    them uncopied. With four inputs a grid is 0.25 times the inputs: SGA holds f, the
    conjugates and the gradients (3 times the inputs) and a few shared grids (4.31
    measured; 5.93 when it copied the inputs and polished in copies), WDHA the potential
    pairs (2 times) and about twelve shared and per-thread grids (4.95 measured; 10.18 when
    it also kept a pushforward per input and the maps of its warm start)."""
    import tracemalloc

    centres = [(0.3, 0.3, 0.35), (0.7, 0.35, 0.4), (0.35, 0.7, 0.62), (0.68, 0.66, 0.65)]
    A = np.array([_ball(c, 0.2, sub=1) + 1e-3 for c in centres])
    A /= A.mean(axis=(1, 2, 3), keepdims=True)
    keep = A.copy()
    options = dict(maxiter=20, polish=1, polish_iters=3, n_jobs=2)
    for solver, bound in ((sga, 4.6), (wdha, 5.2)):
        solver(BarycenterProblem(3.0 * A), **options)  # (compiles first)
        tracemalloc.start()
        try:
            problem = BarycenterProblem(A)
            solver(problem, **options)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak <= bound * A.nbytes, (solver.__name__, peak / A.nbytes)
        assert np.shares_memory(problem.densities, A)
    np.testing.assert_array_equal(A, keep)


def test_unit_weight_and_identical_inputs():
    A = np.array([_ball(c, 0.15, sub=1) for c in CENTRES])
    for solver in (wdha, sga):
        res = solver(BarycenterProblem(A, [0.0, 1.0]))
        assert res.status == Status.CONVERGED and res.nit == 0
        assert np.abs(res.x - A[1] / A[1].sum()).sum() <= 1e-6
        res = solver(BarycenterProblem([A[0], 3 * A[0]], [0.4, 0.6]))
        assert res.status == Status.CONVERGED and res.nit == 0
        assert np.abs(res.x - A[0] / A[0].sum()).sum() <= 1e-9
    np.testing.assert_array_equal(wdha_barycenter(A, weights=[0.0, 1.0]), A[1] / A[1].sum())


def test_one_specialisation_per_3d_kernel(tmp_path):
    from specialisations import assert_compiled_once

    # with an empty cache, so that the kernels called only from kernels compile as well
    # (a literal argument compiled one of them twice)
    names = assert_compiled_once(
        "import numpy as np, jitopt; from jitopt.problems import BarycenterProblem; "
        "A = np.zeros((2, 16, 16, 16)); A[0, 3:7, 3:7, 3:7] = A[1, 9:13, 8:12, 9:13] = 1.0; "
        "jitopt.transport.sga(BarycenterProblem(A), maxiter=3); "
        "jitopt.transport.wdha(BarycenterProblem(A), maxiter=3, coarsest=8)",
        "pushforward_3d", cache_dir=tmp_path)
    assert "jitopt.transport._kernels3d._gradient_plane" in names
    # a 3-D solve compiles the 3-D kernels, the 1-D Legendre transform and the cell
    # centres, no 2-D kernel
    assert {n for n in names if not n.startswith("jitopt.transport._kernels3d.")} == {
        "jitopt.transport._kernels.legendre_line", "jitopt.transport._kernels.centres"}
