"""The negative log likelihood of class-index targets as one fused node (``kernels/loss.py``).

``nll`` returns the per-target losses and the per-target weights; the caller
reduces them (a weighted mean divides the first sum by the second). The node
saves only the int64 targets (and the class weights): the backward scatters
-weight * upstream into a zero gradient.
"""
import math

from .. import dtypes as D
from ..tensor import Tensor
from .alloc import data, empty, kernels
from .record import needs_grad, pack, record
from .convert import contiguous
from .shape import reshape


def _weight_array(op, weight, x):
    """(kernel array, keep-alive tensor): the class weights in x's dtype, or an empty array."""
    if weight is None:
        e = empty((0,), x.dtype)
        return e._a, e
    w = contiguous(weight.detach() if weight.dtype is x.dtype else weight.detach().to(x.dtype))
    return data(w, op).reshape(-1), w


def nll(op, input, target, weight, ignore_index):
    """(loss, weights), each shaped like ``target``: -input[n, target[n, ...], ...] * weight[t].

    ``input`` is (C,) or (N, C, d1, ...) log-probabilities, ``target`` int64 () or
    (N, d1, ...), already checked against each other; targets equal to
    ``ignore_index`` get loss 0 and weight 0, others must lie in [0, C).

    Example:
        >>> loss, w = nll("nll_loss", newch.tensor([[-1.0, -2.0]]), newch.tensor([1]), None, -100)
        >>> loss.tolist(), w.tolist()
        ([2.0], [1.0])
    """
    shape = tuple(input.shape)
    N = shape[0] if input.ndim > 1 else 1
    C = shape[1] if input.ndim > 1 else shape[0]
    L = math.prod(shape[2:])
    x3 = reshape(contiguous(input), (N, C, L))
    t = target if target.dtype is D.int64 else target.to(D.int64)
    t2 = contiguous(t).reshape((N, L))
    w, wkeep = _weight_array(op, weight, input)
    loss = empty((N, L), input.dtype)
    wsum = empty((N, L), input.dtype)
    if loss.numel():
        kernels().nll_forward(data(x3, op), data(t2, op), w, int(ignore_index), loss._a, wsum._a)
    if needs_grad(x3):
        dt = input.dtype
        saved, restore = pack(t2, weight if isinstance(weight, Tensor) else None)

        def backward(g, *s):
            ts, ws = restore(*s)
            gc = contiguous(g)
            dx = empty((N, C, L), dt)
            wk, wk_keep = _weight_array(op, ws, dx)
            if dx.numel():
                kernels().nll_backward(data(ts, op), wk, int(ignore_index), data(gc, op), dx._a)
            return (dx,)
        record(loss, "NllLossBackward0", (x3,), backward, saved)
    tshape = tuple(target.shape)
    return reshape(loss, tshape), reshape(wsum, tshape)
