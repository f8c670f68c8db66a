"""A writable place for Numba's cache when the usual ones are not (run at ``import jitopt``,
before Numba is imported; only the standard library is used)."""

import os
import stat
import sys
import tempfile

__all__ = ["ensure_cache_dir"]


def _writable_parent(path):
    """Whether the nearest existing ancestor of ``path`` (itself included) is writable."""
    while path and not os.path.exists(path):
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return bool(path) and os.access(path, os.W_OK)


def ensure_cache_dir():
    """Set ``NUMBA_CACHE_DIR`` to a private directory in the temporary directory when
    Numba would find no writable cache: a read-only install (its ``__pycache__`` cannot be
    written) run by a user whose ``~/.cache`` cannot be created either. Numba would then
    refuse to load the kernels ("no locator available"). Returns the directory set, or
    ``None`` when nothing was needed (``NUMBA_CACHE_DIR`` already set, or a usual place
    writable)."""
    if os.environ.get("NUMBA_CACHE_DIR") or os.access(os.path.dirname(__file__), os.W_OK):
        return None
    user_cache = os.path.join(os.environ.get("XDG_CACHE_HOME")
                              or os.path.expanduser("~/.cache"), "numba")
    if _writable_parent(user_cache):
        return None
    path = os.path.join(tempfile.gettempdir(), f"jitopt-numba-{os.getuid()}")
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    info = os.lstat(path)
    # the cache holds pickles: use only a directory of this user that no one else can write
    if not (stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid()
            and not info.st_mode & 0o022):
        path = tempfile.mkdtemp(prefix="jitopt-numba-")
    os.environ["NUMBA_CACHE_DIR"] = path
    if "numba" in sys.modules:  # Numba read the variable when it was imported
        sys.modules["numba"].config.CACHE_DIR = path
    return path
