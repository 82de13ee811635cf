"""Dropout layers: Dropout, Dropout1d, Dropout2d (active in training mode only)."""
from . import functional as F
from .module import Module


class _DropoutNd(Module):
    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
            raise ValueError(f"{type(self).__name__}: dropout probability has to be between 0 "
                             f"and 1, but got {p!r}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Zero each element with probability ``p`` in training, scaling the rest by 1 / (1 - p).

    Masks come from the context's generator: ``newch.manual_seed`` fixes them.

    Example:
        >>> Dropout(0.5).eval()(newch.ones(2)).tolist()
        [1.0, 1.0]
    """

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)


class Dropout1d(_DropoutNd):
    """Zero whole channels of (N, C, L) or (C, L) input with probability ``p`` in training.

    Example:
        >>> Dropout1d(0.5)(newch.ones(2, 3, 4)).shape
        newch.Size([2, 3, 4])
    """

    def forward(self, input):
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """Zero whole channels of (N, C, H, W) input with probability ``p`` in training.

    Example:
        >>> Dropout2d(0.5)(newch.ones(2, 3, 4, 4)).shape
        newch.Size([2, 3, 4, 4])
    """

    def forward(self, input):
        return F.dropout2d(input, self.p, self.training, self.inplace)
