"""LAPACK's ``dgesv`` for compiled kernels, from SciPy's Cython LAPACK by symbol name (so
that the kernels that call it stay cacheable).

A kernel that calls :func:`solve` compiles in a fraction of a second; one that calls Numba's
``np.linalg.solve`` also compiles its copies and their broadcast checks with NumPy's error
messages, seconds of a first run."""

import ctypes

import llvmlite.binding as ll
import numpy as np
from numba import config, njit, types
from numba.extending import get_cython_function_address

_DGESV = get_cython_function_address("scipy.linalg.cython_lapack", "dgesv")
#: the same function for kernels run as plain Python, through ctypes
dgesv_ctypes = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * 8)(_DGESV)
if config.DISABLE_JIT:
    dgesv = dgesv_ctypes
else:
    ll.add_symbol("jitopt_dgesv", _DGESV)
    #: ``dgesv(n, nrhs, a, lda, ipiv, b, ldb, info)``, every argument a pointer (``.ctypes``):
    #: int32 scalars and pivots, float64 column-major ``a`` and ``b`` (``b`` <- the solution)
    dgesv = types.ExternalFunction("jitopt_dgesv", types.void(*([types.voidptr] * 8)))


@njit(cache=True)
def solve(a, b):
    """``x`` with ``a x = b`` for a square ``a`` of shape ``(n, n)`` and ``b`` of shape
    ``(n, m)`` (both left unchanged), by LU with partial pivoting. Raises
    ``np.linalg.LinAlgError`` when a pivot is exactly zero, as ``np.linalg.solve`` does."""
    n, m = b.shape
    # LAPACK reads arrays by columns, so the C-ordered transposes are passed
    lu = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            lu[j, i] = a[i, j]
    xt = np.empty((m, n))
    for i in range(n):
        for j in range(m):
            xt[j, i] = b[i, j]
    iw = np.empty(n + 5, dtype=np.int32)  # n, nrhs, lda, ldb, info, then the pivots
    iw[0], iw[1], iw[2], iw[3] = n, m, max(n, 1), max(n, 1)
    dgesv(iw[0:].ctypes, iw[1:].ctypes, lu.ctypes, iw[2:].ctypes, iw[5:].ctypes, xt.ctypes,
          iw[3:].ctypes, iw[4:].ctypes)
    if iw[4] > 0:
        raise np.linalg.LinAlgError("Matrix is singular to machine precision.")
    x = np.empty((n, m))
    for i in range(n):
        for j in range(m):
            x[i, j] = xt[j, i]
    return x
