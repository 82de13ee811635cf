"""The gemm's register tile: an MR x (nv vectors) piece of C kept in vector registers.

``microkernel(nv)`` is an intrinsic emitting LLVM vector IR for one tile over kc
steps of k: LLVM does not vectorize a register tile written in scalars, and with
fastmath off it never contracts a*b+c into an FMA. The tile calls ``llvm.fma``
explicitly: one rounding per step, exactly specified by IEEE 754, so no fastmath
flag is needed and the bits do not depend on how the backend schedules it.

Two widths exist: ``WIDE`` (NV vectors, the tile of every product) and ``NARROW`` (one
vector, for products whose C has at most one vector of columns: the 10 outputs of a
classifier's last layer would otherwise be padded to NV vectors, 6.4x the FMAs on
AVX-512). Whatever the width, every C element is ``c = fma(a[i,k], b[k,j], c)`` folded
over k in order, so both give the same bits; the widths depend on the SIMD level, the
summation order never does.

Sizes (per SIMD level): VBYTES bytes per vector register; MR rows of C. AVX-512 (32 zmm):
6 x 4 = 24 accumulators, plus 4 for B and one broadcast; 6 x 64 float32 measured ~10%
faster than 8 x 32, 12 x 32 or 14 x 32 on znver4 (more FMAs per load; 7 x 4 spills), and
than 8 x 48, 12 x 32 or 4 x 96 on an Intel AVX-512 Xeon too.
AVX2 (16 ymm): 6 x 2, the classic 6 x 16. NEON (32 q registers): 6 x 4. SSE: 4 x 2.
"""
from llvmlite import ir
from numba.core import cgutils, types
from numba.core.imputils import impl_ret_borrowed
from numba.np.arrayobj import populate_array

from . import simd_level
from .jit import intrinsic

__all__ = []

_SIMD = simd_level()
VBYTES = {"avx512": 64, "avx2": 32}.get(_SIMD, 16)
MR = {"avx512": 6, "avx2": 6, "neon": 6}.get(_SIMD, 4)
NV = {"avx512": 4, "neon": 4}.get(_SIMD, 2)


def _vec_ptr(builder, base, off, vty):
    return builder.bitcast(builder.gep(base, [off]), vty.as_pointer())


def _emit_tile_init(builder, first, pc, ldc, vty, nv, mr, align):
    """Accumulators at entry: zeros on the first K block, else the C tile (loaded only then)."""
    i64 = ir.IntType(64)
    zero = ir.Constant(vty, None)
    loaded = []
    with builder.if_else(first) as (then, otherwise):
        with then:
            bb_zero = builder.block
        with otherwise:
            for i in range(mr):
                row = builder.mul(ldc, ir.Constant(i64, i))
                for v in range(nv):
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


def _emit_k_step(builder, koff, rows, pb, accs, vty, nv, align):
    """One k: nv vectors of B, a broadcast of A per row (row pointers + koff), rows*nv fused
    multiply-adds."""
    i64 = ir.IntType(64)
    fma = cgutils.get_or_insert_function(
        builder.module, ir.FunctionType(vty, [vty] * 3),
        "llvm.fma.v%d%s" % (vty.count, "f32" if vty.element == ir.FloatType() else "f64"))
    bv = [builder.load(_vec_ptr(builder, pb, ir.Constant(i64, v * vty.count), vty), align=align)
          for v in range(nv)]
    undef = ir.Constant(vty, ir.Undefined)
    splat = ir.Constant(ir.VectorType(ir.IntType(32), vty.count), None)
    out = []
    for i in range(len(rows)):
        a = builder.load(builder.gep(rows[i], [koff]))
        av = builder.shuffle_vector(builder.insert_element(undef, a, ir.Constant(ir.IntType(32), 0)),
                                    undef, splat)
        out.extend(builder.call(fma, [av, bv[v], accs[i * nv + v]]) for v in range(nv))
    return out


def _emit_tile(builder, kc, pa, ars, aks, pb, bks, pc, ldc, first, vty, nv, mr, align):
    """C[i, j] = fma(A[i, k], B[k, j], C[i, j]) for k in 0..kc-1, C held in registers.

    A[i, k] at pa[i*ars + k*aks]; B[k, j] at pb[k*bks + j] (j < nv vectors); C[i, j] at
    pc[i*ldc + j].
    """
    i64 = ir.IntType(64)
    init = _emit_tile_init(builder, first, pc, ldc, vty, nv, mr, align)
    rows = [builder.gep(pa, [builder.mul(ars, ir.Constant(i64, i))]) for i in range(mr)]
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
    pbk = builder.gep(pb, [builder.mul(k, bks)])
    new = _emit_k_step(builder, builder.mul(k, aks), rows, pbk, accs, vty, nv, align)
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
    for i in range(mr):
        row = builder.mul(ldc, ir.Constant(i64, i))
        for v in range(nv):
            off = builder.add(row, ir.Constant(i64, v * vty.count))
            builder.store(res[i * nv + v], _vec_ptr(builder, pc, off, vty), align=align)


def microkernel(nv, mr=MR):
    """The intrinsic ``tile(kc, a, b, scratch, a_direct, b_direct, ao, ars, aks, bo, bks, dst,
    co, ldc, first)`` of an mr x (nv vectors) tile: C[i, j] over kc steps of k.

    A[i, k] at src[ao + i*ars + k*aks] with src = a (its data, when a_direct) or scratch;
    B[k, j] at srcb[bo + k*bks + j] with srcb = b (when b_direct) or scratch (packed panels:
    bks = nr); C[i, j] at dst[co + i*ldc + j]. ``first``: start from zeros, not from C.
    """
    @intrinsic
    def tile(typingctx, kc, a, b, scratch, a_direct, b_direct, ao, ars, aks, bo, bks, dst, co,
             ldc, first):
        dt = scratch.dtype
        if not (isinstance(dt, types.Float) and a.dtype == dt and b.dtype == dt
                and dst.dtype == dt):
            return None
        sig = types.none(kc, a, b, scratch, a_direct, b_direct, ao, ars, aks, bo, bks, dst, co,
                         ldc, first)

        def codegen(context, builder, sig, args):
            tys = sig.args
            pa, pb, ps, pd = (context.make_array(tys[n])(context, builder, args[n]).data
                              for n in (1, 2, 3, 11))
            kc_, ao_, ars_, aks_, bo_, bks_, co_, ldc_ = (
                context.cast(builder, args[n], tys[n], types.int64)
                for n in (0, 6, 7, 8, 9, 10, 12, 13))
            adir, bdir, first_ = (context.cast(builder, args[n], tys[n], types.boolean)
                                  for n in (4, 5, 14))
            vty = ir.VectorType(context.get_value_type(dt), VBYTES * 8 // dt.bitwidth)
            pa = builder.select(adir, builder.gep(pa, [ao_]), builder.gep(ps, [ao_]))
            pb = builder.select(bdir, builder.gep(pb, [bo_]), builder.gep(ps, [bo_]))
            _emit_tile(builder, kc_, pa, ars_, aks_, pb, bks_, builder.gep(pd, [co_]), ldc_,
                       first_, vty, nv, mr, dt.bitwidth // 8)
            return context.get_dummy_value()

        return sig, codegen

    return tile


WIDE = microkernel(NV)
NARROW = microkernel(1)


@intrinsic
def fma(typingctx, x, y, z):
    """fma(x, y, z): x*y + z rounded once (``llvm.fma``), the tile's step for one element."""
    if not (isinstance(x, types.Float) and x == y == z):
        return None

    def codegen(context, builder, sig, args):
        ty = context.get_value_type(sig.return_type)
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ty, [ty] * 3),
            "llvm.fma.%s" % ("f32" if ty == ir.FloatType() else "f64"))
        return builder.call(fn, args)

    return x(x, y, z), codegen


@intrinsic
def flat_c(typingctx, a):
    """C-contiguous ``a`` seen as a 1-D array: the same memory, no check, no copy (the tiles
    address C by element offsets).

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
