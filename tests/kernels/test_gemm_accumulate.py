"""gemm(..., accumulate=True): out += a @ b, each chain continued from out.

Products over consecutive K ranges accumulated in order must give the bits of one product over
the whole K (that is what lets the LSTM backward cut its weight-gradient products into small
pieces with small packing scratch and still get the same gradients), on 1 and 2 threads.
"""
import numpy as np
import pytest

numba = pytest.importorskip("numba", reason="JIT kernel tests need numba (not installed: the ref backend is tested elsewhere)")
from newch.kernels import matmul as jit
from newch.kernels.ref import matmul as ref

from .thread_check import outputs_on_1_and_2_threads

RNG = np.random.default_rng(141)
SHAPES = [(1, 7, 9), (7, 1, 9), (13, 29, 31), (120, 200, 140), (800, 200, 700)]   # (M, N, K)


def _chunked(a, b, cuts, transpose_a=False):
    """a @ b as gemm over K pieces [cuts[i], cuts[i+1]) accumulated in order into zeros."""
    M, N = a.shape[0], b.shape[1]
    out = np.zeros((M, N), a.dtype)
    for k0, k1 in zip(cuts[:-1], cuts[1:]):
        s = np.empty(jit.gemm_scratch(M, N, k1 - k0), a.dtype)
        jit.gemm(a[:, k0:k1], b[k0:k1], out, s, accumulate=True)
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("M,N,K", SHAPES)
def test_pieces_accumulated_give_the_one_product_bits(M, N, K, dtype):
    # a is a transposed view (k not contiguous, packed) as a weight gradient's dG^T is
    a = RNG.standard_normal((K, M)).astype(dtype).T
    b = RNG.standard_normal((K, N)).astype(dtype)
    whole = np.empty((M, N), dtype)
    jit.gemm(a, b, whole, np.empty(jit.gemm_scratch(M, N, K), dtype))
    cuts = sorted({0, K, K // 3, K // 2, min(K, 5)})
    assert np.array_equal(_chunked(a, b, cuts), whole)
    ref_out = np.empty((M, N), dtype)
    ref.gemm(a, b, ref_out, None)
    tol = 1e-4 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(whole, ref_out, rtol=tol, atol=tol * np.sqrt(K))


@pytest.mark.parametrize("accumulate", [False, True])
def test_accumulate_adds_to_what_out_held(accumulate):
    a = RNG.standard_normal((33, 40))
    b = RNG.standard_normal((40, 17))
    start = RNG.standard_normal((33, 17))
    got, want = start.copy(), start.copy()
    jit.gemm(a, b, got, np.empty(jit.gemm_scratch(33, 17, 40)), accumulate=accumulate)
    ref.gemm(a, b, want, None, accumulate=accumulate)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    if not accumulate:
        np.testing.assert_allclose(got, a @ b, rtol=1e-12, atol=1e-12)
    else:
        np.testing.assert_allclose(got, start + a @ b, rtol=1e-12, atol=1e-12)


def test_empty_k_leaves_out_when_accumulating():
    out = np.ones((3, 4), np.float32)
    jit.gemm(np.empty((3, 0), np.float32), np.empty((0, 4), np.float32), out,
             np.empty(0, np.float32), accumulate=True)
    assert (out == 1).all()
    jit.gemm(np.empty((3, 0), np.float32), np.empty((0, 4), np.float32), out, np.empty(0, np.float32))
    assert (out == 0).all()


def _det_outputs():
    a = np.random.default_rng(5).standard_normal((700, 800)).astype(np.float32).T
    b = np.random.default_rng(6).standard_normal((700, 200)).astype(np.float32)
    return _chunked(a, b, [0, 100, 350, 700]).tobytes()


def test_accumulated_pieces_same_bits_on_1_and_2_threads():
    one, two = outputs_on_1_and_2_threads(_det_outputs)
    assert one == two
