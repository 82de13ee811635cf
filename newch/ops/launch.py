"""Launching elementwise kernels: dtype casts, scalar operands, flat and broadcast paths."""
import numpy as np

from .. import dtypes as D
from ..tensor import Tensor
from .alloc import data, empty, is_scalar, kernels
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
        raise RuntimeError(f"{op}: value {bad[0]} cannot be converted to type {dt.name} without overflow")


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
    if out.size == 0:
        return
    K = kernels()
    if xa.flags.c_contiguous:
        K.unary(code, xa.reshape(-1), out.reshape(-1))
    else:
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


def _same_layout(a, b):
    """Arrays of one dtype and shape, both C-contiguous (the common case in a training step)."""
    return (a.shape == b.shape and a.dtype == b.dtype and a.ndim
            and a.flags.c_contiguous and b.flags.c_contiguous)


def binary(op, code, a, b, out_dtype=None, compute_dtype=None):
    """A new tensor ``code(a, b)``: promote, broadcast, launch."""
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        A, B = data(a, op), data(b, op)
        # NOTE: fast path, no promotion or broadcasting to work out (two equal dtypes promote
        # to themselves).
        if _same_layout(A, B) and (compute_dtype is None or compute_dtype is a.dtype):
            out = empty(A.shape, out_dtype or a.dtype)
            kernels().binary(code, A.reshape(-1), B.reshape(-1), out._a.reshape(-1))
            return out
    dt = compute_dtype or operand_dtype(op, a, b)
    A, ka = as_array(a, dt, op)
    B, kb = as_array(b, dt, op)
    shape = broadcast_shapes(op, getattr(A, "shape", ()), getattr(B, "shape", ()))
    out = empty(shape, out_dtype or dt)
    launch_binary(code, A, B, out._a)
    return out
