"""In-place ops: values, strided and transposed ``self``, aliasing, dtype rules and versions."""
import numpy as np
import pytest

import newch


def arr(rng, *shape):
    return rng.uniform(0.5, 2.0, shape).astype(np.float32)


@pytest.mark.parametrize("method, ref", [
    ("add_", lambda a, b: a + b), ("sub_", lambda a, b: a - b), ("mul_", lambda a, b: a * b),
    ("div_", lambda a, b: a / b), ("pow_", lambda a, b: a ** b),
])
def test_binary_in_place_returns_self(rng, method, ref):
    a, b = arr(rng, 3, 4), arr(rng, 4)
    x = newch.tensor(a)
    storage = x._s
    y = getattr(x, method)(newch.tensor(b))
    assert y is x and x._s is storage
    np.testing.assert_allclose(x.numpy(), ref(a, b), rtol=1e-6)
    getattr(x, method)(2.0)
    np.testing.assert_allclose(x.numpy(), ref(ref(a, b), np.float32(2.0)), rtol=1e-6)


def test_alpha_and_value_arguments(rng):
    a, b, c = arr(rng, 5), arr(rng, 5), arr(rng, 5)
    x = newch.tensor(a)
    x.add_(newch.tensor(b), alpha=-3)
    np.testing.assert_allclose(x.numpy(), a - 3 * b, rtol=1e-6)
    x = newch.tensor(a)
    x.sub_(newch.tensor(b), alpha=0.5)
    np.testing.assert_allclose(x.numpy(), a - 0.5 * b, rtol=1e-6)
    x = newch.tensor(a)
    x.addcmul_(newch.tensor(b), newch.tensor(c), value=2)
    np.testing.assert_allclose(x.numpy(), a + 2 * b * c, rtol=1e-6)
    x = newch.tensor(a)
    x.addcdiv_(newch.tensor(b), newch.tensor(c), value=-0.5)
    np.testing.assert_allclose(x.numpy(), a - 0.5 * b / c, rtol=1e-6)
    x = newch.tensor(a)
    x.lerp_(newch.tensor(b), 0.3)
    np.testing.assert_allclose(x.numpy(), a + 0.3 * (b - a), rtol=1e-6)
    x = newch.tensor(a)
    x.lerp_(newch.tensor(b), newch.tensor(c))
    np.testing.assert_allclose(x.numpy(), a + c * (b - a), rtol=1e-5)


def test_operator_in_place_keeps_the_object(rng):
    a = arr(rng, 3)
    x = newch.tensor(a)
    ref = x
    x += 1
    x *= 2
    x -= 0.5
    x /= 4
    assert x is ref
    np.testing.assert_allclose(x.numpy(), ((a + 1) * 2 - 0.5) / 4, rtol=1e-6)


def test_in_place_into_a_transposed_view(rng):
    a = arr(rng, 3, 4)
    x = newch.tensor(a)
    x.T.add_(1)
    np.testing.assert_allclose(x.numpy(), a + 1)
    x.T.mul_(newch.tensor(np.arange(3, dtype=np.float32)))
    np.testing.assert_allclose(x.numpy(), (a + 1) * np.arange(3, dtype=np.float32)[:, None], rtol=1e-6)


def test_in_place_into_a_strided_slice(rng):
    a = arr(rng, 4, 6)
    x = newch.tensor(a)
    x[:, ::2].mul_(2)
    want = a.copy()
    want[:, ::2] *= 2
    np.testing.assert_allclose(x.numpy(), want)
    x[1:3, 1::2].clamp_(max=1.0)
    want[1:3, 1::2] = np.minimum(want[1:3, 1::2], 1.0)
    np.testing.assert_allclose(x.numpy(), want)
    x[0].zero_()
    want[0] = 0
    np.testing.assert_allclose(x.numpy(), want)
    x.T[::3].sub_(newch.ones(4))
    want.T[::3] -= 1
    np.testing.assert_allclose(x.numpy(), want, rtol=1e-6)


def test_in_place_with_aliasing_operand(rng):
    # NOTE: a partial overlap raises as in PyTorch (tests/ops/test_inplace_aliasing.py has the rest)
    a = arr(rng, 5, 5)
    x = newch.tensor(a)
    with pytest.raises(RuntimeError, match="single memory location"):
        x.add_(x.T)
    np.testing.assert_array_equal(x.numpy(), a)
    z = newch.tensor(a)
    z.mul_(z)
    np.testing.assert_allclose(z.numpy(), a * a)


def test_copy_converts_and_broadcasts(rng):
    x = newch.zeros(3, 4)
    assert x.copy_(newch.tensor([1, 2, 3, 4])) is x
    np.testing.assert_array_equal(x.numpy(), np.tile([1.0, 2, 3, 4], (3, 1)))
    i = newch.zeros(3, dtype=newch.int32)
    i.copy_(newch.tensor([1.7, -1.7, 2.0]))
    assert i.tolist() == [1, -1, 2]
    a = arr(rng, 4, 3)
    y = newch.zeros(3, 4)
    y.copy_(newch.tensor(a).T)
    np.testing.assert_array_equal(y.numpy(), a.T)
    y.T.copy_(newch.tensor(a) * 2)
    np.testing.assert_array_equal(y.numpy(), 2 * a.T)


def test_copy_from_a_partly_overlapping_view_raises_like_torch(rng):
    # NOTE: PyTorch 2.13 refuses these (the result would depend on the write order)
    a = arr(rng, 4, 4)
    x = newch.tensor(a)
    for dst, src in ((x, x.T), (x, x[0]), (x[1:], x[:-1]), (x[:, 1:], x[:, :-1])):
        with pytest.raises(RuntimeError, match="copy_: unsupported operation"):
            dst.copy_(src)
    np.testing.assert_array_equal(x.numpy(), a)        # left intact
    b = np.arange(8, dtype=np.float32)
    y = newch.tensor(b)
    with pytest.raises(RuntimeError, match="single memory location"):
        y[1:].copy_(y[:-1])
    y[1:].copy_(y[1:])                                  # the very same elements: fine
    y[::2].copy_(y[1::2])                               # interleaved, no element shared: fine
    np.testing.assert_array_equal(y.numpy(), [1, 1, 3, 3, 5, 5, 7, 7])
    y[1:].copy_(y[:-1].clone())
    np.testing.assert_array_equal(y.numpy(), [1, 1, 1, 3, 3, 5, 5, 7])


def test_clamp_in_place_variants(rng):
    a = rng.uniform(-3, 3, (4, 5)).astype(np.float32)
    x = newch.tensor(a)
    assert x.clamp_(-1, 1) is x
    np.testing.assert_array_equal(x.numpy(), np.clip(a, -1, 1))
    x = newch.tensor(a)
    x.clamp_min_(0).clamp_max_(2)
    np.testing.assert_array_equal(x.numpy(), np.clip(a, 0, 2))
    i = newch.tensor([-5, 5])
    i.clamp_(-1, 1)
    assert i.tolist() == [-1, 1] and i.dtype is newch.int64


def test_unary_in_place(rng):
    a = rng.uniform(0.1, 2, (3, 4)).astype(np.float32)
    for name, ref in [("neg_", np.negative), ("abs_", np.abs), ("exp_", np.exp), ("log_", np.log),
                      ("sqrt_", np.sqrt), ("sigmoid_", lambda v: 1 / (1 + np.exp(-v))),
                      ("tanh_", np.tanh), ("relu_", lambda v: np.maximum(v, 0)),
                      ("floor_", np.floor), ("round_", np.round)]:
        x = newch.tensor(a)
        assert getattr(x, name)() is x
        np.testing.assert_allclose(x.numpy(), ref(a), rtol=1e-6, err_msg=name)
        y = newch.tensor(a)
        getattr(y.T[1::2], name)()
        want = a.copy()
        want.T[1::2] = ref(a.T[1::2])
        np.testing.assert_allclose(y.numpy(), want, rtol=1e-6, err_msg=name)


def test_int_in_place_keeps_dtype_or_refuses():
    x = newch.tensor([1, 2, 3])
    x.add_(2)
    x.mul_(newch.tensor([1, 2, 3], dtype=newch.int32))
    assert x.tolist() == [3, 8, 15] and x.dtype is newch.int64
    f = newch.tensor([1.0, 2.0])
    f.add_(newch.tensor([1, 1]))
    assert f.tolist() == [2.0, 3.0] and f.dtype is newch.float32
    for fn in (lambda: x.add_(1.5), lambda: x.div_(2), lambda: x.mul_(newch.tensor([0.5] * 3))):
        with pytest.raises(TypeError):
            fn()
    assert x.tolist() == [3, 8, 15]


def test_in_place_cannot_broadcast_self():
    x = newch.ones(3, 1)
    with pytest.raises(ValueError, match="add_"):
        x.add_(newch.ones(1, 4))
    assert x.tolist() == [[1.0]] * 3


def test_in_place_bumps_the_version():
    x = newch.zeros(3)
    v = x._s.version
    x.add_(1)
    x[0] = 5
    x.fill_(2)
    assert x._s.version >= v + 3


def test_in_place_on_a_persistent_tensor_stays_persistent():
    with newch.persistent():
        x = newch.zeros(4)
    x.add_(newch.arange(4.0))
    newch.step_end()
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0]
