"""Dtypes, PyTorch's type promotion, conversions and the Tensor's metadata/readout methods."""
import itertools

import numpy as np
import pytest

import newch

DTYPES = [newch.bool, newch.uint8, newch.int32, newch.int64, newch.float32, newch.float64]
NP = {newch.bool: np.bool_, newch.uint8: np.uint8, newch.int32: np.int32, newch.int64: np.int64,
      newch.float32: np.float32, newch.float64: np.float64}


def make(dt, zero_dim=False):
    vals = np.array([1, 0, 1]) if dt is newch.bool else np.array([1, 2, 3])
    a = vals.astype(NP[dt])
    return newch.tensor(a[0] if zero_dim else a, dtype=dt)


# -- promotion: hand-checked cases (the rules as PyTorch documents them) ------
@pytest.mark.parametrize("a, b, expected", [
    (lambda: make(newch.int64), lambda: 2.5, newch.float32),
    (lambda: make(newch.float32), lambda: make(newch.float64, True), newch.float32),
    (lambda: make(newch.uint8), lambda: make(newch.int32), newch.int32),
    (lambda: make(newch.bool), lambda: True, newch.bool),
    (lambda: make(newch.bool), lambda: 1, newch.int64),
    (lambda: make(newch.bool), lambda: 1.5, newch.float32),
    (lambda: make(newch.int32), lambda: 2, newch.int32),
    (lambda: make(newch.uint8), lambda: 1, newch.uint8),
    (lambda: make(newch.uint8), lambda: make(newch.bool), newch.uint8),
    (lambda: make(newch.int32), lambda: make(newch.int64), newch.int64),
    (lambda: make(newch.float32), lambda: make(newch.int64), newch.float32),
    (lambda: make(newch.float32), lambda: make(newch.float64), newch.float64),
    (lambda: make(newch.int32), lambda: make(newch.int64, True), newch.int32),
    (lambda: make(newch.uint8), lambda: make(newch.int64, True), newch.uint8),
    (lambda: make(newch.int32), lambda: make(newch.float64, True), newch.float64),
    (lambda: make(newch.float64, True), lambda: 1.5, newch.float64),
    (lambda: make(newch.int64, True), lambda: make(newch.float32, True), newch.float32),
    (lambda: make(newch.int64, True), lambda: 2.5, newch.float32),
    (lambda: 3, lambda: make(newch.float64), newch.float64),
])
def test_promotion_table(a, b, expected):
    a, b = a(), b()
    assert (a + b).dtype is expected
    assert (b + a).dtype is expected
    assert (a * b).dtype is expected
    assert newch.promote_types(newch.uint8, newch.int32) is newch.int32


def test_int_division_is_true_division_in_float32():
    x = newch.tensor([7, -7, 1], dtype=newch.int64)
    y = newch.tensor([2, 2, 3], dtype=newch.int32)
    q = x / y
    assert q.dtype is newch.float32
    np.testing.assert_allclose(q.numpy(), [3.5, -3.5, 1 / 3], rtol=1e-6)
    assert (x / 2).dtype is newch.float32
    assert (2 / x).dtype is newch.float32
    assert (x // y).dtype is newch.int64
    np.testing.assert_array_equal((x // y).numpy(), [3, -4, 0])


def test_comparisons_compute_in_the_promoted_type():
    x = newch.tensor([1, 2, 3])
    np.testing.assert_array_equal((x < 2.5).numpy(), [True, True, False])
    np.testing.assert_array_equal((x == 2.0).numpy(), [False, True, False])
    assert (x < 2.5).dtype is newch.bool


def test_integer_arithmetic_wraps_like_torch():
    x = newch.tensor([250, 3], dtype=newch.uint8)
    np.testing.assert_array_equal((x + 10).numpy(), [4, 13])
    assert (x + 10).dtype is newch.uint8
    u = newch.tensor([1, 250], dtype=newch.uint8)
    assert (u + 300).tolist() == [45, 38]      # 300 wraps to 44 in uint8, as in torch
    assert (u - 1).tolist() == [0, 249] and (u == -6).tolist() == [False, True]
    assert (~u).tolist() == [254, 5]
    big = newch.tensor([2 ** 31 - 1], dtype=newch.int32)
    assert (big + 1).item() == -2 ** 31


def _torch_dtype(torch, d):
    return getattr(torch, d.name)


@pytest.mark.parametrize("kinds", [("t", "t"), ("t", "0"), ("0", "t"), ("0", "0")])
def test_promotion_matches_torch_for_every_pair(torch, kinds):
    for da, db in itertools.product(DTYPES, DTYPES):
        a, b = make(da, kinds[0] == "0"), make(db, kinds[1] == "0")
        ta, tb = torch.tensor(a.numpy()), torch.tensor(b.numpy())
        want = (ta + tb).dtype
        got = (a + b).dtype
        assert got.name == str(want).split(".")[1], (da, db, kinds)
        assert (a * b).dtype is got
        assert (a == b).dtype is newch.bool


@pytest.mark.parametrize("scalar", [True, 2, 2.5])
def test_scalar_promotion_matches_torch(torch, scalar):
    for d, zero_dim in itertools.product(DTYPES, (False, True)):
        a = make(d, zero_dim)
        ta = torch.tensor(a.numpy())
        want = str((ta * scalar).dtype).split(".")[1]
        assert (a * scalar).dtype.name == want, (d, zero_dim, scalar)
        assert (scalar * a).dtype.name == want
        np.testing.assert_allclose(np.asarray((a * scalar).numpy(), np.float64),
                                   (ta * scalar).numpy().astype(np.float64))


# -- conversions -------------------------------------------------------------
def test_float_to_int_truncates_toward_zero():
    x = newch.tensor([-1.7, -0.5, 0.5, 1.7, 2.0])
    np.testing.assert_array_equal(x.long().numpy(), [-1, 0, 0, 1, 2])
    np.testing.assert_array_equal(x.int().numpy(), [-1, 0, 0, 1, 2])
    assert x.int().dtype is newch.int32


def test_to_bool_is_nonzero_not_truncation():
    x = newch.tensor([0.0, 0.5, -2.0, float("nan")])
    np.testing.assert_array_equal(x.bool().numpy(), [False, True, True, True])
    np.testing.assert_array_equal(newch.tensor([0, 2, -1]).bool().numpy(), [False, True, True])


def test_casts_match_numpy():
    x = newch.tensor([-1, 0, 1, 255, 256])
    np.testing.assert_array_equal(x.byte().numpy(), np.array([-1, 0, 1, 255, 256]).astype(np.uint8))
    b = newch.tensor([True, False])
    np.testing.assert_array_equal(b.float().numpy(), [1.0, 0.0])
    np.testing.assert_array_equal(b.long().numpy(), [1, 0])
    f = newch.tensor([1.25, 2.5])
    assert f.double().dtype is newch.float64
    np.testing.assert_array_equal(f.double().numpy(), [1.25, 2.5])
    assert f.to(newch.float64).dtype is newch.float64
    assert f.to("float64").dtype is newch.float64
    assert f.to(newch.float32) is f
    assert f.type_as(newch.tensor([1])).dtype is newch.int64


def test_dtype_objects():
    assert newch.float is newch.float32 and newch.double is newch.float64
    assert newch.long is newch.int64 and newch.int is newch.int32
    assert newch.float32.is_floating_point and not newch.int64.is_floating_point
    assert repr(newch.int32) == "newch.int32"
    assert newch.float32.itemsize == 4
    assert newch.tensor([1.5]).element_size() == 4


def test_default_dtype_can_be_float64():
    try:
        newch.set_default_dtype(newch.float64)
        assert newch.tensor([1.5]).dtype is newch.float64
        assert newch.zeros(2).dtype is newch.float64
        assert (newch.tensor([1]) + 0.5).dtype is newch.float64
    finally:
        newch.set_default_dtype(newch.float32)
    assert newch.tensor([1.5]).dtype is newch.float32
    with pytest.raises(TypeError, match="set_default_dtype"):
        newch.set_default_dtype(newch.int64)


# -- metadata and readout ----------------------------------------------------
def test_shape_size_ndim_numel():
    x = newch.zeros(2, 3)
    assert x.shape == (2, 3) and isinstance(x.shape, tuple)
    assert isinstance(x.shape, newch.Size)
    assert repr(x.shape) == "newch.Size([2, 3])"
    assert repr(newch.zeros(()).shape) == "newch.Size([])"
    assert x.size() == (2, 3) and x.size(1) == 3 and x.size(-2) == 2
    assert x.ndim == 2 and x.dim() == 2
    assert x.numel() == 6 and x.shape.numel() == 6 and newch.numel(x) == 6
    assert len(x) == 2
    assert x.dtype is newch.float32
    with pytest.raises(IndexError, match="size"):
        x.size(2)


def test_size_slices_and_joins_stay_sizes(torch):
    s, t = newch.zeros(2, 3, 4).shape, torch.zeros(2, 3, 4).shape
    for f in (lambda z: z[1:], lambda z: z + (5,), lambda z: (5,) + z, lambda z: z * 2,
              lambda z: z[::-1]):
        assert repr(f(s)) == repr(f(t)).replace("torch", "newch")
    assert s[0] == 2 and type(s[-1]) is int and s == (2, 3, 4)


def test_size_repr_matches_torch(torch):
    assert repr(newch.zeros(2, 3).shape).replace("newch", "torch") == repr(torch.zeros(2, 3).shape)


def test_T_reverses_dims():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x = newch.tensor(a)
    np.testing.assert_array_equal(x.T.numpy(), a.T)
    m = newch.tensor(a[0])
    assert m.T.shape == (4, 3)
    np.testing.assert_array_equal(m.T.numpy(), a[0].T)
    v = newch.tensor([1.0, 2.0])
    np.testing.assert_array_equal(v.T.numpy(), [1.0, 2.0])


def test_item_and_tolist():
    assert newch.tensor(2.5).item() == 2.5
    assert newch.tensor([[7]]).item() == 7
    assert isinstance(newch.tensor([3]).item(), int)
    assert isinstance(newch.tensor([True]).item(), bool)
    assert newch.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert newch.tensor([0.5, 1.5]).tolist() == [0.5, 1.5]
    assert newch.tensor(3).tolist() == 3
    with pytest.raises((ValueError, RuntimeError), match="item"):
        newch.tensor([1, 2]).item()
    assert float(newch.tensor([2.5])) == 2.5 and int(newch.tensor(3.9)) == 3


def test_numpy_copies_a_temporary():
    x = newch.tensor([1.0, 2.0])
    a = x.numpy()
    a[0] = 100.0
    assert x.tolist() == [1.0, 2.0]
    assert a.dtype == np.float32


def test_numpy_views_a_persistent_tensor():
    with newch.persistent():
        x = newch.tensor([1.0, 2.0])
    a = x.numpy()
    a[0] = 100.0
    assert x.tolist() == [100.0, 2.0]
    x.add_(1)
    assert a.tolist() == [101.0, 3.0]
    newch.step_end()
    assert x.tolist() == [101.0, 3.0]


def test_numpy_of_a_grad_tensor_needs_detach():
    x = newch.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="numpy"):
        x.numpy()
    assert x.detach().numpy().tolist() == [1.0]


def test_bool_of_tensors():
    assert bool(newch.tensor([1])) and not bool(newch.tensor(0.0))
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(newch.tensor([1, 2]))


def test_iteration_yields_rows():
    x = newch.tensor([[1, 2], [3, 4]])
    assert [r.tolist() for r in x] == [[1, 2], [3, 4]]
