"""The compile report (newch.kernels.report) and the kernel templates it sees (specialize)."""
import os
import subprocess
import sys
import uuid

import numpy as np
import pytest

numba = pytest.importorskip("numba", reason="JIT kernel tests need numba (not installed: the ref backend is tested elsewhere)")
from newch.kernels import report, specialize

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _double_loop(x, out, lo, hi):
    for i in range(lo, hi):
        out[i] = _f(x[i])  # noqa: F821


def _twice(v):
    return v + v


def _square(v):
    return v * v


def test_instances_bind_their_own_element_function():
    from newch.kernels.jit import helper
    tag = uuid.uuid4().hex[:8]
    k2 = specialize.instance(_double_loop, "twice" + tag, _f=helper(_twice))
    k3 = specialize.instance(_double_loop, "square" + tag, _f=helper(_square))
    assert specialize.instance(_double_loop, "twice" + tag) is k2       # built once
    x = np.arange(5, dtype=np.float64)
    o2, o3 = np.zeros(5), np.zeros(5)
    k2(x, o2, 0, 5)
    k3(x, o3, 1, 4)
    assert o2.tolist() == [0, 2, 4, 6, 8]
    assert o3.tolist() == [0, 1, 4, 9, 0]


def test_report_lists_kernels_compiled_in_this_process():
    from newch.kernels.jit import helper
    tag = uuid.uuid4().hex[:8]
    k = specialize.instance(_double_loop, "rep" + tag, _f=helper(_twice))
    sig = (specialize.array(np.dtype(np.float32), 1, "C"),) * 2 + \
          (specialize.scalar(np.dtype(np.int64)),) * 2
    fn = specialize.entry(k, sig)
    x = np.ones(3, np.float32)
    out = np.zeros(3, np.float32)
    fn(x, out, 0, 3)
    assert out.tolist() == [2, 2, 2]
    mine = [r for r in report.records() if r["name"].endswith("_double_loop__rep" + tag)]
    assert len(mine) == 1
    r = mine[0]
    # NOTE: a unique tag was never compiled before, so it cannot come from the disk cache
    assert r["state"] == "compiled" and r["depth"] == 0 and r["seconds"] > 0
    assert 0 <= r["llvm"] <= r["seconds"] and "f32" in r["sig"]
    table = report.report()
    assert "_double_loop__rep" + tag in table
    assert "compiled in" in table.splitlines()[-1]


def test_entry_points_are_checked_by_the_launchers():
    from newch.kernels import elementwise as E
    a = np.arange(8, dtype=np.float32)
    with pytest.raises(ValueError):
        E.unary("relu", a[::2], np.zeros(4, np.float32))      # strided into a flat kernel
    with pytest.raises(TypeError):
        E.binary("add", a, a.astype(np.float64), np.zeros(8, np.float32))
    with pytest.raises(ValueError):
        E.unary("relu", a, np.zeros(8, np.float64))           # out of another dtype
    with pytest.raises(ValueError):
        E.unary("no_such_op", a, np.zeros(8, np.float32))


@pytest.mark.slow
def test_cold_report_runs_a_workload_with_an_empty_cache():
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("NEWCH_BACKEND", None)      # the report times the JIT's compiling: not under ref
    r = subprocess.run([sys.executable, "-m", "newch.kernels.report", "--cold", "tiny"],
                       capture_output=True, text=True, env=env, timeout=900, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("workload tiny: first step")
    assert any("_binary_flat__add_f" in line and " compiled " in line for line in lines)
    assert " 0 loaded from cache" in lines[-1]          # the cache started empty
