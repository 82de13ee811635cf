"""Shape ops: views share memory with their base (writes show through), copies do not."""
import numpy as np
import pytest

import newch


def base(rng=None, shape=(2, 3, 4)):
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    return a, newch.tensor(a)


def shares(x, y):
    return x._s is y._s


def test_reshape_and_view(rng):
    a, x = base()
    for shape in [(6, 4), (4, -1), (-1,), (2, 12), (24, 1), (1, 2, 3, 4)]:
        np.testing.assert_array_equal(x.reshape(shape).numpy(), a.reshape(shape))
        np.testing.assert_array_equal(x.view(*shape).numpy(), a.reshape(shape))
        assert shares(x.reshape(shape), x) and shares(x.view(shape), x)
    assert x.reshape(6, 4).shape == (6, 4)
    v = x.view(-1)
    v[5] = -1.0
    assert x[0, 1, 1].item() == -1.0
    assert newch.tensor(5.0).reshape(1, 1).shape == (1, 1)
    assert newch.zeros(0, 3).reshape(3, 0, 5).shape == (3, 0, 5)


def test_reshape_of_non_contiguous_copies_and_view_refuses():
    a, x = base()
    t = x.transpose(0, 2)
    r = t.reshape(-1)
    np.testing.assert_array_equal(r.numpy(), a.transpose(2, 1, 0).reshape(-1))
    assert not shares(r, x)
    with pytest.raises(ValueError, match="view"):
        t.view(-1)
    assert t.view(4, 3, 2).shape == (4, 3, 2)
    np.testing.assert_array_equal(x.view_as(newch.zeros(4, 6)).numpy(), a.reshape(4, 6))
    np.testing.assert_array_equal(x.reshape_as(newch.zeros(24)).numpy(), a.reshape(24))


def test_flatten_and_unflatten():
    a, x = base()
    assert x.flatten().shape == (24,)
    assert x.flatten(1).shape == (2, 12)
    assert x.flatten(0, 1).shape == (6, 4)
    assert x.flatten(-2, -1).shape == (2, 12)
    np.testing.assert_array_equal(x.flatten(1).numpy(), a.reshape(2, 12))
    assert newch.tensor(3.0).flatten().shape == (1,)
    np.testing.assert_array_equal(x.T.flatten().numpy(), a.T.reshape(-1))
    assert x.flatten(1).unflatten(1, (3, 4)).shape == (2, 3, 4)
    assert x.unflatten(-1, (2, -1)).shape == (2, 3, 2, 2)


def test_squeeze_unsqueeze():
    x = newch.zeros(1, 3, 1, 2)
    assert x.squeeze().shape == (3, 2)
    assert x.squeeze(0).shape == (3, 1, 2)
    assert x.squeeze(-2).shape == (1, 3, 2)
    assert x.squeeze(1).shape == (1, 3, 1, 2)
    assert x.squeeze((0, 2)).shape == (3, 2)
    assert x.unsqueeze(0).shape == (1, 1, 3, 1, 2)
    assert x.unsqueeze(-1).shape == (1, 3, 1, 2, 1)
    assert x.unsqueeze(4).shape == (1, 3, 1, 2, 1)
    assert x.unsqueeze(-5).shape == (1, 1, 3, 1, 2)
    assert newch.tensor(1.0).unsqueeze(0).shape == (1,)
    assert newch.zeros(1).squeeze().shape == ()
    assert shares(x.squeeze(), x) and shares(x.unsqueeze(1), x)


def test_permute_transpose_movedim(rng):
    a, x = base()
    for p in [(2, 0, 1), (1, 2, 0), (0, 2, 1), (-1, 0, -2)]:
        np.testing.assert_array_equal(x.permute(p).numpy(), a.transpose(p))
        np.testing.assert_array_equal(x.permute(*p).numpy(), a.transpose(p))
    np.testing.assert_array_equal(x.transpose(0, 2).numpy(), a.swapaxes(0, 2))
    np.testing.assert_array_equal(x.transpose(-1, 1).numpy(), a.swapaxes(-1, 1))
    np.testing.assert_array_equal(newch.transpose(x, 0, 1).numpy(), a.swapaxes(0, 1))
    np.testing.assert_array_equal(x.swapaxes(0, 1).numpy(), a.swapaxes(0, 1))
    np.testing.assert_array_equal(x.movedim(0, -1).numpy(), np.moveaxis(a, 0, -1))
    np.testing.assert_array_equal(x[0].t().numpy(), a[0].T)
    np.testing.assert_array_equal(x.mT.numpy(), a.swapaxes(-1, -2))
    p = x.permute(2, 0, 1)
    p[1, 0, 2] = 99.0
    assert x[0, 2, 1].item() == 99.0


def test_contiguous():
    a, x = base()
    assert x.contiguous() is x
    t = x.transpose(0, 1)
    c = t.contiguous()
    assert c is not t and not shares(c, x)
    np.testing.assert_array_equal(c.numpy(), a.swapaxes(0, 1))
    assert c._a.flags.c_contiguous
    c[0, 0, 0] = 100.0
    assert x[0, 0, 0].item() == 0.0


def test_expand():
    x = newch.tensor([[1.0], [2.0], [3.0]])
    e = x.expand(3, 4)
    np.testing.assert_array_equal(e.numpy(), np.repeat([[1.0], [2.0], [3.0]], 4, axis=1))
    assert shares(e, x)
    assert x.expand(2, 3, 4).shape == (2, 3, 4)
    assert x.expand(-1, 5).shape == (3, 5)
    assert x.expand((3, 2)).shape == (3, 2)
    assert x.expand_as(newch.zeros(2, 3, 6)).shape == (2, 3, 6)
    assert newch.tensor(7.0).expand(2, 2).tolist() == [[7.0, 7.0], [7.0, 7.0]]
    x[1, 0] = 5.0
    assert e[1].tolist() == [5.0] * 4
    np.testing.assert_array_equal((e + 1).numpy(), e.numpy() + 1)
    np.testing.assert_array_equal(e.contiguous().numpy(), e.numpy())
    np.testing.assert_array_equal(e.sum(1).numpy(), [4.0, 20.0, 12.0])


def test_clone_and_detach():
    a, x = base()
    c = x.clone()
    assert not shares(c, x)
    c.add_(1)
    np.testing.assert_array_equal(x.numpy(), a)
    d = x.detach()
    assert shares(d, x)
    d[0, 0, 0] = 7.0
    assert x[0, 0, 0].item() == 7.0
    np.testing.assert_array_equal(x.T.clone().numpy(), x.numpy().T)


def test_views_of_views_write_through():
    a, x = base(shape=(4, 6))
    v = x.T[1:5:2].unsqueeze(0).expand(1, 2, 4).squeeze(0)
    assert shares(v, x)
    np.testing.assert_array_equal(v.numpy(), a.T[1:5:2])
    x.T[3].fill_(-1.0)
    assert (x.numpy()[:, 3] == -1).all()
    np.testing.assert_array_equal(v.numpy()[1], [-1.0] * 4)


def test_view_ops_on_a_persistent_tensor_stay_valid_after_step_end():
    with newch.persistent():
        x = newch.arange(6.0)
    v = x.view(2, 3)
    assert v.is_persistent
    newch.step_end()
    assert v.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


def test_shape_ops_match_torch(torch):
    a = np.arange(24.0).reshape(2, 3, 4)
    x, t = newch.tensor(a), torch.tensor(a)
    pairs = [
        (lambda z: z.permute(2, 0, 1).reshape(4, 6)),
        (lambda z: z.transpose(0, 2).flatten(1)),
        (lambda z: z[:, None, :, 1:3].expand(2, 5, 3, 2)),
        (lambda z: z.unsqueeze(-1).squeeze(-1).mT),
    ]
    for f in pairs:
        np.testing.assert_array_equal(f(x).numpy(), f(t).numpy())
