"""Streams of samples whose law may change with the iteration (online stochastic problems)."""

import threading

import numpy as np

from .._core.problem import BaseProblem
from .._core.result import OracleError

__all__ = ["StreamProblem"]


def _as_batch(name, data, size):
    """A sampler's output as a tuple of finite float arrays with ``size`` rows each."""
    arrays = data if isinstance(data, tuple) else (data,)
    out = []
    for a in arrays:
        if np.iscomplexobj(a):
            raise OracleError(f"The oracle {name} must return arrays of real numbers, got "
                              f"complex data")
        try:
            a = np.ascontiguousarray(a, dtype=float)
        except (TypeError, ValueError) as err:
            raise OracleError(f"The oracle {name} must return arrays of real numbers") from err
        if a.ndim == 0 or a.shape[0] != size:
            raise OracleError(f"The oracle {name} returned a batch of the wrong size") from \
                ValueError(f"{name} must return arrays with {size} rows (the requested size), "
                           f"got shape {a.shape}")
        out.append(BaseProblem.check_finite(name, a))
    return tuple(out)


def _rows(batch, n):
    return tuple(a[:n] for a in batch)


class StreamProblem:
    r"""A stream of samples whose law may change with the iteration :math:`t`.

    Parameters
    ----------
    sample : callable
        ``sample(t, size, rng)`` returns the ``size`` samples of the convex part drawn at
        iteration ``t`` (``t = 1, 2, ...``) with the :class:`numpy.random.Generator` ``rng``:
        one array or a tuple of arrays, each with ``size`` rows. For the built-in losses of
        :class:`~jitopt.problems.DCProblem` it returns ``(A, b)``, ``A`` of shape
        ``(size, d)`` and ``b`` of shape ``(size,)``.
    sample_h : callable, optional
        The same for the concave part :math:`H(x, \zeta)`, an independent stream. Leave it
        out when :math:`h` is deterministic.
    shared : bool
        Use one stream for both parts (Remark 2 of Ye, Cui and Wang 2025): iteration ``t``
        draws :math:`\max(N_g, N_h)` samples from ``sample`` and gives the first
        :math:`N_g` to :math:`g` and the first :math:`N_h` to :math:`h`.

    Attributes
    ----------
    samples_g, samples_h : int
        Samples drawn so far from each stream (a shared stream counts into ``samples_g``),
        by every thread; :meth:`own` gives the calling thread's.

    Examples
    --------
    Rows of a fixed data set drawn at random, with their responses:

    >>> import numpy as np
    >>> from jitopt.problems import StreamProblem
    >>> data = np.arange(12.0).reshape(6, 2)
    >>> stream = StreamProblem(lambda t, size, rng: (data[rng.integers(0, 6, size)],
    ...                                              np.zeros(size)))
    >>> stream.samples_g
    0

    Notes
    -----
    The samplers are user oracles: an exception they raise is re-raised as
    :class:`~jitopt._core.result.OracleError`, a batch of the wrong size as well, and a NaN
    or inf in a batch as :class:`~jitopt._core.result.NonFiniteOracle`; a solver run
    reports them as a failed result (``Status.ORACLE_ERROR``, ``Status.NONFINITE``).
    """

    def __init__(self, sample, sample_h=None, shared=False):
        if not callable(sample):
            raise TypeError(f"sample must be callable, got {type(sample).__name__}")
        if sample_h is not None and not callable(sample_h):
            raise TypeError(f"sample_h must be callable or None, got {type(sample_h).__name__}")
        if shared and sample_h is not None:
            raise ValueError("a shared stream takes no separate sample_h")
        self.sample = sample
        self.sample_h = sample_h
        self.shared = bool(shared)
        self._own = {}  # thread id -> [samples_g, samples_h] drawn by that thread
        self.reset()

    @property
    def has_h(self):
        """Whether the concave part has samples (its own stream or the shared one)."""
        return self.shared or self.sample_h is not None

    def reset(self):
        """Set the sample counters to zero."""
        self.samples_g = 0
        self.samples_h = 0

    def own(self):
        """``(samples_g, samples_h)`` drawn by the calling thread since the stream was made
        (:meth:`reset` leaves them): a solver run reports their change, so concurrent runs
        on one stream (threads) each report their own samples.

        Returns
        -------
        tuple of int
        """
        return tuple(self._own.get(threading.get_ident(), (0, 0)))

    def draw(self, t, size, rng, part="g"):
        """Draw ``size`` samples of ``part`` (``"g"`` or ``"h"``) at iteration ``t``, counted."""
        own_h = part == "h" and self.sample_h is not None
        name, fn = ("sample_h", self.sample_h) if own_h else ("sample", self.sample)
        batch = _as_batch(name, BaseProblem.call_oracle(name, fn, t, size, rng), size)
        mine = self._own.setdefault(threading.get_ident(), [0, 0])
        if own_h:
            self.samples_h += size
            mine[1] += size
        else:
            self.samples_g += size
            mine[0] += size
        return batch

    def draw_pair(self, t, n_g, n_h, rng):
        """Fresh batches for ``g`` and ``h`` (``None`` for ``h`` when ``n_h == 0``)."""
        if self.shared:
            batch = self.draw(t, max(n_g, n_h), rng)
            return _rows(batch, n_g), (_rows(batch, n_h) if n_h else None)
        bg = self.draw(t, n_g, rng)
        bh = self.draw(t, n_h, rng, part="h") if n_h and self.sample_h is not None else None
        return bg, bh

    def __repr__(self):
        parts = "shared" if self.shared else ("g, h" if self.sample_h is not None else "g")
        return f"StreamProblem({parts})"
