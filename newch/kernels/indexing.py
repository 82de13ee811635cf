"""Indexing kernels: select, gather, index_add / scatter_add / index_put, masks.

Indices are int64 and validated by ``ops/`` (0 <= idx < D); every kernel that
reads or writes through an index checks it again in a serial pass before any
write, and raises IndexError (nothing written) whatever the caller passed, so a
stale or corrupted index can never touch memory outside the arrays. Work is split into tiles of whole
rows x one I-block (``reduce.tile_plan``), depending on shapes only. Kernels
that add into an output give each output element to one task, which adds its
contributions in increasing j, so duplicates in ``idx`` sum deterministically.
"""
import numpy as np

from .jit import kernel, helper, prange
from .reduce import tile_plan, tile_bounds

__all__ = ["index_select_3d", "index_add_3d", "gather_3d", "scatter_add_3d", "mask_count",
           "masked_select", "masked_fill_nd", "index_put_3d", "wrap_index"]

SERIAL_WORK = 1 << 15   # fewer elements than this: serial path, no thread launch


@helper
def _check_rows(idx, D):
    """Raise IndexError unless every entry of the 1-D ``idx`` is in [0, D)."""
    for j in range(idx.shape[0]):
        if idx[j] < 0 or idx[j] >= D:
            raise IndexError("indexing kernel: an index is out of range for the indexed dim")


@helper
def _check_cells(idx, D):
    """Raise IndexError unless every entry of the 3-D ``idx`` (any strides) is in [0, D)."""
    O, J, I = idx.shape
    for o in range(O):
        for j in range(J):
            for i in range(I):
                if idx[o, j, i] < 0 or idx[o, j, i] >= D:
                    raise IndexError("indexing kernel: an index is out of range for the indexed dim")


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
        src = x[o, idx[j], i0:i1]
        dst = out[o, j, i0:i1]
        for k in range(m):
            dst[k] = src[k]


@kernel(parallel=True)
def index_select_3d(x, idx, out):
    """Pick rows of the middle axis: out[o, j, i] = x[o, idx[j], i].

    x: (O, D, I) any strides. idx: (J,) int64 in [0, D). out: (O, J, I) C-contiguous.
    """
    O, J, I = out.shape
    _check_rows(idx, x.shape[1])
    ntask, per, ib, nib = tile_plan(O * J, 1, I)
    if out.size < SERIAL_WORK:
        for t in range(ntask):
            q0, q1, i0, i1 = tile_bounds(t, per, ib, nib, O * J, I)
            _select_tile(x, idx, out, q0, q1, i0, i1)
    else:
        for t in prange(ntask):
            # NOTE: prange indices are uint64; int64 keeps one compiled tile_bounds.
            q0, q1, i0, i1 = tile_bounds(np.int64(t), per, ib, nib, O * J, I)
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


@kernel(parallel=True)
def gather_3d(x, idx, out):
    """Gather along the middle axis: out[o, j, i] = x[o, idx[o, j, i], i].

    x: (O, D, I) any strides. idx: (O, J, I) int64 in [0, D), any strides.
    out: (O, J, I) C-contiguous.
    """
    O, J, I = out.shape
    _check_cells(idx, x.shape[1])
    ntask, per, ib, nib = tile_plan(O * J, 1, I)
    if out.size < SERIAL_WORK:
        for t in range(ntask):
            q0, q1, i0, i1 = tile_bounds(t, per, ib, nib, O * J, I)
            _gather_tile(x, idx, out, q0, q1, i0, i1)
    else:
        for t in prange(ntask):
            q0, q1, i0, i1 = tile_bounds(np.int64(t), per, ib, nib, O * J, I)
            _gather_tile(x, idx, out, q0, q1, i0, i1)


@helper
def _put_tile(dst, idx, src, o0, o1, i0, i1, accumulate):
    """dst[o, idx[j], i0:i1] (+)= src[o, j, i0:i1] for o in o0..o1, j in increasing order."""
    J = idx.shape[0]
    m = i1 - i0
    for o in range(o0, o1):
        for j in range(J):
            s = src[o, j, i0:i1]
            d = dst[o, idx[j], i0:i1]
            if accumulate:
                for k in range(m):
                    d[k] += s[k]
            else:
                for k in range(m):
                    d[k] = s[k]


@kernel(parallel=True)
def index_add_3d(out, idx, src):
    """Add rows into the middle axis: out[o, idx[j], i] += src[o, j, i]; duplicates accumulate.

    out: (O, D, I) C-contiguous, updated in place. idx: (J,) int64 in [0, D).
    src: (O, J, I) any strides. Each (o, i) column adds its terms in increasing j.
    """
    O, J, I = src.shape
    _check_rows(idx, out.shape[1])
    ntask, per, ib, nib = tile_plan(O, J, I)
    if src.size < SERIAL_WORK:
        for t in range(ntask):
            o0, o1, i0, i1 = tile_bounds(t, per, ib, nib, O, I)
            _put_tile(out, idx, src, o0, o1, i0, i1, True)
    else:
        for t in prange(ntask):
            o0, o1, i0, i1 = tile_bounds(np.int64(t), per, ib, nib, O, I)
            _put_tile(out, idx, src, o0, o1, i0, i1, True)


@kernel(parallel=True)
def index_put_3d(dst, idx, src, accumulate):
    """Write rows into the middle axis: dst[o, idx[j], i] = src[o, j, i] (+= if ``accumulate``).

    dst: (O, D, I) any strides, updated in place. idx: (J,) int64 in [0, D).
    src: (O, J, I) any strides. Duplicates: the last j wins, or all add in
    increasing j when accumulating.
    """
    O, J, I = src.shape
    _check_rows(idx, dst.shape[1])
    ntask, per, ib, nib = tile_plan(O, J, I)
    if src.size < SERIAL_WORK:
        for t in range(ntask):
            o0, o1, i0, i1 = tile_bounds(t, per, ib, nib, O, I)
            _put_tile(dst, idx, src, o0, o1, i0, i1, accumulate)
    else:
        for t in prange(ntask):
            o0, o1, i0, i1 = tile_bounds(np.int64(t), per, ib, nib, O, I)
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


@kernel(parallel=True)
def scatter_add_3d(out, idx, src):
    """Scatter-add along the middle axis: out[o, idx[o, j, i], i] += src[o, j, i].

    out: (O, D, I) C-contiguous, updated in place. idx: (O, J, I) int64 in
    [0, D), any strides. src: (O, J, I) any strides. Each (o, i) column adds
    its terms in increasing j.
    """
    O, J, I = src.shape
    _check_cells(idx, out.shape[1])
    ntask, per, ib, nib = tile_plan(O, J, I)
    if src.size < SERIAL_WORK:
        for t in range(ntask):
            o0, o1, i0, i1 = tile_bounds(t, per, ib, nib, O, I)
            _scatter_tile(out, idx, src, o0, o1, i0, i1)
    else:
        for t in prange(ntask):
            o0, o1, i0, i1 = tile_bounds(np.int64(t), per, ib, nib, O, I)
            _scatter_tile(out, idx, src, o0, o1, i0, i1)


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
        for k in range(m):
            if mrow[k]:
                drow[k] = value


@kernel(parallel=True)
def masked_fill_nd(dst, mask, value):
    """Set dst to ``value`` where mask is True: dst[mask] = value, in place.

    dst: 4-D, any strides. mask: 4-D bool of dst's shape, any strides (0 for
    broadcast axes). value: a numpy scalar of dst's dtype.
    """
    A, B, C, I = dst.shape
    M = A * B * C
    ntask, per, ib, nib = tile_plan(M, 1, I)
    if dst.size < SERIAL_WORK:
        for t in range(ntask):
            q0, q1, i0, i1 = tile_bounds(t, per, ib, nib, M, I)
            _fill_tile(dst, mask, value, q0, q1, i0, i1)
    else:
        for t in prange(ntask):
            q0, q1, i0, i1 = tile_bounds(np.int64(t), per, ib, nib, M, I)
            _fill_tile(dst, mask, value, q0, q1, i0, i1)
