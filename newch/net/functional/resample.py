"""``F.interpolate`` (``F.upsample``): nearest and (bi)linear resampling of the last 1 or 2 dims.

Built from ``index_select`` along each resized dim (and, for linear modes, a
weighted sum of the two neighbours), so autograd and the memory model come
with the ops. Source positions follow PyTorch's formulas: nearest takes
floor(dst * scale); linear maps dst to (dst + 0.5) * scale - 0.5 (clamped at
0), or dst * (in - 1) / (out - 1) with ``align_corners=True``.
"""
import math

import numpy as np

from ... import dtypes as D
from ...ops import add, index_select, mul
from ...ops.alloc import empty
from ...tensor import Tensor

_MODES = {"nearest": (1, 2), "linear": (1,), "bilinear": (2,)}


def _sizes(op, input, nd, size, scale_factor):
    if (size is None) == (scale_factor is None):
        raise ValueError(f"{op}: give exactly one of size and scale_factor")
    spatial = tuple(input.shape[-nd:])
    if size is not None:
        sizes = tuple(size) if isinstance(size, (tuple, list)) else (size,) * nd
        if len(sizes) != nd or not all(isinstance(s, int) and s > 0 for s in sizes):
            raise ValueError(f"{op}: size must be a positive int or {nd} of them, got {size!r}")
        return sizes, [None] * nd
    scales = tuple(scale_factor) if isinstance(scale_factor, (tuple, list)) else (scale_factor,) * nd
    if len(scales) != nd or not all(isinstance(s, (int, float)) and s > 0 for s in scales):
        raise ValueError(f"{op}: scale_factor must be a positive number or {nd} of them, got "
                         f"{scale_factor!r}")
    return tuple(int(math.floor(n * s)) for n, s in zip(spatial, scales)), list(scales)


def _scale(n_in, n_out, factor, align_corners):
    if align_corners:
        return (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    return 1.0 / factor if factor is not None else n_in / n_out


def _long(values):
    t = empty((len(values),), D.int64)
    t._data("interpolate")[...] = values
    return t


def _along(x, dim, n_in, n_out, factor, mode, align_corners):
    """x resampled along ``dim`` from n_in to n_out positions."""
    scale = _scale(n_in, n_out, factor, align_corners)
    dst = np.arange(n_out, dtype=np.float64)
    if mode == "nearest":
        src = np.minimum(np.floor(dst * scale).astype(np.int64), n_in - 1)
        return index_select(x, dim, _long(src))
    src = dst * scale if align_corners else np.maximum((dst + 0.5) * scale - 0.5, 0.0)
    i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    i1 = np.minimum(i0 + 1, n_in - 1)
    lam = (src - i0).astype(x.dtype.np)
    shape = (n_out,) + (1,) * (x.ndim - 1 - dim)
    w1 = empty(shape, x.dtype)
    w1._data("interpolate")[...] = lam.reshape(shape)
    w0 = empty(shape, x.dtype)
    w0._data("interpolate")[...] = (1 - lam).reshape(shape)
    return add(mul(index_select(x, dim, _long(i0)), w0), mul(index_select(x, dim, _long(i1)), w1))


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resize the last dim (3-D input) or last two dims (4-D input).

    Args:
        input: (N, C, L) or (N, C, H, W) float tensor.
        size: output size (int or per-dim tuple); or give ``scale_factor`` instead.
        scale_factor: multiplier(s) of the input size (output size rounded down).
        mode: 'nearest', 'linear' (3-D) or 'bilinear' (4-D).
        align_corners: linear modes only: map corner pixel centres onto each other.
        recompute_scale_factor: True computes the source positions from the output size
            instead of ``scale_factor``.
        antialias: not supported (False).

    Example:
        >>> interpolate(newch.tensor([[[1.0, 2.0]]]), scale_factor=2).tolist()
        [[[1.0, 1.0, 2.0, 2.0]]]
    """
    op = "interpolate"
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(input).__name__}")
    if mode not in _MODES:
        raise ValueError(f"{op}: mode must be one of {sorted(_MODES)}, got {mode!r}")
    if antialias:
        raise ValueError(f"{op}: antialias=True is not supported")
    nd = input.ndim - 2
    if nd not in _MODES[mode]:
        raise ValueError(f"{op}: mode {mode!r} expects a {_MODES[mode][0] + 2}-D input, got "
                         f"{input.ndim}-D of shape {tuple(input.shape)}")
    if align_corners is not None and mode == "nearest":
        raise ValueError(f"{op}: align_corners only has an effect with linear modes")
    if not input.dtype.is_floating_point:
        raise TypeError(f"{op}: expected a floating point tensor, got {input.dtype}")
    sizes, factors = _sizes(op, input, nd, size, scale_factor)
    if recompute_scale_factor:
        factors = [None] * nd
    out = input
    for i, (n_out, f) in enumerate(zip(sizes, factors)):
        dim = input.ndim - nd + i
        n_in = input.shape[dim]
        if n_out != n_in or f not in (None, 1, 1.0):
            out = _along(out, dim, n_in, n_out, f, mode, bool(align_corners))
    return out if out is not input else input.clone()
