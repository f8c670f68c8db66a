"""
Sparse survival models: Cox regression that chooses its features
=================================================================

``jitopt.sparse.IHTCoxRegressorCV`` fits Cox proportional hazards models with at most
:math:`k` nonzero coefficients (Breslow's partial likelihood, iterative hard thresholding,
then a Newton refit on the support) for every candidate :math:`k`, and chooses :math:`k`
by cross-validation or by an information criterion computed as abess computes it.

The data imitate a gene-expression study: 400 patients, 1000 features in correlated
blocks of 20 (correlation 0.5 within a block), of which 8 carry the risk. Event times are
Weibull with hazard :math:`\\lambda(t\\mid x) = \\lambda_0(t)\\, e^{x^\\top w}`, and
independent censoring hides about 45 % of them. The model is chosen by EBIC on 300
patients and judged on the other 100: the chosen features against the true ones, and
Harrell's concordance index (:func:`jitopt.sparse.concordance_index`) of the predicted risk.

The left panel compares the fitted coefficients with the true ones; the right panel shows
the Kaplan–Meier survival curves of the held-out patients split at the median predicted
risk. When abess is installed, its ``CoxPHSurvivalAnalysis`` with the same criterion is
fitted on the same rows.
"""

import time

import matplotlib.pyplot as plt
import numpy as np

from jitopt.sparse import IHTCoxRegressorCV, concordance_index

rng = np.random.default_rng(0)
n, p, block = 400, 1000, 20
shared = rng.standard_normal((n, p // block)).repeat(block, axis=1)
X = np.sqrt(0.5) * shared + np.sqrt(0.5) * rng.standard_normal((n, p))
w = np.zeros(p)
true = np.array([3, 45, 160, 230, 410, 555, 720, 901])
w[true] = [1.0, -0.8, 0.7, -1.0, 0.6, 0.9, -0.7, 0.8]
event_time = (rng.exponential(size=n) * np.exp(-X @ w)) ** (1 / 1.5)  # Weibull, shape 1.5
censor_time = rng.exponential(2.5 * np.median(event_time), size=n)
observed = np.minimum(event_time, censor_time)
event = event_time <= censor_time
y = np.column_stack([observed, event])  # abess's layout: (time, event)
train, test = np.arange(300), np.arange(300, n)
print(f"{n} patients, {p} features, {event.mean():.0%} events observed")

IHTCoxRegressorCV([1, 2], criterion="ebic").fit(X[:50, :20], y[:50])  # compile (or load)
t = time.perf_counter()
model = IHTCoxRegressorCV(range(1, 21), criterion="ebic").fit(X[train], y[train])
seconds = time.perf_counter() - t


def report(name, coef, seconds):
    chosen = np.flatnonzero(coef)
    found = np.isin(true, chosen).sum()
    c = concordance_index(observed[test], event[test], X[test] @ coef)
    print(f"{name:7s} k = {chosen.size:2d}   true features found {found}/{true.size}   "
          f"false {chosen.size - found}   test concordance {c:.3f}   {1e3 * seconds:6.0f} ms")


report("jitopt", model.coef_, seconds)
print(f"        (the true coefficients give test concordance "
      f"{concordance_index(observed[test], event[test], X[test] @ w):.3f})")
try:
    import abess
except ImportError:
    abess = None
if abess is not None:
    other = abess.CoxPHSurvivalAnalysis(support_size=range(1, 21), ic_type="ebic")
    t = time.perf_counter()
    other.fit(X[train], y[train])
    report("abess", other.coef_, time.perf_counter() - t)


def kaplan_meier(times, events):
    """The Kaplan–Meier estimate: the times and the survival just after each."""
    order = np.argsort(times, kind="stable")
    times, events = times[order], events[order]
    at_risk = times.size - np.arange(times.size)
    return times, np.cumprod(1.0 - events / at_risk)


risk = X[test] @ model.coef_
high = risk > np.median(risk)
fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.5))
left.plot(np.where(w != 0, w, np.nan), "o", ms=7, mfc="none", label="true")
left.plot(np.where(model.coef_ != 0, model.coef_, np.nan), "x", color="C3", label="fitted")
left.axhline(0.0, color="0.8", lw=0.8)
left.set(xlabel="feature", ylabel="coefficient (zeros not drawn)",
         title=f"k = {model.k_} chosen by EBIC")
left.legend()
for group, name in [(~high, "lower predicted risk"), (high, "higher predicted risk")]:
    right.step(*kaplan_meier(observed[test][group], event[test][group]), where="post",
               label=name)
right.set(xlabel="time", ylabel="survival", title="held-out patients (Kaplan–Meier)")
right.legend()
fig.tight_layout()
plt.show()
