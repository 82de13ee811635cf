"""The one-node linear (``F.linear`` on 2-D inputs): same bits as matmul + add, same gradients,
saved tensors checked like every other op's."""
import numpy as np
import pytest

import newch
from newch.errors import NcError
from newch.net import functional as F
from newch.ops.matrix import linear_2d


def _leaves(dtype, gx, gw, gb, bias=True):
    rng = np.random.default_rng(3)
    with newch.persistent():
        x = newch.tensor(rng.standard_normal((5, 7)), dtype=dtype, requires_grad=gx)
        w = newch.tensor(rng.standard_normal((3, 7)), dtype=dtype, requires_grad=gw)
        b = newch.tensor(rng.standard_normal(3), dtype=dtype, requires_grad=gb) if bias else None
    return x, w, b


def _composed(x, w, b):
    out = newch.matmul(x, w.t())
    return out if b is None else out + b


@pytest.mark.parametrize("dtype", [newch.float32, newch.float64])
@pytest.mark.parametrize("gx, gw, gb", [(True, True, True), (False, True, True), (True, False, False),
                                        (False, False, True), (True, True, False)])
@pytest.mark.parametrize("bias", [True, False])
def test_values_and_gradients_are_the_composed_forms_bits(dtype, gx, gw, gb, bias):
    got, want = [], []
    for fn, res in ((linear_2d, got), (_composed, want)):
        x, w, b = _leaves(dtype, gx, gw, gb, bias)
        y = fn(x, w, b)
        res.append(y.detach().numpy())
        if y.requires_grad:
            (y * y).sum().backward()
        res.extend(t.grad.numpy() if t is not None and t.grad is not None else None
                   for t in (x, w, b))
    for g, w_ in zip(got, want):
        if w_ is None:
            assert g is None
        else:
            assert g.dtype == w_.dtype and g.tobytes() == w_.tobytes()


def test_values_against_numpy():
    x, w, b = _leaves(newch.float64, False, False, False)
    want = x.numpy() @ w.numpy().T + b.numpy()  # noqa: no grad here
    np.testing.assert_allclose(F.linear(x, w, b).numpy(), want, rtol=1e-12)


def test_f_linear_records_one_addmm_node_and_weight_grad_is_contiguous():
    x, w, b = _leaves(newch.float32, True, True, True)
    y = F.linear(x, w, b)
    assert y.grad_fn.name() == "AddmmBackward0"
    assert F.linear(x, w).grad_fn.name() == "MmBackward0"
    y.sum().backward()
    assert w.grad.numpy().flags.c_contiguous and tuple(w.grad.shape) == (3, 7)
    np.testing.assert_allclose(b.grad.numpy(), np.full(3, 5.0))
    np.testing.assert_allclose(x.grad.numpy(), np.tile(w.detach().numpy().sum(0), (5, 1)), rtol=1e-5)


def test_create_graph_gives_second_derivatives():
    # d/dw of sum((dL/dx)^2) with L = sum(linear(x, w, b)^2 / 2): compare with the composed form
    res = []
    for fn in (linear_2d, _composed):
        x, w, b = _leaves(newch.float64, True, True, True)
        y = fn(x, w, b)
        (gx,) = newch.autograd.grad((y * y).sum() / 2, [x], create_graph=True)
        (gx * gx).sum().backward()
        res.append((w.grad.numpy().copy(), b.grad.numpy().copy()))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-12)
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-12)


def test_weight_changed_in_place_after_forward_is_refused_in_backward():
    x, w, b = _leaves(newch.float32, True, True, True)
    y = F.linear(x, w, b)
    with newch.no_grad():
        w.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified|in place|in-place"):
        y.sum().backward()


def test_stale_input_is_refused_and_leaves_the_arena_intact():
    _, w, b = _leaves(newch.float32, False, True, True)
    x = newch.randn(5, 7)
    newch.step_end()
    before = newch.mem_stats()["arena_bytes_in_use"]
    with pytest.raises(NcError, match="linear"):
        F.linear(x, w, b)
    assert newch.mem_stats()["arena_bytes_in_use"] == before


def test_against_torch():
    torch = pytest.importorskip("torch")
    x, w, b = _leaves(newch.float64, True, True, True)
    tx, tw, tb = (torch.tensor(t.detach().numpy(), requires_grad=True) for t in (x, w, b))
    y = F.linear(x, w, b)
    ty = torch.nn.functional.linear(tx, tw, tb)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-12)
    (y * y).sum().backward()
    (ty * ty).sum().backward()
    for a, t in ((x, tx), (w, tw), (b, tb)):
        np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-10)


@pytest.mark.parametrize("dtype", [newch.float32, newch.float64])
def test_batch_of_one_gives_the_rows_of_a_batch(dtype):
    """One sample through a layer (the one-row kernel, the flat bias add) has the bits of its
    row in a batch of eight (the blocked kernel, the row-broadcast add); its input gradient
    too (g @ w, a one-row product reading w's rows). A property of the JIT kernels: the numpy
    twins keep numpy's own summation order, which differs between its gemv and gemm."""
    if newch.default_context().backend == "ref":
        pytest.skip("same bits for a row alone and in a batch: the JIT kernels' property")
    rng = np.random.default_rng(11)
    with newch.persistent():
        lin = newch.nn.Linear(100, 37).to(dtype)
        xs = newch.tensor(rng.standard_normal((8, 100)), dtype=dtype, requires_grad=True)
    whole = lin(xs)
    gv = rng.standard_normal((8, 37)).astype(dtype.np)
    whole.backward(newch.tensor(gv, dtype=dtype))
    rows, grads = whole.detach().numpy().copy(), xs.grad.numpy().copy()
    newch.step_end()
    for i in (0, 5):
        with newch.persistent():
            x1 = newch.tensor(xs.detach().numpy()[i:i + 1], dtype=dtype, requires_grad=True)
        y = lin(x1)
        assert y.shape == (1, 37)
        assert y.detach().numpy().tobytes() == rows[i:i + 1].tobytes()
        y.backward(newch.tensor(gv[i:i + 1], dtype=dtype))
        assert x1.grad.numpy().tobytes() == grads[i:i + 1].tobytes()
        with newch.no_grad():
            assert lin(x1).numpy().tobytes() == rows[i:i + 1].tobytes()
        newch.step_end()
