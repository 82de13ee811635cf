"""mkdocs hooks for newch's site (mkdocs.yml: ``hooks: [tools/docs_hooks.py]``).

newch's docstrings are plain text written for ``help()``: ``out[i][j][k]`` or
``tensor([-0.69, -0.69])`` in them is indexing, not Markdown's ``[text][ref]``
link syntax. mkdocs-autorefs warns about each such "link" it cannot resolve,
and ``mkdocs build --strict`` would fail on them. This hook drops exactly those
warnings (unresolved references found *inside a Python docstring*); a broken
link written on a docs page still fails the strict build.

It also keeps the theme's language menu pointing at each language's home and
gives each language folder a ``sitemap.xml`` (the theme fetches one there):
without that every page logs a 404 in the browser's console.

Example:
    >>> import logging
    >>> rec = logging.LogRecord("mkdocs.plugins.mkdocs_autorefs", logging.WARNING, "", 0,
    ...     "api/newch.md: from /x/newch/ops/indexing.py:0: (newch.gather) "
    ...     "Could not find cross-reference target 'j'", None, None)
    >>> DocstringBrackets().filter(rec)
    False
"""
import logging
import re
import shutil
import zlib
from pathlib import Path

try:
    from mkdocs.plugins import event_priority
except ImportError:                 # imported without mkdocs (tests of the filter alone)
    def event_priority(priority):
        return lambda f: f

_ROOTS = []          # extra.alternate as mkdocs.yml gives it: each language's home

_FROM_DOCSTRING = re.compile(r"from \S+\.py:\d+: .*Could not find cross-reference target")


class DocstringBrackets(logging.Filter):
    """Drop autorefs' warnings about brackets inside docstrings; keep every other record."""

    def filter(self, record):
        return not _FROM_DOCSTRING.search(record.getMessage())


def _install():
    """Attach the filter to mkdocs' handlers (they see every plugin's records, strict counting too)."""
    for logger in (logging.getLogger("mkdocs"), logging.getLogger()):
        for handler in logger.handlers:
            if not any(isinstance(f, DocstringBrackets) for f in handler.filters):
                handler.addFilter(DocstringBrackets())


def on_startup(command, dirty):
    """mkdocs calls this once, after it set up its log handlers and before any page is built."""
    _install()


@event_priority(-200)            # last: after mkdocs-static-i18n built the other languages
def on_post_build(config):
    """Finish the site once every language is built.

    - Each language folder (``site/ko/``) gets a sitemap.xml: the theme's language menu
      fetches one from every language's home, and mkdocs-static-i18n writes only the top one.
    - ``objects.inv`` (the API inventory) lists the English pages: mkdocstrings writes it once
      per language build into the top folder, so the last build's ``ko/`` links overwrote it.
    """
    site = Path(config["site_dir"])
    top = site / "sitemap.xml"
    prefixes = []
    for alt in _ROOTS:
        link = alt.get("link", "./")
        folder = site / link
        if link.strip("./"):
            prefixes.append(link.strip("./") + "/")
        if top.is_file() and folder.is_dir() and not (folder / "sitemap.xml").is_file():
            shutil.copyfile(top, folder / "sitemap.xml")
    inv = site / "objects.inv"
    if inv.is_file() and prefixes:
        inv.write_bytes(strip_inventory_prefixes(inv.read_bytes(), prefixes))


def strip_inventory_prefixes(raw, prefixes):
    """A Sphinx v2 inventory with page URIs starting with one of ``prefixes`` made top-level."""
    head = raw.split(b"\n", 4)
    if len(head) < 5 or not head[0].startswith(b"# Sphinx inventory version 2"):
        return raw
    lines = []
    for line in zlib.decompress(head[4]).decode("utf-8").splitlines():
        parts = line.split(" ", 4)
        if len(parts) == 5:
            for p in prefixes:
                if parts[3].startswith(p):
                    parts[3] = parts[3][len(p):]
                    break
        lines.append(" ".join(parts))
    body = zlib.compress(("\n".join(lines) + "\n").encode("utf-8"), 9)
    return b"\n".join(head[:4]) + b"\n" + body


@event_priority(-200)            # after mkdocs-static-i18n's own on_page_context
def on_page_context(context, page, config, nav):
    """Point the language menu at each language's home (mkdocs-static-i18n, which runs first,
    points it at the page's translation; the theme then fetches ``<that page>/sitemap.xml``,
    a 404 in the browser's console for every page)."""
    roots = {a["lang"]: a["link"] for a in _ROOTS}
    # the plugin sets the attribute (config.extra.alternate), the theme may read either
    for alts in (getattr(config.extra, "alternate", None), config.extra.get("alternate")):
        for alt in alts or []:
            if alt.get("lang") in roots:
                alt["link"] = roots[alt["lang"]]
    return context


def on_config(config):
    """Again per build (``mkdocs serve`` rebuilds), in case handlers were replaced."""
    _install()
    if not _ROOTS:
        _ROOTS.extend(dict(a) for a in config.extra.get("alternate") or [])
    return config
