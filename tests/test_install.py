"""With NUMBA_CACHE_DIR set, jitopt caches its kernels there and never writes into the
package directory, which is what a read-only install needs."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import jitopt

SCRIPT = """
import jitopt
p = jitopt.problems.pca(jitopt.problems.spectrum_matrix(30, rng=0), 3)
r = jitopt.solvers.rlbfgs(p, rng=0, gtol=1e-9)  # its two-loop recursion is a kernel
print(r.success, abs(r.fun - p.fopt) / abs(p.fopt))
"""


def test_kernels_cache_in_numba_cache_dir_only(tmp_path):
    site = tmp_path / "site"
    shutil.copytree(Path(jitopt.__file__).parent, site / "jitopt",
                    ignore=shutil.ignore_patterns("__pycache__"))
    cache = tmp_path / "cache"
    env = dict(os.environ, PYTHONPATH=str(site), NUMBA_CACHE_DIR=str(cache),
               PYTHONDONTWRITEBYTECODE="1")
    for run in range(2):  # the second run reads the cache
        out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, cwd=tmp_path,
                             capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, out.stderr
        success, gap = out.stdout.split()
        assert success == "True" and float(gap) < 1e-12
    assert any(cache.rglob("*.nbi")), "no kernel was cached in NUMBA_CACHE_DIR"
    written = [p for p in (site / "jitopt").rglob("*") if p.name == "__pycache__"]
    assert not written, f"the package directory was written: {written}"
    # one cache entry per kernel: the second process reused the first one's
    assert not any(cache.rglob("*.2.nbc"))
