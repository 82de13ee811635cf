"""The finite-difference oracle itself: it passes a right backward and catches a slightly wrong one."""
import numpy as np
import pytest

import newch
from newch.autograd import Function

from .gradcheck import finite_diff, gradcheck, to_np


def _cube(slip):
    """x**3 whose backward is off by a relative ``slip`` (0: right)."""
    class Cube(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * (3.0 * (1.0 + slip)) * x * x
    return Cube.apply


X = np.array([[0.7, -1.3, 2.1], [0.2, 1.1, -0.4]])


def test_a_right_backward_passes():
    gradcheck(_cube(0.0), X)


def test_a_backward_wrong_by_one_part_in_100000_is_caught():
    with pytest.raises(AssertionError, match="gradient of input 0"):
        gradcheck(_cube(1e-5), X)


def test_only_the_listed_inputs_are_checked():
    wrong = _cube(0.5)
    gradcheck(lambda x, y: x * 2.0 + wrong(y), X, X, wrt=[0])
    with pytest.raises(AssertionError, match="gradient of input 1"):
        gradcheck(lambda x, y: x * 2.0 + wrong(y), X, X)


def test_finite_diff_and_to_np_against_hand_derivatives():
    a = np.array([0.5, -2.0, 3.0])
    np.testing.assert_allclose(finite_diff(lambda b: float((b ** 2).sum()), a), 2 * a, rtol=1e-8)
    t = newch.tensor([1.5, 2.5], dtype=newch.float32, requires_grad=True)
    got = to_np(t * 2)
    assert got.dtype == np.float64 and got.tolist() == [3.0, 5.0]


def test_a_failure_names_the_input_by_its_position():
    wrong = _cube(0.5)
    with pytest.raises(AssertionError, match="gradient of input 1"):
        gradcheck(lambda x, y: x * 2.0 + wrong(y), X, X, wrt=[1])
