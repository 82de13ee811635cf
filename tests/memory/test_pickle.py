"""Pickle and copy write a tensor's own values only, refuse freed tensors, and give persistent results."""
import copy
import pickle

import numpy as np
import pytest

import newch
from newch import NcError


def test_pickling_a_stale_temporary_raises(ctx):
    x = newch.randn(3)
    newch.step_end()
    newch.full((3,), 7.0)          # reuses x's bytes
    with pytest.raises(NcError, match="pickle"):
        pickle.dumps(x)


def test_pickling_a_released_persistent_tensor_raises(ctx):
    with newch.persistent():
        x = newch.randn(3)
    newch.release(x)
    with pytest.raises(NcError):
        pickle.dumps(x)


def test_pickle_writes_only_the_tensors_own_values(ctx):
    big = newch.randn(100_000)     # shares the arena block with x
    x = newch.tensor([1.0, 2.0, 3.0])
    blob = pickle.dumps(x)
    assert len(blob) < 1000
    assert b"Arena" not in blob and b"Storage" not in blob
    del big


def test_pickle_of_a_strided_view_writes_only_the_view(ctx):
    x = newch.arange(10_000.0).reshape(100, 100)
    blob = pickle.dumps(x[:, 3])
    assert len(blob) < 2000
    np.testing.assert_array_equal(pickle.loads(blob).numpy(), np.arange(3, 10_000, 100))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 3)])
def test_round_trip_keeps_values_dtype_shape_and_is_persistent(ctx, dtype, shape):
    rng = np.random.default_rng(0)
    vals = (rng.standard_normal(shape) * 5).astype(dtype)
    x = newch.tensor(vals)
    y = pickle.loads(pickle.dumps(x))
    assert y.dtype is getattr(newch, dtype) and tuple(y.shape) == shape
    assert y.is_persistent and y._s is not x._s
    newch.step_end()
    np.testing.assert_array_equal(y.numpy(), vals)


def test_persistent_tensors_pickle(ctx):
    with newch.persistent():
        x = newch.arange(4.0)
    y = pickle.loads(pickle.dumps(x))
    np.testing.assert_array_equal(y.numpy(), [0, 1, 2, 3])
    assert y.is_persistent


def test_requires_grad_survives_pickle_and_graph_does_not(ctx):
    w = newch.ones(2, requires_grad=True)
    y = pickle.loads(pickle.dumps(w * 2))
    assert y.requires_grad and y.is_leaf
    np.testing.assert_array_equal(y.detach().numpy(), [2, 2])


def test_parameters_pickle_and_deepcopy_as_parameters(ctx):
    p = newch.nn.Parameter(newch.ones(2))
    q = newch.nn.Parameter(newch.ones(2), requires_grad=False)
    for f in (lambda t: pickle.loads(pickle.dumps(t)), copy.deepcopy, copy.copy):
        a, b = f(p), f(q)
        assert type(a) is newch.nn.Parameter and a.requires_grad and a.is_persistent
        assert type(b) is newch.nn.Parameter and not b.requires_grad


def test_deepcopy_is_a_persistent_copy_with_its_grad(ctx):
    x = newch.ones(3, requires_grad=True)
    (x * 3).sum().backward()
    y = copy.deepcopy(x)
    assert y.is_persistent and y.requires_grad and y._s is not x._s
    np.testing.assert_array_equal(y.grad.numpy(), [3, 3, 3])
    assert y.grad._s is not x.grad._s
    newch.step_end()
    np.testing.assert_array_equal(y.detach().numpy(), [1, 1, 1])


def test_deepcopy_of_a_stale_tensor_raises(ctx):
    x = newch.ones(3)
    newch.step_end()
    with pytest.raises(NcError):
        copy.deepcopy(x)
    with pytest.raises(NcError):
        copy.copy(x)


def test_deepcopy_of_a_non_leaf_raises_as_pytorch(ctx):
    y = newch.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="leaves"):
        copy.deepcopy(y)


def test_deepcopy_keeps_shared_tensors_shared_through_memo(ctx):
    x = newch.ones(2)
    a, b = copy.deepcopy([x, x])
    assert a is b


def test_copy_copy_shares_memory_as_pytorch(ctx):
    with newch.persistent():
        x = newch.zeros(3)
    y = copy.copy(x)
    y[0] = 5.0
    assert x[0].item() == 5.0 and y.is_persistent


def test_module_deepcopy_and_pickle_copy_parameters_and_buffers(ctx):
    model = newch.nn.Sequential(newch.nn.Linear(3, 4), newch.nn.ReLU(), newch.nn.Linear(4, 2))
    model[0].register_buffer("scale", newch.full((4,), 2.0))
    x = newch.randn(5, 3)
    want = model(x).detach().numpy()
    for clone in (copy.deepcopy(model), pickle.loads(pickle.dumps(model))):
        for (n, p), (_, q) in zip(model.named_parameters(), clone.named_parameters()):
            assert type(q) is newch.nn.Parameter and q.is_persistent and q._s is not p._s, n
        assert clone[0].scale.is_persistent and clone[0].scale._s is not model[0].scale._s
        np.testing.assert_allclose(clone(x).detach().numpy(), want, rtol=1e-6)
        with newch.no_grad():
            clone[0].weight.add_(1.0)
        assert not np.allclose(clone(x).detach().numpy(), want)
    newch.step_end()
    assert all(p.is_alive for p in copy.deepcopy(model).parameters())


def test_pickled_tensor_loads_like_torch(ctx):
    torch = pytest.importorskip("torch")
    x = newch.tensor([[1.5, -2.0], [3.0, 4.25]], requires_grad=True)
    t = torch.tensor([[1.5, -2.0], [3.0, 4.25]], requires_grad=True)
    y, u = pickle.loads(pickle.dumps(x)), pickle.loads(pickle.dumps(t))
    assert y.requires_grad == u.requires_grad and y.is_leaf == u.is_leaf
    np.testing.assert_array_equal(y.detach().numpy(), u.detach().numpy())
