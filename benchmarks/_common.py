"""Functions shared by the benchmarks: timing, JIT warm-up and a fixed-width table."""

import statistics
import sys
import time

__all__ = ["TargetClock", "TargetReached", "timed_runs", "warm_up", "numba_cache_stats",
           "print_table"]


class TargetReached(Exception):
    """Raised by :class:`TargetClock` to abort a solver once the target is met."""


class TargetClock:
    """Time to target for solvers that cannot stop on the benchmark's own criterion.

    Wrap the cost (or any per-iteration quantity): ``clock.check(value)`` records the time
    since :meth:`start` at the first value ``<= target`` and, with ``abort=True``, raises
    :class:`TargetReached` so the caller can stop the solver there.
    """

    def __init__(self, target, abort=True):
        self.target = target
        self.abort = abort
        self.start()

    def start(self):
        self.t0 = time.perf_counter()
        self.elapsed = None
        self.best = float("inf")

    def check(self, value):
        self.best = min(self.best, value)
        if self.elapsed is None and value <= self.target:
            self.elapsed = time.perf_counter() - self.t0
            if self.abort:
                raise TargetReached
        return value


def timed_runs(run, repeats):
    """Call ``run()`` ``repeats`` times; return (median seconds, all seconds, last result).

    ``run`` must set up nothing that should not be timed: build data before.
    """
    times, result = [], None
    for _ in range(max(int(repeats), 1)):
        t0 = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), times, result


def numba_cache_stats(prefix="jitopt"):
    """(compiled, loaded from cache) specialisation counts of the jitted functions of the
    already-imported modules whose name starts with ``prefix``."""
    from numba.core.dispatcher import Dispatcher

    compiled = loaded = 0
    seen = set()
    for name, module in list(sys.modules.items()):
        if not name.startswith(prefix) or module is None:
            continue
        for obj in vars(module).values():
            if isinstance(obj, Dispatcher) and id(obj) not in seen:
                seen.add(id(obj))
                compiled += sum(obj.stats.cache_misses.values())
                loaded += sum(obj.stats.cache_hits.values())
    return compiled, loaded


def warm_up(run, label):
    """Call ``run()`` twice and print the first call's extra time (JIT compilation or
    loading from Numba's cache) apart from the steady time of the second call.

    Returns ``(first, second)`` seconds.
    """
    before = numba_cache_stats()
    t0 = time.perf_counter()
    run()
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    run()
    second = time.perf_counter() - t0
    after = numba_cache_stats()
    compiled, loaded = after[0] - before[0], after[1] - before[1]
    print(f"warm-up {label}: first call {first:.3f} s, second call {second:.3f} s, "
          f"JIT overhead {first - second:.3f} s ({compiled} specialisations compiled, "
          f"{loaded} loaded from the Numba cache)")
    return first, second


def _cell(value, fmt):
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    return format(value, fmt)


def print_table(columns, rows, file=None):
    """Print ``rows`` (sequences of values) under ``columns``, a list of
    ``(header, format)`` pairs; ``None`` prints as ``-`` and strings print as they are.
    Column widths fit the widest cell; numbers are right-aligned."""
    cells = [[_cell(v, fmt) for v, (_, fmt) in zip(row, columns)] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, (h, _) in enumerate(columns)]
    line = "  ".join(h.rjust(w) for (h, _), w in zip(columns, widths))
    print(line, file=file)
    print("-" * len(line), file=file)
    for r in cells:
        print("  ".join(c.rjust(w) for c, w in zip(r, widths)), file=file)
