"""Elementwise kernels: unary, binary, where, copy/convert, fill, axpby.

Each public function here is a Python launcher: it checks the arrays, picks
the compiled loop for (op, dtypes, serial or parallel) and calls its entry
point. The loops are *templates* (``specialize``) instantiated per op and
compiled for a dtype the first time it is used, so a program compiles only the
ops and dtypes it runs (cold start in seconds, DESIGN.md).

How the work is laid out (DESIGN.md, "Kernels and threads"):

- Flat loops see 1-D C-contiguous arrays; nd loops see 4-D arrays with any
  strides (``ops/layout.nd_views`` has merged the dims every operand walks
  contiguously, so rows are as long as possible).
- A *span* template handles the elements [lo, hi) of its output in C order.
  At or below ``SERIAL_MAX`` elements the launcher calls the span on
  everything, in the calling thread: no thread launch, no parallel code
  compiled. Above it a parallel driver (``tasks.driver``) runs the same
  compiled span on chunks of ``CHUNK`` elements, one ``prange`` iteration per
  chunk (no parallel copy of the span is compiled): every output element
  has one writer, the split depends on the size only, and each element is
  computed on its own, so the two paths give the same bits on any thread count.
- nd spans walk their chunk's row segments; a segment whose operands all have
  unit stride is handed to the flat loop (retyped C-contiguous: a view, never a
  copy), which LLVM vectorizes; other segments take a per-element loop.
"""
import numpy as np
from numba.core import cgutils, types
from numba.core.imputils import impl_ret_borrowed
from numba.np.arrayobj import populate_array

from . import binary_ops, unary_ops  # noqa: F401  (register the element functions)
from .jit import helper, intrinsic
from .specialize import (BINARY, UNARY, PREDICATES, array, element, entry, instance, kind,
                         scalar)
from .tasks import driver

__all__ = ["unary", "unary_nd", "binary", "binary_scalar", "binary_nd", "where_nd",
           "copy_nd", "fill_nd", "axpby", "serial_loop"]

CHUNK = 16384          # elements owned by one prange iteration
SERIAL_MAX = 32768     # at or below this many elements: no thread launch


# --------------------------------------------------------------- templates
# ``_f`` is the element function, ``_rows`` the flat span an nd span hands
# unit-stride segments to, ``_srows`` the flat scalar span; ``specialize``
# binds them per instance.

def _unary_flat(x, out, lo, hi):
    xs, os = x[lo:hi], out[lo:hi]
    for i in range(hi - lo):
        os[i] = _f(xs[i])  # noqa: F821


def _binary_flat(a, b, out, lo, hi):
    as_, bs, os = a[lo:hi], b[lo:hi], out[lo:hi]
    for i in range(hi - lo):
        os[i] = _f(as_[i], bs[i])  # noqa: F821


def _scalar_flat(a, s, out, lo, hi):
    as_, os = a[lo:hi], out[lo:hi]
    for i in range(hi - lo):
        os[i] = _f(as_[i], s)  # noqa: F821


def _where_flat(cond, a, b, out, lo, hi):
    cs, as_, bs, os = cond[lo:hi], a[lo:hi], b[lo:hi], out[lo:hi]
    for i in range(hi - lo):
        os[i] = as_[i] if cs[i] else bs[i]


def _fill_flat(dst, value, lo, hi):
    ds = dst[lo:hi]
    for i in range(hi - lo):
        ds[i] = value


def _axpby_flat(a, x, b, y, out, lo, hi):
    xs, ys, os = x[lo:hi], y[lo:hi], out[lo:hi]
    for i in range(hi - lo):
        os[i] = a * xs[i] + b * ys[i]


@helper
def _segment(shape, r, j, left):
    """Row ``r`` of a (m0, m1, m2, size) view as (i0, i1, i2), and the segment length from ``j``."""
    i2 = r % shape[2]
    q = r // shape[2]
    return q // shape[1], q % shape[1], i2, min(shape[3] - j, left)


@helper
def _unit(row):
    return row.shape[0] <= 1 or row.strides[0] == row.itemsize


@intrinsic
def as_c(typingctx, row):
    """A 1-D array of unit stride, retyped C-contiguous: the same view, no check, no copy.

    Cheaper to compile than ``np.ascontiguousarray`` (whose copying path numba compiles
    per dtype although it is never taken here); callers check the stride first.
    """
    if not (isinstance(row, types.Array) and row.ndim == 1):
        return None
    ret = row.copy(layout="C")

    def codegen(context, builder, sig, args):
        # NOTE: 'A' and 'C' arrays share numba's data model: the value is reused as is.
        return impl_ret_borrowed(context, builder, sig.return_type, args[0])

    return ret(row), codegen


@intrinsic
def _row(typingctx, a, i0, i1, i2, j, m):
    """``a[i0, i1, i2, j:j + m]`` of a 4-D array as a 1-D view (a's stride), built directly.

    NOTE (cold start): numba's slicing getitem normalises and checks the slice and the
    indexes (wraparound, bounds), IR the nd spans compiled once per operand; the spans only
    ask for segments inside the array (``_segment``), so none of it is needed.
    """
    if not (isinstance(a, types.Array) and a.ndim == 4):
        return None
    ret = types.Array(a.dtype, 1, "A")

    def codegen(context, builder, sig, args):
        src = context.make_array(sig.args[0])(context, builder, args[0])
        idx = [context.cast(builder, v, t, types.intp) for v, t in zip(args[1:], sig.args[1:])]
        strides = cgutils.unpack_tuple(builder, src.strides, 4)
        off = builder.mul(idx[0], strides[0])
        for v, st in zip(idx[1:4], strides[1:]):
            off = builder.add(off, builder.mul(v, st))
        base = builder.bitcast(src.data, cgutils.voidptr_t)
        data = builder.bitcast(builder.gep(base, [off]), src.data.type)
        dst = context.make_array(ret)(context, builder)
        populate_array(dst, data=data, shape=[idx[4]], strides=[strides[3]],
                       itemsize=src.itemsize, meminfo=src.meminfo, parent=src.parent)
        return impl_ret_borrowed(context, builder, ret, dst._getvalue())

    return ret(a, i0, i1, i2, j, m), codegen


def _unary_nd(x, out, lo, hi):
    size = out.shape[3]
    r, j, p = lo // size, lo % size, lo
    while p < hi:
        i0, i1, i2, m = _segment(out.shape, r, j, hi - p)
        xr, orow = _row(x, i0, i1, i2, j, m), _row(out, i0, i1, i2, j, m)
        if _unit(xr) and _unit(orow):
            _rows(as_c(xr), as_c(orow), np.int64(0), m)  # noqa: F821
        else:
            for k in range(m):
                orow[k] = _f(xr[k])  # noqa: F821
        p, j, r = p + m, 0, r + 1


def _binary_nd(a, b, out, lo, hi):
    size = out.shape[3]
    r, j, p = lo // size, lo % size, lo
    while p < hi:
        i0, i1, i2, m = _segment(out.shape, r, j, hi - p)
        ar, br, orow = _row(a, i0, i1, i2, j, m), _row(b, i0, i1, i2, j, m), _row(out, i0, i1, i2, j, m)
        if _unit(ar) and _unit(orow) and (_unit(br) or br.strides[0] == 0):
            oc = as_c(orow)
            if _unit(br):
                _rows(as_c(ar), as_c(br), oc, np.int64(0), m)  # noqa: F821
            else:
                # NOTE: b constant along the row (a per-channel bias): pass it as a scalar.
                _srows(as_c(ar), br[0], oc, np.int64(0), m)  # noqa: F821
        else:
            for k in range(m):
                orow[k] = _f(ar[k], br[k])  # noqa: F821
        p, j, r = p + m, 0, r + 1


def _binary_rowwise(a, b, out, lo, hi):
    """Elements [lo, hi) of out = f(a, b) with a, out flat (M*N,) and b one row (N,) for all M."""
    size = b.shape[0]
    j, p = lo % size, lo
    while p < hi:
        m = min(size - j, hi - p)
        _rows(a[p:p + m], b[j:j + m], out[p:p + m], np.int64(0), m)  # noqa: F821
        p, j = p + m, 0


def _where_nd(cond, a, b, out, lo, hi):
    size = out.shape[3]
    r, j, p = lo // size, lo % size, lo
    while p < hi:
        i0, i1, i2, m = _segment(out.shape, r, j, hi - p)
        cr, ar = _row(cond, i0, i1, i2, j, m), _row(a, i0, i1, i2, j, m)
        br, orow = _row(b, i0, i1, i2, j, m), _row(out, i0, i1, i2, j, m)
        if _unit(cr) and _unit(ar) and _unit(br) and _unit(orow):
            _rows(as_c(cr), as_c(ar),  # noqa: F821
                  as_c(br), as_c(orow), np.int64(0), m)
        else:
            for k in range(m):
                orow[k] = ar[k] if cr[k] else br[k]
        p, j, r = p + m, 0, r + 1


def _fill_nd(dst, value, lo, hi):
    size = dst.shape[3]
    r, j, p = lo // size, lo % size, lo
    while p < hi:
        i0, i1, i2, m = _segment(dst.shape, r, j, hi - p)
        drow = _row(dst, i0, i1, i2, j, m)
        if _unit(drow):
            _rows(as_c(drow), value, np.int64(0), m)  # noqa: F821
        else:
            for k in range(m):
                drow[k] = value
        p, j, r = p + m, 0, r + 1


_I64 = scalar(np.dtype(np.int64))


# ---------------------------------------------------------------- launching

_ENTRY = {}            # (launcher, op, dtypes..., parallel) -> compiled entry point


def _compile(span, tag, argtypes, parallel, **bound):
    """Entry point of the span (serial), or its parallel launcher, for ``argtypes``.

    NOTE: the parallel launcher runs the serial span's compiled code on chunks of CHUNK
    elements (``tasks.driver``): no parallel copy of the span is compiled.
    """
    s = instance(span, tag, **bound)
    if not parallel:
        return entry(s, tuple(argtypes) + (_I64, _I64))
    return driver(s, argtypes, CHUNK)


def _run(fn, parallel, n, *args):
    if parallel:
        fn(n, *args)
    else:
        fn(*args, 0, n)


def _flat_types(*arrays):
    """numba types of 1-D C arrays.

    NOTE: typed writable even for inputs (entry points do not check the flag, and
    kernels never write their inputs): read-only numpy views (``broadcast_to``) and
    the C views an nd span makes of unit-stride rows then share one compiled loop.
    """
    return [array(a.dtype, 1, "C") for a in arrays]


def _nd_types(*arrays):
    return [array(a.dtype, 4, "A") for a in arrays]


def _check_out(what, code, x, out):
    """Predicates (comparisons, logical ops) write bool; every other op writes x's dtype."""
    want = np.dtype(np.bool_) if code in PREDICATES else x.dtype
    if out.dtype != want:
        raise ValueError(f"{what}: op {code!r} on {x.dtype} writes {want}, got out of {out.dtype}")


def _check_flat(what, *arrays):
    n = arrays[-1].shape[0]
    for a in arrays:
        # NOTE: a 1-D array is contiguous when its stride is its itemsize (or it has <= 1
        # element); cheaper than building ``a.flags``.
        if a.ndim != 1 or (a.strides[0] != a.itemsize and a.shape[0] > 1):
            raise ValueError(f"{what}: expected 1-D C-contiguous arrays, got shape {a.shape} "
                             f"strides {a.strides}")
        if a.shape[0] != n:
            raise ValueError(f"{what}: lengths differ ({a.shape[0]} vs {n})")
    return n


def _flat2(x, out, n):
    """The common case of ``_check_flat`` for two arrays, without building tuples."""
    return (x.ndim == 1 and out.ndim == 1 and x.shape[0] == n
            and (n <= 1 or (x.strides[0] == x.itemsize and out.strides[0] == out.itemsize)))


def _check_nd(what, *arrays):
    shape = arrays[-1].shape
    for a in arrays:
        if a.ndim != 4 or a.shape != shape:
            raise ValueError(f"{what}: expected 4-D arrays of shape {shape}, got {a.shape}")
    return arrays[-1].size


def _unary_entry(code, x, out, nd, par):
    key = ("unary", code, x.dtype.char, out.dtype.char, nd, par)
    fn = _ENTRY.get(key)
    if fn is None:
        what = "unary_nd" if nd else "unary"
        f = element(UNARY, what, code, x.dtype)
        _check_out(what, code, x, out)
        tag = f"{code}_{kind(x.dtype)}"
        if nd:
            fn = _compile(_unary_nd, tag, _nd_types(x, out), par, _f=f,
                          _rows=instance(_unary_flat, tag, _f=f, inline=True))
        else:
            fn = _compile(_unary_flat, tag, _flat_types(x, out), par, _f=f)
        _ENTRY[key] = fn
    return fn


def unary(code, x, out):
    """out = f(x) for unary op ``code`` ("neg", "exp", "relu", ... see ``unary_ops``).

    x, out: 1-D C-contiguous, same length. Float dtypes support every op;
    integer dtypes neg, abs, sign, square, relu (wrapping); logical_not takes
    any dtype and a bool ``out``; others write x's dtype. sign(NaN) is 0 (torch).
    """
    n = out.shape[0]
    if not _flat2(x, out, n):
        _check_flat("unary", x, out)
    if n > SERIAL_MAX:
        _unary_entry(code, x, out, False, True)(n, x, out)
    elif n:
        _unary_entry(code, x, out, False, False)(x, out, 0, n)


def unary_nd(code, x, out):
    """out = f(x) for unary op ``code``; x: 4-D, any strides; out: 4-D of x's shape."""
    n = _check_nd("unary_nd", x, out)
    if n:
        par = n > SERIAL_MAX
        _run(_unary_entry(code, x, out, True, par), par, n, x, out)


def _binary_entry(code, a, b, out, mode, par):
    """mode: "flat", "scalar" (b a scalar), "rowwise" (b one row of a's) or "nd"."""
    key = ("binary", code, a.dtype.char, out.dtype.char, mode, par)
    fn = _ENTRY.get(key)
    if fn is None:
        what = "binary" if mode == "flat" else "binary_" + mode
        f = element(BINARY, what, code, a.dtype)
        _check_out(what, code, a, out)
        tag = f"{code}_{kind(a.dtype)}"
        if mode == "flat":
            fn = _compile(_binary_flat, tag, _flat_types(a, b, out), par, _f=f)
        elif mode == "scalar":
            types = _flat_types(a, out)
            fn = _compile(_scalar_flat, tag, [types[0], scalar(a.dtype), types[1]], par, _f=f)
        elif mode == "rowwise":
            fn = _compile(_binary_rowwise, tag, _flat_types(a, b, out), par,
                          _rows=instance(_binary_flat, tag, _f=f, inline=True))
        else:
            fn = _compile(_binary_nd, tag, _nd_types(a, b, out), par, _f=f,
                          _rows=instance(_binary_flat, tag, _f=f, inline=True),
                          _srows=instance(_scalar_flat, tag, _f=f, inline=True))
        _ENTRY[key] = fn
    return fn


def _same_dtype(what, a, b):
    if a.dtype != b.dtype:
        raise TypeError(f"{what}: operands must share one dtype, got {a.dtype} and {b.dtype}")


def binary(code, a, b, out):
    """out = f(a, b) for binary op ``code`` ("add", "lt", ... see ``binary_ops``).

    a, b: 1-D C-contiguous, same dtype and length. out: same length, a's dtype
    (bool for comparisons and logical ops). Integer floor_divide, remainder
    and fmod by zero give 0; integer pow with a negative exponent gives 1
    (base 1), +-1 (base -1) or 0. Bitwise ops are for integer and bool
    dtypes, div/rdiv/atan2 for float dtypes.
    """
    n = out.shape[0]
    if not (_flat2(a, out, n) and _flat2(b, out, n)):
        _check_flat("binary", a, b, out)
    if a.dtype != b.dtype:
        _same_dtype("binary", a, b)
    if n > SERIAL_MAX:
        _binary_entry(code, a, b, out, "flat", True)(n, a, b, out)
    elif n:
        _binary_entry(code, a, b, out, "flat", False)(a, b, out, 0, n)


def binary_scalar(code, a, s, out):
    """out = f(a, s) for binary op ``code``; a, out: 1-D C-contiguous; s: a scalar of a's dtype."""
    n = out.shape[0]
    if not _flat2(a, out, n):
        _check_flat("binary_scalar", a, out)
    if n > SERIAL_MAX:
        _binary_entry(code, a, None, out, "scalar", True)(n, a, s, out)
    elif n:
        _binary_entry(code, a, None, out, "scalar", False)(a, s, out, 0, n)


def binary_nd(code, a, b, out):
    """out = f(a, b) for binary op ``code``; a, b: 4-D of out's shape, any strides (0 broadcasts).

    out: 4-D. Dtypes and ops as ``binary``.
    """
    n = _check_nd("binary_nd", a, b, out)
    _same_dtype("binary_nd", a, b)
    if n:
        par = n > SERIAL_MAX
        rows = _row_broadcast(a, b, out)
        if rows is not None:
            _run(_binary_entry(code, a, b, out, "rowwise", par), par, n, *rows)
        else:
            _run(_binary_entry(code, a, b, out, "nd", par), par, n, a, b, out)


def _row_broadcast(a, b, out):
    """(a, b, out) as flat a, out and b's one row when out = f(a, b) is a row broadcast, else None.

    NOTE (cold start): a bias add (``x @ w.T + bias``) is a C-contiguous a and out with b
    repeating one contiguous row: a 1-D loop over rows compiles in a fraction of the 4-D
    loop's time, and runs the same flat element loop on each row (same bits).
    """
    size = out.shape[3]
    if not (out.flags.c_contiguous and a.strides == out.strides and b.strides[:3] == (0, 0, 0)
            and (b.strides[3] == b.itemsize or size == 1) and out.size > size):
        return None
    return a.reshape(-1), b[0, 0, 0], out.reshape(-1)


def where_nd(cond, a, b, out):
    """out = a where cond else b.

    cond: 4-D bool; a, b: 4-D of out's dtype; all of out's shape with any
    strides (0 broadcasts).
    """
    n = _check_nd("where_nd", cond, a, b, out)
    if cond.dtype != np.bool_ or a.dtype != out.dtype or b.dtype != out.dtype:
        raise TypeError(f"where_nd: expected bool cond and a, b of out's dtype {out.dtype}, got "
                        f"{cond.dtype}, {a.dtype}, {b.dtype}")
    if not n:
        return
    par = n > SERIAL_MAX
    key = ("where", out.dtype, par)
    fn = _ENTRY.get(key)
    if fn is None:
        tag = out.dtype.name
        fn = _ENTRY[key] = _compile(_where_nd, tag, _nd_types(cond, a, b, out), par,
                                    _rows=instance(_where_flat, tag, inline=True))
    _run(fn, par, n, cond, a, b, out)


@helper
def _same(v):
    return v


@helper
def _nonzero(v):
    return v != 0                              # NaN is true


@helper
def _via_int64(v):
    # NOTE: float -> unsigned through int64 so negatives wrap (-1.0 -> 255), as numpy
    # and torch do on x86; a direct float -> unsigned cast is undefined.
    return np.int64(v)


def _convert(src, dst):
    """(name, element function) converting src's dtype for a store into dst's dtype."""
    if dst.kind == "b":
        return "nonzero", _nonzero
    if src.kind == "f" and dst.kind == "u":
        return "via_int64", _via_int64
    return "same", _same                       # the store casts (float -> int truncates)


def copy_nd(src, dst):
    """dst[...] = src, converting the dtype.

    src, dst: 4-D, same shape, any strides (dst may be a strided view; it
    must not overlap src). float -> int truncates toward zero (float ->
    uint8 goes through int64, so -1.0 -> 255; out-of-range values are
    unspecified), x -> bool is x != 0, bool -> number is 0/1.
    """
    n = _check_nd("copy_nd", src, dst)
    if not n:
        return
    par = n > SERIAL_MAX
    flat = src.flags.c_contiguous and dst.flags.c_contiguous
    key = ("copy", src.dtype, dst.dtype, flat, par)
    fn = _ENTRY.get(key)
    if fn is None:
        name, f = _convert(src.dtype, dst.dtype)
        tag = f"{name}_{src.dtype.name}_{dst.dtype.name}"
        if flat:
            fn = _compile(_unary_flat, tag, _flat_types(src, dst), par, _f=f)
        else:
            fn = _compile(_unary_nd, tag, _nd_types(src, dst), par, _f=f,
                          _rows=instance(_unary_flat, tag, _f=f, inline=True))
        _ENTRY[key] = fn
    if flat:
        src, dst = src.reshape(n), dst.reshape(n)
    _run(fn, par, n, src, dst)


def fill_nd(dst, value):
    """dst[...] = value; dst: 4-D, any strides; value: a scalar (stored as dst's dtype)."""
    n = _check_nd("fill_nd", dst)
    if not n:
        return
    par = n > SERIAL_MAX
    # NOTE: a contiguous dst (a fresh zeros/ones) takes the flat loop: the nd span is
    # compiled only for programs that fill strided views.
    flat = dst.flags.c_contiguous
    key = ("fill", dst.dtype, flat, par)
    fn = _ENTRY.get(key)
    if fn is None:
        tag = dst.dtype.name
        if flat:
            fn = _compile(_fill_flat, tag, [array(dst.dtype, 1, "C"), scalar(dst.dtype)], par)
        else:
            sig = [array(dst.dtype, 4, "A"), scalar(dst.dtype)]
            fn = _compile(_fill_nd, tag, sig, par, _rows=instance(_fill_flat, tag, inline=True))
        _ENTRY[key] = fn
    if flat:
        dst = dst.reshape(n)
    _run(fn, par, n, dst, value)


def axpby(a, x, b, y, out):
    """out = a*x + b*y, rounded after each operation (no fused multiply-add).

    x, y, out: 1-D C-contiguous float32/float64, same length (out may be x
    or y); a, b: scalars, rounded to that dtype.
    """
    n = _check_flat("axpby", x, y, out)
    if x.dtype != out.dtype or y.dtype != out.dtype or out.dtype.kind != "f":
        raise TypeError(f"axpby: expected one float dtype, got {x.dtype}, {y.dtype}, {out.dtype}")
    if not n:
        return
    par = n > SERIAL_MAX
    key = ("axpby", out.dtype, par)
    fn = _ENTRY.get(key)
    if fn is None:
        s = scalar(out.dtype)
        tx, ty, to = _flat_types(x, y, out)
        fn = _ENTRY[key] = _compile(_axpby_flat, out.dtype.name, [s, tx, s, ty, to], par)
    t = out.dtype.type
    _run(fn, par, n, t(a), x, t(b), y, out)


def serial_loop(what, code, a, out):
    """The serial loop ``binary`` / ``binary_scalar`` / ``unary`` (``what``) runs for op ``code``
    on ``a``'s and ``out``'s dtypes, checked once here, for callers that launch many tiny ops.

    Call it as ``f(a, b, out, 0, n)`` (binary), ``f(a, s, out, 0, n)`` (binary_scalar, ``s`` a
    numpy scalar of a's dtype) or ``f(a, out, 0, n)`` (unary). NOTE: the caller guarantees
    what the checked entry points verify: 1-D C-contiguous arrays of exactly these dtypes
    (``b`` too), at least ``n`` elements each, ``n`` <= ``SERIAL_MAX``.
    """
    n = out.shape[0]
    if not _flat2(a, out, n):
        _check_flat(what, a, out)
    if what == "binary":
        return _binary_entry(code, a, a, out, "flat", False)
    if what == "binary_scalar":
        return _binary_entry(code, a, None, out, "scalar", False)
    if what == "unary":
        return _unary_entry(code, a, out, False, False)
    raise ValueError(f"serial_loop: unknown entry point {what!r}")
