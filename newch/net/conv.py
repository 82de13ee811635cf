"""Convolution layers: Conv1d, Conv2d, ConvTranspose2d.

Parameter names, shapes, default initialisation and reprs are PyTorch's, so
state_dicts interchange: weight (C_out, C_in / groups, *kernel) for Conv,
(C_in, C_out / groups, *kernel) for ConvTranspose, bias (C_out,); weight ~
kaiming_uniform_(a=sqrt(5)), bias ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
"""
import math

from . import functional as F
from . import init
from .functional.conv import same_padding, tuple_arg
from .module import Module
from .parameter import Parameter, empty_persistent

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Module):
    """Shared construction of the convolution layers."""

    _nd = 2
    _transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None,
                 output_padding=0):
        super().__init__()
        op, nd = type(self).__name__, self._nd
        for name, n in (("in_channels", in_channels), ("out_channels", out_channels),
                        ("groups", groups)):
            if not isinstance(n, int) or isinstance(n, bool) or n < (1 if name == "groups" else 0):
                raise ValueError(f"{op}: {name} must be a{' positive' if name == 'groups' else 'n'} "
                                 f"int{'' if name == 'groups' else ' >= 0'}, got {n!r}")
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"{op}: in_channels ({in_channels}) and out_channels ({out_channels}) "
                             f"must be divisible by groups ({groups})")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"{op}: padding_mode must be one of {_PADDING_MODES}, got "
                             f"{padding_mode!r}")
        if device is not None and str(device) != "cpu":
            raise ValueError(f"{op}: device {device!r} is not available; newch runs on the CPU")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = tuple_arg(op, "kernel_size", kernel_size, nd, 1)
        self.stride = tuple_arg(op, "stride", stride, nd, 1)
        self.dilation = tuple_arg(op, "dilation", dilation, nd, 1)
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"{op}: padding must be 'same', 'valid', an int or a tuple, got "
                                 f"{padding!r}")
            if padding == "same":
                same_padding(op, self.kernel_size, self.stride, self.dilation)
            self.padding = padding
        else:
            self.padding = tuple_arg(op, "padding", padding, nd, 0)
        self.output_padding = tuple_arg(op, "output_padding", output_padding, nd, 0)
        self.transposed, self.groups, self.padding_mode = self._transposed, groups, padding_mode
        shape = ((in_channels, out_channels // groups) if self._transposed
                 else (out_channels, in_channels // groups)) + self.kernel_size
        self.weight = Parameter(empty_persistent(shape, dtype))
        if bias:
            self.bias = Parameter(empty_persistent((out_channels,), dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Draw fresh initial values (PyTorch's defaults), in place."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def _explicit_padding(self):
        """[left, right, top, bottom, ...] for F.pad when padding_mode is not 'zeros'."""
        if self.padding == "valid":
            return [0, 0] * self._nd
        pairs = (same_padding(type(self).__name__, self.kernel_size, self.stride, self.dilation)
                 if self.padding == "same" else [(p, p) for p in self.padding])
        flat = []
        for lo, hi in reversed(pairs):
            flat += [lo, hi]
        return flat

    def _conv_input(self, input):
        """(input, padding): the input padded in ``padding_mode`` when it is not zeros."""
        if self.padding_mode == "zeros":
            return input, self.padding
        return F.pad(input, self._explicit_padding(), mode=self.padding_mode), 0

    def extra_repr(self):
        nd = self._nd
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * nd:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * nd:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * nd:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv2d(_ConvNd):
    """2-D convolution layer over (N, C_in, H, W) (or (C_in, H, W)) input.

    Args:
        in_channels, out_channels: channel counts.
        kernel_size: int or (kH, kW).
        stride, dilation: int or (h, w) (default 1).
        padding: int, (h, w), 'valid' or 'same' (default 0).
        groups: independent channel groups (in_channels for depthwise).
        bias: learn an additive bias (default True).
        padding_mode: 'zeros', 'reflect', 'replicate' or 'circular'.
        device: only None or "cpu". dtype: parameter dtype (default float32).

    Example:
        >>> Conv2d(1, 32, 3)(newch.randn(8, 1, 28, 28)).shape
        newch.Size([8, 32, 26, 26])
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups,
                         bias, padding_mode, device, dtype)

    def forward(self, input):
        x, padding = self._conv_input(input)
        return F.conv2d(x, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)


class Conv1d(_ConvNd):
    """1-D convolution layer over (N, C_in, L) (or (C_in, L)) input; arguments as Conv2d.

    Example:
        >>> Conv1d(2, 4, 3, padding=1)(newch.randn(8, 2, 10)).shape
        newch.Size([8, 4, 10])
    """

    _nd = 1

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups,
                         bias, padding_mode, device, dtype)

    def forward(self, input):
        x, padding = self._conv_input(input)
        return F.conv1d(x, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)


class ConvTranspose2d(_ConvNd):
    """Transposed 2-D convolution (fractionally strided; the gradient of Conv2d for its input).

    Output size: (H - 1) * stride - 2 * padding + dilation * (kernel_size - 1) + output_padding + 1.

    Args:
        in_channels, out_channels, kernel_size, stride, padding, groups, bias, dilation:
            as in Conv2d (padding an int or tuple only).
        output_padding: extra size on one side of the output, smaller than stride or dilation.
        padding_mode: only 'zeros'.

    Example:
        >>> ConvTranspose2d(8, 4, 2, stride=2)(newch.randn(1, 8, 5, 5)).shape
        newch.Size([1, 4, 10, 10])
    """

    _transposed = True

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f"ConvTranspose2d: only padding_mode 'zeros' is supported, got "
                             f"{padding_mode!r}")
        if isinstance(padding, str):
            raise ValueError(f"ConvTranspose2d: padding must be an int or a tuple, got {padding!r}")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups,
                         bias, padding_mode, device, dtype, output_padding)

    def forward(self, input, output_size=None):
        outpad = self.output_padding
        if output_size is not None:
            outpad = self._output_padding(input, output_size)
        return F.conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding, outpad,
                                  self.groups, self.dilation)

    def _output_padding(self, input, output_size):
        """The output_padding giving ``output_size`` (the last two entries are used)."""
        want = tuple(output_size)[-2:]
        pads = []
        for n, w, s, p, d, k in zip(input.shape[-2:], want, self.stride, self.padding,
                                    self.dilation, self.kernel_size):
            least = (n - 1) * s - 2 * p + d * (k - 1) + 1
            if not least <= w < least + s:
                raise ValueError(f"ConvTranspose2d: requested output size {tuple(want)} is not "
                                 f"reachable from input {tuple(input.shape)} (per dim from {least} "
                                 f"to {least + s - 1})")
            pads.append(w - least)
        return tuple(pads)
