"""Dropout: zero elements (or whole channels) at random and scale the rest by 1 / (1 - p).

The keep-mask is drawn from the context's random generator (numpy's PCG64,
serial), so the same seed gives the same masks whatever the thread count.
It is stored as bool (one byte per element, or per channel for the feature
forms), and it is all the backward keeps: gradient = upstream * mask / (1 - p).
"""
import math

import numpy as np

from .. import dtypes as D
from ..context import default_context
from ..tensor import Tensor
from .alloc import data, empty, kernels, need_float
from .record import needs_grad, record
from .convert import contiguous


def _check_p(op, p):
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
        raise ValueError(f"{op}: dropout probability has to be between 0 and 1, but got {p!r}")


DRAW_CHUNK = 1 << 16    # uniforms drawn per call: the float scratch stays 256 KiB at most


def keep_mask(shape, p):
    """A bool tensor of ``shape``: True with probability 1 - p, from the context's generator.

    Uniform floats are drawn in fixed chunks into a small scratch buffer and compared
    there, so no float array of the mask's size is ever allocated; the chunking does
    not change the numbers drawn (the generator's stream is the same).
    """
    mask = empty(shape, D.bool_)
    m = mask._a.reshape(-1)
    if m.size == 0:
        return mask
    scratch = empty((min(m.size, DRAW_CHUNK),), D.float32)
    u = scratch._a
    rng = default_context().rng
    keep = np.float32(1.0 - p)
    for lo in range(0, m.size, DRAW_CHUNK):
        n = min(DRAW_CHUNK, m.size - lo)
        rng.random(out=u[:n], dtype=np.float32)
        np.less(u[:n], keep, out=m[lo:lo + n])
    return mask


def _apply(op, x, mask, group, scale):
    """x * (scale where mask else 0), mask repeated over runs of ``group`` elements."""
    xc = contiguous(x)
    out = empty(tuple(x.shape), x.dtype)
    if out.numel():
        kernels().masked_scale(data(xc, op).reshape(-1), data(mask, op).reshape(-1), group,
                               x.dtype.np.type(scale), out._a.reshape(-1))
    return out


def _dropout(op, input, p, training, inplace, mask_shape):
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(input).__name__}")
    _check_p(op, p)
    if not training or p == 0 or input.numel() == 0:
        return input
    need_float(op, input)
    mask = keep_mask(mask_shape, p)
    group = input.numel() // math.prod(mask_shape)
    scale = 0.0 if p == 1 else 1.0 / (1.0 - p)
    out = _apply(op, input, mask, group, scale)
    if needs_grad(input):
        record(out, "NativeDropoutBackward0", (input,),
               lambda g, m: (_apply(op, g, m, group, scale),), saved=[mask])
    if inplace:
        # NOTE: the backward needs only the mask, so the result can overwrite the input.
        return input.copy_(out)
    return out


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability ``p``, scale the others by 1 / (1 - p) (training only).

    Example:
        >>> _ = newch.manual_seed(0)
        >>> y = dropout(newch.ones(1000), 0.25)
        >>> sorted(set(y.tolist()))
        [0.0, 1.3333333730697632]
    """
    return _dropout("dropout", input, p, training, inplace, tuple(input.shape))


def feature_dropout(op, input, p, training, inplace, lead):
    """Zero whole channels: one mask entry per index of the first ``lead`` dims of ``input``.

    Example:
        >>> y = feature_dropout("dropout2d", newch.ones(2, 3, 4, 4), 0.5, True, False, 2)
        >>> y.shape
        newch.Size([2, 3, 4, 4])
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(input).__name__}")
    if input.ndim < lead:
        raise RuntimeError(f"{op}: feature dropout needs at least {lead} dims (N, C, ...), got "
                           f"shape {tuple(input.shape)}")
    return _dropout(op, input, p, training, inplace, tuple(input.shape[:lead]))
