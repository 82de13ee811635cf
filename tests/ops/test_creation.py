"""Creating tensors: tensor, as_tensor, from_numpy, zeros/ones/full/empty, arange, linspace, eye, *_like."""
import numpy as np
import pytest

import newch


# -- tensor / as_tensor / from_numpy ------------------------------------------
@pytest.mark.parametrize("data, dtype", [
    ([1, 2, 3], newch.int64),
    ([1.0, 2.0], newch.float32),
    ([1, 2.5], newch.float32),
    ([True, False], newch.bool),
    ([[1, 2], [3, 4]], newch.int64),
    (2.5, newch.float32),
    (7, newch.int64),
    (False, newch.bool),
    ([], newch.float32),
])
def test_tensor_infers_dtype_like_torch(data, dtype):
    x = newch.tensor(data)
    assert x.dtype is dtype
    np.testing.assert_array_equal(x.numpy(), np.asarray(data, dtype.np))
    assert x.shape == np.asarray(data).shape


@pytest.mark.parametrize("npdt", [np.float32, np.float64, np.int64, np.int32, np.uint8, np.bool_])
def test_tensor_from_numpy_keeps_dtype_and_copies(npdt):
    a = np.arange(6).reshape(2, 3).astype(npdt)
    x = newch.tensor(a)
    assert x.dtype.np == np.dtype(npdt)
    a[0, 0] = 1 if npdt is not np.bool_ else True
    a[0, 1] = 0
    assert x.tolist()[0][:2] == [0, 1]


def test_tensor_with_dtype_converts():
    x = newch.tensor([1.7, -2.2], dtype=newch.int64)
    np.testing.assert_array_equal(x.numpy(), [1, -2])
    y = newch.tensor([1, 2], dtype=newch.float64)
    assert y.dtype is newch.float64 and y.tolist() == [1.0, 2.0]


def test_tensor_from_non_contiguous_numpy_and_from_tensor():
    a = np.arange(12.0).reshape(3, 4)[:, ::2].T
    x = newch.tensor(a)
    np.testing.assert_array_equal(x.numpy(), a)
    y = newch.tensor(x)
    assert y is not x and y.tolist() == x.tolist()
    z = newch.tensor(x.T, dtype=newch.int32)
    np.testing.assert_array_equal(z.numpy(), a.T.astype(np.int32))


def test_tensor_of_list_of_tensors():
    x = newch.tensor([newch.tensor(1.5), newch.tensor(2.5)])
    assert x.tolist() == [1.5, 2.5]


def test_as_tensor_shares_when_it_can():
    x = newch.tensor([1.0, 2.0])
    assert newch.as_tensor(x) is x
    y = newch.as_tensor(x, dtype=newch.float64)
    assert y.dtype is newch.float64 and y.tolist() == [1.0, 2.0]
    a = np.array([1.0, 2.0], np.float32)
    t = newch.as_tensor(a)
    a[0] = 9.0
    assert t.tolist() == [9.0, 2.0]
    assert newch.as_tensor([1, 2]).dtype is newch.int64


def test_from_numpy_shares_memory_and_is_persistent():
    a = np.arange(6, dtype=np.float64).reshape(2, 3)
    x = newch.from_numpy(a)
    assert x.dtype is newch.float64 and x.is_persistent
    a[0, 0] = 42.0
    assert x[0, 0].item() == 42.0
    x[1, 2] = -1.0
    assert a[1, 2] == -1.0
    x.mul_(2)
    assert a[0, 0] == 84.0
    assert np.shares_memory(x.numpy(), a)
    newch.step_end()
    assert x.tolist()[0][0] == 84.0


def test_from_numpy_of_a_strided_array():
    a = np.arange(20, dtype=np.int32).reshape(4, 5)[::2, 1::2]
    x = newch.from_numpy(a)
    np.testing.assert_array_equal(x.numpy(), a)
    np.testing.assert_array_equal((x + 1).numpy(), a + 1)


def test_from_numpy_rejects_other_things():
    with pytest.raises(TypeError, match="from_numpy"):
        newch.from_numpy([1, 2])
    with pytest.raises(TypeError, match="complex"):
        newch.from_numpy(np.zeros(2, np.complex64))


# -- filled tensors ----------------------------------------------------------
@pytest.mark.parametrize("fn, value", [(newch.zeros, 0), (newch.ones, 1)])
def test_zeros_ones_accept_every_shape_spelling(fn, value):
    for args in [(2, 3), ((2, 3),), ([2, 3],), (newch.Size([2, 3]),)]:
        x = fn(*args)
        assert x.shape == (2, 3) and x.dtype is newch.float32
        assert (x.numpy() == value).all()
    assert fn(()).shape == () and fn(()).item() == value
    assert fn(0, 3).shape == (0, 3)
    assert fn(2, dtype=newch.int32).dtype is newch.int32
    assert fn(2, dtype=newch.bool).tolist() == [bool(value)] * 2


def test_full_infers_dtype_from_value():
    assert newch.full((2,), 3).dtype is newch.int64
    assert newch.full((2,), 1.5).dtype is newch.float32
    assert newch.full((2,), True).dtype is newch.bool
    x = newch.full((2, 2), 7.25, dtype=newch.float64)
    np.testing.assert_array_equal(x.numpy(), np.full((2, 2), 7.25))
    assert newch.full([3], newch.tensor(2.0)).tolist() == [2.0, 2.0, 2.0]
    assert newch.full(4, -1).tolist() == [-1] * 4


def test_empty_has_the_asked_shape_and_dtype():
    x = newch.empty(3, 4, dtype=newch.int32)
    assert x.shape == (3, 4) and x.dtype is newch.int32
    assert newch.empty(0).numel() == 0


def test_like_constructors():
    x = newch.tensor([[1, 2, 3]], dtype=newch.int32)
    for fn, v in [(newch.zeros_like, 0), (newch.ones_like, 1)]:
        y = fn(x)
        assert y.shape == (1, 3) and y.dtype is newch.int32 and y.tolist() == [[v] * 3]
    assert newch.zeros_like(x, dtype=newch.float64).dtype is newch.float64
    assert newch.full_like(x, 5).tolist() == [[5, 5, 5]]
    assert newch.full_like(x, 2.7).tolist() == [[2, 2, 2]]
    assert newch.empty_like(x).shape == (1, 3)
    f = newch.tensor([1.0, 2.0], dtype=newch.float64)
    assert newch.randn_like(f).dtype is newch.float64 and newch.rand_like(f).shape == (2,)
    r = newch.randint_like(x, 3, 5)
    assert r.dtype is newch.int32 and set(r.tolist()[0]) <= {3, 4}


# -- ranges ------------------------------------------------------------------
@pytest.mark.parametrize("args, kw", [
    ((5,), {}), ((1, 4), {}), ((1, 4, 0.5), {}), ((0, 1, 0.1), {}), ((5, 0, -1), {}),
    ((10, 0, -3), {}), ((0.0, 5.0), {}), ((-3, 3, 2), {}), ((0, 5), {"dtype": "float64"}),
    ((2.5,), {}), ((0, 0), {}), ((1, 2, 5), {}),
])
def test_arange_matches_torch_and_numpy(torch, args, kw):
    dt = kw.get("dtype")
    x = newch.arange(*args, dtype=getattr(newch, dt) if dt else None)
    t = torch.arange(*args, dtype=getattr(torch, dt) if dt else None)
    assert x.dtype.name == str(t.dtype).split(".")[1]
    assert x.shape == tuple(t.shape)
    np.testing.assert_allclose(x.numpy(), t.numpy(), rtol=1e-6)
    np.testing.assert_allclose(x.numpy(), np.arange(*args, dtype=x.dtype.np), rtol=1e-6, atol=1e-7)


def test_arange_dtypes_by_hand():
    assert newch.arange(4).dtype is newch.int64 and newch.arange(4).tolist() == [0, 1, 2, 3]
    assert newch.arange(0, 2, 0.5).tolist() == [0.0, 0.5, 1.0, 1.5]
    assert newch.arange(0, 1, 0.1).numel() == 10
    assert newch.arange(3, dtype=newch.float32).dtype is newch.float32


@pytest.mark.parametrize("start, end, steps", [(0, 1, 5), (-2, 3, 11), (1, 1, 3), (0, 10, 1),
                                               (5, -5, 4), (0, 1, 0)])
def test_linspace_matches_numpy(start, end, steps):
    x = newch.linspace(start, end, steps)
    assert x.dtype is newch.float32 and x.shape == (steps,)
    np.testing.assert_allclose(x.numpy(), np.linspace(start, end, steps), rtol=1e-6, atol=1e-7)
    y = newch.linspace(start, end, steps, dtype=newch.float64)
    np.testing.assert_array_equal(y.numpy(), np.linspace(start, end, steps))


def test_linspace_matches_torch(torch):
    np.testing.assert_allclose(newch.linspace(-1, 1, 7).numpy(), torch.linspace(-1, 1, 7).numpy(),
                               rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("n, m", [(3, None), (2, 4), (4, 2), (0, None), (1, 1)])
def test_eye_matches_numpy(n, m):
    x = newch.eye(n, m)
    assert x.dtype is newch.float32
    np.testing.assert_array_equal(x.numpy(), np.eye(n, m))
    assert newch.eye(n, m, dtype=newch.int64).dtype is newch.int64


# -- in-place filling --------------------------------------------------------
def test_fill_and_zero():
    x = newch.ones(2, 3)
    assert x.fill_(2.5) is x
    assert (x.numpy() == 2.5).all()
    assert x.zero_() is x
    assert (x.numpy() == 0).all()
    i = newch.zeros(3, dtype=newch.int32)
    i.fill_(7)
    assert i.tolist() == [7, 7, 7]
    i.fill_(newch.tensor(3))
    assert i.tolist() == [3, 3, 3]
    b = newch.zeros(2, dtype=newch.bool).fill_(True)
    assert b.tolist() == [True, True]


def test_fill_a_non_contiguous_view_writes_only_the_view():
    x = newch.zeros(4, 6)
    x[:, ::2].fill_(1.0)
    x.T[1].fill_(5.0)
    want = np.zeros((4, 6), np.float32)
    want[:, ::2] = 1.0
    want[:, 1] = 5.0
    np.testing.assert_array_equal(x.numpy(), want)
