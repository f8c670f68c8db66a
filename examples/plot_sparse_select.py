"""
Choosing the number of features: cross-validation and GIC on the diabetes data
==============================================================================

``jitopt.sparse.IHTRegressorCV`` fits a best-subset least-squares model for every candidate
sparsity :math:`k` (warm-started along the path) and chooses :math:`k` by cross-validation
or by an information criterion, computed as abess computes it. Here the data are
scikit-learn's diabetes data (442 patients, 10 measurements) expanded by all products of
two measurements (``PolynomialFeatures(degree=2)``, without the square of the binary sex
column, which equals the column itself): 64 standardised features, many of them strongly
correlated. The rows are split 70/30 once; the models are fitted on the 70 % and scored on
the 30 %.

The left panel shows the mean 5-fold CV score (negated mean squared error) against
:math:`k`, with the chosen :math:`k` marked; the right panel shows GIC,
:math:`n\\log(\\mathrm{RSS}/2n) + \\log p\\,\\log\\log n\\cdot k`, against :math:`k`. The
printed lines give the chosen :math:`k`, the test mean squared error and the time of each
fit, and those of abess (``cv=5`` and ``ic_type="gic"``) when it is installed. Integer
``cv`` in both libraries means different folds (abess shuffles with its own seed,
scikit-learn's ``KFold`` does not), so the two CV curves are not the same curve.
"""

import time

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import PolynomialFeatures, StandardScaler

from jitopt.sparse import IHTRegressorCV

X, y = load_diabetes(return_X_y=True)
poly = PolynomialFeatures(degree=2, include_bias=False)
Z = poly.fit_transform(X)
keep = [i for i, name in enumerate(poly.get_feature_names_out()) if name != "x1^2"]
Z = StandardScaler().fit_transform(Z[:, keep])
Z_train, Z_test, y_train, y_test = train_test_split(Z, y, test_size=0.3, random_state=0)
ks = range(0, 31)

IHTRegressorCV([1, 2], criterion="gic").fit(Z_train, y_train)  # compile (or load) first
fits = {}
for name, model in [("jitopt CV", IHTRegressorCV(ks, cv=5)),
                    ("jitopt GIC", IHTRegressorCV(ks, criterion="gic"))]:
    t = time.perf_counter()
    model.fit(Z_train, y_train)
    fits[name] = (model, time.perf_counter() - t)

try:
    import abess
except ImportError:
    abess = None
if abess is not None:
    for name, model in [("abess cv=5", abess.LinearRegression(support_size=ks, cv=5)),
                        ("abess GIC", abess.LinearRegression(support_size=ks,
                                                             ic_type="gic"))]:
        t = time.perf_counter()
        model.fit(Z_train, y_train)
        fits[name] = (model, time.perf_counter() - t)

for name, (model, seconds) in fits.items():
    mse = np.mean((y_test - model.predict(Z_test)) ** 2)
    print(f"{name:11s} k = {np.count_nonzero(model.coef_):2d}   test MSE = {mse:7.1f}   "
          f"{1e3 * seconds:6.1f} ms")

cv, gic = fits["jitopt CV"][0], fits["jitopt GIC"][0]
fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.5))
left.plot(cv.cv_results_["param_k"], cv.cv_results_["mean_test_score"], "o-", ms=3)
left.axvline(cv.k_, color="C3", ls="--", label=f"chosen k = {cv.k_}")
left.set(xlabel="k", ylabel="mean CV score (−MSE)", title="5-fold cross-validation")
left.legend()
right.plot(gic.cv_results_["param_k"], gic.criterion_, "o-", ms=3, color="C1")
right.axvline(gic.k_, color="C3", ls="--", label=f"chosen k = {gic.k_}")
right.set(xlabel="k", ylabel="GIC", title="generalised information criterion")
right.legend()
fig.tight_layout()
plt.show()
