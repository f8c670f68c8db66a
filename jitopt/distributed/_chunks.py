"""Sample-chunked data held on a Dask cluster: one future per chunk, map-reduce over the
chunks, rows gathered by index, and the error that names a lost chunk."""

import numpy as np

from .._core.result import OracleError
from . import _kernels as K

__all__ = ["ChunkStore", "ChunkLost", "get_client"]

_FAN_IN = 8  # partial results summed per reduction task (a tree of depth log_8(chunks))


class ChunkLost(OracleError):
    """Raised when the data of a chunk are lost (its worker died and the chunk cannot be
    recomputed, or a task on it failed); a solver run turns it into a failed result
    (``Status.ORACLE_ERROR``) whose message names the chunk and its rows.

    Examples
    --------
    >>> import jitopt
    >>> from jitopt.distributed import ChunkLost
    >>> issubclass(ChunkLost, jitopt.OracleError), ChunkLost.status.name
    (True, 'ORACLE_ERROR')
    """


def require_dask():
    """Import ``dask.array`` and ``distributed``, or say which extra installs them."""
    try:
        import dask.array  # noqa: F401
        import distributed  # noqa: F401
    except ImportError as err:
        raise ImportError("jitopt.distributed needs dask[array] and distributed: "
                          "pip install 'jitopt[dask]'") from err


def get_client(client):
    """``client``, or the current default Dask client (a clear error if there is none)."""
    require_dask()
    if client is not None:
        return client
    from distributed import default_client

    try:
        return default_client()
    except ValueError:
        raise ValueError("no Dask client: pass client=..., or create one first, e.g. "
                         "distributed.Client(distributed.LocalCluster())") from None


def _sample_arrays(arrays):
    """The Dask arrays with one chunk along every axis but the first, and their common
    chunks along the samples."""
    import dask.array as da

    out = []
    for name, a in arrays.items():
        if not isinstance(a, da.Array):
            raise TypeError(f"{name} must be a dask.array.Array chunked along its first axis "
                            f"(the samples), got {type(a).__name__}")
        if a.ndim < 1 or a.shape[0] < 1 or any(s < 1 for s in a.shape):
            raise ValueError(f"{name} must have at least one sample, got shape {a.shape}")
        if a.dtype.kind not in "biuf":
            raise TypeError(f"{name} must hold real numbers, got dtype {a.dtype}")
        if any(len(c) > 1 for c in a.chunks[1:]):
            a = a.rechunk({i: -1 for i in range(1, a.ndim)})
        out.append((name, a))
    first_name, first = out[0]
    for name, a in out[1:]:
        if a.shape[0] != first.shape[0]:
            raise ValueError(f"{name} has {a.shape[0]} samples, {first_name} has "
                             f"{first.shape[0]}")
        if a.chunks[0] != first.chunks[0]:
            a = a.rechunk({0: first.chunks[0]})
            out = [(n, a if n == name else b) for n, b in out]
    return [a for _, a in out], first.chunks[0]


class ChunkStore:
    """The samples of ``arrays`` (dict name -> Dask array, equal first axes), persisted on
    the cluster as one future per chunk holding ``kind.prepare`` of the chunk's blocks.

    The futures keep their lineage: a chunk lost with its worker is recomputed from the
    graph that produced it (the input arrays' own graph, e.g. a random generator or a file
    reader). Data with no lineage (``client.scatter``) cannot be recomputed; an oracle that
    needs such a lost chunk raises :class:`ChunkLost`.

    Parameters
    ----------
    client : distributed.Client or None
        The client (default: the current one).
    arrays : dict of str to dask.array.Array
        The inputs, with equal first axes; their chunks along it become the chunks of the
        store (the other axes are made one chunk).
    kind : jitopt.distributed.Kind
        Its ``prepare`` makes each chunk's data tuple from the chunk's blocks.

    Examples
    --------
    >>> import numpy as np, dask.array as da
    >>> from distributed import Client, LocalCluster
    >>> from jitopt.distributed import KINDS, ChunkStore
    >>> client = Client(LocalCluster(n_workers=1, processes=False, dashboard_address=None))
    >>> X = np.arange(12.0).reshape(6, 2)
    >>> store = ChunkStore(client, {"X": da.from_array(X, chunks=2),
    ...                             "y": da.ones(6, chunks=3)}, KINDS["least_squares"])
    >>> store.n_chunks, store.take(np.array([1, 4]))[0]
    (3, array([[2., 3.],
           [8., 9.]]))
    >>> client.close(); client.cluster.close()
    """

    def __init__(self, client, arrays, kind):
        self.client = get_client(client)
        import dask

        self.kind = kind
        self.names = tuple(arrays)
        dask_arrays, chunks = _sample_arrays(arrays)
        self.n_samples = int(sum(chunks))
        self.stops = np.cumsum(chunks).astype(np.int64)
        self.starts = self.stops - np.asarray(chunks, dtype=np.int64)
        blocks = [a.to_delayed().reshape(len(chunks), -1)[:, 0] for a in dask_arrays]
        prepare = dask.delayed(K.prepare_chunk, pure=True)
        self.futures = self.client.compute(
            [prepare(kind.prepare, int(start), *parts)
             for start, parts in zip(self.starts, zip(*blocks))])
        self._groups = None
        self.row_bytes = sum(a.dtype.itemsize * int(np.prod(a.shape[1:]))
                             for a in dask_arrays)

    @property
    def n_chunks(self):
        return len(self.futures)

    def __repr__(self):
        return (f"ChunkStore({', '.join(self.names)}: {self.n_samples} samples in "
                f"{self.n_chunks} chunks)")

    # -- evaluation -------------------------------------------------------------------

    def _reduce(self, parts):
        """Sum futures of partial results by a tree of reduction tasks; gather the root."""
        submit = self.client.submit
        while len(parts) > 1:
            parts = [submit(K.add, *parts[i:i + _FAN_IN]) if len(parts[i:i + _FAN_IN]) > 1
                     else parts[i] for i in range(0, len(parts), _FAN_IN)]
        return self.gather(parts[0])

    def groups(self):
        """``[(worker, chunks)]``: the chunks split into one group per thread of the worker
        that holds them. A pass submits one task per group rather than one per chunk (the
        scheduler's cost is per task). Made at first use and again after a failure; a
        group whose chunks have moved still gives the right sums (Dask moves the data)."""
        if self._groups is None:
            from distributed import wait

            wait(self.futures)  # placed: a pending chunk has no worker yet
            who = self.client.who_has(self.futures)
            threads = self.client.nthreads()
            by_worker = {}
            for c, f in enumerate(self.futures):
                holders = who.get(f.key) or (None,)
                by_worker.setdefault(holders[0], []).append(c)
            self._groups = [
                (w, [int(c) for c in part]) for w, chunks in by_worker.items()
                for part in np.array_split(chunks, min(len(chunks), threads.get(w, 1)))]
        return self._groups

    def _map(self, func, extras, *args):
        """Futures of the sums, per group, of ``func(chunk_data, *extras[c], *args)`` over
        the chunks ``c`` in ``extras`` (a dict chunk -> tuple)."""
        parts = []
        for worker, chunks in self.groups():
            chunks = [c for c in chunks if c in extras]
            if chunks:
                where = {} if worker is None else {"workers": [worker],
                                                   "allow_other_workers": True}
                parts.append(self.client.submit(
                    K.group_sums, func, [self.futures[c] for c in chunks],
                    [extras[c] for c in chunks], *args, **where))
        return parts

    def map_sum(self, func, *args):
        """The sum over chunks of ``func(chunk_data, *args)``."""
        return self._reduce(self._map(func, {c: () for c in range(self.n_chunks)}, *args))

    def split(self, idx):
        """``[(chunk, local indices)]`` of the chunks holding the rows ``idx`` (in order
        of the chunks; repeats kept)."""
        idx = np.asarray(idx, dtype=np.int64)
        if idx.size and (idx.min() < 0 or idx.max() >= self.n_samples):
            raise ValueError(f"sample indices must lie in [0, {self.n_samples}), got "
                             f"{idx.min()} to {idx.max()}")
        order = np.argsort(idx, kind="stable")
        sorted_idx = idx[order]
        cut = np.searchsorted(sorted_idx, self.stops)
        out, lo = [], 0
        for c, hi in enumerate(cut):
            if hi > lo:
                out.append((c, sorted_idx[lo:hi] - self.starts[c]))
            lo = hi
        return out

    def rows_sum(self, x, idx, par):
        """``(sum of costs, sum of gradients)`` over the rows ``idx``, computed on the
        workers that hold them (only the partial sums travel)."""
        local = {c: (rows,) for c, rows in self.split(idx)}
        return self._reduce(self._map(K.rows_sums, local, self.kind, x, par))

    def take(self, rows):
        """The data tuple of the sorted distinct rows ``rows``, gathered to the client.

        Each chunk's piece is copied into place as it arrives, so that the client holds the
        result and one piece at a time, not all pieces and their concatenation."""
        from distributed import as_completed

        split = self.split(rows)
        parts = [self.client.submit(K.take, self.futures[c], local, pure=False)
                 for c, local in split]
        offsets = dict(zip([f.key for f in parts],
                           np.cumsum([0] + [local.shape[0] for _, local in split])))
        out = None
        try:
            for future, piece in as_completed(parts, with_results=True):
                if out is None:
                    out = tuple(np.empty((rows.shape[0],) + a.shape[1:], a.dtype)
                                for a in piece)
                start = offsets[future.key]
                for dst, a in zip(out, piece):
                    dst[start:start + a.shape[0]] = a
        except ValueError as err:
            raise ValueError(f"{self!r}: {err}") from err
        except Exception as err:
            self._groups = None
            raise ChunkLost(self._failure(err)) from err
        return out

    def gather(self, futures):
        """``client.gather(futures)``, with a failure turned into :class:`ChunkLost`."""
        try:
            return self.client.gather(futures)
        except ValueError as err:  # invalid data or arguments, not a lost chunk
            raise ValueError(f"{self!r}: {err}") from err
        except Exception as err:
            self._groups = None
            raise ChunkLost(self._failure(err)) from err

    def _failure(self, err):
        lost = [c for c, f in enumerate(self.futures) if f.status in ("lost", "error",
                                                                      "cancelled")]
        what = ", ".join(f"chunk {c} (rows {self.starts[c]}-{self.stops[c] - 1})"
                         for c in lost[:5]) + (" and more" if len(lost) > 5 else "")
        if lost:
            return (f"the data of {what} of {self!r} are lost and cannot be recomputed "
                    f"({type(err).__name__}: {err})")
        return f"a task on the chunks of {self!r} failed ({type(err).__name__}: {err})"
