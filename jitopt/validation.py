"""Argument checks shared by the public functions: each error names the argument."""

import numbers

import numpy as np

__all__ = ["check_int", "check_real", "check_choice", "check_rng", "check_array",
           "as_c_float"]


def check_int(name, value, low=None, high=None):
    """Return ``value`` as an int, or raise if it is not an integer in ``[low, high]``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    value = int(value)
    if (low is not None and value < low) or (high is not None and value > high):
        lo = "-inf" if low is None else low
        hi = "inf" if high is None else high
        raise ValueError(f"{name} must be in [{lo}, {hi}], got {value}")
    return value


def check_real(name, value, low=None, high=None, low_open=False, high_open=False):
    """Return ``value`` as a float, or raise if it is not a real number in the interval."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    bad = np.isnan(value)
    if low is not None:
        bad |= value <= low if low_open else value < low
    if high is not None:
        bad |= value >= high if high_open else value > high
    if bad:
        lo = "(-inf" if low is None else ("(" if low_open else "[") + f"{low:g}"
        hi = "inf)" if high is None else f"{high:g}" + (")" if high_open else "]")
        raise ValueError(f"{name} must be in {lo}, {hi}, got {value!r}")
    return value


def check_choice(name, value, choices):
    """Return ``value`` if it is one of ``choices``, else raise a ``ValueError``."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {tuple(choices)}, got {value!r}")
    return value


def check_rng(rng):
    """A :class:`numpy.random.Generator` from ``None``, an int seed or a Generator."""
    if rng is None or isinstance(rng, (numbers.Integral, np.random.Generator,
                                       np.random.SeedSequence)):
        return np.random.default_rng(rng)
    raise TypeError(f"rng must be None, an int seed or a numpy.random.Generator, "
                    f"got {type(rng).__name__}")


def check_array(name, value, ndim=None):
    """A new writable C-contiguous float64 copy of the real, finite array ``value``.

    Raises a ``TypeError`` for complex or non-numeric input and a ``ValueError`` for the
    wrong number of axes (when ``ndim`` is given) or a NaN/inf entry. The copy means the
    caller's array is never modified and every kernel sees one layout.
    """
    if np.iscomplexobj(value):
        raise TypeError(f"{name} must be real, got a complex array")
    try:
        arr = np.array(value, dtype=np.float64, order="C")
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be an array of real numbers") from None
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-D array, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    return arr


def as_c_float(a):
    """``a`` as a C-contiguous float64 array (no copy when it already is one): the one
    layout the Numba kernels are compiled for."""
    return np.ascontiguousarray(a, dtype=np.float64)
