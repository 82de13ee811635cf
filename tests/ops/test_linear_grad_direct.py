"""The one-node linear writes its weight and bias gradients straight into a new ``.grad``
(``ops.record.fresh_grad``) when the leaf has none: same bits and lifetimes as the engine's
copy, and the usual path whenever a gradient must be added, captured or differentiated."""
import numpy as np
import pytest

import newch
from newch.ops.matrix import linear_2d


def _leaves(persistent=True):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((6, 4)).astype(np.float32)
    w = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32)
    if persistent:
        with newch.persistent():
            return (newch.tensor(x), newch.tensor(w, requires_grad=True),
                    newch.tensor(b, requires_grad=True))
    return newch.tensor(x), newch.tensor(w, requires_grad=True), newch.tensor(b, requires_grad=True)


def _numpy_grads(x, w, b, times=1):
    """Gradients of sum((x @ w.T + b) ** 2) summed ``times`` times, in float64."""
    X, W, B = (t.detach().numpy().astype(np.float64) for t in (x, w, b))
    G = 2 * (X @ W.T + B)
    return times * G.T @ X, times * G.sum(0)


def test_new_grads_are_persistent_for_persistent_leaves_and_match_numpy():
    x, w, b = _leaves()
    (linear_2d(x, w, b) ** 2).sum().backward()
    gw, gb = _numpy_grads(x, w, b)
    assert w.grad.is_persistent and b.grad.is_persistent
    newch.step_end()                     # persistent grads outlive the step
    np.testing.assert_allclose(w.grad.numpy(), gw, rtol=1e-5)
    np.testing.assert_allclose(b.grad.numpy(), gb, rtol=1e-5)


def test_temporary_leaves_get_temporary_grads():
    x, w, b = _leaves(persistent=False)
    (linear_2d(x, w, b) ** 2).sum().backward()
    assert not w.grad.is_persistent and not b.grad.is_persistent
    newch.step_end()
    assert not w.grad.is_alive


def test_second_backward_adds_with_the_engines_bits():
    x, w, b = _leaves()
    for _ in range(2):
        (linear_2d(x, w, b) ** 2).sum().backward()
    # the same sums made the old way: a first gradient, then old + new
    x2, w2, b2 = _leaves()
    y = newch.matmul(x2, w2.t()) + b2
    (y ** 2).sum().backward()
    y = newch.matmul(x2, w2.t()) + b2
    (y ** 2).sum().backward()
    assert w.grad.numpy().tobytes() == w2.grad.numpy().tobytes()
    assert b.grad.numpy().tobytes() == b2.grad.numpy().tobytes()
    gw, gb = _numpy_grads(x, w, b, times=2)
    np.testing.assert_allclose(w.grad.numpy(), gw, rtol=1e-5)


def test_a_weight_used_twice_sums_both_uses():
    x, w, b = _leaves()
    (linear_2d(x, w, b).sum() + linear_2d(x * 2.0, w, b).sum()).backward()
    want = 3.0 * x.numpy().sum(0)
    np.testing.assert_allclose(w.grad.numpy(), np.tile(want, (3, 1)), rtol=1e-5)
    np.testing.assert_allclose(b.grad.numpy(), np.full(3, 12.0))


def test_autograd_grad_leaves_dot_grad_alone():
    x, w, b = _leaves()
    gw, gb = newch.autograd.grad((linear_2d(x, w, b) ** 2).sum(), (w, b))
    assert w.grad is None and b.grad is None
    want_w, want_b = _numpy_grads(x, w, b)
    np.testing.assert_allclose(gw.numpy(), want_w, rtol=1e-5)
    np.testing.assert_allclose(gb.numpy(), want_b, rtol=1e-5)


def test_create_graph_grads_stay_differentiable():
    x, w, b = _leaves()
    (linear_2d(x, w, b) ** 2).sum().backward(create_graph=True)
    assert w.grad.requires_grad and b.grad.requires_grad
    w.grad.sum().backward()              # d/dw sum(2 (x w^T + b)^T x) = 2 * colsums...
    assert b.grad is not None


def test_a_dead_old_grad_is_replaced():
    x, w, b = _leaves()
    w.grad = newch.zeros(3, 4)           # a temporary grad, dead after step_end()
    newch.step_end()
    (linear_2d(x, w, b) ** 2).sum().backward()
    assert w.grad.is_alive and w.grad.is_persistent
    np.testing.assert_allclose(w.grad.numpy(), _numpy_grads(x, w, b)[0], rtol=1e-5)
