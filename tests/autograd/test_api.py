"""The user-facing autograd API: requires_grad, .grad, backward, grad_fn, detach, retain_grad,
grad modes (no_grad, enable_grad, inference_mode, set_grad_enabled) and autograd.grad."""
import numpy as np
import pytest

import newch


def f64(values, requires_grad=False):
    return newch.tensor(values, dtype=newch.float64, requires_grad=requires_grad)


# -- requires_grad and leaves ------------------------------------------------

def test_requires_grad_defaults_and_propagation():
    a = newch.ones(3)
    assert not a.requires_grad and a.is_leaf and a.grad_fn is None
    x = newch.ones(3, requires_grad=True)
    assert x.requires_grad and x.is_leaf and x.grad_fn is None and x.grad is None
    y = x * a
    assert y.requires_grad and not y.is_leaf and y.grad_fn is not None
    z = a * 2
    assert not z.requires_grad and z.grad_fn is None


def test_requires_grad_setters():
    a = newch.zeros(2)
    assert a.requires_grad_() is a and a.requires_grad
    a.requires_grad = False
    assert not a.requires_grad
    b = newch.tensor([1.0, 2.0], requires_grad=True)
    assert b.requires_grad


def test_integer_tensors_cannot_require_grad():
    with pytest.raises(RuntimeError, match="floating point"):
        newch.tensor([1, 2]).requires_grad_()


def test_requires_grad_false_on_a_non_leaf_raises():
    y = newch.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="leaf"):
        y.requires_grad_(False)


# -- .grad accumulation and backward() arguments ---------------------------

def test_grad_accumulates_over_backward_calls():
    x = f64([1.0, -2.0, 3.0], requires_grad=True)
    (x * x).sum().backward()
    assert x.grad.tolist() == [2.0, -4.0, 6.0]
    (x * 3.0).sum().backward()
    assert x.grad.tolist() == [5.0, -1.0, 9.0]
    x.grad = None
    (x * 3.0).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0, 3.0]


def test_grad_of_a_leaf_used_twice_in_one_graph_is_summed():
    x = f64([2.0], requires_grad=True)
    (x * x + x.exp() + x).sum().backward()
    assert x.grad.item() == pytest.approx(2 * 2.0 + np.exp(2.0) + 1.0)


def test_backward_with_explicit_gradient():
    x = f64([1.0, 2.0], requires_grad=True)
    y = x * x
    y.backward(gradient=f64([10.0, -1.0]))
    assert x.grad.tolist() == [20.0, -4.0]


def test_backward_of_a_leaf_itself():
    x = f64([1.0, 2.0], requires_grad=True)
    x.backward(f64([3.0, 4.0]))
    assert x.grad.tolist() == [3.0, 4.0]


def test_backward_of_a_one_element_non_scalar_needs_no_gradient():
    x = f64([[3.0]], requires_grad=True)
    (x * 2).backward()
    assert x.grad.tolist() == [[2.0]]


def test_backward_needs_gradient_for_non_scalar_outputs():
    y = f64([1.0, 2.0], requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="scalar"):
        y.backward()


def test_backward_rejects_a_gradient_of_the_wrong_shape():
    y = f64([1.0, 2.0], requires_grad=True) * 2
    with pytest.raises((ValueError, RuntimeError), match="shape"):
        y.backward(f64([1.0, 2.0, 3.0]))


def test_backward_of_a_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="does not require grad"):
        f64([1.0]).sum().backward()


def test_backward_twice_without_retain_graph_raises():
    x = f64([1.0, 2.0], requires_grad=True)
    y = (x.exp() * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()


def test_backward_twice_with_retain_graph_accumulates():
    x = f64([1.0, 2.0], requires_grad=True)
    y = (x.exp() * x).sum()
    y.backward(retain_graph=True)
    first = x.grad.numpy().copy()
    y.backward(retain_graph=False)
    np.testing.assert_allclose(x.grad.numpy(), 2 * first)
    np.testing.assert_allclose(first, np.exp([1.0, 2.0]) * (1 + np.array([1.0, 2.0])))
    with pytest.raises(RuntimeError, match="retain_graph"):
        y.backward()


def test_backward_of_several_roots_at_once():
    x = f64([1.0, 2.0], requires_grad=True)
    a, b = x * 2, x * x
    newch.autograd.backward([a.sum(), b], [None, f64([1.0, 10.0])])
    assert x.grad.tolist() == [4.0, 42.0]


def test_backward_inputs_limits_what_accumulates():
    x = f64([1.0], requires_grad=True)
    w = f64([3.0], requires_grad=True)
    (x * w).sum().backward(inputs=[w])
    assert w.grad.tolist() == [1.0] and x.grad is None


def test_root_that_is_also_an_intermediate_of_another_root():
    x = f64([2.0], requires_grad=True)
    y = x * 3
    z = y * y
    newch.autograd.backward([y, z], [f64([1.0]), f64([1.0])])
    assert x.grad.tolist() == [3.0 + 2 * 6.0 * 3.0]


def test_persistent_leaf_gets_a_gradient_that_survives_step_end():
    with newch.persistent():
        w = newch.tensor([1.0, 2.0], requires_grad=True)
    (w * w).sum().backward()
    assert w.grad.is_persistent
    newch.step_end()
    assert w.grad.tolist() == [2.0, 4.0]


def test_accumulating_into_a_grad_made_with_create_graph():
    x = f64([1.0, 2.0], requires_grad=True)
    x.sum().backward(create_graph=True)
    (x * 2.0).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]
    (x * x).sum().backward()
    assert x.grad.tolist() == [5.0, 7.0]


# -- grad_fn -------------------------------------------------------------------

@pytest.mark.parametrize("make, name", [
    (lambda x: x + 1, "AddBackward0"),
    (lambda x: x * x, "MulBackward0"),
    (lambda x: x / 2, "DivBackward0"),
    (lambda x: x.exp(), "ExpBackward0"),
    (lambda x: x.tanh(), "TanhBackward0"),
    (lambda x: x.sigmoid(), "SigmoidBackward0"),
    (lambda x: x.relu(), "ReluBackward0"),
    (lambda x: x.sum(), "SumBackward0"),
    (lambda x: x.sum(0), "SumBackward1"),
    (lambda x: x.mean(), "MeanBackward0"),
    (lambda x: x.max(), "MaxBackward1"),
    (lambda x: x.max(0)[0], "MaxBackward0"),
    (lambda x: x @ x.t(), "MmBackward0"),
    (lambda x: x.clone(), "CloneBackward0"),
    (lambda x: x.permute(1, 0), "PermuteBackward0"),
    (lambda x: x[newch.tensor([0, 1])], "IndexBackward0"),
    (lambda x: newch.cat([x, x]), "CatBackward0"),
    (lambda x: x.expand(3, 2, 3), "ExpandBackward0"),
    (lambda x: newch.where(x > 0, x, 0.0), "WhereBackward0"),
])
def test_grad_fn_names(make, name):
    x = newch.randn(2, 3, dtype=newch.float64, requires_grad=True)
    y = make(x)
    assert y.grad_fn.name() == name
    assert name in repr(y.grad_fn)


def test_grad_fn_names_match_torch(torch):
    x = torch.ones(2, 3, requires_grad=True)
    for make in (lambda t: t + 1, lambda t: t * t, lambda t: t.exp(), lambda t: t.sum(),
                 lambda t: t.sum(0), lambda t: t.mean(), lambda t: t @ t.t(), lambda t: t.clone()):
        assert make(newch.ones(2, 3, requires_grad=True)).grad_fn.name() == make(x).grad_fn.name()


# -- detach / detach_ ---------------------------------------------------------

def test_detach_shares_memory_and_cuts_the_graph():
    x = f64([1.0, 2.0], requires_grad=True)
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.grad_fn is None and d.is_leaf
    assert d.tolist() == [2.0, 4.0]
    with newch.no_grad():
        d[0] = 7.0
    assert y.tolist() == [7.0, 4.0]


def test_gradient_does_not_flow_through_detach():
    x = f64([1.0, 3.0], requires_grad=True)
    (x * x.detach()).sum().backward()
    assert x.grad.tolist() == [1.0, 3.0]


def test_detach_in_place():
    x = f64([1.0, 3.0], requires_grad=True)
    y = x * 2
    assert y.detach_() is y
    assert not y.requires_grad and y.grad_fn is None and y.is_leaf
    z = y * x
    z.sum().backward()
    assert x.grad.tolist() == [2.0, 6.0]


# -- retain_grad ----------------------------------------------------------------

def test_non_leaf_grad_is_none_without_retain_grad():
    x = f64([1.0, 2.0], requires_grad=True)
    y = x * 3
    (y * y).sum().backward()
    assert y.grad is None and not y.retains_grad


def test_retain_grad_keeps_the_intermediate_gradient():
    x = f64([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.retain_grad()
    assert y.retains_grad
    z = (y * y).sum()
    z.backward(retain_graph=True)
    assert y.grad.tolist() == [6.0, 12.0]
    assert x.grad.tolist() == [18.0, 36.0]
    z.backward()
    assert y.grad.tolist() == [12.0, 24.0]


def test_retain_grad_on_the_root_and_on_a_leaf():
    x = f64([1.0, 2.0], requires_grad=True)
    x.retain_grad()                  # a leaf already keeps its grad: no-op
    y = (x * x).sum()
    y.retain_grad()
    y.backward()
    assert y.grad.item() == 1.0 and x.grad.tolist() == [2.0, 4.0]


# -- grad modes -----------------------------------------------------------------

def test_no_grad_context_records_nothing_and_restores():
    x = f64([1.0], requires_grad=True)
    with newch.no_grad():
        assert not newch.is_grad_enabled()
        y = x * 2
    assert newch.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None


def test_no_grad_restores_after_an_exception():
    with pytest.raises(ZeroDivisionError):
        with newch.no_grad():
            1 / 0
    assert newch.is_grad_enabled()


def test_no_grad_as_decorator():
    x = f64([1.0], requires_grad=True)

    @newch.no_grad()
    def double(t):
        """Doubles."""
        return t * 2
    assert not double(x).requires_grad
    assert double.__name__ == "double" and double.__doc__ == "Doubles."
    assert newch.is_grad_enabled()


def test_grad_mode_decorators_without_parentheses():
    x = f64([1.0], requires_grad=True)

    @newch.no_grad
    def off(t):
        return t * 2

    @newch.enable_grad
    def on(t):
        return t * 2

    @newch.inference_mode
    def infer(t):
        return t * 2
    assert not off(x).requires_grad and not infer(x).requires_grad
    with newch.no_grad():
        assert on(x).requires_grad
    assert off.__name__ == "off" and newch.is_grad_enabled()


def test_set_grad_enabled_and_inference_mode_false_as_decorators():
    x = f64([1.0], requires_grad=True)

    @newch.set_grad_enabled(False)
    def off(t):
        return t * 2
    assert newch.is_grad_enabled()          # decorating does not switch the mode

    @newch.inference_mode(False)
    def recording(t):
        return t * 2
    assert not off(x).requires_grad and newch.is_grad_enabled()
    with newch.no_grad():
        assert recording(x).requires_grad
        assert not newch.is_grad_enabled()


def test_enable_grad_inside_no_grad_and_as_decorator():
    x = f64([1.0], requires_grad=True)

    @newch.enable_grad()
    def double(t):
        return t * 2
    with newch.no_grad():
        with newch.enable_grad():
            assert newch.is_grad_enabled()
            assert (x * 2).requires_grad
        assert not newch.is_grad_enabled()
        assert double(x).requires_grad
        assert not (x * 2).requires_grad


def test_set_grad_enabled_as_a_call():
    x = f64([1.0], requires_grad=True)
    newch.set_grad_enabled(False)
    try:
        assert not newch.is_grad_enabled()
        assert not (x * 2).requires_grad
    finally:
        newch.set_grad_enabled(True)
    assert (x * 2).requires_grad


def test_set_grad_enabled_as_a_context_manager():
    x = f64([1.0], requires_grad=True)
    with newch.set_grad_enabled(False):
        assert not (x * 2).requires_grad
        with newch.set_grad_enabled(True):
            assert (x * 2).requires_grad
        assert not newch.is_grad_enabled()
    assert newch.is_grad_enabled()
    with newch.no_grad():
        with newch.set_grad_enabled(True):
            assert newch.is_grad_enabled()
        assert not newch.is_grad_enabled()


def test_inference_mode():
    x = f64([1.0], requires_grad=True)
    with newch.inference_mode():
        assert not newch.is_grad_enabled()
        assert not (x * 2).requires_grad
    assert newch.is_grad_enabled()
    with newch.inference_mode(False):
        assert (x * 2).requires_grad

    @newch.inference_mode()
    def double(t):
        return t * 2
    assert not double(x).requires_grad and newch.is_grad_enabled()


def test_grad_modes_are_exported_by_autograd_too():
    assert newch.autograd.no_grad is newch.no_grad
    assert newch.autograd.enable_grad is newch.enable_grad
    assert newch.autograd.set_grad_enabled is newch.set_grad_enabled


# -- autograd.grad --------------------------------------------------------------

def test_grad_returns_a_tuple_and_leaves_dot_grad_alone():
    x = f64([1.0, 2.0], requires_grad=True)
    w = f64([3.0, -1.0], requires_grad=True)
    gx, gw = newch.autograd.grad((x * w).sum(), [x, w])
    assert gx.tolist() == [3.0, -1.0] and gw.tolist() == [1.0, 2.0]
    assert x.grad is None and w.grad is None
    (g,) = newch.autograd.grad((x * x).sum(), x)
    assert g.tolist() == [2.0, 4.0]


def test_grad_with_grad_outputs():
    x = f64([1.0, 2.0], requires_grad=True)
    (g,) = newch.autograd.grad(x * x, x, grad_outputs=f64([1.0, -1.0]))
    assert g.tolist() == [2.0, -4.0]


def test_grad_with_respect_to_an_intermediate():
    x = f64([1.0, 2.0], requires_grad=True)
    y = x * 3
    (gy,) = newch.autograd.grad((y * y).sum(), y)
    assert gy.tolist() == [6.0, 12.0]


def test_second_derivative_with_create_graph():
    x = f64([1.0, 2.0, -0.5], requires_grad=True)
    y = (x ** 3).sum()
    (g,) = newch.autograd.grad(y, x, create_graph=True)
    assert g.requires_grad
    np.testing.assert_allclose(g.detach().numpy(), 3 * np.array([1.0, 2.0, -0.5]) ** 2)
    (h,) = newch.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), 6 * np.array([1.0, 2.0, -0.5]))


def test_third_derivative():
    x = f64([0.7], requires_grad=True)
    (g1,) = newch.autograd.grad(x.sin().sum(), x, create_graph=True)
    (g2,) = newch.autograd.grad(g1.sum(), x, create_graph=True)
    (g3,) = newch.autograd.grad(g2.sum(), x)
    np.testing.assert_allclose([g1.item(), g2.item(), g3.item()],
                               [np.cos(0.7), -np.sin(0.7), -np.cos(0.7)])


def test_backward_with_create_graph_makes_a_differentiable_grad():
    x = f64([1.5], requires_grad=True)
    (x ** 4).sum().backward(create_graph=True)
    g = x.grad
    assert g.requires_grad
    np.testing.assert_allclose(g.detach().numpy(), [4 * 1.5 ** 3])
    (h,) = newch.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), [12 * 1.5 ** 2])


def test_grad_penalty_style_double_backward():
    x = f64([[0.5, -1.0], [2.0, 0.3]], requires_grad=True)
    w = f64([[1.0, 2.0], [-1.0, 0.5]], requires_grad=True)
    out = (x @ w).tanh().sum()
    (gx,) = newch.autograd.grad(out, x, create_graph=True)
    penalty = (gx * gx).sum()
    penalty.backward()
    # d penalty / dw by central differences
    xv, wv = x.detach().numpy(), w.detach().numpy()

    def pen(wm):
        t = np.tanh(xv @ wm)
        gxm = (1 - t ** 2) @ wm.T
        return (gxm ** 2).sum()
    num = np.zeros_like(wv)
    for idx in np.ndindex(wv.shape):
        d = np.zeros_like(wv)
        d[idx] = 1e-6
        num[idx] = (pen(wv + d) - pen(wv - d)) / 2e-6
    np.testing.assert_allclose(w.grad.numpy(), num, atol=1e-6, rtol=1e-6)


def test_grad_allow_unused():
    x = f64([1.0], requires_grad=True)
    unused = f64([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="allow_unused"):
        newch.autograd.grad((x * 2).sum(), [x, unused])
    gx, gu = newch.autograd.grad((x * 2).sum(), [x, unused], allow_unused=True)
    assert gx.tolist() == [2.0] and gu is None
    gx, gu = newch.autograd.grad((x * 2).sum(), [x, unused], materialize_grads=True)
    assert gu.tolist() == [0.0]


def test_grad_of_an_input_not_requiring_grad_raises():
    x = f64([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="does not require grad"):
        newch.autograd.grad((x * 2).sum(), f64([1.0]))


def test_grad_frees_the_graph_unless_retained():
    x = f64([1.0, 2.0], requires_grad=True)
    y = (x.exp() * 2).sum()
    newch.autograd.grad(y, x, retain_graph=True)
    newch.autograd.grad(y, x)
    with pytest.raises(RuntimeError, match="second time"):
        newch.autograd.grad(y, x)
