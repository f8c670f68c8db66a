r"""A finite-sum problem whose samples live on a Dask cluster."""

import concurrent.futures
import threading

import numpy as np

from .._core.problem import FiniteSumProblem
from ..validation import check_int
from . import _kernels as K
from ._chunks import ChunkStore

__all__ = ["DaskFiniteSumProblem"]

_MIB = 2 ** 20


class _Window:
    """The rows of the planned batches of a range of steps: their sorted distinct global
    indices ``keys``, and their data once gathered (``pending`` until then)."""

    def __init__(self, keys, pending):
        self.keys, self.pending, self.data = keys, pending, None

    def positions(self, idx):
        """Positions of ``idx`` in ``keys``, or ``None`` if some index is not there."""
        keys = self.keys
        pos = np.searchsorted(keys, idx)
        if pos.size and (pos.max() >= keys.size or np.any(keys[pos] != idx)):
            return None
        return pos

    def ready(self):
        """The gathered data (waiting for them the first time)."""
        if self.data is None:
            self.data = self.pending.result()
            self.pending = None
        return self.data

    @property
    def nbytes(self):
        return sum(a.nbytes for a in self.ready())


class DaskFiniteSumProblem(FiniteSumProblem):
    r"""A :class:`~jitopt.FiniteSumProblem` whose samples are Dask arrays chunked along the
    samples, held on the workers of a Dask cluster.

    To every solver it is a finite-sum problem like any other: same oracles, same oracle
    counts, and for the same seed the same iterates as the in-memory problem on the same
    data (to rounding: a full pass sums the chunks in another order). Where the work runs:

    - **full cost and gradient** (``idx`` omitted, or all samples): each chunk's sums on
      the worker that holds it, one task per worker thread, reduced by a tree of tasks;
      only the sums travel. Cost and gradient at one point come from one pass (the last
      pass is kept).
    - **planned minibatches**: a solver that knows its batches in advance (the SERENA
      methods: the batches of an epoch follow from the seed) announces them with
      :meth:`prefetch`; their rows are gathered to the client in windows of consecutive
      steps, one round trip per window, the next window in the background while the
      current one is used, and the minibatch gradients are computed on the client with
      the in-memory kernels (the same numbers to the last bit). At most two windows are
      on the client, each at most a quarter of ``client_memory`` (a window takes up to
      twice its size while its pieces arrive).
    - **other minibatches** (drawn step by step, e.g. by the stochastic IHT): on the
      workers that hold the rows, one round trip per call.

    Parameters
    ----------
    manifold : jitopt.manifolds.Manifold
        The domain.
    kind : jitopt.distributed.Kind
        The block oracles (importable module-level functions, see
        :mod:`jitopt.distributed`).
    arrays : dict of str to dask.array.Array
        The samples: Dask arrays with equal first axes (the samples), chunked along it
        (other axes are made one chunk).
    par : object
        Parameters passed to the block oracles.
    client : distributed.Client, optional
        Default: the current Dask client.
    client_memory : int
        Bytes of gathered rows the client may hold (see above), default 256 MiB.
    fopt, xopt : optional
        Known optimal value and minimizer.

    Attributes
    ----------
    store : jitopt.distributed.ChunkStore
        The persisted chunks (one future each).
    gathers : int
        Round trips made to gather rows to the client.
    max_window_bytes : int
        The largest window of gathered rows so far, in bytes (at most a quarter of
        ``client_memory``).

    Notes
    -----
    A lost worker's chunks are recomputed by Dask from the arrays' graph; if that is not
    possible (data scattered with no graph), the oracle raises
    :class:`~jitopt.distributed.ChunkLost` and the solver ends with ``success=False`` and a
    message naming the chunk and its rows. One run at a time per problem object: the
    prefetch plan is kept per thread, so concurrent runs from threads do not mix plans.

    Examples
    --------
    >>> import numpy as np, dask.array as da, jitopt
    >>> from distributed import Client, LocalCluster
    >>> from jitopt import distributed as jd
    >>> cluster = LocalCluster(n_workers=1, processes=False, dashboard_address=None)
    >>> client = Client(cluster)
    >>> Z = jitopt.problems.spiked_samples(400, 8, rng=0)
    >>> problem = jd.finite_sum_pca(da.from_array(Z, chunks=100), 2, client=client)
    >>> memory = jitopt.problems.finite_sum_pca(Z, 2)
    >>> bool(np.allclose(problem.egrad(memory.xopt), memory.egrad(memory.xopt)))
    True
    >>> client.close(); cluster.close()
    """

    def __init__(self, manifold, kind, arrays, par=None, *, client=None,
                 client_memory=256 * _MIB, fopt=None, xopt=None):
        if not isinstance(kind, K.Kind):
            raise TypeError(f"kind must be a jitopt.distributed.Kind, got "
                            f"{type(kind).__name__}")
        self.client_memory = check_int("client_memory", client_memory, 1)
        self.store = ChunkStore(client, arrays, kind)
        self.kind, self.par = kind, par
        self.gathers = self.max_window_bytes = 0
        self._local = threading.local()
        self._executor = concurrent.futures.ThreadPoolExecutor(1)
        super().__init__(manifold, self._cost_idx, self._egrad_idx, self.store.n_samples,
                         fopt=fopt, xopt=xopt)

    def __repr__(self):
        return f"{type(self).__name__}({self.manifold!r}, {self.store!r})"

    # -- the two callables of FiniteSumProblem -----------------------------------------

    def _is_full(self, idx):
        return idx is self.all_samples or (
            idx.shape[0] == self.n_samples and np.array_equal(idx, self.all_samples))

    def _full(self, x):
        last = getattr(self._local, "last", None)
        if last is not None and last[0].shape == x.shape and np.array_equal(last[0], x):
            return last[1]
        f, g = self.store.map_sum(K.chunk_sums, self.kind, np.array(x), self.par)
        value = (f / self.n_samples, g / self.n_samples)
        self._local.last = (np.array(x), value)
        return value

    def _cost_idx(self, x, idx):
        if self._is_full(idx):
            return float(self._full(x)[0])
        window, pos = self._find(idx)
        if window is not None:
            return self.kind.cost(x, window.ready(), pos, self.par)
        return float(self.store.rows_sum(x, idx, self.par)[0]) / idx.shape[0]

    def _egrad_idx(self, x, idx):
        if self._is_full(idx):
            return self._full(x)[1]
        window, pos = self._find(idx)
        if window is not None:
            return self.kind.egrad(x, window.ready(), pos, self.par)
        return self.store.rows_sum(x, idx, self.par)[1] / idx.shape[0]

    # -- planned minibatches --------------------------------------------------------------

    def prefetch(self, *batches):
        """Plan the batches of the next steps (see
        :meth:`jitopt.FiniteSumProblem.prefetch`): their rows are gathered in windows of
        consecutive steps within ``client_memory``, the first now, each next one in the
        background when the previous is reached."""
        batches = [np.asarray(b, dtype=np.int64) for b in batches if np.size(b)]
        state = self._local
        state.windows, state.current, state.next = [], None, None
        if not batches:
            return
        steps = batches[0].shape[0]
        per_step = sum(b.shape[1] for b in batches) * self.store.row_bytes
        # two windows (the current one and the next, gathered in the background), each
        # needing up to twice its size while its pieces arrive and are copied in place
        window_steps = self.client_memory // (4 * per_step)
        if window_steps < 1:
            return  # a step's rows alone exceed the budget: the workers compute them
        for s in range(0, steps, window_steps):
            keys = np.unique(np.concatenate([b[s:s + window_steps].ravel() for b in batches]))
            state.windows.append(keys)
        state.next = self._gather(state.windows.pop(0))

    def _gather(self, keys):
        self.gathers += 1
        return _Window(keys, self._executor.submit(self.store.take, keys))

    def _find(self, idx):
        """``(window, positions)`` of a planned batch, else ``(None, None)``."""
        state = self._local
        current = getattr(state, "current", None)
        if current is not None:
            pos = current.positions(idx)
            if pos is not None:
                return current, pos
        upcoming = getattr(state, "next", None)
        if upcoming is not None:
            pos = upcoming.positions(idx)
            if pos is not None:  # the next window starts: prefetch the one after
                state.current = upcoming
                self.max_window_bytes = max(self.max_window_bytes, upcoming.nbytes)
                state.next = self._gather(state.windows.pop(0)) if state.windows else None
                return upcoming, pos
        return None, None
