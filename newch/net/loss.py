"""Loss layers: MSELoss, L1Loss, SmoothL1Loss, HuberLoss (regression); CrossEntropyLoss, NLLLoss,
BCELoss, BCEWithLogitsLoss, KLDivLoss (classification).

Each holds its options and calls the function of the same name in ``functional``.
Class weights (``weight``, ``pos_weight``) are buffers, as in PyTorch.
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


class _WeightedLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class CrossEntropyLoss(_WeightedLoss):
    """Cross entropy of logits (N, C, ...) against class indices or class probabilities.

    Args:
        weight: (C,) class weights. ignore_index: class index that counts for nothing.
        reduction: 'mean', 'sum' or 'none'. label_smoothing: in [0, 1].

    Example:
        >>> loss = CrossEntropyLoss()(newch.tensor([[0.0, 0.0]]), newch.tensor([1]))
        >>> round(loss.item(), 4)
        0.6931
    """

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean", label_smoothing=0.0):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class NLLLoss(_WeightedLoss):
    """Negative log likelihood of log-probabilities (N, C, ...) at class indices.

    Example:
        >>> NLLLoss()(newch.tensor([[-1.0, -2.0]]), newch.tensor([0])).item()
        1.0
    """

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class BCELoss(_WeightedLoss):
    """Binary cross entropy of probabilities in [0, 1].

    Example:
        >>> round(BCELoss()(newch.tensor([0.5]), newch.tensor([0.0])).item(), 4)
        0.6931
    """

    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross entropy of sigmoid(logits), computed stably from the logits.

    Args:
        weight: rescales each element. pos_weight: weight of positives, per class (last dim).

    Example:
        >>> round(BCEWithLogitsLoss()(newch.tensor([0.0]), newch.tensor([0.0])).item(), 4)
        0.6931
    """

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean",
                 pos_weight=None):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(input, target, self.weight,
                                                  pos_weight=self.pos_weight,
                                                  reduction=self.reduction)


class KLDivLoss(Module):
    """Kullback-Leibler divergence of log-probabilities ``input`` from ``target``.

    Args:
        reduction: 'mean', 'batchmean' (the KL divergence), 'sum' or 'none'.
        log_target: the target is given as log-probabilities.

    Example:
        >>> KLDivLoss(reduction="sum")(newch.tensor([-1.0]), newch.tensor([1.0])).item()
        1.0
    """

    def __init__(self, size_average=None, reduce=None, reduction="mean", log_target=False):
        super().__init__()
        if reduction != "batchmean" or size_average is not None or reduce is not None:
            reduction = reduction_mode("KLDivLoss", reduction, size_average, reduce)
        self.reduction = reduction
        self.log_target = log_target

    def forward(self, input, target):
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)
