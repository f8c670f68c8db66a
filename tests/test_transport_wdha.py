"""WDHA barycenter: translated disks, Gaussians, weights, options and input checks."""

import numpy as np
import pytest

from jitopt.transport import grid_coordinates, wasserstein2_grid, wdha_barycenter

CENTRES = np.array([(0.3, 0.3), (0.7, 0.35), (0.35, 0.7), (0.7, 0.7)])


def _disk(shape, centre, radius):
    y, x = grid_coordinates(shape)
    return ((y - centre[0]) ** 2 + (x - centre[1]) ** 2 <= radius ** 2).astype(float)


def _gaussian(shape, mean, std):
    y, x = grid_coordinates(shape)
    return np.exp(-0.5 * ((y - mean[0]) / std[0]) ** 2 - 0.5 * ((x - mean[1]) / std[1]) ** 2)


def _moments(rho):
    rho = rho / rho.sum()
    y, x = grid_coordinates(rho.shape)
    m = np.array([(rho * y).sum(), (rho * x).sum()])
    s = np.sqrt([(rho * (y - m[0]) ** 2).sum(), (rho * (x - m[1]) ** 2).sum()])
    return m, s


def test_translated_disks_give_the_disk_at_the_mean_offset():
    n = 128
    A = np.array([_disk((n, n), c, 0.1) for c in CENTRES])
    bary, log = wdha_barycenter(A, log=True)
    truth = _disk((n, n), CENTRES.mean(axis=0), 0.1)
    assert np.all(bary >= 0) and abs(bary.sum() - 1) <= 1e-12
    assert np.sqrt(wasserstein2_grid(bary, truth)) <= 1.0 / n
    m, _ = _moments(bary)
    assert np.max(np.abs(m - CENTRES.mean(axis=0))) <= 0.5 / n
    # each input is a translate: W2^2(bary, mu_i) = |c_i - mean|^2
    exact = np.mean(np.sum((CENTRES - CENTRES.mean(axis=0)) ** 2, axis=1))
    assert abs(log["objective"][-1] - exact) <= 0.02 * exact
    assert log["niter"] == 300 and log["dual"].shape == (300, 4)
    assert log["stationarity"][-1] < 1e-2 * log["stationarity"][0]


def test_axis_aligned_gaussians_average_means_and_stds():
    shape = (64, 64)
    means = np.array([(0.35, 0.4), (0.6, 0.55), (0.45, 0.65)])
    stds = np.array([(0.05, 0.08), (0.09, 0.05), (0.07, 0.07)])
    A = np.array([_gaussian(shape, m, s) for m, s in zip(means, stds)])
    bary = wdha_barycenter(A)
    m, s = _moments(bary)
    assert np.max(np.abs(m - means.mean(axis=0))) <= 0.5 / shape[0]
    # a cell-averaged Gaussian has variance std^2 + h^2 / 12
    expected = np.sqrt(stds.mean(axis=0) ** 2 + 1 / (12 * shape[0] ** 2))
    assert np.max(np.abs(s - expected) / expected) <= 0.03
    truth = _gaussian(shape, means.mean(axis=0), stds.mean(axis=0))
    assert np.sqrt(wasserstein2_grid(bary, truth)) <= 1.0 / shape[0]


def test_weights_are_honoured():
    shape = (48, 48)
    A = np.array([_disk(shape, (0.3, 0.35), 0.12), 2 * _disk(shape, (0.65, 0.6), 0.12)])
    # weight e_2 returns the second input (the iteration starts from the first)
    bary = wdha_barycenter(A, weights=[0.0, 1.0], numItermax=100)
    assert np.sqrt(wasserstein2_grid(bary, A[1])) <= 1.0 / shape[0]
    bary = wdha_barycenter(A, weights=[0.25, 0.75], numItermax=150)
    centre = 0.25 * np.array([0.3, 0.35]) + 0.75 * np.array([0.65, 0.6])
    assert np.sqrt(wasserstein2_grid(bary, _disk(shape, centre, 0.12))) <= 1.0 / shape[0]


def test_non_square_grid_and_jacobi_order():
    shape = (40, 64)
    y, x = grid_coordinates(shape)
    centres = np.array([(0.3, 0.25), (0.7, 0.4), (0.45, 0.75)])
    A = np.array([(np.abs(y - a) < 0.12) & (np.abs(x - b) < 0.1) for a, b in centres], float)
    a, b = centres.mean(axis=0)
    truth = ((np.abs(y - a) < 0.12) & (np.abs(x - b) < 0.1)).astype(float)
    for order in ("gauss-seidel", "jacobi"):
        bary = wdha_barycenter(A, numItermax=150, order=order)
        assert bary.shape == shape
        m, _ = _moments(bary)
        assert np.max(np.abs(m - centres.mean(axis=0))) <= 0.5 / shape[0]
        assert np.sqrt(wasserstein2_grid(bary, truth)) <= 1.0 / shape[0]


def test_identical_inputs_stop_at_once_and_threads_do_not_change_the_result():
    shape = (24, 30)
    rho = np.random.default_rng(0).uniform(0, 1, shape)
    bary, log = wdha_barycenter(np.array([rho, 3 * rho]), log=True)
    assert log["niter"] == 1 and log["status"] == 0 and log["success"]
    assert np.max(np.abs(bary - rho / rho.sum())) <= 1e-14
    A = np.array([_disk(shape, c, 0.15) for c in CENTRES])
    b1 = wdha_barycenter(A, numItermax=20, n_jobs=1)
    b2 = wdha_barycenter(A, numItermax=20, n_jobs=2)
    assert np.array_equal(b1, b2)


def test_verbose_shows_progress(capsys):
    A = np.array([_disk((16, 16), c, 0.2) for c in CENTRES])
    wdha_barycenter(A, numItermax=5, verbose=True)
    out = capsys.readouterr().out
    assert "5/5" in out and "W2^2" in out


def test_inputs_are_not_modified():
    A = np.array([_disk((16, 20), c, 0.2) for c in CENTRES])
    A0 = A.copy()
    wdha_barycenter(A, numItermax=3)
    assert np.array_equal(A, A0)


def test_bad_input():
    A = np.array([_disk((16, 16), c, 0.2) for c in CENTRES])
    with pytest.raises(ValueError, match="nonnegative"):
        wdha_barycenter(A - 0.5)
    bad = A.copy()
    bad[1, 3, 3] = np.nan
    with pytest.raises(ValueError, match="finite"):
        wdha_barycenter(bad)
    bad = A.copy()
    bad[2] = 0
    with pytest.raises(ValueError, match="all-zero"):
        wdha_barycenter(bad)
    with pytest.raises(ValueError, match="3-D"):
        wdha_barycenter(A[0])
    with pytest.raises(ValueError, match="3-D"):
        wdha_barycenter(A[..., None])
    with pytest.raises(ValueError, match="3-D"):
        wdha_barycenter([A[0], A[1, :, :8]])
    for w in ([0.5, 0.5, 0.5, -0.5], [0.3, 0.3, 0.3, 0.3], [1.0, 0.0, 0.0], [np.nan] * 4):
        with pytest.raises(ValueError, match="simplex|shape"):
            wdha_barycenter(A, weights=w)
    with pytest.raises(ValueError, match="order"):
        wdha_barycenter(A, order="random")
    with pytest.raises(ValueError, match="numItermax"):
        wdha_barycenter(A, numItermax=0)
    with pytest.raises(TypeError, match="numItermax"):
        wdha_barycenter(A, numItermax=2.5)


def test_divergence_stops_with_a_warning():
    A = np.array([_disk((16, 16), c, 0.2) for c in CENTRES])
    with pytest.warns(RuntimeWarning, match="Non-finite"):
        bary, log = wdha_barycenter(A, sigma0=1e308, log=True)
    assert not log["success"] and log["status"] == 4 and log["niter"] < 300
