"""Argument checks shared by the public functions: each error names the argument."""

import math
import numbers

import numpy as np

__all__ = ["check_int", "check_real", "check_choice", "check_rng", "as_array", "check_array",
           "check_limits", "as_c_float", "check_shape", "all_finite"]


def check_int(name, value, low=None, high=None):
    """Return ``value`` as an int, or raise if it is not an integer in ``[low, high]``.

    Parameters
    ----------
    name : str
        The argument's name, for the message.
    value : object
        The value to check; ``bool`` is refused.
    low, high : int, optional
        Bounds of the closed interval (``None``: unbounded on that side).

    Returns
    -------
    int

    Raises
    ------
    TypeError
        When ``value`` is not an integer.
    ValueError
        When it is outside ``[low, high]``.

    Examples
    --------
    >>> from jitopt.validation import check_int
    >>> check_int("maxiter", 10, low=0)
    10
    >>> check_int("maxiter", -1, low=0)
    Traceback (most recent call last):
    ...
    ValueError: maxiter must be in [0, inf], got -1
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    value = int(value)
    if (low is not None and value < low) or (high is not None and value > high):
        lo = "-inf" if low is None else low
        hi = "inf" if high is None else high
        raise ValueError(f"{name} must be in [{lo}, {hi}], got {value}")
    return value


def check_real(name, value, low=None, high=None, low_open=False, high_open=False):
    """Return ``value`` as a float, or raise if it is not a real number in the interval.

    Parameters
    ----------
    name : str
        The argument's name, for the message.
    value : object
        The value to check; ``bool`` and NaN are refused.
    low, high : float, optional
        Bounds of the interval (``None``: unbounded on that side).
    low_open, high_open : bool
        Whether the interval is open at that bound.

    Returns
    -------
    float

    Raises
    ------
    TypeError
        When ``value`` is not a real number.
    ValueError
        When it is NaN or outside the interval.

    Examples
    --------
    >>> from jitopt.validation import check_real
    >>> check_real("tol", 1e-8, low=0.0, low_open=True)
    1e-08
    >>> check_real("tol", 0.0, low=0.0, low_open=True)
    Traceback (most recent call last):
    ...
    ValueError: tol must be in (0, inf), got 0.0
    """
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
    """Return ``value`` if it is one of ``choices``, else raise a ``ValueError``.

    Parameters
    ----------
    name : str
        The argument's name, for the message.
    value : object
        The value to check.
    choices : iterable
        The accepted values.

    Returns
    -------
    object
        ``value``.

    Examples
    --------
    >>> from jitopt.validation import check_choice
    >>> check_choice("step", "bb", ("bb", "armijo"))
    'bb'
    """
    if value not in choices:
        raise ValueError(f"{name} must be one of {tuple(choices)}, got {value!r}")
    return value


def check_rng(rng):
    """A :class:`numpy.random.Generator` from ``None``, an int seed or a Generator.

    Parameters
    ----------
    rng : None, int, numpy.random.Generator or numpy.random.SeedSequence
        The seed or generator; a Generator is returned as it is (so draws continue).

    Returns
    -------
    numpy.random.Generator

    Examples
    --------
    >>> from jitopt.validation import check_rng
    >>> bool(check_rng(3).integers(10) == check_rng(3).integers(10))
    True
    """
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool) and rng < 0:
        raise ValueError(f"rng must be a nonnegative int seed, got {rng}")
    if rng is None or (isinstance(rng, (numbers.Integral, np.random.Generator,
                                        np.random.SeedSequence)) and not isinstance(rng, bool)):
        return np.random.default_rng(rng)
    raise TypeError(f"rng must be None, an int seed or a numpy.random.Generator, "
                    f"got {type(rng).__name__}")


def all_finite(a):
    """Whether the array ``a`` holds no NaN or inf, in one pass with no temporary array
    when ``a`` is contiguous (C or Fortran order; a strided view is copied once): NaN and
    inf reach its sum of squares (when that overflows, each entry is checked).

    Parameters
    ----------
    a : ndarray
        A real or complex array of any shape and layout.

    Returns
    -------
    bool
        True when every entry of ``a`` is finite.

    Examples
    --------
    >>> import numpy as np
    >>> all_finite(np.full(3, 1e300)), all_finite(np.array([1.0, np.nan]))
    (True, False)
    """
    flat = a.ravel(order="K")
    with np.errstate(over="ignore", invalid="ignore"):
        square = flat @ flat if flat.dtype.kind != "c" else np.vdot(flat, flat).real
    return math.isfinite(square) or bool(np.isfinite(flat).all())


def as_array(name, value):
    """``numpy.asarray(value)``, with a ragged nesting of sequences refused by name (NumPy's
    "inhomogeneous shape" error names no argument).

    Parameters
    ----------
    name : str
        The argument's name, for the message.
    value : array_like
        The array.

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    TypeError
        For a ragged nesting of sequences.

    Examples
    --------
    >>> from jitopt.validation import as_array
    >>> as_array("A", [[1.0, 2.0], [3.0]])
    Traceback (most recent call last):
    ...
    TypeError: A must be an array, got a ragged nesting of sequences
    """
    try:
        return np.asarray(value)
    except ValueError:
        raise TypeError(f"{name} must be an array, got a ragged nesting of sequences") \
            from None


def check_array(name, value, ndim=None):
    """A new writable C-contiguous float64 copy of the real, finite array ``value``.

    The copy means the caller's array is never modified and every kernel sees one layout.

    Parameters
    ----------
    name : str
        The argument's name, for the message.
    value : array_like
        The array to check.
    ndim : int, optional
        The number of axes it must have.

    Returns
    -------
    numpy.ndarray
        A float64 C-contiguous copy.

    Raises
    ------
    TypeError
        For complex or non-numeric input.
    ValueError
        For the wrong number of axes or a NaN/inf entry.

    Examples
    --------
    >>> from jitopt.validation import check_array
    >>> check_array("x0", [1, 2])
    array([1., 2.])
    >>> check_array("x0", [1.0, float("nan")])
    Traceback (most recent call last):
    ...
    ValueError: x0 must be finite (no NaN or inf)
    """
    arr = as_array(name, value)
    if arr.dtype.kind == "c":
        raise TypeError(f"{name} must be real, got a complex array")
    try:
        arr = np.array(arr, dtype=np.float64, order="C")
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be an array of real numbers") from None
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-D array, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    return arr


def check_limits(gtol, f_target, maxiter, max_time):
    """The common stopping options of the Riemannian solvers, checked.

    Parameters
    ----------
    gtol : float
        Gradient-norm tolerance, at least 0.
    f_target : float or None
        Cost target (``None``: none).
    maxiter : int
        Iteration limit, at least 0.
    max_time : float
        Time limit in seconds, at least 0.

    Returns
    -------
    tuple
        ``(gtol, f_target, maxiter, max_time)`` as float, float or None, int, float.

    Examples
    --------
    >>> from jitopt.validation import check_limits
    >>> check_limits(1e-6, None, 100, float("inf"))
    (1e-06, None, 100, inf)
    """
    gtol = check_real("gtol", gtol, low=0.0)
    if f_target is not None:
        f_target = check_real("f_target", f_target)
    return gtol, f_target, check_int("maxiter", maxiter, low=0), \
        check_real("max_time", max_time, low=0.0)


def as_c_float(a):
    """``a`` as a C-contiguous float64 array (no copy when it already is one): the one
    layout the Numba kernels are compiled for.

    Parameters
    ----------
    a : array_like
        The array.

    Returns
    -------
    numpy.ndarray
        ``a`` itself when it is already C-contiguous float64, else a converted copy.

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.validation import as_c_float
    >>> x = np.zeros(3)
    >>> as_c_float(x) is x, as_c_float(np.arange(3)).dtype
    (True, dtype('float64'))
    """
    return np.ascontiguousarray(a, dtype=np.float64)


def check_shape(name, x, shape):
    """``x`` itself when it is a real array of shape ``shape``, else a ``ValueError``
    naming ``name`` (a ``TypeError`` for a complex one): the guard of the compiled oracles,
    which would fail with a Numba typing error or, worse, broadcast a wrong shape.

    Parameters
    ----------
    name : str
        The argument's name, for the message.
    x : object
        The point.
    shape : tuple of int
        The shape it must have.

    Returns
    -------
    numpy.ndarray
        ``x``, unchanged.

    Examples
    --------
    >>> import numpy as np
    >>> from jitopt.validation import check_shape
    >>> check_shape("x", np.zeros(2), (2,))
    array([0., 0.])
    >>> check_shape("x", np.zeros(3), (2,))
    Traceback (most recent call last):
    ...
    ValueError: x must have shape (2,), got (3,)
    """
    if getattr(x, "shape", None) != shape:
        raise ValueError(f"{name} must have shape {shape}, got {np.shape(x)}")
    if x.dtype.kind == "c":
        raise TypeError(f"{name} must be real, got a complex array")
    return x
