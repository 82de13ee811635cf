"""Matrix multiply kernels: a blocked, packed, register-tiled GEMM and its batched form.

How it works (the Goto/BLIS scheme, arranged for determinism):

1. Pack B. Each B is copied into NR-column micro-panels stored k-major
   (``panel[k, j]``) and zero padded, so the micro-kernel reads it as one
   contiguous stream of vectors whatever its strides. Packing tasks are
   (panel, k-range) pieces of equal size, one ``prange`` iteration each.
2. Compute. Each C is cut into tiles of whole micro-tiles (about MC x NC);
   tiles are dealt to at most MAX_TASKS tasks, one ``prange`` iteration each,
   and each task has its own workspace in the scratch. A tile walks K in KC
   blocks; for each block it packs the A rows it needs into its workspace
   (MR-row micro-panels, ``panel[k, i]``), unless A is k-contiguous, where
   the micro-kernel reads A in place (saves a pass over A, which matters
   when N is small). An MR x NR micro-kernel keeps its piece of C in vector
   registers while it streams an A micro-panel and a B micro-panel.

Both phases are serial task functions (``_pack_b``, ``_tasks``; ``_vecmat`` for
one-row products): small products run every task in the calling thread, big
ones run the same compiled code one task per ``prange`` iteration through
``tasks.driver``, so no parallel copy of the micro-kernel is compiled.

The micro-kernel is emitted as LLVM vector IR (``_microkernel``): LLVM does
not vectorize a register tile written in scalars, and with fastmath off it
never contracts a*b+c into an FMA. It calls ``llvm.fma`` explicitly: one
rounding per step, exactly specified by IEEE 754, so no fastmath flag is
needed and the bits do not depend on how the backend schedules it.

Determinism: every C element is ``c = fma(a[i,k], b[k,j], c)`` folded over
k = 0..K-1 in order from c = +0.0, whatever the blocking, the tile split,
the task split or the thread count; the serial and parallel paths give
identical bits.
"""
import functools

import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.core.imputils import impl_ret_borrowed
from numba.np.arrayobj import populate_array

from . import simd_level
from .jit import helper, intrinsic, kernel
from .specialize import entry
from .tasks import driver

__all__ = ["gemm_scratch", "gemm", "bgemm_scratch", "bgemm"]

_SIMD = simd_level()
# Bytes per vector register; the micro-tile is MR rows x NV vectors of C held
# in registers. AVX-512 (32 zmm): 6 x 4 = 24 accumulators, plus 4 for B and
# one broadcast; 6 x 64 float32 measured ~10% faster than 8 x 32, 12 x 32 or
# 14 x 32 on znver4 (more FMAs per load; 7 x 4 spills). AVX2 (16 ymm): 6 x 2,
# the classic 6 x 16. NEON (32 q registers): 6 x 4. SSE: 4 x 2.
VBYTES = {"avx512": 64, "avx2": 32}.get(_SIMD, 16)
MR = {"avx512": 6, "avx2": 6, "neon": 6}.get(_SIMD, 4)
NV = {"avx512": 4, "neon": 4}.get(_SIMD, 2)
# Cache blocking, in elements. KC: depth of one micro-kernel call. MC x NC:
# target size of one C tile (one parallel task). For each KC block a tile
# walks its B micro-panels, and each (KC x NR) B micro-panel meets every A
# micro-panel of the tile's (MC x KC) A block: both stay in L2 (1 MiB per
# core on znver4, where these were tuned) while the A micro-panel streams
# through L1.
KC = 512
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
    wsize = _round_up(MR * nr) + _round_up((mp + tm - 1) // tm * MR * min(K, KC))
    return tm, tn, ntask, wstart, wsize, wstart + ntask * wsize + 16


def bgemm_scratch(B, M, N, K):
    """Scratch elements ``bgemm`` needs for (B, M, K) @ (B, K, N), float32 or float64."""
    n = _SCRATCH.get((B, M, N, K))
    if n is None:
        n = 0 if B == 0 or M == 0 or N == 0 or K == 0 else max(   # N == 1: see bgemm
            _layout(B, *((1, M) if N == 1 else (M, N)), K, NV * VBYTES // size)[5]
            for size in (4, 8))
        if len(_SCRATCH) < 4096:
            _SCRATCH[(B, M, N, K)] = n
    return n


_SCRATCH = {}    # (B, M, N, K) -> bgemm_scratch(B, M, N, K): shapes repeat


def gemm_scratch(M, N, K):
    """Scratch elements ``gemm`` needs for (M, K) @ (K, N), float32 or float64."""
    return bgemm_scratch(1, M, N, K)


# ---------------------------------------------------------------- micro-kernel

def _vec_ptr(builder, base, off, vty):
    return builder.bitcast(builder.gep(base, [off]), vty.as_pointer())


def _emit_tile_init(builder, first, pc, ldc, vty, align):
    """Accumulators at entry: zeros on the first K block, else the C tile (loaded only then)."""
    i64 = ir.IntType(64)
    zero = ir.Constant(vty, None)
    loaded = []
    with builder.if_else(first) as (then, otherwise):
        with then:
            bb_zero = builder.block
        with otherwise:
            for i in range(MR):
                row = builder.mul(ldc, ir.Constant(i64, i))
                for v in range(NV):
                    off = builder.add(row, ir.Constant(i64, v * vty.count))
                    loaded.append(builder.load(_vec_ptr(builder, pc, off, vty), align=align))
            bb_load = builder.block
    init = []
    for x in loaded:
        phi = builder.phi(vty)
        phi.add_incoming(zero, bb_zero)
        phi.add_incoming(x, bb_load)
        init.append(phi)
    return init


def _emit_k_step(builder, koff, rows, pb, accs, vty, align):
    """One k: NV vectors of B, MR broadcasts of A (row pointers + koff), MR*NV fused multiply-adds."""
    i64 = ir.IntType(64)
    fma = cgutils.get_or_insert_function(
        builder.module, ir.FunctionType(vty, [vty] * 3),
        "llvm.fma.v%d%s" % (vty.count, "f32" if vty.element == ir.FloatType() else "f64"))
    bv = [builder.load(_vec_ptr(builder, pb, ir.Constant(i64, v * vty.count), vty), align=align)
          for v in range(NV)]
    undef = ir.Constant(vty, ir.Undefined)
    splat = ir.Constant(ir.VectorType(ir.IntType(32), vty.count), None)
    out = []
    for i in range(MR):
        a = builder.load(builder.gep(rows[i], [koff]))
        av = builder.shuffle_vector(builder.insert_element(undef, a, ir.Constant(ir.IntType(32), 0)),
                                    undef, splat)
        out.extend(builder.call(fma, [av, bv[v], accs[i * NV + v]]) for v in range(NV))
    return out


def _emit_microkernel(builder, kc, pa, ars, aks, pb, pc, ldc, first, vty, align):
    """C[i, j] = fma(A[i, k], B[k, j], C[i, j]) for k in 0..kc-1, C held in registers.

    A[i, k] at pa[i*ars + k*aks]; B[k, j] at pb[k*NR + j]; C[i, j] at pc[i*ldc + j].
    """
    i64 = ir.IntType(64)
    init = _emit_tile_init(builder, first, pc, ldc, vty, align)
    rows = [builder.gep(pa, [builder.mul(ars, ir.Constant(i64, i))]) for i in range(MR)]
    pre = builder.block
    loop = builder.append_basic_block("uk.loop")
    done = builder.append_basic_block("uk.done")
    builder.cbranch(builder.icmp_signed(">", kc, ir.Constant(i64, 0)), loop, done)
    builder.position_at_end(loop)
    k = builder.phi(i64)
    k.add_incoming(ir.Constant(i64, 0), pre)
    accs = []
    for x in init:
        phi = builder.phi(vty)
        phi.add_incoming(x, pre)
        accs.append(phi)
    pbk = builder.gep(pb, [builder.mul(k, ir.Constant(i64, NV * vty.count))])
    new = _emit_k_step(builder, builder.mul(k, aks), rows, pbk, accs, vty, align)
    k1 = builder.add(k, ir.Constant(i64, 1))
    latch = builder.block
    k.add_incoming(k1, latch)
    for phi, x in zip(accs, new):
        phi.add_incoming(x, latch)
    builder.cbranch(builder.icmp_signed("<", k1, kc), loop, done)
    builder.position_at_end(done)
    res = []
    for x0, x1 in zip(init, new):
        phi = builder.phi(vty)
        phi.add_incoming(x0, pre)
        phi.add_incoming(x1, latch)
        res.append(phi)
    for i in range(MR):
        row = builder.mul(ldc, ir.Constant(i64, i))
        for v in range(NV):
            off = builder.add(row, ir.Constant(i64, v * vty.count))
            builder.store(res[i * NV + v], _vec_ptr(builder, pc, off, vty), align=align)


@intrinsic
def _microkernel(typingctx, kc, a, scratch, a_direct, ao, ars, aks, bo, dst, co, ldc, first):
    """One MR x NR tile of C over kc steps of k.

    A[i, k] at src[ao + i*ars + k*aks] with src = a (its data, when a_direct)
    or scratch; B[k, j] at scratch[bo + k*NR + j] (NR = NV vectors); C[i, j]
    at dst[co + i*ldc + j]. ``first``: start from zeros, not from C.
    """
    dt = scratch.dtype
    if not (isinstance(dt, types.Float) and a.dtype == dt and dst.dtype == dt):
        return None
    sig = types.none(kc, a, scratch, a_direct, ao, ars, aks, bo, dst, co, ldc, first)

    def codegen(context, builder, sig, args):
        tys = sig.args
        pa, ps, pd = (context.make_array(tys[n])(context, builder, args[n]).data for n in (1, 2, 8))
        kc_, ao_, ars_, aks_, bo_, co_, ldc_ = (context.cast(builder, args[n], tys[n], types.int64)
                                                for n in (0, 4, 5, 6, 7, 9, 10))
        direct = context.cast(builder, args[3], tys[3], types.boolean)
        first_ = context.cast(builder, args[11], tys[11], types.boolean)
        vty = ir.VectorType(context.get_value_type(dt), VBYTES * 8 // dt.bitwidth)
        pa = builder.select(direct, builder.gep(pa, [ao_]), builder.gep(ps, [ao_]))
        _emit_microkernel(builder, kc_, pa, ars_, aks_, builder.gep(ps, [bo_]),
                          builder.gep(pd, [co_]), ldc_, first_, vty, dt.bitwidth // 8)
        return context.get_dummy_value()

    return sig, codegen


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
def _pack_b(b, scratch, t0, t1):
    """Packing tasks t0..t1-1, each rows [k0, k1) of one nr-column panel of one batch of b (Bb, K, N).

    Panel q of batch j lands at scratch[(j*npn + q) * nr*K:], as [k*nr + j]. A task
    function (``tasks.driver`` runs it in parallel); scratch is 64-byte aligned.
    """
    K, N = b.shape[1], b.shape[2]
    nr = NV * VBYTES // scratch.itemsize
    npn = (N + nr - 1) // nr
    nkc = (K + PACK_K - 1) // PACK_K
    scratch = scratch[(-scratch.ctypes.data) % 64 // scratch.itemsize:]
    for t in range(t0, t1):
        panel, c = t // nkc, t % nkc
        j, q = panel // npn, panel % npn
        k0 = c * PACK_K
        _pack_panel(b[j].T, q * nr, nr, k0, min(K, k0 + PACK_K), scratch, panel * nr * K + k0 * nr)


# ---------------------------------------------------------------- compute

@intrinsic
def _flat_c(typingctx, a):
    """C-contiguous ``a`` seen as a 1-D array: the same memory, no check, no copy.

    NOTE (cold start): ``a.reshape(a.size)`` compiles numba's general reshape with its
    error paths (about 0.1 s of the first gemm); a C array needs none of it.
    """
    if not (isinstance(a, types.Array) and a.layout == "C"):
        return None
    ret = types.Array(a.dtype, 1, "C")

    def codegen(context, builder, sig, args):
        src = context.make_array(sig.args[0])(context, builder, args[0])
        dst = context.make_array(ret)(context, builder)
        populate_array(dst, data=src.data, shape=[src.nitems], strides=[src.itemsize],
                       itemsize=src.itemsize, meminfo=src.meminfo, parent=src.parent)
        return impl_ret_borrowed(context, builder, ret, dst._getvalue())

    return ret(a), codegen


@kernel
def _tasks(a, out, scratch, tm, tn, b_batched, a_direct, ntask, wstart, wsize, acc, t0, t1):
    """Compute tasks t0..t1-1 of ntask over out (B, M, N); a task function (see ``tasks``).

    Task t owns tiles t*ntile//ntask .. (t+1)*ntile//ntask - 1 (batch, row block,
    column block) of the tm x tn grids (ntile = B*tm*tn) and the workspace of wsize
    elements at ws = scratch[wstart + t*wsize:]. B is packed in scratch (``_pack_b``).
    K is walked in KC blocks, each over all the task's tiles (neighbour tiles share
    A rows, which are then still in cache). A micro-panels are read in place when
    ``a_direct`` and whole, else packed into the workspace (after its MR x nr buffer
    for micro-tiles crossing the edge). ``acc``: the first K block starts from out's values
    instead of zeros (out += a @ b, each chain continued from out).
    """
    B, M, N = out.shape
    K, size = a.shape[2], out.itemsize
    nr = NV * VBYTES // size
    mp, npn = (M + MR - 1) // MR, (N + nr - 1) // nr
    outf = _flat_c(out)
    scratch = scratch[(-scratch.ctypes.data) % 64 // size:]
    for t in range(t0, t1):
        ws = wstart + t * wsize
        slot = ws + (MR * nr + 15) // 16 * 16
        for pc in range(0, K, KC):
            kc = min(KC, K - pc)
            packed = -1
            for tile in range(t * (B * tm * tn) // ntask, (t + 1) * (B * tm * tn) // ntask):
                i, r = tile // (tm * tn), tile % (tm * tn)
                p0, p1 = r // tn * mp // tm, (r // tn + 1) * mp // tm
                ia = i if a.shape[0] == B else 0
                bbase = (i if b_batched else 0) * npn * nr * K + pc * nr
                if packed != ia * mp + p0:
                    packed = ia * mp + p0
                    for p in range(p0, p1):
                        if not (a_direct and (p + 1) * MR <= M):
                            _pack_panel(a[ia], p * MR, np.int64(MR), pc, pc + kc, scratch,
                                        slot + (p - p0) * MR * kc)
                for q in range(r % tn * npn // tn, (r % tn + 1) * npn // tn):
                    for p in range(p0, p1):
                        r0 = p * MR
                        direct = a_direct and r0 + MR <= M
                        if direct:
                            ao = (ia * a.strides[0] + r0 * a.strides[1] + pc * a.strides[2]) // size
                            ars, aks = a.strides[1] // size, 1
                        else:
                            ao, ars, aks = slot + (p - p0) * MR * kc, 1, MR
                        ro = (i * M + r0) * N + q * nr
                        rows, cols = min(MR, M - r0), min(nr, N - q * nr)
                        full = rows == MR and cols == nr
                        first = pc == 0 and not acc
                        for ii in range(0 if full or first else rows):
                            for jj in range(cols):
                                scratch[ws + ii * nr + jj] = outf[ro + ii * N + jj]
                        # NOTE: one call site (C or the edge buffer) keeps one inlined micro-kernel.
                        dst, co, ldc = (outf, ro, N) if full else (scratch, ws, nr)
                        _microkernel(kc, a, scratch, direct, ao, ars, aks, bbase + q * nr * K,
                                     dst, co, ldc, first)
                        for ii in range(0 if full else rows):
                            for jj in range(cols):
                                outf[ro + ii * N + jj] = scratch[ws + ii * nr + jj]


@intrinsic
def _fma(typingctx, x, y, z):
    """fma(x, y, z): x*y + z rounded once (``llvm.fma``), the micro-kernel's step for one element."""
    if not (isinstance(x, types.Float) and x == y == z):
        return None

    def codegen(context, builder, sig, args):
        ty = context.get_value_type(sig.return_type)
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ty, [ty] * 3),
            "llvm.fma.%s" % ("f32" if ty == ir.FloatType() else "f64"))
        return builder.call(fn, args)

    return x(x, y, z), codegen


VEC_COLS = 16   # columns one pass of ``_vecmat`` keeps going (independent FMA chains)


@kernel
def _vecmat(a, b, out, t0, t1):
    """out[i, 0, :] = a[i, 0, :] @ b[i] for a (Ba, 1, K), b (Bb, K, N), out (B, 1, N).

    Each out element is fma(a[k], b[k, j], c) folded over k = 0..K-1 from c = +0.0: the
    same chain as the blocked kernel's, so a product gives the same bits by either path.
    Columns go VEC_COLS at a time (independent chains), b is read in place whatever its
    strides. A task function: tasks t0..t1-1 of the (batch, column block) tasks.
    """
    B, N = out.shape[0], out.shape[2]
    K = a.shape[2]
    nb = (N + VEC_COLS - 1) // VEC_COLS
    for t in range(t0, t1):
        i, j0 = t // nb, t % nb * VEC_COLS
        j1 = min(N, j0 + VEC_COLS)
        ar = a[i if a.shape[0] == B else 0, 0]
        bi = b[i if b.shape[0] == B else 0]
        o = out[i, 0, j0:j1]
        for j in range(j1 - j0):
            o[j] = 0
        for k in range(K):
            av = ar[k]
            brow = bi[k, j0:j1]
            for j in range(j1 - j0):
                o[j] = _fma(av, brow[j], o[j])


# ---------------------------------------------------------------- public kernels
# ``gemm`` and ``bgemm`` are plain Python launchers over three serial task
# functions (``_pack_b``, ``_tasks``, ``_vecmat``), each compiled once per dtype
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
        argtypes = ((src, c1),
                    (src, c3, c1, _I64, _I64, types.boolean, types.boolean, _I64, _I64, _I64,
                     types.boolean),
                    (src, src, c3))
        fns = _ENTRY[key] = tuple(_Lazy(fn, ts, parallel)
                                  for fn, ts in zip((_pack_b, _tasks, _vecmat), argtypes))
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


def bgemm(a, b, out, scratch, accumulate=False):
    """out[i] = a[i] @ b[i] for every batch i.

    a (B, M, K), b (B, K, N): float32 or float64, any strides (stride 0 on the
    batch axis broadcasts); out (B, M, N) C-contiguous, overwritten; scratch
    1-D contiguous with ``bgemm_scratch(B, M, N, K)`` elements. One dtype.
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
    if not (out.flags.c_contiguous and scratch.flags.c_contiguous) or scratch.ndim != 1:
        raise ValueError("matmul: out and scratch must be C-contiguous")
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
        a, b, out = b.transpose(0, 2, 1), a.transpose(0, 2, 1), out.reshape(B, 1, M)
        M, N = 1, M
    if M == 1 and not accumulate:
        # NOTE: a vector-matrix product (batch 1, or a matrix-vector product transposed
        # above): every b element is used once, so packing it would cost as much as the
        # product; ``_vecmat`` reads b in place.
        nb = (N + VEC_COLS - 1) // VEC_COLS
        _kernels(dt, B * N * K >= SERIAL_WORK)[2](B * nb, a, b, out)
        return
    tm, tn, ntask, wstart, wsize, total = _layout(B, M, N, K, NV * VBYTES // dt.itemsize)
    if scratch.shape[0] < total:
        raise ValueError("matmul: scratch smaller than bgemm_scratch()")
    # NOTE: a broadcast batch axis (stride 0) is packed once and shared.
    if B > 1 and a.strides[0] == 0:
        a = a[:1]
    if B > 1 and b.strides[0] == 0:
        b = b[:1]
    pack, compute, _ = _kernels(dt, B * M * N * K >= SERIAL_WORK)
    nr = NV * VBYTES // dt.itemsize
    pack(b.shape[0] * ((N + nr - 1) // nr) * ((K + PACK_K - 1) // PACK_K), b, scratch)
    # NOTE: A is read in place when k is its contiguous axis (strides in whole elements).
    size = dt.itemsize
    a_direct = a.strides[2] == size and a.strides[1] % size == 0 and a.strides[0] % size == 0
    compute(ntask, a, out, scratch, tm, tn, b.shape[0] == B, a_direct, ntask, wstart, wsize,
            bool(accumulate))


def gemm(a, b, out, scratch, accumulate=False):
    """out[:] = a @ b (``accumulate=True``: out += a @ b, see ``bgemm``).

    a (M, K), b (K, N): float32 or float64, any strides; out (M, N) C-contiguous,
    overwritten; scratch 1-D contiguous with ``gemm_scratch(M, N, K)`` elements.
    All arrays share one dtype.
    """
    dt = out.dtype
    plan = _PLANS.get((a.shape, b.shape, dt)) if a.ndim == 2 and b.ndim == 2 else None
    if plan is None:
        _gemm_planned(a, b, out, scratch, accumulate)
        return
    # NOTE: what bgemm checks, for shapes seen before: the entry points trust types blindly
    if a.dtype != dt or b.dtype != dt or scratch.dtype != dt or out.shape != plan[0] \
            or not (out.flags.c_contiguous and scratch.flags.c_contiguous) or scratch.ndim != 1:
        bgemm(a[None], b[None], out[None], scratch, accumulate)    # raises the error
        return
    _, par, pack, npack, compute, tm, tn, ntask, wstart, wsize, total = plan
    if scratch.shape[0] < total:
        raise ValueError("matmul: scratch smaller than gemm_scratch()")
    size = dt.itemsize
    a_direct = a.strides[1] == size and a.strides[0] % size == 0
    # NOTE: the compiled launchers themselves (``_Lazy.run``), called as ``_Lazy`` would
    if par:
        pack(npack, b[None], scratch)
        compute(ntask, a[None], out[None], scratch, tm, tn, True, a_direct, ntask, wstart,
                wsize, bool(accumulate))
    else:
        pack(b[None], scratch, 0, npack)
        compute(a[None], out[None], scratch, tm, tn, True, a_direct, ntask, wstart, wsize,
                bool(accumulate), 0, ntask)


# (a.shape, b.shape, dtype) -> (out shape, parallel, pack, pack tasks, compute, tm, tn, ntask,
# wstart, wsize, scratch size) of a 2-D product on the packed path: a repeated shape skips
# bgemm's planning (shapes only: the same kernels and tiles, the same bits)
_PLANS = {}


def _gemm_planned(a, b, out, scratch, accumulate):
    """``gemm`` through ``bgemm``; remembers the plan of a 2-D product on its packed path."""
    bgemm(a[None], b[None], out[None], scratch, accumulate)
    if a.ndim != 2 or b.ndim != 2 or len(_PLANS) >= 4096:
        return
    (M, K), N, dt = a.shape, b.shape[1], out.dtype
    if min(M, N, K) == 0 or M == 1 or N == 1:
        return          # the vector paths and empty products stay in bgemm
    nr = NV * VBYTES // dt.itemsize
    tm, tn, ntask, wstart, wsize, total = _layout(1, M, N, K, nr)
    par = M * N * K >= SERIAL_WORK
    pack, compute, _ = _kernels(dt, par)
    if pack.run is None or compute.run is None:
        return
    npack = ((N + nr - 1) // nr) * ((K + PACK_K - 1) // PACK_K)
    _PLANS[(a.shape, b.shape, dt)] = ((M, N), par, pack.run, npack, compute.run, tm, tn, ntask,
                                      wstart, wsize, total)
