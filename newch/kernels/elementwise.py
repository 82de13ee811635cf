"""Elementwise kernels: unary, binary, where, copy/convert, fill, axpby.

How the work is laid out (DESIGN.md, "Kernels and threads"):

- Flat kernels see 1-D C-contiguous arrays and cut them into chunks of
  ``CHUNK`` elements.
- nd kernels see 4-D arrays with any strides. They first merge the trailing
  dims that a single stride walks in order for every operand, giving a view
  of shape (m0, m1, m2, size) whose rows are as long as possible (a bias
  added to NCHW becomes rows of H*W along which the bias is constant). The
  C-order element range of that view is cut into chunks of ``CHUNK``.
- One ``prange`` iteration owns one chunk, so every output element has one
  writer and the split depends on the shape only. At or below
  ``SERIAL_MAX`` elements the same chunks run in the calling thread. Each
  element is computed on its own, so results do not depend on the split.
- A chunk is handled by one serial function that switches on the code: the
  typed row loops of ``elementwise_rows`` for flat kernels, a ``_*_span``
  helper for nd kernels, which walks the chunk's row segments. Segments whose
  operands have unit stride are retyped as C-contiguous rows
  (``np.ascontiguousarray`` of a view checked to be contiguous: never a
  copy) and get the vectorized loops; other segments use per-element loops.

Compile cost (cold cache) is paid per kernel and argument-type combination.
The public nd kernels are thin serial entry points (checks, merged views)
that call a parallel ``_*_run`` kernel; the views are always 'A' layout, so
the parallel part compiles once per dtype (and read-only flag: numpy's
``broadcast_to`` views are read-only) instead of once per layout
combination of the operands.
"""
import numpy as np

from .jit import kernel, helper, prange
from .codes import (SUB, RSUB, DIV, RDIV, POW, RPOW, LT, GT, LE, GE, ADD, MUL, EQ, NE,
                    LOGICAL_AND, LOGICAL_OR, LOGICAL_XOR, BITWISE_AND, BITWISE_OR,
                    BITWISE_XOR)
from .elementwise_rows import (_unary_ok, _unary_rows, _binary_ok, _binary_rows, _where_rows,
                               _copy_rows, _fill_rows, _axpby_rows)

__all__ = ["unary", "unary_nd", "binary", "binary_scalar", "binary_nd", "where_nd",
           "copy_nd", "fill_nd", "axpby"]

CHUNK = 16384          # elements owned by one prange iteration
SERIAL_MAX = 32768     # at or below this many elements: no thread launch

# How ``_binary_span`` feeds a row segment to the row loops.
_GENERAL = 0           # strided a and/or b: per-element loop
_SAME = 1              # a and b unit-stride
_B_SCALAR = 2          # a unit-stride, b constant along the row
_A_SCALAR = 3          # a constant along the row, b unit-stride: swapped code


# ------------------------------------------------------------ nd geometry
# These take shape/stride tuples, not arrays, so each compiles once for all
# dtypes and layouts.

@helper
def _depth(shape, strides):
    """How many trailing dims of a 4-D array a single stride walks in C order."""
    block = 1
    t = 0
    d = 0
    for k in range(3, -1, -1):
        n = shape[k]
        if n != 1:               # size-1 dims never break the walk
            s = strides[k]
            if block == 1:
                t = s
            elif s != t * block:
                return d
            block *= n
        d += 1
    return d


@helper
def _merged(shape, strides, d):
    """(shape, strides) of the (m0, m1, m2, size) view with the last ``d`` dims merged."""
    size = 1
    for k in range(4 - d, 4):
        size *= shape[k]
    t = 0                        # stride of the innermost dim that is not 1
    for k in range(4 - d, 4):
        if shape[k] != 1:
            t = strides[k]
    if d == 4:
        return (1, 1, 1, size), (0, 0, 0, t)
    if d == 3:
        return (1, 1, shape[0], size), (0, 0, strides[0], t)
    if d == 2:
        return (1, shape[0], shape[1], size), (0, strides[0], strides[1], t)
    return (shape[0], shape[1], shape[2], size), (strides[0], strides[1], strides[2], t)


@helper
def _unit(t, itemsize, size):
    """Rows of ``size`` elements ``t`` bytes apart are contiguous."""
    return size <= 1 or t == itemsize


@helper
def _segment(shape, r, j, left):
    """Row ``r`` of a (m0, m1, m2, size) view as (i0, i1, i2), and the segment length from ``j``."""
    i2 = r % shape[2]
    q = r // shape[2]
    return q // shape[1], q % shape[1], i2, min(shape[3] - j, left)


@helper
def _nchunks(total):
    return (total + CHUNK - 1) // CHUNK


@helper
def _swapped(code):
    """Code g with g(b, a) == f(a, b) for f = ``code``; -1 if there is none.

    MAXIMUM/MINIMUM are left out: swapping them could flip the sign of a zero.
    """
    if code == SUB:
        return RSUB
    if code == RSUB:
        return SUB
    if code == DIV:
        return RDIV
    if code == RDIV:
        return DIV
    if code == POW:
        return RPOW
    if code == RPOW:
        return POW
    if code == LT:
        return GT
    if code == GT:
        return LT
    if code == LE:
        return GE
    if code == GE:
        return LE
    if (code == ADD or code == MUL or code == EQ or code == NE or code == LOGICAL_AND
            or code == LOGICAL_OR or code == LOGICAL_XOR or code == BITWISE_AND
            or code == BITWISE_OR or code == BITWISE_XOR):
        return code
    return -1


@helper
def _binary_mode(code, ua, ub, ta, tb):
    """Feeding mode from a's and b's row contiguity (ua, ub) and row strides (ta, tb)."""
    if ua and ub:
        return _SAME
    if ua and tb == 0:
        return _B_SCALAR
    if ub and ta == 0 and _swapped(code) >= 0:
        return _A_SCALAR
    return _GENERAL


# ------------------------------------------------------------------- unary

@kernel(parallel=True)
def unary(code, x, out):
    """out = f(x) for a unary ``code`` (codes.NEG .. codes.COSH).

    x, out: 1-D C-contiguous, same length. float32/float64 support every
    code; int32/int64/uint8 support NEG, ABS, SIGN, SQUARE, RELU (wrapping);
    LOGICAL_NOT takes any dtype and a bool ``out``. SIGN(NaN) is 0 (torch).
    """
    n = out.shape[0]
    if x.shape[0] != n:
        raise ValueError("unary: x and out lengths differ")
    if not _unary_ok(code, x, out):
        raise ValueError("unary: code not supported for this dtype")
    if n <= SERIAL_MAX:
        _unary_rows(code, x, out)
        return
    for c in prange(_nchunks(n)):
        lo = c * CHUNK
        hi = min(lo + CHUNK, n)
        _unary_rows(code, x[lo:hi], out[lo:hi])


@helper
def _unary_span(code, unit, x, out, lo, hi):
    r = lo // out.shape[3]
    j = lo - r * out.shape[3]
    p = lo
    while p < hi:
        i0, i1, i2, m = _segment(out.shape, r, j, hi - p)
        o = np.ascontiguousarray(out[i0, i1, i2, j:j + m])
        if unit:
            _unary_rows(code, np.ascontiguousarray(x[i0, i1, i2, j:j + m]), o)
        else:
            _unary_rows(code, x[i0, i1, i2, j:j + m], o)
        p += m
        j = 0
        r += 1


@kernel(parallel=True)
def _unary_nd_run(code, unit, xv, ov):
    total = ov.size
    if total <= SERIAL_MAX:
        for c in range(_nchunks(total)):
            lo = c * CHUNK
            _unary_span(code, unit, xv, ov, lo, min(lo + CHUNK, total))
        return
    for c in prange(_nchunks(total)):
        lo = c * CHUNK
        _unary_span(code, unit, xv, ov, lo, min(lo + CHUNK, total))


@kernel
def unary_nd(code, x, out):
    """out = f(x) for a unary ``code``; x: 4-D, any strides; out: 4-D C-contiguous, same shape."""
    if x.shape != out.shape:
        raise ValueError("unary_nd: x and out shapes differ")
    if not _unary_ok(code, x, out):
        raise ValueError("unary_nd: code not supported for this dtype")
    d = min(_depth(x.shape, x.strides), _depth(out.shape, out.strides))
    xsh, xst = _merged(x.shape, x.strides, d)
    osh, ost = _merged(out.shape, out.strides, d)
    if not _unit(ost[3], out.itemsize, osh[3]):
        raise ValueError("unary_nd: out must be C-contiguous")
    _unary_nd_run(code, _unit(xst[3], x.itemsize, xsh[3]),
                  np.lib.stride_tricks.as_strided(x, xsh, xst),
                  np.lib.stride_tricks.as_strided(out, osh, ost))


# ------------------------------------------------------------------ binary

@kernel(parallel=True)
def binary(code, a, b, out):
    """out = f(a, b) for a binary ``code`` (codes.ADD .. codes.FMOD).

    a, b: 1-D C-contiguous, same dtype and length. out: same length, a's
    dtype for arithmetic codes, bool for EQ..GE and LOGICAL_*. Integer
    FLOOR_DIVIDE, REMAINDER and FMOD by zero give 0; integer POW with a
    negative exponent gives 1 (base 1), +-1 (base -1) or 0. Bitwise codes
    are for integer and bool dtypes, DIV/RDIV/ATAN2 for float dtypes.
    """
    n = out.shape[0]
    if a.shape[0] != n or b.shape[0] != n:
        raise ValueError("binary: lengths differ")
    if not _binary_ok(code, a, out):
        raise ValueError("binary: code not supported for this dtype")
    if n <= SERIAL_MAX:
        _binary_rows(code, a, b, out)
        return
    for c in prange(_nchunks(n)):
        lo = c * CHUNK
        hi = min(lo + CHUNK, n)
        _binary_rows(code, a[lo:hi], b[lo:hi], out[lo:hi])


@kernel(parallel=True)
def binary_scalar(code, a, s, out):
    """out = f(a, s) for a binary ``code``; a, out: 1-D C-contiguous; s: numpy scalar of a's dtype."""
    n = out.shape[0]
    if a.shape[0] != n:
        raise ValueError("binary_scalar: lengths differ")
    if not _binary_ok(code, a, out):
        raise ValueError("binary_scalar: code not supported for this dtype")
    if n <= SERIAL_MAX:
        _binary_rows(code, a, s, out)
        return
    for c in prange(_nchunks(n)):
        lo = c * CHUNK
        hi = min(lo + CHUNK, n)
        _binary_rows(code, a[lo:hi], s, out[lo:hi])


@helper
def _binary_span(code, mode, a, b, out, lo, hi):
    r = lo // out.shape[3]
    j = lo - r * out.shape[3]
    p = lo
    while p < hi:
        i0, i1, i2, m = _segment(out.shape, r, j, hi - p)
        o = np.ascontiguousarray(out[i0, i1, i2, j:j + m])
        if mode == _SAME:
            _binary_rows(code, np.ascontiguousarray(a[i0, i1, i2, j:j + m]),
                         np.ascontiguousarray(b[i0, i1, i2, j:j + m]), o)
        elif mode == _GENERAL:
            _binary_rows(code, a[i0, i1, i2, j:j + m], b[i0, i1, i2, j:j + m], o)
        else:
            # One operand is constant along the row: pass it as a scalar.
            if mode == _B_SCALAR:
                c2, row, s = code, a[i0, i1, i2, j:j + m], b[i0, i1, i2, j]
            else:
                c2, row, s = _swapped(code), b[i0, i1, i2, j:j + m], a[i0, i1, i2, j]
            _binary_rows(c2, np.ascontiguousarray(row), s, o)
        p += m
        j = 0
        r += 1


@kernel(parallel=True)
def _binary_nd_run(code, mode, av, bv, ov):
    total = ov.size
    if total <= SERIAL_MAX:
        for c in range(_nchunks(total)):
            lo = c * CHUNK
            _binary_span(code, mode, av, bv, ov, lo, min(lo + CHUNK, total))
        return
    for c in prange(_nchunks(total)):
        lo = c * CHUNK
        _binary_span(code, mode, av, bv, ov, lo, min(lo + CHUNK, total))


@kernel
def binary_nd(code, a, b, out):
    """out = f(a, b) for a binary ``code``.

    a, b: 4-D of out's shape, any strides (stride 0 broadcasts); out: 4-D
    C-contiguous. Dtypes and codes as ``binary``.
    """
    if a.shape != out.shape or b.shape != out.shape:
        raise ValueError("binary_nd: shapes differ")
    if not _binary_ok(code, a, out):
        raise ValueError("binary_nd: code not supported for this dtype")
    d = min(_depth(a.shape, a.strides), _depth(b.shape, b.strides),
            _depth(out.shape, out.strides))
    ash, ast = _merged(a.shape, a.strides, d)
    bsh, bst = _merged(b.shape, b.strides, d)
    osh, ost = _merged(out.shape, out.strides, d)
    size = osh[3]
    if not _unit(ost[3], out.itemsize, size):
        raise ValueError("binary_nd: out must be C-contiguous")
    mode = _binary_mode(code, _unit(ast[3], a.itemsize, size), _unit(bst[3], b.itemsize, size),
                        ast[3], bst[3])
    _binary_nd_run(code, mode, np.lib.stride_tricks.as_strided(a, ash, ast),
                   np.lib.stride_tricks.as_strided(b, bsh, bst),
                   np.lib.stride_tricks.as_strided(out, osh, ost))


# ------------------------------------------------------------------- where

@helper
def _where_span(unit, cond, a, b, out, lo, hi):
    r = lo // out.shape[3]
    j = lo - r * out.shape[3]
    p = lo
    while p < hi:
        i0, i1, i2, m = _segment(out.shape, r, j, hi - p)
        o = np.ascontiguousarray(out[i0, i1, i2, j:j + m])
        if unit:
            _where_rows(np.ascontiguousarray(cond[i0, i1, i2, j:j + m]),
                        np.ascontiguousarray(a[i0, i1, i2, j:j + m]),
                        np.ascontiguousarray(b[i0, i1, i2, j:j + m]), o)
        else:
            _where_rows(cond[i0, i1, i2, j:j + m], a[i0, i1, i2, j:j + m],
                        b[i0, i1, i2, j:j + m], o)
        p += m
        j = 0
        r += 1


@kernel(parallel=True)
def _where_run(unit, cv, av, bv, ov):
    total = ov.size
    if total <= SERIAL_MAX:
        for c in range(_nchunks(total)):
            lo = c * CHUNK
            _where_span(unit, cv, av, bv, ov, lo, min(lo + CHUNK, total))
        return
    for c in prange(_nchunks(total)):
        lo = c * CHUNK
        _where_span(unit, cv, av, bv, ov, lo, min(lo + CHUNK, total))


@kernel
def where_nd(cond, a, b, out):
    """out = a where cond else b.

    cond: 4-D bool; a, b: 4-D of out's dtype; all of out's shape with any
    strides (0 broadcasts). out: 4-D C-contiguous.
    """
    if cond.shape != out.shape or a.shape != out.shape or b.shape != out.shape:
        raise ValueError("where_nd: shapes differ")
    d = min(min(_depth(cond.shape, cond.strides), _depth(a.shape, a.strides)),
            min(_depth(b.shape, b.strides), _depth(out.shape, out.strides)))
    csh, cst = _merged(cond.shape, cond.strides, d)
    ash, ast = _merged(a.shape, a.strides, d)
    bsh, bst = _merged(b.shape, b.strides, d)
    osh, ost = _merged(out.shape, out.strides, d)
    size = osh[3]
    if not _unit(ost[3], out.itemsize, size):
        raise ValueError("where_nd: out must be C-contiguous")
    unit = (_unit(cst[3], cond.itemsize, size) and _unit(ast[3], a.itemsize, size)
            and _unit(bst[3], b.itemsize, size))
    _where_run(unit, np.lib.stride_tricks.as_strided(cond, csh, cst),
               np.lib.stride_tricks.as_strided(a, ash, ast),
               np.lib.stride_tricks.as_strided(b, bsh, bst),
               np.lib.stride_tricks.as_strided(out, osh, ost))


# ------------------------------------------------------------- copy, fill

@helper
def _copy_span(unit, src, dst, lo, hi):
    r = lo // dst.shape[3]
    j = lo - r * dst.shape[3]
    p = lo
    while p < hi:
        i0, i1, i2, m = _segment(dst.shape, r, j, hi - p)
        if unit:
            _copy_rows(np.ascontiguousarray(src[i0, i1, i2, j:j + m]),
                       np.ascontiguousarray(dst[i0, i1, i2, j:j + m]))
        else:
            _copy_rows(src[i0, i1, i2, j:j + m], dst[i0, i1, i2, j:j + m])
        p += m
        j = 0
        r += 1


@kernel(parallel=True)
def _copy_run(unit, sv, dv):
    total = dv.size
    if total <= SERIAL_MAX:
        for c in range(_nchunks(total)):
            lo = c * CHUNK
            _copy_span(unit, sv, dv, lo, min(lo + CHUNK, total))
        return
    for c in prange(_nchunks(total)):
        lo = c * CHUNK
        _copy_span(unit, sv, dv, lo, min(lo + CHUNK, total))


@kernel
def copy_nd(src, dst):
    """dst[...] = src, converting the dtype.

    src, dst: 4-D, same shape, any strides (dst may be a strided view; it
    must not overlap src). float -> int truncates toward zero (float ->
    uint8 goes through int64, so -1.0 -> 255; out-of-range values are
    unspecified), x -> bool is x != 0, bool -> number is 0/1.
    """
    if src.shape != dst.shape:
        raise ValueError("copy_nd: shapes differ")
    d = min(_depth(src.shape, src.strides), _depth(dst.shape, dst.strides))
    ssh, sst = _merged(src.shape, src.strides, d)
    dsh, dst_ = _merged(dst.shape, dst.strides, d)
    unit = _unit(sst[3], src.itemsize, dsh[3]) and _unit(dst_[3], dst.itemsize, dsh[3])
    _copy_run(unit, np.lib.stride_tricks.as_strided(src, ssh, sst),
              np.lib.stride_tricks.as_strided(dst, dsh, dst_))


@helper
def _fill_span(unit, dst, value, lo, hi):
    r = lo // dst.shape[3]
    j = lo - r * dst.shape[3]
    p = lo
    while p < hi:
        i0, i1, i2, m = _segment(dst.shape, r, j, hi - p)
        if unit:
            _fill_rows(np.ascontiguousarray(dst[i0, i1, i2, j:j + m]), value)
        else:
            _fill_rows(dst[i0, i1, i2, j:j + m], value)
        p += m
        j = 0
        r += 1


@kernel(parallel=True)
def _fill_run(unit, dv, value):
    total = dv.size
    if total <= SERIAL_MAX:
        for c in range(_nchunks(total)):
            lo = c * CHUNK
            _fill_span(unit, dv, value, lo, min(lo + CHUNK, total))
        return
    for c in prange(_nchunks(total)):
        lo = c * CHUNK
        _fill_span(unit, dv, value, lo, min(lo + CHUNK, total))


@kernel
def fill_nd(dst, value):
    """dst[...] = value; dst: 4-D, any strides; value: numpy scalar of dst's dtype."""
    d = _depth(dst.shape, dst.strides)
    dsh, dst_ = _merged(dst.shape, dst.strides, d)
    _fill_run(_unit(dst_[3], dst.itemsize, dsh[3]),
              np.lib.stride_tricks.as_strided(dst, dsh, dst_), value)


# ------------------------------------------------------------------- axpby

@kernel(parallel=True)
def axpby(a, x, b, y, out):
    """out = a*x + b*y, rounded after each operation (no fused multiply-add).

    x, y, out: 1-D C-contiguous float32/float64, same length (out may be x
    or y); a, b: numpy scalars of that dtype.
    """
    n = out.shape[0]
    if x.shape[0] != n or y.shape[0] != n:
        raise ValueError("axpby: lengths differ")
    if n <= SERIAL_MAX:
        _axpby_rows(a, x, b, y, out)
        return
    for c in prange(_nchunks(n)):
        lo = c * CHUNK
        hi = min(lo + CHUNK, n)
        _axpby_rows(a, x[lo:hi], b, y[lo:hi], out[lo:hi])
