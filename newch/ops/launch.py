"""Launching elementwise kernels: dtype casts, scalar operands, flat and broadcast paths."""
import numpy as np

from .. import dtypes as D
from ..tensor import Tensor
from ..context import default_context
from ..errors import IntegerOverflow
from .alloc import SERIAL, data, empty, is_scalar, kernels
from .layout import broadcast_shapes, nd_views
from ..kernels import codes as C

# ops whose scalar-on-the-left form is the same op, or another code, with operands swapped
_SWAPPED = {C.ADD: C.ADD, C.MUL: C.MUL, C.MAXIMUM: C.MAXIMUM, C.MINIMUM: C.MINIMUM,
            C.EQ: C.EQ, C.NE: C.NE, C.LT: C.GT, C.GT: C.LT, C.LE: C.GE, C.GE: C.LE,
            C.LOGICAL_AND: C.LOGICAL_AND, C.LOGICAL_OR: C.LOGICAL_OR, C.LOGICAL_XOR: C.LOGICAL_XOR,
            C.BITWISE_AND: C.BITWISE_AND, C.BITWISE_OR: C.BITWISE_OR, C.BITWISE_XOR: C.BITWISE_XOR,
            C.SUB: C.RSUB, C.DIV: C.RDIV, C.POW: C.RPOW, C.RSUB: C.SUB, C.RDIV: C.DIV, C.RPOW: C.POW}


def operand_dtype(op, a, b):
    """The promoted dtype of a binary op's operands (tensors and/or Python scalars)."""
    dimmed, zerodim, scalars = [], [], []
    for x in (a, b):
        if isinstance(x, Tensor):
            (dimmed if x._a.ndim else zerodim).append(x.dtype)
        elif is_scalar(x):
            scalars.append(x)
        else:
            raise TypeError(f"{op}: expected Tensor or number operands, got {type(x).__name__}")
    if not dimmed and not zerodim:
        raise TypeError(f"{op}: expected at least one Tensor, got {type(a).__name__} and "
                        f"{type(b).__name__}")
    return D.result_type(dimmed, zerodim, scalars)


def cast(t, dtype, op="to"):
    """``t`` converted to ``dtype`` (a new temporary), or ``t`` itself if it already is."""
    a = data(t, op)
    if a.dtype == dtype.np:
        return t
    out = empty(a.shape, dtype)
    copy_into(a, out._a)
    return out


def copy_into(src, dst):
    """Copy array ``src`` (broadcastable) into array ``dst`` (any strides), converting dtype."""
    if dst.size == 0:
        return
    for s, d in nd_views(dst.shape, [src, dst]):
        kernels().copy_nd(s, d)


def contiguous_array(a, keep):
    """``a`` if C-contiguous, else a C-contiguous copy in arena scratch.

    The scratch tensor is appended to ``keep``, a list the caller holds until the kernel that
    reads the copy has run (the copy's bytes are the arena's, and go back when it dies).
    """
    if a.flags.c_contiguous:
        return a
    t = empty(a.shape, D.from_numpy_dtype(a.dtype))
    copy_into(a, t._a)
    keep.append(t)
    return t._a


def check_fits(op, values, dt):
    """Refuse Python numbers an integer dtype cannot hold, as PyTorch does when writing them
    (``tensor``, ``full``, ``fill_``, ``x[i] = v``): nan, inf, floats outside its range, and
    ints above its maximum or below its minimum (uint8 wraps ints down to -255).
    Tensor casts (``.long()``) do not come here: they never raise."""
    if dt.is_floating_point or dt is D.bool_:
        return
    arr = np.asarray(values)
    if arr.size == 0 or arr.dtype.kind not in "iufO":
        return
    info = np.iinfo(dt.np)
    if arr.dtype.kind == "f":
        bad = arr[~np.isfinite(arr)]
        if not bad.size:
            # NOTE: compare as Python numbers, exact: float(2**63 - 1) rounds up to 2**63
            lo, hi = float(arr.min()), float(arr.max())
            bad = [v for v in (lo, hi) if v < info.min or v > info.max]
    else:
        low = info.min if dt.is_signed else -info.max      # NOTE: uint8 wraps -255..-1, as PyTorch
        lo, hi = int(arr.min()), int(arr.max())
        bad = [v for v in (lo, hi) if v < low or v > info.max]
    if len(bad):
        raise IntegerOverflow(f"{op}: value {bad[0]} cannot be converted to type {dt.name} "
                              "without overflow")


def as_array(x, dtype, op):
    """(array or numpy scalar, keep-alive) of operand ``x`` in ``dtype``."""
    if isinstance(x, Tensor):
        t = cast(x, dtype, op)
        a = t._a
        if a.ndim == 0:
            return dtype.np.type(a[()]), t
        return a, t
    if dtype is D.bool_:
        return np.bool_(x), None
    if not dtype.is_floating_point:
        # NOTE: like PyTorch, an int that does not fit wraps around (uint8: -1 -> 255)
        return np.array(int(x), np.int64).astype(dtype.np)[()], None
    return dtype.np.type(x), None


def launch_unary(code, xa, out):
    """out = code(xa) elementwise; ``out`` a fresh C-contiguous array of xa's shape."""
    n = out.size
    if n == 0:
        return
    if xa.flags.c_contiguous:
        if xa.ndim != 1:
            xa, out = xa.reshape(-1), out.reshape(-1)
        if n <= SERIAL:
            _serial_loop(default_context().kernels, "unary", code, xa, out)(xa, out, 0, n)
        else:
            kernels().unary(code, xa, out)
        return
    K = kernels()
    for xv, ov in nd_views(out.shape, [xa, out]):
        K.unary_nd(code, xv, ov)


def _scalar_of(X):
    """X's value if X is a scalar or an array of one value repeated (0-d, or all strides 0)."""
    if isinstance(X, np.ndarray) and not any(X.strides):
        return X[(0,) * X.ndim] if X.size else X
    return X


def launch_binary(code, A, B, out):
    """out = code(A, B) with broadcasting; A/B arrays or numpy scalars, out C-contiguous."""
    if out.size == 0:
        return
    if out.ndim == 0:
        out = out.reshape(1)
    K = kernels()
    A, B = _scalar_of(A), _scalar_of(B)
    sa, sb = not isinstance(A, np.ndarray), not isinstance(B, np.ndarray)
    if sa and sb:
        # NOTE: one value to compute: compute it once, then fill (no nd kernel for a broadcast
        # of two scalars, such as the backward of mean()).
        first = out.reshape(-1)[:1]
        if isinstance(A, np.generic) and A.dtype == out.dtype:
            first[0] = A       # NOTE: the value read in place (no numpy temporary for it)
            K.binary_scalar(code, first, B, first)
        else:
            K.binary_scalar(code, np.full((1,), A), B, first)
        if out.size > 1:
            K.fill_nd(out.reshape((1, 1, 1, -1)), first[0])
        return
    if sb and A.flags.c_contiguous and A.shape == out.shape:
        K.binary_scalar(code, A.reshape(-1), B, out.reshape(-1))
        return
    if sa and code in _SWAPPED and B.flags.c_contiguous and B.shape == out.shape:
        K.binary_scalar(_SWAPPED[code], B.reshape(-1), A, out.reshape(-1))
        return
    if sa:
        A = np.full((1,), A)
    if sb:
        B = np.full((1,), B)
    if A.shape == B.shape == out.shape and A.flags.c_contiguous and B.flags.c_contiguous:
        K.binary(code, A.reshape(-1), B.reshape(-1), out.reshape(-1))
        return
    for av, bv, ov in nd_views(out.shape, [A, B, out]):
        K.binary_nd(code, av, bv, ov)


def binary(op, code, a, b, out_dtype=None, compute_dtype=None):
    """A new tensor ``code(a, b)``: promote, broadcast, launch."""
    if isinstance(a, Tensor):
        A = a._a
        if b is a:
            # NOTE: ``x + x``, ``x * x``: one tensor, its liveness and layout checked once
            if (A.ndim and a._s.gen.alive and A.flags.c_contiguous
                    and (compute_dtype is None or compute_dtype.np == A.dtype)):
                return _flat_binary(code, A, A, out_dtype or a.dtype)
        if isinstance(b, Tensor):
            B = b._a
            # NOTE: fast path, no promotion or broadcasting to work out (two equal dtypes
            # promote to themselves): same shape and dtype, both C-contiguous, both alive.
            # (``x + x``, ``x * x``: one array, its layout checked once)
            if (A.shape == B.shape and A.dtype == B.dtype and A.ndim and a._s.gen.alive
                    and b._s.gen.alive and A.flags.c_contiguous
                    and (B is A or B.flags.c_contiguous)
                    and (compute_dtype is None or compute_dtype.np == A.dtype)):
                return _flat_binary(code, A, B, out_dtype or a.dtype)
            if (A.dtype == B.dtype and a._s.gen.alive and b._s.gen.alive
                    and (compute_dtype is None or compute_dtype.np == A.dtype)
                    and A.dtype.kind != "b" and A.ndim and B.ndim):
                # NOTE: one dtype with dims on both sides (a bias add): it is the result dtype,
                # only the broadcast remains to work out
                out = empty(broadcast_shapes(op, A.shape, B.shape),
                            out_dtype or D.from_numpy_dtype(A.dtype))
                launch_binary(code, A, B, out._a)
                return out
        elif type(b) is float or type(b) is int:
            # NOTE: fast path, float tensor (with dims) op Python float or int (not bool): the
            # tensor's dtype wins and the number converts as ``as_array`` converts it.
            if (A.ndim and a._s.gen.alive and A.flags.c_contiguous and A.dtype.kind == "f"
                    and (compute_dtype is None or compute_dtype.np == A.dtype)):
                return _flat_scalar(code, A, A.dtype.type(b), out_dtype)
    dt = compute_dtype or operand_dtype(op, a, b)
    A, ka = as_array(a, dt, op)
    B, kb = as_array(b, dt, op)
    shape = broadcast_shapes(op, getattr(A, "shape", ()), getattr(B, "shape", ()))
    out = empty(shape, out_dtype or dt)
    launch_binary(code, A, B, out._a)
    return out


_LOOPS = {}     # (kernel namespace id, entry point, code, dtype, out dtype) -> serial loop


def _serial_loop(K, what, code, a, out):
    """The kernels' checked-once serial loop for ``what`` on a's and out's dtypes (cached).

    Its callers here guarantee the layout it trusts: 1-D C-contiguous arrays of the dtypes
    of the key, ``n`` <= ``SERIAL`` elements.
    """
    key = (id(K), what, code, a.dtype, out.dtype)
    f = _LOOPS.get(key)
    if f is None:
        f = _LOOPS[key] = K.serial_loop(what, code, a, out)
    return f


_FLAT = {}      # (code, out dtype, operand dtype) -> (kernel namespace, its serial binary loop)


def _flat_binary(code, A, B, out_dtype):
    """``code(A, B)`` into a new tensor of ``out_dtype``; A, B alive, C-contiguous, one shape
    and dtype."""
    ctx = default_context()
    n = A.size
    # NOTE: alloc.empty inlined (the default context looked up once for memory and kernels)
    odt = out_dtype.np
    if ctx._local.persistent:
        st = ctx.pool.alloc(n * odt.itemsize)
        o = np.ndarray(A.shape, odt, st.buf)
    else:
        st = ctx.arena.alloc(n * odt.itemsize)
        o = np.ndarray(A.shape, odt, st.block, st.offset)
    out = Tensor._make(o, st)
    if A.ndim != 1:
        if not n:
            return out
        A, B, o = A.reshape(-1), B.reshape(-1), o.reshape(-1)
    if n <= SERIAL:
        if n:
            f = _FLAT.get((code, odt, A.dtype))
            if f is None or f[0] is not ctx.kernels:
                f = _FLAT[(code, odt, A.dtype)] = (
                    ctx.kernels, _serial_loop(ctx.kernels, "binary", code, A, o))
            f[1](A, B, o, 0, n)
    else:
        ctx.apply_threads()
        ctx.kernels.binary(code, A, B, o)
    return out


def _flat_scalar(code, A, s, out_dtype):
    """``code(A, s)`` into a new tensor; A alive and C-contiguous, s a scalar of its dtype."""
    out = empty(A.shape, out_dtype or D.from_numpy_dtype(A.dtype))
    n = A.size
    if A.ndim != 1:
        if not n:
            return out
        A, o = A.reshape(-1), out._a.reshape(-1)
    else:
        o = out._a
    if n <= SERIAL:
        if n:
            _serial_loop(default_context().kernels, "binary_scalar", code, A, o)(A, s, o, 0, n)
    else:
        kernels().binary_scalar(code, A, s, o)
    return out
