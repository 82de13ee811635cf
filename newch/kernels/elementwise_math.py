"""Scalar math the element functions of ``unary_ops`` and ``binary_ops`` share.

Everything here is a scalar function (``@helper``s, plus ``_exp``, an
``overload`` that picks a vectorizable float32 exp). Semantics follow PyTorch; where PyTorch raises (integer
division by zero, negative integer powers) a value is defined instead, see
each function. Constants are made with ``type(v)(...)`` so float32 inputs are
computed in float32 (a bare ``0.5`` would promote to float64).
"""

import numpy as np
from numba import types
from numba.extending import overload

from .jit import OVERLOAD_OPTS, helper

# ----------------------------------------------------------------- scalar math

# Flags of jit.helper, for the few functions picked by type with ``overload``.
_OPTS = OVERLOAD_OPTS          # NOTE: flags come from jit.py


def _exp_f32(v):
    """exp of a float32 from + - * only, so loops calling it vectorize (libm's expf does not).

    n = rint(v / ln2), r = v - n ln2 (ln2 split in two so n * hi is exact),
    exp(r) by its Taylor series to r^7 (truncation < 0.1 ulp on |r| <= ln2/2),
    times 2^n built from exponent bits as two factors so that results in the
    subnormal range round once. Measured within 1 ulp of the correctly
    rounded exp over 3M values, subnormal results, +-inf and NaN included
    (numpy's own float32 exp: within 2).
    """
    f = np.float32
    x = f(89.0) if v > f(89.0) else (f(-104.0) if v < f(-104.0) else v)    # NaN stays
    k = np.rint((x if x == x else f(0.0)) * f(1.4426950408889634))
    r = (x - k * f(0.693359375)) - k * f(-2.1219444005469057e-4)
    p = f(1.0 / 5040.0)
    p = p * r + f(1.0 / 720.0)
    p = p * r + f(1.0 / 120.0)
    p = p * r + f(1.0 / 24.0)
    p = p * r + f(1.0 / 6.0)
    p = p * r + f(0.5)
    p = p * r + f(1.0)
    p = p * r + f(1.0)
    n = np.int32(k)
    n1 = n >> 1
    s1 = np.int32((n1 + 127) << 23).view(np.float32)
    s2 = np.int32((n - n1 + 127) << 23).view(np.float32)
    return p * s1 * s2


def _exp(v):
    """exp(v): the vectorizable float32 version above, libm for float64."""
    raise NotImplementedError


@overload(_exp, jit_options=_OPTS)
def _exp_typed(v):
    if v == types.float32:
        return _exp_f32
    return lambda v: np.exp(v)


@helper
def _sigmoid(v, one):
    # exp of -|v| never overflows; pick 1/(1+e) or e/(1+e) by sign.
    e = _exp(-abs(v))
    d = one + e
    return one / d if v >= 0 else e / d


@helper
def _fmax(x, y):
    # NaN in either operand wins (torch.maximum / np.maximum).
    return x if (x >= y or x != x) else y


@helper
def _fmin(x, y):
    return x if (x <= y or x != x) else y


@helper
def _floordiv_f(a, b):
    """Floor of a/b computed from the exact fmod (Python float // semantics)."""
    if b == 0:
        return a / b
    m = np.fmod(a, b)
    d = (a - m) / b
    if m != 0 and ((b < 0) != (m < 0)):
        d -= type(d)(1)
    if d == 0:
        return np.copysign(d, a / b)
    f = np.floor(d)
    if d - f > type(d)(0.5):
        f += type(f)(1)
    return f


@helper
def _remainder_f(a, b):
    """a mod b with the sign of b (Python float % semantics); NaN when b == 0."""
    m = np.fmod(a, b)
    if b == 0:
        return m
    if m != 0:
        if (b < 0) != (m < 0):
            m += b
        return m
    return np.copysign(m, b)


@helper
def _floordiv_i(a, b):
    # a, b: int64. x // 0 is defined as 0 (torch raises, numpy warns and
    # gives 0). MIN // -1 overflows (a trap in hardware): negate instead,
    # which wraps to MIN like numpy.
    if b == 0:
        return a - a
    if b == -1:
        return -a
    return a // b


@helper
def _remainder_i(a, b):
    # Sign of the divisor; x % 0 is defined as 0; x % -1 is 0 (avoids MIN % -1).
    if b == 0 or b == -1:
        return a - a
    return a % b


@helper
def _fmod_i(a, b):
    # C remainder (sign of the dividend), from the floored one.
    r = _remainder_i(a, b)
    if r != 0 and ((r < 0) != (a < 0)):
        r -= b
    return r


@helper
def _pow_i(base, e):
    """Integer power by squaring, wrapping like the dtype.

    Negative exponents (torch raises) give the truncated real result:
    1 for base 1, +-1 for base -1, else 0.
    """
    # All in int64: wrapping there keeps the low bits right for every dtype,
    # and numba would turn uint64-times-int64 arithmetic into float64.
    b = np.int64(base)
    k = np.int64(e)
    if k < 0:
        if b == 1:
            return b
        if b == -1:
            return b if k % 2 != 0 else -b
        return b - b
    r = np.int64(1)
    while k > 0:
        if k & 1:
            r = r * b
        b = b * b
        k = k >> 1
    return r
