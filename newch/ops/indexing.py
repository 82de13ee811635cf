"""Indexing: ``t[...]`` (views for basic indices, copies for integer/bool indices), ``t[...] = v``,
index_select, gather, scatter_add, masked_select, nonzero."""
import numpy as np

from .. import dtypes as D
from ..tensor import Tensor
from .alloc import check_writable, data, empty, kernels, norm_dim, view_of
from .layout import broadcast_shapes, reshape_view
from .launch import as_array, check_fits, copy_into
from .overlap import any_overlap, overlap_error, partial_overlap
from .record import check_inplace, needs_grad, record, sum_to
from .creation import arange
from .creation import tensor
from .creation import zeros

__all__ = ["gather", "index_select", "masked_select", "nonzero", "scatter_add", "scatter_add_", "select"]
# also bound as Tensor methods (ops/methods.py):
TENSOR_METHODS = [
    "gather", "index_select", "masked_select", "nonzero", "scatter_add", "scatter_add_", "select"
]


def _as_index(op, x):
    """A numpy-style index: ints, slices, None, Ellipsis, or int64/bool arrays from tensors/lists."""
    if isinstance(x, Tensor):
        a = data(x, op)
        if a.dtype.kind == "f":
            raise IndexError(f"{op}: tensors used as indices must be long, int or bool, got {x.dtype}")
        return a     # NOTE: numpy indexes with any integer dtype: no int64 copy outside the arena
    if isinstance(x, (list, np.ndarray)):
        a = np.asarray(x) if isinstance(x, np.ndarray) or len(x) else np.zeros(0, np.int64)
        if a.dtype.kind == "f":
            raise IndexError(f"{op}: index lists must hold ints or bools, got {a.dtype}")
        return a
    if isinstance(x, (bool, np.bool_)):
        return np.array(x)
    if isinstance(x, slice) and x.step is not None and x.step <= 0:
        raise ValueError(f"{op}: slice step must be positive, got {x.step} (PyTorch has no "
                         f"negative steps; use flip)")
    if x is None or x is Ellipsis or isinstance(x, (int, np.integer, slice)):
        return x
    raise IndexError(f"{op}: only ints, slices, None, ..., and long/bool tensors are valid "
                     f"indices, got {type(x).__name__}")


def _sequence_as_tuple(idx):
    """PyTorch (like numpy before 1.23) reads a list holding lists, tensors, slices, None or ...
    as a tuple of indices: ``x[[[0, 1], [1, 0]]]`` is ``x[[0, 1], [1, 0]]``."""
    if isinstance(idx, list) and len(idx) < 32 and any(
            isinstance(i, (list, tuple, Tensor, slice)) or i is None or i is Ellipsis for i in idx):
        return tuple(idx)
    return idx


def _normalise(op, idx):
    items = idx if isinstance(idx, tuple) else (idx,)
    return tuple(_as_index(op, i) for i in items)


def _is_basic(items):
    return all(i is None or i is Ellipsis or isinstance(i, (int, np.integer, slice)) for i in items)


def getitem(input, idx):
    """``input[idx]``: a view for ints/slices/None/...; a copy for integer or bool tensors."""
    a = data(input, "getitem")
    idx = _sequence_as_tuple(idx)
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
        template, tensors = _split_index("getitem", idx)

        def backward(g, *ts):
            gi = zeros(shape, dtype=dt)
            _scatter_into(gi, _normalise("backward", _join_index(template, ts)), g)
            if needs_grad(g):     # create_graph=True: the scatter is differentiable in g
                record(gi, "IndexBackwardBackward0", (g,),
                       lambda h, *us: (getitem(h, _join_index(template, us)),), saved=ts)
            return (gi,)
        record(out, "IndexBackward0" if not _is_basic(items) else "SliceBackward0", (input,), backward,
               saved=tensors)
    return out


class _Slot:
    """Where a tensor sat in an index: ``_join_index`` puts the saved tensor back there."""
    __slots__ = ("k",)

    def __init__(self, k):
        self.k = k


def _split_index(op, idx):
    """(template, tensors) for a backward that reads index ``idx`` again.

    Every tensor in ``idx`` becomes a slot into ``tensors`` (saved, so it is checked for
    liveness and in-place changes); lists and numpy arrays are first copied into tensors
    of their own, since the caller may change them after indexing.
    """
    is_tuple = isinstance(idx, tuple)
    template, tensors = [], []
    for i in (idx if is_tuple else (idx,)):
        if isinstance(i, (list, np.ndarray)):
            i = tensor(_as_index(op, i))
        if isinstance(i, Tensor):
            template.append(_Slot(len(tensors)))
            tensors.append(i)
        else:
            template.append(i)
    return (tuple(template), is_tuple), tensors


def _join_index(template, tensors):
    """The index ``_split_index`` took apart, with ``tensors`` in their slots."""
    items, is_tuple = template
    items = tuple(tensors[i.k] if isinstance(i, _Slot) else i for i in items)
    return items if is_tuple else items[0]


def _advanced_get(input, a, items):
    if len(items) == 1 and isinstance(items[0], np.ndarray) and items[0].dtype == np.bool_ \
            and items[0].shape == a.shape:
        return _masked_select_arrays(input, a, items[0])
    if len(items) == 1 and isinstance(items[0], np.ndarray) and items[0].dtype != np.bool_ \
            and a.ndim >= 1:
        ix = items[0]
        flat = _check_range("getitem", ix.reshape(-1), a.shape[0], 0)
        sel = index_select_array(input, a, 0, flat._a)
        return sel.reshape(tuple(ix.shape) + tuple(a.shape[1:]))
    res = a[items]     # NOTE: rare general case: numpy gathers, then the result moves into the arena
    out = empty(res.shape, input.dtype)
    copy_into(res, out._a)
    return out


def _scatter_into(gi, items, g):
    """gi[items] += g for a fresh zero tensor ``gi`` (duplicates in ``items`` accumulate)."""
    dst, ga = gi._a, data(g, "backward")
    if _is_basic(items):
        dst[_with_ellipsis(items)] += ga
        return
    if ga.size == 0:
        return
    if len(items) == 1 and isinstance(items[0], np.ndarray) and items[0].dtype == np.bool_ \
            and items[0].shape == dst.shape:
        dst[items[0]] = ga          # NOTE: a mask selects each element at most once
        return
    if len(items) == 1 and isinstance(items[0], np.ndarray) and items[0].dtype != np.bool_ \
            and dst.ndim >= 1:
        pos = _check_range("backward", items[0].reshape(-1), dst.shape[0], 0, True)
        rows = int(np.prod(dst.shape[1:]))
    else:
        # NOTE: the general case: the flat positions the forward read, found by indexing an
        # arange the same way; then one kernel adds g at them (no np.add.at scratch)
        ar = arange(dst.size, dtype=D.int64).reshape(dst.shape)
        pos = _advanced_get(ar, ar._a, items).reshape(-1)
        rows = 1
    # NOTE: the tensors (not only their arrays) stay referenced until the kernel is done:
    # an arena array whose tensor is dropped points at bytes the arena may hand out again
    copy = _contiguous_array(ga)
    src = (copy._a if copy is not None else ga).reshape(1, pos._a.shape[0], rows)
    kernels().index_put_3d(dst.reshape(1, -1, rows), pos._a, src, True)


def _check_range(op, ix, n, dim, allow_negative=True):
    """``ix`` (1-D, any int dtype) as a tensor of valid int64 positions into a dim of size
    ``n``; IndexError naming the first bad index (negatives count from the end only if
    ``allow_negative``, as in PyTorch's indexing; index_select refuses them)."""
    out = empty((ix.shape[0],), D.int64)
    bad = np.empty(1, np.int64)
    kernels().wrap_index(ix, n, allow_negative, out._a, bad)
    if bad[0] >= 0:
        lo = -n if allow_negative else 0
        raise IndexError(f"{op}: index {ix[bad[0]]} is out of bounds for dim {dim} with size {n} "
                         f"(expected {lo} to {n - 1})")
    return out


def _three(a, dim):
    """``a`` viewed as (O, D, I) around ``dim`` (copied into the arena if strides forbid a view)."""
    o = int(np.prod(a.shape[:dim]))
    i = int(np.prod(a.shape[dim + 1:]))
    v = reshape_view(a, (o, a.shape[dim], i))
    if v is None:
        tmp = empty(a.shape, D.from_numpy_dtype(a.dtype))
        copy_into(a, tmp._a)
        return tmp._a.reshape(o, a.shape[dim], i), tmp
    return v, None


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
    ix = _check_range("index_select", data(index, "index_select").reshape(-1), aa.shape[d], d,
                      allow_negative=False)
    out = index_select_array(input, aa, d, ix._a)
    if a.ndim == 0:
        out = out.reshape(())
    if needs_grad(input):
        shape = input.shape

        def backward(g, index):
            gi = zeros(shape, dtype=g.dtype)
            ga = gi._a if gi.ndim else gi._a.reshape(1)
            ix = _check_range("index_select", data(index, "backward").reshape(-1), ga.shape[d], d,
                              allow_negative=False)
            gg = data(g, "backward")
            gg = gg if gg.ndim else gg.reshape(1)
            o3 = ga.reshape(int(np.prod(ga.shape[:d])), ga.shape[d], int(np.prod(ga.shape[d + 1:])))
            s3, keep = _three(gg, d)
            kernels().index_put_3d(o3, ix._a, s3, True)
            if needs_grad(g):     # create_graph=True
                record(gi, "IndexAddBackward0", (g,), lambda h, i: (index_select(h, d, i),),
                       saved=[index])
            return (gi,)
        record(out, "IndexSelectBackward0", (input,), backward, saved=[index])
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
               lambda g, i: (scatter_add_zeros(shape, d, i, g),), saved=[index])
    return out


def scatter_add_zeros(shape, dim, index, src):
    """A zeros tensor of ``shape`` with ``src`` added at ``index`` along ``dim``."""
    out = zeros(shape, dtype=src.dtype)
    return scatter_add_(out, dim, index, src)


def scatter_add_(input, dim, index, src):
    """input[..., index[...], ...] += src along ``dim``, in place (duplicates accumulate)."""
    check_inplace("scatter_add_", input)
    a, d, ix = _gather_views("scatter_add_", input, dim, index)
    check_writable("scatter_add_", input)
    s = data(src, "scatter_add_")
    if any_overlap(a, s):
        raise overlap_error("scatter_add_")
    if ix.size:
        s = s[tuple(slice(0, n) for n in ix.shape)]
        if not a.flags.c_contiguous:
            raise ValueError("scatter_add_: input must be contiguous")
        o3 = a.reshape(int(np.prod(a.shape[:d])), a.shape[d], -1)
        if tuple(ix.shape) != tuple(a.shape[:d]) + (ix.shape[d],) + tuple(a.shape[d + 1:]):
            # NOTE: index smaller than input off-dim: scatter into an arena copy of the block it
            # covers, then copy the block back (a strided block has no 3-D view in general)
            sl = tuple(slice(0, ix.shape[k]) if k != d else slice(None) for k in range(a.ndim))
            block = empty(a[sl].shape, input.dtype)
            copy_into(a[sl], block._a)
            i3, k1 = _three(ix, d)
            s3, k2 = _three(s, d)
            kernels().scatter_add_3d(block._a.reshape(i3.shape[0], a.shape[d], i3.shape[2]), i3, s3)
            copy_into(block._a, a[sl])
        else:
            i3, k1 = _three(ix, d)
            s3, k2 = _three(s, d)
            kernels().scatter_add_3d(o3, i3, s3)
    input._s.version += 1
    if needs_grad(input, src):
        sshape, srg = tuple(src.shape), src._rg
        record(input, "ScatterAddBackward0", (input, src),
               lambda g, i: (g, _gather_grad(g, d, i, sshape) if srg else None), saved=[index])
    return input


def _gather_grad(g, dim, index, shape):
    """The gradient of scatter_add's ``src``: ``g`` gathered at ``index``, zero where src was unused."""
    gs = gather(g, dim, index)
    if tuple(gs.shape) != tuple(shape):
        full = zeros(tuple(shape), dtype=gs.dtype)
        full[tuple(slice(0, n) for n in gs.shape)] = gs
        gs = full
    return gs


def scatter_add(input, dim, index, src):
    """Out-of-place ``scatter_add_``."""
    return scatter_add_(input.clone(), dim, index, src)


def _masked_select_arrays(input, a, m):
    K = kernels()
    # NOTE: contiguous copies go to the arena, and their tensors stay referenced while the
    # kernels read them (an arena array whose tensor died points at reusable bytes)
    mt = _contiguous_array(m)
    mf = mt._a.reshape(-1) if mt is not None else m.reshape(-1)
    cnt = np.zeros(1, np.int64)
    K.mask_count(mf, cnt)
    out = empty((int(cnt[0]),), input.dtype)
    st = _contiguous_array(a)
    src = st._a if st is not None else a
    if out._a.size:
        K.masked_select(src.reshape(-1), mf, out._a)
    return out


def _contiguous_array(a):
    """None if array ``a`` is C-contiguous, else a tensor holding a contiguous copy of it."""
    if a.flags.c_contiguous:
        return None
    tmp = empty(a.shape, D.from_numpy_dtype(a.dtype))
    copy_into(a, tmp._a)
    return tmp


def masked_select(input, mask):
    """1-D tensor of the elements of ``input`` where the (broadcastable) bool ``mask`` is True."""
    if not isinstance(mask, Tensor) or mask.dtype is not D.bool_:
        raise TypeError("masked_select: mask must be a bool tensor")
    shape = broadcast_shapes("masked_select", input.shape, mask.shape)
    x = input.expand(shape).contiguous() if tuple(input.shape) != shape else input
    m = data(mask, "masked_select")
    m = np.broadcast_to(m, shape)
    out = _masked_select_arrays(x, data(x, "masked_select"), m)
    if needs_grad(input):
        ishape = input.shape

        def backward(g, mask):
            gi = zeros(shape, dtype=g.dtype)
            gi._a[np.broadcast_to(data(mask, "backward"), shape)] = data(g, "backward")
            if needs_grad(g):     # create_graph=True
                record(gi, "MaskedScatterBackward0", (g,), lambda h, m: (masked_select(h, m),),
                       saved=[mask])
            return (sum_to(gi, ishape),)
        record(out, "MaskedSelectBackward0", (input,), backward, saved=[mask])
    return out


def nonzero(input, *, as_tuple=False):
    """Indices of the nonzero elements: an (n, ndim) long tensor, or a tuple of 1-D ones."""
    idx = np.nonzero(data(input, "nonzero") if input.ndim else data(input, "nonzero").reshape(1))
    if as_tuple:
        return tuple(tensor(i.astype(np.int64)) for i in idx)
    # NOTE: a 0-d tensor has no dims to index: PyTorch gives shape (1, 0) (or (0, 0) if it is zero)
    return tensor(np.stack(idx, axis=1).astype(np.int64).reshape(-1, max(input.ndim, 1))[:, :input.ndim])


def setitem(input, idx, value):
    """``input[idx] = value`` in place (value a number or broadcastable tensor)."""
    check_inplace("setitem", input)
    a = data(input, "setitem")
    check_writable("setitem", input)
    idx = _sequence_as_tuple(idx)
    items = _normalise("setitem", idx)
    if isinstance(value, Tensor):
        v = data(value, "setitem")
    else:
        check_fits("setitem", value, input.dtype)
        v, _ = as_array(value, input.dtype, "setitem")
    try:
        if _is_basic(items):
            _assign_basic(a[_with_ellipsis(items)], np.asarray(v))
        else:
            if np.ndim(v) and np.size(v) > 1 and any_overlap(a, v):
                # NOTE: as PyTorch's index_put_: a value sharing the written tensor's memory
                raise overlap_error("setitem")
            a[items] = v
    except (IndexError, ValueError) as e:
        raise type(e)(f"setitem: cannot assign a value of shape {tuple(np.shape(v))} to index "
                      f"{idx!r} of a tensor of shape {tuple(a.shape)}: {e}") from None
    input._s.version += 1
    if needs_grad(input, value):
        vshape = value.shape if isinstance(value, Tensor) else None
        template, tensors = _split_index("setitem", idx)

        def backward(g, *ts):
            items = _join_index(template, ts)
            gv = None
            if vshape is not None:
                gv = getitem(g, items)
                if gv.ndim < len(vshape):     # numpy lets the value carry extra leading 1s
                    gv = gv.reshape((1,) * (len(vshape) - gv.ndim) + tuple(gv.shape))
                gv = sum_to(gv, vshape)
            return _zero_at(g, template, ts), gv
        record(input, "CopySlices", (input, value), backward, saved=tensors)


def _assign_basic(dst, v):
    """Copy value array ``v`` into the view ``dst``: numpy's broadcasting rules, safe when they overlap."""
    while v.ndim > dst.ndim and v.shape[0] == 1:
        v = v[0]
    if v.ndim > dst.ndim or any(n not in (1, m) for n, m in zip(v.shape[::-1], dst.shape[::-1])):
        raise ValueError(f"shape {tuple(v.shape)} cannot be broadcast to {tuple(dst.shape)}")
    if v.shape == dst.shape and partial_overlap(dst, v):
        # NOTE: x[1:] = x[:-1] raises, as in PyTorch; a broadcast value (x[:] = x[0]) is
        # allowed there, and goes through a copy here
        raise overlap_error("setitem")
    tmp = None
    if v.ndim and np.may_share_memory(v, dst):
        # NOTE: x[:] = x[0] would read values it has already overwritten
        tmp = empty(v.shape, D.from_numpy_dtype(v.dtype))
        copy_into(v, tmp._a)
        v = tmp._a
    copy_into(v, dst)


def _zero_at(g, template, ts):
    """``g`` with the positions of the index (``template`` + tensors ``ts``) set to 0,
    differentiable in ``g``."""
    gi = g.clone()
    gi._a[_normalise("backward", _join_index(template, ts))] = 0
    if needs_grad(g):     # create_graph=True
        record(gi, "CopySlicesBackward0", (g,), lambda h, *us: (_zero_at(h, template, us),),
               saved=ts)
    return gi


def _with_ellipsis(items):
    """Basic index items that always give a view (a trailing ... keeps 0-d results arrays)."""
    return items if any(i is Ellipsis for i in items) else items + (Ellipsis,)


def select(input, dim, index):
    """The slice at ``index`` along ``dim`` (a view without that dim)."""
    d = norm_dim("select", dim, input.ndim)
    n = input.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select: index {index} out of range for dim {d} of size {n}")
    return input[(slice(None),) * d + (index,)]
