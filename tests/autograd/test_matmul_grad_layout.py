"""matmul's backward (ops/matmul.py): gemms on the saved arrays when no graph is built, and the
gradient of a transposed operand (``x @ w.t()``) made in that operand's layout."""
import numpy as np
import pytest

import newch
from newch.errors import NcError


def _leaf(a):
    with newch.persistent():
        return newch.tensor(a).requires_grad_()


def _const(a):
    with newch.persistent():
        return newch.tensor(a)


def test_weight_grad_of_x_at_w_t_is_contiguous_and_right():
    rng = np.random.default_rng(0)
    xa, wa = rng.standard_normal((6, 9)).astype(np.float32), rng.standard_normal((4, 9)).astype(np.float32)
    ga = rng.standard_normal((6, 4)).astype(np.float32)
    x, w = _const(xa), _leaf(wa)
    (x @ w.t()).backward(newch.tensor(ga))
    assert w.grad._a.flags.c_contiguous
    np.testing.assert_allclose(w.grad.numpy(), ga.astype(np.float64).T @ xa, rtol=1e-5, atol=1e-5)


def test_transposed_layout_gives_the_same_bits_as_the_plain_one():
    """The gemm folds every element over k in order, whatever the layout it writes."""
    rng = np.random.default_rng(1)
    xa, wa = rng.standard_normal((7, 33)).astype(np.float32), rng.standard_normal((5, 33)).astype(np.float32)
    ga = rng.standard_normal((7, 5)).astype(np.float32)
    x1, w = _leaf(xa), _leaf(wa)
    (x1 @ w.t()).backward(newch.tensor(ga))
    x2, wt = _leaf(xa), _leaf(np.ascontiguousarray(wa.T))
    (x2 @ wt).backward(newch.tensor(ga))
    assert np.array_equal(w.grad.numpy(), wt.grad.numpy().T)
    assert np.array_equal(x1.grad.numpy(), x2.grad.numpy())


def test_transposed_left_operand():
    rng = np.random.default_rng(2)
    aa, ba = rng.standard_normal((8, 3)), rng.standard_normal((8, 5))
    a, b = _leaf(aa), _leaf(ba)
    (a.t() @ b).sum().backward()
    assert a.grad._a.flags.c_contiguous
    np.testing.assert_allclose(a.grad.numpy(), (np.ones((3, 5)) @ ba.T).T)
    np.testing.assert_allclose(b.grad.numpy(), aa @ np.ones((3, 5)))


def test_only_the_needed_side_is_computed_and_saved():
    rng = np.random.default_rng(3)
    x, w = _const(rng.standard_normal((4, 6))), _leaf(rng.standard_normal((2, 6)))
    (x @ w.t()).sum().backward()
    assert x.grad is None and w.grad is not None


def test_create_graph_goes_through_the_recorded_path():
    rng = np.random.default_rng(4)
    xa, wa = rng.standard_normal((3, 4)), rng.standard_normal((2, 4))
    x, w = _leaf(xa), _leaf(wa)
    y = (x @ w.t()).pow(2).sum()
    (gw,) = newch.autograd.grad(y, (w,), create_graph=True)
    assert gw.requires_grad
    gw.sum().backward()
    # x.grad = d/dx of sum(dy/dw), dy/dw = 2 (x w^T)^T x: checked by central differences
    def f(xv):
        h = xv @ wa.T
        return (2 * h.T @ xv).sum()
    eps, num = 1e-6, np.zeros_like(xa)
    for i in np.ndindex(xa.shape):
        d = np.zeros_like(xa)
        d[i] = eps
        num[i] = (f(xa + d) - f(xa - d)) / (2 * eps)
    np.testing.assert_allclose(x.grad.numpy(), num, rtol=1e-5, atol=1e-6)


def test_released_saved_input_raises():
    rng = np.random.default_rng(5)
    x, w = _const(rng.standard_normal((3, 4))), _leaf(rng.standard_normal((2, 4)))
    y = (x @ w.t()).sum()
    newch.release(x)
    with pytest.raises(NcError, match="release"):
        y.backward()


def test_saved_input_changed_in_place_raises():
    rng = np.random.default_rng(6)
    x, w = _const(rng.standard_normal((3, 4))), _leaf(rng.standard_normal((2, 4)))
    y = (x @ w.t()).sum()
    x.add_(1.0)
    with pytest.raises(RuntimeError, match="modified|in place|in-place"):
        y.backward()


def test_against_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    xa, wa, ba = (rng.standard_normal(s).astype(np.float32) for s in ((5, 12), (3, 12), (3,)))
    x, w, b = _leaf(xa), _leaf(wa), _leaf(ba)
    newch.nn.functional.linear(x, w, b).tanh().sum().backward()
    tx, tw, tb = (torch.tensor(v, requires_grad=True) for v in (xa, wa, ba))
    torch.nn.functional.linear(tx, tw, tb).tanh().sum().backward()
    for ours, theirs in ((x, tx), (w, tw), (b, tb)):
        np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-5, atol=1e-6)
