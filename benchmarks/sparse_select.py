"""Choosing k: IHTRegressorCV (CV, CV with the 1-SE rule, EBIC, GIC, golden-section CV) against
abess (cv=5, EBIC, GIC) on abess's own benchmark setting (n = 500, p = 8000, k = 10, constant
correlation rho): exact support, TPR, FPR, prediction error, coefficient error, chosen k and
time, with our/abess ratios (EBIC with screening_size="auto" is compared with abess's EBIC
without screening).

Then the diabetes data with pairwise products (64 features), 70/30 splits: test MSE, chosen k
and time against abess in the same modes; p > n with a box on the coefficients (EBIC with
the box against abess's EBIC with its bounds); and Poisson regression on abess's Poisson
design (IHTPoissonRegressorCV against abess's PoissonRegression, cv=5, EBIC and GIC).

``--small`` runs n = 200, p = 1000 (a quick check); ``--reps`` sets the replications,
``--splits`` the diabetes splits."""

import argparse
import statistics
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

from jitopt.sparse import IHTRegressorCV

from ._common import print_table


def make_data(n, p, k, rho, rng):
    """abess's design (``make_glm_data(corr_type="const")``) without the p x p covariance:
    ``X = sqrt(rho) z 1^T + sqrt(1 - rho) E``, nonzeros ``U[m, 100 m]`` with random signs,
    ``m = 5 sqrt(2 log p / n)``, unit noise; a test set of the same size."""
    def design(rows):
        return np.sqrt(rho) * rng.standard_normal((rows, 1)) + \
            np.sqrt(1 - rho) * rng.standard_normal((rows, p))
    m = 5 * np.sqrt(2 * np.log(p) / n)
    beta = np.zeros(p)
    support = rng.choice(p, k, replace=False)
    beta[support] = rng.uniform(m, 100 * m, k) * rng.choice([-1.0, 1.0], k)
    X, Xt = design(n), design(n)
    return X, X @ beta + rng.standard_normal(n), Xt, Xt @ beta + rng.standard_normal(n), beta


def methods(ks):
    ours = {
        "jitopt cv=5": lambda: IHTRegressorCV(ks, cv=5),
        "jitopt cv=5 1se": lambda: IHTRegressorCV(ks, cv=5, k_rule="1se"),
        "jitopt EBIC": lambda: IHTRegressorCV(criterion="ebic"),
        "jitopt GIC": lambda: IHTRegressorCV(ks, criterion="gic"),
        "jitopt golden cv=5": lambda: IHTRegressorCV(ks, cv=5, search="golden"),
        "jitopt EBIC screened": lambda: IHTRegressorCV(criterion="ebic",
                                                       screening_size="auto"),
    }
    try:
        import abess
    except ImportError:
        return ours, {}
    theirs = {
        "abess cv=5": lambda: abess.LinearRegression(support_size=ks, cv=5, thread=1),
        "abess EBIC": lambda: abess.LinearRegression(thread=1),
        "abess GIC": lambda: abess.LinearRegression(support_size=ks, ic_type="gic", thread=1),
        "abess gs cv=5": lambda: abess.LinearRegression(path_type="gs", s_min=0,
                                                        s_max=ks[-1], cv=5, thread=1),
    }
    return ours, theirs


PAIRS = {"jitopt cv=5": "abess cv=5", "jitopt cv=5 1se": "abess cv=5", "jitopt EBIC": "abess EBIC", "jitopt GIC": "abess GIC",
         "jitopt golden cv=5": "abess gs cv=5", "jitopt EBIC screened": "abess EBIC"}


def run(n, p, k, rhos, reps, seed):
    ks = list(range(0, 100 if p > 1000 else 50))
    ours, theirs = methods(ks)
    every = {**ours, **theirs}
    X, y, _, _, _ = make_data(n, p, k, 0.1, np.random.default_rng(seed))
    t = time.process_time()
    for make in ours.values():  # compile (or load) the kernels before timing
        make().fit(X[:100, :200], y[:100])
    print(f"warm-up (JIT compile or cache load): {time.process_time() - t:.1f} s CPU")
    for rho in rhos:
        stats = {name: [] for name in every}
        for r in range(reps):
            rng = np.random.default_rng(seed + r)
            X, y, Xt, yt, beta = make_data(n, p, k, rho, rng)
            truth = set(np.flatnonzero(beta))
            for name, make in every.items():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    t = time.perf_counter()
                    model = make().fit(X, y)
                    elapsed = time.perf_counter() - t
                coef = np.ravel(model.coef_)
                chosen = set(np.flatnonzero(coef))
                stats[name].append(dict(
                    exact=chosen == truth, tpr=len(chosen & truth) / k,
                    fpr=len(chosen - truth) / (p - k), fp=len(chosen - truth),
                    pred=float(np.linalg.norm(yt - model.predict(Xt))),
                    coef=float(np.linalg.norm(coef - beta)), k=len(chosen), time=elapsed))
        rows = []
        for name, runs in stats.items():
            agg = {key: statistics.mean(d[key] for d in runs) for key in runs[0]}
            agg["time"] = statistics.median(d["time"] for d in runs)
            agg["exact"] = sum(d["exact"] for d in runs)
            ref = PAIRS.get(name)
            ratio = ""
            if ref in stats:
                ref_time = statistics.median(d["time"] for d in stats[ref])
                ref_pred = statistics.mean(d["pred"] for d in stats[ref])
                ratio = f"{agg['pred'] / ref_pred:.3f} / {agg['time'] / ref_time:.2f}"
            rows.append([name, f"{agg['exact']}/{reps}", agg["tpr"], agg["fpr"], agg["fp"],
                         agg["k"], agg["pred"], agg["coef"], agg["time"], ratio])
        print(f"\nrho = {rho}: n = {n}, p = {p}, k = {k}, {reps} replications "
              f"(seeds {seed}..{seed + reps - 1})")
        print_table([("method", "s"), ("exact", "s"), ("TPR", ".3f"), ("FPR", ".5f"),
                     ("false pos.", ".1f"), ("k", ".1f"), ("|y-yhat|", ".2f"),
                     ("|b-beta|", ".3f"), ("time s", ".3f"),
                     ("pred/time vs abess", "s")], rows)


def diabetes(splits, seed):
    """Block B: the diabetes data with pairwise products (64 standardised features, the
    square of the binary sex column left out), 70/30 splits: test MSE, chosen k, time."""
    from sklearn.datasets import load_diabetes
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import PolynomialFeatures, StandardScaler

    X, y = load_diabetes(return_X_y=True)
    poly = PolynomialFeatures(degree=2, include_bias=False)
    Z = poly.fit_transform(X)
    keep = [i for i, name in enumerate(poly.get_feature_names_out()) if name != "x1^2"]
    Z = StandardScaler().fit_transform(Z[:, keep])
    ks = list(range(0, 31))
    ours = {"jitopt cv=5": lambda: IHTRegressorCV(ks, cv=5),
            "jitopt EBIC": lambda: IHTRegressorCV(ks, criterion="ebic"),
            "jitopt GIC": lambda: IHTRegressorCV(ks, criterion="gic")}
    try:
        import abess
        theirs = {"abess cv=5": lambda: abess.LinearRegression(support_size=ks, cv=5, thread=1),
                  "abess EBIC": lambda: abess.LinearRegression(support_size=ks, thread=1),
                  "abess GIC": lambda: abess.LinearRegression(support_size=ks, ic_type="gic",
                                                              thread=1)}
    except ImportError:
        theirs = {}
    every = {**ours, **theirs}
    stats = {name: [] for name in every}
    for r in range(splits):
        a, b, c, d = train_test_split(Z, y, test_size=0.3, random_state=seed + r)
        for name, make in every.items():
            t = time.perf_counter()
            model = make().fit(a, c)
            elapsed = time.perf_counter() - t
            stats[name].append((float(np.mean((d - model.predict(b)) ** 2)),
                                int(np.count_nonzero(model.coef_)), elapsed))
    rows = []
    for name, runs in stats.items():
        mse = statistics.mean(x[0] for x in runs)
        sec = statistics.median(x[2] for x in runs)
        ratio = ""
        if PAIRS.get(name) in stats:
            ref = stats[PAIRS[name]]
            ratio = (f"{mse / statistics.mean(x[0] for x in ref):.3f} / "
                     f"{sec / statistics.median(x[2] for x in ref):.2f}")
        rows.append([name, mse, statistics.median(x[1] for x in runs), 1e3 * sec, ratio])
    print(f"\ndiabetes with pairwise products (442 x 64), {splits} splits 70/30 "
          f"(random_state {seed}..{seed + splits - 1})")
    print_table([("method", "s"), ("test MSE", ".1f"), ("median k", ".1f"), ("ms", ".1f"),
                 ("MSE/time vs abess", "s")], rows)


def bounded(reps, seed):
    """Block D: p > n with bounds abess's criteria cannot keep: n = 200, p = 1000, 10
    nonzeros U[1, 2], AR(1) correlation 0.5, SNR 5, coefficients in the box [0, 1.5] (the
    upper bound active on about half of the support). EBIC with the box against abess's
    EBIC with beta_low = 0, beta_high = 1.5: exact support, nonzeros, the largest violation of
    the bounds, time."""
    from jitopt.problems import sparse_regression_data
    from jitopt.sets import Box

    every = {"jitopt EBIC box": lambda: IHTRegressorCV(criterion="ebic",
                                                       constraint=Box(0.0, 1.5))}
    try:
        import abess
        every["abess EBIC bounds"] = lambda: abess.LinearRegression(thread=1)
    except ImportError:
        pass
    stats = {name: [] for name in every}
    for r in range(reps):
        X, y, beta = sparse_regression_data(200, 1000, 10, rho=0.5, snr=5.0, rng=seed + r)
        truth = set(np.flatnonzero(beta))
        for name, make in every.items():
            kw = {"beta_low": 0.0, "beta_high": 1.5} if name.startswith("abess") else {}
            t = time.perf_counter()
            model = make().fit(X, y, **kw)
            elapsed = time.perf_counter() - t
            coef = np.ravel(model.coef_)
            chosen = set(np.flatnonzero(coef))
            stats[name].append((chosen == truth, len(chosen & truth), len(chosen - truth),
                                max(0.0, -coef.min(), coef.max() - 1.5), elapsed))
    rows = [[name, f"{sum(x[0] for x in runs)}/{reps}",
             statistics.mean(x[1] for x in runs), statistics.mean(x[2] for x in runs),
             max(x[3] for x in runs), statistics.median(x[4] for x in runs)]
            for name, runs in stats.items()]
    print(f"\np > n in the box [0, 1.5]: n = 200, p = 1000, 10 nonzeros U[1, 2], rho 0.5, "
          f"SNR 5, {reps} replications (seeds {seed}..{seed + reps - 1})")
    print_table([("method", "s"), ("exact", "s"), ("true pos.", ".1f"),
                 ("false pos.", ".1f"), ("bound violation", ".2e"), ("time s", ".3f")], rows)


def poisson(reps, seed, n=500, p=2000, k=10):
    """Block C: abess's Poisson design (``make_glm_data(family="poisson")``: independent
    N(0, 1) features divided by 16, nonzeros ``U[2m, 10m]`` with random signs, ``m = 5
    sqrt(2 log p / n)``, counts Poisson(exp(X beta))), candidates 0..30:
    IHTPoissonRegressorCV against abess's PoissonRegression in the same modes (cv=5, EBIC,
    GIC): true and false positives, test mean Poisson deviance, time, with our/abess ratios."""
    from sklearn.metrics import mean_poisson_deviance

    from jitopt.sparse import IHTPoissonRegressorCV

    ks = list(range(0, 31))
    modes = {"cv=5": dict(cv=5), "EBIC": dict(criterion="ebic"), "GIC": dict(criterion="gic")}
    every = {f"jitopt {mode}": (lambda kw=kw: IHTPoissonRegressorCV(ks, **kw))
             for mode, kw in modes.items()}
    try:
        import abess
        every.update({f"abess {mode}": (lambda kw=kw: abess.PoissonRegression(
            support_size=ks, thread=1, **kw))
            for mode, kw in {"cv=5": dict(cv=5), "EBIC": dict(ic_type="ebic"),
                             "GIC": dict(ic_type="gic")}.items()})
    except ImportError:
        pass
    rng = np.random.default_rng(seed)
    t = time.process_time()
    IHTPoissonRegressorCV(range(3), criterion="ebic").fit(
        rng.standard_normal((50, 20)), rng.poisson(1.0, 50))  # compile (or load) the kernels
    print(f"\nPoisson warm-up (JIT compile or cache load): {time.process_time() - t:.1f} s CPU")
    stats = {name: [] for name in every}
    m = 5 * np.sqrt(2 * np.log(p) / n)
    for r in range(reps):
        rng = np.random.default_rng(seed + r)
        beta = np.zeros(p)
        support = rng.choice(p, k, replace=False)
        beta[support] = rng.uniform(2 * m, 10 * m, k) * rng.choice([-1.0, 1.0], k)
        X, Xt = rng.standard_normal((n, p)) / 16, rng.standard_normal((n, p)) / 16
        y, yt = rng.poisson(np.exp(X @ beta)), rng.poisson(np.exp(Xt @ beta))
        truth = set(support)
        for name, make in every.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t = time.perf_counter()
                model = make().fit(X, y)
                elapsed = time.perf_counter() - t
            chosen = set(np.flatnonzero(model.coef_))
            dev = mean_poisson_deviance(yt, np.exp(Xt @ model.coef_ + model.intercept_))
            stats[name].append((len(chosen & truth), len(chosen - truth), dev, elapsed))
    rows = []
    for name, runs in stats.items():
        tp, fp, dev = (statistics.mean(x[i] for x in runs) for i in range(3))
        sec = statistics.median(x[3] for x in runs)
        ref = stats.get(name.replace("jitopt", "abess")) if name.startswith("jitopt") else None
        ratio = "" if not ref else (
            f"{dev / statistics.mean(x[2] for x in ref):.3f} / "
            f"{sec / statistics.median(x[3] for x in ref):.2f}")
        rows.append([name, tp, fp, dev, sec, ratio])
    print(f"\nPoisson (abess's design): n = {n}, p = {p}, k = {k}, candidates 0..30, {reps} "
          f"replications (seeds {seed}..{seed + reps - 1})")
    print_table([("method", "s"), ("true pos.", ".1f"), ("false pos.", ".1f"),
                 ("test deviance", ".4f"), ("time s", ".3f"),
                 ("deviance/time vs abess", "s")], rows)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks sparse_select",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", action="store_true", help="n = 200, p = 1000")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--rho", type=float, nargs="+", default=[0.1, 0.7])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--splits", type=int, default=10, help="splits of the diabetes block")
    args = parser.parse_args(argv)
    n, p = (200, 1000) if args.small else (500, 8000)
    with threadpool_limits(1):
        run(n, p, 10, args.rho, args.reps, args.seed)
        diabetes(args.splits, args.seed)
        bounded(args.reps, args.seed)
        poisson(args.reps, args.seed)
