"""A tour of jitopt: every method on a small built-in problem with a known answer.

Run ``python -m jitopt`` (``--help`` for options). Each row gives the method, the problem,
whether it succeeded, the error to the known answer and the time (the first run of a
method includes Numba compilation, which later runs read from the cache).
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


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m jitopt", description=__doc__.splitlines()[0])
    parser.parse_args(argv)
    import jitopt

    print(f"jitopt {jitopt.__version__}: methods {', '.join(jitopt.available_methods())}\n")
    print("The first run compiles the Numba kernels (about a minute); later runs read them "
          "from the cache.\n", flush=True)
    run()


if __name__ == "__main__":
    main()
