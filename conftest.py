"""Doctest collection: the examples of optional extras run only when the extra is installed."""

import importlib.util

collect_ignore_glob = [] if importlib.util.find_spec("distributed") else [
    "jitopt/distributed/*.py"]
