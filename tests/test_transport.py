"""jitopt.transport: Legendre transform, inverse Laplacian, pushforward, back-and-forth W2,
the exact 1-D tools, and the WDHA barycenter."""

import numpy as np
import pytest

import jitopt
from jitopt import Status
from jitopt.problems import BarycenterProblem
from jitopt.transport import (
    barycenter_1d,
    c_transform,
    grid_coordinates,
    inverse_laplacian,
    legendre_transform,
    potential_gradient,
    pushforward,
    wasserstein2_1d,
    wasserstein2_grid,
    wdha,
    wdha_barycenter,
)

CENTRES = np.array([(0.3, 0.3), (0.7, 0.35), (0.35, 0.7), (0.7, 0.7)])


def _points(shape):
    y, x = grid_coordinates(shape)
    return np.stack([y.ravel(), x.ravel()], axis=1)


def _brute_legendre(f):
    P = _points(f.shape)
    return (P @ P.T - f.ravel()[None, :]).max(axis=1).reshape(f.shape)


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


def _neumann_laplacian(u):
    n0, n1 = u.shape
    p = np.pad(u, 1, mode="edge")  # mirror ghost cells: zero flux through the boundary
    return (n0 ** 2 * (p[2:, 1:-1] - 2 * u + p[:-2, 1:-1])
            + n1 ** 2 * (p[1:-1, 2:] - 2 * u + p[1:-1, :-2]))


# ------------------------------------------------------------------ Legendre transform

@pytest.mark.parametrize("shape", [(7, 7), (16, 16), (9, 13), (1, 5)])
def test_legendre_matches_brute_force(shape):
    f = np.random.default_rng(0).standard_normal(shape)
    assert np.max(np.abs(legendre_transform(f) - _brute_legendre(f))) <= 1e-12


@pytest.mark.parametrize("shape", [(1, 1), (2, 3), (3, 2), (2, 2, 3), (1, 7, 2), (3, 1, 5)])
def test_legendre_matches_brute_force_on_short_lines_and_ties(shape):
    # lines of one to three points (the hull pops back to its first vertex), and inputs
    # with exact ties: affine (every point collinear, every maximiser tied at one slope) and
    # the self-conjugate q plus noise far below its curvature (every point on the hull)
    X = np.stack([c.ravel() for c in grid_coordinates(shape)], axis=1)
    rng = np.random.default_rng(4)
    q = 0.5 * (X * X).sum(axis=1)
    for f in (rng.standard_normal(len(X)), X @ X[len(X) // 2], q + 1e-12 * rng.random(len(X))):
        brute = (X @ X.T - f[None, :]).max(axis=1).reshape(shape)
        assert np.max(np.abs(legendre_transform(f.reshape(shape)) - brute)) <= 1e-14


def test_c_transform_matches_brute_force():
    f = np.random.default_rng(1).standard_normal((9, 13))
    P = _points(f.shape)
    cost = 0.5 * ((P[:, None, :] - P[None, :, :]) ** 2).sum(axis=2)
    brute = (cost - f.ravel()[None, :]).min(axis=1).reshape(f.shape)
    assert np.max(np.abs(c_transform(f) - brute)) <= 1e-12


def test_triple_transform_and_envelope():
    f = np.random.default_rng(2).standard_normal((12, 10))
    fs = legendre_transform(f)
    fss = legendre_transform(fs)
    assert np.max(np.abs(legendre_transform(fss) - fs)) <= 1e-12
    assert np.all(fss <= f + 1e-12)  # f** is the convex envelope, below f
    assert np.max(np.abs(legendre_transform(legendre_transform(fss)) - fss)) <= 1e-12


def test_double_transform_of_convex_function_is_itself():
    shape = (11, 14)
    rng = np.random.default_rng(3)
    P = _points(shape)
    # max of affine functions with slopes on the dual grid: convex, supported at every point
    slopes = P[rng.choice(len(P), 6, replace=False)]
    f = (P @ slopes.T - rng.uniform(0, 1, 6)).max(axis=1).reshape(shape)
    assert np.max(np.abs(legendre_transform(legendre_transform(f)) - f)) <= 1e-12
    y, x = grid_coordinates(shape)
    q = 0.5 * (x * x + y * y)  # self-conjugate on the grid
    assert np.max(np.abs(legendre_transform(q) - q)) <= 1e-12


# ------------------------------------------------------------------- inverse Laplacian

@pytest.mark.parametrize("shape", [(9, 13), (32, 24)])
def test_inverse_laplacian_residual(shape):
    g = np.random.default_rng(4).standard_normal(shape)
    u = inverse_laplacian(g)
    assert abs(u.mean()) <= 1e-12
    assert np.max(np.abs(-_neumann_laplacian(u) - (g - g.mean()))) <= 1e-10


@pytest.mark.parametrize("elimination", [False, True])
@pytest.mark.parametrize("shape", [(1, 6), (2, 9), (9, 2), (6, 1), (31, 17), (3, 4, 5),
                                   (2, 7, 3), (12, 1, 6)])
def test_inverse_laplacian_equals_the_full_dct_solve(shape, elimination, monkeypatch):
    # both ways of the solve (along every axis by the DCT; along the first axis by
    # elimination, as on large grids) against every coefficient of the full DCT-II divided
    # by its eigenvalue
    import scipy.fft
    from jitopt.transport import _poisson

    monkeypatch.setattr(_poisson, "ELIMINATION_CELLS", 0 if elimination else 10 ** 9)
    g = np.random.default_rng(5).standard_normal(shape)
    lam = sum(np.reshape(4.0 * n * n * np.sin(np.pi * np.arange(n) / (2 * n)) ** 2,
                         [-1 if b == a else 1 for b in range(len(shape))])
              for a, n in enumerate(shape))
    lam.flat[0] = np.inf
    coef = scipy.fft.dctn(g, norm="ortho")
    reference = scipy.fft.idctn(coef / lam, norm="ortho")
    u = inverse_laplacian(g)
    assert np.max(np.abs(u - reference)) <= 1e-13 * np.max(np.abs(reference))
    # the residual returned with the in-place solve: mean(u g) (Parseval)
    r = g.copy()
    res = _poisson._invlap_inplace(r)
    assert np.array_equal(r, u)
    assert abs(res - np.sum(coef ** 2 / lam) / g.size) <= 1e-14 * np.mean(u * g)


def test_inverse_laplacian_eigenfunction_second_order():
    errors = []
    for n in (16, 32, 64):
        y, x = grid_coordinates((n, n + n // 2))
        exact = np.cos(np.pi * y) * np.cos(2 * np.pi * x)
        u = inverse_laplacian(5 * np.pi ** 2 * exact)
        errors.append(np.max(np.abs(u - exact)))
    ratios = np.array(errors[:-1]) / np.array(errors[1:])
    assert np.all((ratios > 3.5) & (ratios < 4.5)), ratios
    assert errors[-1] < 1e-3


# ------------------------------------------------------------------------ pushforward

def test_pushforward_identity_is_exact():
    rng = np.random.default_rng(5)
    rho = rng.uniform(0, 1, (12, 17)) * (rng.uniform(0, 1, (12, 17)) > 0.3)
    y, x = grid_coordinates(rho.shape)
    out = pushforward(rho, 0.5 * (x * x + y * y))
    assert np.max(np.abs(out - rho)) <= 1e-12


def test_pushforward_translation_moves_mean_and_conserves_mass():
    shape = (40, 56)
    # support (numerically) well inside the square before and after the shift
    rho = _gaussian(shape, (0.45, 0.55), (0.04, 0.05)) + _disk(shape, (0.5, 0.55), 0.2)
    y, x = grid_coordinates(shape)
    shift = np.array([0.0731, -0.1213])
    f = 0.5 * (x * x + y * y) + shift[0] * y + shift[1] * x  # grad f = x + shift
    out = pushforward(rho, f)
    assert abs(out.sum() - rho.sum()) <= 1e-12 * rho.sum()
    m0, s0 = _moments(rho)
    m1, s1 = _moments(out)
    assert np.max(np.abs(m1 - (m0 + shift))) <= 1e-12
    assert np.all(out >= 0)
    assert abs(s1[0] - s0[0]) <= 0.5 / shape[0] and abs(s1[1] - s0[1]) <= 0.5 / shape[1]


def test_pushforward_dilation_conserves_moments_and_support():
    # uniform density on the whole square shrunk by c about the centre: uniform on the
    # central square of side c
    n, c = 48, 0.75
    y, x = grid_coordinates((n, n))
    f = 0.5 * c * (x * x + y * y) + 0.5 * (1 - c) * (x + y)  # grad f = c x + (1 - c) / 2
    out = pushforward(np.ones((n, n)), f)
    assert abs(out.sum() - n * n) <= 1e-10
    m, s = _moments(out)
    assert np.max(np.abs(m - 0.5)) <= 1e-12
    assert np.max(np.abs(s - c / np.sqrt(12))) <= 0.01 * c / np.sqrt(12)
    assert np.all(out[np.abs(y - 0.5) > c / 2 + 1.0 / n] == 0)


def test_pushforward_is_exact_for_affine_maps_at_the_boundary():
    # the left half of the square (touching three sides) stretched horizontally by 1.6:
    # the sub-samples of the boundary cells use the linearly extrapolated map, so the first
    # moment is exact and the spread is right
    shape = (30, 40)
    y, x = grid_coordinates(shape)
    rho = (x < 0.5).astype(float)
    f = 0.5 * y * y + 0.8 * x * x + 0.05 * x  # map (y, x) -> (y, 1.6 x + 0.05)
    out = pushforward(rho, f)
    m0, s0 = _moments(rho)
    m1, s1 = _moments(out)
    assert abs(out.sum() - rho.sum()) <= 1e-12 * rho.sum()
    assert abs(m1[1] - (1.6 * m0[1] + 0.05)) <= 1e-12
    assert abs(m1[0] - m0[0]) <= 1e-12
    assert abs(s1[1] - 1.6 * s0[1]) <= 0.01 * 1.6 * s0[1]
    assert np.all(out[:, x[0] > 0.85 + 1.0 / shape[1]] == 0)


def test_pushforward_mass_for_random_convex_potential():
    shape = (20, 30)
    rng = np.random.default_rng(6)
    rho = rng.uniform(0, 1, shape)
    f = legendre_transform(legendre_transform(rng.standard_normal(shape)))
    out = pushforward(rho, f)
    assert abs(out.sum() - rho.sum()) <= 1e-12 * rho.sum()
    assert np.all(out >= 0)


def test_potential_gradient_of_quadratic():
    y, x = grid_coordinates((5, 7))
    g = potential_gradient(0.5 * (3 * y * y + x * x) + 2 * x)
    assert np.max(np.abs(g[..., 0] - 3 * y)) <= 1e-12
    assert np.max(np.abs(g[..., 1] - (x + 2))) <= 1e-12


# ----------------------------------------------------------------------------- W2 on a grid

def test_w2_translated_shapes():
    shape = (48, 48)
    a = _disk(shape, (0.4, 0.35), 0.15) + 0.5 * _disk(shape, (0.4, 0.35), 0.07)
    shift = np.array([0.1875, 0.25])
    b = _disk(shape, (0.4, 0.35) + shift, 0.15) + 0.5 * _disk(shape, (0.4, 0.35) + shift, 0.07)
    w2, log = wasserstein2_grid(a, b, log=True)
    assert abs(w2 - shift @ shift) <= 0.01 * (shift @ shift)
    # the optimal map moves every cell of the support of a by the shift
    y, x = grid_coordinates(shape)
    mask = a > 0
    moved = log["map"][mask] - np.stack([y[mask], x[mask]], axis=1)
    assert np.max(np.abs(np.median(moved, axis=0) - shift)) <= 0.5 / shape[0]
    assert log["dual"][-1] >= log["dual"][0]


def test_w2_gaussians_closed_form():
    shape = (64, 64)
    m1, s1 = np.array([0.4, 0.45]), np.array([0.06, 0.09])
    m2, s2 = np.array([0.6, 0.5]), np.array([0.1, 0.05])
    w2 = wasserstein2_grid(_gaussian(shape, m1, s1), _gaussian(shape, m2, s2))
    exact = np.sum((m1 - m2) ** 2) + np.sum((s1 - s2) ** 2)
    assert abs(w2 - exact) <= 0.01 * exact


@pytest.mark.parametrize("axis", [0, 1])
def test_w2_separable_slices_match_quantile_ot(axis):
    shape = (40, 56)
    rng = np.random.default_rng(7 + axis)
    n = shape[axis]
    t = (np.arange(n) + 0.5) / n
    f1 = np.exp(-0.5 * ((t - 0.35) / 0.08) ** 2) + 0.5 * (np.abs(t - 0.55) < 0.1)
    f2 = np.exp(-0.5 * ((t - 0.6) / 0.12) ** 2) * (1 + 0.3 * np.sin(9 * t))
    g = 0.5 + rng.uniform(0, 1, shape[1 - axis])
    a, b = (np.outer(f1, g), np.outer(f2, g)) if axis == 0 else \
        (np.outer(g, f1), np.outer(g, f2))
    exact = wasserstein2_1d(f1, f2)
    assert abs(wasserstein2_grid(a, b) - exact) <= 0.01 * exact


# --------------------------------------------------------------------------------- 1-D

def test_w2_1d_matches_fine_quadrature():
    rng = np.random.default_rng(8)
    a = rng.uniform(0, 1, 30) * (rng.uniform(0, 1, 30) > 0.3)
    b = rng.uniform(0, 1, 30)
    edges = np.linspace(0, 1, 31)
    u = (np.arange(400000) + 0.5) / 400000
    qa = np.interp(u, np.concatenate([[0], np.cumsum(a) / a.sum()]), edges)
    qb = np.interp(u, np.concatenate([[0], np.cumsum(b) / b.sum()]), edges)
    assert abs(wasserstein2_1d(a, b) - np.mean((qa - qb) ** 2)) <= 1e-8


def test_barycenter_1d_of_boxes_is_a_box():
    n = 100
    t = (np.arange(n) + 0.5) / n
    A = np.array([np.abs(t - 0.3) < 0.1, 3 * (np.abs(t - 0.6) < 0.05)], dtype=float)
    bar = barycenter_1d(A, weights=[0.5, 0.5])
    # box [0.375, 0.525]: half cells at both ends
    expected = np.zeros(n)
    expected[38:52] = 1.0
    expected[[37, 52]] = 0.5
    expected /= expected.sum()
    assert np.max(np.abs(bar - expected)) <= 1e-12


def test_barycenter_1d_weights_and_gaussians():
    n = 400
    t = (np.arange(n) + 0.5) / n
    A = np.array([np.exp(-0.5 * ((t - 0.3) / 0.04) ** 2), np.exp(-0.5 * ((t - 0.7) / 0.08) ** 2)])
    assert np.max(np.abs(barycenter_1d(A, weights=[0, 1]) - A[1] / A[1].sum())) <= 1e-12
    bar = barycenter_1d(A, weights=[0.25, 0.75])
    assert abs(bar.sum() - 1) <= 1e-12 and np.all(bar >= 0)
    mean = bar @ t
    std = np.sqrt(bar @ (t - mean) ** 2)
    assert abs(mean - 0.6) <= 1e-4
    assert abs(std - np.sqrt(0.07 ** 2 + 1 / (12 * n * n))) <= 1e-4


# ------------------------------------------------------------------------------ bad input

@pytest.mark.parametrize("func", [legendre_transform, c_transform, inverse_laplacian])
def test_grid_functions_reject_bad_input(func):
    with pytest.raises(ValueError, match="2-D"):
        func(np.ones(5))
    with pytest.raises(ValueError, match="2-D or 3-D"):
        func(np.ones((2, 3, 4, 5)))
    with pytest.raises(ValueError, match="finite"):
        func(np.array([[1.0, np.nan], [0.0, 1.0]]))
    with pytest.raises(TypeError, match="real-valued"):
        func(np.array([["a", "b"]]))


def test_w2_and_pushforward_reject_bad_densities():
    good = np.ones((8, 8))
    with pytest.raises(ValueError, match="nonnegative"):
        wasserstein2_grid(-good, good)
    with pytest.raises(ValueError, match="all-zero"):
        wasserstein2_grid(good, 0 * good)
    with pytest.raises(ValueError, match="same shape"):
        wasserstein2_grid(good, np.ones((8, 9)))
    with pytest.raises(ValueError, match="at least 3"):
        wasserstein2_grid(np.ones((2, 8)), np.ones((2, 8)))
    with pytest.raises(ValueError, match="shape of density"):
        pushforward(good, np.ones((8, 9)))
    with pytest.raises(ValueError, match="nonnegative"):
        pushforward(-good, good)
    with pytest.raises(ValueError, match="1-D"):
        wasserstein2_1d(good, good)
    with pytest.raises(ValueError, match="simplex"):
        barycenter_1d(good, weights=np.full(8, 0.2))


def test_inputs_are_not_modified():
    rng = np.random.default_rng(9)
    a, b = rng.uniform(0, 1, (2, 10, 12))
    a0, b0 = a.copy(), b.copy()
    wasserstein2_grid(a, b, numItermax=3)
    pushforward(a, b)
    legendre_transform(a)
    c_transform(a)
    inverse_laplacian(a)
    assert np.array_equal(a, a0) and np.array_equal(b, b0)


# -- the WDHA barycenter ----------------------------------------------------------------


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
    assert log["status"] == Status.CONVERGED and log["dual"].shape == (log["niter"] + 1, 4)
    assert log["stationarity"][-1] < 1e-2 * log["stationarity"][0]
    bary, log = wdha_barycenter(A, log=True, variant="paper")
    assert np.sqrt(wasserstein2_grid(bary, truth)) <= 1.0 / n
    assert log["niter"] == 300 and log["dual"].shape == (300, 4)


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
    # weight e_2 returns the second input (the paper's iteration starts from the first)
    bary = wdha_barycenter(A, weights=[0.0, 1.0], numItermax=100, variant="paper")
    assert np.sqrt(wasserstein2_grid(bary, A[1])) <= 1.0 / shape[0]
    bary = wdha_barycenter(A, weights=[0.25, 0.75])
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
        bary = wdha_barycenter(A, order=order)
        assert bary.shape == shape
        m, _ = _moments(bary)
        assert np.max(np.abs(m - centres.mean(axis=0))) <= 0.5 / shape[0]
        assert np.sqrt(wasserstein2_grid(bary, truth)) <= 1.0 / shape[0]


def test_identical_inputs_stop_at_once_and_threads_do_not_change_the_result():
    shape = (24, 30)
    rho = np.random.default_rng(0).uniform(0, 1, shape)
    bary, log = wdha_barycenter(np.array([rho, 3 * rho]), log=True, variant="paper")
    assert log["niter"] == 0 and log["status"] == 0 and log["success"]
    assert np.max(np.abs(bary - rho / rho.sum())) <= 1e-14
    A = np.array([_disk(shape, c, 0.15) for c in CENTRES])
    b1 = wdha_barycenter(A, n_jobs=1)
    b2 = wdha_barycenter(A, n_jobs=2)
    assert np.array_equal(b1, b2)


def test_verbose_shows_progress(capsys):
    A = np.array([_disk((16, 16), c, 0.2) for c in CENTRES])
    wdha_barycenter(A, numItermax=5, verbose=True, variant="paper")
    out = capsys.readouterr().out
    assert "5/5" in out and "W2^2" in out


def test_barycenter_inputs_are_not_modified():
    A = np.array([_disk((16, 20), c, 0.2) for c in CENTRES])
    A0 = A.copy()
    wdha_barycenter(A)
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
        wdha_barycenter(A[..., None, None])
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
    with pytest.warns(RuntimeWarning, match="non-finite"):
        bary, log = wdha_barycenter(A, sigma0=1e308, log=True, variant="paper")
    assert not log["success"] and log["status"] == 4 and log["niter"] < 300
    # the result is the start (the first input), not NaN
    assert np.max(np.abs(bary - A[0] / A[0].sum())) <= 1e-15


# -- the wdha solver and its problem type --------------------------------------------------


def _four_disks(shape=(16, 16)):
    return np.array([_disk(shape, c, 0.2) for c in CENTRES])


def test_barycenter_problem_normalises_and_keeps_the_input():
    A = _four_disks((12, 10))
    A[1] *= 3.0
    A0 = A.copy()
    problem = BarycenterProblem(A, weights=[1, 1, 1, 1.0 + 1e-9] / np.float64(4 + 1e-9))
    assert np.array_equal(A, A0)
    assert problem.shape == (12, 10) and problem.n_densities == 4
    assert np.max(np.abs(problem.densities.mean(axis=(1, 2)) - 1)) <= 1e-14
    assert np.max(np.abs(problem.densities[1] - A[1] / A[1].mean())) <= 1e-14
    assert abs(problem.weights.sum() - 1) <= 1e-15
    assert np.array_equal(BarycenterProblem(A).weights, np.full(4, 0.25))
    assert problem.counts.nfev == problem.counts.njev == problem.counts.nifo == 0


def test_barycenter_problem_errors_name_the_argument():
    A = _four_disks()
    with pytest.raises(ValueError, match="densities must be nonnegative"):
        BarycenterProblem(-A)
    with pytest.raises(ValueError, match="densities must be a stack of 2-D or 3-D grids"):
        BarycenterProblem(A[0])
    with pytest.raises(ValueError, match="densities must have at least 3 cells"):
        BarycenterProblem(A[:, :2])
    with pytest.raises(TypeError, match="densities must be a real-valued"):
        BarycenterProblem(A.astype(complex))
    with pytest.raises(ValueError, match=r"weights must have shape \(4,\)"):
        BarycenterProblem(A, weights=[0.5, 0.5])
    with pytest.raises(ValueError, match="weights must lie on the probability simplex"):
        BarycenterProblem(A, weights=[0.5, 0.5, 0.5, -0.5])
    with pytest.raises(TypeError, match="weights must be a real-valued"):
        BarycenterProblem(A, weights=["a"] * 4)


def test_wdha_result_fields_counts_and_history():
    problem = BarycenterProblem(_four_disks(), weights=[0.5, 0.5, 0.0, 0.0])
    res = wdha(problem, maxiter=12, history=True, variant="paper")
    assert res.status == Status.SCHEDULE_DONE and res.success and res.nit == 12
    assert res.message.startswith("The schedule of 12 iterations is finished")
    assert res.stationarity_measure == "max(squared Wasserstein gradient norm, largest " \
                                       "H^-1 residual)"
    assert res.stationarity == max(res.wasserstein_gradient, res.h1_residual.max())
    assert abs(res.fun - 2 * (0.5 * res.dual[0] + 0.5 * res.dual[1])) <= 1e-15
    assert res.x.shape == (16, 16) and np.all(res.x >= 0) and abs(res.x.sum() - 1) <= 1e-12
    # one evaluation at the start and one per iteration, two inputs of positive weight
    assert (res.nfev, res.njev, res.nifo) == (13, 13, 26)
    assert res.potentials.shape == (4, 16, 16) and res.sigma.shape == (4,)
    assert np.all(res.dual[2:] == 0) and np.all(res.h1_residual[2:] == 0)
    h = res.history
    assert list(h) == ["iteration", "time", "fun", "stationarity", "nfev", "njev", "nifo",
                       "wasserstein_gradient", "max_h1_residual", "step_cells", "dual_0",
                       "dual_1",
                       "dual_2", "dual_3", "h1_residual_0", "h1_residual_1",
                       "h1_residual_2", "h1_residual_3"]
    assert np.array_equal(h["iteration"], np.arange(13)) and h["nfev"][-1] == res.nfev
    assert h["fun"][-1] == res.fun and h["stationarity"][-1] == res.stationarity
    assert np.array_equal(h["stationarity"],
                          np.maximum(h["wasserstein_gradient"], h["max_h1_residual"]))
    assert h["stationarity"][-1] < h["stationarity"][0]


def test_wdha_converges_at_once_on_identical_inputs_and_from_the_answer():
    rho = np.random.default_rng(0).uniform(0, 1, (10, 14))
    res = wdha(BarycenterProblem([rho, 2 * rho]))
    assert res.status == Status.CONVERGED and res.success and res.nit == 0
    assert res.stationarity <= 1e-28 and "<= tol = 1e-12" in res.message
    assert np.max(np.abs(res.x - rho / rho.sum())) <= 1e-15
    # weights (0, 1) starting from the second input: the start is the answer
    A = _four_disks()[:2]
    x0 = 5 * A[1]
    keep = x0.copy()
    res = wdha(BarycenterProblem(A, weights=[0.0, 1.0]), x0)
    assert res.status == Status.CONVERGED and res.nit == 0
    assert np.max(np.abs(res.x - A[1] / A[1].sum())) <= 1e-15
    assert np.array_equal(x0, keep)
    # and from the first input the paper's method takes the schedule to get there
    res = wdha(BarycenterProblem(A, weights=[0.0, 1.0]), maxiter=100, variant="paper")
    assert res.status == Status.SCHEDULE_DONE and res.nit == 100
    assert np.sqrt(wasserstein2_grid(res.x, A[1])) <= 1.0 / 16


def test_wdha_x0_sets_the_start():
    problem = BarycenterProblem(_four_disks())
    flat = wdha(problem, np.ones((16, 16)), maxiter=1, history=True, variant="paper")
    first = wdha(problem, maxiter=1, history=True, variant="paper")
    # the start's objective estimate differs: the uniform density is nearer the inputs
    assert flat.history["fun"][0] < first.history["fun"][0]
    with pytest.raises(ValueError, match=r"x0 must have the grid shape \(16, 16\)"):
        wdha(problem, np.ones((16, 15)))
    with pytest.raises(ValueError, match="x0 must be nonnegative"):
        wdha(problem, -np.ones((16, 16)))


def test_wdha_callbacks_stop_and_time_limit():
    problem = BarycenterProblem(_four_disks())
    seen, xs = [], []
    wdha(problem, maxiter=6, callback=lambda intermediate_result: seen.append(
        (intermediate_result.nit, intermediate_result.fun)))
    wdha(problem, maxiter=6, callback=lambda xk: xs.append(xk.sum()))
    assert [nit for nit, _ in seen] == [1, 2, 3, 4, 5, 6] and len(xs) == 6
    assert np.allclose(xs, 1.0, atol=1e-12)

    def stop(intermediate_result):
        if intermediate_result.nit == 3:
            raise StopIteration

    res = wdha(problem, maxiter=6, callback=stop)
    assert res.status == Status.CALLBACK and not res.success and res.nit == 3
    assert res.fun == seen[2][1]
    res = wdha(problem, max_time=0.0)
    assert res.status == Status.MAXTIME and res.nit == 0 and not res.success
    assert "max_time = 0 s" in res.message


def test_wdha_nonfinite_values_become_a_result():
    problem = BarycenterProblem(_four_disks())
    # an ascent step that overflows at the start: the result is the start
    res = wdha(problem, sigma0=1e308, variant="paper")
    assert res.status == Status.NONFINITE and not res.success
    assert "non-finite" in res.message and "at iteration 0" in res.message
    assert np.array_equal(res.x, problem.densities[0] / problem.densities[0].sum())
    assert isinstance(res.fault, jitopt.NonFiniteOracle)
    # one that overflows after the first steps: the best iterate before it
    res = wdha(problem, sigma0=1e290, variant="paper")
    assert res.status == Status.NONFINITE and "at iteration 2" in res.message
    assert res.nit == 1 and np.all(np.isfinite(res.x)) and abs(res.x.sum() - 1) <= 1e-12


def test_wdha_options_are_checked():
    problem = BarycenterProblem(_four_disks())
    for name, value, error in (("maxiter", 0, ValueError), ("maxiter", 2.5, TypeError),
                               ("tol", -1.0, ValueError), ("order", "random", ValueError),
                               ("sigma0", 0.0, ValueError), ("n_jobs", 0, ValueError),
                               ("max_subsamples", 0, ValueError),
                               ("max_time", -1.0, ValueError), ("rng", "seed", TypeError)):
        with pytest.raises(error, match=name):
            wdha(problem, **{name: value})


def test_wdha_disp_prints_progress(capsys):
    wdha(BarycenterProblem(_four_disks()), maxiter=3, disp=True, variant="paper")
    out = capsys.readouterr().out
    assert "stationarity" in out and "The schedule of 3 iterations is finished" in out


def test_wrapper_is_the_solver_with_pot_names():
    A = _four_disks((16, 20))
    w = [0.1, 0.2, 0.3, 0.4]
    bary, log = wdha_barycenter(A, weights=w, numItermax=15, order="jacobi", log=True,
                                variant="paper")
    res = wdha(BarycenterProblem(A, w), maxiter=15, order="jacobi", history=True,
               variant="paper")
    assert np.array_equal(bary, res.x)
    assert log["niter"] == 15 and log["dual"].shape == (15, 4)
    assert np.array_equal(log["objective"], res.history["fun"][:15])
    assert np.array_equal(log["dual"][:, 2], res.history["dual_2"][:15])
    assert np.array_equal(log["stationarity"], res.history["wasserstein_gradient"][:15])
    assert np.array_equal(log["potentials"], res.potentials)
    assert log["status"] == Status.SCHEDULE_DONE and log["success"]


def test_minimize_dispatches_a_barycenter_problem_to_wdha():
    problem = BarycenterProblem(_four_disks())
    assert "wdha" in jitopt.available_methods(problem)
    res = jitopt.minimize(problem, tol=1e-3, options={"maxiter": 5, "variant": "paper"})
    direct = wdha(BarycenterProblem(_four_disks()), maxiter=5, tol=1e-3, variant="paper")
    assert np.array_equal(res.x, direct.x) and res.nit == direct.nit == 5
    with pytest.raises(TypeError, match="BarycenterProblem for method 'wdha', got a Problem"):
        wdha(jitopt.problems.pca(np.diag([2.0, 1.0]), 1))


# -- the coarse-to-fine start of wdha --------------------------------------------------------

def test_prolongation_keeps_identity_and_translation_maps():
    from jitopt.transport._levels import coarsen, prolong_density, prolong_potentials

    y, x = grid_coordinates((16, 20))
    q = 0.5 * (y ** 2 + x ** 2)
    a = (0.03, -0.05)  # psi = q + <a, .>: the translation by a, convex
    psi, phi = prolong_potentials(np.array([q, q + a[0] * y + a[1] * x]))
    yf, xf = grid_coordinates((32, 40))
    qf = 0.5 * (yf ** 2 + xf ** 2)
    assert psi.shape == phi.shape == (2, 32, 40)
    assert np.abs(psi[0] - qf).max() <= 1e-15 and np.abs(phi[0] - qf).max() <= 1e-15
    g = potential_gradient(psi[1])[4:-4, 4:-4]  # the edges use the end values
    assert np.abs(g[..., 0] - yf[4:-4, 4:-4] - a[0]).max() <= 1e-12
    assert np.abs(g[..., 1] - xf[4:-4, 4:-4] - a[1]).max() <= 1e-12
    rho = np.random.default_rng(3).uniform(0, 2, (32, 40))
    assert np.isclose(coarsen(rho, 2).mean(), rho.mean()) and coarsen(rho, 2).shape == (16, 20)
    assert np.allclose(prolong_density(np.ones((16, 20))), 1.0, atol=1e-14)
    fine = prolong_density(coarsen(rho, 2))
    assert np.all(fine >= 0) and np.isclose(fine.mean(), 1.0)


def test_one_specialisation_per_kernel_on_the_tour_and_coarse_to_fine():
    from specialisations import assert_compiled_once

    assert_compiled_once(
        "import numpy as np, jitopt.tour; jitopt.tour.wdha(); "
        "A = np.zeros((2, 32, 32)); A[0, 4:12, 4:12] = A[1, 20:28, 12:20] = 1.0; "
        "jitopt.transport.wdha(jitopt.problems.BarycenterProblem(A), coarsest=8)",
        "pushforward")
