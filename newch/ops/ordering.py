"""Ordering ops: sort, argsort, topk. Indices come from a stable numpy argsort; values are a
``gather`` of the input at them, so gradients flow back to the picked entries."""
from collections import namedtuple

import numpy as np

from .. import dtypes as D
from .alloc import check_tensor, data, norm_dim
from .creation import tensor
from .indexing import gather

__all__ = ["argsort", "sort", "topk"]
TENSOR_METHODS = ["argsort", "sort", "topk"]   # also bound as Tensor methods (ops/methods.py)

SortResult = namedtuple("SortResult", ["values", "indices"])
# NOTE: torch returns torch.return_types.sort / topk; unpacking and .values / .indices are what
# scripts use, and this namedtuple gives both.


def _order(a, d, descending):
    """Stable sort indices of numpy ``a`` along ``d`` (NaN counts as the largest value)."""
    if not descending:
        return np.argsort(a, axis=d, kind="stable")
    n = a.shape[d]
    rev = np.flip(a, axis=d)
    return np.flip(n - 1 - np.argsort(rev, axis=d, kind="stable"), axis=d)


def _indices(op, input, dim, descending):
    check_tensor(op, input)
    a = data(input, op)
    d = norm_dim(op, dim, a.ndim)
    if a.ndim == 0:
        return np.zeros((), np.int64), d
    return np.ascontiguousarray(_order(a, d, descending), dtype=np.int64), d


def sort(input, dim=-1, descending=False, stable=False):
    """(values, indices) of ``input`` sorted along ``dim``; equal values keep their order.

    Example:
        >>> sort(newch.tensor([3, 1, 2])).values.tolist()
        [1, 2, 3]
    """
    ix, d = _indices("sort", input, dim, descending)
    idx = tensor(ix, dtype=D.int64)
    vals = gather(input, d, idx) if input.ndim else input.clone()
    return SortResult(vals, idx)


def argsort(input, dim=-1, descending=False, stable=False):
    """The indices that sort ``input`` along ``dim``.

    Example:
        >>> argsort(newch.tensor([3, 1, 2])).tolist()
        [1, 2, 0]
    """
    ix, _ = _indices("argsort", input, dim, descending)
    return tensor(ix, dtype=D.int64)


def topk(input, k, dim=-1, largest=True, sorted=True):
    """(values, indices) of the ``k`` largest (or smallest) entries along ``dim``.

    Example:
        >>> topk(newch.tensor([1.0, 5.0, 3.0]), 2).values.tolist()
        [5.0, 3.0]
    """
    check_tensor("topk", input)
    d = norm_dim("topk", dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool):
        raise TypeError(f"topk: k must be an int, got {type(k).__name__}")
    if not 0 <= k <= n:
        raise RuntimeError(f"topk: k ({k}) is out of range for a dim of size {n}")
    ix, d = _indices("topk", input, dim, largest)
    if input.ndim == 0:
        return SortResult(input.clone(), tensor(ix, dtype=D.int64))
    ix = np.ascontiguousarray(np.take(ix, np.arange(k), axis=d))
    idx = tensor(ix, dtype=D.int64)
    return SortResult(gather(input, d, idx), idx)
