"""Linear (y = x W^T + b) and Identity layers."""
import math

from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter, empty_persistent


class Identity(Module):
    """Returns its input unchanged (arguments are accepted and ignored).

    Example:
        >>> Identity()(newch.ones(2)).tolist()
        [1.0, 1.0]
    """

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """Affine layer: ``y = x @ weight.T + bias``.

    Parameters are allocated in persistent memory and initialised in place as in
    PyTorch: weight ~ kaiming_uniform_(a=sqrt(5)) (that is U(-1/sqrt(in), 1/sqrt(in))),
    bias ~ U(-1/sqrt(in_features), 1/sqrt(in_features)). Building one uses no
    step-arena memory.

    Args:
        in_features: size of each input's last dim.
        out_features: size of each output's last dim.
        bias: learn an additive bias (default True).
        device: only None or "cpu".
        dtype: parameter dtype (default float32).

    Example:
        >>> lin = Linear(4, 2)
        >>> lin(newch.randn(8, 4)).shape
        newch.Size([8, 2])
    """

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        for name, n in (("in_features", in_features), ("out_features", out_features)):
            if not isinstance(n, int) or isinstance(n, bool) or n < 0:
                raise ValueError(f"Linear: {name} must be an int >= 0, got {n!r}")
        if device is not None and str(device) != "cpu":
            raise ValueError(f"Linear: device {device!r} is not available; newch runs on the CPU")
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(empty_persistent((out_features, in_features), dtype))
        if bias:
            self.bias = Parameter(empty_persistent((out_features,), dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Draw fresh initial values (PyTorch's defaults), in place."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")
