"""Element functions of the binary ops: two values in, one out, registered by op name.

As in ``unary_ops``: ``@binary_op(name, kinds)`` registers a function for the
dtype kinds of the operands ("f", "i", "b"). Comparisons and logical ops
return a bool (their kernels write a bool ``out``). Integer functions compute
in int64; the store truncates (the dtype's wrapping). Where PyTorch raises
(integer division by zero, negative integer powers) a value is defined
instead: x // 0, x % 0 and fmod(x, 0) are 0; a negative exponent gives 1 for
base 1, +-1 for base -1, else 0. ``r*`` ops take their operands swapped
(``rsub(x, y) = y - x``), for a scalar on the left.
"""
import numpy as np

from .elementwise_math import (_fmax, _fmin, _floordiv_f, _remainder_f, _floordiv_i,
                               _remainder_i, _fmod_i, _pow_i)
from .jit import helper
from .specialize import BINARY, elementwise_op

__all__ = []


def binary_op(name, kinds, predicate=False):
    """Compile ``fn`` as a helper and register it as binary op ``name`` for ``kinds``."""
    def wrap(fn):
        # NOTE: stacked decorators register one helper under several names.
        fn = fn if hasattr(fn, "py_func") else helper(fn)
        return elementwise_op(BINARY, name, kinds, predicate)(fn)
    return wrap


# -------------------------------------------------------------- float

@binary_op("add", "f")
def _add_f(x, y):
    return x + y


@binary_op("sub", "f")
def _sub_f(x, y):
    return x - y


@binary_op("rsub", "f")
def _rsub_f(x, y):
    return y - x


@binary_op("mul", "f")
def _mul_f(x, y):
    return x * y


@binary_op("div", "f")
def _div_f(x, y):
    return x / y


@binary_op("rdiv", "f")
def _rdiv_f(x, y):
    return y / x


@binary_op("pow", "f")
def _pow_f(x, y):
    return x ** y


@binary_op("rpow", "f")
def _rpow_f(x, y):
    return y ** x


@binary_op("maximum", "f")
def _maximum_f(x, y):
    return _fmax(x, y)                        # NaN in either operand wins


@binary_op("minimum", "f")
def _minimum_f(x, y):
    return _fmin(x, y)


@binary_op("atan2", "f")
def _atan2_f(x, y):
    return np.arctan2(x, y)


@binary_op("fmod", "f")
def _fmod_f(x, y):
    return np.fmod(x, y)


@binary_op("floor_divide", "f")
def _floor_divide_f(x, y):
    return _floordiv_f(x, y)


@binary_op("remainder", "f")
def _remainder_f_op(x, y):
    return _remainder_f(x, y)


# ------------------------------------------------------------ integer

@binary_op("add", "i")
def _add_i(x, y):
    return np.int64(x) + np.int64(y)


@binary_op("sub", "i")
def _sub_i(x, y):
    return np.int64(x) - np.int64(y)


@binary_op("rsub", "i")
def _rsub_i(x, y):
    return np.int64(y) - np.int64(x)


@binary_op("mul", "i")
def _mul_i(x, y):
    return np.int64(x) * np.int64(y)


@binary_op("maximum", "i")
def _maximum_i(x, y):
    return max(np.int64(x), np.int64(y))


@binary_op("minimum", "i")
def _minimum_i(x, y):
    return min(np.int64(x), np.int64(y))


@binary_op("bitwise_and", "i")
def _bitwise_and_i(x, y):
    return np.int64(x) & np.int64(y)


@binary_op("bitwise_or", "i")
def _bitwise_or_i(x, y):
    return np.int64(x) | np.int64(y)


@binary_op("bitwise_xor", "i")
def _bitwise_xor_i(x, y):
    return np.int64(x) ^ np.int64(y)


@binary_op("floor_divide", "i")
def _floor_divide_i(x, y):
    return _floordiv_i(np.int64(x), np.int64(y))


@binary_op("remainder", "i")
def _remainder_i_op(x, y):
    return _remainder_i(np.int64(x), np.int64(y))


@binary_op("fmod", "i")
def _fmod_i_op(x, y):
    return _fmod_i(np.int64(x), np.int64(y))


@binary_op("pow", "i")
def _pow_i_op(x, y):
    return _pow_i(np.int64(x), np.int64(y))


@binary_op("rpow", "i")
def _rpow_i(x, y):
    return _pow_i(np.int64(y), np.int64(x))


# ------------------------------------------------ comparisons (bool out)

@binary_op("eq", "fib", predicate=True)
def _eq(x, y):
    return x == y


@binary_op("ne", "fib", predicate=True)
def _ne(x, y):
    return x != y


@binary_op("lt", "fib", predicate=True)
def _lt(x, y):
    return x < y


@binary_op("le", "fib", predicate=True)
def _le(x, y):
    return x <= y


@binary_op("gt", "fib", predicate=True)
def _gt(x, y):
    return x > y


@binary_op("ge", "fib", predicate=True)
def _ge(x, y):
    return x >= y


# Logical ops test != 0, so NaN counts as true (torch).
@binary_op("logical_and", "fib", predicate=True)
def _logical_and(x, y):
    return (x != type(x)(0)) & (y != type(y)(0))


@binary_op("logical_or", "fib", predicate=True)
def _logical_or(x, y):
    return (x != type(x)(0)) | (y != type(y)(0))


@binary_op("logical_xor", "fib", predicate=True)
def _logical_xor(x, y):
    return (x != type(x)(0)) ^ (y != type(y)(0))


# ---------------------------------------------------- bool op bool -> bool
# + and max are "or", * and min are "and" (torch).

@binary_op("add", "b")
@binary_op("maximum", "b")
@binary_op("bitwise_or", "b")
def _or_b(x, y):
    return x | y


@binary_op("mul", "b")
@binary_op("minimum", "b")
@binary_op("bitwise_and", "b")
def _and_b(x, y):
    return x & y


@binary_op("bitwise_xor", "b")
def _xor_b(x, y):
    return x ^ y
