"""Indexing kernels: select, gather, index_put (and index_add) / scatter_add, masks.

Indices are integers (int64 from ``ops/``) validated by ``ops/`` (0 <= idx < D);
every kernel that reads or writes through an index checks them all again in a
serial pass (``_check_rows``, ``_check_cells``: small serial kernels that raise)
before any write, and raises IndexError (nothing written) whatever the caller
passed, so a stale or corrupted index can never touch memory outside the arrays.
The launchers also check the arrays' dimensions, shapes and dtypes.

Work is split into tiles of whole rows x one I-block (``reduce.tile_plan``,
planned in Python), depending on shapes only. Each kernel is a serial *task
function* over tile indexes [t0, t1) (``tasks``): small inputs run every tile
in the calling thread, big ones run the same compiled code one tile per
``prange`` iteration (``tasks.driver``), so no parallel copy is compiled and
both paths give the same bits. Arrays are typed 'A' and writable whatever their
layout and read-only flag, so a kernel compiles once per dtype (cold start:
contiguous, strided, transposed and broadcast operands share one signature).
Kernels that add into an output give each output element to one task, which
adds its contributions in increasing j, so duplicates in ``idx`` sum
deterministically.
"""
import numpy as np

from .elementwise import as_c
from .jit import kernel, helper
from .reduce import _plan, tile_bounds
from .specialize import array, entry, scalar
from .tasks import driver

__all__ = ["index_select_3d", "gather_3d", "scatter_add_3d", "mask_count",
           "masked_select", "masked_fill_nd", "index_put_3d", "wrap_index"]

SERIAL_WORK = 1 << 15   # fewer elements than this: serial path, no thread launch


@kernel
def _check_rows(idx, D):
    """Raise IndexError unless every entry of the 1-D ``idx`` is in [0, D)."""
    for j in range(idx.shape[0]):
        if idx[j] < 0 or idx[j] >= D:
            raise IndexError("indexing kernel: an index is out of range for the indexed dim")


@kernel
def _check_cells(idx, D):
    """Raise IndexError unless every entry of the 3-D ``idx`` (any strides) is in [0, D)."""
    O, J, I = idx.shape
    for o in range(O):
        for j in range(J):
            for i in range(I):
                if idx[o, j, i] < 0 or idx[o, j, i] >= D:
                    raise IndexError("indexing kernel: an index is out of range for the indexed dim")


@helper
def _unit(row):
    return row.shape[0] <= 1 or row.strides[0] == row.itemsize


@helper
def _copy_row(d, s, m, accumulate):
    """d[:m] = s[:m] (+= if ``accumulate``); unit-stride rows take a C loop LLVM vectorizes.

    NOTE: arrays are typed 'A' (one compilation per dtype whatever the layout), so the
    contiguous case is found at run time and retyped (``as_c``: a view, no copy).
    """
    if _unit(d) and _unit(s):
        dc, sc = as_c(d), as_c(s)
        if accumulate:
            for k in range(m):
                dc[k] += sc[k]
        else:
            for k in range(m):
                dc[k] = sc[k]
    elif accumulate:
        for k in range(m):
            d[k] += s[k]
    else:
        for k in range(m):
            d[k] = s[k]


@kernel
def wrap_index(idx, n, allow_negative, out, bad):
    """Validate and normalise 1-D indices into a dim of size ``n``.

    out[k] = idx[k] (+ n when negative and ``allow_negative``), as int64. bad[0] is
    set to the position of the first index outside the range (-1 if none); entries
    from there on are not written. Serial: one pass over the indices.
    """
    bad[0] = -1
    for k in range(idx.shape[0]):
        v = np.int64(idx[k])
        if v < 0 and allow_negative:
            v += n
        if v < 0 or v >= n:
            bad[0] = k
            return
        out[k] = v



@helper
def _select_tile(x, idx, out, q0, q1, i0, i1):
    """out[o, j, i0:i1] = x[o, idx[j], i0:i1] for the rows q = o*J + j in q0..q1."""
    J = idx.shape[0]
    m = i1 - i0
    for q in range(q0, q1):
        o, j = q // J, q % J
        _copy_row(out[o, j, i0:i1], x[o, idx[j], i0:i1], m, False)


@kernel
def _select_tasks(x, idx, out, per, ib, nib, t0, t1):
    """Task function of ``index_select_3d``: the tiles t0..t1 of its plan."""
    O, J, I = out.shape
    for t in range(t0, t1):
        q0, q1, i0, i1 = tile_bounds(t, per, ib, nib, O * J, I)
        _select_tile(x, idx, out, q0, q1, i0, i1)


@helper
def _gather_tile(x, idx, out, q0, q1, i0, i1):
    """out[o, j, i] = x[o, idx[o, j, i], i] for the rows q = o*J + j in q0..q1."""
    J = idx.shape[1]
    m = i1 - i0
    for q in range(q0, q1):
        o, j = q // J, q % J
        irow = idx[o, j, i0:i1]
        dst = out[o, j, i0:i1]
        for k in range(m):
            dst[k] = x[o, irow[k], i0 + k]


@kernel
def _gather_tasks(x, idx, out, per, ib, nib, t0, t1):
    """Task function of ``gather_3d``: the tiles t0..t1 of its plan."""
    O, J, I = out.shape
    for t in range(t0, t1):
        q0, q1, i0, i1 = tile_bounds(t, per, ib, nib, O * J, I)
        _gather_tile(x, idx, out, q0, q1, i0, i1)


@helper
def _put_tile(dst, idx, src, o0, o1, i0, i1, accumulate):
    """dst[o, idx[j], i0:i1] (+)= src[o, j, i0:i1] for o in o0..o1, j in increasing order."""
    J = idx.shape[0]
    m = i1 - i0
    for o in range(o0, o1):
        for j in range(J):
            _copy_row(dst[o, idx[j], i0:i1], src[o, j, i0:i1], m, accumulate)


@kernel
def _put_tasks(dst, idx, src, accumulate, per, ib, nib, t0, t1):
    """Task function of ``index_put_3d``: the tiles t0..t1 of its plan."""
    O, J, I = src.shape
    for t in range(t0, t1):
        o0, o1, i0, i1 = tile_bounds(t, per, ib, nib, O, I)
        _put_tile(dst, idx, src, o0, o1, i0, i1, accumulate)


@helper
def _scatter_tile(out, idx, src, o0, o1, i0, i1):
    """out[o, idx[o, j, i], i] += src[o, j, i] for the (o, i) owners of the tile, j increasing."""
    J = idx.shape[1]
    m = i1 - i0
    for o in range(o0, o1):
        for j in range(J):
            irow = idx[o, j, i0:i1]
            s = src[o, j, i0:i1]
            for k in range(m):
                out[o, irow[k], i0 + k] += s[k]


@kernel
def _scatter_tasks(out, idx, src, per, ib, nib, t0, t1):
    """Task function of ``scatter_add_3d``: the tiles t0..t1 of its plan."""
    O, J, I = src.shape
    for t in range(t0, t1):
        o0, o1, i0, i1 = tile_bounds(t, per, ib, nib, O, I)
        _scatter_tile(out, idx, src, o0, o1, i0, i1)


@helper
def _fill_tile(dst, mask, value, q0, q1, i0, i1):
    """dst[a, b, c, i] = value where mask, for rows q = (a*B + b)*C + c in q0..q1."""
    B, C = dst.shape[1], dst.shape[2]
    m = i1 - i0
    for q in range(q0, q1):
        a, bc = q // (B * C), q % (B * C)
        b, c = bc // C, bc % C
        drow = dst[a, b, c, i0:i1]
        mrow = mask[a, b, c, i0:i1]
        if _unit(drow) and _unit(mrow):
            dc, mc = as_c(drow), as_c(mrow)
            for k in range(m):
                if mc[k]:
                    dc[k] = value
        else:
            for k in range(m):
                if mrow[k]:
                    drow[k] = value


@kernel
def _fill_tasks(dst, mask, value, per, ib, nib, t0, t1):
    """Task function of ``masked_fill_nd``: the tiles t0..t1 of its plan."""
    A, B, C, I = dst.shape
    for t in range(t0, t1):
        q0, q1, i0, i1 = tile_bounds(t, per, ib, nib, A * B * C, I)
        _fill_tile(dst, mask, value, q0, q1, i0, i1)


# ---------------------------------------------------------------- launching

_I64 = scalar(np.dtype(np.int64))
_PLAN = (_I64, _I64, _I64)     # per, ib, nib
_FLAG = (scalar(np.dtype(np.bool_)),)
_RUN = {}      # (task function, dtypes, parallel) -> entry point or tasks.Parallel


def _run(task, key, types, ntask, parallel, *args):
    """Task function ``task`` over tiles [0, ntask): here, or one tile per prange iteration.

    ``key``: the dtypes the argument types ``types()`` are built from (arrays are typed
    'A' and writable, whatever their layout: one compilation per dtype).
    """
    k = (task, key, parallel)
    fn = _RUN.get(k)
    if fn is None:
        sig = tuple(types()) + _PLAN
        fn = _RUN[k] = driver(task, sig) if parallel else entry(task, sig + (_I64, _I64))
    if parallel:
        fn(ntask, *args)
    else:
        fn(*args, 0, ntask)


def _check(check, idx, D):
    """Run ``_check_rows`` or ``_check_cells``: IndexError if an index is out of range."""
    k = (check, idx.dtype)
    fn = _RUN.get(k)
    if fn is None:
        fn = _RUN[k] = entry(check, (array(idx.dtype, idx.ndim), _I64))
    fn(idx, D)


def _index(what, idx, ndim):
    if not isinstance(idx, np.ndarray) or idx.ndim != ndim or idx.dtype.kind not in "iu":
        raise TypeError(f"{what}: idx must be a {ndim}-D integer array, got "
                        f"{getattr(idx, 'dtype', type(idx).__name__)} of "
                        f"{getattr(idx, 'ndim', '?')} dims")


def _arrays(what, ndim, *arrays):
    for a in arrays:
        if not isinstance(a, np.ndarray) or a.ndim != ndim:
            raise ValueError(f"{what}: expected {ndim}-D numpy arrays, got "
                             f"{getattr(a, 'shape', type(a).__name__)}")


def _writable(what, a):
    if not a.flags.writeable:
        raise ValueError(f"{what}: the output array is read-only")


def _along_middle(what, names, task, big, idx, small, writes_big, accumulate=None):
    """Check and run one op along the middle axis of ``big`` (O, D, I).

    ``small`` is (O, J, I). ``idx`` is (J,), one index per row of small, for the row tasks
    (``_select_tasks``, ``_put_tasks``), or (O, J, I), one per element, for the others. The
    op writes ``big`` when ``writes_big`` (then each task owns whole (o) slabs, so duplicate
    indexes stay in order), else ``small``. ``names``: how messages call big, idx and small.
    ``accumulate``: ``index_put_3d``'s flag, passed after the three arrays (None: no flag).
    Raises ValueError/TypeError/IndexError before anything is written.
    """
    _arrays(what, 3, big, small)
    rows = task in (_select_tasks, _put_tasks)
    _index(what, idx, 1 if rows else 3)
    O, J, I = small.shape
    fits = idx.shape[0] == J if rows else idx.shape == small.shape
    if not (big.shape[0] == O and big.shape[2] == I and fits):
        raise ValueError(f"{what}: shapes {names[0]} {big.shape}, {names[1]} {idx.shape}, "
                         f"{names[2]} {small.shape} disagree")
    _writable(what, big if writes_big else small)
    _check(_check_rows if rows else _check_cells, idx, big.shape[1])
    if small.size == 0:
        return
    ntask, per, ib, nib = _plan(O, J, I) if writes_big else _plan(O * J, 1, I)
    key = (big.dtype, idx.dtype, small.dtype)
    arrays = (big, idx, small) if accumulate is None else (big, idx, small, bool(accumulate))
    _run(task, key, lambda: (array(big.dtype, 3), array(idx.dtype, 1 if rows else 3),
                             array(small.dtype, 3)) + (() if accumulate is None else _FLAG),
         ntask, small.size >= SERIAL_WORK, *arrays, per, ib, nib)


def index_select_3d(x, idx, out):
    """Pick rows of the middle axis: out[o, j, i] = x[o, idx[j], i].

    x: (O, D, I) any strides. idx: (J,) integers in [0, D). out: (O, J, I), any strides.
    IndexError (nothing written) for an index outside [0, D).
    """
    _along_middle("index_select_3d", ("x", "idx", "out"), _select_tasks, x, idx, out, False)


def gather_3d(x, idx, out):
    """Gather along the middle axis: out[o, j, i] = x[o, idx[o, j, i], i].

    x: (O, D, I) any strides. idx: (O, J, I) integers in [0, D), any strides.
    out: (O, J, I), any strides. IndexError (nothing written) for an index outside [0, D).
    """
    _along_middle("gather_3d", ("x", "idx", "out"), _gather_tasks, x, idx, out, False)


def index_put_3d(dst, idx, src, accumulate):
    """Write rows into the middle axis: dst[o, idx[j], i] = src[o, j, i] (+= if ``accumulate``).

    dst: (O, D, I) any strides, updated in place. idx: (J,) integers in [0, D).
    src: (O, J, I) any strides. Duplicates: the last j wins, or all add in increasing
    j when accumulating (``index_add``: each (o, i) column adds its terms in that order).
    IndexError (nothing written) for an index outside [0, D).
    """
    _along_middle("index_put_3d", ("dst", "idx", "src"), _put_tasks, dst, idx, src, True,
                  accumulate)


def scatter_add_3d(out, idx, src):
    """Scatter-add along the middle axis: out[o, idx[o, j, i], i] += src[o, j, i].

    out: (O, D, I) any strides, updated in place. idx: (O, J, I) integers in
    [0, D), any strides. src: (O, J, I) any strides. Each (o, i) column adds
    its terms in increasing j. IndexError (nothing written) for an index outside [0, D).
    """
    _along_middle("scatter_add_3d", ("out", "idx", "src"), _scatter_tasks, out, idx, src, True)


@kernel
def mask_count(mask, out):
    """Count the True entries of a flat mask: out[0] = mask.sum().

    mask: (n,) bool, contiguous. out: (1,) int64. Serial: it streams memory once.
    """
    count = 0
    for k in range(mask.shape[0]):
        count += mask[k]
    out[0] = count


@kernel
def masked_select(x, mask, out):
    """Copy the entries of x where mask is True, in order: out = x[mask].

    x, mask: (n,) contiguous, mask bool. out: (mask_count(mask),). Serial (a prefix sum).
    Raises IndexError (nothing written) when the lengths disagree.
    """
    if mask.shape[0] != x.shape[0]:
        raise IndexError("masked_select: the mask and the input have different lengths")
    count = 0
    for q in range(mask.shape[0]):
        count += mask[q]
    if count > out.shape[0]:
        raise IndexError("masked_select: the output is shorter than the mask's True count")
    k = 0
    for q in range(x.shape[0]):
        if mask[q]:
            out[k] = x[q]
            k += 1


def masked_fill_nd(dst, mask, value):
    """Set dst to ``value`` where mask is True: dst[mask] = value, in place.

    dst: 4-D, any strides. mask: 4-D bool of dst's shape, any strides (0 for
    broadcast axes). value: a scalar, stored as dst's dtype.
    """
    _arrays("masked_fill_nd", 4, dst, mask)
    if not (mask.shape == dst.shape and mask.dtype == np.bool_):
        raise ValueError(f"masked_fill_nd: "
                         f"expected a bool mask of shape {dst.shape}, "
                         f"got {mask.dtype} {mask.shape}")
    _writable("masked_fill_nd", dst)
    if dst.size == 0:
        return
    A, B, C, I = dst.shape
    ntask, per, ib, nib = _plan(A * B * C, 1, I)
    dt = dst.dtype
    _run(_fill_tasks, dt, lambda: (array(dt, 4), array(mask.dtype, 4), scalar(dt)),
         ntask, dst.size >= SERIAL_WORK, dst, mask, dt.type(value), per, ib, nib)
