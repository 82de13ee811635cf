"""In-place ops recorded by autograd write into self: PyTorch's gradients, its errors, no temporary."""
import numpy as np
import pytest

import newch
import newch.net.functional as F

# (name, call): the call gets (y, w, v) and applies one in-place op to y; the same code runs
# on newch and on torch tensors.
CASES = [
    ("add_ number", lambda y, w, v: y.add_(1.5)),
    ("add_ tensor", lambda y, w, v: y.add_(w)),
    ("add_ alpha", lambda y, w, v: y.add_(w, alpha=0.5)),
    ("add_ broadcast", lambda y, w, v: y.add_(v)),
    ("sub_ alpha", lambda y, w, v: y.sub_(w, alpha=2)),
    ("mul_ number", lambda y, w, v: y.mul_(3.0)),
    ("mul_ tensor", lambda y, w, v: y.mul_(w)),
    ("mul_ broadcast", lambda y, w, v: y.mul_(v)),
    ("div_ number", lambda y, w, v: y.div_(4.0)),
    ("div_ tensor", lambda y, w, v: y.div_(w)),
    ("pow_ 2", lambda y, w, v: y.pow_(2)),
    ("pow_ 0.5", lambda y, w, v: y.pow_(0.5)),
    ("pow_ 0", lambda y, w, v: y.pow_(0)),
    ("remainder_", lambda y, w, v: y.remainder_(0.7)),
    ("clamp_", lambda y, w, v: y.clamp_(1.0, 2.0)),
    ("clamp_ min=", lambda y, w, v: y.clamp_(min=1.5)),
    ("clamp_min_", lambda y, w, v: y.clamp_min_(1.2)),
    ("clamp_max_", lambda y, w, v: y.clamp_max_(1.8)),
    ("addcmul_", lambda y, w, v: y.addcmul_(w, v, value=0.5)),
    ("addcdiv_", lambda y, w, v: y.addcdiv_(v, w, value=2.0)),
    ("lerp_", lambda y, w, v: y.lerp_(w, 0.3)),
    ("neg_", lambda y, w, v: y.neg_()),
    ("abs_", lambda y, w, v: y.sub_(1.5).abs_()),
    ("exp_", lambda y, w, v: y.exp_()),
    ("log_", lambda y, w, v: y.log_()),
    ("sqrt_", lambda y, w, v: y.sqrt_()),
    ("sigmoid_", lambda y, w, v: y.sigmoid_()),
    ("tanh_", lambda y, w, v: y.tanh_()),
    ("relu_", lambda y, w, v: y.sub_(1.5).relu_()),
    ("floor_", lambda y, w, v: y.floor_()),
    ("round_", lambda y, w, v: y.round_()),
    ("chain", lambda y, w, v: y.add_(1).mul_(w).sub_(v).tanh_()),
]


def _run(lib, case, x0, w0, v0, grad_w):
    x = lib.tensor(x0, dtype=lib.float64, requires_grad=True)
    w = lib.tensor(w0, dtype=lib.float64, requires_grad=grad_w)
    v = lib.tensor(v0, dtype=lib.float64, requires_grad=grad_w)
    y = x * 1.0 + 1.0              # a non-leaf in [1, 3)
    out = case(y, w, v)
    assert out is y
    (y * lib.tensor(np.arange(1.0, 7.0).reshape(2, 3), dtype=lib.float64)).sum().backward()
    grads = [None if t.grad is None else t.grad.numpy() for t in (w, v)]
    return y.detach().numpy(), x.grad.numpy(), grads


@pytest.mark.parametrize("grad_w", [False, True], ids=["w plain", "w requires grad"])
@pytest.mark.parametrize("name,case", CASES, ids=[c[0] for c in CASES])
def test_in_place_gradients_match_torch(name, case, grad_w, torch, rng):
    x0 = rng.uniform(0.0, 2.0, (2, 3))
    w0, v0 = rng.uniform(0.5, 2.0, (2, 3)), rng.uniform(0.5, 2.0, (3,))
    got = _run(newch, case, x0, w0, v0, grad_w)
    want = _run(torch, case, x0, w0, v0, grad_w)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12, atol=1e-12)
    for g, t in zip(got[2], want[2]):
        assert (g is None) == (t is None)
        if g is not None:
            np.testing.assert_allclose(g, t, rtol=1e-12, atol=1e-12)


def test_functional_relu_inplace_matches_torch(torch, rng):
    x0 = rng.standard_normal((4, 5))
    grads = []
    for lib in (newch, torch):
        x = lib.tensor(x0, requires_grad=True)
        y = x * 2.0
        out = lib.nn.functional.relu(y, inplace=True)
        assert out is y
        (y * y).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6)


def test_in_place_under_autograd_writes_into_self_and_bumps_the_version():
    x = newch.randn(6, requires_grad=True)
    y = x * 2
    before = y._s.version
    mem = y._a.__array_interface__["data"][0]
    y.add_(1).exp_()
    assert y._s.version == before + 2
    assert y._a.__array_interface__["data"][0] == mem
    assert y.grad_fn.name() == "ExpBackward0"


@pytest.mark.parametrize("modify", [
    lambda y, w: y.add_(1),         # exp_ saved its result (y)
    lambda y, w: w.mul_(2),          # mul_ saved its operand (w)
], ids=["result", "operand"])
def test_changing_what_an_in_place_backward_saved_raises_like_torch(modify, torch):
    for lib in (newch, torch):
        x = lib.ones(3, requires_grad=True)
        w = lib.full((3,), 2.0)
        y = x * 1.0
        y.mul_(w).exp_()
        modify(y, w)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


def test_in_place_on_a_leaf_that_requires_grad_raises_like_torch(torch):
    for lib in (newch, torch):
        x = lib.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf"):
            x.add_(1)
        with pytest.raises(RuntimeError, match="leaf"):
            lib.nn.functional.relu(x, inplace=True)


def test_old_value_kept_for_mul_is_a_copy_taken_before_the_write():
    x = newch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = newch.tensor([4.0, 5.0, 6.0], requires_grad=True)
    y = x * 1.0
    y.mul_(w)
    y.sum().backward()
    assert w.grad.tolist() == [1.0, 2.0, 3.0]      # the old y, not y * w
    assert x.grad.tolist() == [4.0, 5.0, 6.0]


N = 1 << 20


def _extra_peak(fn):
    ctx = newch.default_context()
    before = ctx.mem_stats()["arena_bytes_in_use"]
    ctx.reset_peak()
    fn()
    return ctx.mem_stats()["arena_peak_bytes"] - before


@pytest.mark.parametrize("op,limit", [
    (lambda y, w: y.add_(1), 0),
    (lambda y, w: y.add_(w, alpha=0.5), 0),
    (lambda y, w: y.mul_(w), 0),                        # w does not require grad: y's old value unneeded
    (lambda y, w: y.relu_(), N // 8 + 4096),            # a bit per element
    (lambda y, w: F.relu(y, inplace=True), N // 8 + 4096),
    (lambda y, w: y.exp_(), 0),                          # the result is saved: it is y itself
    (lambda y, w: y.clamp_(-1, 1), 2 * N + 3 * 4096),   # bool masks: one byte per element, x2
], ids=["add_", "add_ alpha", "mul_", "relu_", "F.relu inplace", "exp_", "clamp_"])
def test_in_place_under_autograd_allocates_no_full_size_temporary(op, limit):
    x = newch.randn(N, requires_grad=True)
    w = newch.randn(N)
    y = x * 1.0
    extra = _extra_peak(lambda: op(y, w))
    assert extra <= limit, extra
    y.sum().backward()
    assert x.grad.shape == (N,)
