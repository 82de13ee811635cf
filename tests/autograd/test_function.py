"""Custom differentiable ops: newch.autograd.Function with forward/backward and ctx.save_for_backward."""
import numpy as np
import pytest

import newch
from newch.autograd import Function

from .gradcheck import gradcheck, gradgradcheck


def f64(values, requires_grad=False):
    return newch.tensor(values, dtype=newch.float64, requires_grad=requires_grad)


class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3.0 * x * x


class ScaledMul(Function):
    """a * b * k with a Python number k (which gets no gradient)."""

    @staticmethod
    def forward(ctx, a, b, k):
        ctx.save_for_backward(a, b)
        ctx.k = k
        return a * b * k

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return g * b * ctx.k, g * a * ctx.k, None


class Exp(Function):
    """Saves its output, like the built-in exp."""

    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y


def test_custom_function_gradient():
    x = f64([1.0, -2.0, 0.5], requires_grad=True)
    y = Cube.apply(x)
    assert y.requires_grad and y.grad_fn.name() == "CubeBackward"
    assert y.tolist() == [1.0, -8.0, 0.125]
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 12.0, 0.75]


def test_custom_function_matches_finite_differences():
    gradcheck(lambda x: Cube.apply(x.sin()) * 2.0, np.array([0.3, -1.2, 0.8]))
    gradcheck(lambda a, b: ScaledMul.apply(a, b, 1.5), np.array([[0.3, -1.2], [0.8, 2.0]]),
              np.array([0.5, -0.25]))
    gradcheck(lambda x: Exp.apply(x) + x, np.array([0.3, -1.2]))


def test_ctx_attributes_and_non_tensor_arguments():
    a = f64([2.0], requires_grad=True)
    b = f64([3.0], requires_grad=True)
    ScaledMul.apply(a, b, 10.0).sum().backward()
    assert a.grad.tolist() == [30.0] and b.grad.tolist() == [20.0]


def test_needs_input_grad():
    seen = {}

    class Probe(Function):
        @staticmethod
        def forward(ctx, a, b, k):
            seen["needs"] = ctx.needs_input_grad
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g, None, None
    Probe.apply(f64([1.0], requires_grad=True), f64([1.0]), 2)
    assert tuple(seen["needs"]) == (True, False, False)


def test_forward_runs_without_recording_a_graph():
    seen = {}

    class Probe(Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 2
            seen["inner"] = y.requires_grad
            return y

        @staticmethod
        def backward(ctx, g):
            return g * 2
    out = Probe.apply(f64([1.0], requires_grad=True))
    assert seen["inner"] is False and out.requires_grad


def test_no_input_requires_grad_means_no_graph():
    y = Cube.apply(f64([2.0]))
    assert not y.requires_grad and y.grad_fn is None
    with newch.no_grad():
        assert not Cube.apply(f64([2.0], requires_grad=True)).requires_grad


def test_backward_returning_the_wrong_number_of_gradients_raises():
    class Bad(Function):
        @staticmethod
        def forward(ctx, a, b):
            return a + b

        @staticmethod
        def backward(ctx, g):
            return g
    y = Bad.apply(f64([1.0], requires_grad=True), f64([1.0], requires_grad=True))
    with pytest.raises(RuntimeError, match="Bad"):
        y.sum().backward()


def test_saved_tensor_modified_in_place_raises():
    x = f64([1.0, 2.0], requires_grad=True)
    y = x * 1.0
    z = Cube.apply(y)
    y.add_(1.0)
    with pytest.raises(RuntimeError, match="in-place"):
        z.sum().backward()


def test_none_gradient_does_not_block_the_rest_of_the_graph():
    # A backward returning None for an input that requires grad means "zero": the other
    # consumers of that input must still deliver their gradient.
    class Blocker(Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * 0.0 + b

        @staticmethod
        def backward(ctx, g):
            return None, g
    x = f64([1.0, 2.0], requires_grad=True)
    b = f64([1.0, 1.0], requires_grad=True)
    y = x * 2.0
    out = Blocker.apply(y, b) + y * 3.0
    out.sum().backward()
    assert x.grad.tolist() == [6.0, 6.0]
    assert b.grad.tolist() == [1.0, 1.0]


def test_all_none_gradients_leave_leaves_untouched():
    class Stop(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 1.0

        @staticmethod
        def backward(ctx, g):
            return None
    x = f64([1.0], requires_grad=True)
    y = x * 2.0
    Stop.apply(y).sum().backward()
    assert x.grad is None


def test_mark_non_differentiable_second_output():
    class MaxWithIndex(Function):
        @staticmethod
        def forward(ctx, x):
            v, i = x.max(0)
            ctx.mark_non_differentiable(i)
            ctx.save_for_backward(i)
            ctx.n = x.shape[0]
            return v, i

        @staticmethod
        def backward(ctx, g):
            (i,) = ctx.saved_tensors
            out = newch.zeros(ctx.n, dtype=g.dtype)
            out[i] = g
            return out
    x = f64([1.0, 5.0, 2.0], requires_grad=True)
    v, i = MaxWithIndex.apply(x)
    assert v.requires_grad and not i.requires_grad and i.item() == 1
    v.backward()
    assert x.grad.tolist() == [0.0, 1.0, 0.0]


def test_custom_backward_built_from_ops_is_twice_differentiable():
    x = f64([0.5, -1.5], requires_grad=True)
    (g,) = newch.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), 3 * np.array([0.5, -1.5]) ** 2)
    (h,) = newch.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), 6 * np.array([0.5, -1.5]))
    gradgradcheck(lambda a: Cube.apply(a), np.array([0.5, -1.5]))


def test_custom_function_used_twice_accumulates():
    x = f64([2.0], requires_grad=True)
    (Cube.apply(x) + Cube.apply(x * 2.0)).sum().backward()
    assert x.grad.tolist() == [3 * 4.0 + 2 * 3 * 16.0]


def test_broadcast_gradient_from_a_custom_backward_is_summed_to_the_input_shape():
    class AddBias(Function):
        @staticmethod
        def forward(ctx, x, b):
            return x + b

        @staticmethod
        def backward(ctx, g):
            return g, g           # g has x's shape; b was broadcast
    x = f64([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    b = f64([0.5, 0.5], requires_grad=True)
    (AddBias.apply(x, b) * f64([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    assert b.grad.tolist() == [4.0, 6.0] and x.grad.tolist() == [[1.0, 2.0], [3.0, 4.0]]


def test_gradient_of_an_impossible_shape_from_a_custom_backward_raises():
    class Wrong(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return newch.ones(5, dtype=g.dtype)
    y = Wrong.apply(f64([1.0, 2.0], requires_grad=True))
    with pytest.raises(RuntimeError, match="Wrong.backward: gradient 0 has shape"):
        y.sum().backward()
