"""Every ```python block of every page of the docs site (docs/**/*.md: English pages,
their Korean ``*.ko.md`` twins, the API pages) and of the README runs.

Blocks of one page run in order in one namespace, in a fresh subprocess, as a
reader would paste them into a notebook.
"""
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]
FENCE = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def blocks(page):
    return FENCE.findall(page.read_text(encoding="utf-8"))


def _page_id(page):
    return page.relative_to(ROOT).as_posix()


@pytest.mark.parametrize("page", [p for p in PAGES if blocks(p)], ids=_page_id)
def test_page_examples_run(page):
    code = "\n".join(blocks(page))
    if "newch.kernels" in code and importlib.util.find_spec("numba") is None:
        pytest.skip(f"{page.name}: its examples show the JIT's compile report (numba not installed)")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=600, env=dict(os.environ, PYTHONIOENCODING="utf-8"))
    assert res.returncode == 0, f"{page.name}:\n{res.stderr[-3000:]}"


NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_code_cells_run(nb):
    import json
    cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
    code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=600, env=dict(os.environ, PYTHONIOENCODING="utf-8"))
    assert res.returncode == 0, f"{nb.name}:\n{res.stderr[-3000:]}"
