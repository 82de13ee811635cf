"""Indexing backward scatters through the index_add kernel: duplicates add, every index form works.

The gradient of ``x[index]`` is built in the arena by one kernel (no ``np.add.at``);
these cases check it against a hand-written numpy scatter and against PyTorch.
"""
import numpy as np
import pytest

import newch


def _grad_of(index, shape=(4, 3), weights=None):
    x = newch.zeros(*shape, dtype=newch.float64, requires_grad=True)
    y = x[index]
    w = np.arange(1.0, 1.0 + y.numel()).reshape(tuple(y.shape)) if weights is None else weights
    (y * newch.tensor(w)).sum().backward()
    return x.grad.numpy(), w


def _numpy_grad(index, shape, w):
    """The reference: add each weight at the position it was read from, one at a time."""
    pos = np.arange(int(np.prod(shape))).reshape(shape)[index]
    out = np.zeros(int(np.prod(shape)))
    for p, v in zip(np.ravel(pos), np.ravel(np.broadcast_to(w, pos.shape))):
        out[p] += v
    return out.reshape(shape)


CASES = {
    "rows_with_duplicates": lambda: newch.tensor([2, 0, 2, 2]),
    "negative_rows": lambda: newch.tensor([-1, 0, -1]),
    "int32_rows": lambda: newch.tensor([1, 3, 1], dtype=newch.int32),
    "2d_index_of_rows": lambda: newch.tensor([[0, 3], [3, 3]]),
    "0d_index": lambda: newch.tensor(2),
    "two_index_tensors": lambda: (newch.tensor([0, 3, 0]), newch.tensor([2, 1, 2])),
    "broadcast_index_tensors": lambda: (newch.tensor([[0], [3]]), newch.tensor([1, 1, 2])),
    "slice_then_index": lambda: (slice(1, None), newch.tensor([2, 2, 0])),
    "full_mask": lambda: newch.tensor([[True, False, True]] * 2 + [[False, False, True]] * 2),
    "row_mask": lambda: newch.tensor([True, False, False, True]),
    "list_index": lambda: [3, 3, 1],
}


def _np_index(idx):
    if isinstance(idx, tuple):
        return tuple(_np_index(i) for i in idx)
    if isinstance(idx, newch.Tensor):
        return idx.numpy()
    return idx


@pytest.mark.parametrize("name", list(CASES))
def test_index_gradient_matches_a_plain_numpy_scatter(name):
    idx = CASES[name]()
    got, w = _grad_of(idx)
    np.testing.assert_array_equal(got, _numpy_grad(_np_index(idx), (4, 3), w))


@pytest.mark.parametrize("name", list(CASES))
def test_index_gradient_matches_pytorch(name):
    torch = pytest.importorskip("torch")
    idx = CASES[name]()
    got, w = _grad_of(idx)

    def to_torch(i):
        if isinstance(i, tuple):
            return tuple(to_torch(j) for j in i)
        return torch.tensor(i.numpy()) if isinstance(i, newch.Tensor) else i
    x = torch.zeros(4, 3, dtype=torch.float64, requires_grad=True)
    (x[to_torch(idx)] * torch.tensor(w)).sum().backward()
    np.testing.assert_array_equal(got, x.grad.numpy())


def test_index_of_an_empty_tensor_has_an_empty_gradient():
    x = newch.zeros(3, 0, requires_grad=True)
    x[newch.tensor([0, 2])].sum().backward()
    assert tuple(x.grad.shape) == (3, 0)

