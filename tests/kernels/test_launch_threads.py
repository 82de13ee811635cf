"""Parallel kernels launched from two Python threads at once, on every numba threading layer."""
import os
import subprocess
import sys

import pytest
numba = pytest.importorskip("numba", reason="JIT kernel tests need numba (not installed: the ref backend is tested elsewhere)")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))

TWO_THREADS = """
import threading, time
import numba
import newch as torch
from newch.kernels import jit
x = torch.ones(1 << 18)
y = torch.full((1 << 18,), 2.0)
assert (x + y).sum().item() == 3.0 * (1 << 18)          # compile before the threads start
bad = []
def work():
    with torch.Context():                               # a context per thread
        a, b = torch.ones(1 << 18), torch.full((1 << 18,), 2.0)
        t0 = time.monotonic()
        while time.monotonic() - t0 < 1.5:
            s = (a + b).sum().item()
            if s != 3.0 * (1 << 18):
                bad.append(s)
            torch.step_end()
            a, b = torch.ones(1 << 18), torch.full((1 << 18,), 2.0)
ts = [threading.Thread(target=work) for _ in range(2)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print(numba.threading_layer(), jit.serialise_parallel_launches(), len(bad))
"""


@pytest.mark.slow
@pytest.mark.parametrize("layer", ["workqueue", "default"])
def test_two_threads_launching_parallel_kernels_do_not_abort(layer):
    env = dict(os.environ, NUMBA_THREADING_LAYER=layer, NUMBA_NUM_THREADS="2")
    env.pop("NEWCH_BACKEND", None)
    res = subprocess.run([sys.executable, "-c", TWO_THREADS], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stderr[-2000:]
    used, serialised, bad = res.stdout.split()
    assert bad == "0"
    if layer == "workqueue":
        assert (used, serialised) == ("workqueue", "True")
    else:
        assert serialised == str(used == "workqueue")
