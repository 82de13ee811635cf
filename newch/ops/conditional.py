"""Selecting and blending ops: where, clamp, masked_fill, lerp, addcmul, addcdiv."""
from .. import dtypes as D
from ..tensor import Tensor
from .alloc import check_writable, data, empty, is_scalar, kernels
from .arith import add, div, eq, logical_or, maximum, minimum, mul, ne, sub
from .layout import broadcast_shapes, nd_views
from .launch import as_array, binary, check_fits, operand_dtype
from .record import check_inplace, needs_grad, pack, record, sum_to
from ..graph import no_grad
from ..kernels import codes as C
from .creation import zeros
from .indexing import nonzero
from .unary import logical_not

__all__ = [
    "addcdiv", "addcmul", "clamp", "clamp_max", "clamp_min", "clip", "isfinite", "isinf", "isnan",
    "lerp", "masked_fill", "masked_fill_", "where"
]
# also bound as Tensor methods (ops/methods.py):
TENSOR_METHODS = [
    "addcdiv", "addcmul", "clamp", "clamp_max", "clamp_min", "clip", "isfinite", "isinf", "isnan",
    "lerp", "masked_fill", "masked_fill_"
]


def where(condition, input=None, other=None):
    """Elements of ``input`` where ``condition`` holds, else of ``other`` (scalars allowed)."""
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    if not isinstance(condition, Tensor):
        raise TypeError(f"where: condition must be a bool Tensor, got {type(condition).__name__}")
    if condition.dtype is not D.bool_:
        condition = condition.to(D.bool_)
    if is_scalar(input) and is_scalar(other):
        dt = D.result_type([], [], [input, other])     # where(c, 1.0, 0.0): float32, like torch
    else:
        dt = operand_dtype("where", input, other)
    A, ka = as_array(input, dt, "where")
    B, kb = as_array(other, dt, "where")
    cond = data(condition, "where")
    shapes = [cond.shape] + [x.shape for x in (A, B) if hasattr(x, "shape")]
    shape = broadcast_shapes("where", *shapes)
    out = empty(shape, dt)
    if out._a.size:
        import numpy as np
        A = A if hasattr(A, "shape") else np.full((1,), A)
        B = B if hasattr(B, "shape") else np.full((1,), B)
        o = out._a if out._a.ndim else out._a.reshape(1)
        c = cond if cond.ndim else cond.reshape(1)
        for cv, av, bv, ov in nd_views(o.shape, [c, A, B, o]):
            kernels().where_nd(cv, av, bv, ov)
    if needs_grad(input, other):
        sa = input.shape if isinstance(input, Tensor) else ()
        sb = other.shape if isinstance(other, Tensor) else ()
        record(out, "WhereBackward0", (input, other),
               lambda g, c: (sum_to(where(c, g, 0.0), sa), sum_to(where(c, 0.0, g), sb)),
               saved=[condition])
    return out


def clamp(input, min=None, max=None):
    """Limit values to [min, max] (either may be None; tensors broadcast)."""
    if min is None and max is None:
        raise ValueError("clamp: at least one of min and max must be given")
    # NOTE: as PyTorch: a number and a tensor bound mix only if the tensor is 0-d (a number then)
    if any(is_scalar(a) and isinstance(b, Tensor) and b.ndim > 0 for a, b in ((min, max), (max, min))):
        raise TypeError("clamp: min and max must both be numbers or both be tensors (as in PyTorch)")
    with no_grad():
        out = input
        if min is not None:
            out = maximum(out, min) if isinstance(min, Tensor) else _clamp_scalar(out, min, "min")
        if max is not None:
            out = minimum(out, max) if isinstance(max, Tensor) else _clamp_scalar(out, max, "max")
        if out is input:
            out = input.clone()
    if needs_grad(input, min, max):
        saved, restore = pack(input, min, max)
        ishape = input.shape

        def backward(g, *s):
            input, min, max = restore(*s)
            keep = (input >= min) if min is not None else None
            if max is not None:
                below = input <= max
                keep = below if keep is None else keep & below
            gi = sum_to(where(keep, g, 0.0), ishape)
            gmin = gmax = None
            # NOTE: where min > max the result is max: the gradient goes to max (as PyTorch)
            if isinstance(min, Tensor):
                lo = input < min if max is None else (input < min) & (min < max)
                gmin = sum_to(where(lo, g, 0.0), min.shape)
            if isinstance(max, Tensor):
                hi = input > max if min is None else (input > max) | (max < min)
                gmax = sum_to(where(hi, g, 0.0), max.shape)
            return gi, gmin, gmax
        # NOTE: tensor bounds are saved too: `hi.fill_(5)` before backward is refused
        record(out, "ClampBackward1", (input, min, max), backward, saved)
    return out


clip = clamp


def clamp_min(input, min):
    """``clamp(input, min=min)``: every element at least ``min``."""
    return clamp(input, min=min)


def clamp_max(input, max):
    """``clamp(input, max=max)``: every element at most ``max``."""
    return clamp(input, max=max)


def _clamp_scalar(x, value, which):
    if not is_scalar(value):
        raise TypeError(f"clamp: {which} must be a number or Tensor, got {type(value).__name__}")
    return binary("clamp", C.MAXIMUM if which == "min" else C.MINIMUM, x, value,
                  compute_dtype=operand_dtype("clamp", x, value))


def masked_fill(input, mask, value):
    """A copy of ``input`` with ``value`` where ``mask`` (broadcastable bool) is True."""
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise ValueError(f"masked_fill: value must be a 0-dim tensor or a number, got shape "
                             f"{tuple(value.shape)}")
        value = value.item()
    ishape = tuple(input.shape)
    shape = broadcast_shapes("masked_fill", ishape, tuple(mask.shape)) if isinstance(mask, Tensor) \
        else ishape
    # NOTE: a mask with more (or larger) dims than input widens the result, as in PyTorch
    out = (input.expand(shape) if shape != ishape else input).clone()
    with no_grad():
        masked_fill_(out, mask, value)
    if needs_grad(input):
        record(out, "MaskedFillBackward0", (input,),
               lambda g, m: (sum_to(where(m, 0.0, g), ishape),), saved=[mask])
    return out


def masked_fill_(input, mask, value):
    """Set ``input`` to ``value`` where ``mask`` is True, in place; returns ``input``."""
    check_inplace("masked_fill_", input)
    if not isinstance(mask, Tensor) or mask.dtype is not D.bool_:
        raise TypeError(f"masked_fill_: mask must be a bool Tensor, got "
                        f"{getattr(mask, 'dtype', type(mask).__name__)}")
    if isinstance(value, Tensor):
        value = value.item()
    check_fits("masked_fill_", value, input.dtype)     # NOTE: even a 0-d tensor's, as PyTorch
    a = data(input, "masked_fill_")
    check_writable("masked_fill_", input)
    m = data(mask, "masked_fill_")
    if broadcast_shapes("masked_fill_", a.shape, m.shape) != tuple(a.shape):
        raise ValueError(f"masked_fill_: a mask of shape {tuple(m.shape)} does not broadcast to the "
                         f"tensor's shape {tuple(a.shape)}")
    if a.size:
        val, _ = as_array(value, input.dtype, "masked_fill_")
        o = a if a.ndim else a.reshape(1)
        mm = m if m.ndim else m.reshape(1)
        for dv, mv in nd_views(o.shape, [o, mm]):
            kernels().masked_fill_nd(dv, mv, val)
    input._s.version += 1
    if needs_grad(input):
        record(input, "MaskedFillBackward0", (input,), lambda g, m: (where(m, 0.0, g),), saved=[mask])
    return input


def lerp(input, end, weight):
    """input + weight * (end - input)."""
    return add(input, mul(sub(end, input), weight))


def addcmul(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 * tensor2."""
    return add(input, mul(mul(tensor1, tensor2), value))


def addcdiv(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 / tensor2."""
    return add(input, mul(div(tensor1, tensor2), value))


def isnan(input):
    """True where ``input`` is NaN."""
    return ne(input, input)


def isinf(input):
    """True where ``input`` is +inf or -inf."""
    from .unary import abs   # NOTE: kept local: at module level it would shadow the builtin
    if not input.dtype.is_floating_point:
        return zeros(tuple(input.shape), dtype=D.bool_)
    return eq(abs(input), float("inf"))


def isfinite(input):
    """True where ``input`` is neither NaN nor infinite."""
    return logical_not(logical_or(isnan(input), isinf(input)))
