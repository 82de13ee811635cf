"""Unary math ops (exp, log, sin, tanh, sigmoid, abs, floor, ...), each with its derivative beside it."""
import math

from .. import dtypes as D
from ..kernels import codes as C
from .alloc import data, empty
from .arith import add, div, mul, sub
from .launch import cast, launch_unary
from .record import needs_grad, record

__all__ = [
    "abs", "absolute", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfinv", "exp",
    "exp2", "expm1", "fix", "floor", "log", "log1p", "log2", "logical_not", "neg", "negative",
    "reciprocal", "round", "rsqrt", "sigmoid", "sign", "sin", "sinh", "sqrt", "square", "tan",
    "tanh", "trunc"
]
# also bound as Tensor methods (ops/methods.py):
TENSOR_METHODS = [
    "abs", "absolute", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfinv", "exp",
    "exp2", "expm1", "fix", "floor", "log", "log1p", "log2", "logical_not", "neg", "negative",
    "reciprocal", "round", "rsqrt", "sigmoid", "sign", "sin", "sinh", "sqrt", "square", "tan",
    "tanh", "trunc"
]

_INT_OK = {C.NEG, C.ABS, C.SIGN, C.SQUARE, C.RELU}
_IDENTITY_ON_INT = {C.FLOOR, C.CEIL, C.ROUND, C.TRUNC}
# NOTE: as in PyTorch: these refuse bool tensors, and silu / gelu refuse every non-float dtype
_NO_BOOL = {C.NEG, C.ABS, C.RELU, C.FLOOR, C.CEIL, C.ROUND, C.TRUNC}
_FLOAT_ONLY = {C.SILU, C.GELU_ERF}


def unary(op, code, x, name=None, grad=None, saves="x"):
    """out = code(x); ``grad(g, x, out)`` gives the input gradient; ints become float where needed."""
    a = data(x, op)
    dt = x.dtype
    if not dt.is_floating_point:
        if code in _FLOAT_ONLY or (dt is D.bool_ and code in _NO_BOOL):
            raise TypeError(f"{op}: not supported for {dt} tensors")
        if code in _IDENTITY_ON_INT or (dt is D.bool_ and code == C.SIGN):
            return x.clone()
        if dt is D.bool_ and code == C.SQUARE:
            x = cast(x, D.int64, op)      # NOTE: PyTorch squares bools as int64
            a, dt = x._a, x.dtype
        elif code not in _INT_OK:
            x = cast(x, D.get_default_dtype(), op)
            a, dt = x._a, x.dtype
    out = empty(a.shape, dt)
    launch_unary(code, a, out._a)
    if grad is not None and needs_grad(x):
        _record_unary(out, name, x, grad, saves)
    return out


def _record_unary(out, name, x, grad, saves):
    """Record ``grad(g, x, out)``, saving only the tensor(s) it reads (``saves``)."""
    if saves == "x":
        record(out, name, (x,), lambda g, xs: (grad(g, xs, None),), saved=[x])
    elif saves == "out":
        record(out, name, (x,), lambda g, o: (grad(g, None, o),), saved=[out])
    elif saves == "both":
        record(out, name, (x,), lambda g, xs, o: (grad(g, xs, o),), saved=[x, out])
    else:
        record(out, name, (x,), lambda g: (grad(g, None, None),))


def _op(op, code, name, grad, saves="x", doc=""):
    def f(input):
        return unary(op, code, input, name, grad, saves)
    f.__name__ = op
    f.__doc__ = doc or f"Elementwise ``{op}`` of ``input``."
    f.grad_spec = (name, grad, saves)      # NOTE: what the in-place form records (ops/inplace_grad.py)
    return f


def _zero_grad(g, x, out):
    return mul(g, 0.0)


neg = _op("neg", C.NEG, "NegBackward0", lambda g, x, o: neg(g), None)
negative = neg
abs = _op("abs", C.ABS, "AbsBackward0", lambda g, x, o: mul(g, sign(x)))
absolute = abs
exp = _op("exp", C.EXP, "ExpBackward0", lambda g, x, o: mul(g, o), "out")
expm1 = _op("expm1", C.EXPM1, "Expm1Backward0", lambda g, x, o: mul(g, add(o, 1.0)), "out")
exp2 = _op("exp2", C.EXP2, "Exp2Backward0", lambda g, x, o: mul(g, mul(o, math.log(2.0))), "out")
log = _op("log", C.LOG, "LogBackward0", lambda g, x, o: div(g, x))
log1p = _op("log1p", C.LOG1P, "Log1PBackward0", lambda g, x, o: div(g, add(x, 1.0)))
log2 = _op("log2", C.LOG2, "Log2Backward0", lambda g, x, o: div(g, mul(x, math.log(2.0))))
sqrt = _op("sqrt", C.SQRT, "SqrtBackward0", lambda g, x, o: div(g, mul(o, 2.0)), "out")
rsqrt = _op("rsqrt", C.RSQRT, "RsqrtBackward0",
            lambda g, x, o: mul(g, mul(mul(o, mul(o, o)), -0.5)), "out")
sin = _op("sin", C.SIN, "SinBackward0", lambda g, x, o: mul(g, cos(x)))
cos = _op("cos", C.COS, "CosBackward0", lambda g, x, o: mul(g, neg(sin(x))))
tan = _op("tan", C.TAN, "TanBackward0", lambda g, x, o: mul(g, add(mul(o, o), 1.0)), "out")
tanh = _op("tanh", C.TANH, "TanhBackward0", lambda g, x, o: mul(g, sub(1.0, mul(o, o))), "out")
sigmoid = _op("sigmoid", C.SIGMOID, "SigmoidBackward0",
              lambda g, x, o: mul(g, mul(o, sub(1.0, o))), "out")
square = _op("square", C.SQUARE, "PowBackward0", lambda g, x, o: mul(g, mul(x, 2.0)))
reciprocal = _op("reciprocal", C.RECIPROCAL, "ReciprocalBackward0",
                 lambda g, x, o: mul(g, neg(mul(o, o))), "out")
asin = _op("asin", C.ASIN, "AsinBackward0", lambda g, x, o: div(g, sqrt(sub(1.0, mul(x, x)))))
acos = _op("acos", C.ACOS, "AcosBackward0", lambda g, x, o: div(neg(g), sqrt(sub(1.0, mul(x, x)))))
atan = _op("atan", C.ATAN, "AtanBackward0", lambda g, x, o: div(g, add(mul(x, x), 1.0)))
sinh = _op("sinh", C.SINH, "SinhBackward0", lambda g, x, o: mul(g, cosh(x)))
cosh = _op("cosh", C.COSH, "CoshBackward0", lambda g, x, o: mul(g, sinh(x)))
erf = _op("erf", C.ERF, "ErfBackward0",
          lambda g, x, o: mul(g, mul(exp(neg(mul(x, x))), 2.0 / math.sqrt(math.pi))))
erfinv = _op("erfinv", C.ERFINV, "ErfinvBackward0",
             lambda g, x, o: mul(g, mul(exp(mul(o, o)), math.sqrt(math.pi) / 2.0)), "out",
             "Inverse error function: ``erf(erfinv(y)) == y`` for y in (-1, 1); +-inf at +-1.")
sign = _op("sign", C.SIGN, "SignBackward0", _zero_grad, None)
floor = _op("floor", C.FLOOR, "FloorBackward0", _zero_grad, None)
ceil = _op("ceil", C.CEIL, "CeilBackward0", _zero_grad, None)
trunc = _op("trunc", C.TRUNC, "TruncBackward0", _zero_grad, None)
fix = trunc


def round(input, *, decimals=None):
    """Round half to even; ``decimals`` (float tensors only, as in PyTorch) rounds to that many places."""
    if decimals is not None and not input.dtype.is_floating_point:
        raise TypeError(f"round: decimals={decimals} needs a floating point tensor, got {input.dtype}")
    if decimals:
        scale = 10.0 ** decimals
        return div(round(mul(input, scale)), scale)
    return unary("round", C.ROUND, input, "RoundBackward0", _zero_grad, None)


def logical_not(input):
    """Elementwise ``not`` of the truth values; a bool tensor."""
    a = data(input, "logical_not")
    out = empty(a.shape, D.bool_)
    launch_unary(C.LOGICAL_NOT, a, out._a)
    return out
