"""Embedding and EmbeddingBag against PyTorch: values, gradients, padding_idx, max_norm."""
import numpy as np
import pytest

import newch

torch = pytest.importorskip("torch")
nn = newch.nn
RNG = np.random.default_rng(2)


def _pair(cls, tcls, *args, **kw):
    m, tm = cls(*args, **kw), tcls(*args, **kw)
    assert list(m.state_dict()) == list(tm.state_dict())
    tm.load_state_dict({k: torch.tensor(v.detach().numpy()) for k, v in m.state_dict().items()})
    return m, tm


def test_embedding_values_and_gradients_with_padding_idx():
    m, tm = _pair(nn.Embedding, torch.nn.Embedding, 7, 3, padding_idx=2)
    assert m.weight[2].tolist() == [0.0, 0.0, 0.0]
    idx = np.array([[0, 2, 5], [2, 2, 6]])
    o, to = m(newch.tensor(idx)), tm(torch.tensor(idx))
    np.testing.assert_allclose(o.detach().numpy(), to.detach().numpy())
    w = RNG.standard_normal(o.shape).astype(np.float32)
    (o * newch.tensor(w)).sum().backward()
    (to * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(m.weight.grad.numpy(), tm.weight.grad.numpy(), atol=1e-6)
    assert not m.weight.grad.numpy()[2].any()


def test_embedding_max_norm_renormalises_looked_up_rows():
    m, tm = _pair(nn.Embedding, torch.nn.Embedding, 5, 4, max_norm=1.0)
    idx = np.array([1, 3, 3])
    o, to = m(newch.tensor(idx)), tm(torch.tensor(idx))
    np.testing.assert_allclose(o.detach().numpy(), to.detach().numpy(), atol=1e-6)
    np.testing.assert_allclose(m.weight.detach().numpy(), tm.weight.detach().numpy(), atol=1e-6)


def test_from_pretrained_is_frozen_by_default():
    w = RNG.standard_normal((4, 2)).astype(np.float32)
    e = nn.Embedding.from_pretrained(newch.tensor(w))
    assert not e.weight.requires_grad
    assert e(newch.tensor([3, 0])).tolist() == w[[3, 0]].tolist()
    assert nn.Embedding.from_pretrained(newch.tensor(w), freeze=False).weight.requires_grad


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_matches_torch(mode):
    m, tm = _pair(nn.EmbeddingBag, torch.nn.EmbeddingBag, 8, 3, mode=mode, padding_idx=0)
    idx, off = np.array([1, 0, 4, 4, 7, 2, 0]), np.array([0, 3, 5])
    o, to = m(newch.tensor(idx), newch.tensor(off)), tm(torch.tensor(idx), torch.tensor(off))
    np.testing.assert_allclose(o.detach().numpy(), to.detach().numpy(), atol=1e-6)
    o.sum().backward()
    to.sum().backward()
    np.testing.assert_allclose(m.weight.grad.numpy(), tm.weight.grad.numpy(), atol=1e-6)
    idx2 = np.array([[1, 2], [3, 3]])
    np.testing.assert_allclose(m(newch.tensor(idx2)).detach().numpy(),
                               tm(torch.tensor(idx2)).detach().numpy(), atol=1e-6)


def test_bad_indices_raise_and_name_the_op():
    e = nn.Embedding(3, 2)
    with pytest.raises(IndexError, match="embedding"):
        e(newch.tensor([3]))
    with pytest.raises(RuntimeError, match="embedding"):
        e(newch.tensor([1.0]))
