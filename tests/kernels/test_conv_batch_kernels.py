"""Whole-batch convolution kernels (conv_forward, conv_backward): JIT against the numpy twins and
by hand, serial and parallel paths and thread counts bit-identical, the weight gradient's order."""
import numpy as np
import pytest

numba = pytest.importorskip("numba", reason="JIT kernel tests need numba (not installed: the ref backend is tested elsewhere)")
from newch.kernels import conv as J
from newch.kernels.ref import conv as R
from .thread_check import outputs_on_1_and_2_threads, run_1_3_4_threads

GEOMS = [  # (N, C, H, W, Co, G, kh, kw, sh, sw, ph, pw, dh, dw)
    (3, 3, 7, 6, 4, 1, 3, 3, 1, 1, 0, 0, 1, 1),
    (5, 4, 9, 8, 6, 2, 3, 2, 2, 1, 1, 2, 1, 2),      # groups, stride, padding, dilation
    (4, 6, 10, 10, 6, 6, 3, 3, 1, 1, 1, 1, 1, 1),    # depthwise
    (9, 8, 20, 20, 16, 1, 3, 3, 1, 1, 1, 1, 1, 1),   # parallel path, runs of unequal length
]


def _out(H, W, kh, kw, sh, sw, ph, pw, dh, dw):
    return (H + 2 * ph - dh * (kh - 1) - 1) // sh + 1, (W + 2 * pw - dw * (kw - 1) - 1) // sw + 1


def _run(mod, geo, dt, par=None, seed=0):
    """(out, dx, dw) of one convolution through ``mod``'s whole-batch kernels."""
    N, C, H, W, Co, G, kh, kw, *rest = geo
    g8 = (kh, kw) + tuple(rest)
    OH, OW = _out(H, W, *g8)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((N, C, H, W)).astype(dt)
    w = rng.standard_normal((Co, C // G, kh, kw)).astype(dt)
    b = rng.standard_normal(Co).astype(dt)
    nslot, lay, colsz, total, p = mod.conv_forward_plan(x.shape, w.shape, G, OH, OW, x.itemsize)
    out = np.full((N, Co, OH * OW), np.nan, dt)
    mod.conv_forward(x, w.reshape(G, Co // G, -1), b, out, np.full(total, np.nan, dt), g8, OH, nslot,
                     lay, colsz, True, p if par is None else par)
    g = rng.standard_normal(out.shape).astype(dt)
    nslot, lw, lx, colsz, wsz, total, p = mod.conv_backward_plan(x.shape, w.shape, G, OH, OW, x.itemsize)
    wt = np.ascontiguousarray(w.reshape(G, Co // G, -1).transpose(0, 2, 1))
    dx, dw = np.full_like(x, np.nan), np.full(w.size, np.nan, dt)
    mod.conv_backward(x, wt, g, dx, dw, np.full(total, np.nan, dt), g8, OH, nslot, lw, lx, colsz,
                      wsz, p if par is None else par)
    return out, dx, dw.reshape(w.shape), (x, w, b, g, OH, OW)


def _direct(x, w, b, g8, OH, OW, G):
    """The convolution by its definition, in float64."""
    kh, kw, sh, sw, ph, pw, dh, dw = g8
    N, C, H, W = x.shape
    Co = w.shape[0]
    xp = np.zeros((N, C, H + 2 * ph, W + 2 * pw))
    xp[:, :, ph:ph + H, pw:pw + W] = x
    out = np.zeros((N, Co, OH, OW)) + b[None, :, None, None]
    Cg, Cog = C // G, Co // G
    for o in range(Co):
        gi = o // Cog
        for c in range(Cg):
            for i in range(kh):
                for j in range(kw):
                    patch = xp[:, gi * Cg + c, i * dh:i * dh + sh * (OH - 1) + 1:sh,
                               j * dw:j * dw + sw * (OW - 1) + 1:sw]
                    out[:, o] += w[o, c, i, j] * patch
    return out


@pytest.mark.parametrize("geo", GEOMS)
def test_forward_matches_the_definition_and_ref(geo):
    out, dx, dw, (x, w, b, g, OH, OW) = _run(J, geo, np.float64)
    want = _direct(x, w, b, (geo[6], geo[7]) + tuple(geo[8:]), OH, OW, geo[5])
    np.testing.assert_allclose(out.reshape(want.shape), want, rtol=1e-12, atol=1e-12)
    r_out, r_dx, r_dw, _ = _run(R, geo, np.float64)
    np.testing.assert_allclose(out, r_out, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dx, r_dx, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dw, r_dw, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("geo", GEOMS)
def test_gradients_are_the_adjoint_of_forward(geo):
    """<conv(x, w), g> is bilinear: its derivatives in x and w are dx and dw."""
    out, dx, dw, (x, w, b, g, OH, OW) = _run(J, geo, np.float64)
    g8 = (geo[6], geo[7]) + tuple(geo[8:])
    zero = np.zeros_like(b)
    base = (_direct(x, w, zero, g8, OH, OW, geo[5]).reshape(g.shape) * g).sum()
    rng = np.random.default_rng(1)
    ex, ew = rng.standard_normal(x.shape), rng.standard_normal(w.shape)
    dx_dir = (_direct(x + ex, w, zero, g8, OH, OW, geo[5]).reshape(g.shape) * g).sum() - base
    dw_dir = (_direct(x, w + ew, zero, g8, OH, OW, geo[5]).reshape(g.shape) * g).sum() - base
    assert np.isclose((dx * ex).sum(), dx_dir, rtol=1e-10)
    assert np.isclose((dw * ew).sum(), dw_dir, rtol=1e-10)


@pytest.mark.parametrize("geo", GEOMS)
def test_serial_and_parallel_paths_give_the_same_bits(geo):
    a = _run(J, geo, np.float32, par=False)
    b = _run(J, geo, np.float32, par=True)
    for u, v in zip(a[:3], b[:3]):
        assert u.tobytes() == v.tobytes()


def test_weight_gradient_runs_are_summed_in_sample_order():
    """N=4, one pixel, one weight: dw = ((g0*x0 + g1*x1) + (g2*x2 + g3*x3)) with nslot 2."""
    x = np.array([1e8, 1.0, -1e8, 1.0], np.float32).reshape(4, 1, 1, 1)
    g = np.ones((4, 1, 1), np.float32)
    nslot, lw, lx, colsz, wsz, total, par = J.conv_backward_plan(x.shape, (1, 1, 1, 1), 1, 1, 1, 4)
    assert nslot == 4          # small: one sample per run, runs added left to right
    dw = np.empty(1, np.float32)
    J.conv_backward(x, np.empty((1, 0, 0), np.float32), g, x[:0], dw, np.empty(total, np.float32),
                    (1, 1, 1, 1, 0, 0, 1, 1), 1, nslot, lw, lx, colsz, wsz, par)
    one, big = np.float32(1), np.float32(1e8)
    # NOTE: float32 operands throughout (numpy < 2 would promote float32 + a Python int to float64)
    assert dw[0] == ((big + one) - big) + one == np.float32(1.0)


def det_outputs():
    res = []
    for geo in GEOMS:
        res += [a.tobytes() for a in _run(J, geo, np.float32)[:3]]
    for geo in DW_GEOMS:
        res += [a.tobytes() for a in _dw_run(J, geo, np.float32, True)[:3]]
    return res


def test_determinism_one_vs_two_threads():
    one, two = outputs_on_1_and_2_threads(det_outputs)
    assert one == two


@pytest.mark.slow
def test_determinism_subprocess_1_3_4_threads():
    res = run_1_3_4_threads("test_conv_batch_kernels")
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip().endswith("SAME"), res.stdout


DW_GEOMS = [  # (N, C, m, H, W, kh, kw, sh, sw, ph, pw, dh, dw)
    (2, 3, 1, 7, 6, 3, 3, 1, 1, 1, 1, 1, 1),
    (3, 2, 2, 9, 8, 3, 2, 2, 1, 1, 2, 1, 2),       # multiplier 2, stride, dilation
    (4, 16, 1, 20, 20, 3, 3, 1, 1, 1, 1, 1, 1),    # parallel path
]


def _dw_run(mod, geo, dt, par):
    N, C, m, H, W, kh, kw, *rest = geo
    g8 = (kh, kw) + tuple(rest)
    OH, OW = _out(H, W, *g8)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((N, C, H, W)).astype(dt)
    w = rng.standard_normal((C * m, 1, kh, kw)).astype(dt)
    b = rng.standard_normal(C * m).astype(dt)
    out = np.full((N, C * m, OH, OW), np.nan, dt)
    mod.depthwise_forward(x, w.reshape(C * m, -1), b, out, g8, True, par)
    g = rng.standard_normal(out.shape).astype(dt)
    dx, dw = np.full_like(x, np.nan), np.full((C * m, kh * kw), np.nan, dt)
    mod.depthwise_input_grad(w.reshape(C * m, -1), g, dx, g8, par)
    mod.depthwise_weight_grad(x, g, dw, g8, par)
    return out, dx, dw.reshape(w.shape), (x, w, b, g, g8, OH, OW, C)


@pytest.mark.parametrize("geo", DW_GEOMS)
def test_depthwise_matches_definition_ref_and_general_path(geo):
    out, dx, dw, (x, w, b, g, g8, OH, OW, C) = _dw_run(J, geo, np.float64, True)
    np.testing.assert_allclose(out, _direct(x, w, b, g8, OH, OW, C), rtol=1e-12, atol=1e-12)
    r = _dw_run(R, geo, np.float64, False)
    for u, v in zip((out, dx, dw), r[:3]):
        np.testing.assert_allclose(u, v, rtol=1e-12, atol=1e-12)
    # the whole-batch GEMM path with groups=C computes the same gradients
    N, Co = x.shape[0], w.shape[0]
    nslot, lw, lx, colsz, wsz, total, p = J.conv_backward_plan(x.shape, w.shape, C, OH, OW, 8)
    gdx, gdw = np.empty_like(x), np.empty(w.size)
    J.conv_backward(x, np.ascontiguousarray(w.reshape(C, Co // C, -1).transpose(0, 2, 1)),
                    g.reshape(N, Co, -1), gdx, gdw, np.empty(total), g8, OH, nslot, lw, lx, colsz,
                    wsz, p)
    np.testing.assert_allclose(dx, gdx, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dw, gdw.reshape(w.shape), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("geo", DW_GEOMS)
def test_depthwise_serial_and_parallel_give_the_same_bits(geo):
    a, b = _dw_run(J, geo, np.float32, False), _dw_run(J, geo, np.float32, True)
    for u, v in zip(a[:3], b[:3]):
        assert u.tobytes() == v.tobytes()
