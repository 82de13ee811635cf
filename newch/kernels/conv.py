"""Convolution kernels: whole-batch forward and backward passes, depthwise passes, the bias gradient.

A convolution is a matrix product per sample: out[n] (C_out, OH*OW) =
W (C_out, C*kh*kw) @ col[n] (C*kh*kw, OH*OW), where col[n] unfolds sample n
(row (c*kh + i)*kw + j holds x[n, c, oh*sh - ph + i*dh, ow*sw - pw + j*dw]
over (oh, ow), zero in the padding). Each pass unfolds one sample at a time
into its slot of arena scratch: no whole-batch column buffer exists.

Cold start (``tasks``): every pass is a serial *task function* over work items
[lo, hi) (runs of samples, planes, channels), compiled once; the parallel
launch is ``tasks.driver``'s small ``prange`` loop calling it by address. The
serial GEMM (matmul's task functions, ``_gemm_serial``) is compiled once per
dtype and called by address too, so no pass inlines a copy of it.

Determinism: every output element has one writer. Folding a sample's columns
back (the input gradient) adds into one (n, c) plane in the fixed order
(i, j, oh, ow); weight gradients add per-sample products in sample order within
a run of samples, then the runs' sums in run order. Runs depend on the shapes
only, so every thread count, and the serial path, give the same bits.
"""
import functools

import numpy as np

import numba
from numba.core import types

from .jit import helper, kernel
from .matmul import _pack_b, _tasks, NV, VBYTES, PACK_K
from .specialize import entry
from .tasks import _call, address, driver, signature

__all__ = ["channel_sum", "conv_forward", "conv_backward",
           "conv_forward_plan", "conv_backward_plan", "depthwise_forward", "depthwise_input_grad",
           "depthwise_weight_grad"]


@helper
def _ow_range(OW, W, sw, off):
    """[lo, hi): the ow whose column ow*sw + off lies in 0..W-1."""
    lo = 0
    if off < 0:
        lo = (-off + sw - 1) // sw
    hi = 0
    if W - off > 0:
        hi = (W - off + sw - 1) // sw
    return min(lo, OW), max(min(hi, OW), min(lo, OW))


@helper
def _fill0(dst, start, n):
    """dst[start:start+n] = 0 (unsigned indexes: no negative-index guards, so LLVM vectorizes)."""
    u = np.uint64(start)
    for t in range(np.uint64(n)):
        dst[u + t] = 0


@helper
def _unfold_row(xf, colf, shape, r, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW):
    """Row r (over all samples: r = s*C*kh*kw + row) of col; xf, colf flat views."""
    C, H, W = shape[1], shape[2], shape[3]
    K = C * kh * kw
    s, row = r // K, r % K
    c, ij = row // (kh * kw), row % (kh * kw)
    i, j = ij // kw, ij % kw
    off = j * dw - pw
    lo, hi = _ow_range(OW, W, sw, off)
    usw = np.uint64(sw)
    for oh in range(OH):
        h = oh * sh - ph + i * dh
        d0 = r * OH * OW + oh * OW
        if h < 0 or h >= H:
            _fill0(colf, d0, OW)
            continue
        _fill0(colf, d0, lo)
        ud = np.uint64(d0 + lo)
        ux = np.uint64(((s * C + c) * H + h) * W + lo * sw + off)
        if sw == 1:
            for t in range(np.uint64(hi - lo)):
                colf[ud + t] = xf[ux + t]
        else:
            for t in range(np.uint64(hi - lo)):
                colf[ud + t] = xf[ux + t * usw]
        _fill0(colf, d0 + hi, OW - hi)


@helper
def _fold_plane(colf, xf, shape, L, p, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW):
    """Plane p = s*C + c of x: zero it, then add every col entry that lands in it, in order."""
    C, H, W = shape[1], shape[2], shape[3]
    s, c = p // C, p % C
    _fill0(xf, p * H * W, H * W)
    usw = np.uint64(sw)
    for i in range(kh):
        for j in range(kw):
            r0 = (s * C * kh + c * kh + i) * kw + j
            off = j * dw - pw
            lo, hi = _ow_range(OW, W, sw, off)
            for oh in range(OH):
                h = oh * sh - ph + i * dh
                if h < 0 or h >= H:
                    continue
                ud = np.uint64((p * H + h) * W + lo * sw + off)
                us = np.uint64(r0 * L + oh * OW + lo)
                if sw == 1:
                    for t in range(np.uint64(hi - lo)):
                        xf[ud + t] += colf[us + t]
                else:
                    for t in range(np.uint64(hi - lo)):
                        xf[ud + t * usw] += colf[us + t]


@helper
def _channel_sum_one(g, out, c):
    # NOTE: four interleaved float64 partial sums (fixed by position, not by thread), added
    # in a fixed order: a single running sum is bound by the latency of each addition.
    L = g.shape[2]
    L4 = L // 4 * 4
    acc = 0.0
    for n in range(g.shape[0]):
        row = g[n, c]
        a0 = a1 = a2 = a3 = 0.0
        for i in range(0, L4, 4):
            a0 += row[i]
            a1 += row[i + 1]
            a2 += row[i + 2]
            a3 += row[i + 3]
        for i in range(L4, L):
            a0 += row[i]
        acc += (a0 + a1) + (a2 + a3)
    out[c] = acc


@kernel
def channel_sum(g, out):
    """out[c] = sum over n, i of g[n, c, i] (a bias gradient): float64 sums, per sample then over n.

    g (N, C, L) C-contiguous, out (C,). Serial: one read of g is memory bound, and a serial
    kernel compiles in a fraction of a parallel one's time.
    """
    for c in range(g.shape[1]):
        _channel_sum_one(g, out, c)


# ---------------------------------------------------------------- whole-batch passes
# One launch per convolution pass. The batch is cut into ``nslot`` runs of consecutive samples
# (the caller picks nslot from the shapes only); one ``prange`` iteration owns a run and its own
# scratch slot, where it unfolds one sample at a time and multiplies it with the serial blocked
# GEMM (``_gemm_serial``, the same FMA chains as ``bgemm``). A slot's scratch: the columns of one
# sample (``colsz`` elements), then the GEMM's scratch (``gsz``), then, for the weight gradient,
# one per-sample product and the run's running sum (``wsz`` each).

@kernel
def _gemm_serial(a, b, out, scratch, tm, tn, wstart, wsize, t0, ntask):
    """out[i] = a[i] @ b[i] on the calling thread: matmul's packing and compute task functions
    run over all their tasks in order (the same FMA chains, so the same bits, as ``bgemm``).

    Shaped as a task function (t0 is always 0) so the passes call it through its address
    (``_gemm``): compiled once per dtype, never inlined into each pass (or twice into one).
    """
    B, M, N = out.shape
    K, size = a.shape[2], out.itemsize
    nr = NV * VBYTES // size
    # NOTE: an int64 0, read-only a, b (``_gemm_address``) and flags that are runtime bools
    # (``no``; a literal False types as Literal[bool](False), a signature of its own): those of
    # ``bgemm``'s own task functions, so a program with convolutions and Linear layers
    # compiles them once.
    no = ntask < 0
    _pack_b(b, scratch, nr, no, np.int64(0),
            b.shape[0] * ((N + nr - 1) // nr) * ((K + PACK_K - 1) // PACK_K))
    # NOTE: A is read in place when k is its contiguous axis (strides in whole elements).
    a_direct = a.strides[2] == size and a.strides[1] % size == 0 and a.strides[0] % size == 0
    _tasks(a, b, out, scratch, tm, tn, b.shape[0] == B, a_direct, no, ntask, wstart, wsize,
           no, no, no, t0, ntask)


@helper
def _as_a(a):
    """a as an 'A' (any layout) array of the same shape and strides: what ``_gemm`` takes."""
    # NOTE: not ``a.transpose(0, 1, 2)``: numba's general transpose pulls its error-message
    # formatting into the compile (about 1.5 s of a cold start); as_strided is a plain view.
    return np.lib.stride_tricks.as_strided(a, a.shape, a.strides)


@helper
def _swap12(a):
    """a (B, M, N) viewed as (B, N, M), an 'A' array."""
    return np.lib.stride_tricks.as_strided(a, (a.shape[0], a.shape[2], a.shape[1]),
                                           (a.strides[0], a.strides[2], a.strides[1]))


@helper
def _gemm(addr, a, b, out, scratch, tm, tn, ntask, wstart, wsize):
    """``_gemm_serial`` at machine-code address ``addr`` (``_gemm_address``): a, b 'A' arrays."""
    _call(addr, (a, b, out, scratch, tm, tn, wstart, wsize), np.int64(0), ntask)


@functools.lru_cache(maxsize=None)
def _gemm_address(dtype):
    """Address of ``_gemm_serial`` compiled for ``dtype`` with the passes' argument types."""
    t = numba.from_dtype(np.dtype(dtype))
    # NOTE: a and b typed read-only as in ``matmul._types`` (one data model: ``_gemm`` passes
    # writable views to the same machine code).
    a3, c3, c1, i = (types.Array(t, 3, "A", readonly=True), types.Array(t, 3, "C"),
                     types.Array(t, 1, "C"), types.int64)
    return address(_gemm_serial, (a3, a3, c3, c1, i, i, i, i, i, i))


@helper
def _geo(a):
    """The geometry tuple (kh, kw, sh, sw, ph, pw, dh, dw) from its int64 array."""
    return a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]


@helper
def _lay(a):
    """A serial GEMM layout tuple (tm, tn, ntask, wstart, wsize, gsz) from its int64 array."""
    return a[0], a[1], a[2], a[3], a[4], a[5]


@functools.lru_cache(maxsize=1024)
def _int_array(t):
    # NOTE: tuples travel as int64 arrays: numba's parallel driver cannot take a tuple
    # nested in its argument tuple. Cached per tuple (shapes only), never written.
    a = np.array(t, np.int64)
    a.setflags(write=False)
    return a


def _args(args):
    return tuple(_int_array(a) if isinstance(a, tuple) else a for a in args)


def _launch(task, n, par, args):
    """Task function ``task(*args, lo, hi)`` over work items [0, n): one ``prange`` iteration
    per item through ``tasks.driver`` when ``par``, else in order on this thread (same bits)."""
    args = _args(args)
    sig = signature(args)
    if par:
        driver(task, sig)(n, *args)
    else:
        entry(task, sig + (types.int64, types.int64))(*args, 0, n)


# NOTE: every call passes its two factors as 'A' arrays (``_as_a``, ``_swap12``): one compiled
# GEMM for all of the passes, not one per combination of layouts.


@helper
def _unfold_sample(x, n, col, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW):
    """col (C*kh*kw*OH*OW,) = the columns of sample n of x (N, C, H, W)."""
    C, H, W = x.shape[1], x.shape[2], x.shape[3]
    xf = x[n].reshape(C * H * W)
    for r in range(C * kh * kw):
        _unfold_row(xf, col, (1, C, H, W), r, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW)


@helper
def _forward_run(x, w3, bias, out, scratch, s, nslot, geo, OH, lay, colsz, has_bias, gaddr):
    N, C = x.shape[0], x.shape[1]
    G, Cg, Kg = w3.shape
    Co, L = out.shape[1], out.shape[2]
    kh, kw, sh, sw, ph, pw, dh, dw = geo
    tm, tn, ntask, wstart, wsize, gsz = lay
    base = s * (colsz + gsz)
    col = scratch[base:base + C * kh * kw * L]
    gs = scratch[base + colsz:base + colsz + gsz]
    for n in range(s * N // nslot, (s + 1) * N // nslot):
        _unfold_sample(x, n, col, kh, kw, sh, sw, ph, pw, dh, dw, OH, L // OH)
        o = out[n]
        _gemm(gaddr, _as_a(w3), _as_a(col.reshape(G, Kg, L)),
              o.reshape(G, Cg, L), gs, tm, tn, ntask, wstart, wsize)
        if has_bias:
            for c in range(Co):
                b = bias[c]
                for t in range(L):
                    o[c, t] += b


# NOTE: both passes' task functions take the same argument types (x, a 3-D weight, a 3-D
# activation, a 4-D input gradient, a 1-D bias, scratch, the int64 parameters ``_params``),
# the unused ones empty: one parallel driver serves both.

def _params(geo, OH, nslot, colsz, flag, gaddr, l1, l2):
    """int64 array: geo (0-7), OH, nslot, colsz, flag (has_bias / wsz), gaddr, l1 (13-18), l2."""
    return _int_array(tuple(geo) + (OH, nslot, colsz, flag, gaddr) + tuple(l1) + tuple(l2))


@kernel
def _forward_runs(x, w3, out, dx_, bias, scratch, prm, lo, hi):
    """Runs [lo, hi) of samples of ``conv_forward`` (dx_ unused); a task function (``tasks``)."""
    geo, lay = _geo(prm), _lay(prm[13:])
    for s in range(lo, hi):
        _forward_run(x, w3, bias, out, scratch, s, prm[9], geo, prm[8], lay, prm[10],
                     prm[11] != 0, prm[12])


def conv_forward(x, w3, bias, out, scratch, geo, OH, nslot, lay, colsz, has_bias, par):
    """out[n] (C_out, OH*OW) = w (G, C_out/G, C/G*kh*kw) @ columns of x[n], plus bias[c] if has_bias.

    x (N, C, H, W), out (N, C_out, OH*OW) C-contiguous; geo = (kh, kw, sh, sw, ph, pw, dh, dw);
    lay = (tm, tn, ntask, wstart, wsize, gsz): the serial GEMM's layout and scratch elements for
    (G, C_out/G, OH*OW, C/G*kh*kw); scratch holds nslot slots of colsz + gsz elements.
    ``par``: one ``prange`` iteration per run of samples, else a serial loop (same bits; each
    compiled when first used).
    """
    prm = _params(geo, OH, nslot, colsz, int(has_bias), _gemm_address(x.dtype), lay, lay)
    _launch(_forward_runs, nslot, par, (x, w3, out, x[:0], bias, scratch, prm))


@helper
def _backward_run(x, wt, g, dx, scratch, s, nslot, geo, OH, lw, lx, colsz, wsz, gaddr):
    """Run s of the batch: the input gradient of each sample into dx, and the run's weight
    gradient (per-sample products added in sample order) at the end of its slot."""
    N, Co, L = g.shape
    need_dw, need_dx = x.shape[0] > 0, dx.shape[0] > 0
    C, H, W = (x.shape[1], x.shape[2], x.shape[3]) if need_dw else (dx.shape[1], dx.shape[2], dx.shape[3])
    G, Kg, Cg = wt.shape[0], (C // wt.shape[0]) * geo[0] * geo[1], Co // wt.shape[0]
    kh, kw, sh, sw, ph, pw, dh, dw = geo
    OW = L // OH
    gsz = max(lw[5], lx[5])
    base = s * (colsz + gsz + 2 * wsz)
    col = scratch[base:base + C * kh * kw * L]
    gs = scratch[base + colsz:base + colsz + gsz]
    part = scratch[base + colsz + gsz:base + colsz + gsz + wsz]
    acc = scratch[base + colsz + gsz + wsz:base + colsz + gsz + 2 * wsz]
    n0, n1 = s * N // nslot, (s + 1) * N // nslot
    for n in range(n0, n1):
        gn = g[n].reshape(G, Cg, L)
        if need_dw:
            _unfold_sample(x, n, col, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW)
            dst = (acc if n == n0 else part)[:G * Cg * Kg]
            _gemm(gaddr, _as_a(gn), _swap12(col.reshape(G, Kg, L)),
                  dst.reshape(G, Cg, Kg), gs, lw[0], lw[1], lw[2], lw[3], lw[4])
            if n > n0:
                for t in range(G * Cg * Kg):
                    acc[t] = acc[t] + part[t]
        if need_dx:
            _gemm(gaddr, _as_a(wt), _as_a(gn), col.reshape(G, Kg, L), gs,
                  lx[0], lx[1], lx[2], lx[3], lx[4])
            dxf = dx[n].reshape(C * H * W)
            for c in range(C):
                _fold_plane(col, dxf, (1, C, H, W), L, c, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW)


@kernel
def _backward_runs(x, wt, g, dx, bias_, scratch, prm, lo, hi):
    """Runs [lo, hi) of samples of ``conv_backward`` (bias_ unused); a task function (``tasks``)."""
    geo, lw, lx = _geo(prm), _lay(prm[13:]), _lay(prm[19:])
    for s in range(lo, hi):
        _backward_run(x, wt, g, dx, scratch, s, prm[9], geo, prm[8], lw, lx, prm[10], prm[11],
                      prm[12])


@kernel
def _sum_runs(scratch, dwf, nslot, first, step):
    """dwf[t] = the runs' weight-gradient sums (at ``first + s*step`` in scratch) added in run order."""
    for t in range(dwf.shape[0]):
        dwf[t] = scratch[first + t]
    for s in range(1, nslot):
        a = s * step + first
        for t in range(dwf.shape[0]):
            dwf[t] = dwf[t] + scratch[a + t]


def conv_backward(x, wt, g, dx, dwf, scratch, geo, OH, nslot, lw, lx, colsz, wsz, par):
    """Input gradient into dx (N, C, H, W) and weight gradient into dwf (G*C_out/G*C/G*kh*kw,).

    x (N, C, H, W) is read for the weight gradient, wt (G, C/G*kh*kw, C_out/G) (the weight,
    transposed per group) for the input gradient; pass a batch-0 x or dx to skip that gradient.
    g (N, C_out, OH*OW) C-contiguous. lw, lx: the serial GEMM layouts of
    (G, C_out/G, C/G*kh*kw, OH*OW) and (G, C/G*kh*kw, OH*OW, C_out/G), as in ``conv_forward``.
    Each run of samples sums its products in sample order; the runs' sums are then added in run
    order, serially: the bits depend on the shapes (nslot) only.
    """
    prm = _params(geo, OH, nslot, colsz, wsz, _gemm_address(g.dtype), lw, lx)
    _launch(_backward_runs, nslot, par, (x, wt, g, dx, scratch[:0], scratch, prm))
    if x.shape[0] > 0:
        gsz = max(lw[5], lx[5])
        args = (scratch, dwf, nslot, colsz + gsz + wsz, colsz + gsz + 2 * wsz)
        entry(_sum_runs, signature(args))(*args)

SLOTS = 8               # at most this many runs of samples per pass (a power of two)
SLOT_BYTES = 6 << 20    # scratch budget of all slots together (fewer slots when exceeded)
PAR_WORK = 1 << 21      # multiply-adds of a pass at or above which it runs in parallel


def _round16(n):
    return (n + 15) // 16 * 16


def _slots(N, per_slot, itemsize):
    """Runs of samples: a power of two, at most SLOTS and N, within SLOT_BYTES (at least 1)."""
    n = 1
    while n * 2 <= min(N, SLOTS) and n * 2 * per_slot * itemsize <= SLOT_BYTES:
        n *= 2
    return n


def _gemm_layout(B, M, N, K, itemsize):
    """(tm, tn, ntask, wstart, wsize, total) of ``_gemm_serial`` run in one slot: one
    task over the natural MC x NC tiles (the tiling does not change the bits, see matmul)."""
    from . import matmul as mm
    nr = mm.NV * mm.VBYTES // itemsize
    mp, npn = (M + mm.MR - 1) // mm.MR, (N + nr - 1) // nr
    tm = max(1, min(mp, (mp * mm.MR + mm.MC - 1) // mm.MC))
    tn = max(1, min(npn, (npn * nr + mm.NC - 1) // mm.NC))
    wstart = _round16(B * npn * nr * K)
    wsize = _round16(mm.MR * nr) + _round16((mp + tm - 1) // tm * mm.MR * min(K, mm.KC))
    return tm, tn, 1, wstart, wsize, wstart + wsize + 16


@functools.lru_cache(maxsize=512)
def conv_forward_plan(x_shape, w_shape, G, OH, OW, itemsize):
    """(nslot, lay, colsz, scratch elements, par) of ``conv_forward`` for these shapes."""
    N, C = x_shape[0], x_shape[1]
    Co, kk = w_shape[0], w_shape[2] * w_shape[3]
    L, Kg = OH * OW, (C // G) * kk
    lay = _gemm_layout(G, Co // G, L, Kg, itemsize)
    gsz = lay[5]
    colsz = _round16(C * kk * L)
    nslot = _slots(N, colsz + gsz, itemsize)
    return nslot, lay[:5] + (gsz,), colsz, nslot * (colsz + gsz), N * Co * L * Kg >= PAR_WORK


@functools.lru_cache(maxsize=512)
def conv_backward_plan(x_shape, w_shape, G, OH, OW, itemsize):
    """(nslot, lw, lx, colsz, wsz, scratch elements, par) of ``conv_backward``; x_shape is the
    input's (or the input gradient's) shape."""
    N, C = x_shape[0], x_shape[1]
    Co, kk = w_shape[0], w_shape[2] * w_shape[3]
    L, Kg, Cg = OH * OW, (C // G) * kk, Co // G
    lw = _gemm_layout(G, Cg, Kg, L, itemsize)
    lx = _gemm_layout(G, Kg, L, Cg, itemsize)
    lw, lx = lw[:5] + (lw[5],), lx[:5] + (lx[5],)
    colsz, wsz = _round16(C * kk * L), _round16(Co * Kg)
    per = colsz + max(lw[5], lx[5]) + 2 * wsz
    nslot = _slots(N, per, itemsize)
    return nslot, lw, lx, colsz, wsz, nslot * per, N * Co * L * Kg >= PAR_WORK


# ---------------------------------------------------------------- depthwise (C/G == 1)
# Each output channel o reads one input channel, o // m (m = C_out / C): a direct loop over the
# taps beats a matrix product of one row. One launch over the batch x channels planes.

@helper
def _dw_plane(x, w, out, n, o, m, geo, acc_into):
    """acc_into[oh, ow] += the taps of w[o] over x[n, o // m] in order (i, j), rows unsigned."""
    kh, kw, sh, sw, ph, pw, dh, dw = geo
    H, W = x.shape[2], x.shape[3]
    OH, OW = out.shape[2], out.shape[3]
    xp, dst = x[n, o // m], acc_into
    for i in range(kh):
        for j in range(kw):
            wv = w[o, i * kw + j]
            off = j * dw - pw
            lo, hi = _ow_range(OW, W, sw, off)
            for oh in range(OH):
                h = oh * sh - ph + i * dh
                if h < 0 or h >= H:
                    continue
                row, drow = xp[h], dst[oh]
                for t in range(lo, hi):
                    drow[t] += wv * row[t * sw + off]


@helper
def _dw_forward_plane(x, w, bias, out, p, geo, has_bias):
    Co = out.shape[1]
    n, o = p // Co, p % Co
    dst = out[n, o]
    for oh in range(dst.shape[0]):
        for ow in range(dst.shape[1]):
            dst[oh, ow] = 0
    _dw_plane(x, w, out, n, o, Co // x.shape[1], geo, dst)
    if has_bias:
        b = bias[o]
        for oh in range(dst.shape[0]):
            for ow in range(dst.shape[1]):
                dst[oh, ow] += b


@kernel
def _depthwise_forward(x, w, bias, out, ga, has_bias, lo, hi):
    """Work items [lo, hi) of ``depthwise_forward``; a task function (``tasks``)."""
    geo = _geo(ga)
    for p in range(lo, hi):
        _dw_forward_plane(x, w, bias, out, p, geo, has_bias)


def depthwise_forward(x, w, bias, out, geo, has_bias, par):
    """out[n, o] = sum over taps (i, j) in order of w[o, i*kw+j] * x[n, o // m] shifted (+ bias[o]).

    x (N, C, H, W), w (C_out, kh*kw), out (N, C_out, OH, OW) C-contiguous, C_out = m*C;
    geo = (kh, kw, sh, sw, ph, pw, dh, dw). One ``prange`` iteration per (n, o) plane.
    """
    _launch(_depthwise_forward, out.shape[0] * out.shape[1], par, (x, w, bias, out, geo, has_bias,))


@helper
def _dw_input_plane(w, g, dx, p, geo):
    kh, kw, sh, sw, ph, pw, dh, dw = geo
    C, H, W = dx.shape[1], dx.shape[2], dx.shape[3]
    OH, OW = g.shape[2], g.shape[3]
    n, c = p // C, p % C
    m = g.shape[1] // C
    dst = dx[n, c]
    for h in range(H):
        for x_ in range(W):
            dst[h, x_] = 0
    for o in range(c * m, (c + 1) * m):
        src = g[n, o]
        for i in range(kh):
            for j in range(kw):
                wv = w[o, i * kw + j]
                off = j * dw - pw
                lo, hi = _ow_range(OW, W, sw, off)
                for oh in range(OH):
                    h = oh * sh - ph + i * dh
                    if h < 0 or h >= H:
                        continue
                    row, srow = dst[h], src[oh]
                    for t in range(lo, hi):
                        row[t * sw + off] += wv * srow[t]


@kernel
def _depthwise_input_grad(w, g, dx, ga, lo, hi):
    """Work items [lo, hi) of ``depthwise_input_grad``; a task function (``tasks``)."""
    geo = _geo(ga)
    for p in range(lo, hi):
        _dw_input_plane(w, g, dx, p, geo)


def depthwise_input_grad(w, g, dx, geo, par):
    """dx[n, c] = the adjoint of ``depthwise_forward``: out channels c*m.., taps in order.

    w (C_out, kh*kw), g (N, C_out, OH, OW), dx (N, C, H, W) overwritten. One iteration per plane.
    """
    _launch(_depthwise_input_grad, dx.shape[0] * dx.shape[1], par, (w, g, dx, geo,))


@helper
def _dw_weight_row(x, g, dw_, o, geo):
    kh, kw, sh, sw, ph, pw, dh, dw = geo
    N, C, H, W = x.shape
    OH, OW = g.shape[2], g.shape[3]
    m = g.shape[1] // C
    for i in range(kh):
        for j in range(kw):
            off = j * dw - pw
            lo, hi = _ow_range(OW, W, sw, off)
            # NOTE: four float64 partial sums by position (t % 4), added in a fixed order at the
            # end: one running sum is bound by the latency of each addition.
            a0 = a1 = a2 = a3 = 0.0
            for n in range(N):
                xp, gp = x[n, o // m], g[n, o]
                for oh in range(OH):
                    h = oh * sh - ph + i * dh
                    if h < 0 or h >= H:
                        continue
                    row, grow = xp[h], gp[oh]
                    t = lo
                    while t + 4 <= hi:
                        a0 += np.float64(grow[t]) * np.float64(row[t * sw + off])
                        a1 += np.float64(grow[t + 1]) * np.float64(row[(t + 1) * sw + off])
                        a2 += np.float64(grow[t + 2]) * np.float64(row[(t + 2) * sw + off])
                        a3 += np.float64(grow[t + 3]) * np.float64(row[(t + 3) * sw + off])
                        t += 4
                    while t < hi:
                        a0 += np.float64(grow[t]) * np.float64(row[t * sw + off])
                        t += 1
            dw_[o, i * kw + j] = (a0 + a1) + (a2 + a3)


@kernel
def _depthwise_weight_grad(x, g, dw_, ga, lo, hi):
    """Work items [lo, hi) of ``depthwise_weight_grad``; a task function (``tasks``)."""
    geo = _geo(ga)
    for o in range(lo, hi):
        _dw_weight_row(x, g, dw_, o, geo)


def depthwise_weight_grad(x, g, dw_, geo, par):
    """dw[o, i*kw+j] = sum over n, oh, ow in order of g[n, o, oh, ow] * x[n, o // m, ...] (float64 sum).

    x (N, C, H, W), g (N, C_out, OH, OW), dw_ (C_out, kh*kw). One iteration per output channel.
    """
    _launch(_depthwise_weight_grad, dw_.shape[0], par, (x, g, dw_, geo,))