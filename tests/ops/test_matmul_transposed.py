"""``x @ w.T`` with few rows in x runs as ``(w @ x.T).T`` (the big operand read in place):
the same bits as the direct product, for every dtype and thread count. JIT kernels only:
the numpy twins (no packing) take numpy's product as it comes."""
import os

import numpy as np
import pytest
pytest.importorskip("numba", reason="the transposed route serves the JIT gemm")

import newch
from newch.context import default_context

pytestmark = pytest.mark.skipif(os.environ.get("NEWCH_BACKEND") == "ref",
                                reason="the ref backend's gemm packs nothing: no transposed route")
from newch.ops.matrix import _gemm, _transpose_pays


def _direct(a, b):
    """a @ b by the gemm kernel itself, without the transposed route."""
    K = default_context().kernels
    out = np.empty((a.shape[0], b.shape[1]), a.dtype)
    K.gemm(a, b, out, np.empty(K.gemm_scratch(a.shape[0], b.shape[1], a.shape[1]), a.dtype))
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m, k, n", [(64, 784, 256), (5, 300, 200), (2, 64, 1024)])
def test_same_bits_as_the_direct_product_and_close_to_numpy(dtype, m, k, n):
    rng = np.random.default_rng(m + n)
    x = rng.standard_normal((m, k)).astype(dtype)
    w = rng.standard_normal((n, k)).astype(dtype)
    assert _transpose_pays(x, w.T, m, n, k)
    got = _gemm(x, w.T, newch.float32 if dtype == np.float32 else newch.float64)
    assert got.numpy().tobytes() == _direct(x, w.T).tobytes()
    tol = 1e-4 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got.numpy(), x.astype(np.float64) @ w.T.astype(np.float64),
                               rtol=tol, atol=tol * np.sqrt(k))


def test_linear_layer_forward_and_backward_keep_their_bits():
    rng = np.random.default_rng(0)
    with newch.persistent():
        x = newch.tensor(rng.standard_normal((64, 784)).astype(np.float32))
        w = newch.tensor(rng.standard_normal((256, 784)).astype(np.float32), requires_grad=True)
    y = newch.nn.functional.linear(x, w)
    assert y.detach().numpy().tobytes() == _direct(x.numpy(), w.detach().numpy().T).tobytes()
    y.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), np.tile(x.numpy().sum(0), (256, 1)), rtol=1e-4)


@pytest.mark.parametrize("case", ["small", "one row", "a not k-contiguous", "b not transposed",
                                  "more rows than columns"])
def test_other_shapes_and_layouts_take_the_direct_route(case):
    rng = np.random.default_rng(1)
    m, k, n = {"small": (4, 8, 8), "one row": (1, 784, 256)}.get(case, (64, 784, 256))
    if case == "more rows than columns":
        m, n = 256, 64
    x = rng.standard_normal((m, k)).astype(np.float32)
    w = rng.standard_normal((n, k)).astype(np.float32)
    a, b = x, w.T
    if case == "a not k-contiguous":
        a = np.asfortranarray(x)
    if case == "b not transposed":
        b = np.ascontiguousarray(w.T)
    assert not _transpose_pays(a, b, m, n, k)
    got = _gemm(a, b, newch.float32)
    assert got.numpy().tobytes() == _direct(a, b).tobytes()
