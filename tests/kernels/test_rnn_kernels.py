"""Fused LSTM kernels and rows_matmul: the JIT kernels against their numpy twins and a plain
numpy LSTM step, on serial and parallel sizes, and bit-identical on 1 and 2 threads."""
import numpy as np
import pytest

numba = pytest.importorskip("numba", reason="JIT kernel tests need numba (not installed: the ref backend is tested elsewhere)")
from newch.kernels import rnn as jr
from newch.kernels.ref import rnn as rr

from .thread_check import outputs_on_1_and_2_threads

RNG = np.random.default_rng(14)
SHAPES = [(1, 1), (3, 5), (20, 200), (300, 256)]     # (B, H); the last runs in parallel


def _sig(x):
    return 1.0 / (1.0 + np.exp(-x))


def _case(B, H, dtype):
    r = lambda *s: RNG.standard_normal(s).astype(dtype)   # noqa: E731
    return r(B, 4 * H), r(B, 4 * H), r(4 * H), r(B, H), r(B, H), r(B, H), r(B, H)


def _run(K, gx, rec, bias, c0, dh_out, dh_rec, dc):
    B, H = c0.shape
    g, c, h = gx.copy(), np.empty_like(c0), np.empty_like(c0)
    K.lstm_cell_forward(g, rec, bias, c0, c, h)
    acts = g.copy()
    dcv = dc.copy()
    K.lstm_cell_backward(g, c0, c, dh_out, dh_rec, dcv)
    return acts, c, h, g, dcv


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lstm_cell_kernels_match_ref_and_numpy(shape, dtype):
    args = _case(*shape, dtype)
    jit, ref = _run(jr, *args), _run(rr, *args)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for a, b in zip(jit, ref):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
    # a plain LSTM step and its hand-derived gradient, in float64
    gx, rec, bias, c0, dh_out, dh_rec, dc = [a.astype(np.float64) for a in args]
    H = c0.shape[1]
    pre = gx + rec + bias
    i, f, g, o = _sig(pre[:, :H]), _sig(pre[:, H:2 * H]), np.tanh(pre[:, 2 * H:3 * H]), _sig(pre[:, 3 * H:])
    c = f * c0 + i * g
    h = o * np.tanh(c)
    np.testing.assert_allclose(jit[1], c, rtol=tol * 10, atol=tol * 10)
    np.testing.assert_allclose(jit[2], h, rtol=tol * 10, atol=tol * 10)
    dh = dh_out + dh_rec
    dct = dc + dh * o * (1 - np.tanh(c) ** 2)
    want = np.concatenate([dct * g * i * (1 - i), dct * c0 * f * (1 - f), dct * i * (1 - g * g),
                           dh * np.tanh(c) * o * (1 - o)], 1)
    np.testing.assert_allclose(jit[3], want, rtol=tol * 10, atol=tol * 10)
    np.testing.assert_allclose(jit[4], dct * f, rtol=tol * 10, atol=tol * 10)


@pytest.mark.parametrize("mkn", [(1, 1, 1), (7, 5, 3), (20, 800, 200), (130, 300, 70)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rows_matmul_matches_numpy_with_any_strides(mkn, dtype):
    m, k, n = mkn
    a = RNG.standard_normal((k, m)).astype(dtype).T          # a transposed view
    b = RNG.standard_normal((k, n)).astype(dtype)
    out = np.full((m, n), np.nan, dtype)
    jr.rows_matmul(a, b, out, False)
    tol = 1e-4 if dtype == np.float32 else 1e-11
    np.testing.assert_allclose(out, a.astype(np.float64) @ b, rtol=tol, atol=tol)
    out2 = np.empty_like(out)
    rr.rows_matmul(a, b, out2, False)
    np.testing.assert_allclose(out, out2, rtol=tol, atol=tol)
    # accumulate: the sums continue from what out held
    start = RNG.standard_normal((m, n)).astype(dtype)
    acc, acc2 = start.copy(), start.copy()
    jr.rows_matmul(a, b, acc, True)
    rr.rows_matmul(a, b, acc2, True)
    want = start.astype(np.float64) + a.astype(np.float64) @ b
    np.testing.assert_allclose(acc, want, rtol=tol, atol=tol * 4)
    np.testing.assert_allclose(acc2, want, rtol=tol, atol=tol * 4)


def test_bad_shapes_raise():
    gx, rec, bias, c0, *_ = _case(2, 3, np.float32)
    with pytest.raises(ValueError, match="lstm_cell_forward"):
        jr.lstm_cell_forward(gx, rec, bias[:-1], c0, c0.copy(), c0.copy())
    with pytest.raises(ValueError, match="rows_matmul"):
        jr.rows_matmul(np.ones((2, 3)), np.ones((4, 2)), np.empty((2, 2)), False)


def test_bit_identical_on_1_and_2_threads():
    args = _case(300, 256, np.float32)
    a = RNG.standard_normal((400, 700)).astype(np.float32)
    b = RNG.standard_normal((400, 90)).astype(np.float32)

    def det_outputs():
        out = np.empty((700, 90), np.float32)
        jr.rows_matmul(a.T, b, out, False)
        acc = np.ones((700, 90), np.float32)
        jr.rows_matmul(a.T, b, acc, True)
        out = np.concatenate([out, acc])
        return [x.tobytes() for x in _run(jr, *args)] + [out.tobytes()]
    one, two = outputs_on_1_and_2_threads(det_outputs)
    assert one == two
