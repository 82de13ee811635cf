"""Reductions over the middle axis of an (O, R, I) view, whole-array reductions and argmax/argmin.

Accumulators are float64 for float inputs and int64 for integer/bool inputs;
results are cast to the dtype of ``out``. Every output element is computed by
one task, its R terms combined in a fixed order (increasing r; a contiguous
row-wise SUM keeps ``LANES`` interleaved partial sums, added up in lane order),
so the result depends neither on how outputs are grouped into tasks nor on
the thread count nor on the machine.

The public functions are Python launchers. Each kernel is a template
(``specialize``) instantiated per reduction code, so a program compiles only
the codes it uses, as a serial *task function* over task indexes [t0, t1):
small inputs run all tasks in the calling thread, big ones run the same
compiled code one task per ``prange`` iteration (``tasks.run``), so no
parallel copy is compiled and both paths give the same bits.
"""
import functools
import math

import numpy as np
from numba.core import cgutils, types
from numba.np.arrayobj import populate_array

from .codes import SUM, PROD, MAX, MIN, ALL, ANY, SUMSQDEV, SUMEXP, NANSUM, ARGMAX
from .elementwise import as_c
from .jit import helper, intrinsic
from .specialize import instance
from .tasks import launcher, run, run_strided, strided_launcher

__all__ = ["reduce_blocks", "reduce_3d", "reduce_all", "argreduce_3d"]

LANES = 64              # partial sums of a contiguous row-wise SUM (fixed: never the SIMD width)
SERIAL_WORK = 1 << 15   # fewer input elements than this: serial path, no thread launch
CHUNK_WORK = 1 << 14    # input elements per prange task (about)
ROW_BLOCK = 512         # widest I-block of a task (a row-wise SUM buffers 4 KiB)
MIN_ROW_BLOCK = 64      # never split I finer than this: each row of a block has a fixed cost
MIN_TASKS = 8           # split I-blocks until at least this many tasks (if possible)
BLOCK = 4096            # elements per partial in reduce_all


def reduce_blocks(n):
    """Number of partials ``reduce_all`` needs for ``n`` elements (at least 1)."""
    return max(1, -(-n // BLOCK))


@helper
def tile_plan(M, K, I):
    """Split M x I outputs (K input terms each) into tasks of whole rows x one I-block.

    Returns (ntask, per, ib, nib): task t covers rows [ob*per, ob*per+per) and columns
    [bi*ib, bi*ib+ib) with ob, bi = divmod(t, nib). Depends on shapes only.
    """
    K = max(K, 1)
    ib = max(1, min(I, ROW_BLOCK))
    while True:
        nib = -(-I // ib)
        per = max(1, CHUNK_WORK // (K * ib))
        nob = -(-M // per)
        # NOTE: with few rows, narrower I-blocks give the threads something to share.
        if nob * nib >= MIN_TASKS or ib <= MIN_ROW_BLOCK:
            return nob * nib, per, ib, nib
        ib = max(MIN_ROW_BLOCK, -(-ib // 2))


# NOTE: the launchers plan in Python (cached: it depends on the shape only); the indexing
# kernels call the jitted ``tile_plan`` from inside.
_plan = functools.lru_cache(maxsize=4096)(tile_plan.py_func)


@helper
def tile_bounds(t, per, ib, nib, O, I):
    """Bounds (o0, o1, i0, i1) of task t of a tile_plan."""
    ob, bi = t // nib, t % nib
    return ob * per, min(O, ob * per + per), bi * ib, min(I, bi * ib + ib)


@intrinsic
def _acc_buffer(typingctx, x, n):
    """A 1-D buffer of ``n`` (a constant) accumulators of array ``x``'s dtype, on the stack.

    The accumulator type is float64 for float x, int64 for integer and bool x. A kernel
    does not allocate (DESIGN.md), and ``np.full`` compiled numba's allocator into the
    first reduction (about 0.25 s of a cold start); a stack buffer costs nothing.
    """
    if not (isinstance(x, types.Array) and isinstance(n, types.IntegerLiteral)):
        return None
    acc = types.float64 if isinstance(x.dtype, types.Float) else types.int64
    ret = types.Array(acc, 1, "C")

    def codegen(context, builder, sig, args):
        count = n.literal_value
        item = context.get_abi_sizeof(context.get_data_type(acc))
        # NOTE: alloca_once puts the buffer in the entry block: one static stack slot, also
        # where LLVM inlines this into a loop.
        data = cgutils.alloca_once(builder, context.get_data_type(acc),
                                   size=context.get_constant(types.intp, count))
        buf = context.make_array(ret)(context, builder)
        populate_array(buf, data=data, shape=[context.get_constant(types.intp, count)],
                       strides=[context.get_constant(types.intp, item)], itemsize=item,
                       meminfo=None)
        return buf._getvalue()

    return ret(x, n), codegen


@helper
def _sum_lanes(row, lanes):
    """Sum of a contiguous 1-D row: LANES interleaved partial sums, then added in lane order.

    ``lanes``: LANES accumulators of the accumulator type (float64 / int64), overwritten.
    Element k goes to partial k % LANES; the tail (n % LANES) is added after the partials.
    """
    n = np.uint64(row.shape[0])
    L = np.uint64(LANES)
    # NOTE: unsigned indexes spare numba's negative-index fix-ups, which stop LLVM from
    # vectorizing; LANES independent chains keep the vector adders busy (no fastmath needed).
    for j in range(L):
        lanes[j] = 0
    m = n - n % L
    for k in range(np.uint64(0), m, L):
        for j in range(L):
            lanes[j] += row[k + j]
    acc = lanes[0]
    for j in range(np.uint64(1), L):
        acc += lanes[j]
    for k in range(m, n):
        acc += row[k]
    return acc


@helper
def _sum_rows(x, out, o0, o1, i0, i1):
    """SUM of rows o0..o1 over columns i0..i1, accumulating whole rows (R >= 1).

    The inner loop runs along I so it vectorizes; each output still sees its R
    terms in increasing r, exactly as the column loop does (same bits).
    """
    R = x.shape[1]
    m = i1 - i0
    buf = _acc_buffer(x, ROW_BLOCK)     # NOTE: i1 - i0 <= ROW_BLOCK (tile_plan)
    for o in range(o0, o1):
        for k in range(m):
            buf[k] = 0
        # NOTE: views indexed from 0 let LLVM drop numba's negative-index fix-ups and use
        # contiguous vector loads instead of gathers.
        for r in range(R):
            xr = x[o, r, i0:i1]
            for k in range(m):
                buf[k] += xr[k]
        orow = out[o, i0:i1]
        for k in range(m):
            orow[k] = buf[k]


def _reduce_tile(x, center, out, o0, o1, i0, i1):
    """Reduce the outputs in rows o0..o1, columns i0..i1 of x with the bound ``_CODE``.

    One output at a time: a scalar accumulator walks down a column of x.
    """
    code = _CODE  # noqa: F821
    R = x.shape[1]
    centered = code == SUMSQDEV or code == SUMEXP
    for o in range(o0, o1):
        for i in range(i0, i1):
            col = x[o, :, i]
            # NOTE: ``acc`` unifies to float64 for float x and int64 for int/bool x; a
            # centered code sums in ``facc`` (float64) so int sums stay exact.
            acc = 1 if code == PROD or code == ALL else 0
            if (code == MAX or code == MIN) and R > 0:
                acc = col[0]
            facc = 0.0
            c = np.float64(center[o, i]) if centered else 0.0
            # NOTE: ``code`` is a constant of this instance: LLVM keeps one branch.
            for r in range(R):
                v = col[r]
                if code == SUM:
                    acc += v
                elif code == NANSUM:
                    if v == v:
                        acc += v
                elif code == PROD:
                    acc *= v
                elif code == MAX:
                    # NOTE: ``v != v`` lets a NaN in and nothing out: NaN propagates (torch).
                    if v > acc or v != v:
                        acc = v
                elif code == MIN:
                    if v < acc or v != v:
                        acc = v
                elif code == ALL:
                    if v == 0:
                        acc = 0
                elif code == ANY:
                    if v != 0:
                        acc = 1
                elif code == SUMSQDEV:
                    d = v - c
                    facc += d * d
                else:
                    facc += math.exp(v - c)
            if centered:
                out[o, i] = facc
            elif code == ALL or code == ANY:
                out[o, i] = acc != 0
            else:
                out[o, i] = acc


@helper
def _rows_body(x, center, out, o0, o1, i0, i1):
    _sum_rows(x, out, o0, o1, i0, i1)


@helper
def _lanes_body(x, center, out, o0, o1, i0, i1):
    lanes = _acc_buffer(x, LANES)
    for o in range(o0, o1):
        out[o, 0] = _sum_lanes(as_c(x[o, :, 0]), lanes)   # unit stride: checked by reduce_3d


def _reduce_3d(x, center, out, per, ib, nib, t0, t1):
    O, I = out.shape
    for t in range(t0, t1):
        o0, o1, i0, i1 = tile_bounds(t, per, ib, nib, O, I)
        _body(x, center, out, o0, o1, i0, i1)  # noqa: F821


_KERNELS = {}


def _kernel(template, code, tag="", **bound):
    """The (serial) instance of ``template`` for reduction ``code``.

    Task functions (``tasks.run``): big inputs run the same compiled code on numba's
    threads, one task per prange iteration.
    """
    key = (template, code, tag)
    k = _KERNELS.get(key)
    if k is None:
        k = _KERNELS[key] = instance(template, f"{code}{tag}", _CODE=code, **bound)
    return k


def reduce_3d(code, x, center, out):
    """Reduce x over its middle axis with ``code``.

    Codes: SUM, PROD, MAX, MIN, ALL, ANY, SUMSQDEV, SUMEXP, NANSUM.

    x: (O, R, I), any dtype, any strides. center: (O, I) float64 for SUMSQDEV
    (sum of (x - c)**2) and SUMEXP (sum of exp(x - c)), else any (1, 1) dummy.
    out: (O, I) C-contiguous; float32/float64/int64 (bool for ALL/ANY).
    R == 0 gives the identity (0, 1, True, False); MAX/MIN need R >= 1.
    Example: ``reduce_3d(SUM, a.reshape(1, n, 1), dummy, out)`` sums a 1-D array.
    """
    O, R, I = x.shape
    if out.shape != (O, I) or not out.flags.c_contiguous:
        raise ValueError(f"reduce_3d: out must be C-contiguous of shape {(O, I)}, got {out.shape}")
    if O * I == 0:
        return
    # NOTE: what follows depends on the code, shapes, strides, dtypes and layouts only: a
    # repeated call (a training loop's sums) goes straight to the compiled launcher
    key = (code, x.shape, x.strides, x.dtype, center.dtype, center.shape, center.strides,
           out.dtype)
    hit = _PLANNED.get(key)
    if hit is not None:
        fn, par, ntask, per, ib, nib = hit
        if par:
            fn(ntask, x, center, out, per, ib, nib)
        else:
            fn(x, center, out, per, ib, nib, 0, ntask)
        return
    ntask, per, ib, nib = _plan(O, R, I)
    par = O * R * I >= SERIAL_WORK
    if code == SUM and R > 0 and I > 1 and abs(x.strides[2]) <= abs(x.strides[1]):
        body, tag = _rows_body, "_rows"    # NOTE: whole-row accumulation: I is the faster axis
    elif code == SUM and R > 0 and I == 1 and x.strides[1] == x.itemsize:
        body, tag = _lanes_body, "_lanes"  # one contiguous row per output
    else:
        body, tag = None, ""
    k = _KERNELS.get((_reduce_3d, code, tag))
    if k is None:
        k = _kernel(_reduce_3d, code, tag, _body=body or _kernel(_reduce_tile, code))
    # NOTE: whole-row sums vectorize along a unit-stride I when x is typed C; the other bodies
    # walk columns by their strides: typed 'A', one compilation serves every layout
    rest = (center, out, per, ib, nib)
    fn = launcher(k, par, (x,) + rest) if tag == "_rows" else strided_launcher(k, par, x, rest)
    if len(_PLANNED) < 4096:
        _PLANNED[key] = (fn, par, ntask, per, ib, nib)
    if par:
        fn(ntask, x, *rest)
    else:
        fn(x, *rest, 0, ntask)


_PLANNED = {}   # reduce_3d's key -> (launcher, parallel, ntask, per, ib, nib)


@helper(inline=False)
def _combine(code, partials, out):
    """out[0] = the block partials combined serially, in order."""
    acc = partials[0]
    for b in range(1, partials.shape[0]):
        v = partials[b]
        if code == PROD:
            acc *= v
        elif code == MAX:
            if v > acc or v != v:
                acc = v
        elif code == MIN:
            if v < acc or v != v:
                acc = v
        elif code == ALL:
            acc = 1 if acc != 0 and v != 0 else 0
        elif code == ANY:
            acc = 1 if acc != 0 or v != 0 else 0
        else:
            # NOTE: block sums of SUM, NANSUM, SUMSQDEV and SUMEXP all combine by a plain sum.
            acc += v
    if code == ALL or code == ANY:
        out[0] = acc != 0
    else:
        out[0] = acc


def _reduce_all(x, center, partials, out, combine, t0, t1):
    """Blocks t0..t1-1 into their partials, then (``combine``) all partials into out[0]."""
    n = x.shape[0]
    zero, one = np.int64(0), np.int64(1)
    for b in range(t0, t1):
        lo = b * BLOCK
        blk = x[lo:min(n, lo + BLOCK)]
        # NOTE: ``_CODE`` is a constant of the instance: numba drops the other branch before
        # typing it (a SUM compiles no reshape).
        if _CODE == SUM:  # noqa: F821
            partials[b] = _sum_lanes(blk, _acc_buffer(x, LANES))
        else:
            _tile(blk.reshape((1, -1, 1)), center.reshape((1, 1)),  # noqa: F821
                  partials[b:b + 1].reshape((1, 1)), zero, one, zero, one)
    if combine:
        _combine(_CODE, partials, out)  # noqa: F821


def reduce_all(code, x, center, partials, out):
    """Reduce a whole flat array with ``code`` (same codes as reduce_3d) in fixed blocks.

    x: (n,) contiguous, any dtype. center: (1,) float64. partials: scratch of
    reduce_blocks(n) elements, float64 for float x, int64 for int/bool x.
    out: (1,). Block b (BLOCK elements) is reduced into partials[b] by one
    task, then the partials are combined serially in order.
    """
    n = x.shape[0]
    if x.ndim != 1 or not x.flags.c_contiguous or partials.shape[0] < reduce_blocks(n):
        raise ValueError("reduce_all: x must be 1-D contiguous, partials reduce_blocks(n) long")
    partials = partials[:reduce_blocks(n)]
    par = n >= SERIAL_WORK
    k = _KERNELS.get((_reduce_all, code, ""))
    if k is None:
        k = _kernel(_reduce_all, code, _tile=_kernel(_reduce_tile, code))
    nb = partials.shape[0]
    # NOTE: the parallel path fills the partials on numba's threads, then combines them
    # here with an empty block range: the same code and order as the serial call.
    run(k, nb, par, x, center, partials, out, not par)
    if par:
        run(k, 0, False, x, center, partials, out, True)


def _arg_tile(x, out_val, out_idx, o0, o1, i0, i1):
    """ARGMAX or ARGMIN (the bound ``_CODE``) of the outputs in rows o0..o1, columns i0..i1."""
    R = x.shape[1]
    for o in range(o0, o1):
        for i in range(i0, i1):
            best = x[o, 0, i]
            at = 0
            # NOTE: strict comparisons keep the first of ties; the first NaN wins and stays.
            if _CODE == ARGMAX:  # noqa: F821
                for r in range(1, R):
                    v = x[o, r, i]
                    if v > best or (v != v and best == best):
                        best = v
                        at = r
            else:
                for r in range(1, R):
                    v = x[o, r, i]
                    if v < best or (v != v and best == best):
                        best = v
                        at = r
            out_val[o, i] = best
            out_idx[o, i] = at


def _argreduce_3d(x, out_val, out_idx, per, ib, nib, t0, t1):
    O, I = out_val.shape
    for t in range(t0, t1):
        o0, o1, i0, i1 = tile_bounds(t, per, ib, nib, O, I)
        _tile(x, out_val, out_idx, o0, o1, i0, i1)  # noqa: F821


def argreduce_3d(code, x, out_val, out_idx):
    """Index and value of the max (ARGMAX) or min (ARGMIN) of x over its middle axis.

    x: (O, R, I), R >= 1, any dtype, any strides. out_val: (O, I) of x's dtype,
    out_idx: (O, I) int64, both C-contiguous. Ties keep the first index; NaN
    counts as both the largest and the smallest value (the first NaN wins).
    """
    O, R, I = x.shape
    if O * I == 0:
        return
    ntask, per, ib, nib = _plan(O, R, I)
    par = O * R * I >= SERIAL_WORK
    k = _KERNELS.get((_argreduce_3d, code, ""))
    if k is None:
        k = _kernel(_argreduce_3d, code, _tile=_kernel(_arg_tile, code))
    run_strided(k, ntask, par, x, out_val, out_idx, per, ib, nib)   # NOTE: column walks, as above
