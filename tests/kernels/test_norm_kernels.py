"""Normalisation and dropout kernels: the JIT kernels against their numpy twins, on serial and
parallel sizes, and bit-identical results on 1 and 2 threads."""
import numpy as np
import pytest

numba = pytest.importorskip("numba", reason="JIT kernel tests need numba (not installed: the ref backend is tested elsewhere)")
from newch.kernels import dropout as jd
from newch.kernels import norm as jn
from newch.kernels.ref import dropout as rd
from newch.kernels.ref import norm as rn

from .thread_check import outputs_on_1_and_2_threads

RNG = np.random.default_rng(4)
SHAPES = [(2, 3, 1), (5, 4, 7), (16, 8, 300), (3, 2, 20001)]


def _bn_case(shape, dtype):
    x = (RNG.standard_normal(shape) * 3 + 1).astype(dtype)
    dy = RNG.standard_normal(shape).astype(dtype)
    w = RNG.standard_normal(shape[1]).astype(dtype)
    b = RNG.standard_normal(shape[1]).astype(dtype)
    return x, dy, w, b


def _bn_all(K, x, dy, w, b, train):
    C = x.shape[1]
    mean, var = np.empty(C), np.empty(C)
    out = np.empty_like(x)
    rm, rv = np.linspace(-1, 1, C).astype(x.dtype), np.linspace(1, 2, C).astype(x.dtype)
    K.batch_norm_forward(x, mean, var, 1e-5, w, b, True, rm, rv, 0.25, out)
    dx, dw, db = np.empty_like(x), np.empty(C), np.empty(C)
    K.batch_norm_backward(x, dy, mean, var, 1e-5, w, train, dx, dw, db)
    return mean, var, out, dx, dw, db, rm, rv


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("train", [True, False])
def test_batch_norm_kernels_match_ref(shape, dtype, train):
    x, dy, w, b = _bn_case(shape, dtype)
    got = _bn_all(jn, x, dy, w, b, train)
    want = _bn_all(rn, x, dy, w, b, train)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for g, r in zip(got, want):
        np.testing.assert_allclose(g, r, rtol=tol, atol=tol * 10)


def test_batch_norm_running_statistics_update():
    x, dy, w, b = _bn_case((5, 3, 4), np.float64)
    mean, var, out, dx, dw, db, rm, rv = _bn_all(jn, x, dy, w, b, True)
    np.testing.assert_allclose(rm, 0.75 * np.linspace(-1, 1, 3) + 0.25 * x.mean((0, 2)))
    np.testing.assert_allclose(rv, 0.75 * np.linspace(1, 2, 3) + 0.25 * x.var((0, 2), ddof=1))


def test_batch_norm_forward_with_given_statistics():
    x, _, w, b = _bn_case((3, 4, 6), np.float32)
    mean, var = RNG.standard_normal(4), RNG.random(4) + 0.5
    got, want = np.empty_like(x), np.empty_like(x)
    e = np.empty(0, np.float32)
    jn.batch_norm_forward(x, mean.copy(), var.copy(), 1e-3, w, b, False, e, e, 0.1, got)
    rn.batch_norm_forward(x, mean.copy(), var.copy(), 1e-3, w, b, False, e, e, 0.1, want)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    ref = (x - mean[None, :, None]) / np.sqrt(var[None, :, None] + 1e-3) * w[None, :, None] \
        + b[None, :, None]
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)


def test_batch_norm_without_affine_and_skipped_dx():
    x, dy, _, _ = _bn_case((4, 3, 5), np.float32)
    e = np.empty(0, np.float32)
    mean, var = np.empty(3), np.empty(3)
    out = np.empty_like(x)
    jn.batch_norm_forward(x, mean, var, 0.0, e, e, True, e, e, 0.1, out)
    np.testing.assert_allclose(out.mean((0, 2)), 0, atol=1e-6)
    np.testing.assert_allclose(out.var((0, 2)), 1, atol=1e-5)
    dw, db = np.empty(3), np.empty(3)
    jn.batch_norm_backward(x, dy, mean, var, 0.0, e, True, np.empty((0, 3, 5), np.float32), dw, db)
    np.testing.assert_allclose(db, dy.astype(np.float64).sum((0, 2)), rtol=1e-12)


@pytest.mark.parametrize("shape", [(3, 5), (70, 33), (200, 300), (2, 40000)])
@pytest.mark.parametrize("weighted, biased", [(True, True), (False, False), (True, False),
                                              (False, True)])
def test_layer_norm_kernels_match_ref(shape, weighted, biased):
    x = RNG.standard_normal(shape).astype(np.float32)
    dy = RNG.standard_normal(shape).astype(np.float32)
    K = shape[1]
    w = RNG.standard_normal(K).astype(np.float32) if weighted else np.empty(0, np.float32)
    b = RNG.standard_normal(K).astype(np.float32) if biased else np.empty(0, np.float32)
    res = []
    for mod in (jn, rn):
        out, mean, rstd = np.empty_like(x), np.empty(shape[0]), np.empty(shape[0])
        mod.layer_norm_rows(x, w, b, 1e-5, out, mean, rstd)
        dx = np.empty_like(x)
        mod.layer_norm_backward(x, dy, mean, rstd, w, dx)
        dw, db = np.empty(K), np.empty(K)
        mod.layer_norm_param_grad(x, dy, mean, rstd, dw, db)
        res.append((out, mean, rstd, dx, dw, db))
    for g, r in zip(*res):
        np.testing.assert_allclose(g, r, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("n, group", [(10, 1), (100_000, 1), (12, 4), (98_304, 64)])
def test_masked_scale_matches_ref(n, group):
    x = RNG.standard_normal(n).astype(np.float32)
    x[0] = np.nan
    mask = RNG.random(n // group) < 0.6
    a, b = np.empty_like(x), np.empty_like(x)
    jd.masked_scale(x, mask, group, np.float32(2.5), a)
    rd.masked_scale(x, mask, group, np.float32(2.5), b)
    np.testing.assert_array_equal(a, b)
    assert np.isnan(a[0])


def test_masked_scale_rejects_mismatched_lengths():
    with pytest.raises(ValueError, match="masked_scale"):
        jd.masked_scale(np.ones(10, np.float32), np.ones(3, bool), 3, np.float32(1), np.ones(10, np.float32))


def det_outputs():
    rng = np.random.default_rng(9)
    x = rng.standard_normal((8, 16, 1024)).astype(np.float32)
    dy = rng.standard_normal(x.shape).astype(np.float32)
    w = rng.standard_normal(16).astype(np.float32)
    outs = _bn_all(jn, x, dy, w, w, True)
    x2 = x.reshape(128, 1024)
    o, m, r = np.empty_like(x2), np.empty(128), np.empty(128)
    jn.layer_norm_rows(x2, w[:0], w[:0], 1e-5, o, m, r)
    dx = np.empty_like(x2)
    jn.layer_norm_backward(x2, dy.reshape(128, 1024), m, r, w[:0], dx)
    dw, db = np.empty(1024), np.empty(1024)
    jn.layer_norm_param_grad(x2, dy.reshape(128, 1024), m, r, dw, db)
    return [a.tobytes() for a in outs + (o, m, r, dx, dw, db)]


def test_same_bits_on_1_and_2_threads():
    one, two = outputs_on_1_and_2_threads(det_outputs)
    assert one == two


def _masked_outputs():
    x = np.random.default_rng(2).standard_normal(98_304).astype(np.float32)
    mask = np.arange(98_304 // 64) % 3 != 0
    a, b = np.empty_like(x), np.empty_like(x)
    jd.masked_scale(x, mask, 64, np.float32(1.5), a)
    jd.masked_scale(x, np.repeat(mask, 64), 1, np.float32(1.5), b)
    return [a.tobytes(), b.tobytes()]


def test_serial_and_parallel_paths_give_the_same_bits(monkeypatch):
    # the launchers read SERIAL_MAX at call time: raised, every kernel runs its tasks in order
    # on this thread instead of through the parallel driver
    par = det_outputs() + _masked_outputs()
    for m in (jn, jd):
        monkeypatch.setattr(m, "SERIAL_MAX", 1 << 62)
    ser = det_outputs() + _masked_outputs()
    assert ser == par
    assert par[-1] == par[-2]      # per-channel and per-element masks agree
