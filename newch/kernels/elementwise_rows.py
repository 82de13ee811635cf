"""Row loops of the elementwise kernels, picked by dtype at compile time.

A *row* is a 1-D array of at most one chunk. ``_unary_rows(code, x, out)`` and
``_binary_rows(code, a, b, out)`` switch on ``code`` once, then run one tight
loop. Contiguous rows get a dedicated loop for each common cheap code (LLVM
vectorizes those; ``EXP``/``SIGMOID`` too in float32, see ``_exp_f32``), and
one per-element switch loop (``elementwise_math``) for every other code.
Strided rows get the per-element loop only. ``out`` is always a contiguous
row. The set of dedicated loops is kept small on purpose: each one costs
compile time in every kernel that links it.

The switches are typed with ``numba.extending.overload``: the overload looks
at the dtypes and layouts and returns the loops of one family (float,
integer, comparison, bool), so a float32 kernel never compiles integer
division or bitwise loops (numba has no other way to pick code by type
since ``generated_jit`` was removed). The overloads are compiled once per
signature and shared by every kernel; ``_OPTS`` gives them the flags of
``jit.helper`` (fastmath off, numpy error model).
"""
import numpy as np
from numba import types
from numba.extending import overload

from .jit import helper
from .codes import ADD, SUB, MUL, DIV, EQ, NE, LT, LE, GT, GE, NEG, SQRT, RSQRT, RELU, EXP, \
    SIGMOID
from .elementwise_math import (_OPTS, _exp, _sigmoid, _unary_float_elem, _unary_int_elem,
                               _not_elem, _binary_float_elem, _binary_int_elem, _compare_elem,
                               _binary_bool_elem, _unary_float_ok, _unary_int_ok, _not_ok,
                               _binary_float_ok, _binary_int_ok, _compare_ok, _binary_bool_ok)


# ------------------------------------------------------ row-or-scalar read

def _at(b, i):
    """``b[i]`` for a row, ``b`` for a scalar."""
    raise NotImplementedError


@overload(_at, jit_options=_OPTS)
def _at_typed(b, i):
    if isinstance(b, types.Array):
        return lambda b, i: b[i]
    return lambda b, i: b


# ------------------------------------------------------------ unary loops

def _unary_float_rows(code, x, out):
    n = out.shape[0]
    one = x.dtype.type(1)
    zero = x.dtype.type(0)
    if code == NEG:
        for i in range(n):
            out[i] = -x[i]
    elif code == SQRT:
        for i in range(n):
            out[i] = np.sqrt(x[i])
    elif code == RSQRT:
        for i in range(n):
            out[i] = one / np.sqrt(x[i])
    elif code == RELU:
        for i in range(n):
            v = x[i]
            out[i] = zero if v < zero else v
    elif code == EXP:
        for i in range(n):
            out[i] = _exp(x[i])
    elif code == SIGMOID:
        for i in range(n):
            out[i] = _sigmoid(x[i], one)
    else:
        for i in range(n):
            out[i] = _unary_float_elem(code, x[i])


def _unary_float_strided(code, x, out):
    for i in range(out.shape[0]):
        out[i] = _unary_float_elem(code, x[i])


def _unary_int_rows(code, x, out):
    for i in range(out.shape[0]):
        out[i] = _unary_int_elem(code, x[i])


def _not_rows(code, x, out):
    for i in range(out.shape[0]):
        out[i] = _not_elem(code, x[i])


# ----------------------------------------------------------- binary loops

def _binary_float_rows(code, a, b, out):
    n = out.shape[0]
    if code == ADD:
        for i in range(n):
            out[i] = a[i] + _at(b, i)
    elif code == SUB:
        for i in range(n):
            out[i] = a[i] - _at(b, i)
    elif code == MUL:
        for i in range(n):
            out[i] = a[i] * _at(b, i)
    elif code == DIV:
        for i in range(n):
            out[i] = a[i] / _at(b, i)
    else:
        for i in range(n):
            out[i] = _binary_float_elem(code, a[i], _at(b, i))


def _binary_float_strided(code, a, b, out):
    for i in range(out.shape[0]):
        out[i] = _binary_float_elem(code, a[i], _at(b, i))


def _binary_int_rows(code, a, b, out):
    # numba widens small ints to 64 bits; the store truncates, which is the
    # wrapping arithmetic of the dtype.
    n = out.shape[0]
    if code == ADD:
        for i in range(n):
            out[i] = a[i] + _at(b, i)
    elif code == SUB:
        for i in range(n):
            out[i] = a[i] - _at(b, i)
    elif code == MUL:
        for i in range(n):
            out[i] = a[i] * _at(b, i)
    else:
        for i in range(n):
            out[i] = _binary_int_elem(code, a[i], _at(b, i))


def _binary_int_strided(code, a, b, out):
    for i in range(out.shape[0]):
        out[i] = _binary_int_elem(code, a[i], _at(b, i))


def _compare_rows(code, a, b, out):
    n = out.shape[0]
    if code == EQ:
        for i in range(n):
            out[i] = a[i] == _at(b, i)
    elif code == NE:
        for i in range(n):
            out[i] = a[i] != _at(b, i)
    elif code == LT:
        for i in range(n):
            out[i] = a[i] < _at(b, i)
    elif code == LE:
        for i in range(n):
            out[i] = a[i] <= _at(b, i)
    elif code == GT:
        for i in range(n):
            out[i] = a[i] > _at(b, i)
    elif code == GE:
        for i in range(n):
            out[i] = a[i] >= _at(b, i)
    else:
        for i in range(n):
            out[i] = _compare_elem(code, a[i], _at(b, i))


def _compare_strided(code, a, b, out):
    for i in range(out.shape[0]):
        out[i] = _compare_elem(code, a[i], _at(b, i))


def _binary_bool_rows(code, a, b, out):
    for i in range(out.shape[0]):
        out[i] = _binary_bool_elem(code, a[i], _at(b, i))


# --------------------------------------------------------- typed dispatch

def _contiguous(*rows):
    return all(not isinstance(r, types.Array) or r.layout == "C" for r in rows)


def _unary_family(x, out):
    """(code check, contiguous-row loops, strided-row loops) for these types."""
    if isinstance(out.dtype, types.Boolean):
        return _not_ok, _not_rows, _not_rows
    if isinstance(x.dtype, types.Float):
        return _unary_float_ok, _unary_float_rows, _unary_float_strided
    if isinstance(x.dtype, types.Integer):
        return _unary_int_ok, _unary_int_rows, _unary_int_rows
    return None, None, None


def _binary_family(a, out):
    if isinstance(out.dtype, types.Boolean):
        if isinstance(a.dtype, types.Boolean):
            return _binary_bool_ok, _binary_bool_rows, _binary_bool_rows
        return _compare_ok, _compare_rows, _compare_strided
    if isinstance(a.dtype, types.Float):
        return _binary_float_ok, _binary_float_rows, _binary_float_strided
    if isinstance(a.dtype, types.Integer):
        return _binary_int_ok, _binary_int_rows, _binary_int_strided
    return None, None, None


def _unary_ok(code, x, out):
    """True if unary ``code`` exists for x's and out's dtypes (arrays or rows)."""
    raise NotImplementedError


@overload(_unary_ok, jit_options=_OPTS)
def _unary_ok_typed(code, x, out):
    ok = _unary_family(x, out)[0]
    return None if ok is None else (lambda code, x, out: ok(code))


def _unary_rows(code, x, out):
    """out[i] = f(x[i]) for a checked unary ``code``; ``out`` a contiguous row."""
    raise NotImplementedError


@overload(_unary_rows, jit_options=_OPTS)
def _unary_rows_typed(code, x, out):
    _, rows, strided = _unary_family(x, out)
    return rows if _contiguous(x) else strided


def _binary_ok(code, a, out):
    """True if binary ``code`` exists for a's and out's dtypes."""
    raise NotImplementedError


@overload(_binary_ok, jit_options=_OPTS)
def _binary_ok_typed(code, a, out):
    ok = _binary_family(a, out)[0]
    return None if ok is None else (lambda code, a, out: ok(code))


def _binary_rows(code, a, b, out):
    """out[i] = f(a[i], b[i] or b) for a checked binary ``code``; ``b`` a row or a scalar."""
    raise NotImplementedError


@overload(_binary_rows, jit_options=_OPTS)
def _binary_rows_typed(code, a, b, out):
    _, rows, strided = _binary_family(a, out)
    return rows if _contiguous(a, b) else strided


# ------------------------------------------------------ where, copy, fill

def _convert(v, dst):
    """``v`` converted for a store into ``dst`` (torch casting rules)."""
    raise NotImplementedError


@overload(_convert, jit_options=_OPTS)
def _convert_typed(v, dst):
    if isinstance(dst.dtype, types.Boolean):
        return lambda v, dst: v != 0             # NaN is true
    if (isinstance(v, types.Float) and isinstance(dst.dtype, types.Integer)
            and not dst.dtype.signed):
        # float -> uint8 through int64 so negatives wrap (-1.0 -> 255), as
        # numpy and torch do on x86; a direct float->unsigned cast is undefined.
        return lambda v, dst: np.int64(v)
    return lambda v, dst: v                      # the store casts (float->int truncates)


@helper
def _where_rows(cond, a, b, out):
    for i in range(out.shape[0]):
        out[i] = a[i] if cond[i] else b[i]


@helper
def _copy_rows(src, dst):
    for i in range(dst.shape[0]):
        dst[i] = _convert(src[i], dst)


@helper
def _fill_rows(dst, value):
    for i in range(dst.shape[0]):
        dst[i] = value


@helper
def _axpby_rows(a, x, b, y, out):
    for i in range(out.shape[0]):
        out[i] = a * x[i] + b * y[i]
