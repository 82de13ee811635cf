"""Mean squared error of two same-shaped float tensors as one graph node (``MseLossBackward0``).

The composed form ``((input - target) ** 2).mean()`` records three nodes and keeps the
difference alive for backward; this one runs the same kernels in the same order (so the
loss and its gradients have the same bits) and saves only ``input`` and ``target``: the
backward recomputes the difference, which costs one elementwise pass and no memory held
between forward and backward.
"""
import math

from ..graph import is_grad_enabled
from ..kernels import codes as C
from .alloc import data, empty
from .arith import div, mul, sub
from .launch import binary, launch_binary, launch_unary
from .record import needs_grad, record
from .reduce import _scale_inplace, reduce


def mse(input, target, reduction):
    """``reduction`` ("mean" or "sum") of ``(input - target) ** 2``; one node.

    The caller checked that both are tensors of one float dtype and one shape.

    Example:
        >>> mse(newch.tensor([1.0, 2.0]), newch.tensor([1.0, 4.0]), "mean").item()
        2.0
    """
    d = binary("mse_loss", C.SUB, input, target)
    launch_unary(C.SQUARE, d._a, d._a)
    dims = tuple(range(d.ndim))
    if reduction == "mean":
        n = math.prod(d.shape)
        out = _scale_inplace(reduce("mse_loss", C.SUM, d, dims, False, d.dtype),
                             1.0 / n if n else float("nan"))
    else:
        n = None
        out = reduce("mse_loss", C.SUM, d, dims, False, d.dtype)
    del d
    if needs_grad(input, target):
        _record(out, input, target, n)
    return out


def _record(out, input, target, n):
    gi, gt = input.requires_grad, target.requires_grad
    shape = tuple(input.shape)

    def backward(g, x, y):
        if is_grad_enabled():     # NOTE: create_graph: the composed form's differentiable ops
            gm = g.expand(shape) if n is None else div(g.expand(shape), n)
            gx = mul(gm, mul(sub(x, y), 2.0))
            return gx if gi else None, -gx if gt else None
        # NOTE: the composed form's arithmetic, element by element: g / n (mean's backward),
        # times (x - y) * 2.0 (square's backward); a product commutes exactly.
        G = data(g, "MseLossBackward0")
        scale = G[()] / G.dtype.type(n) if n else G[()]
        gx = binary("MseLossBackward0", C.SUB, x, y)
        launch_binary(C.MUL, gx._a, gx.dtype.np.type(2.0), gx._a)
        launch_binary(C.MUL, gx._a, scale, gx._a)
        if not gt:
            return gx, None
        gy = empty(shape, gx.dtype)
        launch_unary(C.NEG, gx._a, gy._a)
        return gx if gi else None, gy
    record(out, "MseLossBackward0", (input, target), backward, saved=[input, target])
