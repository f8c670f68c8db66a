"""A tour of jitopt: every method on a small built-in problem with a known answer.

Run ``python -m jitopt`` (``--help`` for options). Each row gives the method, the problem,
whether it succeeded, the error to the known answer and the time (the first run of a
method includes Numba compilation, which later runs read from the cache).
``python -m jitopt --compile [METHOD ...]`` compiles the kernels of the methods named (all
by default) into Numba's cache and prints nothing else: for a Docker image, a CI job or a
cluster's workers.
"""

import argparse
import functools
import time


def run(entries=None, stream=functools.partial(print, flush=True)):
    """Run the tour entries (all of :data:`jitopt.tour.TOUR` by default) and print one row
    each; return the rows."""
    from .tour import TOUR

    header = f"{'method':<14} {'problem':<38} {'result':<28} {'error':>22} {'time (s)':>9}"
    stream(header)
    stream("-" * len(header))
    rows = []
    for entry in TOUR if entries is None else entries:
        start = time.perf_counter()
        method, problem, summary, error, what = entry()
        elapsed = time.perf_counter() - start
        rows.append((method, problem, summary, error, what, elapsed))
        stream(f"{method:<14} {problem:<38} {summary:<28} {what + ' ' + format(error, '.1e'):>22} "
               f"{elapsed:9.2f}")
    return rows


def compile_kernels(methods=()):
    """Compile the kernels of ``methods`` (names of :func:`jitopt.available_methods`; all
    by default) into Numba's cache by running their tour entries; return the seconds it
    took. Kernels that a problem of another kind needs compile on its first use: to
    prepare an image for a given workload, run that workload once as well."""
    from ._interpreted import always_compiled
    from .tour import ENTRY_OF

    names = [name.lower() for name in methods] or list(ENTRY_OF)
    unknown = [name for name in names if name not in ENTRY_OF]
    if unknown:
        raise ValueError(f"unknown methods {', '.join(unknown)}; available methods: "
                         f"{', '.join(ENTRY_OF)}")
    entries = list(dict.fromkeys(ENTRY_OF[name] for name in names))
    start = time.perf_counter()
    with always_compiled():
        for entry in entries:
            entry()
        if "iht" in names:
            _exchange_search()
    return time.perf_counter() - start


def _exchange_search():
    """Compile the kernels of iht's exchange search without bounds (the tour's problem has
    bounds) and with them."""
    import numpy as np

    from . import problems
    from .sparse import exchange_search

    X, y, _ = problems.sparse_regression_data(100, 1000, 20, rng=0)
    inf = np.full(1000, np.inf)
    for lower in (-inf, np.zeros(1000)):
        exchange_search(problems.least_squares(X, y), np.zeros(1000), 20, lower, inf)


def cache_location():
    """Where Numba keeps jitopt's compiled kernels."""
    import numba

    return numba.config.CACHE_DIR or "next to jitopt's sources (__pycache__)"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m jitopt", description=__doc__.splitlines()[0])
    parser.add_argument("--compile", nargs="*", metavar="METHOD",
                        help="compile the kernels of the methods named (all by default) into "
                             "Numba's cache, then exit")
    args = parser.parse_args(argv)
    import jitopt

    if args.compile is not None:
        try:
            seconds = compile_kernels(args.compile)
        except ValueError as err:
            parser.error(str(err))
        print(f"compiled the kernels of {', '.join(args.compile) or 'every method'} in "
              f"{seconds:.1f} s into {cache_location()}")
        return
    print(f"jitopt {jitopt.__version__}: methods {', '.join(jitopt.available_methods())}\n")
    print(f"The first run compiles the Numba kernels; later runs read them from the cache "
          f"({cache_location()}).\n", flush=True)
    run()


if __name__ == "__main__":
    main()
