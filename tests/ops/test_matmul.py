"""matmul / @ / mm / bmm against numpy (float64 reference): shapes, 1-D operands, batches, strides."""
import numpy as np
import pytest

import newch

TOL = {np.float32: dict(rtol=1e-4, atol=1e-5), np.float64: dict(rtol=1e-11, atol=1e-12)}
DTYPES = [np.float32, np.float64]


def mat(rng, shape, dtype):
    return rng.standard_normal(shape).astype(dtype)


def check(x, want, dtype):
    assert tuple(x.shape) == want.shape, (tuple(x.shape), want.shape)
    assert x.dtype.np == np.dtype(dtype)
    scale = max(1.0, float(np.abs(want).max())) if want.size else 1.0
    tol = dict(TOL[dtype])
    tol["atol"] = tol["atol"] * scale * 10
    np.testing.assert_allclose(x.numpy(), want, **tol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m, k, n", [(1, 1, 1), (2, 3, 4), (7, 13, 5), (16, 16, 16), (33, 65, 17),
                                     (64, 64, 64), (100, 300, 50), (1, 257, 1), (300, 2, 300),
                                     (129, 130, 131)])
def test_2d_products(rng, dtype, m, k, n):
    a, b = mat(rng, (m, k), dtype), mat(rng, (k, n), dtype)
    want = a.astype(np.float64) @ b.astype(np.float64)
    check(newch.tensor(a) @ newch.tensor(b), want, dtype)
    check(newch.mm(newch.tensor(a), newch.tensor(b)), want, dtype)
    check(newch.tensor(a).matmul(newch.tensor(b)), want, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_transposed_and_strided_operands(rng, dtype):
    a, b = mat(rng, (40, 30), dtype), mat(rng, (50, 40), dtype)
    x, y = newch.tensor(a), newch.tensor(b)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    check(x.T @ y.T, a64.T @ b64.T, dtype)
    check(y @ x, b64 @ a64, dtype)
    check(x[:, ::2].T @ x[:, 1::2], a64[:, ::2].T @ a64[:, 1::2], dtype)
    check(y[::3, 0:40:2] @ x[::2, :], b64[::3, 0:40:2] @ a64[::2, :], dtype)
    check(x.t() @ x, a64.T @ a64, dtype)
    c = mat(rng, (5, 6, 7), dtype)
    z = newch.tensor(c)
    check(z.transpose(1, 2) @ z, np.matmul(c.astype(np.float64).transpose(0, 2, 1), c), dtype)
    check(z.permute(1, 0, 2) @ z[0].T, np.matmul(c.transpose(1, 0, 2), c[0].T.astype(np.float64)),
          dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("sa, sb", [
    ((5,), (5,)), ((5,), (5, 3)), ((4, 5), (5,)), ((2, 4, 5), (5,)), ((5,), (2, 5, 3)),
    ((2, 4, 5), (2, 5, 3)), ((2, 4, 5), (5, 3)), ((4, 5), (3, 5, 2)), ((2, 1, 3, 4), (5, 4, 2)),
    ((1, 3, 4), (6, 4, 2)), ((3, 1, 2, 4, 5), (2, 1, 5, 3)), ((0, 3, 4), (4, 2)),
    ((3, 0), (0, 4)), ((0, 5), (5, 2)), ((2, 3), (3, 0)),
])
def test_matmul_shape_rules(rng, dtype, sa, sb):
    a, b = mat(rng, sa, dtype), mat(rng, sb, dtype)
    want = np.matmul(a.astype(np.float64), b.astype(np.float64))
    got = newch.tensor(a) @ newch.tensor(b)
    check(got, np.asarray(want), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_bmm(rng, dtype):
    a, b = mat(rng, (6, 7, 8), dtype), mat(rng, (6, 8, 9), dtype)
    want = np.matmul(a.astype(np.float64), b)
    check(newch.bmm(newch.tensor(a), newch.tensor(b)), want, dtype)
    check(newch.tensor(a).bmm(newch.tensor(b)), want, dtype)
    bt = np.ascontiguousarray(b.transpose(0, 2, 1))
    check(newch.bmm(newch.tensor(a), newch.tensor(bt).transpose(1, 2)), want, dtype)


def test_large_gemm_uses_threads_and_is_deterministic(rng):
    a, b = mat(rng, (300, 400), np.float32), mat(rng, (400, 350), np.float32)
    prev = newch.default_context()
    try:
        outs = []
        for threads in (1, 2):
            newch.set_default_context(newch.Context(threads=threads))
            outs.append((newch.tensor(a) @ newch.tensor(b)).numpy())
        np.testing.assert_array_equal(outs[0], outs[1])
        check(newch.tensor(outs[0]), a.astype(np.float64) @ b, np.float32)
    finally:
        newch.set_default_context(prev)


def test_matmul_of_1d_vectors_is_0_dim():
    r = newch.tensor([1.0, 2.0, 3.0]) @ newch.tensor([4.0, 5.0, 6.0])
    assert r.shape == () and r.item() == 32.0


def test_rmatmul_and_values_by_hand():
    a = newch.tensor([[1.0, 2.0], [3.0, 4.0]])
    b = newch.tensor([[5.0, 6.0], [7.0, 8.0]])
    assert (a @ b).tolist() == [[19.0, 22.0], [43.0, 50.0]]
    assert (b @ a).tolist() == [[23.0, 34.0], [31.0, 46.0]]


def test_matmul_matches_torch(torch, rng):
    a, b = mat(rng, (3, 1, 4, 6), np.float32), mat(rng, (2, 6, 5), np.float32)
    np.testing.assert_allclose((newch.tensor(a) @ newch.tensor(b)).numpy(),
                               (torch.tensor(a) @ torch.tensor(b)).numpy(), rtol=1e-5, atol=1e-5)


def test_nan_and_inf_propagate():
    a = newch.tensor([[np.nan, 1.0], [1.0, 1.0]])
    b = newch.tensor([[1.0, 0.0], [0.0, 1.0]])
    r = (a @ b).numpy()
    assert np.isnan(r[0]).all() and (r[1] == [1.0, 1.0]).all()
    c = newch.tensor([[np.inf, 1.0]]) @ newch.tensor([[1.0], [1.0]])
    assert c.item() == np.inf


def test_expanded_operands(rng):
    a, b = mat(rng, (4, 5), np.float32), mat(rng, (3, 5, 2), np.float32)
    x = newch.tensor(a).expand(3, 4, 5)
    check(x @ newch.tensor(b), np.matmul(np.broadcast_to(a, (3, 4, 5)).astype(np.float64), b),
          np.float32)
    v = newch.tensor(a[:, :1]).expand(4, 5)
    check(v @ newch.tensor(b[0]), np.broadcast_to(a[:, :1], (4, 5)).astype(np.float64) @ b[0],
          np.float32)
