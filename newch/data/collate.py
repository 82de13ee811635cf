"""Turning a list of dataset items into one batch (``default_collate``).

Items are stacked field by field: tensors and numpy arrays into one tensor
with a new first dimension, Python floats into float64, ints into int64,
strings kept as lists, and tuples, lists, dicts and named tuples collated
element by element. The batch tensors are temporaries of the current context.
"""
import collections.abc as cabc
from numbers import Number

import numpy as np

from .. import dtypes as D
from ..ops.creation import as_tensor, tensor
from ..ops.join import stack
from ..tensor import Tensor


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(x, "_fields")


def default_collate(batch):
    """Stack a list of items into a batch, recursing into tuples, lists and dicts.

    Example:
        >>> xs, ys = default_collate([(newch.tensor([1., 2.]), 0), (newch.tensor([3., 4.]), 1)])
        >>> xs.shape, ys.tolist()
        (newch.Size([2, 2]), [0, 1])
    """
    if not isinstance(batch, (list, tuple)):
        raise TypeError(f"default_collate: expected a list of items, got {type(batch).__name__}")
    if not batch:
        raise ValueError("default_collate: got an empty batch")
    first = batch[0]
    if isinstance(first, Tensor):
        return stack(list(batch), 0)
    if isinstance(first, np.ndarray) and first.dtype.kind in "biuf":
        return stack([as_tensor(np.ascontiguousarray(b)) for b in batch], 0)
    if isinstance(first, np.ndarray):
        raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, "
                        f"dicts or lists; found a numpy array of dtype {first.dtype}")
    if isinstance(first, np.generic):
        return as_tensor(np.asarray(batch))
    if isinstance(first, bool):
        return tensor(list(batch))
    if isinstance(first, int):
        return tensor(list(batch), dtype=D.int64)
    if isinstance(first, float):
        return tensor(list(batch), dtype=D.float64)
    if isinstance(first, Number):
        return tensor(list(batch))
    if isinstance(first, (str, bytes)):
        return list(batch)
    if isinstance(first, cabc.Mapping):
        out = {k: default_collate([d[k] for d in batch]) for k in first}
        try:
            return type(first)(out)
        except TypeError:       # NOTE: a mapping type that can't be built from a dict
            return out
    if _is_namedtuple(first):
        return type(first)(*(default_collate(list(f)) for f in zip(*batch)))
    if isinstance(first, cabc.Sequence):
        n = len(first)
        if any(len(b) != n for b in batch):
            raise RuntimeError("default_collate: each element in list of batch should be of "
                               "equal size")
        cols = [default_collate(list(c)) for c in zip(*batch)]
        return tuple(cols) if isinstance(first, tuple) else cols
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts "
                    f"or lists; found {type(first).__name__}")


def default_convert(data):
    """Turn numpy arrays (also inside tuples, lists, dicts) into tensors; leave the rest.

    Example:
        >>> default_convert(np.zeros(2)).dtype
        newch.float64
    """
    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray) and data.dtype.kind in "biuf":
        return as_tensor(np.ascontiguousarray(data))
    if isinstance(data, np.generic) and data.dtype.kind in "biuf":
        return as_tensor(np.asarray(data))
    if isinstance(data, cabc.Mapping):
        return {k: default_convert(v) for k, v in data.items()}
    if _is_namedtuple(data):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return tuple(default_convert(d) for d in data)
    if isinstance(data, list):
        return [default_convert(d) for d in data]
    return data
