"""Indexing: ``t[...]`` (views for basic indices, copies for integer/bool indices), ``t[...] = v``,
index_select, gather, scatter_add, masked_select, nonzero."""
import numpy as np

from .. import dtypes as D
from ..tensor import Tensor
from .alloc import data, empty, kernels, norm_dim, view_of
from .pointwise import as_array, copy_into
from .record import check_inplace, needs_grad, record, sum_to


def _as_index(op, x):
    """A numpy-style index: ints, slices, None, Ellipsis, or int64/bool arrays from tensors/lists."""
    if isinstance(x, Tensor):
        a = data(x, op)
        if a.dtype.kind == "f":
            raise IndexError(f"{op}: tensors used as indices must be long, int or bool, got {x.dtype}")
        return a if a.dtype == np.bool_ else a.astype(np.int64, copy=False)
    if isinstance(x, (list, np.ndarray)):
        a = np.asarray(x)
        if a.dtype.kind == "f":
            raise IndexError(f"{op}: index lists must hold ints or bools, got {a.dtype}")
        return a
    if isinstance(x, (bool, np.bool_)):
        return np.array(x)
    if x is None or x is Ellipsis or isinstance(x, (int, np.integer, slice)):
        return x
    raise IndexError(f"{op}: only ints, slices, None, ..., and long/bool tensors are valid "
                     f"indices, got {type(x).__name__}")


def _normalise(op, idx):
    items = idx if isinstance(idx, tuple) else (idx,)
    return tuple(_as_index(op, i) for i in items)


def _is_basic(items):
    return all(i is None or i is Ellipsis or isinstance(i, (int, np.integer, slice)) for i in items)


def getitem(input, idx):
    """``input[idx]``: a view for ints/slices/None/...; a copy for integer or bool tensors."""
    a = data(input, "getitem")
    items = _normalise("getitem", idx)
    try:
        if _is_basic(items):
            out = view_of(input, a[_with_ellipsis(items)])
        else:
            out = _advanced_get(input, a, items)
    except IndexError as e:
        raise IndexError(f"getitem: index {idx!r} is invalid for a tensor of shape "
                         f"{tuple(a.shape)}: {e}") from None
    if needs_grad(input):
        shape, dt = input.shape, input.dtype

        def backward(g):
            from .creation import zeros
            gi = zeros(shape, dtype=dt)
            _scatter_into(gi._a, items, data(g, "backward"))
            return (gi,)
        record(out, "IndexBackward0" if not _is_basic(items) else "SliceBackward0", (input,), backward)
    return out


def _advanced_get(input, a, items):
    if len(items) == 1 and isinstance(items[0], np.ndarray) and items[0].dtype == np.bool_ \
            and items[0].shape == a.shape:
        return _masked_select_arrays(input, a, items[0])
    if len(items) == 1 and isinstance(items[0], np.ndarray) and items[0].dtype != np.bool_ \
            and a.ndim >= 1:
        ix = items[0]
        flat = _check_range("getitem", ix.reshape(-1), a.shape[0], 0)
        sel = index_select_array(input, a, 0, flat)
        return sel.reshape(tuple(ix.shape) + tuple(a.shape[1:]))
    res = a[items]     # NOTE: rare general case: numpy gathers, then the result moves into the arena
    out = empty(res.shape, input.dtype)
    copy_into(res, out._a)
    return out


def _scatter_into(dst, items, g):
    if _is_basic(items):
        dst[items] += g
    else:
        np.add.at(dst, items, g)


def _check_range(op, ix, n, dim):
    if ix.size and (ix.min() < -n or ix.max() >= n):
        bad = ix[(ix < -n) | (ix >= n)][0]
        raise IndexError(f"{op}: index {bad} is out of bounds for dim {dim} with size {n}")
    return np.where(ix < 0, ix + n, ix).astype(np.int64) if ix.size and ix.min() < 0 else \
        np.ascontiguousarray(ix, dtype=np.int64)


def _three(a, dim):
    """``a`` viewed as (O, D, I) around ``dim`` (copied into the arena if strides forbid a view)."""
    o = int(np.prod(a.shape[:dim]))
    i = int(np.prod(a.shape[dim + 1:]))
    try:
        return a.reshape((o, a.shape[dim], i), copy=False), None
    except (ValueError, TypeError):
        tmp = empty(a.shape, D.from_numpy_dtype(a.dtype))
        copy_into(a, tmp._a)
        return tmp._a.reshape(o, a.shape[dim], i), tmp


def index_select_array(input, a, dim, ix):
    """A new tensor of ``a`` (input's data) taking positions ``ix`` (valid int64) along ``dim``."""
    shape = a.shape[:dim] + (len(ix),) + a.shape[dim + 1:]
    out = empty(shape, input.dtype)
    if out._a.size:
        v, keep = _three(a, dim)
        kernels().index_select_3d(v, ix, out._a.reshape(v.shape[0], len(ix), v.shape[2]))
    return out


def index_select(input, dim, index):
    """Entries of ``input`` at positions ``index`` (1-D long tensor) along ``dim``."""
    a = data(input, "index_select")
    d = norm_dim("index_select", dim, a.ndim)
    if not isinstance(index, Tensor) or index.dtype not in (D.int64, D.int32):
        raise TypeError(f"index_select: index must be a long or int tensor, got "
                        f"{getattr(index, 'dtype', type(index).__name__)}")
    if index.ndim > 1:
        raise ValueError(f"index_select: index must be 1-D, got shape {tuple(index.shape)}")
    aa = a if a.ndim else a.reshape(1)
    ix = _check_range("index_select", data(index, "index_select").reshape(-1), aa.shape[d], d)
    out = index_select_array(input, aa, d, ix)
    if a.ndim == 0:
        out = out.reshape(())
    if needs_grad(input):
        shape = input.shape

        def backward(g):
            from .creation import zeros
            gi = zeros(shape, dtype=g.dtype)
            ga = gi._a if gi.ndim else gi._a.reshape(1)
            gg = data(g, "backward")
            gg = gg if gg.ndim else gg.reshape(1)
            o3 = ga.reshape(int(np.prod(ga.shape[:d])), ga.shape[d], -1)
            s3, keep = _three(gg, d)
            kernels().index_add_3d(o3, ix, s3)
            return (gi,)
        record(out, "IndexSelectBackward0", (input,), backward)
    return out


def _gather_views(op, input, dim, index):
    a = data(input, op)
    d = norm_dim(op, dim, a.ndim)
    if not isinstance(index, Tensor) or index.dtype is not D.int64:
        raise TypeError(f"{op}: index must be a long tensor, got {getattr(index, 'dtype', type(index).__name__)}")
    ix = data(index, op)
    if ix.ndim != a.ndim:
        raise ValueError(f"{op}: index needs as many dims as input ({a.ndim}), got {ix.ndim}")
    for k in range(a.ndim):
        if k != d and ix.shape[k] > a.shape[k]:
            raise ValueError(f"{op}: index shape {tuple(ix.shape)} is larger than input shape "
                             f"{tuple(a.shape)} at dim {k}")
    if ix.size and (ix.min() < 0 or ix.max() >= a.shape[d]):
        raise IndexError(f"{op}: index out of range for dim {d} with size {a.shape[d]}")
    return a, d, ix


def gather(input, dim, index):
    """out[i][j][k] = input[i][index[i][j][k]][k] (for dim=1), shaped like ``index``."""
    a, d, ix = _gather_views("gather", input, dim, index)
    out = empty(ix.shape, input.dtype)
    if out._a.size:
        sub = a[tuple(slice(0, ix.shape[k]) if k != d else slice(None) for k in range(a.ndim))]
        x3, k1 = _three(sub, d)
        i3, k2 = _three(ix, d)
        kernels().gather_3d(x3, i3, out._a.reshape(i3.shape))
    if needs_grad(input):
        shape = input.shape
        record(out, "GatherBackward0", (input,),
               lambda g: (scatter_add_zeros(shape, d, index, g),), saved=[index])
    return out


def scatter_add_zeros(shape, dim, index, src):
    """A zeros tensor of ``shape`` with ``src`` added at ``index`` along ``dim``."""
    from .creation import zeros
    out = zeros(shape, dtype=src.dtype)
    return scatter_add_(out, dim, index, src)


def scatter_add_(input, dim, index, src):
    """input[..., index[...], ...] += src along ``dim``, in place (duplicates accumulate)."""
    check_inplace("scatter_add_", input)
    a, d, ix = _gather_views("scatter_add_", input, dim, index)
    s = data(src, "scatter_add_")
    if ix.size:
        s = s[tuple(slice(0, n) for n in ix.shape)]
        if not a.flags.c_contiguous:
            raise ValueError("scatter_add_: input must be contiguous")
        o3 = a.reshape(int(np.prod(a.shape[:d])), a.shape[d], -1)
        if tuple(ix.shape) != tuple(a.shape[:d]) + (ix.shape[d],) + tuple(a.shape[d + 1:]):
            # NOTE: index smaller than input off-dim: scatter through numpy on a view
            sl = tuple(slice(0, ix.shape[k]) if k != d else slice(None) for k in range(a.ndim))
            view = a[sl]
            np.add.at(view, tuple(ix if k == d else np.indices(ix.shape)[k] for k in range(a.ndim)), s)
        else:
            i3, k1 = _three(ix, d)
            s3, k2 = _three(s, d)
            kernels().scatter_add_3d(o3, i3, s3)
    input._s.version += 1
    return input


def scatter_add(input, dim, index, src):
    """Out-of-place ``scatter_add_``."""
    return scatter_add_(input.clone(), dim, index, src)


def _masked_select_arrays(input, a, m):
    K = kernels()
    mf = np.ascontiguousarray(m).reshape(-1)
    cnt = np.zeros(1, np.int64)
    K.mask_count(mf, cnt)
    out = empty((int(cnt[0]),), input.dtype)
    src = a if a.flags.c_contiguous else input.contiguous()._a
    if out._a.size:
        K.masked_select(src.reshape(-1), mf, out._a)
    return out


def masked_select(input, mask):
    """1-D tensor of the elements of ``input`` where the (broadcastable) bool ``mask`` is True."""
    if not isinstance(mask, Tensor) or mask.dtype is not D.bool_:
        raise TypeError("masked_select: mask must be a bool tensor")
    from .layout import broadcast_shapes
    shape = broadcast_shapes("masked_select", input.shape, mask.shape)
    x = input.expand(shape).contiguous() if tuple(input.shape) != shape else input
    m = data(mask, "masked_select")
    m = np.broadcast_to(m, shape)
    out = _masked_select_arrays(x, data(x, "masked_select"), m)
    if needs_grad(input):
        def backward(g):
            from .creation import zeros
            gi = zeros(shape, dtype=g.dtype)
            gi._a[m] = data(g, "backward")
            return (sum_to(gi, input.shape),)
        record(out, "MaskedSelectBackward0", (input,), backward)
    return out


def nonzero(input, *, as_tuple=False):
    """Indices of the nonzero elements: an (n, ndim) long tensor, or a tuple of 1-D ones."""
    from .creation import tensor
    idx = np.nonzero(data(input, "nonzero") if input.ndim else data(input, "nonzero").reshape(1))
    if as_tuple:
        return tuple(tensor(i.astype(np.int64)) for i in idx)
    return tensor(np.stack(idx, axis=1).astype(np.int64).reshape(-1, max(input.ndim, 1)))


def setitem(input, idx, value):
    """``input[idx] = value`` in place (value a number or broadcastable tensor)."""
    check_inplace("setitem", input)
    a = data(input, "setitem")
    items = _normalise("setitem", idx)
    if isinstance(value, Tensor):
        v = data(value, "setitem")
    else:
        v, _ = as_array(value, input.dtype, "setitem")
    try:
        if _is_basic(items):
            copy_into(np.asarray(v), a[_with_ellipsis(items)])
        else:
            a[items] = v
    except (IndexError, ValueError) as e:
        raise type(e)(f"setitem: cannot assign a value of shape {tuple(np.shape(v))} to index "
                      f"{idx!r} of a tensor of shape {tuple(a.shape)}: {e}") from None
    input._s.version += 1
    if needs_grad(input, value):
        vshape = value.shape if isinstance(value, Tensor) else None

        def backward(g):
            gi = g.clone()
            gi._a[items] = 0
            gv = sum_to(getitem(g, items), vshape) if vshape is not None else None
            return gi, gv
        record(input, "CopySlices", (input, value), backward)


def _with_ellipsis(items):
    """Basic index items that always give a view (a trailing ... keeps 0-d results arrays)."""
    return items if any(i is Ellipsis for i in items) else items + (Ellipsis,)
