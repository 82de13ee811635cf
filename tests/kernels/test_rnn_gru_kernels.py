"""Fused GRU and Elman RNN cell kernels: the JIT kernels against their numpy twins and a plain
numpy step with hand-derived gradients, on serial and parallel sizes, float32 and float64, and
bit-identical on 1 and 2 threads."""
import numpy as np
import pytest

numba = pytest.importorskip("numba", reason="JIT kernel tests need numba (not installed: the ref backend is tested elsewhere)")
from newch.kernels import rnn as jr
from newch.kernels.ref import rnn as rr

from .thread_check import outputs_on_1_and_2_threads

RNG = np.random.default_rng(41)
SHAPES = [(1, 1), (3, 5), (20, 200), (300, 256)]     # (B, H); the last runs in parallel


def _sig(x):
    return 1.0 / (1.0 + np.exp(-x))


def _gru_case(B, H, dtype):
    r = lambda *s: RNG.standard_normal(s).astype(dtype)   # noqa: E731
    return r(B, 3 * H), r(B, 3 * H), r(3 * H), r(3 * H), r(B, H), r(B, H), r(B, H)


def _gru_run(K, gx, rec, b_ih, b_hh, h0, dh_out, dh_rec):
    g, hn, h = gx.copy(), np.empty_like(h0), np.empty_like(h0)
    K.gru_cell_forward(g, rec, b_ih, b_hh, h0, hn, h)
    acts, hn_saved = g.copy(), hn.copy()
    dh, dgh = dh_rec.copy(), np.empty_like(gx)
    K.gru_cell_backward(g, hn, h0, dh_out, dh, dgh)
    return acts, hn_saved, h, g, hn, dh, dgh


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gru_cell_kernels_match_ref_and_numpy(shape, dtype):
    args = _gru_case(*shape, dtype)
    jit, ref = _gru_run(jr, *args), _gru_run(rr, *args)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for a, b in zip(jit, ref):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
    gx, rec, b_ih, b_hh, h0, dh_out, dh_rec = [a.astype(np.float64) for a in args]
    H = h0.shape[1]
    xi, hh = gx + b_ih, rec + b_hh
    r, z = _sig(xi[:, :H] + hh[:, :H]), _sig(xi[:, H:2 * H] + hh[:, H:2 * H])
    n = np.tanh(xi[:, 2 * H:] + r * hh[:, 2 * H:])
    h = (1 - z) * n + z * h0
    t = tol * 10
    np.testing.assert_allclose(jit[0], np.concatenate([r, z, n], 1), rtol=t, atol=t)
    np.testing.assert_allclose(jit[2], h, rtol=t, atol=t)
    g = dh_out + dh_rec
    dn = g * (1 - z) * (1 - n * n)
    dr = dn * hh[:, 2 * H:] * r * (1 - r)
    dz = g * (h0 - n) * z * (1 - z)
    np.testing.assert_allclose(jit[3], np.concatenate([dr, dz, dn], 1), rtol=t, atol=t)
    np.testing.assert_allclose(jit[4], dn * r, rtol=t, atol=t)
    np.testing.assert_allclose(jit[5], g * z, rtol=t, atol=t)
    np.testing.assert_allclose(jit[6], np.concatenate([dr, dz, dn * r], 1), rtol=t, atol=t)


def _rnn_run(K, gx, rec, bias, dh_out, dh_rec, relu):
    h = np.empty_like(dh_out)
    K.rnn_cell_forward(gx, rec, bias, h, relu)
    dpre = np.empty_like(h)
    K.rnn_cell_backward(h, dh_out, dh_rec, dpre, relu)
    return h, dpre


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("relu", [False, True])
def test_rnn_cell_kernels_match_ref_and_numpy(shape, dtype, relu):
    B, H = shape
    r = lambda *s: RNG.standard_normal(s).astype(dtype)   # noqa: E731
    args = (r(B, H), r(B, H), r(H), r(B, H), r(B, H))
    jit, ref = _rnn_run(jr, *args, relu), _rnn_run(rr, *args, relu)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for a, b in zip(jit, ref):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
    gx, rec, bias, dh_out, dh_rec = [a.astype(np.float64) for a in args]
    v = gx + rec + bias
    h = np.maximum(v, 0) if relu else np.tanh(v)
    g = dh_out + dh_rec
    np.testing.assert_allclose(jit[0], h, rtol=tol * 10, atol=tol * 10)
    np.testing.assert_allclose(jit[1], g * (v > 0) if relu else g * (1 - h * h),
                               rtol=tol * 10, atol=tol * 10)


def test_bad_shapes_raise():
    gx, rec, b_ih, b_hh, h0, *_ = _gru_case(2, 3, np.float32)
    for K in (jr, rr):
        with pytest.raises(ValueError, match="gru_cell_forward"):
            K.gru_cell_forward(gx, rec, b_ih[:-1], b_hh, h0, h0.copy(), h0.copy())
        with pytest.raises(ValueError, match="gru_cell_backward"):
            K.gru_cell_backward(gx, h0.copy(), h0, h0, h0.copy(), gx[:, :3].copy())
        with pytest.raises(ValueError, match="rnn_cell_forward"):
            K.rnn_cell_forward(h0, h0, b_ih, h0.copy(), False)
        with pytest.raises(ValueError, match="rnn_cell_backward"):
            K.rnn_cell_backward(h0, h0, h0, gx, True)


def test_bit_identical_on_1_and_2_threads():
    gargs = _gru_case(300, 256, np.float32)
    r = lambda *s: RNG.standard_normal(s).astype(np.float32)   # noqa: E731
    rargs = (r(300, 256), r(300, 256), r(256), r(300, 256), r(300, 256))

    def det_outputs():
        outs = list(_gru_run(jr, *gargs)) + list(_rnn_run(jr, *rargs, False)) \
            + list(_rnn_run(jr, *rargs, True))
        return [x.tobytes() for x in outs]
    one, two = outputs_on_1_and_2_threads(det_outputs)
    assert one == two
