"""gemm / bgemm: JIT kernels against their numpy twins and float64 numpy, plus determinism.

Accuracy bound: a sum of K products carries at most about K*eps*(|a| @ |b|)
rounding error, so each result must lie within (K + 2)*eps*(|a| @ |b|) of the
float64 product. A dropped, doubled or misplaced term breaks that bound.
"""
import itertools
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
numba = pytest.importorskip("numba", reason="JIT kernel tests need numba (not installed: the ref backend is tested elsewhere)")

from newch.kernels import matmul as jit
from newch.kernels.ref import matmul as ref

DTYPES = (np.float32, np.float64)
SHAPES = [  # (M, N, K)
    (0, 5, 3), (4, 0, 3), (4, 5, 0), (1, 1, 1), (1, 7, 1), (7, 1, 9), (3, 5, 7),
    (8, 32, 16), (9, 33, 17), (16, 16, 300), (67, 131, 29), (1, 200, 300), (200, 1, 300), (1000, 1, 2000),
    (97, 100, 103), (300, 257, 513),
]


def _rand(rng, shape, dtype):
    return rng.standard_normal(shape).astype(dtype)


GUARD = 1 << 15     # sentinel elements after the scratch: the kernel must not touch them


def _scratch(n, dtype):
    """NaN-filled scratch of n elements, a view into a buffer whose tail is a sentinel."""
    buf = np.full(n + GUARD, 7.0, dtype)
    buf[:n] = np.nan
    return buf, buf[:n]


def _call(mod, a, b):
    """mod.gemm(a, b) into NaN-filled out and scratch (so every element must be written)."""
    (M, K), N = a.shape, b.shape[1]
    out = np.full((M, N), np.nan, a.dtype)
    buf, scratch = _scratch(mod.gemm_scratch(M, N, K), a.dtype)
    mod.gemm(a, b, out, scratch)
    assert np.all(buf[scratch.size:] == 7.0), "wrote past the end of scratch"
    return out


def _bcall(mod, a, b):
    B, M, K = a.shape
    N = b.shape[2]
    out = np.full((B, M, N), np.nan, a.dtype)
    buf, scratch = _scratch(mod.bgemm_scratch(B, M, N, K), a.dtype)
    mod.bgemm(a, b, out, scratch)
    assert np.all(buf[scratch.size:] == 7.0), "wrote past the end of scratch"
    return out


def _assert_close(out, a, b):
    K = a.shape[-1]
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    exact = a64 @ b64
    tol = (K + 2) * np.finfo(a.dtype).eps * (np.abs(a64) @ np.abs(b64)) + 1e-300
    assert out.shape == exact.shape
    assert np.all(np.abs(out - exact) <= tol), np.max(np.abs(out - exact) / tol)


def _layouts(rng, M, K, dtype):
    """An (M, K) operand as C, transposed (F), strided and reversed views (negative strides)."""
    yield "C", _rand(rng, (M, K), dtype)
    yield "F", _rand(rng, (K, M), dtype).T
    yield "strided", _rand(rng, (2 * M + 1, 3 * K + 2), dtype)[1::2, 2::3]
    yield "reversed", _rand(rng, (M, K), dtype)[::-1, ::-1]
    yield "rows reversed", _rand(rng, (M, K), dtype)[::-1]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("M,N,K", SHAPES)
def test_gemm_matches_ref(M, N, K, dtype):
    rng = np.random.default_rng(M * 10007 + N * 101 + K)
    a, b = _rand(rng, (M, K), dtype), _rand(rng, (K, N), dtype)
    out = _call(jit, a, b)
    _assert_close(out, a, b)
    _assert_close(_call(ref, a, b), a, b)
    if K == 0:
        assert np.all(out == 0)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("M,N,K", [(5, 3, 4), (67, 131, 29), (130, 70, 90)])
def test_gemm_any_strides(M, N, K, dtype):
    rng = np.random.default_rng(7)
    for (_, a), (_, bt) in itertools.product(_layouts(rng, M, K, dtype), list(_layouts(rng, N, K, dtype))):
        b = bt.T
        _assert_close(_call(jit, a, b), a, b)
    # stride-0 broadcasts on either axis
    a = np.broadcast_to(_rand(rng, (1, K), dtype), (M, K))
    b = np.broadcast_to(_rand(rng, (K, 1), dtype), (K, N))
    _assert_close(_call(jit, a, b), a, b)


def test_random_shapes():
    rng = np.random.default_rng(3)
    for _ in range(12):
        M, N, K = (int(x) for x in rng.integers(1, 90, 3))
        dtype = DTYPES[int(rng.integers(2))]
        a, b = _rand(rng, (M, K), dtype), _rand(rng, (K, N), dtype)
        _assert_close(_call(jit, a, b), a, b)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("B,M,N,K", [(0, 3, 4, 5), (1, 3, 4, 5), (3, 5, 7, 3), (4, 67, 31, 29),
                                     (2, 100, 100, 100), (5, 9, 40, 0), (7, 1, 33, 64)])
def test_bgemm_matches_ref(B, M, N, K, dtype):
    rng = np.random.default_rng(B + M + N + K)
    a = _rand(rng, (B, M, K), dtype)
    b = _rand(rng, (B, N, K), dtype).transpose(0, 2, 1)
    out = _bcall(jit, a, b)
    _assert_close(out, a, b)
    _assert_close(_bcall(ref, a, b), a, b)
    # broadcast batch axes (stride 0) on b, on a, on both
    bb = np.broadcast_to(_rand(rng, (1, K, N), dtype), (B, K, N))
    ab = np.broadcast_to(_rand(rng, (1, M, K), dtype), (B, M, K))
    for x, y in ((a, bb), (ab, b), (ab, bb)):
        _assert_close(_bcall(jit, x, y), x, y)


def test_bits_do_not_depend_on_blocking():
    """Each element is the same in-order FMA chain over k, whatever tile, path or batch it is in."""
    rng = np.random.default_rng(11)
    for dtype in DTYPES:
        a, b = _rand(rng, (301, 700), dtype), _rand(rng, (700, 259), dtype)
        big = _call(jit, a, b)                       # parallel path, many tiles
        for m, n in ((13, 17), (40, 64), (8, 32)):
            small = _call(jit, a[:m].copy(), b[:, :n].copy())   # serial path
            assert np.array_equal(small, big[:m, :n])
        corner = _call(jit, a[-9:], b[:, -5:])       # edge micro-tiles only
        assert np.array_equal(corner, big[-9:, -5:])
        stack = _bcall(jit, np.stack([a[:50], a[50:100]]), np.stack([b, b]))
        assert np.array_equal(stack[1], big[50:100])
        column = _call(jit, a, b[:, 7:8])           # matrix-vector, computed transposed
        assert np.array_equal(column, big[:, 7:8])


def test_bad_arguments_raise():
    a = np.ones((20, 30), np.float32)
    b = np.ones((30, 40), np.float32)
    out = np.empty((20, 40), np.float32)
    with pytest.raises(ValueError):
        jit.gemm(a, b, out, np.empty(jit.gemm_scratch(20, 40, 30) - 1, np.float32))
    with pytest.raises(TypeError):
        jit.gemm(a, b.astype(np.float64), out, np.empty(jit.gemm_scratch(20, 40, 30), np.float32))
    with pytest.raises(ValueError):
        jit.gemm(a, b, np.empty((20, 80), np.float32)[:, ::2], np.empty(jit.gemm_scratch(20, 40, 30), np.float32))


def _products(dtype, seed=5):
    """Inputs big enough for the parallel path (one square, one skinny, one batched)."""
    rng = np.random.default_rng(seed)
    return [(_rand(rng, (257, 300), dtype), _rand(rng, (200, 300), dtype).T),
            (_rand(rng, (1000, 64), dtype), _rand(rng, (64, 129), dtype)),
            (_rand(rng, (6, 70, 50), dtype), np.broadcast_to(_rand(rng, (1, 50, 90), dtype), (6, 50, 90)))]


def _run_all(items):
    return [_call(jit, a, b) if a.ndim == 2 else _bcall(jit, a, b) for a, b in items]


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs 2 threads")
@pytest.mark.parametrize("dtype", DTYPES)
def test_deterministic_1_vs_2_threads(dtype):
    items = _products(dtype)
    saved = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = _run_all(items)
        numba.set_num_threads(2)
        two = _run_all(items)
    finally:
        numba.set_num_threads(saved)
    for x, y in zip(one, two):
        assert np.array_equal(x, y)


SUBPROCESS = textwrap.dedent("""
    import numba, numpy as np, sys
    from tests.kernels.test_matmul import _products, _run_all
    for dtype in (np.float32, np.float64):
        items = _products(dtype)
        runs = []
        for n in (1, 3, 4):
            numba.set_num_threads(n)
            runs.append(_run_all(items))
        for other in runs[1:]:
            for x, y in zip(runs[0], other):
                if not np.array_equal(x, y):
                    sys.exit("mismatch")
    print("ok")
""")


def test_deterministic_1_3_4_threads_subprocess():
    env = dict(os.environ, NUMBA_NUM_THREADS="4")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    res = subprocess.run([sys.executable, "-c", SUBPROCESS], env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0 and res.stdout.strip().endswith("ok"), res.stderr[-2000:]


@pytest.mark.parametrize("transposed", [False, True])
def test_vector_matrix_path_gives_the_blocked_bits(transposed):
    # One row goes through _vecmat, two rows through the packed kernel: same FMA chains.
    rng = np.random.default_rng(11)
    a = rng.standard_normal((2, 777)).astype(np.float32)
    b = rng.standard_normal((333, 777)).astype(np.float32).T if transposed else \
        rng.standard_normal((777, 333)).astype(np.float32)
    two = np.empty((2, 333), np.float32)
    jit.gemm(a, b, two, np.empty(jit.gemm_scratch(2, 333, 777), np.float32))
    one = np.empty((1, 333), np.float32)
    jit.gemm(a[:1], b, one, np.empty(jit.gemm_scratch(1, 333, 777), np.float32))
    assert np.array_equal(one[0].view(np.int32), two[0].view(np.int32))
    want = a[:1].astype(np.float64) @ b.astype(np.float64)
    assert np.abs(one - want).max() < 1e-3
    col = np.empty((333, 1), np.float32)                  # matrix-vector: transposed to (1, 333)
    jit.gemm(b.T.copy(), a[:1].T, col, np.empty(jit.gemm_scratch(333, 1, 777), np.float32))
    assert np.array_equal(col[:, 0].view(np.int32), one[0].view(np.int32))
