"""Activation layers: ReLU, LeakyReLU, ELU, GELU, SiLU, Sigmoid, Tanh, Softmax, LogSoftmax.

Each is a thin Module over the function of the same name in ``functional``.
"""
from . import functional as F
from .module import Module


def _inplace_text(inplace, lead=", "):
    return f"{lead}inplace=True" if inplace else ""


class ReLU(Module):
    """max(x, 0) elementwise.

    Example:
        >>> ReLU()(newch.tensor([-1.0, 2.0])).tolist()
        [0.0, 2.0]
    """

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_text(self.inplace, "")


class LeakyReLU(Module):
    """x where x > 0, else negative_slope * x.

    Example:
        >>> LeakyReLU(0.5)(newch.tensor([-1.0, 2.0])).tolist()
        [-0.5, 2.0]
    """

    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}{_inplace_text(self.inplace)}"


class ELU(Module):
    """x where x > 0, else alpha * (exp(x) - 1).

    Example:
        >>> ELU()(newch.tensor([0.0, 2.0])).tolist()
        [0.0, 2.0]
    """

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}{_inplace_text(self.inplace)}"


class GELU(Module):
    """x * Phi(x); ``approximate='tanh'`` for the tanh formula.

    Example:
        >>> GELU()(newch.tensor([0.0])).tolist()
        [0.0]
    """

    def __init__(self, approximate="none"):
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """x * sigmoid(x).

    Example:
        >>> SiLU()(newch.tensor([0.0])).tolist()
        [0.0]
    """

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.silu(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_text(self.inplace, "")


class Sigmoid(Module):
    """1 / (1 + exp(-x)).

    Example:
        >>> Sigmoid()(newch.tensor([0.0])).tolist()
        [0.5]
    """

    def forward(self, input):
        return F.sigmoid(input)


class Tanh(Module):
    """Hyperbolic tangent.

    Example:
        >>> Tanh()(newch.tensor([0.0])).tolist()
        [0.0]
    """

    def forward(self, input):
        return F.tanh(input)


class Softmax(Module):
    """Normalise ``dim`` into probabilities: exp(x) / sum(exp(x)).

    Example:
        >>> Softmax(dim=1)(newch.zeros(1, 4)).tolist()
        [[0.25, 0.25, 0.25, 0.25]]
    """

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """log(softmax(x)) along ``dim``, computed stably.

    Example:
        >>> LogSoftmax(dim=1)(newch.zeros(1, 2)).shape
        newch.Size([1, 2])
    """

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.log_softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"
