"""One-row products, ``out[0, :] = a[0, :] @ b``: a linear layer at batch 1, a matrix-vector product.

Every element of b is used once, so packing b (what the blocked gemm does, ``matmul``)
would cost as much as the product. ``vecmat`` reads b in place, and keeps for every out
element the chain of the blocked gemm: ``c = fma(a[k], b[k, j], c)`` folded over
k = 0..K-1 in order from +0.0 (or from out's value, accumulating). A row computed here
has the bits of the same row inside a many-row product, on every path below.

How b is read depends on its strides (checked per call, inside the kernel):

- rows contiguous (``x @ w``): a 1-row register tile (``gemm_tile.microkernel(nv, 1)``)
  of 2*NV vectors of columns streams b row by row; the last columns go one vector at a
  time, then one element at a time;
- columns contiguous (``x @ w.T`` with w (N, K) C-contiguous, a ``Linear`` at batch 1):
  ``DOTS`` loads an L x L block of w (L lanes: L columns, L steps of k), transposes it in
  registers (log2 L rounds of perfect shuffles) so each vector holds one k for L columns,
  and folds the L steps into L accumulators in k order. A k tail shorter than L continues
  the same chains in scalars; columns left over go one at a time;
- anything else (strided views, element strides that are not whole elements): a scalar
  loop over a block of columns, k outer, every chain in order.

Block sizes are counted in vectors, so they follow the SIMD level; the summation order
(one chain per element over k in order) never does: the bits are the same on every
machine and thread count.
"""
from llvmlite import ir
from numba.core import cgutils, types

from .gemm_tile import NV, VBYTES, flat_c, fma as _fma, microkernel
from .jit import intrinsic, kernel

__all__ = ["vecmat", "vec_cols"]

ROW_WIDE = microkernel(2 * NV, 1)   # 1 x 2NV vectors: one task's block of a contiguous-row b
ROW_ONE = microkernel(1, 1)         # 1 x 1 vector: its remainder, a vector at a time


def vec_cols(itemsize):
    """Columns of out one ``vecmat`` task owns: 2*NV vectors of ``itemsize`` elements."""
    return 2 * NV * VBYTES // itemsize


def _transpose(builder, rows):
    """The L vectors ``rows`` (an L x L block, row r = rows[r]) transposed: vector k holds
    element k of every row. log2(L) rounds: row pairs (i, i + L/2) interleave, low halves
    into row 2i and high halves into row 2i + 1 (checked against numpy in the tests)."""
    L = len(rows)
    h = L // 2
    i32 = ir.IntType(32)
    lo = ir.Constant(ir.VectorType(i32, L), [m // 2 + (L if m % 2 else 0) for m in range(L)])
    hi = ir.Constant(ir.VectorType(i32, L), [h + m // 2 + (L if m % 2 else 0) for m in range(L)])
    step = 1
    while step < L:
        nxt = []
        for i in range(h):
            nxt.append(builder.shuffle_vector(rows[i], rows[i + h], lo))
            nxt.append(builder.shuffle_vector(rows[i], rows[i + h], hi))
        rows, step = nxt, step * 2
    return rows


@intrinsic
def DOTS(typingctx, nkb, a, ao, aks, b, bo, bjs, out, oo, first):
    """``out[oo + j] = fma-chain over k < nkb*L of a[ao + k*aks] * b[bo + j*bjs + k]`` for
    j < L (L lanes of out's dtype), from zeros when ``first``, else from out's values.

    Offsets and strides in elements of the arrays' data; b's k axis is contiguous, out's
    L elements too.
    """
    dt = out.dtype
    if not (isinstance(dt, types.Float) and a.dtype == dt and b.dtype == dt):
        return None
    sig = types.none(nkb, a, ao, aks, b, bo, bjs, out, oo, first)

    def codegen(context, builder, sig, args):
        tys = sig.args
        pa, pb, po = (context.make_array(tys[n])(context, builder, args[n]).data
                      for n in (1, 4, 7))
        nkb_, ao_, aks_, bo_, bjs_, oo_ = (context.cast(builder, args[n], tys[n], types.int64)
                                           for n in (0, 2, 3, 5, 6, 8))
        first_ = context.cast(builder, args[9], tys[9], types.boolean)
        ety = context.get_value_type(dt)
        L = VBYTES * 8 // dt.bitwidth
        vty = ir.VectorType(ety, L)
        align = dt.bitwidth // 8
        i64 = ir.IntType(64)
        fma = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(vty, [vty] * 3),
            "llvm.fma.v%d%s" % (L, "f32" if ety == ir.FloatType() else "f64"))
        pa, pb = builder.gep(pa, [ao_]), builder.gep(pb, [bo_])
        pov = builder.bitcast(builder.gep(po, [oo_]), vty.as_pointer())
        with builder.if_else(first_) as (then, otherwise):
            with then:
                bb_zero = builder.block
            with otherwise:
                loaded = builder.load(pov, align=align)
                bb_load = builder.block
        init = builder.phi(vty)
        init.add_incoming(ir.Constant(vty, None), bb_zero)
        init.add_incoming(loaded, bb_load)
        rows = [builder.gep(pb, [builder.mul(bjs_, ir.Constant(i64, j))]) for j in range(L)]
        pre = builder.block
        loop = builder.append_basic_block("dots.loop")
        done = builder.append_basic_block("dots.done")
        builder.cbranch(builder.icmp_signed(">", nkb_, ir.Constant(i64, 0)), loop, done)
        builder.position_at_end(loop)
        kb = builder.phi(i64)
        kb.add_incoming(ir.Constant(i64, 0), pre)
        acc = builder.phi(vty)
        acc.add_incoming(init, pre)
        k0 = builder.mul(kb, ir.Constant(i64, L))
        block = [builder.load(builder.bitcast(builder.gep(r, [k0]), vty.as_pointer()), align=align)
                 for r in rows]
        cols = _transpose(builder, block)
        undef = ir.Constant(vty, ir.Undefined)
        splat = ir.Constant(ir.VectorType(ir.IntType(32), L), None)
        c = acc
        for k in range(L):
            x = builder.load(builder.gep(pa, [builder.mul(builder.add(k0, ir.Constant(i64, k)),
                                                          aks_)]))
            xv = builder.shuffle_vector(builder.insert_element(undef, x, ir.Constant(
                ir.IntType(32), 0)), undef, splat)
            c = builder.call(fma, [xv, cols[k], c])
        kb1 = builder.add(kb, ir.Constant(i64, 1))
        latch = builder.block
        kb.add_incoming(kb1, latch)
        acc.add_incoming(c, latch)
        builder.cbranch(builder.icmp_signed("<", kb1, nkb_), loop, done)
        builder.position_at_end(done)
        res = builder.phi(vty)
        res.add_incoming(init, pre)
        res.add_incoming(c, latch)
        builder.store(res, pov, align=align)
        return context.get_dummy_value()

    return sig, codegen


@kernel
def vecmat(a, b, out, acc, t0, t1):
    """Tasks t0..t1-1 of ``out[i, 0, :] = a[i, 0, :] @ b[i]`` (``acc``: ``+=``, each chain
    continued from out's value); a task function (see ``tasks``).

    a (Ba, 1, K), b (Bb, K, N) any strides, Ba and Bb equal to B or 1 (broadcast); out
    (B, 1, N) C-contiguous. Task t is batch t // nb, columns [t % nb * W, +W) with
    W = ``vec_cols(itemsize)`` and nb = ceil(N / W).
    """
    B, N, K = out.shape[0], out.shape[2], a.shape[2]
    size = out.itemsize
    W = 2 * NV * VBYTES // size
    L = VBYTES // size
    nb = (N + W - 1) // W
    sa0, sak = a.strides[0], a.strides[2]
    sb0, sbk, sbj = b.strides[0], b.strides[1], b.strides[2]
    whole = (sa0 % size == 0 and sak % size == 0 and sb0 % size == 0 and sbk % size == 0
             and sbj % size == 0)
    rows = whole and sbj == size
    cols = whole and sbk == size and not rows
    of = flat_c(out)
    first = not acc
    for t in range(t0, t1):
        i, j0 = t // nb, t % nb * W
        j1 = min(N, j0 + W)
        ia = i if a.shape[0] == B else 0
        ib = i if b.shape[0] == B else 0
        ao, aks = ia * (sa0 // size) if whole else 0, sak // size if whole else 0
        bo = ib * (sb0 // size) if whole else 0
        oo = i * N
        j = j0
        if rows:
            bks = sbk // size
            if j1 - j0 == W:
                ROW_WIDE(K, a, b, of, True, True, ao, 0, aks, bo + j, bks, of, oo + j, N, first)
                j = j1
            while j + L <= j1:
                ROW_ONE(K, a, b, of, True, True, ao, 0, aks, bo + j, bks, of, oo + j, N, first)
                j += L
        elif cols:
            bjs = sbj // size
            nkb = K // L
            while j + L <= j1:
                DOTS(nkb, a, ao, aks, b, bo + j * bjs, bjs, of, oo + j, first)
                for k in range(nkb * L, K):
                    x = a[ia, 0, k]
                    for jj in range(j, j + L):
                        of[oo + jj] = _fma(x, b[ib, k, jj], of[oo + jj])
                j += L
        # NOTE: what is left (the last columns, or every column of an odd layout): k outer,
        # the block's chains kept in out
        if j < j1:
            if first:
                for jj in range(j, j1):
                    of[oo + jj] = 0
            for k in range(K):
                x = a[ia, 0, k]
                for jj in range(j, j1):
                    of[oo + jj] = _fma(x, b[ib, k, jj], of[oo + jj])
