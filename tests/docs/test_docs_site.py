"""The documentation site (mkdocs.yml): pages, languages, images, API coverage.

Fast checks run everywhere; the ones that build the site need the ``docs`` extra
(``pip install -e '.[docs]'``) and skip without it. CI's "docs site" stage builds
the site once and points ``NEWCH_SITE_DIR`` at it, so these tests read that build.
"""
import importlib
import io
import os
import re
import subprocess
import sys
import tokenize
import types
import zlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
FENCE = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
HANGUL = re.compile("[\uac00-\ud7a3]")

# Pages the issue requires in both languages (English NAME.md, Korean NAME.ko.md).
BILINGUAL = ["index", "install", "quickstart", "memory-model", "training", "small-machines"]


def blocks(path):
    return FENCE.findall(path.read_text(encoding="utf-8"))


def nav_pages():
    """Every page mkdocs.yml's nav names (read as text: no YAML parser needed)."""
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = text[text.index("\nnav:"):]
    return re.findall(r"^\s+-\s+(?:[^:\n]+:\s+)?([\w./-]+\.md)\s*$", nav, re.M)


def test_nav_pages_exist_and_every_page_is_in_the_nav():
    pages = nav_pages()
    assert len(pages) >= 25, pages
    missing = [p for p in pages if not (DOCS / p).is_file()]
    assert not missing, f"mkdocs.yml names pages that do not exist: {missing}"
    on_disk = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md") if ".ko." not in p.name}
    assert on_disk - set(pages) == set(), "pages not in mkdocs.yml's nav"


@pytest.mark.parametrize("name", BILINGUAL)
def test_required_pages_exist_in_english_and_korean(name):
    en, ko = DOCS / f"{name}.md", DOCS / f"{name}.ko.md"
    assert en.is_file() and ko.is_file()
    assert len(HANGUL.findall(en.read_text(encoding="utf-8"))) < 10, f"{en.name} has Korean text"
    ko_text = ko.read_text(encoding="utf-8")
    assert len(HANGUL.findall(ko_text)) > 200, f"{ko.name} is not written in Korean"


def test_every_korean_page_has_an_english_original():
    for ko in DOCS.rglob("*.ko.md"):
        assert ko.with_name(ko.name.replace(".ko.md", ".md")).is_file(), ko


def code_shape(src):
    """A block's code without comments, string contents or spacing: what the two languages share."""
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        if tok.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
                        tokenize.DEDENT, tokenize.ENDMARKER):
            continue
        out.append("<str>" if tok.type == tokenize.STRING else tok.string)
    return " ".join(out)


@pytest.mark.parametrize("name", BILINGUAL)
def test_korean_and_english_pages_carry_the_same_code_blocks(name):
    en, ko = blocks(DOCS / f"{name}.md"), blocks(DOCS / f"{name}.ko.md")
    assert [code_shape(b) for b in en] == [code_shape(b) for b in ko]


def test_code_shape_ignores_comments_and_strings_but_not_code():
    a = 'print("error:", e)   # the message\n'
    assert code_shape(a) == code_shape('print("에러:", e)\n')
    assert code_shape(a) != code_shape('print("error:", e, 1)\n')


def test_memory_model_pages_have_the_five_code_blocks_of_the_specification():
    ko = blocks(DOCS / "memory-model.ko.md")
    assert len(ko) == 5
    assert ko[0].startswith("import newch as torch\nimport newch.net as nn\n")
    assert 'print("에러:", e)' in ko[1]
    candidates = [Path(os.environ.get("NEWCH_SPEC_DIR", "/nonexistent")),
                  ROOT.parent / "shared" / "spec", ROOT.parents[1] / "shared" / "spec"]
    spec = next((d / "memory-model.ko.txt" for d in candidates
                 if (d / "memory-model.ko.txt").is_file()), None)
    if spec is None:
        pytest.skip("the specification page (shared/spec/memory-model.ko.txt) is not beside this checkout")
    text = spec.read_text(encoding="utf-8")
    for block in ko:
        assert block.rstrip("\n") in text, f"not verbatim from the specification:\n{block}"


def test_images_the_pages_show_exist():
    for page in DOCS.rglob("*.md"):
        for src in re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
            assert (page.parent / src).is_file(), f"{page.name} shows a missing image {src}"
    assert (DOCS / "images" / "history.png").stat().st_size > 5000


@pytest.mark.slow
def test_docs_images_script_draws_the_images(tmp_path):
    pytest.importorskip("matplotlib")
    res = subprocess.run([sys.executable, str(ROOT / "tools" / "docs_images.py"), "--out",
                          str(tmp_path), "--epochs", "1", "--n-train", "512"],
                         capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert res.returncode == 0, res.stderr[-3000:]
    for name in ("history.png", "mnist_predictions.png"):
        data = (tmp_path / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000


def test_docstring_bracket_filter_drops_only_docstring_references():
    import logging
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        docs_hooks = importlib.import_module("docs_hooks")
    finally:
        sys.path.pop(0)

    def rec(msg):
        return logging.LogRecord("mkdocs.plugins.x", logging.WARNING, "", 0, msg, None, None)

    f = docs_hooks.DocstringBrackets()
    assert not f.filter(rec("api/newch.md: from /r/newch/ops/indexing.py:0: (newch.gather) "
                            "Could not find cross-reference target 'j'"))
    assert f.filter(rec("index.md: Could not find cross-reference target 'nowhere'"))
    assert f.filter(rec("Doc file 'a.md' contains a link 'b.md', but the target is not found"))


# ---- the built site -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A built site: NEWCH_SITE_DIR if set (CI builds once), else ``mkdocs build --strict``."""
    given = os.environ.get("NEWCH_SITE_DIR")
    if given:
        return Path(given)
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings")
    pytest.importorskip("mkdocs_static_i18n")
    out = tmp_path_factory.mktemp("site")
    res = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(out)],
                         capture_output=True, text=True, cwd=ROOT, timeout=900)
    assert res.returncode == 0, res.stderr[-3000:]
    return out


def inventory(site):
    """name -> page URI of the site's objects.inv (Sphinx inventory v2, as mkdocstrings writes it)."""
    raw = (site / "objects.inv").read_bytes()
    head = raw.split(b"\n", 4)
    assert head[0] == b"# Sphinx inventory version 2"
    out = {}
    for line in zlib.decompress(head[4]).decode("utf-8").splitlines():
        name, _domain, _prio, uri = line.split(" ", 4)[:4]
        assert not uri.startswith("ko/"), f"objects.inv links the Korean page of {name}"
        out[name] = uri.replace("$", name)
    return out


# Public namespaces and the path the reference documents each one's names under.
NAMESPACES = [("newch", "newch"), ("newch.nn", "newch.net"), ("newch.nn.functional", "newch.net.functional"),
              ("newch.nn.init", "newch.net.init"), ("newch.optim", "newch.optim"),
              ("newch.optim.lr_scheduler", "newch.optim.lr_scheduler"),
              ("newch.utils.data", "newch.data"), ("newch.vision.datasets", "newch.vision.datasets"),
              ("newch.train", "newch.train"), ("newch.serialization", "newch.serialization"),
              ("newch.autograd", "newch.autograd"), ("newch.linalg", "newch.linalg")]


def anchors_for(base, name, obj):
    """Where public name ``base.name`` may be documented: under that name, or where defined."""
    if isinstance(obj, types.ModuleType):
        return {obj.__name__}
    found = {f"{base}.{name}"}
    if getattr(obj, "__module__", None) and getattr(obj, "__qualname__", None):
        found.add(f"{obj.__module__}.{obj.__qualname__}")
    return found


@pytest.mark.slow
def test_every_public_name_has_an_api_anchor(site):
    inv = inventory(site)
    missing = []
    for public, base in NAMESPACES:
        mod = importlib.import_module(public)
        for name in mod.__all__:
            obj = getattr(mod, name)
            if isinstance(obj, types.ModuleType) and getattr(obj, "__file__", None) is None:
                continue          # newch.utils: an alias holder; newch.utils.data is checked above
            if not anchors_for(base, name, obj) & set(inv):
                missing.append(f"{public}.{name}")
    import newch
    for name in dir(newch.Tensor):
        if not name.startswith("_") and f"newch.Tensor.{name}" not in inv:
            missing.append(f"Tensor.{name}")
    assert not missing, f"public names with no API anchor: {missing}"


@pytest.mark.slow
def test_conformance_table_links_resolve_to_api_anchors(site):
    inv = inventory(site)
    text = (DOCS / "conformance.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\((api/[\w-]+)\.md#([\w.]+)\)", text)
    assert len(links) > 300
    bad = [(page, anchor) for page, anchor in links if inv.get(anchor) != f"{page}/#{anchor}"]
    assert not bad, f"conformance links with no such anchor on that page: {bad[:10]}"


@pytest.mark.slow
def test_site_has_both_languages(site):
    for name in BILINGUAL:
        en = site / ("index.html" if name == "index" else f"{name}/index.html")
        ko = site / "ko" / ("index.html" if name == "index" else f"{name}/index.html")
        assert en.is_file() and ko.is_file(), name
        assert HANGUL.search(ko.read_text(encoding="utf-8"))
    assert 'lang="ko"' in (site / "ko" / "index.html").read_text(encoding="utf-8")


@pytest.mark.slow
def test_browser_check_reports_console_errors_and_passes_clean_pages(tmp_path):
    import shutil
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("no chromium here (CI's docs stage installs Debian's)")
    (tmp_path / "good").mkdir()
    (tmp_path / "good" / "index.html").write_text("<html><body><p>fine</p></body></html>")
    (tmp_path / "bad.html").write_text(
        "<html><body><img src='missing.png'><script>console.error('broken on purpose');"
        "undefinedFunction();</script></body></html>")
    res = subprocess.run([sys.executable, str(ROOT / "tools" / "docs_browser_check.py"), str(tmp_path),
                          "--browser", browser], capture_output=True, text=True, timeout=300)
    assert res.returncode == 1, res.stdout + res.stderr
    lines = res.stdout.splitlines()
    bad = [ln for ln in lines if ln.startswith("bad.html:")]
    assert any("broken on purpose" in ln for ln in bad), lines
    assert any("undefinedFunction" in ln for ln in bad), lines
    assert any("missing.png" in ln for ln in bad), lines
    assert not any(ln.startswith("good/") for ln in lines), lines
    assert "2 pages loaded" in lines[-1] and "1 with console errors" in lines[-1]


def test_inventory_prefix_strip_keeps_names_and_fixes_uris():
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        docs_hooks = importlib.import_module("docs_hooks")
    finally:
        sys.path.pop(0)
    head = b"# Sphinx inventory version 2\n# Project: p\n# Version: 0\n# zlib below\n"
    body = "newch.add py:function 1 ko/api/newch/#$ -\nnewch py:module 1 api/newch/#$ -\n"
    raw = head + zlib.compress(body.encode())
    out = docs_hooks.strip_inventory_prefixes(raw, ["ko/"])
    assert out.startswith(head)
    lines = zlib.decompress(out.split(b"\n", 4)[4]).decode().splitlines()
    assert lines == ["newch.add py:function 1 api/newch/#$ -", "newch py:module 1 api/newch/#$ -"]
    assert docs_hooks.strip_inventory_prefixes(b"not an inventory", ["ko/"]) == b"not an inventory"
