"""Matrix multiply kernels: a blocked, packed, register-tiled GEMM and its batched form.

How it works (the Goto/BLIS scheme, arranged for determinism):

1. Pack B. Each B is copied into NR-column micro-panels stored k-major
   (``panel[k, j]``) and zero padded, so the micro-kernel reads it as one
   contiguous stream of vectors whatever its strides. Packing tasks are
   (panel, k-range) pieces of equal size, one ``prange`` iteration each.
   A B whose rows are contiguous is read in place instead (only its last,
   partial panel is packed), unless its row stride aliases cache sets
   (``_reads_b_in_place``).
2. Compute. Each C is cut into tiles of whole micro-tiles (about MC x NC);
   tiles are dealt to at most MAX_TASKS tasks, one ``prange`` iteration each,
   and each task has its own workspace in the scratch. A tile walks K in KC
   blocks; for each block it packs the A rows it needs into its workspace
   (MR-row micro-panels, ``panel[k, i]``), unless k or i is A's contiguous
   axis, where the micro-kernel reads A in place (saves a pass over A, which
   matters when N is small). An MR x NR micro-kernel keeps its piece of C in vector
   registers while it streams an A micro-panel and a B micro-panel. NR is NV
   vectors, or one vector when all of C's columns fit in one (``_nr``: a
   classifier's 10 outputs are not padded to 64 columns).

Both phases are serial task functions (``_pack_b``, ``_tasks``; ``vecmat.vecmat`` for
one-row products, which reads B in place): small products run every task in the calling thread, big
ones run the same compiled code one task per ``prange`` iteration through
``tasks.driver``, so no parallel copy of the micro-kernel is compiled.

The micro-kernel is LLVM vector IR calling ``llvm.fma`` (``gemm_tile``).

C is C-contiguous, or the transpose of a C-contiguous array (``out.T`` of a
product computed as ``(B.T @ A.T).T``): such a C is written through the
micro-tile's buffer, so no separate transposing copy reads it again.

Determinism: every C element is ``c = fma(a[i,k], b[k,j], c)`` folded over
k = 0..K-1 in order from c = +0.0, whatever the blocking, the tile split,
the task split or the thread count; the serial and parallel paths give
identical bits.
"""
import functools

import numpy as np
from numba.core import types

from .gemm_tile import MR, NARROW, NV, VBYTES, WIDE, flat_c as _flat_c
from .jit import helper, kernel
from .specialize import entry
from .tasks import driver
from .vecmat import vec_cols, vecmat

__all__ = ["gemm_scratch", "gemm", "bgemm_scratch", "bgemm"]

# Cache blocking, in elements. KC: depth of one micro-kernel call. MC x NC:
# target size of one C tile (one parallel task). For each KC block a tile
# walks its B micro-panels, and each (KC x NR) B micro-panel meets every A
# micro-panel of the tile's (MC x KC) A block: both stay in L2 (1 MiB per
# core on znver4, where these were tuned) while the A micro-panel streams
# through L1.
KC = 512
# A transposed C is written through the micro-tile buffer; with A read in place its tiles
# take K in one block up to this depth, so each is copied out once, not loaded and stored
# again per KC block (the same chains: the bits do not change).
KC_WHOLE = 4096
# B panels at most this deep are read in place whatever their row stride (see _reads_b_in_place)
KC_SHORT = 64
MC = 96
NC = 512
# Packing: B panels are packed in pieces of PACK_K rows of k (equal tasks);
# a transposing copy moves PACK_KB x lanes blocks.
PACK_K = 256
PACK_KB = 16
# Halve tiles until a product has at least MIN_TILES (enough near-equal tasks
# to keep 2 or 4 threads evenly loaded), but keep at least MIN_TILE_PANELS A
# micro-panels per tile: fewer rows re-read B too often.
MIN_TILES = 8
MIN_TILE_PANELS = 4
# At most this many compute tasks, so the scratch (one workspace per task)
# does not grow with M.
MAX_TASKS = 16
# Below this many multiply-adds (B*M*N*K) the kernel runs serially: a thread
# launch costs more than the work.
SERIAL_WORK = 96 * 96 * 96


def _plan(B, M, N, K, nr):
    """Panels and tile grid of a (B, M, K) @ (B, K, N) product: (mp, npn, tm, tn).

    mp MR-row panels of A and npn nr-column panels of B per batch; each C is a
    tm x tn grid of tiles. Shapes only, never the thread count.
    """
    mp = (M + MR - 1) // MR
    npn = (N + nr - 1) // nr
    tm = min(mp, (mp * MR + MC - 1) // MC)
    tn = min(npn, (npn * nr + NC - 1) // NC)
    while B * tm * tn < MIN_TILES and B * M * N * K >= SERIAL_WORK:
        # NOTE: halve the longer side of the tiles (in elements) when allowed.
        split_m = mp >= 2 * tm * MIN_TILE_PANELS
        if split_m and (mp * MR * tn >= npn * nr * tm or tn == npn):
            tm *= 2
        elif tn < npn:
            tn = min(npn, 2 * tn)
        else:
            break
    return mp, npn, tm, tn


def _round_up(n):
    """n rounded up to a multiple of 16 elements (64 bytes at least): vector loads stay aligned."""
    return (n + 15) // 16 * 16


@functools.lru_cache(maxsize=1024)
def _layout(B, M, N, K, nr):
    """Tile grid, task count and scratch layout: (tm, tn, ntask, wstart, wsize, total).

    Scratch: packed B of every batch in [0, wstart); then ntask workspaces of
    wsize elements (an MR x nr edge buffer, then room for the A micro-panels
    of one tile and one KC block); plus 16 elements of slack so the kernel
    can start at a 64-byte boundary. Cached: shapes repeat.
    """
    mp, npn, tm, tn = _plan(B, M, N, K, nr)
    ntask = min(B * tm * tn, MAX_TASKS)
    wstart = _round_up(B * npn * nr * K)
    wsize = _round_up(MR * nr) + _round_up(max((mp + tm - 1) // tm * MR * min(K, KC),
                                               MR * min(K, KC_WHOLE)))
    return tm, tn, ntask, wstart, wsize, wstart + ntask * wsize + 16


def bgemm_scratch(B, M, N, K):
    """Scratch elements ``bgemm`` needs for (B, M, K) @ (B, K, N), float32 or float64."""
    n = _SCRATCH.get((B, M, N, K))
    if n is None:
        # NOTE: one-row and one-column products take ``vecmat``, which needs none
        n = 0 if min(B, M, N, K) == 0 or M == 1 or N == 1 else max(
            _layout(B, M, N, K, _nr(N, size))[5] for size in (4, 8))
        if len(_SCRATCH) < 4096:
            _SCRATCH[(B, M, N, K)] = n
    return n


_SCRATCH = {}    # (B, M, N, K) -> bgemm_scratch(B, M, N, K): shapes repeat


def _nr(N, itemsize):
    """Columns of a B micro-panel for a C of N columns: one vector when N fits in one (the
    narrow tile), else NV vectors. Shapes and the vector width only; never the bits."""
    lanes = VBYTES // itemsize
    return lanes if N <= lanes else NV * lanes


def gemm_scratch(M, N, K):
    """Scratch elements ``gemm`` needs for (M, K) @ (K, N), float32 or float64."""
    return bgemm_scratch(1, M, N, K)


# ---------------------------------------------------------------- packing
# Indexes here are unsigned: numba guards every signed index against negative
# values, and those guards stop LLVM from vectorizing the copies (10-25x slower).

@helper
def _pack_panel(x, l0, w, k0, k1, dst, base):
    """dst[base + (k-k0)*w + l] = x[l0 + l, k] for l < w, k0 <= k < k1: a panel piece, zero padded.

    x (L, K) any strides: A is packed as x = a (lanes are rows), B as x = b.T.
    """
    L = x.shape[0]
    uw, ub, ul0, uk0, uk1 = np.uint64(w), np.uint64(base), np.uint64(l0), np.uint64(k0), np.uint64(k1)
    lanes = min(w, L - l0)
    ul = np.uint64(lanes)
    if abs(x.strides[1]) <= abs(x.strides[0]):
        # k is the contiguous direction: transpose PACK_KB x w blocks, so each
        # lane is read along k (whole cache lines) and the writes stay in L1.
        for kb in range(uk0, uk1, np.uint64(PACK_KB)):
            ke = min(kb + np.uint64(PACK_KB), uk1)
            for l in range(ul):
                for k in range(kb, ke):
                    dst[ub + (k - uk0) * uw + l] = x[ul0 + l, k]
    else:
        for k in range(uk0, uk1):
            for l in range(ul):
                dst[ub + (k - uk0) * uw + l] = x[ul0 + l, k]
    for k in range(uk0, uk1 if lanes < w else uk0):
        for l in range(ul, uw):
            dst[ub + (k - uk0) * uw + l] = 0


@kernel
def _pack_b(b, scratch, nr, edge, t0, t1):
    """Packing tasks t0..t1-1, each rows [k0, k1) of one nr-column panel of one batch of b (Bb, K, N).

    Panel q of batch j lands at scratch[(j*npn + q) * nr*K:], as [k*nr + j]. ``edge``: only
    the last panel of each batch (the one the micro-kernel cannot read in place). A task
    function (``tasks.driver`` runs it in parallel); scratch is 64-byte aligned.
    """
    K, N = b.shape[1], b.shape[2]
    npn = (N + nr - 1) // nr
    nkc = (K + PACK_K - 1) // PACK_K
    scratch = scratch[(-scratch.ctypes.data) % 64 // scratch.itemsize:]
    for t in range(t0, t1):
        panel, c = t // nkc, t % nkc
        if edge:
            panel = panel * npn + npn - 1
        j, q = panel // npn, panel % npn
        k0 = c * PACK_K
        _pack_panel(b[j].T, q * nr, nr, k0, min(K, k0 + PACK_K), scratch, panel * nr * K + k0 * nr)


# ---------------------------------------------------------------- compute

@kernel
def _tasks(a, b, out, scratch, tm, tn, b_batched, a_direct, b_direct, ntask, wstart, wsize,
           acc, trans, narrow, t0, t1):
    """Compute tasks t0..t1-1 of ntask over C (B, M, N); a task function (see ``tasks``).

    C is ``out`` (B, M, N), or with ``trans`` the transpose of each batch of ``out``
    (B, N, M): C[i, r, c] at out[i, c, r]. Task t owns tiles t*ntile//ntask ..
    (t+1)*ntile//ntask - 1 (batch, row block, column block) of the tm x tn grids
    (ntile = B*tm*tn) and the workspace of wsize elements at ws = scratch[wstart + t*wsize:].
    B is packed in scratch (``_pack_b``) in panels of nr columns (one vector when ``narrow``,
    else NV: ``_nr``), or with ``b_direct`` read in place from ``b`` for every whole panel
    (rows contiguous; only the last, partial panel is packed). K is walked in KC blocks, each over all the task's tiles
    (neighbour tiles share A rows, which are then still in cache). A micro-panels are read
    in place when ``a_direct`` and whole, else packed into the workspace (after its MR x nr
    buffer for micro-tiles crossing the edge or a transposed C). ``acc``: the first K block
    starts from out's values instead of zeros (out += a @ b, each chain continued from out).
    """
    B = out.shape[0]
    M, N = (out.shape[2], out.shape[1]) if trans else (out.shape[1], out.shape[2])
    csi, csj = (1, M) if trans else (N, 1)
    K, size = a.shape[2], out.itemsize
    nr = VBYTES // size if narrow else NV * VBYTES // size
    mp, npn = (M + MR - 1) // MR, (N + nr - 1) // nr
    outf = _flat_c(out)
    scratch = scratch[(-scratch.ctypes.data) % 64 // size:]
    for t in range(t0, t1):
        ws = wstart + t * wsize
        slot = ws + (MR * nr + 15) // 16 * 16
        kb = K if trans and a_direct and K <= KC_WHOLE else KC
        for pc in range(0, K, kb):
            kc = min(kb, K - pc)
            packed = -1
            for tile in range(t * (B * tm * tn) // ntask, (t + 1) * (B * tm * tn) // ntask):
                i, r = tile // (tm * tn), tile % (tm * tn)
                p0, p1 = r // tn * mp // tm, (r // tn + 1) * mp // tm
                ia = i if a.shape[0] == B else 0
                bbase = (i if b_batched else 0) * npn * nr * K + pc * nr
                if packed != ia * mp + p0:
                    packed = ia * mp + p0
                    for p in range(p0, p1):
                        # NOTE: with a_direct only the edge panel is packed: at the slot's start
                        if not (a_direct and (p + 1) * MR <= M):
                            _pack_panel(a[ia], p * MR, np.int64(MR), pc, pc + kc, scratch,
                                        slot + (0 if a_direct else (p - p0) * MR * kc))
                for q in range(r % tn * npn // tn, (r % tn + 1) * npn // tn):
                    bdir = b_direct and (q + 1) * nr <= N
                    if bdir:
                        bo = ((i if b_batched else 0) * b.strides[0] + pc * b.strides[1]) // size \
                            + q * nr
                        bks = b.strides[1] // size
                    else:
                        bo, bks = bbase + q * nr * K, nr
                    for p in range(p0, p1):
                        r0 = p * MR
                        direct = a_direct and r0 + MR <= M
                        if direct:
                            ao = (ia * a.strides[0] + r0 * a.strides[1] + pc * a.strides[2]) // size
                            ars, aks = a.strides[1] // size, a.strides[2] // size
                        else:
                            ao, ars, aks = slot + (0 if a_direct else (p - p0) * MR * kc), 1, MR
                        ro = i * M * N + r0 * csi + q * nr * csj
                        rows, cols = min(MR, M - r0), min(nr, N - q * nr)
                        full = rows == MR and cols == nr and not trans
                        first = pc == 0 and not acc
                        # NOTE: columns outer: a transposed C's column is a contiguous run of
                        # rows (its stride, M elements, can map every column to one cache set)
                        for jj in range(0 if full or first else cols):
                            for ii in range(rows):
                                scratch[ws + ii * nr + jj] = outf[ro + ii * csi + jj * csj]
                        # NOTE: one call site per width (C or the edge buffer): one inlined tile each.
                        dst, co, ldc = (outf, ro, N) if full else (scratch, ws, nr)
                        if narrow:
                            NARROW(kc, a, b, scratch, direct, bdir, ao, ars, aks, bo, bks, dst,
                                   co, ldc, first)
                        else:
                            WIDE(kc, a, b, scratch, direct, bdir, ao, ars, aks, bo, bks, dst,
                                 co, ldc, first)
                        for jj in range(0 if full else cols):
                            for ii in range(rows):
                                outf[ro + ii * csi + jj * csj] = scratch[ws + ii * nr + jj]


# ---------------------------------------------------------------- public kernels
# ``gemm`` and ``bgemm`` are plain Python launchers over three serial task
# functions (``_pack_b``, ``_tasks``, ``vecmat``), each compiled once per dtype
# for general strided inputs ('A' layout) and called through that overload's
# entry point (numba would otherwise compile a copy per combination of C, F and
# strided inputs). Big products run the same task functions on numba's threads
# through ``tasks.driver``: no parallel copy of the micro-kernel is compiled.

_ENTRY = {}
_I64 = types.int64


def _types(dtype):
    """numba types (read-only 'A' source, C out, C scratch) of float ``dtype``."""
    dt = types.float32 if dtype == np.float32 else types.float64
    return types.Array(dt, 3, "A", readonly=True), types.Array(dt, 3, "C"), types.Array(dt, 1, "C")


def _kernels(dtype, parallel):
    """(pack B, compute, vecmat) launchers of float ``dtype``, each called ``fn(ntask, *args)``:
    the calling thread runs tasks [0, ntask), or numba's threads run one task each."""
    key = (dtype, parallel)
    fns = _ENTRY.get(key)
    if fns is None:
        src, c3, c1 = _types(dtype)
        flag = types.boolean
        argtypes = ((src, c1, _I64, flag),
                    (src, src, c3, c1, _I64, _I64, flag, flag, flag, _I64, _I64, _I64, flag, flag,
                     flag),
                    (src, src, c3, flag))
        fns = _ENTRY[key] = tuple(_Lazy(fn, ts, parallel)
                                  for fn, ts in zip((_pack_b, _tasks, vecmat), argtypes))
    return fns


class _Lazy:
    """One task function's launcher, compiled on first call (a product may need only some)."""
    __slots__ = ("fn", "types", "parallel", "run")

    def __init__(self, fn, argtypes, parallel):
        self.fn, self.types, self.parallel, self.run = fn, argtypes, parallel, None

    def __call__(self, n, *args):
        if self.run is None:
            k, ts = self.fn, self.types
            self.run = driver(k, ts) if self.parallel else entry(k, ts + (_I64, _I64))
        if self.parallel:
            self.run(n, *args)
        else:
            self.run(*args, 0, n)


def _storage(out):
    """(the C-contiguous array holding ``out``, True when it is out's transpose), or None.

    ``out`` (..., M, N) is C-contiguous, or its last two axes swapped are (``out.T`` of a
    fresh C-contiguous (N, M) array): the kernel then writes C through that transpose.
    """
    if out.flags.c_contiguous:
        return out, False
    t = out.swapaxes(-1, -2)
    return (t, True) if t.flags.c_contiguous else None


def _reads_a_in_place(si, sk, sb, size):
    """True when the micro-kernel reads A (row stride ``si``, k stride ``sk``, batch stride
    ``sb``, in bytes) in place: k or i is its contiguous axis (the MR loads of one k then
    sit in one or two cache lines, and k walks at a constant stride the prefetcher follows),
    every stride in whole, non-negative elements. Else A is packed per tile."""
    return ((sk == size or si == size) and si % size == 0 and sk % size == 0 and sb % size == 0
            and si >= 0 and sk >= 0 and sb >= 0)


def _reads_b_in_place(strides, size, K):
    """True when the micro-kernel reads B (Bb, K, N) in place (only the last, partial panel is
    packed then): its rows are contiguous, every stride in whole, non-negative elements, and
    its row stride is no multiple of 2 KiB unless K is short. Such a stride maps every row of
    a panel to the same few cache sets: read in place, 1024 x 1024 x 1024 took 2x the time
    of packing, while elsewhere skipping the pass over B pays (benchmarks/bench_small_kernels.py,
    docs/kernels.md)."""
    sb, sk, sj = strides
    return (sj == size and sk % size == 0 and sb % size == 0 and sk >= 0 and sb >= 0
            and (sk % 2048 != 0 or K <= KC_SHORT))


def bgemm(a, b, out, scratch, accumulate=False):
    """out[i] = a[i] @ b[i] for every batch i.

    a (B, M, K), b (B, K, N): float32 or float64, any strides (stride 0 on the
    batch axis broadcasts); out (B, M, N) C-contiguous or with its last two axes
    swapped from a C-contiguous (B, N, M) array, overwritten; scratch 1-D
    contiguous with ``bgemm_scratch(B, M, N, K)`` elements. One dtype.
    ``accumulate=True``: out += a @ b, each element's FMA chain continued from
    out's value, so products over consecutive K ranges accumulated in order give
    the bits of one product over the whole K (into zeros).
    """
    # NOTE: these checks guard the entry point, which trusts argument types blindly.
    dt = out.dtype
    if a.dtype != dt or b.dtype != dt or scratch.dtype != dt or dt.char not in "fd":
        raise TypeError("matmul: a, b, out and scratch must share dtype float32 or float64")
    B, M, K = a.shape
    N = b.shape[2]
    if b.shape[:2] != (B, K) or out.shape != (B, M, N):
        raise ValueError("matmul: shapes do not match")
    store = _storage(out)
    if store is None or not scratch.flags.c_contiguous or scratch.ndim != 1:
        raise ValueError("matmul: out (or its transpose) and scratch must be C-contiguous")
    if B == 0 or M == 0 or N == 0:
        return
    if K == 0:
        if not accumulate:
            out.fill(0)
        return
    if N == 1 and M > 1:
        # NOTE: a matrix-vector product would pad the one column of B to NR;
        # out^T = b^T @ a^T is the same (B, 1, M) memory and the same FMA
        # chains (fma(x, y, c) == fma(y, x, c)), with B panels no bigger than a.
        # (An out with N == 1 or M == 1 is C-contiguous whenever its transpose is.)
        a, b, out = b.transpose(0, 2, 1), a.transpose(0, 2, 1), out.reshape(B, 1, M)
        M, N, store = 1, M, (out, False)
    if M == 1:
        # NOTE: a vector-matrix product (batch 1, or a matrix-vector product transposed
        # above): every b element is used once, so packing it would cost as much as the
        # product; ``vecmat`` reads b in place (no scratch).
        nb = (N + vec_cols(dt.itemsize) - 1) // vec_cols(dt.itemsize)
        _kernels(dt, B * N * K >= SERIAL_WORK)[2](B * nb, a, b, out, bool(accumulate))
        return
    nr = _nr(N, dt.itemsize)
    tm, tn, ntask, wstart, wsize, total = _layout(B, M, N, K, nr)
    if scratch.shape[0] < total:
        raise ValueError("matmul: scratch smaller than bgemm_scratch()")
    # NOTE: a broadcast batch axis (stride 0) is packed once and shared.
    if B > 1 and a.strides[0] == 0:
        a = a[:1]
    if B > 1 and b.strides[0] == 0:
        b = b[:1]
    pack, compute, _ = _kernels(dt, B * M * N * K >= SERIAL_WORK)
    size = dt.itemsize
    b_direct = _reads_b_in_place(b.strides, size, K)
    npn, nkc = (N + nr - 1) // nr, (K + PACK_K - 1) // PACK_K
    if not b_direct:
        pack(b.shape[0] * npn * nkc, b, scratch, nr, False)
    elif N % nr:
        _kernels(dt, False)[0](b.shape[0] * nkc, b, scratch, nr, True)   # NOTE: small: serial
    a_direct = _reads_a_in_place(a.strides[1], a.strides[2], a.strides[0], size)
    compute(ntask, a, b, store[0], scratch, tm, tn, b.shape[0] == B, a_direct, b_direct, ntask,
            wstart, wsize, bool(accumulate), store[1], nr != NV * VBYTES // size)


def gemm(a, b, out, scratch, accumulate=False):
    """out[:] = a @ b (``accumulate=True``: out += a @ b, see ``bgemm``).

    a (M, K), b (K, N): float32 or float64, any strides; out (M, N) C-contiguous, or
    the transpose of a C-contiguous (N, M) array (``t.T``: the product is written
    transposed, no copy after); overwritten; scratch 1-D contiguous with
    ``gemm_scratch(M, N, K)`` elements. All arrays share one dtype.

    Example:
        >>> a, b = np.ones((3, 4), np.float32), np.ones((4, 2), np.float32)
        >>> out = np.empty((3, 2), np.float32)
        >>> gemm(a, b, out, np.empty(gemm_scratch(3, 2, 4), np.float32)); out.tolist()[0]
        [4.0, 4.0]
    """
    dt = out.dtype
    if a.ndim == 2 and a.shape[0] == 1 and b.ndim == 2 and out.ndim == 2:
        # NOTE: a one-row product (batch 1) seen before: straight to ``vecmat``, after the
        # checks bgemm would make (the entry point trusts argument types blindly)
        row = _ROWS.get((b.shape, dt))
        if (row is not None and a.dtype == dt and b.dtype == dt and out.shape == (1, b.shape[1])
                and a.shape[1] == b.shape[0] and out.strides[1] == dt.itemsize):
            row[0](row[1], a[None], b[None], out[None], bool(accumulate))
            return
    plan = _PLANS.get((a.shape, b.shape, dt)) if a.ndim == 2 and b.ndim == 2 else None
    if plan is None:
        _gemm_planned(a, b, out, scratch, accumulate)
        return
    # NOTE: what bgemm checks, for shapes seen before: the entry points trust types blindly
    store = _storage(out) if out.ndim == 2 else None
    if a.dtype != dt or b.dtype != dt or scratch.dtype != dt or out.shape != plan[0] \
            or store is None or not scratch.flags.c_contiguous or scratch.ndim != 1:
        bgemm(a[None], b[None], out[None], scratch, accumulate)    # raises the error
        return
    _, par, pack, npack, nr, narrow, compute, tm, tn, ntask, wstart, wsize, total = plan
    b_direct = _reads_b_in_place((0,) + b.strides, dt.itemsize, b.shape[0])
    if scratch.shape[0] < total:
        raise ValueError("matmul: scratch smaller than gemm_scratch()")
    size = dt.itemsize
    a_direct = _reads_a_in_place(a.strides[0], a.strides[1], 0, size)
    o, trans = store[0][None], store[1]
    # NOTE: the compiled launchers themselves (``_Lazy.run``), called as ``_Lazy`` would
    b3 = b[None]
    if b_direct:
        if b.shape[1] % nr:     # NOTE: the last, partial panel, on this thread (it is small)
            _kernels(dt, False)[0]((a.shape[1] + PACK_K - 1) // PACK_K, b3, scratch, nr, True)
    elif par:
        pack(npack, b3, scratch, nr, False)
    else:
        pack(b3, scratch, nr, False, 0, npack)
    if par:
        compute(ntask, a[None], b3, o, scratch, tm, tn, True, a_direct, b_direct, ntask, wstart,
                wsize, bool(accumulate), trans, narrow)
    else:
        compute(a[None], b3, o, scratch, tm, tn, True, a_direct, b_direct, ntask, wstart, wsize,
                bool(accumulate), trans, narrow, 0, ntask)


# (a.shape, b.shape, dtype) -> (out shape, parallel, pack, pack tasks, nr, narrow, compute, tm,
# tn, ntask, wstart, wsize, scratch size) of a 2-D product on the packed path: a repeated shape
# skips bgemm's planning (shapes only: the same kernels and tiles, the same bits)
_PLANS = {}
# (b.shape, dtype) -> (vecmat launcher, tasks) of a one-row 2-D product seen before
_ROWS = {}


def _gemm_planned(a, b, out, scratch, accumulate):
    """``gemm`` through ``bgemm``; remembers the plan of a 2-D product on its packed path."""
    bgemm(a[None], b[None], out[None], scratch, accumulate)
    if a.ndim != 2 or b.ndim != 2 or len(_PLANS) >= 4096:
        return
    (M, K), N, dt = a.shape, b.shape[1], out.dtype
    if M == 1 and min(N, K) > 0 and len(_ROWS) < 4096:
        nb = (N + vec_cols(dt.itemsize) - 1) // vec_cols(dt.itemsize)
        _ROWS[(b.shape, dt)] = (_kernels(dt, N * K >= SERIAL_WORK)[2], nb)
    if min(M, N, K) == 0 or M == 1 or N == 1:
        return          # the vector paths and empty products stay in bgemm
    nr = _nr(N, dt.itemsize)
    tm, tn, ntask, wstart, wsize, total = _layout(1, M, N, K, nr)
    par = M * N * K >= SERIAL_WORK
    pack, compute, _ = _kernels(dt, par)
    if pack.run is None or compute.run is None:
        return
    npack = ((N + nr - 1) // nr) * ((K + PACK_K - 1) // PACK_K)
    _PLANS[(a.shape, b.shape, dt)] = ((M, N), par, pack.run, npack, nr,
                                      nr != NV * VBYTES // dt.itemsize, compute.run, tm, tn,
                                      ntask, wstart, wsize, total)
