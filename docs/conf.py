"""Sphinx configuration of the jitopt documentation.

Builds offline (no intersphinx) and reads offline: MathJax is served from the built site,
and no page loads a script or a stylesheet from another host (``docs/check_offline.py``
checks the built HTML). Build with ``sphinx-build -b html docs docs/_build/html``.
"""

import importlib.util
import os
import sys
from pathlib import Path

# The gallery examples are small: one BLAS thread makes them fast on a busy machine and
# their printed iteration counts stable from run to run (set before NumPy is imported).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import matplotlib  # noqa: E402

matplotlib.use("Agg")

DOCS = Path(__file__).resolve().parent
# Document the installed jitopt; fall back to the source checkout when it is not installed.
if importlib.util.find_spec("jitopt") is None:
    sys.path.insert(0, str(DOCS.parent))

project = "jitopt"
author = "The jitopt developers"
copyright = "2026, The jitopt developers"


def _version():
    # Read without importing jitopt: importing it imports Numba, which must see
    # NUMBA_CACHE_DIR first (set in setup() below).
    import re
    from importlib import metadata

    init = DOCS.parent / "jitopt" / "__init__.py"
    if init.exists():
        return re.search(r'__version__ = "([^"]+)"', init.read_text()).group(1)
    return metadata.version("jitopt")


version = release = _version()

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinxcontrib.bibtex",
    "sphinx_gallery.gen_gallery",
]

exclude_patterns = ["_build", "**.ipynb_checkpoints", "auto_examples/*.ipynb",
                    "auto_examples/*.py", "auto_examples/*.zip", "auto_examples/*.md5",
                    "auto_examples/*.codeobj.json"]
templates_path = []
nitpicky = True

# -- autodoc / numpydoc ---------------------------------------------------------------
autodoc_default_options = {"member-order": "bysource"}
autosummary_generate = False
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
# No intersphinx (the CI has no network): references to the standard library, numpy and
# scipy cannot resolve and are not errors.
nitpick_ignore_regex = [
    (r"py:.*", r"(numpy|np|scipy|numba|matplotlib)(\..*)?"),
    (r"py:.*", r"(StopIteration|ValueError|TypeError|RuntimeWarning|callable|dict|"
               r"tuple|list|float|int|bool|str|object|ndarray|array_like|optional)"),
]

# -- bibliography -----------------------------------------------------------------------
# refs.bib holds the shared references; a page may add its own theory/<topic>.bib.
bibtex_bibfiles = sorted(str(p.relative_to(DOCS)) for p in DOCS.glob("**/*.bib")
                         if "_build" not in p.parts)
bibtex_default_style = "plain"
bibtex_reference_style = "author_year"
bibtex_foot_reference_style = "foot"

# -- gallery ------------------------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": "plot_",
    "image_scrapers": ("matplotlib",),
    "reference_url": {},
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
}

# -- math, served from the built site ----------------------------------------------------
# MathJax 3 (Apache-2.0) comes from the sphinx-mathjax-offline package of the docs extra;
# only what the pages load is copied: the TeX-to-HTML script, its fonts and the TeX
# extensions it loads on demand (about 1.5 MB, against 24 MB for the whole tree).
mathjax_path = "mathjax/tex-chtml.js"
MATHJAX_FILES = ("tex-chtml.js", "output/chtml/fonts/woff-v2", "input/tex/extensions")

# -- HTML -------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"jitopt {release}"
html_static_path = []
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
}


def _copy_mathjax(app, exc):
    import importlib
    import shutil

    if exc is not None or app.builder.format != "html":
        return
    package = Path(importlib.import_module("sphinx-mathjax-offline").__file__).parent
    source, target = package / "static" / "mathjax", Path(app.outdir) / "_static" / "mathjax"
    for name in MATHJAX_FILES:
        if (source / name).is_dir():
            shutil.copytree(source / name, target / name, dirs_exist_ok=True)
        else:
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source / name, target / name)
    shutil.copyfile(DOCS / "_mathjax" / "LICENSE", target / "LICENSE")


def _drop_cdn_scripts(app, docname, source):
    # sphinx-gallery's execution-time pages load jQuery and DataTables from CDNs to make
    # their table sortable; without them the table is a plain table.
    if docname.endswith("sg_execution_times"):
        import re

        source[0] = re.sub(r"\n  \.\. raw:: html\n.*?\n(?=  \.\. list-table::)", "\n",
                           source[0], flags=re.DOTALL)


def setup(app):
    app.connect("build-finished", _copy_mathjax)
    app.connect("source-read", _drop_cdn_scripts)
    # Numba writes its compilation cache next to the package by default; from a read-only
    # install it cannot, so the docs build keeps its own cache next to Sphinx's doctrees,
    # under the build directory (an explicit NUMBA_CACHE_DIR wins). Runs before autodoc
    # and the gallery import jitopt.
    if "NUMBA_CACHE_DIR" not in os.environ:
        cache = Path(app.doctreedir) / "numba_cache"
        cache.mkdir(parents=True, exist_ok=True)
        os.environ["NUMBA_CACHE_DIR"] = str(cache)
        if "numba" in sys.modules:
            sys.modules["numba"].config.reload_config()
