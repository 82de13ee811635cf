"""Binary arithmetic, comparison and logical ops, each with its backward beside it."""
import numpy as np

from .. import dtypes as D
from ..kernels import codes as C
from ..tensor import Tensor
from .alloc import data
from .launch import binary, operand_dtype
from .record import needs_grad, pack, record, sum_to
from ..graph import no_grad

__all__ = [
    "add", "atan2", "bitwise_and", "bitwise_or", "bitwise_xor", "div", "divide", "eq",
    "floor_divide", "fmod", "ge", "greater", "greater_equal", "gt", "le", "less", "less_equal",
    "logical_and", "logical_or", "logical_xor", "lt", "maximum", "minimum", "mul", "ne",
    "not_equal", "pow", "remainder", "sub", "true_divide"
]
# also bound as Tensor methods (ops/methods.py):
TENSOR_METHODS = [
    "add", "atan2", "bitwise_and", "bitwise_or", "bitwise_xor", "div", "divide", "eq",
    "floor_divide", "fmod", "ge", "greater", "greater_equal", "gt", "le", "less", "less_equal",
    "logical_and", "logical_or", "logical_xor", "lt", "maximum", "minimum", "mul", "ne",
    "not_equal", "pow", "remainder", "sub", "true_divide"
]


def _shape(x):
    return x.shape if isinstance(x, Tensor) else ()


def _float_dtype(op, a, b):
    dt = operand_dtype(op, a, b)
    return dt if dt.is_floating_point else D.get_default_dtype()


def _scaled(op, input, other, alpha):
    """``other * alpha``, after PyTorch's checks of ``alpha`` against the result dtype."""
    if type(alpha) is int and alpha == 1:
        return other                    # NOTE: the default: nothing to check or scale
    dt = operand_dtype(op, input, other)
    if isinstance(alpha, (bool, np.bool_)) and dt is not D.bool_:
        raise TypeError(f"{op}: a bool alpha is only supported for bool results, got {dt}")
    if not dt.is_floating_point and isinstance(alpha, (float, np.floating)):
        raise TypeError(f"{op}: alpha must be an integer for {dt} operands, got {alpha!r}")
    if alpha == 1:
        return other
    if dt is D.bool_:
        return other if alpha else False
    if isinstance(other, Tensor):       # NOTE: scale in the result dtype (uint8 * -1 would wrap)
        return mul(other if other.dtype is dt else other.to(dt), alpha)
    return other * alpha


def add(input, other, *, alpha=1):
    """input + alpha * other, with broadcasting and type promotion."""
    if type(alpha) is not int or alpha != 1:       # NOTE: the default skips a call
        other = _scaled("add", input, other, alpha)
    out = binary("add", C.ADD, input, other)
    if needs_grad(input, other):
        sa, sb = _shape(input), _shape(other)
        ga, gb = _wants(input), _wants(other)     # NOTE: no reduction for a side without grad
        record(out, "AddBackward0", (input, other),
               lambda g: (sum_to(g, sa) if ga else None, sum_to(g, sb) if gb else None))
    return out


def sub(input, other, *, alpha=1):
    """input - alpha * other."""
    _no_bool_sub("sub", input, other)
    other = _scaled("sub", input, other, alpha)
    out = binary("sub", C.SUB, input, other)
    if needs_grad(input, other):
        sa, sb = _shape(input), _shape(other)
        ga, gb = _wants(input), _wants(other)     # NOTE: no negation for a side without grad
        record(out, "SubBackward0", (input, other),
               lambda g: (sum_to(g, sa) if ga else None, sum_to(-g, sb) if gb else None))
    return out


def _no_bool_sub(op, a, b):
    # NOTE: as PyTorch, any bool operand (tensor or Python bool) is refused, not only bool results
    if any(isinstance(x, (bool, np.bool_)) or (isinstance(x, Tensor) and x.dtype is D.bool_)
           for x in (a, b)):
        raise TypeError(f"{op}: subtraction of bool tensors is not supported; "
                        f"use logical_xor or ~ instead")


def rsub(input, other, *, alpha=1):
    """other - alpha * input (``2 - x``)."""
    if isinstance(other, Tensor) or alpha != 1:
        return sub(other, input, alpha=alpha)
    _no_bool_sub("rsub", input, other)
    out = binary("rsub", C.RSUB, input, other)
    if needs_grad(input):
        record(out, "RsubBackward1", (input,), lambda g: (-g,))
    return out


def mul(input, other):
    """input * other elementwise."""
    out = binary("mul", C.MUL, input, other)
    if needs_grad(input, other):
        sa, sb = _shape(input), _shape(other)
        ga, gb = _wants(input), _wants(other)
        saved, restore = pack(other if ga else None, input if gb else None)

        def backward(g, *s):
            b, a = restore(*s)
            return (sum_to(mul(g, b), sa) if ga else None, sum_to(mul(g, a), sb) if gb else None)
        record(out, "MulBackward0", (input, other), backward, saved)
    return out


def _wants(x):
    return isinstance(x, Tensor) and x._rg


def div(input, other, *, rounding_mode=None):
    """input / other; ``rounding_mode`` None (true division), "trunc" or "floor"."""
    if rounding_mode in ("floor", "trunc"):
        out = _floor_div(input, other) if rounding_mode == "floor" else _trunc_div(input, other)
        if needs_grad(input, other) and out.dtype.is_floating_point:
            # NOTE: as PyTorch: a rounded quotient has gradient 0 (even where other is 0)
            sa, sb = _shape(input), _shape(other)
            record(out, "DivBackward2", (input, other),
                   lambda g: (sum_to(mul(g, 0.0), sa), sum_to(mul(g, 0.0), sb)))
        return out
    if rounding_mode is not None:
        raise ValueError(f"div: rounding_mode must be None, 'trunc' or 'floor', got {rounding_mode!r}")
    dt = _float_dtype("div", input, other)
    out = binary("div", C.DIV, input, other, compute_dtype=dt)
    if needs_grad(input, other):
        sa, sb = _shape(input), _shape(other)
        ga, gb = _wants(input), _wants(other)

        saved, restore = pack(other, out if gb else None)

        def backward(g, *s):
            b, o = restore(*s)
            gi = div(g, b)
            return (sum_to(gi, sa) if ga else None,
                    sum_to(-mul(gi, o), sb) if gb else None)
        record(out, "DivBackward0", (input, other), backward, saved)
    return out


true_divide = divide = div


def rdiv(input, other):
    """other / input (``2 / x``)."""
    if isinstance(other, Tensor):
        return div(other, input)
    out = binary("div", C.RDIV, input, other, compute_dtype=_float_dtype("div", input, other))
    if needs_grad(input):
        record(out, "DivBackward0", (input,), lambda g, x, o: (-div(mul(g, o), x),),
               saved=[input, out])
    return out


def _trunc_div(input, other):
    """input / other rounded toward zero, in the operands' dtype, recording nothing."""
    from .unary import trunc   # NOTE: unary.py imports this module (a cycle)
    dt = operand_dtype("div", input, other)
    if dt is D.bool_:
        raise TypeError("div: rounding_mode='trunc' is not supported for bool tensors")
    _check_int_divisor("div", dt, input, other)
    with no_grad():
        r = trunc(div(input, other))
    return r if dt.is_floating_point else r.to(dt)


def _floor_div(input, other):
    """Floor of input / other, recording nothing."""
    dt = operand_dtype("floor_divide", input, other)
    if dt is D.bool_:
        raise TypeError("floor_divide: not supported for bool tensors")
    _check_int_divisor("floor_divide", dt, input, other)
    return binary("floor_divide", C.FLOOR_DIVIDE, input, other)


def _check_int_divisor(op, dt, input, other):
    """Integer division by zero has no answer: raise, as PyTorch does (floats give inf / nan)."""
    if dt.is_floating_point or any(isinstance(x, Tensor) and x.numel() == 0 for x in (input, other)):
        return
    zero = (data(other, op) == 0).any() if isinstance(other, Tensor) else other == 0
    if zero:
        raise ZeroDivisionError(f"{op}: integer division by zero")


def _no_bool(op, input, other):
    if operand_dtype(op, input, other) is D.bool_:
        raise TypeError(f"{op}: not supported for bool tensors")


def _no_derivative(op):
    def backward(g):
        raise RuntimeError(f"{op}: the derivative of {op} is not implemented (nor is it in "
                           f"PyTorch); use div(..., rounding_mode='floor') for a zero gradient")
    return backward


def floor_divide(input, other):
    """Floor of input / other; like PyTorch, it has no derivative (backward through it raises)."""
    out = _floor_div(input, other)
    if needs_grad(input, other):
        record(out, "FloorDivideBackward0", (input, other), _no_derivative("floor_divide"))
    return out


def rfloordiv(input, other):
    return floor_divide(other, input)


def remainder(input, other):
    """Python-style modulus: the result has the sign of ``other``."""
    _no_bool("remainder", input, other)
    _check_int_divisor("remainder", operand_dtype("remainder", input, other), input, other)
    out = binary("remainder", C.REMAINDER, input, other)
    if needs_grad(other) and not isinstance(input, Tensor):
        # NOTE: PyTorch has no derivative for number % tensor (its backward raises); neither has newch
        record(out, "RemainderBackward1", (other,), _no_derivative("remainder"))
    elif needs_grad(input, other):
        sa, sb = _shape(input), _shape(other)
        saved, restore = pack(input, other)
        record(out, "RemainderBackward0", (input, other),
               lambda g, *s: (sum_to(g, sa), sum_to(-mul(g, _floor_div(*restore(*s))), sb)), saved)
    return out


def rmod(input, other):
    return remainder(other, input)


def fmod(input, other):
    """C-style modulus: the result has the sign of ``input``."""
    _no_bool("fmod", input, other)
    _check_int_divisor("fmod", operand_dtype("fmod", input, other), input, other)
    out = binary("fmod", C.FMOD, input, other)
    if needs_grad(input, other):
        sa, sb = _shape(input), _shape(other)
        saved, restore = pack(input, other)
        record(out, "FmodBackward0", (input, other),
               lambda g, *s: (sum_to(g, sa), sum_to(-mul(g, div(*restore(*s), rounding_mode="trunc")), sb)),
               saved)
    return out


def pow(input, exponent):
    """input ** exponent elementwise."""
    if operand_dtype("pow", input, exponent) is D.bool_:
        return _bool_pow(input, exponent)
    if not isinstance(input, Tensor) and isinstance(exponent, Tensor):
        return rpow(exponent, input)      # newch.pow(2.0, x): the scalar-base form and its grad
    if (isinstance(exponent, (int, np.integer)) and not isinstance(exponent, (bool, np.bool_))
            and exponent < 0 and isinstance(input, Tensor) and not input.dtype.is_floating_point):
        raise ValueError(f"pow: integers to negative integer powers are not allowed "
                         f"({input.dtype} tensor ** {exponent})")
    out = binary("pow", C.POW, input, exponent)
    if needs_grad(input, exponent):
        sa, sb = _shape(input), _shape(exponent)
        ga, gb = _wants(input), _wants(exponent)

        saved, restore = pack(input, exponent, out if gb else None)

        def backward(g, *s):
            from .unary import log   # NOTE: unary.py imports this module (a cycle)
            from .conditional import where   # NOTE: conditional.py imports this module (a cycle)
            input, exponent, out = restore(*s)
            da = db = None
            if ga:
                if isinstance(exponent, Tensor):
                    # NOTE: an exponent of 0 contributes 0 (not 0 * 0**-1 = nan), as in PyTorch
                    da = sum_to(where(eq(exponent, 0), 0.0,
                                      mul(mul(g, exponent), pow(input, sub(exponent, 1)))), sa)
                else:
                    da = mul(g, 0.0) if exponent == 0 else mul(mul(g, exponent), pow(input, exponent - 1))
            if gb:
                zero = logical_and(eq(input, 0), ge(exponent, 0))
                base = input if input.dtype is out.dtype else input.to(out.dtype)   # log in out's precision
                db = sum_to(mul(g, where(zero, 0.0, mul(out, log(base)))), sb)
            return da, db
        record(out, "PowBackward0", (input, exponent), backward, saved)
    return out


def rpow(input, other):
    """other ** input (``2 ** x``)."""
    if isinstance(other, Tensor) or operand_dtype("pow", input, other) is D.bool_:
        return pow(other, input)
    out = binary("pow", C.RPOW, input, other)
    if needs_grad(input):
        with np.errstate(divide="ignore", invalid="ignore"):
            log_base = float(np.log(np.float64(other)))
        def backward(g, out, *x):
            if other != 0:
                return (mul(mul(g, out), log_base),)
            from .conditional import where      # NOTE: 0 ** x: gradient 0 where x >= 0 (as PyTorch)
            return (where(ge(x[0], 0), 0.0, mul(mul(g, out), log_base)),)
        record(out, "PowBackward1", (input,), backward, saved=[out] + ([input] if other == 0 else []))
    return out


def _bool_pow(base, exp):
    """``bool tensor ** bool``: True unless base is False and exp True (no kernel needed).

    NOTE: like PyTorch, a bool tensor as the exponent is refused.
    """
    if isinstance(exp, Tensor):
        raise TypeError("pow: not supported with a bool tensor exponent; convert with .int() "
                        "or .float() first")
    return logical_or(base, not exp)


def _minmax(op, code, name, input, other):
    out = binary(op, code, input, other)
    if needs_grad(input, other):
        sa, sb = _shape(input), _shape(other)
        saved, restore = pack(input, other)

        def backward(g, *s):
            from .conditional import where   # NOTE: conditional.py imports this module (a cycle)
            input, other = restore(*s)
            half = where(eq(input, other), mul(g, 0.5), g)
            mine = gt(input, other) if code == C.MAXIMUM else lt(input, other)
            theirs = lt(input, other) if code == C.MAXIMUM else gt(input, other)
            return (sum_to(where(theirs, 0.0, half), sa), sum_to(where(mine, 0.0, half), sb))
        record(out, name, (input, other), backward, saved)
    return out


def maximum(input, other):
    """Elementwise maximum (NaN propagates); ties split the gradient in half."""
    return _minmax("maximum", C.MAXIMUM, "MaximumBackward0", input, other)


def minimum(input, other):
    """Elementwise minimum (NaN propagates); ties split the gradient in half."""
    return _minmax("minimum", C.MINIMUM, "MinimumBackward0", input, other)


def atan2(input, other):
    """Elementwise arctangent of input / other, using the signs of both for the quadrant."""
    dt = _float_dtype("atan2", input, other)
    out = binary("atan2", C.ATAN2, input, other, compute_dtype=dt)
    if needs_grad(input, other):
        sa, sb = _shape(input), _shape(other)
        saved, restore = pack(input, other)

        def backward(g, *s):
            from .conditional import where   # NOTE: conditional.py imports this module (a cycle)
            input, other = restore(*s)
            den = add(mul(input, input), mul(other, other))
            at0 = eq(den, 0)      # NOTE: at (0, 0) PyTorch gives both gradients 0, not 0/0
            return (sum_to(where(at0, 0.0, div(mul(g, other), den)), sa),
                    sum_to(where(at0, 0.0, div(mul(-g, input), den)), sb))
        record(out, "Atan2Backward0", (input, other), backward, saved)
    return out


def _compare(op, code):
    def compare(input, other):
        dt = operand_dtype(op, input, other)
        return binary(op, code, input, other, out_dtype=D.bool_, compute_dtype=dt)
    compare.__name__ = op
    compare.__doc__ = f"Elementwise ``{op}`` comparison; a bool tensor."
    return compare


eq, ne, lt, le, gt, ge = (_compare(n, c) for n, c in (
    ("eq", C.EQ), ("ne", C.NE), ("lt", C.LT), ("le", C.LE), ("gt", C.GT), ("ge", C.GE)))
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


def _logical(op, code):
    def logical(input, other):
        dt = operand_dtype(op, input, other)
        return binary(op, code, input, other, out_dtype=D.bool_, compute_dtype=dt)
    logical.__name__ = op
    logical.__doc__ = f"Elementwise ``{op}`` of the operands' truth values; a bool tensor."
    return logical


logical_and, logical_or, logical_xor = (_logical(n, c) for n, c in (
    ("logical_and", C.LOGICAL_AND), ("logical_or", C.LOGICAL_OR), ("logical_xor", C.LOGICAL_XOR)))


def _bitwise(op, code):
    def bitwise(input, other):
        dt = operand_dtype(op, input, other)
        if dt.is_floating_point:
            raise TypeError(f"{op}: expected integer or bool tensors, got {dt}")
        return binary(op, code, input, other)
    bitwise.__name__ = op
    bitwise.__doc__ = f"Elementwise ``{op}`` of integer or bool tensors."
    return bitwise


bitwise_and, bitwise_or, bitwise_xor = (_bitwise(n, c) for n, c in (
    ("bitwise_and", C.BITWISE_AND), ("bitwise_or", C.BITWISE_OR), ("bitwise_xor", C.BITWISE_XOR)))
