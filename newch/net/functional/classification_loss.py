"""Classification losses with PyTorch's signatures: cross_entropy, nll_loss, binary_cross_entropy,
binary_cross_entropy_with_logits, kl_div; and one_hot.

The class-index losses run one fused node (``ops/loss.py``: a kernel picks
-log p of each target, its backward scatters the gradient back); the rest is
composed from newch ops. log_softmax subtracts the maximum first and the logits
form of binary cross entropy never exponentiates a positive number, so logits
of 1e4 give finite losses and gradients. Two nodes have a hand-written backward
where composing would give PyTorch-incompatible gradients at the edges:
binary cross entropy (its logs are clamped at -100) and softplus(-x) (the
gradient at 0 through ``abs``). ``reduction='mean'`` of a class-weighted loss
divides by the sum of the weights of the targets used, as PyTorch does.
"""
import warnings

import numpy as np

from ... import dtypes as D
from ... import ops
from ...graph import no_grad
from ...ops import loss as _loss_ops
from ...ops.alloc import data
from ...ops.record import needs_grad, record
from ...tensor import Tensor
from .loss import _reduce, reduction_mode


def _tensors(op, **named):
    for name, t in named.items():
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: {name} must be a Tensor, got {type(t).__name__}")


def _not_differentiable(op, name, t):
    """PyTorch has no gradient for class weights here: refuse one that requires grad, as it does."""
    if t is not None and isinstance(t, Tensor) and t.requires_grad and needs_grad(t):
        raise RuntimeError(f"{op}: not differentiable with respect to argument '{name}'; this "
                           f"input cannot have requires_grad=True (pass weight.detach())")


def _class_target(op, input, target):
    """Check input (C,) / (N, C, d1, ...) against class-index target () / (N, d1, ...)."""
    if input.ndim == 0:
        raise ValueError(f"{op}: input must be (C,) or (N, C, d1, ...), got a 0-d tensor")
    if target.dtype not in (D.int64, D.uint8):
        raise RuntimeError(f"{op}: expected target dtype to be Long or Byte (int64 or uint8), "
                           f"but got {target.dtype}")
    shape = tuple(input.shape)
    if input.ndim == 1:
        if target.ndim != 0:
            raise ValueError(f"{op}: a 1-D input (C,) takes a 0-d target, got target shape "
                             f"{tuple(target.shape)}")
        return shape[0], 0
    got = target.shape[0] if target.ndim else "none (0-d target)"
    if target.ndim == 0 or target.shape[0] != shape[0]:
        raise ValueError(f"{op}: expected input batch_size ({shape[0]}) to match target "
                         f"batch_size ({got})")
    want = (shape[0],) + shape[2:]
    if tuple(target.shape) != want:
        raise RuntimeError(f"{op}: expected target of shape {want} for input of shape {shape}, "
                           f"got {tuple(target.shape)}")
    return shape[1], 1


def _class_weight(op, weight, C):
    if weight is None:
        return None
    _tensors(op, weight=weight)
    if tuple(weight.shape) != (C,):
        raise RuntimeError(f"{op}: weight should be a 1-D tensor of {C} class weights, got shape "
                           f"{tuple(weight.shape)}")
    return weight


def _check_in_range(op, target, C, ignore_index):
    t = data(target, op).astype(np.int64, copy=False)
    if t.size == 0:
        return
    lo, hi = t.min(), t.max()
    if lo >= 0 and hi < C:
        return
    bad = t[((t < 0) | (t >= C)) & (t != ignore_index)]
    if bad.size:
        raise IndexError(f"{op}: target {bad.flat[0]} is out of bounds for {C} classes "
                         f"(expected 0 to {C - 1}, or ignore_index={ignore_index})")


def _nll(op, input, target, weight, ignore_index, C):
    """(per-target loss, per-target weight) of log-probabilities ``input`` (fused kernel)."""
    _check_in_range(op, target, C, ignore_index)
    return _loss_ops.nll(op, input, target, weight, ignore_index)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """Negative log likelihood: -input[n, target[n]] * weight[target[n]], reduced.

    ``input`` holds log-probabilities, (C,) or (N, C, d1, ...); ``target`` class
    indices (int64), () or (N, d1, ...). 'mean' divides by the summed weights of
    the targets that are not ``ignore_index``.

    Example:
        >>> nll_loss(newch.tensor([[-1.0, -2.0]]), newch.tensor([1])).item()
        2.0
    """
    op = "nll_loss"
    red = reduction_mode(op, reduction, size_average, reduce)
    _tensors(op, input=input, target=target)
    C, cd = _class_target(op, input, target)
    _not_differentiable(op, "weight", weight)
    loss, w = _nll(op, input, target, _class_weight(op, weight, C), ignore_index, C)
    if red == "mean":
        return ops.div(loss.sum(), w.sum())
    return _reduce(loss, red)


def _smoothing(op, label_smoothing):
    if not isinstance(label_smoothing, (int, float)) or not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"{op}: label_smoothing must be between 0.0 and 1.0, got "
                         f"{label_smoothing!r}")
    return float(label_smoothing)


def _along(weight, ndim, cd):
    """``weight`` (C,) shaped to broadcast along class dim ``cd`` of an ``ndim``-d tensor."""
    return weight.reshape(tuple(-1 if k == cd else 1 for k in range(ndim)))


def _soft_target_loss(op, logp, target, weight, red, ls, C, cd):
    if tuple(target.shape) != tuple(logp.shape):
        raise RuntimeError(f"{op}: probability targets must have the input's shape "
                           f"{tuple(logp.shape)}, got {tuple(target.shape)}")
    if ls > 0:
        target = target * (1.0 - ls) + ls / C
    prod = ops.mul(logp, target)
    if weight is not None:
        prod = ops.mul(prod, _along(weight, logp.ndim, cd))
    loss = ops.neg(prod.sum(cd))
    if red == "mean":
        return ops.div(loss.sum(), logp.numel() // C if C else 0)
    return _reduce(loss, red)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """Cross entropy of logits ``input`` (C,) / (N, C, d1, ...) against class indices or
    class probabilities ``target``: nll_loss(log_softmax(input, class dim), target).

    Args:
        weight: (C,) class weights. ignore_index: class-index targets equal to it
            count for nothing (not for probability targets).
        label_smoothing: mix the target with the uniform distribution by this much.

    Example:
        >>> round(cross_entropy(newch.tensor([[0.0, 0.0]]), newch.tensor([0])).item(), 4)
        0.6931
    """
    op = "cross_entropy"
    red = reduction_mode(op, reduction, size_average, reduce)
    _tensors(op, input=input, target=target)
    ls = _smoothing(op, label_smoothing)
    if input.ndim == 0:
        raise ValueError(f"{op}: input must be (C,) or (N, C, d1, ...), got a 0-d tensor")
    cd = 1 if input.ndim >= 2 else 0
    C = input.shape[cd]
    weight = _class_weight(op, weight, C)
    if target.dtype.is_floating_point:
        return _soft_target_loss(op, ops.log_softmax(input, cd), target, weight, red, ls, C, cd)
    _class_target(op, input, target)
    _not_differentiable(op, "weight", weight)
    logp = ops.log_softmax(input, cd)
    loss, w = _nll(op, logp, target, weight, ignore_index, C)
    nll = ops.div(loss.sum(), w.sum()) if red == "mean" else _reduce(loss, red)
    if ls == 0:
        return nll
    spread = logp if weight is None else ops.mul(logp, _along(weight, logp.ndim, cd))
    smooth = ops.where(ops.ne(target.to(D.int64), ignore_index), ops.neg(spread.sum(cd)), 0.0)
    if red == "mean":
        smooth = ops.div(smooth.sum(), w.sum())
    else:
        smooth = _reduce(smooth, red)
    return ops.add(ops.mul(nll, 1.0 - ls), ops.mul(smooth, ls / C))


def _same_shape(op, input, target):
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"{op}: target size ({tuple(target.shape)}) must be the same as the "
                         f"input size ({tuple(input.shape)})")


def _bce_terms(x, t):
    """(log(x), log(1 - x)), each clamped below at -100 as PyTorch does."""
    return ops.clamp_min(ops.log(x), -100.0), ops.clamp_min(ops.log1p(ops.neg(x)), -100.0)


def _bce_elementwise(input, target):
    with no_grad():
        lx, l1x = _bce_terms(input, target)
        out = ops.sub(ops.mul(ops.sub(target, 1.0), l1x), ops.mul(target, lx))
    if needs_grad(input, target):
        want_x, want_t = input.requires_grad, target.requires_grad

        def backward(g, x, t):
            gx = gt = None
            if want_x:
                den = ops.clamp_min(ops.mul(x, ops.arith.rsub(x, 1.0)), 1e-12)
                gx = ops.div(ops.mul(g, ops.sub(x, t)), den)
            if want_t:
                a, b = _bce_terms(x, t)
                gt = ops.mul(g, ops.sub(b, a))
            return gx, gt
        record(out, "BinaryCrossEntropyBackward0", (input, target), backward,
               saved=[input, target])
    return out


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """-(target * log(input) + (1 - target) * log(1 - input)) for probabilities ``input``.

    The logs are clamped at -100 (so input 0 or 1 gives a finite loss).
    ``weight`` rescales each element (broadcast to the input's shape).

    Example:
        >>> round(binary_cross_entropy(newch.tensor([0.5]), newch.tensor([1.0])).item(), 4)
        0.6931
    """
    op = "binary_cross_entropy"
    red = reduction_mode(op, reduction, size_average, reduce)
    _tensors(op, input=input, target=target)
    _same_shape(op, input, target)
    if not input.dtype.is_floating_point or not target.dtype.is_floating_point:
        raise TypeError(f"{op}: expected floating point input and target, got {input.dtype} and "
                        f"{target.dtype}")
    _not_differentiable(op, "weight", weight)
    xa = data(input, op)
    if xa.size and not (xa.min() >= 0 and xa.max() <= 1):
        raise RuntimeError(f"{op}: all elements of input should be between 0 and 1")
    loss = _bce_elementwise(input, target.to(input.dtype) if target.dtype is not input.dtype
                            else target)
    if weight is not None:
        _tensors(op, weight=weight)
        loss = ops.mul(loss, weight.expand(tuple(input.shape)))
    return _reduce(loss, red)


def _softplus_neg(x):
    """softplus(-x) = log(1 + exp(-x)) = max(-x, 0) + log1p(exp(-|x|)): no overflow for any x."""
    with no_grad():
        out = ops.add(ops.relu(ops.neg(x)), ops.log1p(ops.exp(ops.neg(ops.abs(x)))))
    if needs_grad(x):
        record(out, "SoftplusBackward0", (x,),
               lambda g, xs: (ops.mul(g, ops.sub(ops.sigmoid(xs), 1.0)),), saved=[x])
    return out


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """Binary cross entropy of sigmoid(input), computed from the logits without overflow.

    loss = (1 - target) * x + (1 + (pos_weight - 1) * target) * log(1 + exp(-x)).

    Args:
        weight: rescales each element (broadcast to the input's shape).
        pos_weight: weight of the positive term, broadcast along the last (class) dim.

    Example:
        >>> x, y = newch.tensor([0.0]), newch.tensor([1.0])
        >>> round(binary_cross_entropy_with_logits(x, y).item(), 4)
        0.6931
    """
    op = "binary_cross_entropy_with_logits"
    red = reduction_mode(op, reduction, size_average, reduce)
    _tensors(op, input=input, target=target)
    _same_shape(op, input, target)
    if not input.dtype.is_floating_point:
        raise TypeError(f"{op}: expected a floating point input, got {input.dtype}")
    _not_differentiable(op, "weight", weight)
    _not_differentiable(op, "pos_weight", pos_weight)
    sp = _softplus_neg(input)
    if pos_weight is not None:
        _tensors(op, pos_weight=pos_weight)
        sp = ops.mul(ops.add(ops.mul(ops.sub(pos_weight, 1.0), target), 1.0), sp)
    loss = ops.add(ops.mul(ops.arith.rsub(target, 1.0), input), sp)
    if weight is not None:
        _tensors(op, weight=weight)
        loss = ops.mul(loss, weight)
    return _reduce(loss, red)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """Pointwise Kullback-Leibler divergence target * (log(target) - input), ``input`` as logs.

    Args:
        reduction: 'mean' (over all elements, with PyTorch's warning), 'batchmean'
            (sum / batch size: the KL divergence), 'sum' or 'none'.
        log_target: ``target`` is given as log-probabilities too.

    Example:
        >>> kl_div(newch.tensor([-1.0]), newch.tensor([1.0]), reduction="sum").item()
        1.0
    """
    op = "kl_div"
    batchmean = reduction == "batchmean" and size_average is None and reduce is None
    red = "sum" if batchmean else reduction_mode(op, reduction, size_average, reduce)
    _tensors(op, input=input, target=target)
    if red == "mean" and reduction == "mean":
        warnings.warn("kl_div: reduction='mean' divides the total loss by both the batch size and "
                      "the support size; 'batchmean' divides only by the batch size, which is the "
                      "KL divergence", UserWarning, stacklevel=2)
    if log_target:
        loss = ops.mul(ops.exp(target), ops.sub(target, input))
    else:
        tlogt = ops.where(ops.eq(target, 0), 0.0, ops.mul(target, ops.log(target)))
        loss = ops.sub(tlogt, ops.mul(target, input))
    out = _reduce(loss, red)
    if batchmean and input.ndim:
        out = ops.div(out, input.shape[0])
    return out


def one_hot(tensor, num_classes=-1):
    """Class indices (int64) to one-hot rows: a new last dim of ``num_classes`` (-1: max + 1).

    Example:
        >>> one_hot(newch.tensor([0, 2]), 3).tolist()
        [[1, 0, 0], [0, 0, 1]]
    """
    op = "one_hot"
    _tensors(op, tensor=tensor)
    if tensor.dtype is not D.int64:
        raise RuntimeError(f"{op}: one_hot is only applicable to an index tensor of type int64 "
                           f"(LongTensor), got {tensor.dtype}")
    a = data(tensor, op)
    if num_classes == -1:
        if a.size == 0:
            raise RuntimeError(f"{op}: can not infer the number of classes from an empty tensor; "
                               f"pass num_classes")
        num_classes = int(a.max()) + 1
    if not isinstance(num_classes, int) or num_classes < 0:
        raise RuntimeError(f"{op}: num_classes must be a non-negative int or -1, got "
                           f"{num_classes!r}")
    if a.size and a.min() < 0:
        raise RuntimeError(f"{op}: class values must be non-negative, got {int(a.min())}")
    if a.size and a.max() >= num_classes:
        raise RuntimeError(f"{op}: class values must be smaller than num_classes "
                           f"({num_classes}), got {int(a.max())}")
    return ops.eq(tensor.unsqueeze(-1), ops.arange(num_classes)).to(D.int64)
