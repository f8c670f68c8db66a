"""The default WDHA variant against exact barycenters: Gaussians (Bures fixed point),
concentric disks, one-hot weights, identical inputs, long runs, speckle, the
coarse-to-fine start and the final polish."""

import numpy as np
import pytest
from scipy.ndimage import binary_erosion

from jitopt import Status
from jitopt.problems import BarycenterProblem
from jitopt.testing import bures_barycenter, density_moments
from jitopt.transport import grid_coordinates, wasserstein2_grid, wdha, wdha_barycenter
from jitopt.transport._kernels import dual_value, legendre_2d

# (y, x) means, principal standard deviations, rotation: every input >= 5 stds inside
GAUSSIANS = [((0.38, 0.36), (0.06, 0.035), 0.0), ((0.62, 0.40), (0.07, 0.04), np.pi / 4),
             ((0.50, 0.64), (0.05, 0.045), -np.pi / 3)]


def _gaussian(n, mean, cov):
    y, x = grid_coordinates((n, n))
    d = np.stack([y - mean[0], x - mean[1]], axis=-1)
    return np.exp(-0.5 * np.einsum("...i,ij,...j->...", d, np.linalg.inv(cov), d))


def _three_gaussians(n):
    covs = []
    for _, s, th in GAUSSIANS:
        r = np.array([[np.cos(th), -np.sin(th)], [np.sin(th), np.cos(th)]])
        covs.append(r @ np.diag(np.square(s)) @ r.T)
    A = np.array([_gaussian(n, m, c) for (m, _, _), c in zip(GAUSSIANS, covs)])
    mean = np.mean([m for m, _, _ in GAUSSIANS], axis=0)
    return A, _gaussian(n, mean, bures_barycenter(covs, np.full(3, 1 / 3)))


def _errors(bary, truth):
    """Mean error in cells and relative Frobenius covariance error against the truth
    sampled on the same grid."""
    m, c = density_moments(bary)
    mt, ct = density_moments(truth)
    return np.linalg.norm(m - mt), np.linalg.norm(c - ct) / np.linalg.norm(ct)


def _disk(n, radius, sub=8):
    """A disk at the centre of the square, rasterised with sub x sub samples per cell."""
    y, x = grid_coordinates((n * sub, n * sub))
    d = ((y - 0.5) ** 2 + (x - 0.5) ** 2 <= radius ** 2).astype(float)
    return d.reshape(n, sub, n, sub).mean(axis=(1, 3))


def _checkerboard(rho):
    """rms over the inner support of the (-1)^(i+j) component in 2 x 2 blocks, relative
    to the mean there (0 for a uniform shape)."""
    rho = rho / rho.max()
    c = 0.25 * (rho[:-1, :-1] - rho[1:, :-1] - rho[:-1, 1:] + rho[1:, 1:])
    inner = binary_erosion(rho > 0.3, iterations=2)
    blocks = inner[:-1, :-1] & inner[1:, :-1] & inner[:-1, 1:] & inner[1:, 1:]
    return np.sqrt(np.mean(c[blocks] ** 2)) / rho[inner].mean()


def test_gaussians_mean_and_bures_covariance():
    A, truth = _three_gaussians(128)
    res = wdha(BarycenterProblem(A))
    mean_err, cov_err = _errors(res.x, truth)
    assert res.status == Status.CONVERGED
    assert mean_err <= 0.5 and cov_err <= 0.01
    assert "xtol" in res.message
    # the paper's method misses the covariance at its default schedule
    assert _errors(wdha(BarycenterProblem(A), variant="paper").x, truth)[1] > 0.02


def test_concentric_disks_give_the_disk_of_mean_radius():
    A = np.array([_disk(128, 0.08), _disk(128, 0.2)])
    bary = wdha_barycenter(A)
    _, c = density_moments(bary)
    _, ct = density_moments(_disk(128, 0.14))
    assert np.max(np.abs(np.diag(c) / np.diag(ct) - 1)) <= 0.01


def test_one_hot_weights_return_that_input():
    A = np.array([_disk(64, 0.1), np.roll(_disk(64, 0.15), (9, -7), axis=(0, 1))])
    res = wdha(BarycenterProblem(A, weights=[0.0, 1.0]))
    assert res.status == Status.CONVERGED and res.nit == 0
    assert np.abs(res.x - A[1] / A[1].sum()).sum() <= 0.02
    paper = wdha(BarycenterProblem(A, weights=[0.0, 1.0]), variant="paper")
    assert np.abs(paper.x - A[1] / A[1].sum()).sum() > 0.02


def test_identical_inputs_are_returned_unchanged():
    rho = np.random.default_rng(1).uniform(0, 1, (20, 24))
    res = wdha(BarycenterProblem([rho, 2 * rho, 3 * rho], weights=[0.2, 0.3, 0.5]))
    assert res.status == Status.CONVERGED and res.nit == 0
    assert np.max(np.abs(res.x - rho / rho.sum())) <= 1e-15


def test_more_iterations_do_not_degrade_the_covariance():
    # the step has a fixed horizon, so the iterate at nit = k is that of a run of k
    A, truth = _three_gaussians(64)
    errors = {}

    def record(intermediate_result):
        if intermediate_result.nit in (300, 1000, 3000):
            errors[intermediate_result.nit] = _errors(intermediate_result.x, truth)[1]

    res = wdha(BarycenterProblem(A), maxiter=3000, xtol=0.0, callback=record)
    assert res.status == Status.MAXITER and not res.success
    assert errors[1000] <= errors[300] + 0.002 and errors[3000] <= errors[1000] + 0.002
    assert errors[3000] <= errors[300] + 0.002
    # the callback sees the iterates of the loop; the result is polished after it
    assert _errors(res.x, truth)[1] <= errors[300] + 0.002


def test_stopping_rule_and_history():
    A = np.array([_disk(32, 0.1), np.roll(_disk(32, 0.1), (6, 4), axis=(0, 1))])
    res = wdha(BarycenterProblem(A), xtol=1e-2, history=True)
    step = res.history["step_cells"]
    assert res.status == Status.CONVERGED and 0 < res.nit < 1000
    assert step[-1] <= 1e-2 < step[:-1].min()
    assert "1.000e-02" not in res.message and "xtol = 0.01" in res.message
    # a tighter xtol runs longer; tol still stops on the stationarity
    assert wdha(BarycenterProblem(A), xtol=1e-3).nit > res.nit
    assert wdha(BarycenterProblem(A), tol=1.0).nit == 0


def test_sharpened_output_has_no_checkerboard():
    y, x = grid_coordinates((64, 64))
    square = ((np.abs(y - 0.3) <= 0.12) & (np.abs(x - 0.3) <= 0.12)).astype(float)
    disk = ((y - 0.68) ** 2 + (x - 0.7) ** 2 <= 0.14 ** 2).astype(float)
    A = np.array([square, disk])
    it = wdha(BarycenterProblem(A), polish=0)
    sharp = wdha(BarycenterProblem(A), output="sharpened", polish=0)
    assert sharp.nit == it.nit and np.array_equal(sharp.potentials, it.potentials)
    assert _checkerboard(sharp.x) <= 0.03 < _checkerboard(it.x)
    # the polish's last deposit removes most of the iterate's speckle as well
    polished = wdha(BarycenterProblem(A))
    assert _checkerboard(polished.x) < 0.5 * _checkerboard(it.x)
    assert np.all(sharp.x >= 0) and abs(sharp.x.sum() - 1) <= 1e-12
    # the paper's iterate is more speckled than the default's
    assert _checkerboard(wdha(BarycenterProblem(A), variant="paper").x) > _checkerboard(it.x)


def test_sharp_options_are_checked():
    problem = BarycenterProblem(np.array([_disk(16, 0.2), _disk(16, 0.3)]))
    for name, value, error in (("variant", "fast", ValueError), ("xtol", -1.0, ValueError),
                               ("horizon", 0, ValueError), ("warm_start", -1, ValueError),
                               ("warm_start", 1.5, TypeError), ("output", "best", ValueError),
                               ("coarsest", 2, ValueError), ("coarsest", 1.5, TypeError),
                               ("polish", -1, ValueError), ("polish", 1.5, TypeError),
                               ("polish_iters", 0, ValueError),
                               ("polish_iters", 2.5, TypeError)):
        with pytest.raises(error, match=name):
            wdha(problem, **{name: value})
    with pytest.raises(ValueError, match="polish must be 0 with variant='paper'"):
        wdha(problem, variant="paper", polish=1)
    assert wdha(problem, variant="paper", polish=0, maxiter=3).nit == 3
    with pytest.raises(ValueError, match="variant"):
        wdha_barycenter(problem.densities, variant="fast")


def test_coarse_to_fine_start_keeps_the_bures_covariance():
    # 256 x 256 is solved on 128 x 128 first (the default coarsest), then refined
    A, truth = _three_gaussians(256)
    res = wdha(BarycenterProblem(A))
    assert len(res.levels) == 1 and res.levels[0][:2] == (128, 128) and res.levels[0][2] > 0
    assert res.status == Status.CONVERGED and 0 < res.nit < res.levels[0][2]
    mean_err, cov_err = _errors(res.x, truth)
    assert mean_err <= 0.5 and cov_err <= 0.007
    single = wdha(BarycenterProblem(A), coarsest=256)
    assert single.levels == [] and _errors(single.x, truth)[1] <= 0.007


def test_coarse_to_fine_start_is_sharp_on_translated_disks():
    y, x = grid_coordinates((128, 128))
    centres = [(0.3, 0.3), (0.7, 0.35), (0.35, 0.7), (0.7, 0.7)]
    A = np.array([((y - a) ** 2 + (x - b) ** 2 <= 0.01) for a, b in centres], dtype=float)
    m = np.mean(centres, axis=0)
    truth = ((y - m[0]) ** 2 + (x - m[1]) ** 2 <= 0.01).astype(float)
    res = wdha(BarycenterProblem(A), coarsest=32)
    assert [lv[:2] for lv in res.levels] == [(32, 32), (64, 64)]
    mean_err, cov_err = _errors(res.x, truth)
    assert mean_err <= 0.1 and cov_err <= 0.01
    single = wdha(BarycenterProblem(A), coarsest=128)
    assert _checkerboard(res.x) < _checkerboard(single.x)


def test_coarse_to_fine_start_leaves_identical_inputs_and_x0_alone():
    rho = np.random.default_rng(2).uniform(0, 1, (32, 32))
    res = wdha(BarycenterProblem([rho, 2 * rho]), coarsest=8)
    assert res.nit == 0 and res.levels == [] and np.max(np.abs(res.x - rho / rho.sum())) <= 1e-15
    A = np.array([_disk(32, 0.1), np.roll(_disk(32, 0.1), (6, 4), axis=(0, 1))])
    assert wdha(BarycenterProblem(A), np.ones((32, 32)), coarsest=8).levels == []
    assert len(wdha(BarycenterProblem(A), coarsest=8).levels) == 2


# -- the final polish ----------------------------------------------------------------------

def _squares():
    """Two squares of side 8 cells on a 32 x 32 grid and the exact barycenter, the square
    halfway between them."""
    A = np.zeros((2, 32, 32))
    A[0, 4:12, 4:12] = A[1, 20:28, 12:20] = 1.0
    truth = np.zeros((32, 32))
    truth[12:20, 8:16] = 1.0
    return A, truth


def test_polish_zero_is_the_unpolished_run():
    A, _ = _squares()
    last = {}

    def record(intermediate_result):
        last["x"] = intermediate_result.x

    plain = wdha(BarycenterProblem(A), polish=0, callback=record, history=True)
    polished = wdha(BarycenterProblem(A), history=True)
    # polish=0 returns the loop's last iterate, with its measured values
    assert np.array_equal(plain.x, last["x"]) and "Polished" not in plain.message
    assert plain.fun == plain.history["fun"][-1]
    # the default runs the same loop, then polishes: a different x, the same history
    assert polished.nit == plain.nit and "Polished by 3 fixed-point steps" in polished.message
    for column in ("fun", "stationarity", "wasserstein_gradient"):
        assert np.array_equal(polished.history[column], plain.history[column])
    assert np.abs(polished.x - plain.x).max() > 1e-6


def test_a_failed_polish_returns_the_unpolished_result(monkeypatch):
    """A polish that fails at its second step (after the first has changed every potential
    in place) is dropped: the result is that of ``polish=0``, potentials and value too."""
    from jitopt.transport import _polish, sga

    A, _ = _squares()
    real, calls = _polish._back_and_forth, []

    def failing(*args):
        calls.append(1)
        if len(calls) > len(A):  # the second polish step
            raise FloatingPointError
        return real(*args)

    for solver in (wdha, sga):
        plain = solver(BarycenterProblem(A), polish=0)
        calls.clear()
        monkeypatch.setattr(_polish, "_back_and_forth", failing)
        dropped = solver(BarycenterProblem(A), polish=2)
        monkeypatch.setattr(_polish, "_back_and_forth", real)
        assert len(calls) == 2 * len(A) and "The polish was dropped" in dropped.message
        np.testing.assert_array_equal(dropped.x, plain.x)
        np.testing.assert_array_equal(dropped.potentials, plain.potentials)
        assert dropped.fun == plain.fun


def test_pot_interface_passes_the_polish_on():
    """wdha_barycenter is wdha's x, polished by default and not with polish=0."""
    A, _ = _squares()
    for polish in (None, 0, 1):
        kwargs = {} if polish is None else {"polish": polish}
        expected = wdha(BarycenterProblem(A), **kwargs).x
        np.testing.assert_array_equal(wdha_barycenter(A, **kwargs), expected)
    assert np.abs(wdha_barycenter(A, polish=0) - wdha_barycenter(A)).max() > 1e-6
    with pytest.raises(ValueError, match="polish"):
        wdha_barycenter(A, variant="paper", polish=2)


def test_polish_keeps_the_centre_of_mass_and_gets_closer_to_the_square():
    A, truth = _squares()
    plain = wdha(BarycenterProblem(A), polish=0)
    res = wdha(BarycenterProblem(A))
    rows, cols = np.indices(res.x.shape)
    centre = (np.sum(res.x * rows), np.sum(res.x * cols))
    assert np.hypot(centre[0] - 15.5, centre[1] - 11.5) <= 0.005
    w2 = [np.sqrt(wasserstein2_grid(x, truth, numItermax=300)) * 32 for x in (plain.x, res.x)]
    assert w2[1] <= w2[0]


def test_polish_keeps_mass_and_sign_and_reports_the_returned_barycenter():
    y, x = grid_coordinates((48, 48))
    square = ((np.abs(y - 0.3) <= 0.12) & (np.abs(x - 0.3) <= 0.12)).astype(float)
    disk = ((y - 0.68) ** 2 + (x - 0.7) ** 2 <= 0.14 ** 2).astype(float)
    problem = BarycenterProblem(np.array([square, disk, np.roll(disk, -20, axis=1)]),
                                weights=[0.5, 0.3, 0.2])
    res = wdha(problem, polish=2, polish_iters=4)
    assert np.all(res.x >= 0) and abs(res.x.sum() - 1) <= 1e-12
    assert "Polished by 2 fixed-point steps (4 back-and-forth" in res.message
    # the values are those of the returned x and potentials
    nu = res.x * res.x.size
    for i in range(3):
        conj = np.empty_like(nu)
        legendre_2d(res.potentials[i], conj)
        assert abs(dual_value(res.potentials[i], conj, nu, problem.densities[i])
                   - res.dual[i]) <= 1e-12
    assert abs(res.fun - 2 * np.dot(problem.weights, res.dual)) <= 1e-15
    assert res.stationarity == max(res.wasserstein_gradient, res.h1_residual.max())
    # one more evaluation, and two pushforwards per input and back-and-forth iteration
    assert res.nfev == res.njev == res.nit + 2
    assert res.nifo == 3 * (res.nit + 2) + 3 * 2 * 2 * 4


def test_polish_leaves_exact_answers_alone():
    rho = np.random.default_rng(4).uniform(0, 1, (16, 20))
    res = wdha(BarycenterProblem([rho, 2 * rho]), polish=5)
    assert res.nit == 0 and np.max(np.abs(res.x - rho / rho.sum())) <= 1e-15
    assert "Polished" not in res.message
    A = np.array([_disk(32, 0.1), np.roll(_disk(32, 0.15), (5, -3), axis=(0, 1))])
    problem = BarycenterProblem(A, weights=[0.0, 1.0])
    res = wdha(problem, polish=5)
    mu = problem.densities[1]
    assert np.array_equal(res.x, mu / mu.sum()) and "Polished" not in res.message
