"""How tensors print: the same text as PyTorch (modulo the module name) where the formats agree."""
import numpy as np
import pytest

import newch


def same_as_torch(torch, values, dtype=None, **kw):
    x = newch.tensor(values, dtype=getattr(newch, dtype) if dtype else None, **kw)
    t = torch.tensor(values, dtype=getattr(torch, dtype) if dtype else None, **kw)
    assert repr(x) == repr(t).replace("torch.", "newch."), (repr(x), repr(t))


@pytest.mark.parametrize("values, dtype", [
    ([1.0, 2.0], None),
    ([1.5, 2.0], None),
    ([-1.5, 2.25, 3.0], None),
    ([1, 2], "int32"),
    ([1, 2], None),
    ([1, 2], "uint8"),
    ([True, False], None),
    ([[1.5, 2.0], [3.0, 4.0]], None),
    ([[1, 2, 3], [4, 5, 6]], None),
    ([1.0, 2.0], "float64"),
    ([0.1, 0.25], "float64"),
    (3.5, None),
    (3, None),
    (True, None),
    ([1e10, 1.0], None),
    ([1e-5, 1.0], None),
    ([123456.0, 0.5], None),
    ([float("nan"), float("inf"), 1.0], None),
    ([float("nan"), 1.5], None),
    ([-float("inf"), 2.0], None),
    ([[[1.0, 2.0]], [[3.0, 4.0]]], None),
])
def test_repr_matches_torch(torch, values, dtype):
    same_as_torch(torch, values, dtype)


def test_repr_of_requires_grad_matches_torch(torch):
    same_as_torch(torch, [1.0, 2.0], requires_grad=True)


def test_repr_hand_written():
    assert repr(newch.tensor([1.0, 2.0])) == "tensor([1., 2.])"
    assert repr(newch.tensor([1.5, 2.0])) == "tensor([1.5000, 2.0000])"
    assert repr(newch.tensor([1, 2], dtype=newch.int32)) == "tensor([1, 2], dtype=newch.int32)"
    assert repr(newch.tensor([True, False])) == "tensor([ True, False])"
    assert repr(newch.tensor(2.5)) == "tensor(2.5000)"
    assert str(newch.tensor([1, 2])) == "tensor([1, 2])"


def test_repr_of_an_op_result_names_its_node():
    x = newch.tensor([1.0, 2.0], requires_grad=True)
    assert repr(x * 2) == "tensor([2., 4.], grad_fn=<MulBackward0>)"


def test_repr_of_empty_tensors(torch):
    for shape in [(0,), (2, 0), (0, 3)]:
        x, t = newch.zeros(shape), torch.zeros(shape)
        assert repr(x) == repr(t).replace("torch.", "newch."), (repr(x), repr(t))


def test_repr_of_a_large_tensor_is_summarised(torch):
    x, t = newch.arange(2000.0), torch.arange(2000.0)
    assert repr(x) == repr(t)
    assert "..." in repr(x)


def test_repr_of_a_freed_tensor_raises_instead_of_reading_memory():
    x = newch.tensor([1.0])
    newch.step_end()
    with pytest.raises(newch.NcError, match="repr"):
        repr(x)


def test_repr_of_a_non_contiguous_view():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = newch.tensor(a)
    assert repr(x.T) == "tensor([[0., 3.],\n        [1., 4.],\n        [2., 5.]])"


def test_format_of_a_0_dim_tensor():
    assert f"{newch.tensor(2.5):.2f}" == "2.50"


@pytest.mark.parametrize("shape", [(30,), (1, 30), (5, 7), (2, 3, 4), (2000,), (40, 40), (3, 500),
                                   (11, 3, 50), (1001,)])
def test_layout_matches_torch_for_many_shapes(torch, shape):
    rng = np.random.default_rng(sum(shape))
    for scale in (1.0, 1000.0, 1e-5):
        a = (rng.standard_normal(shape) * scale).astype(np.float32)
        assert repr(newch.tensor(a)) == repr(torch.tensor(a))
    ints = rng.integers(-1000, 1000, shape)
    for arr in (ints, ints > 0, ints.astype(np.int32), ints.astype(np.float64)):
        assert repr(newch.tensor(arr)) == repr(torch.tensor(arr)).replace("torch.", "newch.")
    assert repr(newch.tensor(a, requires_grad=True)) == repr(torch.tensor(a, requires_grad=True))


def test_repr_of_empty_int_tensors_names_the_dtype(torch):
    for shape, dt in [((0,), "int64"), ((2, 0), "int32"), ((0,), "bool"), ((0,), "float64")]:
        x, t = newch.zeros(shape, dtype=getattr(newch, dt)), torch.zeros(shape, dtype=getattr(torch, dt))
        assert repr(x) == repr(t).replace("torch.", "newch.")
