"""A kernel's first compile leaves no reference cycle holding the op's arrays: a result dropped
right after the call that compiled its kernels gives its arena bytes back, without the cyclic GC."""
import os
import subprocess
import sys

import numpy as np
import pytest

numba = pytest.importorskip("numba", reason="compile cycles are a JIT matter (no numba here)")
from newch.kernels.jit import compile_signature  # noqa: E402  (needs numba)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# NOTE: softmax's broadcast subtraction compiled through kernels/specialize.entry on the
# caller's stack; numba's compile frames (kept in cycles by tracebacks) then held the
# op's output and operand until gc ran (4 KiB still in use after `del y`).
SCRIPT = """
import gc, json, sys
gc.disable()
import newch
import newch.net.functional as F
ops = {
    "softmax": lambda w: w.softmax(0),
    "sub broadcast": lambda w: w.reshape(10, 100) - w.reshape(10, 100).amax(1, keepdim=True),
    "exp": lambda w: w.exp(),
    "relu": lambda w: F.relu(w),
}
ctx = newch.default_context()
out = {}
for name, f in ops.items():
    for grad in (False, True):
        w = newch.randn(1000, requires_grad=grad)
        base = ctx.mem_stats()["arena_bytes_in_use"]
        y = f(w)
        del y
        out[f"{name} grad={grad}"] = ctx.mem_stats()["arena_bytes_in_use"] - base
        del w
print(json.dumps(out))
"""


@pytest.mark.slow
def test_first_call_results_return_their_bytes_with_gc_disabled_on_an_empty_cache(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "NEWCH_BACKEND")}
    env.update(NEWCH_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=ROOT)
    res = subprocess.run([sys.executable, "-c", SCRIPT], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stderr[-3000:]
    import json
    leaked = json.loads(res.stdout.strip().splitlines()[-1])
    assert leaked and all(v == 0 for v in leaked.values()), leaked


def _twice(a, out):
    for i in range(a.shape[0]):
        out[i] = a[i] * 2


def test_compile_signature_gives_numbas_entry_point():
    d = numba.njit(_twice)
    sig = (numba.float64[::1], numba.float64[::1])
    fn = compile_signature(d, sig)
    a, out = np.arange(4.0), np.zeros(4)
    fn(a, out)
    np.testing.assert_array_equal(out, [0.0, 2.0, 4.0, 6.0])
    assert sig in d.overloads and compile_signature(d, sig) is not None


def test_compile_signature_raises_numbas_error_on_the_callers_thread():
    d = numba.njit(_twice)
    with pytest.raises(numba.core.errors.TypingError):
        compile_signature(d, (numba.types.unicode_type, numba.float64[::1]))
