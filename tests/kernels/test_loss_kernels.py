"""The nll kernels against their numpy twins: weights, ignored targets, N-d layouts, bad targets."""
import numpy as np
import pytest

numba = pytest.importorskip("numba", reason="JIT kernel tests need numba (not installed: the ref backend is tested elsewhere)")
from newch.kernels import loss as jl
from newch.kernels.ref import loss as rl

RNG = np.random.default_rng(8)


@pytest.mark.parametrize("shape", [(1, 5, 1), (7, 3, 1), (4, 6, 9)])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nll_kernels_match_ref(shape, weighted, dtype):
    N, C, L = shape
    x = RNG.standard_normal(shape).astype(dtype)
    t = RNG.integers(0, C, (N, L)).astype(np.int64)
    t.flat[::3] = -100
    w = (RNG.random(C) + 0.5).astype(dtype) if weighted else np.empty(0, dtype)
    g = RNG.standard_normal((N, L)).astype(dtype)
    res = []
    for mod in (jl, rl):
        loss, ws = np.empty((N, L), dtype), np.empty((N, L), dtype)
        mod.nll_forward(x, t, w, -100, loss, ws)
        dx = np.full(shape, 7.0, dtype)
        mod.nll_backward(t, w, -100, g, dx)
        res.append((loss, ws, dx))
    for a, b in zip(*res):
        np.testing.assert_array_equal(a, b)
    loss, ws, dx = res[0]
    assert (loss.flat[::3] == 0).all() and (ws.flat[::3] == 0).all()
    assert (dx != 0).sum() <= N * L


@pytest.mark.parametrize("mod", [jl, rl])
def test_nll_kernels_refuse_out_of_range_targets(mod):
    x = np.zeros((2, 3, 1), np.float32)
    out = np.empty((2, 1), np.float32)
    with pytest.raises(IndexError, match="nll_forward"):
        mod.nll_forward(x, np.array([[0], [3]]), np.empty(0, np.float32), -100, out, out.copy())
    with pytest.raises(IndexError, match="nll_backward"):
        mod.nll_backward(np.array([[-1], [0]]), np.empty(0, np.float32), -100, out, x)
