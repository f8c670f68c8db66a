"""Test-suite settings: one BLAS thread (the suite's matrices are small, and on a 2-core
machine threaded BLAS calls on them only add synchronisation)."""

from threadpoolctl import threadpool_limits

threadpool_limits(limits=1, user_api="blas")
