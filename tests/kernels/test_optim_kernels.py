"""Optimizer kernels: the JIT sgd_step against its numpy twin, by hand, and across thread counts."""
import itertools
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
numba = pytest.importorskip("numba", reason="JIT kernel tests need numba (not installed: the ref backend is tested elsewhere)")

from newch.kernels import optim as K
from newch.kernels.ref import optim as R

ROOT = Path(__file__).resolve().parents[2]
SIZES = (0, 1, 7, 1000, K.SERIAL_MAX, K.SERIAL_MAX + 1, 3 * K.CHUNK + 5)

# (momentum, dampening, weight_decay, nesterov, maximize), nesterov only where torch allows it
OPTIONS = [o for o in itertools.product((0.0, 0.9), (0.0, 0.25), (0.0, 1e-2), (False, True),
                                        (False, True))
           if not (o[3] and (o[0] == 0.0 or o[1] != 0.0))]


def arrays(n, dtype, momentum, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.standard_normal(n).astype(dtype)
    g = rng.standard_normal(n).astype(dtype)
    b = rng.standard_normal(n).astype(dtype) if momentum else np.empty(0, dtype)
    return p, g, b


def test_both_backends_export_the_same_names():
    assert K.__all__ == R.__all__ == ["sgd_step"]
    assert callable(K.sgd_step) and callable(R.sgd_step)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", SIZES)
def test_sgd_step_matches_ref_twin_bit_for_bit(dtype, n):
    for (mom, damp, wd, nest, maxi), first in itertools.product(OPTIONS, (True, False)):
        p1, g, b1 = arrays(n, dtype, mom)
        p2, b2 = p1.copy(), b1.copy()
        g_before = g.copy()
        K.sgd_step(p1, g, b1, 0.05, wd, mom, damp, nest, maxi, first)
        R.sgd_step(p2, g, b2, 0.05, wd, mom, damp, nest, maxi, first)
        opts = (mom, damp, wd, nest, maxi, first)
        assert p1.dtype == dtype and np.array_equal(p1, p2), opts
        assert np.array_equal(b1, b2), opts
        assert np.array_equal(g, g_before), opts   # the gradient is read, never written


def test_sgd_step_by_hand():
    p = np.array([1.0, -2.0], np.float64)
    g = np.array([0.5, 4.0], np.float64)
    K.sgd_step(p, g, p[:0], 0.1, 0.0, 0.0, 0.0, False, False, True)
    assert p.tolist() == [1.0 - 0.1 * 0.5, -2.0 - 0.1 * 4.0]
    # momentum 0.5, dampening 0.5: first step buf = g, second buf = 0.5 buf + 0.5 g
    p = np.array([1.0], np.float64)
    b = np.array([123.0], np.float64)
    K.sgd_step(p, np.array([2.0]), b, 0.25, 0.0, 0.5, 0.5, False, False, True)
    assert b.tolist() == [2.0] and p.tolist() == [0.5]
    K.sgd_step(p, np.array([4.0]), b, 0.25, 0.0, 0.5, 0.5, False, False, False)
    assert b.tolist() == [3.0] and p.tolist() == [0.5 - 0.75]
    # nesterov, weight decay 0.5 and maximize: d = -g + 0.5 p, buf = d, step d + 0.5 buf
    p = np.array([2.0], np.float64)
    b = np.zeros(1)
    K.sgd_step(p, np.array([3.0]), b, 0.5, 0.5, 0.5, 0.0, True, True, True)
    assert b.tolist() == [-2.0] and p.tolist() == [2.0 - 0.5 * (-2.0 - 1.0)]


def test_scalars_round_to_the_array_dtype():
    # float32 arrays: lr, 1 - dampening are rounded to float32 once, products in float32
    p = np.array([1.0], np.float32)
    b = np.array([1.0], np.float32)
    K.sgd_step(p, np.array([1.0], np.float32), b, 0.1, 0.0, 0.9, 0.1, False, False, False)
    f = np.float32
    want_b = f(0.9) * f(1.0) + f(1.0 - 0.1) * f(1.0)
    assert b[0] == want_b and p[0] == f(1.0) + f(-0.1) * want_b


def test_length_mismatch_raises():
    p, g, b = arrays(10, np.float32, 0.9)
    with pytest.raises(ValueError, match="sgd_step"):
        K.sgd_step(p, g[:5], b, 0.1, 0.0, 0.9, 0.0, False, False, False)
    with pytest.raises(ValueError, match="sgd_step"):
        K.sgd_step(p, g, b[:5], 0.1, 0.0, 0.9, 0.0, False, False, False)


def _run_threads(threads, n, dtype):
    import numba
    p, g, b = arrays(n, dtype, 0.9, seed=3)
    old = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        for step in range(3):
            K.sgd_step(p, g, b, 0.01, 1e-4, 0.9, 0.1, False, step == 1, step == 0)
    finally:
        numba.set_num_threads(old)
    return p, b


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_one_and_two_threads_agree_bit_for_bit(dtype):
    import numba
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("numba was started with a single thread")
    n = 5 * K.CHUNK + 123
    p1, b1 = _run_threads(1, n, dtype)
    p2, b2 = _run_threads(2, n, dtype)
    assert np.array_equal(p1, p2) and np.array_equal(b1, b2)


SUBPROCESS = """
import hashlib, sys
sys.path.insert(0, {root!r})
import numpy as np
from tests.kernels.test_optim_kernels import _run_threads
for t in (1, 3, 4):
    p, b = _run_threads(t, {n}, np.float32)
    print(t, hashlib.sha256(p.tobytes() + b.tobytes()).hexdigest())
"""


def test_numba_with_four_threads_in_a_subprocess_agrees():
    n = 7 * K.CHUNK + 11
    code = SUBPROCESS.format(root=str(ROOT), n=n)
    env = dict(os.environ, NUMBA_NUM_THREADS="4")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    lines = [line.split() for line in res.stdout.split("\n") if line.strip()]
    assert [t for t, _ in lines] == ["1", "3", "4"]
    assert len({h for _, h in lines}) == 1
    import hashlib
    p, b = _run_threads(1, n, np.float32)
    assert lines[0][1] == hashlib.sha256(p.tobytes() + b.tobytes()).hexdigest()
