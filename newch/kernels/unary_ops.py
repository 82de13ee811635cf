"""Element functions of the unary ops: one value in, one value out, registered by op name.

``@unary_op(name, kinds)`` registers a function for the dtype kinds it serves
("f" float32/float64, "i" every integer dtype, "b" bool); the elementwise
kernels build a loop around it when the op first runs on such a dtype. Adding
a unary op is one function here plus its numpy twin in ``ref/elementwise.py``.

Float functions compute in the input's dtype (constants as ``type(v)(...)``:
a bare ``0.5`` would promote float32 to float64). Integer functions compute
in int64 and the store into ``out`` truncates, which is the dtype's wrapping
(numba would otherwise widen uint64 and int64 results to float64).
"""
import math

import numpy as np

from .elementwise_math import _exp, _sigmoid
from .jit import helper
from .ref.elementwise import erfinv_scalar
from .specialize import UNARY, elementwise_op

__all__ = []


def unary_op(name, kinds, predicate=False):
    """Compile ``fn`` as a helper and register it as unary op ``name`` for ``kinds``."""
    def wrap(fn):
        # NOTE: stacked decorators register one helper under several names.
        fn = fn if hasattr(fn, "py_func") else helper(fn)
        return elementwise_op(UNARY, name, kinds, predicate)(fn)
    return wrap


# ----------------------------------------------------- float and integer

@unary_op("neg", "f")
def _neg_f(v):
    return -v


@unary_op("abs", "f")
def _abs_f(v):
    return abs(v)


@unary_op("relu", "f")
def _relu_f(v):
    return type(v)(0) if v < type(v)(0) else v        # NaN and -0.0 pass through


@unary_op("sign", "f")
def _sign_f(v):
    one, zero = type(v)(1), type(v)(0)
    return one if v > zero else (-one if v < zero else zero)   # NaN -> 0 (torch)


@unary_op("square", "f")
def _square_f(v):
    return v * v


@unary_op("neg", "i")
def _neg_i(v):
    return -np.int64(v)


@unary_op("abs", "i")
def _abs_i(v):
    return abs(np.int64(v))                           # abs(MIN) wraps to MIN


@unary_op("relu", "i")
def _relu_i(v):
    x = np.int64(v)
    return x if x > 0 else x - x


@unary_op("sign", "i")
def _sign_i(v):
    x = np.int64(v)
    return (x > 0) - (x < 0)


@unary_op("square", "i")
def _square_i(v):
    x = np.int64(v)
    return x * x


@unary_op("logical_not", "fib", predicate=True)
def _logical_not(v):
    return v == type(v)(0)                            # NaN is truthy: not(NaN) is False


# ------------------------------------------------------------ float only

@unary_op("sqrt", "f")
def _sqrt(v):
    return np.sqrt(v)


@unary_op("rsqrt", "f")
def _rsqrt(v):
    return type(v)(1) / np.sqrt(v)


@unary_op("reciprocal", "f")
def _reciprocal(v):
    return type(v)(1) / v


@unary_op("floor", "f")
def _floor(v):
    return np.floor(v)


@unary_op("ceil", "f")
def _ceil(v):
    return np.ceil(v)


@unary_op("round", "f")
def _round(v):
    return np.rint(v)                                 # half to even


@unary_op("trunc", "f")
def _trunc(v):
    return np.trunc(v)


@unary_op("exp", "f")
def _exp_op(v):
    return _exp(v)


@unary_op("log", "f")
def _log(v):
    return np.log(v)


@unary_op("log1p", "f")
def _log1p(v):
    return np.log1p(v)


@unary_op("expm1", "f")
def _expm1(v):
    return np.expm1(v)


@unary_op("log2", "f")
def _log2(v):
    return np.log2(v)


@unary_op("exp2", "f")
def _exp2(v):
    return np.exp2(v)


@unary_op("sigmoid", "f")
def _sigmoid_op(v):
    return _sigmoid(v, type(v)(1))


@unary_op("silu", "f")
def _silu(v):
    return v * _sigmoid(v, type(v)(1))


@unary_op("gelu_erf", "f")
def _gelu_erf(v):
    return v * type(v)(0.5) * (type(v)(1) + math.erf(v / type(v)(math.sqrt(2.0))))


@unary_op("erf", "f")
def _erf(v):
    return math.erf(v)


_erfinv64 = helper(erfinv_scalar)


@unary_op("erfinv", "f")
def _erfinv(v):
    return type(v)(_erfinv64(np.float64(v)))


@unary_op("tanh", "f")
def _tanh(v):
    return np.tanh(v)


@unary_op("sin", "f")
def _sin(v):
    return np.sin(v)


@unary_op("cos", "f")
def _cos(v):
    return np.cos(v)


@unary_op("tan", "f")
def _tan(v):
    return np.tan(v)


@unary_op("asin", "f")
def _asin(v):
    return np.arcsin(v)


@unary_op("acos", "f")
def _acos(v):
    return np.arccos(v)


@unary_op("atan", "f")
def _atan(v):
    return np.arctan(v)


@unary_op("sinh", "f")
def _sinh(v):
    return np.sinh(v)


@unary_op("cosh", "f")
def _cosh(v):
    return np.cosh(v)
