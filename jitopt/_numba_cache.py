"""Numba's set-up, made at ``import jitopt`` before Numba is imported (only the standard
library is used here): a writable place for its cache when the usual ones are not, and the
logging of the compilations of jitopt's kernels."""

import importlib.abc
import importlib.util
import logging
import os
import stat
import sys
import tempfile
import time

__all__ = ["ensure_cache_dir", "log_compilations"]

logger = logging.getLogger("jitopt")


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


def _register_listener(event):
    """Log each compilation of a jitopt kernel on the ``jitopt`` logger: its start, and its
    end with the time taken (INFO for a kernel compiled by a call of the user; the kernels
    it compiles on the way are logged at DEBUG)."""

    class CompileLog(event.Listener):
        def __init__(self):
            self.started = []

        def on_start(self, ev):
            name = _kernel_name(ev)
            level = logging.INFO if not self.started else logging.DEBUG
            self.started.append(time.perf_counter())
            if name:
                logger.log(level, "compiling %s (first use with these argument types; "
                           "Numba caches it for later runs)", name)

        def on_end(self, ev):
            elapsed = time.perf_counter() - self.started.pop()
            name = _kernel_name(ev)
            if name:
                logger.log(logging.INFO if not self.started else logging.DEBUG,
                           "compiled %s in %.1f s", name, elapsed)

    event.register("numba:compile", CompileLog())


def _kernel_name(ev):
    func = ev.data["dispatcher"].py_func
    return f"{func.__module__}.{func.__qualname__}" if func.__module__.startswith(
        "jitopt") else None


class _AfterNumbaImport(importlib.abc.MetaPathFinder):
    """Registers the compile log once Numba's event module is imported (by the first
    kernel module), so that ``import jitopt`` need not import Numba."""

    def find_spec(self, name, path=None, target=None):
        if name != "numba.core.event":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        load = spec.loader.exec_module

        def exec_module(module):
            load(module)
            _register_listener(module)

        spec.loader.exec_module = exec_module
        return spec


def log_compilations():
    """Log the compilations of jitopt's kernels on the ``jitopt`` logger (at ``import
    jitopt``): ``logging.basicConfig(level=logging.INFO)`` shows each kernel a call
    compiles, and how long it took."""
    if "numba.core.event" in sys.modules:
        _register_listener(sys.modules["numba.core.event"])
    elif not any(isinstance(f, _AfterNumbaImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterNumbaImport())
