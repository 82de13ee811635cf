"""Parallel launches of serial task functions (newch.kernels.tasks): same bits, any thread count."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

numba = pytest.importorskip("numba", reason="JIT kernel tests need numba (not installed: the ref backend is tested elsewhere)")
from numba.core import types

from newch.kernels import tasks
from newch.kernels.jit import kernel

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@kernel
def _scaled_cumsum(x, scale, out, lo, hi):
    """Task t: out[t] = scale * (x[0] + ... + x[t]) summed in order (each task on its own)."""
    for t in range(lo, hi):
        acc = 0.0
        for i in range(t + 1):
            acc += x[i]
        out[t] = scale * acc


def _expected(x, scale):
    out = np.empty_like(x)
    for t in range(x.shape[0]):
        acc = 0.0
        for i in range(t + 1):
            acc += float(x[i])
        out[t] = scale * acc
    return out


def test_run_serial_and_parallel_give_the_reference_bits():
    x = np.random.default_rng(0).standard_normal(1000)
    want = _expected(x, 0.5)
    for parallel in (False, True):
        out = np.full_like(x, np.nan)
        tasks.run(_scaled_cumsum, x.shape[0], parallel, x, 0.5, out)
        assert np.array_equal(out, want)


def test_driver_chunks_cover_every_item_once_on_1_and_2_threads():
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("needs 2 numba threads")
    x = np.random.default_rng(1).standard_normal(777)
    sig = tasks.signature((x, 2.0, x))
    run = tasks.driver(_scaled_cumsum, sig, chunk=100)      # 7 full chunks and a tail of 77
    assert tasks.driver(_scaled_cumsum, sig, chunk=100) is run
    outs = []
    for n in (1, 2):
        numba.set_num_threads(n)
        out = np.full_like(x, np.nan)
        run(x.shape[0], x, 2.0, out)
        outs.append(out)
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    assert np.array_equal(outs[0], _expected(x, 2.0))
    assert np.array_equal(outs[0], outs[1])


def test_signature_types_arguments_as_the_entry_points_expect():
    c = np.zeros((2, 3), np.float32)
    sig = tasks.signature((c, c.T, c[:, ::2], np.zeros(3, bool), 3, 2.5, True, np.float32(1)))
    assert sig == (types.Array(types.float32, 2, "C"), types.Array(types.float32, 2, "A"),
                   types.Array(types.float32, 2, "A"), types.Array(types.boolean, 1, "C"),
                   types.int64, types.float64, types.boolean, types.float32)
    ro = c.copy()
    ro.flags.writeable = False
    assert tasks.signature((ro,)) == (types.Array(types.float32, 2, "C"),)   # one compile for both
    with pytest.raises(TypeError, match="tasks: no kernel argument type for str"):
        tasks.signature(("x",))


@pytest.mark.slow
def test_parallel_launch_after_loading_from_the_disk_cache(tmp_path):
    # The driver is cached without the task function's address (passed at run time): a
    # second process loads both from the cache and must still find the right code.
    code = textwrap.dedent("""
        import numpy as np
        from newch.kernels import elementwise as E, matmul as M, report
        x = np.arange(100000, dtype=np.float32) / 7
        o = np.empty_like(x)
        E.unary("neg", x, o)
        a = np.arange(200 * 300, dtype=np.float32).reshape(200, 300) / 1000
        c = np.empty((200, 200), np.float32)
        M.gemm(a, a.T, c, np.empty(M.gemm_scratch(200, 200, 300), np.float32))
        assert np.array_equal(o, -x)
        assert np.allclose(c, a.astype(np.float64) @ a.T.astype(np.float64), rtol=1e-5)
        states = {r["state"] for r in report.records() if r["depth"] == 0}
        print(sorted(states), o[-1], c.sum(dtype=np.float64))
    """)
    env = dict(os.environ, NEWCH_CACHE_DIR=str(tmp_path), PYTHONPATH=ROOT)
    runs = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                           timeout=600) for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr
    first, second = (r.stdout.split() for r in runs)
    assert first[0] == "['compiled']" and second[0] == "['hit']"
    assert first[1:] == second[1:]


@kernel
def _mixed(x, y, flag, k, s32, s64, pair, out, lo, hi):
    """Task t: out[t] from arguments of every kind a trampoline unpacks (arrays of two ranks and
    layouts, bool, int, float32, float64, a tuple)."""
    for t in range(lo, hi):
        v = x[t] * s32 + y[t % y.shape[0], t % y.shape[1]] * s64 + k + pair[0] - pair[1]
        out[t] = -v if flag else v


def test_the_trampoline_passes_every_argument_kind_as_a_direct_call_does():
    rng = np.random.default_rng(2)
    x = rng.standard_normal(500)
    y = rng.standard_normal((7, 12))[::-2, ::3]         # negative and non-unit strides
    y.flags.writeable = False
    args = (x, y, True, -3, np.float32(0.1), -2.5e-300, (7, 2 ** 40))
    sig = tasks.signature(args[:6]) + (types.UniTuple(types.int64, 2),
                                       types.Array(types.float64, 1, "C"))
    want = np.empty(500)
    _mixed(*args, want, 0, 500)                         # numba's own Python entry point
    got = np.full(500, np.nan)
    tasks.driver(_mixed, sig, chunk=64)(500, *args, got)
    assert np.array_equal(got, want)
    assert np.array_equal(want, -(x * np.float64(np.float32(0.1)) + y[np.arange(500) % 4,
                                  np.arange(500) % 4] * -2.5e-300 - 3 + 7 - 2 ** 40))


def test_a_parallel_launch_refuses_an_array_of_another_type():
    # The launcher unboxes its arguments as numba's entry points do: an array of another
    # dtype never reaches the task function's machine code (rank, layout and sizes are the
    # public launchers' checks, as for serial entry points).
    x = np.zeros(100)
    run = tasks.driver(_scaled_cumsum, tasks.signature((x, 2.0, x)), chunk=10)
    with pytest.raises(TypeError, match="can't unbox array"):
        run(100, x.astype(np.float32), 2.0, x)
    out = np.full_like(x, np.nan)
    run(100, x + 1, 2.0, out)
    assert np.array_equal(out, _expected(x + 1, 2.0))


def test_a_helper_runs_in_kernels_only():
    from newch.kernels import reduce
    with pytest.raises(TypeError, match="tile_plan is a kernel helper"):
        reduce.tile_plan(4, 5, 6)
    assert reduce.tile_plan.py_func(4, 5, 6)[0] >= 1
