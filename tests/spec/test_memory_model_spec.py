"""The specification's code blocks (shared/spec/memory-model.ko.txt, authoritative) run verbatim.

``blocks/`` holds the five blocks copied character for character from the Korean
original; the first test checks the copies still match the specification when
it is present beside the checkout. The blocks then run in order in one process
(one namespace), as a reader of the page would run them, in a fresh subprocess
so the default context and seed are the page's own.
"""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
BLOCKS = sorted((HERE / "blocks").glob("*.py"))
SPEC = HERE.parents[2] / "shared" / "spec" / "memory-model.ko.txt"


def test_blocks_are_verbatim_copies_of_the_specification():
    if not SPEC.exists():
        pytest.skip("shared/spec is not beside this checkout")
    spec = SPEC.read_text(encoding="utf-8")
    assert len(BLOCKS) == 5
    for b in BLOCKS:
        assert b.read_text(encoding="utf-8") in spec, b.name


def _run(names):
    code = "ns = {}\n" + "".join(
        f"print('=== {n}')\nexec(compile(open({str(HERE / 'blocks' / n)!r}, encoding='utf-8').read(), "
        f"{n!r}, 'exec'), ns)\n" for n in names)
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         encoding="utf-8", env=env, timeout=600)
    assert res.returncode == 0, res.stderr
    parts = re.split(r"^=== (\S+)\n", res.stdout, flags=re.M)[1:]
    return dict(zip(parts[::2], parts[1::2]))


def _check_use_after_step_end(out):
    assert out.startswith("에러: ")
    assert "step_end()" in out and "persistent()" in out


def _check_persistent(out):
    assert out.strip() == "newch.Size([4])"


def _check_context(out):
    threads, backend = out.split()
    assert int(threads) == min(2, os.cpu_count())
    assert backend in ("avx512", "avx2", "neon", "sse", "generic", "ref")


def test_foundation_blocks_run_verbatim():
    """Blocks 2, 3 and 5 need only the foundation (they run after the page's imports)."""
    prelude = "import newch as torch\n"
    code = prelude + "".join((HERE / "blocks" / n).read_text(encoding="utf-8") for n in (
        "2_use_after_step_end.py", "3_persistent.py", "5_context_and_threads.py"))
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         encoding="utf-8", env=dict(os.environ, PYTHONIOENCODING="utf-8"), timeout=600)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    _check_use_after_step_end(lines[0])
    _check_persistent(lines[1])
    _check_context(lines[2])


def test_all_five_blocks_run_in_order_in_one_process():
    pytest.importorskip("newch.net")
    out = _run([b.name for b in BLOCKS])
    losses = out["1_step_end.py"].splitlines()
    assert [ln.split()[0] for ln in losses] == ["0", "1", "2"]
    assert all(float(ln.split()[1]) >= 0 for ln in losses)
    _check_use_after_step_end(out["2_use_after_step_end.py"])
    _check_persistent(out["3_persistent.py"])
    stats = eval(out["4_measuring_memory.py"])
    for key in ("arena_bytes_in_use", "arena_peak_bytes", "arena_bytes_reserved", "persistent_bytes"):
        assert isinstance(stats[key], int)
    assert stats["arena_peak_bytes"] >= 256 * 4 * 4        # at least the input batch
    assert stats["persistent_bytes"] >= (4 * 2 + 2) * 4    # the model's parameters
    _check_context(out["5_context_and_threads.py"])
