"""gemm's narrow tile (C of at most one vector of columns), its transposed C (``out.T``) and
the operands it reads in place (an i- or k-contiguous A, a row-contiguous B).

Each changes only how C is tiled, stored or read, never an element's FMA chain, so they must
give the bits of the wide tile, of a C-contiguous out and of packed operands. The wide tile's bits for a
narrow C are the first columns of a wider product: each element is its own chain over k.
"""
import hashlib
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
pytest.importorskip("numba", reason="JIT kernel tests need numba")

from newch.kernels import matmul as jit
from newch.kernels.gemm_tile import NV, VBYTES

GUARD = 1 << 12


def _gemm(a, b, out, accumulate=False):
    (M, K), N = a.shape, b.shape[1]
    n = jit.gemm_scratch(M, N, K)
    buf = np.full(n + GUARD, 7.0, a.dtype)
    buf[:n] = np.nan
    jit.gemm(a, b, out, buf[:n], accumulate)
    assert np.all(buf[n:] == 7.0), "wrote past the end of scratch"
    return out


def _exact_close(out, a, b):
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    tol = (a.shape[1] + 2) * np.finfo(a.dtype).eps * (np.abs(a64) @ np.abs(b64)) + 1e-300
    assert np.all(np.abs(out - a64 @ b64) <= tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("M, K, N", [(64, 256, 10), (7, 5, 3), (13, 600, 2), (100, 100, 8),
                                     (6, 1000, 9), (97, 513, 15), (300, 1100, 16), (5, 3, 4)])
def test_narrow_tile_gives_the_wide_tiles_bits(dtype, M, K, N):
    lanes = VBYTES // np.dtype(dtype).itemsize
    if N > lanes:
        pytest.skip("C wider than one vector: the wide tile")
    rng = np.random.default_rng(M * N + K)
    a = rng.standard_normal((M, K)).astype(dtype)
    b = rng.standard_normal((K, N)).astype(dtype)
    narrow = _gemm(a, b, np.full((M, N), np.nan, dtype))
    # NOTE: NV * lanes + 1 columns: certainly the wide tile; the first N columns are a @ b
    wide_b = np.concatenate([b, rng.standard_normal((K, NV * lanes + 1 - N)).astype(dtype)], 1)
    wide = _gemm(a, wide_b, np.full((M, wide_b.shape[1]), np.nan, dtype))
    assert narrow.tobytes() == np.ascontiguousarray(wide[:, :N]).tobytes()
    _exact_close(narrow, a, b)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("M, K, N", [(256, 784, 64), (64, 256, 10), (13, 700, 100), (7, 9, 5),
                                     (130, 1030, 200), (2, 3, 70)])
@pytest.mark.parametrize("accumulate", [False, True])
def test_transposed_out_gives_the_bits_of_a_contiguous_out(dtype, M, K, N, accumulate):
    rng = np.random.default_rng(M + K + N)
    a = rng.standard_normal((M, K)).astype(dtype)
    b = rng.standard_normal((N, K)).astype(dtype).T          # strided, as w.T
    start = rng.standard_normal((M, N)).astype(dtype)
    plain = _gemm(a, b, start.copy(), accumulate)
    t = np.ascontiguousarray(start.T)                          # (N, M) C-contiguous
    for _ in range(2):                                         # first call plans, second reuses
        tt = t.copy()
        _gemm(a, b, tt.T, accumulate)
        assert tt.T.tobytes() == np.ascontiguousarray(plain).tobytes()
    if not accumulate:
        _exact_close(plain, a, b)


def test_batched_transposed_out():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 20, 30)).astype(np.float32)
    b = rng.standard_normal((3, 30, 40)).astype(np.float32)
    s = np.empty(jit.bgemm_scratch(3, 20, 40, 30), np.float32)
    plain = np.empty((3, 20, 40), np.float32)
    jit.bgemm(a, b, plain, s)
    t = np.full((3, 40, 20), np.nan, np.float32)
    jit.bgemm(a, b, t.transpose(0, 2, 1), s)
    assert np.ascontiguousarray(t.transpose(0, 2, 1)).tobytes() == plain.tobytes()


def test_an_out_neither_c_nor_transposed_is_refused():
    a, b = np.ones((6, 12), np.float32), np.ones((12, 20), np.float32)
    s = np.empty(jit.gemm_scratch(6, 20, 12), np.float32)
    with pytest.raises(ValueError, match="matmul"):
        jit.gemm(a, b, np.empty((6, 40), np.float32)[:, ::2], s)


@pytest.mark.slow
def test_narrow_and_transposed_products_have_the_same_bits_on_one_and_two_threads():
    code = textwrap.dedent("""
        import hashlib, sys, numba, numpy as np
        from newch.kernels import matmul as jit
        numba.set_num_threads(int(sys.argv[1]))
        rng = np.random.default_rng(0)
        h = hashlib.sha256()
        for M, K, N in [(600, 700, 10), (256, 784, 64), (640, 300, 16), (96, 2000, 130)]:
            a = rng.standard_normal((M, K)).astype(np.float32)
            b = rng.standard_normal((N, K)).astype(np.float32).T
            s = np.empty(jit.gemm_scratch(M, N, K), np.float32)
            t = np.empty((N, M), np.float32)
            jit.gemm(a, b, t.T, s)
            o = np.empty((M, N), np.float32)
            jit.gemm(a, b, o, s)
            h.update(t.tobytes()); h.update(o.tobytes())
        print(h.hexdigest())
    """)
    env = dict(os.environ, NUMBA_NUM_THREADS="2")
    outs = [subprocess.run([sys.executable, "-c", code, str(n)], capture_output=True, text=True,
                           env=env, check=True).stdout.strip() for n in (1, 2)]
    assert outs[0] == outs[1] and len(outs[0]) == len(hashlib.sha256().hexdigest())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("M, K, N", [(256, 64, 784), (13, 700, 100), (7, 9, 5), (64, 10, 256)])
def test_every_layout_of_a_gives_the_same_bits(dtype, M, K, N):
    # NOTE: k-contiguous and i-contiguous A are read in place, other strides packed
    rng = np.random.default_rng(K)
    a = rng.standard_normal((M, K)).astype(dtype)
    b = rng.standard_normal((K, N)).astype(dtype)
    wide = np.zeros((2 * M, 3 * K), dtype)
    wide[::2, ::3] = a
    outs = [_gemm(x, b, np.full((M, N), np.nan, dtype)).tobytes()
            for x in (a, np.asfortranarray(a), wide[::2, ::3])]
    assert outs[0] == outs[1] == outs[2]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("M, K, N", [(256, 64, 784), (10, 64, 256), (64, 10, 256), (13, 700, 100),
                                     (7, 9, 5), (50, 1030, 130), (96, 40, 128), (64, 784, 256)])
@pytest.mark.parametrize("accumulate", [False, True])
def test_b_read_in_place_gives_the_packed_bits(dtype, M, K, N, accumulate):
    # NOTE: a row-contiguous B is read in place (its last partial panel packed); a B with
    # strided rows is packed whole: the same chains, the same bits
    rng = np.random.default_rng(N)
    a = rng.standard_normal((M, K)).astype(dtype)
    b = rng.standard_normal((K, N)).astype(dtype)
    start = rng.standard_normal((M, N)).astype(dtype)
    direct = _gemm(a, b, start.copy(), accumulate)
    again = _gemm(a, b, start.copy(), accumulate)          # the planned path
    wide = np.zeros((K, 2 * N), dtype)
    wide[:, ::2] = b
    packed = _gemm(a, wide[:, ::2], start.copy(), accumulate)
    wide[:, :N] = b
    sliced = _gemm(a, wide[:, :N], start.copy(), accumulate)     # in place, row stride 2N
    assert direct.tobytes() == again.tobytes() == packed.tobytes() == sliced.tobytes()
    if not accumulate:
        _exact_close(direct, a, b)


def test_b_in_place_only_where_its_row_stride_does_not_alias():
    assert jit._reads_b_in_place((0, 784 * 4, 4), 4, 64)
    assert not jit._reads_b_in_place((0, 1024 * 4, 4), 4, 1024)      # 4 KiB rows: packed
    assert jit._reads_b_in_place((0, 1024 * 4, 4), 4, 64)            # short panels: in place
    assert not jit._reads_b_in_place((0, 8, 8), 4, 10)               # strided rows: packed


def test_batched_b_read_in_place():
    rng = np.random.default_rng(4)
    a = rng.standard_normal((3, 20, 30)).astype(np.float32)
    b = rng.standard_normal((3, 30, 70)).astype(np.float32)
    s = np.empty(jit.bgemm_scratch(3, 20, 70, 30), np.float32)
    outs = []
    for bb in (b, np.ascontiguousarray(b.transpose(0, 2, 1)).transpose(0, 2, 1), b.copy()):
        o = np.full((3, 20, 70), np.nan, np.float32)
        jit.bgemm(a, bb, o, s)
        outs.append(o.tobytes())
    assert outs[0] == outs[1] == outs[2]
    shared = np.empty((3, 20, 70), np.float32)
    jit.bgemm(a, np.broadcast_to(b[:1], b.shape), shared, s)       # stride 0 on the batch axis
    each = np.empty((3, 20, 70), np.float32)
    jit.bgemm(a, np.repeat(b[:1], 3, 0), each, s)
    assert shared.tobytes() == each.tobytes()
