"""In-place operations under autograd: what is refused, what works, and the saved-tensor check."""
import numpy as np
import pytest

import newch

from .gradcheck import gradcheck


def f64(values, requires_grad=False):
    return newch.tensor(values, dtype=newch.float64, requires_grad=requires_grad)


def _mask():
    return newch.tensor([True, False, True])


def _iadd(t):
    t += 1.0


LEAF_INPLACE = [
    ("add_", lambda t: t.add_(1.0)),
    ("sub_", lambda t: t.sub_(1.0)),
    ("mul_", lambda t: t.mul_(2.0)),
    ("div_", lambda t: t.div_(2.0)),
    ("pow_", lambda t: t.pow_(2.0)),
    ("exp_", lambda t: t.exp_()),
    ("neg_", lambda t: t.neg_()),
    ("clamp_", lambda t: t.clamp_(0.0, 1.0)),
    ("fill_", lambda t: t.fill_(1.0)),
    ("zero_", lambda t: t.zero_()),
    ("copy_", lambda t: t.copy_(f64([1.0, 2.0, 3.0]))),
    ("masked_fill_", lambda t: t.masked_fill_(_mask(), 0.0)),
    ("setitem", lambda t: t.__setitem__(0, 5.0)),
    ("iadd", _iadd),
    ("scatter_add_", lambda t: t.scatter_add_(0, newch.tensor([0, 1]), f64([1.0, 1.0]))),
]


@pytest.mark.parametrize("name, op", LEAF_INPLACE, ids=[n for n, _ in LEAF_INPLACE])
def test_in_place_on_a_leaf_that_requires_grad_raises(name, op):
    x = f64([0.5, 1.5, 2.5], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        op(x)
    assert x.tolist() == [0.5, 1.5, 2.5]


def test_in_place_on_a_leaf_is_fine_under_no_grad():
    x = f64([0.5, 1.5, 2.5], requires_grad=True)
    with newch.no_grad():
        x.add_(1.0)
        x[0] = 0.0
    assert x.tolist() == [0.0, 2.5, 3.5]
    assert x.is_leaf and x.requires_grad


VIEWS = [("int", lambda t: t[0]), ("slice", lambda t: t[:, 1:]), ("view", lambda t: t.view(6)),
         ("t", lambda t: t.t()), ("reshape", lambda t: t.reshape(3, 2)), ("unsqueeze", lambda t: t.unsqueeze(0))]


@pytest.mark.parametrize("name, view", VIEWS, ids=[n for n, _ in VIEWS])
def test_in_place_on_a_view_of_a_leaf_that_requires_grad_raises(name, view):
    x = f64([[0.5, 1.5, 2.5], [1.0, 2.0, 3.0]], requires_grad=True)
    with pytest.raises(RuntimeError, match="view"):
        view(x).mul_(2.0)
    with pytest.raises(RuntimeError, match="view"):
        view(x)[0] = 7.0
    assert x.tolist() == [[0.5, 1.5, 2.5], [1.0, 2.0, 3.0]]


def test_in_place_on_a_non_leaf_gives_the_right_gradient():
    x = f64([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    y.add_(1)
    assert y.grad_fn.name() == "AddBackward0"
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
    assert y.tolist() == [3.0, 5.0, 7.0]


def test_chain_of_in_place_ops_on_a_non_leaf():
    x = f64([0.5, -1.0, 2.0], requires_grad=True)
    y = x * 1.0
    y.mul_(3.0).add_(1.0).tanh_()
    y.sum().backward()
    expected = 3.0 * (1 - np.tanh(3.0 * np.array([0.5, -1.0, 2.0]) + 1.0) ** 2)
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12)


def _inplace_case(name, fn, *inputs):
    return pytest.param(fn, inputs, id=name)


def _on_copy(op):
    """x -> op applied in place to a non-leaf copy of x (the way a model's forward would)."""
    def f(x, *rest):
        y = x * 1.0
        out = op(y, *rest)
        assert out is y
        return y
    return f


def _setitem(y, v):
    y[1:] = v * 2.0
    return y


def _setitem_mask(y):
    y[y > 0] = 0.5
    return y


def _iadd_tensor(y, v):
    y += v
    return y


def _imul_tensor(y, v):
    y *= v
    return y


U = np.array([[0.3, -0.7, 1.2], [-1.1, 0.45, 0.8]])
P = np.array([[0.3, 0.7, 1.2], [1.1, 0.45, 0.8]])
W = np.array([0.6, -1.3, 0.9])

NON_LEAF = [
    _inplace_case("add_", _on_copy(lambda y, v: y.add_(v)), U, W),
    _inplace_case("add_alpha", _on_copy(lambda y, v: y.add_(v, alpha=-2.0)), U, W),
    _inplace_case("sub_", _on_copy(lambda y, v: y.sub_(v)), U, W),
    _inplace_case("mul_scalar", _on_copy(lambda y: y.mul_(3.0)), U),
    _inplace_case("mul_tensor", _on_copy(lambda y, v: y.mul_(v)), U, W),
    _inplace_case("div_", _on_copy(lambda y, v: y.div_(v)), U, W),
    _inplace_case("pow_scalar", _on_copy(lambda y: y.pow_(3.0)), U),
    _inplace_case("pow_tensor", _on_copy(lambda y, v: y.pow_(v)), P, W),
    _inplace_case("clamp_", _on_copy(lambda y: y.clamp_(-0.5, 0.5)), U),
    _inplace_case("clamp_min_", _on_copy(lambda y: y.clamp_min_(0.1)), U),
    _inplace_case("clamp_max_", _on_copy(lambda y: y.clamp_max_(0.1)), U),
    _inplace_case("addcmul_", _on_copy(lambda y, a, b: y.addcmul_(a, b, value=0.5)), U, W, U),
    _inplace_case("addcdiv_", _on_copy(lambda y, a, b: y.addcdiv_(a, b)), U, W, P),
    _inplace_case("lerp_", _on_copy(lambda y, e: y.lerp_(e, 0.25)), U, W),
    _inplace_case("neg_", _on_copy(lambda y: y.neg_()), U),
    _inplace_case("abs_", _on_copy(lambda y: y.abs_()), U),
    _inplace_case("exp_", _on_copy(lambda y: y.exp_()), U),
    _inplace_case("log_", _on_copy(lambda y: y.log_()), P),
    _inplace_case("sqrt_", _on_copy(lambda y: y.sqrt_()), P),
    _inplace_case("sigmoid_", _on_copy(lambda y: y.sigmoid_()), U),
    _inplace_case("tanh_", _on_copy(lambda y: y.tanh_()), U),
    _inplace_case("relu_", _on_copy(lambda y: y.relu_()), U),
    _inplace_case("copy_", _on_copy(lambda y, v: y.copy_(v.exp())), U, W),
    _inplace_case("fill_", _on_copy(lambda y: y.fill_(2.0)), U),
    _inplace_case("zero_", _on_copy(lambda y: y.zero_()), U),
    _inplace_case("masked_fill_", _on_copy(lambda y: y.masked_fill_(_mask(), -1.0)), U),
    _inplace_case("setitem_slice", _on_copy(_setitem), U, W),
    _inplace_case("setitem_mask", _on_copy(_setitem_mask), U),
    _inplace_case("iadd", _on_copy(_iadd_tensor), U, W),
    _inplace_case("imul", _on_copy(_imul_tensor), U, W),
    _inplace_case("scatter_add_", _on_copy(
        lambda y, s: y.scatter_add_(1, newch.tensor([[0, 0, 2], [1, 2, 1]]), s)), U, U * 2),
]


@pytest.mark.parametrize("fn, inputs", NON_LEAF)
def test_in_place_op_on_a_non_leaf_matches_finite_differences(fn, inputs):
    gradcheck(fn, *inputs)


def test_fill_on_a_non_leaf_stops_the_gradient():
    x = f64([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.fill_(5.0)
    (y * x).sum().backward()
    assert x.grad.tolist() == [5.0, 5.0]


def test_masked_fill_on_a_non_leaf_stops_the_gradient_where_masked():
    x = f64([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    y.masked_fill_(_mask(), 0.0)
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 2.0, 0.0]


def test_copy_of_a_constant_into_a_non_leaf_stops_the_gradient():
    x = f64([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    y.copy_(f64([1.0, 1.0, 1.0]))
    assert y.requires_grad and not y.is_leaf and y.grad_fn.name() == "CopyBackwards"
    (y * x).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 1.0] and y.grad is None
    y.add_(1.0)                 # still a non-leaf: in-place stays allowed


def test_in_place_with_a_grad_requiring_operand_on_a_plain_tensor():
    w = f64([1.0, 2.0], requires_grad=True)
    buf = newch.zeros(2, dtype=newch.float64)
    buf.add_(w * 3)
    assert buf.requires_grad and not buf.is_leaf
    buf.sum().backward()
    assert w.grad.tolist() == [3.0, 3.0]


def test_copy_into_a_plain_tensor_carries_the_gradient():
    w = f64([1.0, 2.0], requires_grad=True)
    buf = newch.zeros(2, dtype=newch.float32)
    buf.copy_(w * w)
    assert buf.dtype is newch.float32 and buf.requires_grad
    buf.sum().backward()
    assert w.grad.dtype is newch.float64 and w.grad.tolist() == [2.0, 4.0]


def test_modifying_a_saved_output_then_backward_raises():
    x = f64([1.0, 2.0], requires_grad=True)
    y = x.exp()
    y.mul_(2)
    with pytest.raises(RuntimeError, match="in-place"):
        y.sum().backward()


def test_modifying_a_saved_input_then_backward_raises():
    x = f64([1.0, 2.0], requires_grad=True)
    w = x * 1.0
    z = w * x              # saves w (for x's gradient) and x (for w's gradient)
    w.add_(1.0)
    with pytest.raises(RuntimeError, match="in-place"):
        z.sum().backward()


def test_modifying_a_saved_leaf_under_no_grad_then_backward_raises():
    x = f64([1.0, 2.0], requires_grad=True)
    z = (x * x).sum()
    with newch.no_grad():
        x.add_(1.0)
    with pytest.raises(RuntimeError, match="in-place"):
        z.backward()


def test_modifying_a_tensor_nobody_saved_is_fine():
    x = f64([1.0, 2.0], requires_grad=True)
    y = x + 1.0           # add saves nothing
    y.mul_(3.0)
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_in_place_multiply_by_itself_raises_like_torch():
    x = f64([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.mul_(y)
    with pytest.raises(RuntimeError, match="in-place"):
        y.sum().backward()


def test_in_place_on_a_view_of_a_non_leaf_is_refused():
    # newch does not rebase the base tensor's history onto an in-place change of one of its
    # views (PyTorch does); refusing beats a silently wrong gradient for the base.
    x = f64([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match="view"):
        y[:, 1:].mul_(3.0)
    with pytest.raises(RuntimeError, match="view"):
        y[0][1] = 5.0
    with newch.no_grad():
        y[0].mul_(3.0)           # no graph is recorded: allowed
    assert y.tolist() == [[6.0, 12.0, 18.0], [8.0, 10.0, 12.0]]


def test_using_a_view_after_its_base_changed_in_place_is_refused():
    # y[0] was taken before y.mul_(3): its recorded history (a slice of y * 2) is stale
    x = f64([1.0, 2.0], requires_grad=True)
    y = x * 2
    v = y[0]
    y.mul_(3.0)
    with pytest.raises(RuntimeError, match="view"):
        v * 2.0
    w = y[0] * 2.0              # a view taken after the in-place op is fine
    w.backward()
    assert x.grad.tolist() == [12.0, 0.0]


def test_views_used_before_the_base_changes_keep_their_gradient():
    x = f64([1.0, 2.0], requires_grad=True)
    y = x * 2
    a = y[0] * 5.0              # consumed before the in-place op
    y.add_(1.0)
    (a + y.sum()).backward()
    assert x.grad.tolist() == [12.0, 2.0]


def test_in_place_on_a_copy_made_by_reshape_is_allowed():
    x = f64([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = x.t().reshape(4)        # strides force a copy: not a view of x
    y.mul_(2.0)
    y.sum().backward()
    assert x.grad.tolist() == [[2.0, 2.0], [2.0, 2.0]]


def test_backward_twice_needs_retain_graph():
    x = f64([1.0, 2.0], requires_grad=True)
    y = x.sigmoid().sum()
    y.backward(retain_graph=True)
    y.backward()
    s = 1 / (1 + np.exp(-np.array([1.0, 2.0])))
    np.testing.assert_allclose(x.grad.numpy(), 2 * s * (1 - s))
    with pytest.raises(RuntimeError, match="retain_graph"):
        y.backward()
