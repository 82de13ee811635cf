"""One-row products (``vecmat``): a row of C computed alone must have the bits of the same row
inside a many-row product on the blocked path, for every layout of B the kernel reads in its
own way (contiguous rows, contiguous columns through the in-register transpose, anything else).

The reference is the blocked gemm on a 7-row A holding the row, with B given at least two
columns (so it is not itself a one-row or one-column product): each C element is its own FMA
chain over k, so the row and the columns it shares with the reference must match exactly.
numpy checks the values themselves.
"""
import numpy as np
import pytest
pytest.importorskip("numba", reason="JIT kernel tests need numba")

from newch.kernels import matmul as jit
from newch.kernels.gemm_tile import NV, VBYTES
from newch.kernels.vecmat import vec_cols

from .thread_check import outputs_on_1_and_2_threads

DTYPES = [np.float32, np.float64]
RNG = np.random.default_rng(1234)


def _lanes(dtype):
    return VBYTES // np.dtype(dtype).itemsize


def _blocked_rows(a, b, acc=None):
    """a (B, 1, K) @ b (B, K, N) (+ acc) through the blocked path: row 3 of a 7-row product."""
    B, _, K = a.shape
    N = b.shape[2]
    A = RNG.standard_normal((B, 7, K)).astype(a.dtype)
    A[:, 3] = a[:, 0]
    Bm = np.concatenate([b, RNG.standard_normal((B, K, 2)).astype(a.dtype)], axis=2)
    out = np.zeros((B, 7, N + 2), a.dtype)
    if acc is not None:
        out[:, 3, :N] = acc[:, 0]
    jit.bgemm(A, Bm, out, np.empty(jit.bgemm_scratch(B, 7, N + 2, K), a.dtype),
              acc is not None)
    return out[:, 3:4, :N]


def _vecmat(a, b, out=None, accumulate=False):
    B, _, K = a.shape
    N = b.shape[2]
    assert jit.bgemm_scratch(B, 1, N, K) == 0
    out = np.full((B, 1, N), np.nan, a.dtype) if out is None else out
    jit.bgemm(a, b, out, np.empty(0, a.dtype), accumulate)
    return out


def _same_bits(x, y):
    assert x.shape == y.shape and x.dtype == y.dtype
    assert np.array_equal(x.view(np.uint8), y.view(np.uint8)), np.abs(x - y).max()


def _close(out, a, b):
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    tol = (a.shape[2] + 2) * np.finfo(a.dtype).eps * (np.abs(a64) @ np.abs(b64)) + 1e-300
    assert np.all(np.abs(out - a64 @ b64) <= tol)


def _b(layout, K, N, dtype, B=1):
    """B (B, K, N) in ``layout``: rows / cols contiguous, strided, or with negative strides."""
    if layout == "rows":
        return RNG.standard_normal((B, K, N)).astype(dtype)
    if layout == "cols":
        return RNG.standard_normal((B, N, K)).astype(dtype).transpose(0, 2, 1)
    if layout == "strided":
        return RNG.standard_normal((B, 2 * K, 3 * N)).astype(dtype)[:, ::2, ::3]
    if layout == "reversed_rows":
        return RNG.standard_normal((B, K, N)).astype(dtype)[:, ::-1]
    if layout == "reversed_cols":
        return RNG.standard_normal((B, N, K)).astype(dtype)[:, ::-1].transpose(0, 2, 1)
    raise AssertionError(layout)


def _sizes(dtype):
    L = _lanes(dtype)
    W = vec_cols(np.dtype(dtype).itemsize)
    return L, W, sorted({1, 2, L - 1, L, L + 1, 2 * L + 3, W, W + L + 1, 2 * W + 5}), \
        sorted({1, L - 1, L, L + 1, 3 * L + 2, 784})


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["rows", "cols", "strided", "reversed_rows", "reversed_cols"])
def test_row_matches_blocked_row_bit_for_bit(dtype, layout):
    _, _, ns, ks = _sizes(dtype)
    for N in ns:
        for K in ks:
            a = RNG.standard_normal((1, 1, K)).astype(dtype)
            b = _b(layout, K, N, dtype)
            out = _vecmat(a, b)
            _same_bits(out, _blocked_rows(a, b))
            _close(out, a, b)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["rows", "cols", "strided"])
def test_accumulate_continues_each_chain(dtype, layout):
    """out += a @ b over K split in two gives the whole product's bits, and the blocked path's."""
    L, W, _, _ = _sizes(dtype)
    N, K = W + L + 3, 5 * L + 3
    a = RNG.standard_normal((1, 1, K)).astype(dtype)
    b = _b(layout, K, N, dtype)
    whole = _vecmat(a, b)
    for cut in (1, L, 2 * L + 1):
        out = _vecmat(a[:, :, :cut], b[:, :cut])
        _vecmat(a[:, :, cut:], b[:, cut:], out, accumulate=True)
        _same_bits(out, whole)
    start = RNG.standard_normal((1, 1, N)).astype(dtype)
    _same_bits(_vecmat(a, b, start.copy(), accumulate=True), _blocked_rows(a, b, start))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("order", ["C", "F"])
def test_matrix_vector_is_a_transposed_row(dtype, order):
    """A (M, K) @ v (K, 1): computed as one row v^T @ A^T; its bits equal the blocked column's."""
    for M, K in ((2, 3), (_lanes(dtype) + 1, 2 * _lanes(dtype) + 1), (70, 784)):
        A = np.asarray(RNG.standard_normal((1, M, K)).astype(dtype), order=order)
        v = RNG.standard_normal((1, K, 1)).astype(dtype)
        out = np.full((1, M, 1), np.nan, dtype)
        jit.bgemm(A, v, out, np.empty(jit.bgemm_scratch(1, M, 1, K), dtype))
        wide = np.concatenate([v, RNG.standard_normal((1, K, 3)).astype(dtype)], axis=2)
        ref = np.empty((1, M, 4), dtype)
        jit.bgemm(A, wide, ref, np.empty(jit.bgemm_scratch(1, M, 4, K), dtype))
        _same_bits(out, ref[:, :, :1])
        _close(out, A, v)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["rows", "cols"])
def test_batched_and_broadcast_operands(dtype, layout):
    L, W, _, _ = _sizes(dtype)
    B, N, K = 3, W + 2 * L + 1, 4 * L + 1
    a = RNG.standard_normal((B, 1, K)).astype(dtype)
    b = _b(layout, K, N, dtype, B)
    out = _vecmat(a, b)
    _same_bits(out, _blocked_rows(a, b))
    # a stride-0 batch axis broadcasts one operand over the batch
    b1 = np.broadcast_to(b[:1], b.shape)
    _same_bits(_vecmat(a, b1), _blocked_rows(a, np.ascontiguousarray(b1)))
    a1 = np.broadcast_to(a[:1], a.shape)
    _same_bits(_vecmat(a1, b), _blocked_rows(np.ascontiguousarray(a1), b))


def test_gemm_2d_and_numpy_values():
    """The 2-D launcher: x @ w.T and x @ w at batch 1, against numpy."""
    for dtype in DTYPES:
        x = RNG.standard_normal((1, 784)).astype(dtype)
        w = RNG.standard_normal((256, 784)).astype(dtype)
        for b in (w.T, np.ascontiguousarray(w.T)):
            out = np.empty((1, 256), dtype)
            jit.gemm(x, b, out, np.empty(jit.gemm_scratch(1, 256, 784), dtype))
            _close(out[None], x[None], b[None])
            _same_bits(out[None], _blocked_rows(x[None], b[None]))


def _det_outputs():
    outs = []
    for dtype in DTYPES:
        for layout in ("rows", "cols", "strided"):
            r = np.random.default_rng(7)
            B, K, N = 4, 784, 512      # B*N*K over SERIAL_WORK: the parallel launch
            a = r.standard_normal((B, 1, K)).astype(dtype)
            b = (r.standard_normal((B, K, N)).astype(dtype) if layout == "rows" else
                 r.standard_normal((B, N, K)).astype(dtype).transpose(0, 2, 1) if layout == "cols"
                 else r.standard_normal((B, K, 2 * N)).astype(dtype)[:, :, ::2])
            outs.append(_vecmat(a, b).tobytes())
    return outs


def test_same_bits_on_1_and_2_threads():
    assert jit.SERIAL_WORK <= 4 * 784 * 512
    one, two = outputs_on_1_and_2_threads(_det_outputs)
    assert one == two


def test_one_task_owns_whole_vectors():
    """A task's block is 2*NV vectors of columns: a whole number of every tile the kernel uses."""
    for dtype in DTYPES:
        size = np.dtype(dtype).itemsize
        assert vec_cols(size) == 2 * NV * _lanes(dtype)
        assert vec_cols(size) % _lanes(dtype) == 0


def test_a_repeated_row_product_still_checks_its_arguments():
    """The second call of a shape takes a shorter path; bad arguments still raise, untouched."""
    x = RNG.standard_normal((1, 40)).astype(np.float32)
    w = RNG.standard_normal((40, 24)).astype(np.float32)
    none = np.empty(0, np.float32)
    for _ in range(2):
        out = np.empty((1, 24), np.float32)
        jit.gemm(x, w, out, none)
        _same_bits(out[None], _blocked_rows(x[None], w[None]))
    bad = [(x, w, np.zeros((1, 24), np.float64), TypeError),
           (x, w, np.zeros((1, 48), np.float32)[:, ::2], ValueError),
           (x[:, :30], w, np.zeros((1, 24), np.float32), ValueError),
           (x.astype(np.float64), w, np.zeros((1, 24), np.float32), TypeError)]
    for a, b, o, err in bad:
        before = o.copy()
        with pytest.raises(err, match="matmul"):
            jit.gemm(a, b, o, none)
        assert np.array_equal(o, before)
