"""Functional pooling: ``max_pool1d/2d``, ``avg_pool1d/2d``, ``adaptive_{avg,max}_pool1d/2d``.

Same signatures and defaults as ``torch.nn.functional``; the work is in ``ops.pool``.
"""
import numpy as np

from ...ops import pool as P
from ...tensor import Tensor
from .conv import tuple_arg


def _input(op, input):
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(input).__name__}")
    return input


def _regular(op, input, nd, kernel_size, stride, padding, dilation, ceil_mode, avg):
    """Per dim (start, count, third, out) windows of a plain pooling; third is dilation or divisor."""
    _input(op, input)
    k = tuple_arg(op, "kernel_size", kernel_size, nd, 1)
    s = k if stride is None or (isinstance(stride, (tuple, list)) and len(stride) == 0) else \
        tuple_arg(op, "stride", stride, nd, 1)
    p = tuple_arg(op, "padding", padding, nd, 0)
    d = tuple_arg(op, "dilation", dilation, nd, 1)
    for ki, pi, di in zip(k, p, d):
        limit = ki // 2     # NOTE: as PyTorch, also for dilated max pooling
        if pi > limit:
            raise ValueError(f"{op}: padding {p} should be at most half of the kernel size {k}")
    if input.ndim not in (nd + 1, nd + 2):
        raise ValueError(f"{op}: expected a {nd + 1}-D (unbatched) or {nd + 2}-D (batched) input, "
                         f"got shape {tuple(input.shape)}")
    sizes = tuple(input.shape[-nd:])
    dims = []
    for n, ki, si, pi, di in zip(sizes, k, s, p, d):
        o = P.out_len(op, n, ki, si, pi, di, ceil_mode)
        start, count, den = P.windows(n, o, ki, si, pi, di)
        dims.append((start, count, di, den, o))
    if nd == 1:
        one = np.zeros(1, np.int64)
        dims.insert(0, (one, one + 1, 1, one + 1, 1))
    return dims


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Maximum over kH x kW windows of (N, C, H, W) or (C, H, W) input.

    Args:
        kernel_size: int or (kH, kW).
        stride: int or (sH, sW); default kernel_size.
        padding: implicit -inf border, at most half the window.
        dilation: spacing between window elements.
        ceil_mode: round the output size up (windows may hang over the edge).
        return_indices: also return the flat index (h * W + w) of each maximum, int64.

    Example:
        >>> max_pool2d(newch.arange(16.).reshape(1, 1, 4, 4), 2).tolist()
        [[[[5.0, 7.0], [13.0, 15.0]]]]
    """
    dims = _regular("max_pool2d", input, 2, kernel_size, stride, padding, dilation, ceil_mode, False)
    geo = tuple((st, c, d, o) for st, c, d, _, o in dims)
    return P.max_pool("max_pool2d", input, 2, geo, return_indices)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """Maximum over windows of the last dim of (N, C, L) or (C, L) input; arguments as max_pool2d.

    Example:
        >>> max_pool1d(newch.tensor([[1.0, 3.0, 2.0, 0.0]]), 2).tolist()
        [[3.0, 2.0]]
    """
    dims = _regular("max_pool1d", input, 1, kernel_size, stride, padding, dilation, ceil_mode, False)
    geo = tuple((st, c, d, o) for st, c, d, _, o in dims)
    return P.max_pool("max_pool1d", input, 1, geo, return_indices)


def _avg(op, input, nd, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    dims = _regular(op, input, nd, kernel_size, stride, padding, 1, ceil_mode, True)
    if divisor_override is not None and (not isinstance(divisor_override, int) or divisor_override <= 0):
        raise ValueError(f"{op}: divisor_override must be a positive int, got {divisor_override!r}")
    geo = tuple((st, c, den if count_include_pad else c, o) for st, c, _, den, o in dims)
    return P.avg_pool(op, input, nd, geo, divisor_override or 0)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """Mean over kH x kW windows of (N, C, H, W) or (C, H, W) input.

    Args:
        kernel_size, stride, padding, ceil_mode: as in ``max_pool2d`` (zero padding).
        count_include_pad: count padded zeros in the divisor (default True).
        divisor_override: divide every window sum by this instead.

    Example:
        >>> avg_pool2d(newch.ones(1, 1, 4, 4), 2).tolist()
        [[[[1.0, 1.0], [1.0, 1.0]]]]
    """
    return _avg("avg_pool2d", input, 2, kernel_size, stride, padding, ceil_mode, count_include_pad,
                divisor_override)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """Mean over windows of the last dim of (N, C, L) or (C, L) input; arguments as avg_pool2d.

    Example:
        >>> avg_pool1d(newch.tensor([[1.0, 3.0, 2.0, 0.0]]), 2).tolist()
        [[2.0, 1.0]]
    """
    return _avg("avg_pool1d", input, 1, kernel_size, stride, padding, ceil_mode, count_include_pad,
                None)


def _adaptive(op, input, nd, output_size):
    _input(op, input)
    if input.ndim not in (nd + 1, nd + 2):
        raise ValueError(f"{op}: expected a {nd + 1}-D (unbatched) or {nd + 2}-D (batched) input, "
                         f"got shape {tuple(input.shape)}")
    sizes = tuple(input.shape[-nd:])
    outs = tuple(output_size) if isinstance(output_size, (tuple, list)) else (output_size,) * nd
    if len(outs) != nd:
        raise ValueError(f"{op}: output_size must be an int or {nd} ints, got {output_size!r}")
    outs = tuple(n if o is None else o for n, o in zip(sizes, outs))
    if not all(isinstance(o, int) and not isinstance(o, bool) and o >= 0 for o in outs):
        raise ValueError(f"{op}: output_size must hold ints >= 0 (or None), got {output_size!r}")
    dims = [P.adaptive_windows(n, o) + (o,) for n, o in zip(sizes, outs)]
    if nd == 1:
        one = np.zeros(1, np.int64)
        dims.insert(0, (one, one + 1, 1))
    return dims


def adaptive_avg_pool2d(input, output_size):
    """Mean pooling to a fixed output size: window i spans [floor(i*H/OH), ceil((i+1)*H/OH)).

    Args:
        output_size: int or (OH, OW); None in a place keeps that input size.

    Example:
        >>> adaptive_avg_pool2d(newch.ones(2, 3, 5, 7), 1).shape
        newch.Size([2, 3, 1, 1])
    """
    dims = _adaptive("adaptive_avg_pool2d", input, 2, output_size)
    return P.avg_pool("adaptive_avg_pool2d", input, 2, tuple((s, c, c, o) for s, c, o in dims))


def adaptive_avg_pool1d(input, output_size):
    """Mean pooling of the last dim of (N, C, L) or (C, L) input to ``output_size`` positions.

    Example:
        >>> adaptive_avg_pool1d(newch.tensor([[1.0, 3.0, 2.0, 0.0]]), 2).tolist()
        [[2.0, 1.0]]
    """
    dims = _adaptive("adaptive_avg_pool1d", input, 1, output_size)
    return P.avg_pool("adaptive_avg_pool1d", input, 1, tuple((s, c, c, o) for s, c, o in dims))


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max pooling to a fixed output size (windows as in ``adaptive_avg_pool2d``).

    Example:
        >>> adaptive_max_pool2d(newch.arange(16.).reshape(1, 1, 4, 4), 1).tolist()
        [[[[15.0]]]]
    """
    dims = _adaptive("adaptive_max_pool2d", input, 2, output_size)
    return P.max_pool("adaptive_max_pool2d", input, 2, tuple((s, c, 1, o) for s, c, o in dims),
                      return_indices)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Max pooling of the last dim to ``output_size`` positions.

    Example:
        >>> adaptive_max_pool1d(newch.tensor([[1.0, 3.0, 2.0, 0.0]]), 2).tolist()
        [[3.0, 2.0]]
    """
    dims = _adaptive("adaptive_max_pool1d", input, 1, output_size)
    return P.max_pool("adaptive_max_pool1d", input, 1, tuple((s, c, 1, o) for s, c, o in dims),
                      return_indices)
