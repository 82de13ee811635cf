"""Padding and resizing layers: ZeroPad2d, ConstantPad2d, ReflectionPad2d, ReplicationPad2d, Upsample."""
from . import functional as F
from .module import Module


def _quadruple(op, padding):
    p = tuple(padding) if isinstance(padding, (tuple, list)) else (padding,) * 4
    if len(p) != 4 or not all(isinstance(v, int) and not isinstance(v, bool) for v in p):
        raise ValueError(f"{op}: padding must be an int or 4 ints (left, right, top, bottom), "
                         f"got {padding!r}")
    return p


class _Pad2d(Module):
    _mode = "constant"

    def __init__(self, padding):
        super().__init__()
        self.padding = _quadruple(type(self).__name__, padding)

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad2d(_Pad2d):
    """Pad the last two dims with zeros: padding int or (left, right, top, bottom).

    Example:
        >>> ZeroPad2d(1)(newch.ones(1, 2, 2)).shape
        newch.Size([1, 4, 4])
    """


class ReflectionPad2d(_Pad2d):
    """Pad the last two dims by mirroring (edge not repeated); padding as ZeroPad2d.

    Example:
        >>> ReflectionPad2d(1)(newch.ones(1, 3, 3)).shape
        newch.Size([1, 5, 5])
    """
    _mode = "reflect"


class ReplicationPad2d(_Pad2d):
    """Pad the last two dims by repeating the edge; padding as ZeroPad2d.

    Example:
        >>> ReplicationPad2d(1)(newch.ones(1, 3, 3)).shape
        newch.Size([1, 5, 5])
    """
    _mode = "replicate"


class ConstantPad2d(_Pad2d):
    """Pad the last two dims with ``value``; padding as ZeroPad2d.

    Example:
        >>> ConstantPad2d(1, 3.5)(newch.ones(1, 2, 2))[0, 0].tolist()
        [3.5, 3.5, 3.5, 3.5]
    """

    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class Upsample(Module):
    """Resize (N, C, L) or (N, C, H, W) input; see ``F.interpolate`` for the arguments.

    Example:
        >>> Upsample(scale_factor=2, mode='bilinear')(newch.randn(1, 3, 4, 4)).shape
        newch.Size([1, 3, 8, 8])
    """

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, (tuple, list)):
            self.scale_factor = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode, self.align_corners = mode, align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self):
        info = (f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None
                else f"size={self.size!r}")
        return info + f", mode={self.mode!r}"
