"""Convolution, pooling and relu-mask kernels: JIT against the numpy twins, by hand, thread counts."""
import numpy as np
import pytest

numba = pytest.importorskip("numba", reason="JIT kernel tests need numba (not installed: the ref backend is tested elsewhere)")
from newch.kernels import conv as J_conv, mask as J_mask, pool as J_pool
from newch.kernels.ref import conv as R_conv, mask as R_mask, pool as R_pool
from newch.ops.pool import adaptive_windows, out_len, windows
from .thread_check import outputs_on_1_and_2_threads, run_1_3_4_threads


def test_ref_im2col_by_hand():
    # the ref twin's unfolding, which ref conv_forward / conv_backward (the JIT kernels' oracle) use
    x = np.arange(9.0).reshape(1, 1, 3, 3)
    col = np.empty((1, 4, 4))
    R_conv._im2col(x, col, 2, 2, 1, 1, 0, 0, 1, 1, 2)
    assert col[0].tolist() == [[0, 1, 3, 4], [1, 2, 4, 5], [3, 4, 6, 7], [4, 5, 7, 8]]
    R_conv._im2col(x, col, 2, 2, 2, 2, 1, 1, 1, 1, 2)       # padding 1, stride 2
    assert col[0].tolist() == [[0, 0, 0, 4], [0, 0, 3, 5], [0, 1, 0, 7], [0, 2, 6, 8]]


def test_channel_sum_matches_ref():
    g = np.random.default_rng(1).standard_normal((5, 7, 1001)).astype(np.float32)
    a, b = np.empty(7, np.float32), np.empty(7, np.float32)
    J_conv.channel_sum(g, a)
    R_conv.channel_sum(g, b)
    np.testing.assert_allclose(a, b, rtol=1e-6)


def _regular(n, k, s, p, d, ceil):
    o = out_len("t", n, k, s, p, d, ceil)
    return windows(n, o, k, s, p, d) + (o,)


@pytest.mark.parametrize("dims", [
    ((24, 2, 2, 0, 1, False), (24, 2, 2, 0, 1, False)),
    ((9, 3, 2, 1, 1, True), (7, 2, 1, 1, 2, False)),
    ((30, 3, 3, 1, 1, True), (33, 4, 2, 2, 1, True)),
])
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_pool_kernels_match_ref(dims, dt):
    (hs, hc, hden, OH), (ws, wc, wden, OW) = (_regular(*d) for d in dims)
    dh, dw = dims[0][4], dims[1][4]
    H, W = dims[0][0], dims[1][0]
    rng = np.random.default_rng(2)
    x = rng.standard_normal((40, H, W)).astype(dt)
    x[0, 0, :3] = np.nan
    res = []
    for K in (J_pool, R_pool):
        out, arg = np.empty((40, OH, OW), dt), np.empty((40, OH, OW), np.uint8)
        K.max_pool(x, out, arg, hs, hc, ws, wc, dh, dw)
        g = np.ones_like(out)
        dx = np.empty_like(x)
        K.max_pool_backward(g, arg, hs, hc, ws, wc, dh, dw, dx)
        aout, adx = np.empty((40, OH, OW), dt), np.empty_like(x)
        if dh == dw == 1:
            K.avg_pool(x, aout, hs, hc, ws, wc, hden.astype(dt), wden.astype(dt), dt(0))
            K.avg_pool_backward(g, hs, hc, ws, wc, hden.astype(dt), wden.astype(dt), dt(0), adx)
        else:
            aout[...] = 0
            adx[...] = 0
        res.append((out, arg, dx, aout, adx))
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True)


def test_adaptive_windows_by_hand():
    start, count = adaptive_windows(10, 4)
    assert start.tolist() == [0, 2, 5, 7] and (start + count).tolist() == [3, 5, 8, 10]


@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 100, 16384 * 8 + 13, 300001])
def test_relu_bits_and_select_match_ref(n):
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n).astype(np.float32)
    x[::7] = np.nan
    x[::11] = -0.0
    outs, bitss = [], []
    for K in (J_mask, R_mask):
        out, bits = np.empty_like(x), np.empty((n + 7) // 8, np.uint8)
        K.relu_bits(x, out, bits)
        outs.append(out)
        bitss.append(bits)
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_array_equal(bitss[0], bitss[1])
    g = rng.standard_normal(n)
    g[::5] = np.inf
    sel = [np.empty_like(g) for _ in range(2)]
    J_mask.bits_select(g, bitss[0], sel[0])
    R_mask.bits_select(g, bitss[0], sel[1])
    np.testing.assert_array_equal(sel[0], sel[1])
    assert not np.signbit(sel[0][sel[0] == 0]).any()       # masked entries are +0.0


def det_outputs():
    """The parallel conv / pool / mask kernels past their serial thresholds, as bytes."""
    rng = np.random.default_rng(5)
    res = []
    x = rng.standard_normal((4, 8, 30, 30)).astype(np.float32)
    cs = np.empty(8, np.float32)
    J_conv.channel_sum(x.reshape(4, 8, -1), cs)
    res += [cs.tobytes()]
    (hs, hc, hd, OH), (ws, wc, wd, OW) = _regular(30, 2, 2, 0, 1, False), _regular(30, 2, 2, 0, 1, False)
    p = x.reshape(32, 30, 30)
    out, arg, dx = np.empty((32, OH, OW), np.float32), np.empty((32, OH, OW), np.uint8), np.empty_like(p)
    J_pool.max_pool(p, out, arg, hs, hc, ws, wc, 1, 1)
    J_pool.max_pool_backward(out, arg, hs, hc, ws, wc, 1, 1, dx)
    res += [out.tobytes(), arg.tobytes(), dx.tobytes()]
    J_pool.avg_pool(p, out, hs, hc, ws, wc, hd.astype(np.float32), wd.astype(np.float32), np.float32(0))
    J_pool.avg_pool_backward(out, hs, hc, ws, wc, hd.astype(np.float32), wd.astype(np.float32),
                             np.float32(0), dx)
    res += [out.tobytes(), dx.tobytes()]
    flat = x.reshape(-1)
    r, bits, sel = np.empty_like(flat), np.empty((flat.size + 7) // 8, np.uint8), np.empty_like(flat)
    J_mask.relu_bits(flat, r, bits)
    J_mask.bits_select(flat, bits, sel)
    res += [r.tobytes(), bits.tobytes(), sel.tobytes()]
    return res


def test_determinism_one_vs_two_threads():
    one, two = outputs_on_1_and_2_threads(det_outputs)
    assert one == two


@pytest.mark.slow
def test_determinism_subprocess_1_3_4_threads():
    res = run_1_3_4_threads("test_conv_pool_kernels")
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip().endswith("SAME"), res.stdout


def test_serial_and_parallel_paths_give_the_same_bits(monkeypatch):
    # the launchers read SERIAL_MAX at call time: raised, every kernel runs its tasks in order
    # on this thread instead of through the parallel driver
    par = det_outputs()
    for m in (J_mask, J_pool):
        monkeypatch.setattr(m, "SERIAL_MAX", 1 << 62)
    assert det_outputs() == par
