"""docs/check_offline.py, the check that the built documentation reads offline, on small
hand-made sites (the real build runs it in CI) and on a minimal Sphinx build with the
documentation's MathJax setup when Sphinx and the docs extra are installed."""

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"
spec = importlib.util.spec_from_file_location("check_offline", DOCS / "check_offline.py")
check_offline = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check_offline)

MATH = '<span class="math notranslate nohighlight">\\(x\\)</span>'


def site(tmp_path, pages, mathjax=True, css=""):
    for name, body in pages.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"<html><head>{body}</head><body></body></html>")
    static = tmp_path / "_static"
    static.mkdir(exist_ok=True)
    (static / "theme.css").write_text(css)
    if mathjax:
        (static / "mathjax").mkdir()
        (static / "mathjax" / "tex-chtml.js").write_text("// MathJax")
    return tmp_path


LOCAL = '<script defer src="_static/mathjax/tex-chtml.js"></script>'


def test_an_offline_site_passes(tmp_path):
    root = site(tmp_path, {"index.html": LOCAL + MATH,
                           "sub/page.html": '<script src="../_static/mathjax/tex-chtml.js">'
                                            '</script>' + MATH,
                           "plain.html": '<link rel="canonical" href="https://x.org/">'
                                         '<a href="https://x.org/">a link is fine</a>'})
    problems, summary = check_offline.check(root)
    assert problems == []
    assert "3 pages checked, 2 with math" in summary


@pytest.mark.parametrize("tag", [
    '<script src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-chtml.js"></script>',
    '<script src="//code.jquery.com/jquery-3.7.0.js"></script>',
    '<link rel="stylesheet" href="https://cdn.datatables.net/1.13.6/css/x.css">',
    '<link rel="preload" as="font" href="http://fonts.example.org/a.woff2">',
    '<img src="https://example.org/logo.png">',
    '<style>@import "https://fonts.example.org/css";</style>',
])
def test_an_external_resource_fails(tmp_path, tag):
    problems, _ = check_offline.check(site(tmp_path, {"index.html": LOCAL + MATH + tag}))
    assert len(problems) == 1 and "index.html" in problems[0]


def test_math_without_the_local_script_fails(tmp_path):
    problems, _ = check_offline.check(site(tmp_path, {"index.html": MATH}))
    assert problems == ["index.html: has math but does not load _static/mathjax/tex-chtml.js"]
    problems, _ = check_offline.check(site(tmp_path / "b", {"index.html": LOCAL + MATH},
                                           mathjax=False))
    assert any("missing from the build" in p for p in problems)


def test_a_stylesheet_importing_from_a_cdn_fails(tmp_path):
    css = "body { background: url('https://example.org/bg.png'); }"
    problems, _ = check_offline.check(site(tmp_path, {"index.html": ""}, css=css))
    assert problems == ["_static/theme.css: loads https://example.org/bg.png"]


def test_the_command_line(tmp_path, capsys):
    root = site(tmp_path, {"index.html": LOCAL + MATH})
    assert check_offline.main([str(root)]) == 0
    (root / "bad.html").write_text('<script src="https://example.org/x.js"></script>')
    assert check_offline.main([str(root)]) == 1
    assert "does not read offline" in capsys.readouterr().out


def test_a_minimal_sphinx_build_reads_offline(tmp_path):
    pytest.importorskip("sphinx")
    if importlib.util.find_spec("sphinx-mathjax-offline") is None:
        pytest.skip("the docs extra (sphinx-mathjax-offline) is not installed")
    src = tmp_path / "src"
    src.mkdir()
    # The documentation's own MathJax setup: its conf.py's settings and hooks.
    conf = (DOCS / "conf.py").read_text()
    start, end = conf.index("# -- math, served"), conf.index("# -- HTML")
    hooks = conf[conf.index("def _copy_mathjax"):conf.index("def setup(app):")]
    (src / "conf.py").write_text(
        "from pathlib import Path\n"
        f"DOCS = Path({str(DOCS)!r})\n"
        "extensions = ['sphinx.ext.mathjax']\n" + conf[start:end] + hooks +
        "def setup(app):\n    app.connect('build-finished', _copy_mathjax)\n")
    (src / "index.rst").write_text("Title\n=====\n\nInline :math:`a^2` and\n\n"
                                   ".. math:: \\int_0^1 x\\,dx = \\tfrac12\n")
    out = tmp_path / "html"
    run = subprocess.run([sys.executable, "-m", "sphinx", "-q", "-b", "html", str(src),
                          str(out)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    problems, summary = check_offline.check(out)
    assert problems == [], problems
    assert "with math" in summary and (out / "_static" / "mathjax" / "LICENSE").is_file()
    shutil.rmtree(out)
