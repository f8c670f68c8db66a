"""Many independent solves mapped over a Dask cluster."""

import math
import traceback

from ..validation import check_int
from ._chunks import get_client

__all__ = ["map_solve", "JobError"]


class JobError:
    """The outcome of a job of :func:`map_solve` that raised: its place in the list, the
    exception and its traceback as text.

    Parameters
    ----------
    index : int
        Position of the job.
    error : BaseException
        The exception the job raised.
    traceback_text : str
        Its traceback, formatted where it was raised.

    Attributes
    ----------
    success : bool
        Always ``False`` (as for a failed :class:`~jitopt.OptimizeResult`).
    message : str
        ``"<type>: <message>"`` of the exception.

    Examples
    --------
    >>> err = JobError(3, ValueError("k must be positive"), "")
    >>> err.success, err.message
    (False, 'ValueError: k must be positive')
    """

    success = False

    def __init__(self, index, error, traceback_text):
        self.index, self.error, self.traceback = index, error, traceback_text

    @property
    def message(self):
        return f"{type(self.error).__name__}: {self.error}"

    def __repr__(self):
        return f"JobError(index={self.index}, {self.message})"


def _run_group(func, start, jobs, options):
    """Worker task: ``func(job, **options)`` for each job of a group, a raised exception
    recorded as a :class:`JobError` in its place."""
    out = []
    for i, job in enumerate(jobs):
        try:
            out.append(func(job, **options))
        except Exception as err:
            out.append(JobError(start + i, err, traceback.format_exc()))
    return out


def map_solve(func, jobs, *, client=None, group_size=None, **options):
    """``[func(job, **options) for job in jobs]`` on a Dask cluster, in order, a failing
    job reported in its place without losing the others.

    The jobs are sent in groups, one task per group (task overhead is paid per group, not
    per job), and each group runs its jobs one after the other on a worker. A task lost
    with its worker is run again by Dask: jobs are functions of their inputs (give each
    its seed through ``options`` or the job itself), so a rerun gives the same result.

    Parameters
    ----------
    func : callable
        ``func(job, **options)``, e.g. :func:`jitopt.minimize`,
        :func:`jitopt.sparse.iht`, :func:`jitopt.transport.wdha_barycenter` or
        :func:`jitopt.solvers.evi`. It must be importable by the workers (a function of
        a module, not of ``__main__``, a lambda or a closure, which Dask would send by
        value and Numba would compile again in each task).
    jobs : sequence
        The first argument of each call (a problem, a stack of densities, ...).
    client : distributed.Client, optional
        Default: the current client.
    group_size : int, optional
        Jobs per task; default: about four tasks per worker thread.
    **options
        Keyword arguments of every call.

    Returns
    -------
    list
        One entry per job, in order: ``func``'s return value, or a :class:`JobError` if
        it raised. Solvers of jitopt report failures after the start as results with
        ``success=False`` already; a :class:`JobError` is an exception before the start
        (bad input) or from a function that raises.

    Examples
    --------
    Three least-squares fits, the second given a job that is not a problem:

    >>> import numpy as np, jitopt
    >>> from distributed import Client, LocalCluster
    >>> from jitopt.distributed import map_solve
    >>> client = Client(LocalCluster(n_workers=1, processes=False, dashboard_address=None))
    >>> problems = [jitopt.problems.least_squares(*jitopt.problems.sparse_regression_data(
    ...     100, 20, 3, rng=s)[:2]) for s in range(2)]
    >>> out = map_solve(jitopt.sparse.iht, [problems[0], "data", problems[1]], k=3)
    >>> out[0].success, out[1], out[2].success  # doctest: +ELLIPSIS
    (True, JobError(index=1, TypeError: ...), True)
    >>> client.close(); client.cluster.close()
    """
    client = get_client(client)
    jobs = list(jobs)
    if not callable(func):
        raise TypeError(f"func must be callable, got {type(func).__name__}")
    if not jobs:
        return []
    if group_size is None:
        threads = sum(client.nthreads().values()) or 1
        group_size = max(1, math.ceil(len(jobs) / (4 * threads)))
    else:
        group_size = check_int("group_size", group_size, 1)
    tasks = [client.submit(_run_group, func, s, jobs[s:s + group_size], options, pure=False)
             for s in range(0, len(jobs), group_size)]
    out = []
    for start, task in zip(range(0, len(jobs), group_size), tasks):
        try:
            out.extend(task.result())
        except Exception as err:  # the task itself failed (e.g. lost for good)
            out.extend(JobError(start + i, err, traceback.format_exc())
                       for i in range(len(jobs[start:start + group_size])))
    return out
