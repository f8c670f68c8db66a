r"""Choosing the sparsity :math:`k`: the information criteria (as abess computes them) and
the search over the candidates (every one in increasing order, or a golden-section search)."""

import math

import numpy as np

from ..validation import check_choice, check_int, check_real

__all__ = ["information_criterion", "search_candidates"]

CRITERIA = ("aic", "bic", "gic", "ebic", "loss")
SEARCHES = ("sequential", "golden")


def information_criterion(deviance, df, n, p, criterion="ebic", ic_coef=1.0):
    r"""An information criterion :math:`D + \text{penalty}\cdot\text{df}`, as abess defines it.

    With :math:`D` the deviance term of the fit, :math:`\text{df}` its number of nonzero
    coefficients (the intercept not counted), :math:`n` the (weighted) number of samples,
    :math:`p` the number of features and :math:`c` = ``ic_coef``:

    ==========  =====================================================
    ``"loss"``  :math:`D`
    ``"aic"``   :math:`D + 2\,\text{df}` (``ic_coef`` not used)
    ``"bic"``   :math:`D + c\,\log(n)\,\text{df}`
    ``"gic"``   :math:`D + c\,\log(p)\,\log(\log n)\,\text{df}`
    ``"ebic"``  :math:`D + c\,(\log n + 2\log p)\,\text{df}`
    ==========  =====================================================

    For least squares abess's :math:`D` is :math:`n\log(\mathrm{RSS}/(2n))`; for the other
    families twice the negative log-likelihood (without terms free of the coefficients).
    GIC is the criterion of Zhu et al. (2020); EBIC is Chen & Chen's (2008) with
    :math:`\gamma = 1` and :math:`\log\binom pk` replaced by :math:`k\log p`.

    Parameters
    ----------
    deviance : float or array_like
        :math:`D`.
    df : int or array_like
        Nonzero coefficients.
    n : float
        Samples (:math:`\sum_i s_i` with sample weights), positive; above :math:`e` for GIC.
    p : int
        Features, at least 1.
    criterion : {"aic", "bic", "gic", "ebic", "loss"}
    ic_coef : float
        :math:`c > 0`.

    Returns
    -------
    float or ndarray
        The criterion (same shape as ``deviance`` and ``df`` broadcast).

    References
    ----------
    J. Zhu, C. Wen, J. Zhu, H. Zhang and X. Wang, "A polynomial algorithm for best-subset
    selection problem", PNAS 117(52), 2020. J. Chen and Z. Chen, "Extended Bayesian
    information criteria for model selection with large model spaces", Biometrika 95(3), 2008.

    Examples
    --------
    >>> import math
    >>> from jitopt.sparse import information_criterion
    >>> v = information_criterion(10.0, 3, n=100, p=50, criterion="gic")
    >>> bool(math.isclose(v, 10.0 + 3 * math.log(50) * math.log(math.log(100))))
    True
    """
    check_choice("criterion", criterion, CRITERIA)
    n = check_real("n", n, low=0.0, low_open=True)
    p = check_real("p", p, low=1.0)
    c = check_real("ic_coef", ic_coef, low=0.0, low_open=True)
    if criterion == "gic" and n <= math.e:
        raise ValueError(f"criterion='gic' needs n > e (log log n > 0), got n = {n}")
    per_df = {"loss": 0.0, "aic": 2.0, "bic": c * math.log(n),
              "gic": c * math.log(p) * math.log(math.log(n)) if criterion == "gic" else 0.0,
              "ebic": c * (math.log(n) + 2.0 * math.log(p))}[criterion]
    value = np.asarray(deviance, dtype=float) + per_df * np.asarray(df, dtype=float)
    return float(value) if value.ndim == 0 else value


def search_candidates(m, evaluate, search="sequential", patience=None):
    r"""The best of ``m`` candidates (indices ``0 .. m-1``, smaller is simpler) by a score,
    evaluating all of them or only those of a golden-section search.

    ``"sequential"`` evaluates every candidate. ``"golden"`` is an integer golden-section
    search: with ``a < c < d < b``, ``c = a + round(0.382 (b - a))``,
    ``d = a + round(0.618 (b - a))`` (``c + 1`` when that rounds to ``c``), it evaluates
    ``c`` and ``d``, keeps ``[a, d]`` when ``c`` scores no worse, else ``[c, b]``, until
    ``b - a <= 3``, then evaluates all of ``[a, b]`` (about :math:`\log_{1.618} m + 4`
    evaluations). On a strictly unimodal score it returns the minimum; otherwise it can
    stop in a local minimum; the best of **all** evaluated candidates is returned (abess's
    ``gs`` returns the best of its last bracket). With ``patience``, the sequential search
    evaluates one candidate at a time and stops once ``patience`` candidates in a row have
    not lowered the best score: the later ones are left unevaluated (a score that falls
    again after a longer plateau is missed).

    Parameters
    ----------
    m : int
        Number of candidates.
    evaluate : callable
        ``evaluate(indices)`` -> their scores (lower is better), called with increasing
        indices not evaluated before (so that fits along a path can be warm-started).
    search : {"sequential", "golden"}
    patience : int, optional
        Stop the sequential search after this many candidates without a new best (``None``:
        evaluate all; only with ``"sequential"``).

    Returns
    -------
    best : int
        The evaluated index of least score (ties to the smaller index).
    scores : dict
        Index -> score of every evaluated candidate.

    Examples
    --------
    >>> from jitopt.sparse import search_candidates
    >>> curve = [9.0, 7.0, 5.0, 4.0, 3.5, 3.0, 3.2, 3.6, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0]
    >>> best, scores = search_candidates(len(curve), lambda idx: [curve[i] for i in idx],
    ...                                  "golden")
    >>> best, len(scores) < len(curve)
    (5, True)
    """
    check_choice("search", search, SEARCHES)
    patience = check_patience(patience, search)
    scores = {}

    def run(indices):
        new = sorted(set(indices) - set(scores))
        if new:
            scores.update(zip(new, evaluate(new)))

    a, b = 0, m - 1
    if search == "golden":
        while b - a > 3:
            c = a + round(0.382 * (b - a))
            d = max(a + round(0.618 * (b - a)), c + 1)  # (equal for b - a = 4)
            run([c, d])
            if scores[c] <= scores[d]:
                b = d
            else:
                a = c
    if patience is None:
        run(range(a, b + 1))
    else:
        best = 0
        for i in range(m):
            run([i])
            if scores[i] < scores[best]:
                best = i
            elif i - best >= patience:
                break
    best = min(scores, key=lambda i: (scores[i], i))
    return best, scores


def check_patience(patience, search):
    """The checked ``patience`` (None or a positive int) of a ``search``."""
    if patience is None:
        return None
    patience = check_int("patience", patience, low=1)
    if search != "sequential":
        raise ValueError(f"patience stops the sequential search; got search={search!r}")
    return patience
