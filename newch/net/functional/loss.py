"""Regression losses: mse_loss, l1_loss, smooth_l1_loss, huber_loss (PyTorch's signatures).

Each is composed from newch ops, so autograd needs nothing more. ``reduction``
is 'mean' (default), 'sum' or 'none'. When ``target``'s shape differs from
``input``'s they broadcast with a UserWarning, as in PyTorch.
"""
import warnings

from ... import ops
from ...ops.mse import mse
from ...tensor import Tensor

REDUCTIONS = ("mean", "sum", "none")


def reduction_mode(op, reduction, size_average=None, reduce=None):
    """The reduction to apply; the legacy ``size_average``/``reduce`` flags override it.

    Example:
        >>> reduction_mode("mse_loss", "mean", reduce=False)
        'none'
    """
    if size_average is not None or reduce is not None:
        warnings.warn(f"{op}: size_average and reduce are deprecated; use reduction= instead",
                      UserWarning, stacklevel=3)
        if reduce is False:
            reduction = "none"
        elif size_average is False:
            reduction = "sum"
        else:
            reduction = "mean"
    if reduction not in REDUCTIONS:
        raise ValueError(f"{op}: {reduction!r} is not a valid value for reduction; expected "
                         f"'mean', 'sum' or 'none'")
    return reduction


def _check_pair(op, input, target):
    for name, t in (("input", input), ("target", target)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: {name} must be a Tensor, got {type(t).__name__}")
    if tuple(input.shape) != tuple(target.shape):
        warnings.warn(f"{op}: using a target size ({target.shape}) that is different to the input "
                      f"size ({input.shape}); they will be broadcast, which is likely not what you "
                      f"want. Please ensure they have the same size.", UserWarning, stacklevel=3)


def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _weighted(op, loss, input, weight, reduction, mean_over_weight):
    """Multiply the elementwise ``loss`` by ``weight`` (input's shape), then reduce.

    'mean' divides by the sum of the weights for mse/l1 and by the element count
    for huber, as PyTorch does.
    """
    if not isinstance(weight, Tensor) or tuple(weight.shape) != tuple(input.shape):
        got = getattr(weight, "shape", type(weight).__name__)
        raise ValueError(f"{op}: weight must be a Tensor of the input's shape "
                         f"{tuple(input.shape)}, got {got}")
    loss = loss * weight
    if reduction == "mean" and mean_over_weight:
        return loss.sum() / weight.sum()
    return _reduce(loss, reduction)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error: reduce((input - target) ** 2).

    Example:
        >>> mse_loss(newch.tensor([1.0, 2.0]), newch.tensor([1.0, 4.0])).item()
        2.0
    """
    red = reduction_mode("mse_loss", reduction, size_average, reduce)
    _check_pair("mse_loss", input, target)
    if (weight is None and red != "none" and input.dtype is target.dtype
            and input.dtype.is_floating_point and tuple(input.shape) == tuple(target.shape)):
        return mse(input, target, red)      # NOTE: one node, the composed form's bits
    loss = ops.square(input - target)
    if weight is not None:
        return _weighted("mse_loss", loss, input, weight, red, True)
    return _reduce(loss, red)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean absolute error: reduce(|input - target|).

    Example:
        >>> l1_loss(newch.tensor([1.0, 2.0]), newch.tensor([1.0, 4.0])).item()
        1.0
    """
    red = reduction_mode("l1_loss", reduction, size_average, reduce)
    _check_pair("l1_loss", input, target)
    loss = ops.abs(input - target)
    if weight is not None:
        return _weighted("l1_loss", loss, input, weight, red, True)
    return _reduce(loss, red)


def _quadratic_then_linear(diff, width, quad_scale, lin_scale):
    """Elementwise quad_scale * d**2 / 2 where |d| < width, else lin_scale * (|d| - width / 2)."""
    ad = ops.abs(diff)
    quad = ops.square(diff) * (0.5 * quad_scale)
    lin = (ad - 0.5 * width) * lin_scale
    return ops.where(ad < width, quad, lin)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """Squared error (divided by beta) for |d| < beta, absolute error beyond (beta=0: l1_loss).

    Example:
        >>> smooth_l1_loss(newch.tensor([0.0, 0.0]), newch.tensor([0.5, 3.0])).item()
        1.3125
    """
    red = reduction_mode("smooth_l1_loss", reduction, size_average, reduce)
    if beta < 0:
        raise ValueError(f"smooth_l1_loss: beta must be >= 0, got {beta}")
    _check_pair("smooth_l1_loss", input, target)
    if beta == 0:
        return _reduce(ops.abs(input - target), red)
    return _reduce(_quadratic_then_linear(input - target, beta, 1.0 / beta, 1.0), red)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """Squared error for |d| < delta, delta * (|d| - delta/2) beyond (smooth_l1 times delta).

    Example:
        >>> huber_loss(newch.tensor([0.0, 0.0]), newch.tensor([0.5, 3.0]), delta=2.0).item()
        2.0625
    """
    red = reduction_mode("huber_loss", reduction)
    if delta <= 0:
        raise ValueError(f"huber_loss: delta must be > 0, got {delta}")
    _check_pair("huber_loss", input, target)
    loss = _quadratic_then_linear(input - target, delta, 1.0, delta)
    if weight is not None:
        return _weighted("huber_loss", loss, input, weight, red, False)
    return _reduce(loss, red)
