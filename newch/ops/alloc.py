"""Allocating op outputs and checking op inputs: the ground floor every op stands on."""
import math
from numbers import Number

import numpy as np

from .. import dtypes as D
from ..context import default_context
from ..errors import NcError
from ..tensor import Tensor


def kernels():
    """The default context's kernel namespace, with its thread count applied."""
    ctx = default_context()
    ctx.apply_threads()
    return ctx.kernels


# NOTE: at most this many elements, elementwise ops call the kernels' serial loop directly
# (``serial_loop``; below their SERIAL_MAX): no thread pool, no thread count to apply.
SERIAL = 4096


def empty(shape, dtype, persistent=False):
    """A new uninitialised tensor: temporary, or persistent inside ``persistent()``."""
    n = dtype.itemsize
    for s in shape:
        n *= s
    ctx = default_context()
    if persistent or ctx._local.persistent:
        st = ctx.pool.alloc(n)
        return Tensor._make(np.ndarray(shape, dtype.np, st.buf), st)
    st = ctx.arena.alloc(n)
    # NOTE: one numpy call (not slice + view + reshape): C-contiguous over the storage's bytes
    return Tensor._make(np.ndarray(shape, dtype.np, st.block, st.offset), st)


def scratch(n, np_dtype):
    """(a 1-D numpy array of ``n`` elements of ``np_dtype`` from the arena, its storage):
    kernel scratch with no tensor around it. Keep the storage referenced while the array
    is in use; its bytes go back to the arena when the storage is dropped.
    """
    st = default_context().arena.alloc(n * np_dtype.itemsize)
    return np.ndarray((n,), np_dtype, st.block, st.offset), st


def empty_with_scratch(shape, dtype, n, scratch_dtype):
    """(a new tensor, a scratch array of ``n`` elements of numpy ``scratch_dtype``) from one
    allocation: the scratch sits after the tensor's bytes (64-byte aligned) and its memory
    goes back with the tensor's. For small scratch a kernel needs beside a small result
    (the partial sums of a whole-tensor reduction): one allocation instead of two.
    """
    head = dtype.itemsize
    for s in shape:
        head *= s
    head = (head + 63) & -64
    total = head + n * np.dtype(scratch_dtype).itemsize
    ctx = default_context()
    if ctx._local.persistent:
        st = ctx.pool.alloc(total)
        buf, off = st.buf, 0
    else:
        st = ctx.arena.alloc(total)
        buf, off = st.block, st.offset
    out = Tensor._make(np.ndarray(shape, dtype.np, buf, off), st)
    return out, np.ndarray((n,), scratch_dtype, buf, off + head)


def empty_like_array(a, dtype=None):
    """A new temporary tensor with the shape of array ``a``."""
    return empty(a.shape, dtype or D.from_numpy_dtype(a.dtype))


def making_persistent():
    """True inside ``persistent()``: every result made now must be persistent."""
    return default_context().persistent_depth > 0


def view_of(t, array):
    """A tensor sharing ``t``'s storage, seeing ``array`` (a numpy view of t's data).

    Inside ``persistent()`` a view of a temporary would die at ``step_end()``
    with its base, so it is a persistent copy of ``array`` instead: every view
    op (reshape, ``x[0]``, ``.T``, detach, expand...) comes through here.
    """
    if t._s.views is None and making_persistent():
        data(t, "persistent copy")
        return persistent_copy_of(array, t.dtype)
    return Tensor._make(array, t._s)


def persistent_copy_of(array, dtype):
    """A new persistent tensor holding a copy of numpy ``array`` (checked alive by the caller)."""
    # NOTE: copy_into lives in pointwise, which imports this module
    from .launch import copy_into
    out = empty(array.shape, dtype, persistent=True)
    copy_into(array, out._a)
    return out


def stale(t, op):
    """The NcError for reading a tensor whose memory was freed."""
    g = t._s.gen
    if g.how == "release()":
        why = "it was freed by release()"
    else:
        why = f"it was a temporary of step {g.step} and was freed by that step's step_end()"
    return NcError(
        f"{op}: this tensor (shape {tuple(t._a.shape)}, {t.dtype}) can no longer be used: {why}. "
        f"Take values out before step_end() (.item(), .tolist(), .numpy()), or create it inside "
        f"`with newch.persistent():` to keep it across steps.")


def data(t, op):
    """``t``'s numpy array after checking it is still alive."""
    if not t._s.gen.alive:
        raise stale(t, op)
    return t._a


def check_writable(op, t):
    """Refuse writing into ``t`` when its memory cannot take it: an expanded tensor (several
    elements share one address) or a read-only one (a view of a read-only numpy array)."""
    a = t._a
    if any(st == 0 and n > 1 for n, st in zip(a.shape, a.strides)):
        raise RuntimeError(f"{op}: unsupported operation: more than one element of the written-to "
                           f"tensor refers to a single memory location (it is expanded, shape "
                           f"{tuple(a.shape)}, strides {a.strides}). Please clone() the tensor "
                           f"before performing the operation.")
    if not a.flags.writeable:
        raise RuntimeError(f"{op}: the tensor is read-only (it shares the memory of a read-only "
                           f"numpy array); clone() it before writing to it")


def check_tensor(op, t, name="input"):
    if not isinstance(t, Tensor):
        raise TypeError(f"{op}: {name} must be a Tensor, got {type(t).__name__}")
    return t


def is_scalar(x):
    return isinstance(x, (Number, np.number, np.bool_)) and not isinstance(x, Tensor)


def norm_dim(op, dim, ndim):
    """Turn a possibly negative ``dim`` into 0..ndim-1, or IndexError naming the range."""
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
        raise TypeError(f"{op}: dim must be an int, got {type(dim).__name__}")
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"{op}: dim {dim} is out of range for a tensor of {ndim} dims "
                         f"(expected {-n} to {n - 1})")
    return int(dim) % n


def norm_dims(op, dim, ndim):
    """A sorted tuple of distinct normalised dims from an int, a sequence or None (all)."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (list, tuple)):
        if not dim:     # NOTE: as in PyTorch's sum / mean / var / amax: no dims listed means all
            return tuple(range(ndim))
        out = tuple(sorted(norm_dim(op, d, ndim) for d in dim))
        if len(set(out)) != len(out):
            raise ValueError(f"{op}: dim {tuple(dim)} names a dim more than once")
        return out if ndim else ()
    d = norm_dim(op, dim, ndim)       # checks the range even for a 0-d tensor (-1 and 0 are valid)
    return (d,) if ndim else ()


def norm_shape(op, shape):
    """Accept f(2, 3), f((2, 3)), f([2, 3]) or f(Size) and return a tuple of ints >= 0."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    out = []
    for s in shape:
        if isinstance(s, Tensor) and s.numel() == 1:
            s = s.item()
        if not isinstance(s, (int, np.integer)) or isinstance(s, bool):
            raise TypeError(f"{op}: sizes must be ints, got {type(s).__name__} in {tuple(shape)}")
        if s < 0:
            raise ValueError(f"{op}: negative size {s} in shape {tuple(shape)}")
        out.append(int(s))
    return tuple(out)


def numel(shape):
    return math.prod(shape)


def need_float(op, t):
    if not t.dtype.is_floating_point:
        raise TypeError(f"{op}: expected a floating point tensor, got {t.dtype}")
