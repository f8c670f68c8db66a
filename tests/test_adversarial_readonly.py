"""jitopt from a read-only install directory, run by an unprivileged user.

Root ignores file permissions, so under root (as in CI) the package copy is run as
``nobody`` through ``setpriv``; as another user, a ``chmod a-w`` copy is read-only already.
Each run imports every subpackage (Numba picks a cache locator for each compiled kernel at
import), solves a small problem, and reports where Numba caches: the directory must be
writable and outside the package, and nothing may be written into the package.

These runs compile kernels from scratch (tens of seconds), so they are skipped unless
``JITOPT_TEST_READONLY=1``; CI sets it.
"""

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import jitopt

pytestmark = pytest.mark.skipif(os.environ.get("JITOPT_TEST_READONLY") != "1",
                                reason="set JITOPT_TEST_READONLY=1 (compiles from scratch)")

SCRIPT = """
import os, sys
import numpy as np
import jitopt
for name in ("manifolds", "sets", "problems", "solvers", "sparse", "transport", "games"):
    getattr(jitopt, name)
x = jitopt.sets.Simplex().project(np.array([0.3, 2.0, -1.0]))
from jitopt.sets._kernels import project
cache = project._cache
path = os.path.abspath(cache._cache_path)
print(jitopt.__file__, repr(x.tolist()).replace(" ", ""), type(cache._impl._locator).__name__,
      path, os.access(path, os.W_OK))
"""


def _unprivileged():
    """The command prefix running a process as an unprivileged user (``[]`` when this
    process is one already); skip when root has no way to drop its privileges."""
    if os.geteuid() != 0:
        return []
    tool = shutil.which("setpriv")
    if tool is None:
        pytest.skip("running as root without setpriv: cannot test a read-only install")
    return [tool, "--reuid=nobody", "--regid=nogroup", "--clear-groups"]


@pytest.fixture
def area():
    """A directory the unprivileged user can reach (pytest's tmp_path is private to root)."""
    path = Path(tempfile.mkdtemp(prefix="jitopt-readonly-"))
    path.chmod(0o755)
    yield path
    for p in [path, *path.rglob("*")]:
        if not p.is_symlink():
            p.chmod(p.stat().st_mode | stat.S_IWUSR)
    shutil.rmtree(path)


def _read_only_copy(tmp_path):
    site = tmp_path / "site"
    shutil.copytree(Path(jitopt.__file__).parent, site / "jitopt",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for p in [site, *site.rglob("*")]:
        mode = p.stat().st_mode
        p.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH) | stat.S_IROTH
                | (stat.S_IXOTH if p.is_dir() else 0))
    return site


def _run(tmp_path, site, **env):
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    work.chmod(0o777)
    environ = {k: v for k, v in os.environ.items()
               if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME", "PYTHONPATH")}
    environ.update(PYTHONPATH=str(site), PYTHONDONTWRITEBYTECODE="1", **env)
    return subprocess.run(_unprivileged() + [sys.executable, "-c", SCRIPT], env=environ,
                          cwd=work, capture_output=True, text=True, timeout=900)


def _check(out, site):
    assert out.returncode == 0, out.stderr[-2000:]
    module, values, locator, path, writable = out.stdout.split()[-5:]
    assert module.startswith(str(site)), module  # the read-only copy, not the source tree
    # the projection of (0.3, 2, -1) onto the simplex is (0, 1, 0)
    assert values == "[0.0,1.0,0.0]"
    assert writable == "True" and not path.startswith(str(site))
    written = [p for p in site.rglob("*") if p.name == "__pycache__" or p.suffix == ".nbi"]
    assert not written, f"the package directory was written: {written}"
    return locator, path


def test_read_only_install_with_a_writable_home(area):
    site = _read_only_copy(area)
    home = area / "home"
    home.mkdir()
    home.chmod(0o777)
    locator, path = _check(_run(area, site, HOME=str(home)), site)
    assert locator == "UserWideCacheLocator" and path.startswith(str(home))


def test_read_only_install_with_numba_cache_dir(area):
    site = _read_only_copy(area)
    cache = area / "cache"
    cache.mkdir()
    cache.chmod(0o777)
    locator, path = _check(_run(area, site, HOME="/nonexistent",
                                NUMBA_CACHE_DIR=str(cache)), site)
    assert locator == "UserProvidedCacheLocator" and path.startswith(str(cache))


def test_read_only_install_without_a_writable_home(area):
    # jitopt then points NUMBA_CACHE_DIR at a private directory in the temporary directory
    site = _read_only_copy(area)
    locator, path = _check(_run(area, site, HOME="/nonexistent"), site)
    assert locator == "UserProvidedCacheLocator" and "jitopt-numba-" in path
