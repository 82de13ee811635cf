"""mkdocs hooks for newch's site (mkdocs.yml: ``hooks: [tools/docs_hooks.py]``).

newch's docstrings are plain text written for ``help()``: ``out[i][j][k]`` or
``tensor([-0.69, -0.69])`` in them is indexing, not Markdown's ``[text][ref]``
link syntax. mkdocs-autorefs warns about each such "link" it cannot resolve,
and ``mkdocs build --strict`` would fail on them. This hook drops exactly those
warnings (unresolved references found *inside a Python docstring*); a broken
link written on a docs page still fails the strict build.

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


def on_config(config):
    """Again per build (``mkdocs serve`` rebuilds), in case handlers were replaced."""
    _install()
    return config
