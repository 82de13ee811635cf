"""Normalisation layers: BatchNorm1d, BatchNorm2d, GroupNorm, LayerNorm.

Parameters (weight ones, bias zeros) and buffers (running_mean zeros,
running_var ones, num_batches_tracked 0) are persistent, named and printed as
in PyTorch, so state_dicts load either way. Each ``forward`` is one call to
the functional form.
"""
from .. import dtypes as D
from ..graph import no_grad
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter, empty_persistent


def _affine(module, shape, dtype, weight, bias):
    """Register parameters ``weight`` and ``bias`` of ``shape`` (or None when not wanted)."""
    def make(wanted):
        return Parameter(empty_persistent(shape, dtype)) if wanted else None
    module.register_parameter("weight", make(weight))
    module.register_parameter("bias", make(weight and bias))


def _check_device(name, device):
    if device is not None and str(device) != "cpu":
        raise ValueError(f"{name}: device {device!r} is not available; newch runs on the CPU")


class _BatchNorm(Module):
    _dims = ()      # accepted input ranks

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None, *, bias=True):
        super().__init__()
        name = type(self).__name__
        _check_device(name, device)
        if not isinstance(num_features, int) or isinstance(num_features, bool) or num_features < 1:
            raise ValueError(f"{name}: num_features must be an int >= 1, got {num_features!r}")
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        _affine(self, (num_features,), dtype, affine, bias)
        if track_running_stats:
            self.register_buffer("running_mean", empty_persistent((num_features,), dtype))
            self.register_buffer("running_var", empty_persistent((num_features,), dtype))
            self.register_buffer("num_batches_tracked", empty_persistent((), D.int64))
        else:
            for b in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(b, None)
        self.reset_parameters()

    def reset_running_stats(self):
        """running_mean 0, running_var 1, num_batches_tracked 0 (in place)."""
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self):
        """Reset the running statistics; weight 1 and bias 0."""
        self.reset_running_stats()
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def _check_input_dim(self, input):
        if input.ndim not in self._dims:
            want = " or ".join(f"{d}D" for d in self._dims)
            raise ValueError(f"{type(self).__name__}: expected {want} input (got {input.ndim}D "
                             f"input)")

    def forward(self, input):
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            with no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:
                # NOTE: momentum=None is a cumulative moving average: batch k weighs 1/k.
                factor = 1.0 / float(self.num_batches_tracked.item())
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        keep = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if keep else None,
                            self.running_var if keep else None, self.weight, self.bias,
                            use_batch, factor, self.eps)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of (N, C) or (N, C, L) input over N (and L), per channel.

    Args:
        num_features: C.
        eps: added to the variance. momentum: weight of each new batch in the
            running statistics (None: cumulative average over all batches).
        affine: learn weight and bias. track_running_stats: keep running mean and
            (unbiased) variance for eval mode; without them eval uses batch statistics.

    Example:
        >>> bn = BatchNorm1d(3)
        >>> bn(newch.randn(8, 3)).shape
        newch.Size([8, 3])
    """
    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of (N, C, H, W) input over N, H and W, per channel.

    Same arguments as ``BatchNorm1d``.

    Example:
        >>> bn = BatchNorm2d(4)
        >>> bn(newch.randn(2, 4, 5, 5)).shape
        newch.Size([2, 4, 5, 5])
    """
    _dims = (4,)


class GroupNorm(Module):
    """Normalise (N, C, ...) input over groups of C // num_groups channels, per sample.

    Example:
        >>> GroupNorm(2, 4)(newch.randn(3, 4, 5)).shape
        newch.Size([3, 4, 5])
    """

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None, *,
                 bias=True):
        super().__init__()
        _check_device("GroupNorm", device)
        if not isinstance(num_groups, int) or num_groups < 1 or num_channels % num_groups:
            raise ValueError(f"GroupNorm: num_channels ({num_channels}) must be divisible by "
                             f"num_groups ({num_groups})")
        self.num_groups, self.num_channels = num_groups, num_channels
        self.eps, self.affine = eps, affine
        _affine(self, (num_channels,), dtype, affine, bias)
        self.reset_parameters()

    def reset_parameters(self):
        """weight 1, bias 0."""
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class LayerNorm(Module):
    """Normalise over the trailing ``normalized_shape`` dims, then an elementwise weight and bias.

    Example:
        >>> LayerNorm(4)(newch.randn(2, 4)).shape
        newch.Size([2, 4])
    """

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None,
                 dtype=None):
        super().__init__()
        _check_device("LayerNorm", device)
        ns = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape = ns
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _affine(self, ns, dtype, elementwise_affine, bias)
        self.reset_parameters()

    def reset_parameters(self):
        """weight 1, bias 0."""
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")
