"""Sparse optimization: iterative hard thresholding with the two-step projection onto
:math:`\\{\\|x\\|_0 \\le k\\} \\cap \\Gamma` for support-preserving convex sets :math:`\\Gamma`
(``jitopt.sets``), and scikit-learn estimators built on it.

The estimators ``IHTRegressor``, ``IHTClassifier`` and ``IHTPoissonRegressor`` (fixed
sparsity) and ``IHTRegressorCV``, ``IHTClassifierCV`` and ``IHTPoissonRegressorCV`` (sparsity
chosen by cross-validation or an information criterion) need scikit-learn, as do
``IHTCoxRegressor``, ``IHTCoxRegressorCV`` and ``concordance_index``; they are imported on first access, so the rest of the module works without it.
"""

from ._glm import glm_exchange_search
from ._iht import iht, iht_path
from ._kernels import box_qp
from ._projection import hard_threshold, two_step_projection
from ._refit import exchange_search
from ._select import information_criterion, search_candidates
from ._zeroth_order import zo_gradient

__all__ = ["iht", "iht_path", "two_step_projection", "hard_threshold", "zo_gradient",
           "exchange_search", "glm_exchange_search", "box_qp", "IHTRegressor", "IHTClassifier", "information_criterion",
           "search_candidates", "IHTRegressorCV", "IHTClassifierCV", "IHTPoissonRegressor",
           "IHTPoissonRegressorCV", "IHTCoxRegressor", "IHTCoxRegressorCV", "concordance_index"]


def __getattr__(name):
    if name in ("IHTCoxRegressor", "IHTCoxRegressorCV", "concordance_index"):
        try:
            from . import _estimators_cox
        except ImportError as exc:
            raise ImportError(f"jitopt.sparse.{name} needs scikit-learn "
                              f"(pip install scikit-learn)") from exc
        return getattr(_estimators_cox, name)
    if name in ("IHTRegressor", "IHTClassifier", "IHTRegressorCV", "IHTClassifierCV",
                "IHTPoissonRegressor", "IHTPoissonRegressorCV"):
        try:
            from . import _estimators, _estimators_cv, _estimators_glm
        except ImportError as exc:
            raise ImportError(f"jitopt.sparse.{name} needs scikit-learn "
                              f"(pip install scikit-learn)") from exc
        module = _estimators_glm if name.startswith("IHTPoisson") else \
            _estimators_cv if name.endswith("CV") else _estimators
        return getattr(module, name)
    raise AttributeError(f"module 'jitopt.sparse' has no attribute {name!r}")
