"""Check that a built HTML site reads offline.

Usage: ``python docs/check_offline.py BUILD_DIR`` (the output directory of
``sphinx-build -b html``). Fails, listing every problem, when

- a page loads anything from another host: a ``<script src>``, a ``<link href>`` other than
  a plain hyperlink relation, an ``<img>``, ``<iframe>``, ``<audio>``, ``<video>`` or
  ``<source>`` with an ``http:``, ``https:`` or ``//`` address, or a stylesheet of the site
  with such a ``url(...)`` or ``@import``;
- a page with math (Sphinx's ``class="math`` nodes) does not load the local MathJax script,
  or that script is not in the build.

Prints the number of pages checked, of pages with math, and the weight of what a page with
math loads for it (the MathJax script and its fonts).
"""

import re
import sys
from html.parser import HTMLParser
from pathlib import Path

MATHJAX = "_static/mathjax/tex-chtml.js"
EXTERNAL = re.compile(r"^\s*(https?:)?//", re.IGNORECASE)
CSS_URL = re.compile(r"""(?:url\(\s*['"]?|@import\s+['"])\s*((?:https?:)?//[^'")\s]+)""",
                     re.IGNORECASE)
# <link rel=...> values that only name a relation and fetch nothing.
LINK_NO_FETCH = {"canonical", "alternate", "author", "help", "license", "next", "prev",
                 "search", "index", "top", "up", "first", "last", "copyright", "glossary"}
FETCHING_TAGS = {"img": "src", "iframe": "src", "audio": "src", "video": "src",
                 "source": "src", "embed": "src"}


class _Page(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.external = []
        self.scripts = []
        self.has_math = False
        self.inline_styles = []
        self._in_style = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "math" in (attrs.get("class") or "").split():
            self.has_math = True
        url = None
        if tag == "script" and attrs.get("src"):
            url = attrs["src"]
            self.scripts.append(url)
        elif tag == "link" and attrs.get("href"):
            rels = set((attrs.get("rel") or "").lower().split())
            if not rels or not rels <= LINK_NO_FETCH:
                url = attrs["href"]
        elif tag in FETCHING_TAGS and attrs.get(FETCHING_TAGS[tag]):
            url = attrs[FETCHING_TAGS[tag]]
        if url is not None and EXTERNAL.match(url):
            self.external.append(f"<{tag}> {url}")
        if tag == "style":
            self._in_style = True

    def handle_endtag(self, tag):
        if tag == "style":
            self._in_style = False

    def handle_data(self, data):
        if self._in_style:
            self.inline_styles.append(data)


def check(build_dir):
    """Return the problems found in the built site and a summary line.

    Parameters
    ----------
    build_dir : str or pathlib.Path
        The output directory of ``sphinx-build -b html``.

    Returns
    -------
    problems : list of str
        One line per problem; empty when the site reads offline.
    summary : str
        The number of pages, of pages with math, and the MathJax weight.
    """
    root = Path(build_dir)
    pages = sorted(p for p in root.rglob("*.html") if "_sources" not in p.parts)
    if not pages:
        return [f"no HTML page under {root}"], ""
    problems = []
    n_math = 0
    mathjax = root / MATHJAX
    if not mathjax.is_file():
        problems.append(f"{MATHJAX} is missing from the build")
    for page in pages:
        rel = page.relative_to(root).as_posix()
        parser = _Page()
        parser.feed(page.read_text(encoding="utf-8"))
        problems += [f"{rel}: loads {what}" for what in parser.external]
        for style in parser.inline_styles:
            problems += [f"{rel}: inline style loads {u}" for u in CSS_URL.findall(style)]
        if parser.has_math:
            n_math += 1
            local = [s for s in parser.scripts
                     if (page.parent / s.split("?")[0]).resolve() == mathjax.resolve()]
            if not local:
                problems.append(f"{rel}: has math but does not load {MATHJAX}")
    for css in sorted(root.rglob("*.css")):
        rel = css.relative_to(root).as_posix()
        text = css.read_text(encoding="utf-8", errors="replace")
        problems += [f"{rel}: loads {u}" for u in CSS_URL.findall(text)]
    weight = sum(f.stat().st_size for f in (root / "_static" / "mathjax").rglob("*")
                 if f.is_file() and "extensions" not in f.parts and f.name != "LICENSE")
    summary = (f"{len(pages)} pages checked, {n_math} with math; MathJax script and fonts "
               f"{weight / 1e6:.2f} MB, loaded once and cached by the browser")
    return problems, summary


def main(argv=None):
    """Run the check from the command line; return the exit code.

    Parameters
    ----------
    argv : list of str, optional
        The arguments, ``[BUILD_DIR]``; by default ``sys.argv[1:]``.

    Returns
    -------
    int
        0 when the site reads offline, 1 otherwise.
    """
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    problems, summary = check(argv[0])
    for line in problems:
        print(line)
    print(summary)
    if problems:
        print(f"{len(problems)} problems: the site does not read offline")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
