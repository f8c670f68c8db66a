"""Benchmarks of jitopt against its anchor libraries, run as ``python -m benchmarks <name>``.

Importing this package pins the BLAS, OpenMP and Numba thread pools to one thread, so
both sides of every comparison run single-threaded. The variables must be set before
numpy is first imported; :func:`environment_report` shows what the process really got.
"""

import os
import sys

PINNED = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")
#: Set on some machines to work around wrong results of old OpenBLAS builds; they change
#: the kernel a current OpenBLAS picks, so the report prints them.
OPENBLAS_OVERRIDES = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
ANCHORS = ("pymanopt", "pot", "abess", "scikit-learn")

_LATE = "numpy" in sys.modules  # imported before us: the variables come too late
for _name in PINNED:
    os.environ[_name] = "1"


def environment_report():
    """Print versions, the thread-related variables and threadpoolctl's view of the pools."""
    from importlib.metadata import PackageNotFoundError, version

    import numba
    import numpy
    import scipy
    import scipy.linalg  # loads scipy's own OpenBLAS (the one Numba's linear algebra calls)
    import threadpoolctl

    def pkg_version(name):
        try:
            return version(name)
        except PackageNotFoundError:
            return "not installed"

    print(f"python {sys.version.split()[0]}, numpy {numpy.__version__}, "
          f"scipy {scipy.__version__}, numba {numba.__version__}, "
          f"jitopt {pkg_version('jitopt')}")
    print("anchors: " + ", ".join(f"{a} {pkg_version(a)}" for a in ANCHORS))
    print("pinned: " + ", ".join(f"{v}={os.environ.get(v)}" for v in PINNED))
    print("OpenBLAS overrides: " + ", ".join(
        f"{v}={os.environ.get(v, '(unset)')}" for v in OPENBLAS_OVERRIDES))
    if _LATE:
        print("WARNING: numpy was imported before the benchmarks package; limiting the "
              "pools with threadpoolctl instead")
        threadpoolctl.threadpool_limits(1)
    for pool in threadpoolctl.threadpool_info():
        print(f"threadpool: {pool.get('internal_api')} {pool.get('version')} "
              f"kernel={pool.get('architecture', '-')} num_threads={pool.get('num_threads')} "
              f"({os.path.basename(pool.get('filepath', ''))})")
    print(f"numba: NUMBA_NUM_THREADS={numba.config.NUMBA_NUM_THREADS}, "
          f"NUMBA_CACHE_DIR={os.environ.get('NUMBA_CACHE_DIR', '(default)')}")
