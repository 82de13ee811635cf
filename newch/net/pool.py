"""Pooling layers: MaxPool1d/2d, AvgPool1d/2d, AdaptiveAvgPool1d/2d, AdaptiveMaxPool1d/2d.

Each stores its arguments under PyTorch's names and calls the functional form;
reprs are PyTorch's (``MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1,
ceil_mode=False)``).
"""
from . import functional as F
from .module import Module


class _MaxPoolNd(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool2d(_MaxPoolNd):
    """Max over kH x kW windows; see ``F.max_pool2d`` for the arguments.

    Example:
        >>> MaxPool2d(2)(newch.randn(8, 3, 24, 24)).shape
        newch.Size([8, 3, 12, 12])
    """

    def forward(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool1d(_MaxPoolNd):
    """Max over windows of the last dim; see ``F.max_pool1d``.

    Example:
        >>> MaxPool1d(2)(newch.randn(8, 3, 10)).shape
        newch.Size([8, 3, 5])
    """

    def forward(self, input):
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class AvgPool2d(Module):
    """Mean over kH x kW windows; see ``F.avg_pool2d`` for the arguments.

    Example:
        >>> AvgPool2d(2)(newch.randn(8, 3, 24, 24)).shape
        newch.Size([8, 3, 12, 12])
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


def _single(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,)


class AvgPool1d(Module):
    """Mean over windows of the last dim; see ``F.avg_pool1d``.

    Example:
        >>> AvgPool1d(2)(newch.randn(8, 3, 10)).shape
        newch.Size([8, 3, 5])
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True):
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _Adaptive(Module):
    _fn = None

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return type(self)._fn(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class _AdaptiveMax(_Adaptive):
    def __init__(self, output_size, return_indices=False):
        super().__init__(output_size)
        self.return_indices = return_indices

    def forward(self, input):
        return type(self)._fn(input, self.output_size, self.return_indices)


class AdaptiveAvgPool2d(_Adaptive):
    """Mean pooling to a fixed (OH, OW); see ``F.adaptive_avg_pool2d``.

    Example:
        >>> AdaptiveAvgPool2d(1)(newch.randn(8, 64, 8, 8)).shape
        newch.Size([8, 64, 1, 1])
    """
    _fn = staticmethod(F.adaptive_avg_pool2d)


class AdaptiveAvgPool1d(_Adaptive):
    """Mean pooling of the last dim to a fixed length; see ``F.adaptive_avg_pool1d``.

    Example:
        >>> AdaptiveAvgPool1d(4)(newch.randn(8, 3, 10)).shape
        newch.Size([8, 3, 4])
    """
    _fn = staticmethod(F.adaptive_avg_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMax):
    """Max pooling to a fixed (OH, OW); see ``F.adaptive_max_pool2d``.

    Example:
        >>> AdaptiveMaxPool2d((2, 2))(newch.randn(8, 3, 9, 9)).shape
        newch.Size([8, 3, 2, 2])
    """
    _fn = staticmethod(F.adaptive_max_pool2d)


class AdaptiveMaxPool1d(_AdaptiveMax):
    """Max pooling of the last dim to a fixed length; see ``F.adaptive_max_pool1d``.

    Example:
        >>> AdaptiveMaxPool1d(2)(newch.randn(8, 3, 10)).shape
        newch.Size([8, 3, 2])
    """
    _fn = staticmethod(F.adaptive_max_pool1d)
