"""Without a usable numba, newch runs on the ref kernels and says so once (no numba needed here)."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CHECK = textwrap.dedent("""
    import warnings
    warnings.simplefilter("always")
    with warnings.catch_warnings(record=True) as w:
        import newch as torch
        ctx = torch.Context()
        ctx2 = torch.Context()
        x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float32)
        total = (x * x).sum().item()
    notes = [str(m.message) for m in w if "numba" in str(m.message)]
    print(ctx.backend, ctx2.backend, total, len(notes))
    print(notes[0] if notes else "")
""")


def _run(tmp_path, numba_init):
    """Run CHECK with a fake ``numba`` package whose import executes ``numba_init``."""
    fake = tmp_path / "fake" / "numba"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(numba_init)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(fake.parent), ROOT]))
    env.pop("NEWCH_BACKEND", None)
    res = subprocess.run([sys.executable, "-c", CHECK], env=env, capture_output=True, text=True,
                         cwd=str(tmp_path), timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    return res.stdout.splitlines()


@pytest.mark.parametrize("numba_init", [
    "raise ImportError('no numba wheel for this machine')",
    "raise OSError('libllvmlite.so: cannot open shared object file')",
    "raise AttributeError('module coverage has no attribute types')",
], ids=["missing", "broken-library", "broken-import"])
def test_unusable_numba_falls_back_to_ref_and_warns_once(tmp_path, numba_init):
    first, note = _run(tmp_path, numba_init)
    backend, backend2, total, count = first.split()
    assert (backend, backend2) == ("ref", "ref")
    assert float(total) == float(np.float32(14.0))
    assert count == "1"                      # said once, not per context
    assert "ctx.backend == 'ref'" in note and numba_init.split("'")[1] in note


def test_explicit_ref_backend_does_not_touch_numba(tmp_path):
    fake = tmp_path / "fake" / "numba"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise RuntimeError('numba was imported')")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(fake.parent), ROOT]), NEWCH_BACKEND="ref")
    code = ("import newch as torch; torch.set_num_threads(1); x = torch.ones(4); "
            "print(torch.default_context().backend, (x + x).sum().item())")
    res = subprocess.run([sys.executable, "-W", "error", "-c", code], env=env, capture_output=True,
                         text=True, cwd=str(tmp_path), timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split() == ["ref", "8.0"]
