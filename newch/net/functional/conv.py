"""``F.conv1d``, ``F.conv2d``, ``F.conv_transpose2d`` and ``F.pad``: argument checks, then ``ops.conv``.

conv1d runs as conv2d on a height-1 image (views, no copy).
"""
from ...ops import pad as _pad
from ...ops.conv import Geometry, conv2d_core, conv_transpose2d_core
from ...tensor import Tensor


def tuple_arg(op, name, v, n, least):
    """An int or an n-sequence of ints, each >= least, as an n-tuple."""
    vals = tuple(v) if isinstance(v, (tuple, list)) else (v,) * n
    if len(vals) != n or not all(isinstance(x, int) and not isinstance(x, bool) for x in vals):
        raise TypeError(f"{op}: {name} must be an int or a tuple of {n} ints, got {v!r}")
    if any(x < least for x in vals):
        raise ValueError(f"{op}: {name} must be >= {least}, got {v!r}")
    return vals


def _check(op, input, weight, bias, groups, nd, transposed=False):
    for name, t in (("input", input), ("weight", weight)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: {name} must be a Tensor, got {type(t).__name__}")
    if bias is not None and not isinstance(bias, Tensor):
        raise TypeError(f"{op}: bias must be a Tensor or None, got {type(bias).__name__}")
    if not input.dtype.is_floating_point or input.dtype is not weight.dtype or (
            bias is not None and bias.dtype is not input.dtype):
        raise TypeError(f"{op}: input, weight and bias must share one float dtype, got "
                        f"{input.dtype}, {weight.dtype}" + (f", {bias.dtype}" if bias is not None else ""))
    if weight.ndim != nd + 2:
        raise ValueError(f"{op}: weight must be {nd + 2}-D, got shape {tuple(weight.shape)}")
    if input.ndim not in (nd + 1, nd + 2):
        raise ValueError(f"{op}: expected a {nd + 1}-D (unbatched) or {nd + 2}-D (batched) input, "
                         f"got shape {tuple(input.shape)}")
    if weight.shape[0] == 0 or any(k == 0 for k in weight.shape[2:]):
        raise ValueError(f"{op}: weight of shape {tuple(weight.shape)} has an empty output "
                         f"channel or kernel dim")
    if not isinstance(groups, int) or isinstance(groups, bool) or groups < 1:
        raise ValueError(f"{op}: groups must be a positive int, got {groups!r}")
    cin = input.shape[-nd - 1]
    w_in = weight.shape[0] if transposed else weight.shape[1] * groups
    if cin != w_in:
        raise ValueError(f"{op}: input of shape {tuple(input.shape)} has {cin} channels, but weight "
                         f"of shape {tuple(weight.shape)} with groups={groups} expects {w_in}")
    cout = weight.shape[1] * groups if transposed else weight.shape[0]
    if (weight.shape[0] % groups) != 0:
        raise ValueError(f"{op}: weight's first dim {weight.shape[0]} is not divisible by "
                         f"groups={groups}")
    if bias is not None and tuple(bias.shape) != (cout,):
        raise ValueError(f"{op}: bias must have shape ({cout},), got {tuple(bias.shape)}")


def same_padding(op, kernel, stride, dilation):
    """Per spatial dim (left, right) zero padding of padding='same' (extra goes right, as PyTorch)."""
    if any(s != 1 for s in stride):
        raise ValueError(f"{op}: padding='same' is not supported for strided convolutions")
    return [(d * (k - 1) // 2, d * (k - 1) - d * (k - 1) // 2) for k, d in zip(kernel, dilation)]


def _conv(op, input, weight, bias, stride, padding, dilation, groups, nd):
    _check(op, input, weight, bias, groups, nd)
    kernel = tuple(weight.shape[2:])
    stride = tuple_arg(op, "stride", stride, nd, 1)
    dilation = tuple_arg(op, "dilation", dilation, nd, 1)
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0,) * nd
        elif padding == "same":
            pairs = same_padding(op, kernel, stride, dilation)
            if any(lo != hi for lo, hi in pairs):
                flat = []
                for lo, hi in reversed(pairs):
                    flat += [0, hi - lo]
                input = _pad.pad(input, flat)
            padding = tuple(lo for lo, _ in pairs)
        else:
            raise ValueError(f"{op}: padding must be 'valid', 'same', an int or a tuple, got {padding!r}")
    padding = tuple_arg(op, "padding", padding, nd, 0)
    unbatched = input.ndim == nd + 1
    x = input.unsqueeze(0) if unbatched else input
    w = weight
    if nd == 1:
        x, w = x.unsqueeze(2), weight.unsqueeze(2)
        kernel, stride, padding, dilation = ((1,) + kernel, (1,) + stride, (0,) + padding,
                                             (1,) + dilation)
    out = conv2d_core(op, x, w, bias, Geometry(kernel, stride, padding, dilation, groups))
    if nd == 1:
        out = out.squeeze(2)
    return out.squeeze(0) if unbatched else out


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution (cross-correlation, as in PyTorch) of (N, C_in, H, W) or (C_in, H, W) input.

    Args:
        input: (N, C_in, H, W) tensor, or (C_in, H, W).
        weight: (C_out, C_in / groups, kH, kW).
        bias: (C_out,) or None.
        stride, dilation: int or (h, w), >= 1.
        padding: int, (h, w), 'valid' (none) or 'same' (output as large as the input; stride 1).
        groups: split channels into this many independent convolutions (C_in for depthwise).

    Example:
        >>> conv2d(newch.ones(1, 1, 4, 4), newch.ones(2, 1, 3, 3)).shape
        newch.Size([1, 2, 2, 2])
    """
    return _conv("conv2d", input, weight, bias, stride, padding, dilation, groups, 2)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution of (N, C_in, L) or (C_in, L) input with weight (C_out, C_in / groups, k).

    Arguments as ``conv2d``, with ints (or 1-tuples) for one spatial dim.

    Example:
        >>> conv1d(newch.ones(1, 2, 5), newch.ones(3, 2, 3), padding='same').shape
        newch.Size([1, 3, 5])
    """
    return _conv("conv1d", input, weight, bias, stride, padding, dilation, groups, 1)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """Transposed 2-D convolution (the gradient of conv2d with respect to its input).

    Output size per dim: (H - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1.

    Args:
        input: (N, C_in, H, W) or (C_in, H, W).
        weight: (C_in, C_out / groups, kH, kW).
        bias: (C_out,) or None.
        stride, padding, output_padding, dilation: int or (h, w); output_padding must be
            smaller than stride or dilation.
        groups: as in ``conv2d``.

    Example:
        >>> conv_transpose2d(newch.ones(1, 1, 2, 2), newch.ones(1, 3, 3, 3), stride=2).shape
        newch.Size([1, 3, 5, 5])
    """
    op = "conv_transpose2d"
    _check(op, input, weight, bias, groups, 2, transposed=True)
    kernel = tuple(weight.shape[2:])
    stride = tuple_arg(op, "stride", stride, 2, 1)
    padding = tuple_arg(op, "padding", padding, 2, 0)
    dilation = tuple_arg(op, "dilation", dilation, 2, 1)
    outpad = tuple_arg(op, "output_padding", output_padding, 2, 0)
    if any(o >= s and o >= d for o, s, d in zip(outpad, stride, dilation)):
        raise ValueError(f"{op}: output_padding {outpad} must be smaller than either stride "
                         f"{stride} or dilation {dilation}")
    unbatched = input.ndim == 3
    x = input.unsqueeze(0) if unbatched else input
    hw = tuple((n - 1) * s - 2 * p + d * (k - 1) + o + 1
               for n, s, p, d, k, o in zip(x.shape[2:], stride, padding, dilation, kernel, outpad))
    if min(hw) <= 0:
        raise ValueError(f"{op}: input of shape {tuple(input.shape)} gives a non-positive output "
                         f"size {hw}")
    out = conv_transpose2d_core(op, x, weight, bias, Geometry(kernel, stride, padding, dilation,
                                                              groups), hw)
    return out.squeeze(0) if unbatched else out


def pad(input, pad, mode="constant", value=None):
    """Pad the last ``len(pad) // 2`` dims of ``input``.

    Args:
        input: a tensor.
        pad: (left, right) for the last dim, then (top, bottom) for the one before, ...;
            negative values crop (constant mode).
        mode: 'constant' (fill with ``value``, default 0), 'reflect' (mirror without repeating
            the edge), 'replicate' (repeat the edge) or 'circular' (wrap around).
        value: the fill of constant mode.

    Example:
        >>> pad(newch.tensor([[1.0, 2.0, 3.0]]), (2, 1), mode='reflect').tolist()
        [[3.0, 2.0, 1.0, 2.0, 3.0, 2.0]]
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"pad: input must be a Tensor, got {type(input).__name__}")
    return _pad.pad(input, pad, mode, value)
