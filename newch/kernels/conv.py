"""Convolution kernels: im2col / col2im (unfold a few samples into columns, fold back), the
in-order sum of per-sample weight gradients, and the bias gradient.

A convolution is then a matrix product per sample (``bgemm``, in ``ops/conv.py``):
out[s] (C_out, OH*OW) = W (C_out, C*kh*kw) @ col[s] (C*kh*kw, OH*OW). The
caller unfolds only a few samples at a time into arena scratch, so no
whole-batch column buffer ever exists.

Layout: x (S, C, H, W) and col (S, C*kh*kw, OH*OW) C-contiguous, one float
dtype. Row r = (c*kh + i)*kw + j of col[s] holds x[s, c, oh*sh - ph + i*dh,
ow*sw - pw + j*dw] over (oh, ow), zero where that falls in the padding.

Determinism: im2col copies, every col row has one writer (one ``prange``
iteration per row block). col2im sums; one iteration owns a whole (s, c) plane
of the output and adds the contributions into it in the fixed order (i, j, oh,
ow) whatever the thread count. Small problems run serially, same bits.
fold_sum and channel_sum are serial (memory bound, cheap to compile).
"""
import numpy as np

from .jit import helper, kernel, prange

__all__ = ["im2col", "col2im", "fold_sum", "channel_sum"]

SERIAL_MAX = 65536     # at or below this many moved elements: no thread launch


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


@kernel(parallel=True)
def im2col(x, col, kh, kw, sh, sw, ph, pw, dh, dw, OH):
    """col[s, (c*kh+i)*kw+j, oh*OW+ow] = x[s, c, oh*sh-ph+i*dh, ow*sw-pw+j*dw] (0 outside x).

    x (S, C, H, W), col (S, C*kh*kw, OH*OW) with OH, OW the convolution's output size.
    """
    S, K, L = col.shape
    OW = L // OH if OH > 0 else 0
    n = S * K
    xf, colf = x.reshape(x.size), col.reshape(col.size)
    if n * L <= SERIAL_MAX:
        for r in range(n):
            _unfold_row(xf, colf, x.shape, r, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW)
        return
    for r in prange(n):
        _unfold_row(xf, colf, x.shape, r, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW)


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


@kernel(parallel=True)
def col2im(col, x, kh, kw, sh, sw, ph, pw, dh, dw, OH):
    """The adjoint of ``im2col``: x[s, c, h, w] = sum of the col entries that im2col copied from it.

    col (S, C*kh*kw, OH*OW), x (S, C, H, W) overwritten. x may be larger than the
    convolution covers (those elements get zeros), as ``conv_transpose2d``'s
    output_padding needs.
    """
    S, C = x.shape[0], x.shape[1]
    L = col.shape[2]
    OW = L // OH if OH > 0 else 0
    n = S * C
    xf, colf = x.reshape(x.size), col.reshape(col.size)
    if n * L * kh * kw <= SERIAL_MAX:
        for p in range(n):
            _fold_plane(colf, xf, x.shape, L, p, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW)
        return
    for p in prange(n):
        _fold_plane(colf, xf, x.shape, L, p, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW)


@kernel
def fold_sum(parts, out, accumulate):
    """out[j] = ((out[j] + parts[0, j]) + parts[1, j]) + ..., left to right (without out[j] unless
    ``accumulate``): per-sample weight gradients summed in sample order, whatever the chunking.

    parts (S, L), out (L,), C-contiguous. Serial: one pass over a few weight-sized arrays
    costs less than a thread launch, and compiles faster.
    """
    S, L = parts.shape
    if not accumulate:
        for j in range(L):
            out[j] = parts[0, j]
    for s in range(0 if accumulate else 1, S):
        row = parts[s]
        for j in range(L):
            out[j] = out[j] + row[j]


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
