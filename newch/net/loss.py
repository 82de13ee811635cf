"""Regression loss layers: MSELoss, L1Loss, SmoothL1Loss, HuberLoss.

Each holds its options and calls the function of the same name in ``functional``.
"""
from . import functional as F
from .functional.loss import reduction_mode
from .module import Module


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        self.reduction = reduction_mode(type(self).__name__, reduction, size_average, reduce)


class MSELoss(_Loss):
    """Mean squared error between input and target; ``reduction`` 'mean', 'sum' or 'none'.

    Example:
        >>> MSELoss()(newch.tensor([1.0, 2.0]), newch.tensor([1.0, 4.0])).item()
        2.0
    """

    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """Mean absolute error between input and target.

    Example:
        >>> L1Loss(reduction="sum")(newch.tensor([1.0, 2.0]), newch.tensor([0.0, 4.0])).item()
        3.0
    """

    def forward(self, input, target):
        return F.l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """Squared error / beta below ``beta``, absolute error above.

    Example:
        >>> SmoothL1Loss()(newch.tensor([0.0]), newch.tensor([3.0])).item()
        2.5
    """

    def __init__(self, size_average=None, reduce=None, reduction="mean", beta=1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input, target):
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """Squared error below ``delta``, delta * (|d| - delta/2) above.

    Example:
        >>> HuberLoss(delta=2.0)(newch.tensor([0.0]), newch.tensor([3.0])).item()
        4.0
    """

    def __init__(self, reduction="mean", delta=1.0):
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input, target):
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)
