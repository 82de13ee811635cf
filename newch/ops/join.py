"""Joining and splitting: cat, stack, split, chunk, unbind."""
import math

from ..tensor import Tensor
from .alloc import data, empty, norm_dim
from .launch import copy_into
from .record import needs_grad, record
from .. import dtypes as D

__all__ = ["cat", "chunk", "concat", "narrow", "split", "stack", "unbind"]
TENSOR_METHODS = ["chunk", "narrow", "split", "unbind"]   # also bound as Tensor methods (ops/methods.py)


def cat(tensors, dim=0):
    """Concatenate tensors (same shape except along ``dim``, same dtype after promotion)."""
    if not isinstance(tensors, (list, tuple)) or not tensors:
        raise ValueError("cat: expected a non-empty list or tuple of tensors")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"cat: expected Tensors, got {type(t).__name__} at position {i}")
        if t.ndim == 0:
            raise ValueError(f"cat: a 0-dim tensor (at position {i}) cannot be concatenated; "
                             f"expected tensors with at least 1 dim (use stack)")
    # NOTE: legacy rule kept by PyTorch: 1-D empty tensors are skipped
    parts = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)]
    if not parts:       # NOTE: only legacy empty tensors: PyTorch ignores dim and joins them
        parts, dim = list(tensors), 0
    ref = parts[0]
    d = norm_dim("cat", dim, ref.ndim)
    dt = ref.dtype
    for t in tensors:     # NOTE: skipped empty tensors still take part in type promotion
        dt = D.promote_types(dt, t.dtype)
    for t in parts[1:]:
        if t.ndim != ref.ndim or any(a != b for k, (a, b) in enumerate(zip(t.shape, ref.shape)) if k != d):
            raise ValueError(f"cat: tensors must have the same shape except in dim {d}; got "
                             f"{tuple(ref.shape)} and {tuple(t.shape)}")
    sizes = [t.shape[d] for t in parts]
    shape = list(ref.shape)
    shape[d] = sum(sizes)
    out = empty(tuple(shape), dt)
    start = 0
    for t, n in zip(parts, sizes):
        sl = (slice(None),) * d + (slice(start, start + n),)
        copy_into(data(t, "cat"), out._a[sl])
        start += n
    if needs_grad(*parts):
        wants = [t._rg for t in parts]

        def backward(g):
            res, s0 = [], 0
            for w, n in zip(wants, sizes):
                res.append(g.narrow(d, s0, n) if w else None)
                s0 += n
            return tuple(res)
        record(out, "CatBackward0", tuple(parts), backward)
    return out


concat = concatenate = cat


def stack(tensors, dim=0):
    """Join same-shaped tensors along a new dim ``dim``."""
    if not isinstance(tensors, (list, tuple)) or not tensors:
        raise ValueError("stack: expected a non-empty list or tuple of tensors")
    shape = tuple(tensors[0].shape)
    for t in tensors:
        if not isinstance(t, Tensor) or tuple(t.shape) != shape:
            raise ValueError(f"stack: expects each tensor to be equal size, got {shape} and "
                             f"{tuple(getattr(t, 'shape', ()))}")
    d = norm_dim("stack", dim, len(shape) + 1)
    return cat([t.unsqueeze(d) for t in tensors], d)


def narrow(input, dim, start, length):
    """A view of ``length`` entries of ``input`` from ``start`` along ``dim``."""
    d = norm_dim("narrow", dim, input.ndim)
    n = input.shape[d]
    if start < 0:
        start += n
    if not (0 <= start <= n and 0 <= length and start + length <= n):
        raise IndexError(f"narrow: start {start} + length {length} exceeds dim {d} of size {n}")
    return input[(slice(None),) * d + (slice(start, start + length),)]


def split(tensor, split_size_or_sections, dim=0):
    """Split into views of ``split_size`` along ``dim`` (last may be smaller), or of given sizes."""
    d = norm_dim("split", dim, tensor.ndim)
    n = tensor.shape[d]
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step == 0 and n == 0:        # NOTE: PyTorch allows 0 for an empty dim: one empty piece
            return (narrow(tensor, d, 0, 0),)
        if step <= 0:
            raise ValueError(f"split: split_size must be positive, got {step}")
        sizes = [min(step, n - s) for s in range(0, n, step)] or [0]
    else:
        sizes = list(split_size_or_sections)
        if sum(sizes) != n:
            raise ValueError(f"split: sizes {sizes} do not add up to dim {d} of size {n}")
    out, s0 = [], 0
    for k in sizes:
        out.append(narrow(tensor, d, s0, k))
        s0 += k
    return tuple(out)


def chunk(input, chunks, dim=0):
    """Split into ``chunks`` views (the last may be smaller, there may be fewer)."""
    if not isinstance(chunks, int) or chunks <= 0:
        raise ValueError(f"chunk: chunks must be a positive int, got {chunks!r}")
    d = norm_dim("chunk", dim, input.ndim)
    if input.shape[d] == 0:       # NOTE: as PyTorch: ``chunks`` empty pieces of an empty dim
        return tuple(narrow(input, d, 0, 0) for _ in range(chunks))
    return split(input, max(1, math.ceil(input.shape[d] / chunks)), d)


def unbind(input, dim=0):
    """A tuple of the slices of ``input`` along ``dim`` (each without that dim)."""
    d = norm_dim("unbind", dim, input.ndim)
    return tuple(input.select(d, i) for i in range(input.shape[d]))
