"""Padding the last dims of a tensor: constant (also negative: cropping), reflect, replicate, circular.

``pad`` pairs run from the last dim backwards, as in PyTorch: (left, right) of
the last dim, then (top, bottom) of the one before, and so on.
"""
import numpy as np

from .. import dtypes as D
from .alloc import data, empty
from .indexing import index_select
from .launch import copy_into
from .record import needs_grad, record

MODES = ("constant", "reflect", "replicate", "circular")


def _pairs(op, input, pad):
    if not isinstance(pad, (tuple, list)) or len(pad) % 2 or not all(
            isinstance(p, (int, np.integer)) and not isinstance(p, bool) for p in pad):
        raise ValueError(f"{op}: pad must be a tuple of ints of even length, got {pad!r}")
    if len(pad) // 2 > input.ndim:
        raise ValueError(f"{op}: pad of length {len(pad)} pads {len(pad) // 2} dims, but the input "
                         f"has only {input.ndim}")
    return [(input.ndim - 1 - i, int(pad[2 * i]), int(pad[2 * i + 1])) for i in range(len(pad) // 2)]


def _constant(op, input, pairs, value):
    x = data(input, op)
    shape = list(x.shape)
    src, dst = [slice(None)] * x.ndim, [slice(None)] * x.ndim
    for d, lo, hi in pairs:
        n = shape[d] + lo + hi
        if n < 0:
            raise ValueError(f"{op}: padding ({lo}, {hi}) of dim {d} makes its size {n} < 0")
        shape[d] = n
        src[d] = slice(max(-lo, 0), x.shape[d] - max(-hi, 0))
        dst[d] = slice(max(lo, 0), max(lo, 0) + max(x.shape[d] - max(-lo, 0) - max(-hi, 0), 0))
    out = empty(tuple(shape), input.dtype)
    out._a[...] = value
    src, dst = tuple(src), tuple(dst)
    if out._a[dst].size:
        copy_into(x[src], out._a[dst])
    if needs_grad(input):
        def backward(g):
            grad = empty(tuple(input.shape), input.dtype)
            grad._a[...] = 0
            part = data(g, "ConstantPadNdBackward0")[dst]
            if part.size:
                copy_into(part, grad._a[src])
            return (grad,)
        record(out, "ConstantPadNdBackward0", (input,), backward)
    return out


def _index(mode, n, lo, hi):
    """Source positions of a dim of size n padded by (lo, hi) in ``mode``."""
    pos = np.arange(-lo, n + hi)
    if mode == "replicate":
        return np.clip(pos, 0, n - 1)
    if mode == "circular":
        return pos % n
    period = 2 * (n - 1)
    r = np.abs(pos) % period if period else np.zeros_like(pos)
    return np.where(r >= n, period - r, r)


def pad(input, pad, mode="constant", value=None):
    """Pad ``input``'s last len(pad)//2 dims; see ``newch.nn.functional.pad``."""
    op = "pad"
    if mode not in MODES:
        raise ValueError(f"{op}: mode must be one of {MODES}, got {mode!r}")
    pairs = _pairs(op, input, pad)
    if mode == "constant":
        return _constant(op, input, pairs, 0 if value is None else value)
    if value not in (None, 0):
        raise ValueError(f"{op}: padding mode {mode!r} does not take a value (got {value!r})")
    npad = len(pairs)
    if input.ndim not in (npad + 1, npad + 2):
        raise ValueError(f"{op}: {mode} padding of {npad} dims expects a {npad + 1}-D or "
                         f"{npad + 2}-D input, got {input.ndim}-D of shape {tuple(input.shape)}")
    out = input
    for d, lo, hi in pairs:
        n = input.shape[d]
        limit = n - 1 if mode == "reflect" else n
        if mode != "replicate" and (max(lo, hi) > limit or min(lo, hi) < -n):
            raise ValueError(f"{op}: {mode} padding ({lo}, {hi}) of dim {d} must be at most {limit} "
                             f"(the dim has size {n})")
        if n == 0 or min(lo, hi) < 0 and mode != "circular":
            raise ValueError(f"{op}: {mode} padding ({lo}, {hi}) of dim {d} of size {n} is not valid")
        idx = empty((n + lo + hi,), D.int64)
        idx._a[...] = _index(mode, n, lo, hi)
        out = index_select(out, d, idx)
    return out
