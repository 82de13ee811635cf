"""tools/conformance_report.py and docs/conformance.md: the report in the docs is the one the script prints now.

Runs without torch. When this fails, run ``python tools/conformance_report.py --update docs/conformance.md``.
"""
import importlib.util
import pathlib

from .optable import TABLE

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _coverage():
    spec = importlib.util.spec_from_file_location("newch_coverage_tool", ROOT / "tools" / "conformance_report.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_docs_show_the_current_coverage():
    cov = _coverage()
    text = (ROOT / "docs" / "conformance.md").read_text()
    assert cov.BEGIN in text and cov.END in text, "docs/conformance.md lost its coverage markers"
    block = text.split(cov.BEGIN, 1)[1].split(cov.END, 1)[0].strip()
    assert block == cov.markdown().strip(), (
        "docs/conformance.md is stale: run `python tools/conformance_report.py --update docs/conformance.md`")


def test_report_counts_are_consistent():
    cov = _coverage()
    md = cov.markdown()
    total = md.split("| **total** |")[1].split("\n")[0]
    have, checked, names = (int(x.strip(" *")) for x in total.split("|")[:3])
    assert checked <= have <= names
    assert names == sum(len(dict.fromkeys(v.split())) for v in cov.CURATED.values())


def test_every_table_spelling_exists_in_newch():
    """A spelling in the table must name something newch has (catches typos and removed ops)."""
    cov = _coverage()
    labels = {label for row in TABLE for label in row.calls}
    missing = sorted(label for label in labels if cov.lookup(label) is None)
    assert not missing, f"table spellings newch does not have: {missing}"
