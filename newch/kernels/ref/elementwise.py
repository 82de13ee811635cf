"""Numpy twins of the elementwise kernels: the test oracle and the fallback backend.

Same names, signatures and semantics as ``newch.kernels.elementwise``, written
the plain way: every operation is a whole-array numpy expression computed in
the array's dtype (float32 stays float32). Integer division by zero gives 0,
integer POW with a negative exponent gives 1 (base 1), +-1 (base -1) or 0,
SIGN(NaN) is 0 (torch), float -> uint8 conversion goes through int64.
"""
import math

import numpy as np

from .. import codes as C

__all__ = ["unary", "unary_nd", "binary", "binary_scalar", "binary_nd", "where_nd",
           "copy_nd", "fill_nd", "axpby", "serial_loop"]


# ------------------------------------------------------------------ helpers

def _erf(x):
    """erf in x's float dtype (numpy has none: math.erf in float64, then rounded)."""
    f = np.vectorize(math.erf, otypes=[np.float64])
    return f(x.astype(np.float64)).astype(x.dtype)


def erfinv_scalar(y):
    """erfinv of a Python float: M. Giles' single-precision approximation, then two Newton
    steps on erf in float64 (the JIT kernel compiles this same function)."""
    if y != y or y < -1.0 or y > 1.0:
        return math.nan
    if y == 1.0 or y == -1.0:
        return math.copysign(math.inf, y)
    w = -math.log((1.0 - y) * (1.0 + y))
    if w < 5.0:
        w = w - 2.5
        p = 2.81022636e-08
        for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                  -0.00125372503, -0.00417768164, 0.246640727, 1.50140941):
            p = c + p * w
    else:
        w = math.sqrt(w) - 3.0
        p = -0.000200214257
        for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
                  -0.0076224613, 0.00943887047, 1.00167406, 2.83297682):
            p = c + p * w
    x = p * y
    for _ in range(2):      # d erf/dx = 2/sqrt(pi) exp(-x^2)
        x = x - (math.erf(x) - y) / (1.1283791670955126 * math.exp(-x * x))
    return x


def _erfinv(x):
    f = np.vectorize(erfinv_scalar, otypes=[np.float64])
    return f(x.astype(np.float64)).astype(x.dtype)


def _sigmoid(x):
    one = x.dtype.type(1)
    e = np.exp(-np.abs(x))
    d = one + e
    return np.where(x >= 0, one / d, e / d).astype(x.dtype)


def _sign(x):
    one, zero = x.dtype.type(1), x.dtype.type(0)
    return np.where(x > zero, one, np.where(x < zero, -one, zero)).astype(x.dtype)


def _relu(x):
    zero = x.dtype.type(0)
    return np.where(x < zero, zero, x).astype(x.dtype)


def _gelu(x):
    one, half = x.dtype.type(1), x.dtype.type(0.5)
    return x * half * (one + _erf(x / x.dtype.type(math.sqrt(2.0))))


_UNARY_FLOAT = {
    C.NEG: np.negative, C.ABS: np.abs, C.EXP: np.exp, C.LOG: np.log, C.LOG1P: np.log1p,
    C.SQRT: np.sqrt, C.RSQRT: lambda x: x.dtype.type(1) / np.sqrt(x), C.SIN: np.sin,
    C.COS: np.cos, C.TANH: np.tanh, C.SIGMOID: _sigmoid, C.RELU: _relu, C.SIGN: _sign,
    C.SQUARE: lambda x: x * x, C.RECIPROCAL: lambda x: x.dtype.type(1) / x,
    C.EXPM1: np.expm1, C.FLOOR: np.floor, C.CEIL: np.ceil, C.ROUND: np.rint,
    C.TRUNC: np.trunc, C.GELU_ERF: _gelu, C.SILU: lambda x: x * _sigmoid(x), C.ERF: _erf, C.ERFINV: _erfinv,
    C.LOG2: np.log2, C.EXP2: np.exp2, C.TAN: np.tan, C.ASIN: np.arcsin, C.ACOS: np.arccos,
    C.ATAN: np.arctan, C.SINH: np.sinh, C.COSH: np.cosh,
}

_UNARY_INT = {C.NEG: np.negative, C.ABS: np.abs, C.SIGN: _sign, C.SQUARE: lambda x: x * x,
              C.RELU: _relu}


def _int_pow(a, e):
    """a ** e wrapping in a's dtype; negative exponents as documented in the module."""
    r = np.power(a, np.where(e < 0, 0, e).astype(a.dtype))
    if a.dtype.kind != "i":
        return r
    neg = np.where(a == 1, 1, np.where(a == -1, np.where(e % 2 == 0, 1, -1), 0))
    return np.where(e < 0, neg, r).astype(a.dtype)


def _int_div(f):
    """Integer floor_divide/remainder/fmod with x op 0 defined as 0."""
    def op(a, b):
        b = np.asarray(b)
        zero = b == 0
        r = f(a, np.where(zero, 1, b).astype(b.dtype))
        return np.where(zero, 0, r).astype(r.dtype)
    return op


_ARITH_COMMON = {
    C.ADD: np.add, C.SUB: np.subtract, C.MUL: np.multiply, C.MAXIMUM: np.maximum,
    C.MINIMUM: np.minimum, C.RSUB: lambda a, b: np.subtract(b, a),
}
_BINARY_FLOAT = {**_ARITH_COMMON, **{
    C.DIV: np.divide, C.POW: np.power, C.FLOOR_DIVIDE: np.floor_divide,
    C.REMAINDER: np.remainder, C.ATAN2: np.arctan2, C.FMOD: np.fmod,
    C.RDIV: lambda a, b: np.divide(b, a), C.RPOW: lambda a, b: np.power(b, a),
}}
_BINARY_INT = {**_ARITH_COMMON, **{
    C.POW: lambda a, b: _int_pow(a, np.broadcast_to(b, np.shape(a))),
    C.RPOW: lambda a, b: _int_pow(np.broadcast_to(b, np.shape(a)).astype(a.dtype), a),
    C.FLOOR_DIVIDE: _int_div(np.floor_divide), C.REMAINDER: _int_div(np.remainder),
    C.FMOD: _int_div(np.fmod), C.BITWISE_AND: np.bitwise_and, C.BITWISE_OR: np.bitwise_or,
    C.BITWISE_XOR: np.bitwise_xor,
}}
_COMPARE = {
    C.EQ: np.equal, C.NE: np.not_equal, C.LT: np.less, C.LE: np.less_equal,
    C.GT: np.greater, C.GE: np.greater_equal, C.LOGICAL_AND: np.logical_and,
    C.LOGICAL_OR: np.logical_or, C.LOGICAL_XOR: np.logical_xor,
}
_BINARY_BOOL = {**_COMPARE, **{
    C.ADD: np.logical_or, C.MAXIMUM: np.logical_or, C.BITWISE_OR: np.logical_or,
    C.MUL: np.logical_and, C.MINIMUM: np.logical_and, C.BITWISE_AND: np.logical_and,
    C.BITWISE_XOR: np.logical_xor,
}}


def _unary_fn(code, x, out):
    if out.dtype == np.bool_:
        table = {C.LOGICAL_NOT: np.logical_not}
    elif x.dtype.kind == "f":
        table = _UNARY_FLOAT
    else:
        table = _UNARY_INT
    if code not in table:
        raise ValueError("unary: code not supported for this dtype")
    return table[code]


def _binary_fn(code, a, out):
    if out.dtype == np.bool_:
        table = _BINARY_BOOL if a.dtype == np.bool_ else _COMPARE
    elif a.dtype.kind == "f":
        table = _BINARY_FLOAT
    else:
        table = _BINARY_INT
    if code not in table:
        raise ValueError("binary: code not supported for this dtype")
    return table[code]


def _store(out, value):
    # The kernels store through a cast, so integer results wrap to out's dtype.
    out[...] = np.asarray(value).astype(out.dtype, copy=False)


# ------------------------------------------------------------------ kernels

def unary(code, x, out):
    """out = f(x) for a unary ``code``; x, out: 1-D C-contiguous, same length."""
    f = _unary_fn(code, x, out)
    with np.errstate(all="ignore"):
        _store(out, f(x))


def unary_nd(code, x, out):
    """out = f(x) for a unary ``code``; x: 4-D, any strides; out: 4-D C-contiguous, same shape."""
    unary(code, x, out)


def binary(code, a, b, out):
    """out = f(a, b) for a binary ``code``; a, b, out: 1-D, same length (out bool for comparisons)."""
    f = _binary_fn(code, a, out)
    with np.errstate(all="ignore"):
        _store(out, f(a, b))


def binary_scalar(code, a, s, out):
    """out = f(a, s) for a binary ``code``; a, out: 1-D C-contiguous; s: numpy scalar of a's dtype."""
    # A full array, not the scalar: numpy's scalar-exponent shortcut computes
    # x ** 0.5 as sqrt(x), which differs from pow at -inf and -0.0.
    binary(code, a, np.full(a.shape, s, a.dtype), out)


def binary_nd(code, a, b, out):
    """out = f(a, b) for a binary ``code``; a, b: 4-D, any strides (0 broadcasts); out: 4-D C-contiguous."""
    binary(code, a, b, out)


def where_nd(cond, a, b, out):
    """out = a where cond else b; all 4-D of out's shape, any strides; out C-contiguous."""
    out[...] = np.where(cond, a, b)


def copy_nd(src, dst):
    """dst[...] = src converted to dst's dtype; src, dst: 4-D, same shape, any strides."""
    with np.errstate(all="ignore"):
        if dst.dtype == np.bool_:
            dst[...] = src != 0
        elif src.dtype.kind == "f" and dst.dtype.kind == "u":
            dst[...] = src.astype(np.int64).astype(dst.dtype)
        else:
            dst[...] = src.astype(dst.dtype)


def fill_nd(dst, value):
    """dst[...] = value; dst: 4-D, any strides; value: numpy scalar of dst's dtype."""
    dst[...] = value


def axpby(a, x, b, y, out):
    """out = a*x + b*y; x, y, out: 1-D float, same length; a, b: numpy scalars of that dtype."""
    if x.shape[0] != out.shape[0] or y.shape[0] != out.shape[0]:
        raise ValueError("axpby: lengths differ")
    with np.errstate(all="ignore"):
        out[...] = a * x + b * y


def serial_loop(what, code, a, out):
    """Twin of the JIT's ``serial_loop``: ``binary`` / ``binary_scalar`` / ``unary`` on the span
    ``[lo, hi)``, called as ``f(a, b, out, lo, hi)`` / ``f(a, s, out, lo, hi)`` / ``f(a, out, lo, hi)``."""
    if a.ndim != 1 or out.ndim != 1 or a.shape != out.shape:
        raise ValueError(f"{what}: expected 1-D arrays of one length, got shapes {a.shape} and "
                         f"{out.shape}")
    if what == "binary":
        return lambda a, b, out, lo, hi: binary(code, a[lo:hi], b[lo:hi], out[lo:hi])
    if what == "binary_scalar":
        return lambda a, s, out, lo, hi: binary_scalar(code, a[lo:hi], s, out[lo:hi])
    if what == "unary":
        return lambda a, out, lo, hi: unary(code, a[lo:hi], out[lo:hi])
    raise ValueError(f"serial_loop: unknown entry point {what!r}")
