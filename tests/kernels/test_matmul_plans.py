"""gemm's remembered 2-D plans: a repeated shape skips planning but keeps every check and
gives the first call's bits."""
import numpy as np
import pytest
pytest.importorskip("numba", reason="JIT kernel tests need numba")

from newch.kernels import matmul as jit


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m, n, k", [(5, 7, 9), (64, 10, 256), (96, 130, 200)])
def test_repeated_calls_give_the_first_calls_bits(dtype, m, n, k):
    rng = np.random.default_rng(m)
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((n, k)).astype(dtype).T          # strided, as x @ w.T
    s = np.empty(jit.gemm_scratch(m, n, k), dtype)
    outs = []
    for _ in range(3):
        out = np.full((m, n), np.nan, dtype)
        jit.gemm(a, b, out, s)
        outs.append(out)
    assert (a.shape, b.shape, np.dtype(dtype)) in jit._PLANS
    assert outs[0].tobytes() == outs[1].tobytes() == outs[2].tobytes()
    np.testing.assert_allclose(outs[2], a.astype(np.float64) @ b.astype(np.float64),
                               rtol=1e-4 if dtype == np.float32 else 1e-12, atol=1e-3)
    acc = outs[2].copy()
    jit.gemm(a, b, acc, s, accumulate=True)                   # planned, accumulating
    np.testing.assert_allclose(acc, 2 * outs[2], rtol=1e-4, atol=1e-4)


def _planned(m=6, n=20, k=12, dtype=np.float32):
    a, b = np.ones((m, k), dtype), np.ones((k, n), dtype)
    s = np.empty(jit.gemm_scratch(m, n, k), dtype)
    out = np.empty((m, n), dtype)
    jit.gemm(a, b, out, s)
    jit.gemm(a, b, out, s)
    return a, b, out, s


@pytest.mark.parametrize("bad", ["a dtype", "scratch dtype", "out shape", "out strided",
                                 "scratch short", "scratch 2-D"])
def test_a_planned_shape_still_checks_its_arguments(bad):
    a, b, out, s = _planned()
    if bad == "a dtype":
        a = a.astype(np.float64)
    elif bad == "scratch dtype":
        s = s.astype(np.float64)
    elif bad == "out shape":
        out = np.empty((6, 21), np.float32)
    elif bad == "out strided":
        out = np.empty((6, 40), np.float32)[:, ::2]     # neither it nor its transpose is C
    elif bad == "scratch short":
        s = s[:-1]
    else:
        s = s.reshape(1, -1)
    with pytest.raises((TypeError, ValueError), match="matmul"):
        jit.gemm(a, b, out, s)
