"""Convolution data movement: im2col (unfold a few samples into columns) and col2im (fold back).

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
"""
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
def _unfold_row(x, col, r, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW):
    """Row r (over all samples: r = s*C*kh*kw + row) of col."""
    C, H, W = x.shape[1], x.shape[2], x.shape[3]
    K = C * kh * kw
    s, row = r // K, r % K
    c, ij = row // (kh * kw), row % (kh * kw)
    i, j = ij // kw, ij % kw
    off = j * dw - pw
    lo, hi = _ow_range(OW, W, sw, off)
    dst = col[s, row]
    for oh in range(OH):
        h = oh * sh - ph + i * dh
        base = oh * OW
        if h < 0 or h >= H:
            for ow in range(OW):
                dst[base + ow] = 0
            continue
        src = x[s, c, h]
        for ow in range(lo):
            dst[base + ow] = 0
        if sw == 1:
            for ow in range(lo, hi):
                dst[base + ow] = src[ow + off]
        else:
            for ow in range(lo, hi):
                dst[base + ow] = src[ow * sw + off]
        for ow in range(hi, OW):
            dst[base + ow] = 0


@kernel(parallel=True)
def im2col(x, col, kh, kw, sh, sw, ph, pw, dh, dw, OH):
    """col[s, (c*kh+i)*kw+j, oh*OW+ow] = x[s, c, oh*sh-ph+i*dh, ow*sw-pw+j*dw] (0 outside x).

    x (S, C, H, W), col (S, C*kh*kw, OH*OW) with OH, OW the convolution's output size.
    """
    S, K, L = col.shape
    OW = L // OH if OH > 0 else 0
    n = S * K
    if n * L <= SERIAL_MAX:
        for r in range(n):
            _unfold_row(x, col, r, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW)
        return
    for r in prange(n):
        _unfold_row(x, col, r, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW)


@helper
def _fold_plane(col, x, p, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW):
    """Plane p = s*C + c of x: zero it, then add every col entry that lands in it, in order."""
    C, H, W = x.shape[1], x.shape[2], x.shape[3]
    s, c = p // C, p % C
    dst = x[s, c]
    for h in range(H):
        for w in range(W):
            dst[h, w] = 0
    for i in range(kh):
        for j in range(kw):
            src = col[s, (c * kh + i) * kw + j]
            off = j * dw - pw
            lo, hi = _ow_range(OW, W, sw, off)
            for oh in range(OH):
                h = oh * sh - ph + i * dh
                if h < 0 or h >= H:
                    continue
                row = dst[h]
                base = oh * OW
                for ow in range(lo, hi):
                    row[ow * sw + off] += src[base + ow]


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
    if n * L * kh * kw <= SERIAL_MAX:
        for p in range(n):
            _fold_plane(col, x, p, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW)
        return
    for p in prange(n):
        _fold_plane(col, x, p, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW)


@helper
def _fold_sum_block(parts, out, b, accumulate):
    """Columns [b*BLOCK, ...) of ``fold_sum``."""
    lo = b * SUM_BLOCK
    hi = min(lo + SUM_BLOCK, out.shape[0])
    for j in range(lo, hi):
        acc = out[j] if accumulate else parts[0, j]
        for s in range(0 if accumulate else 1, parts.shape[0]):
            acc = acc + parts[s, j]
        out[j] = acc


SUM_BLOCK = 4096


@kernel(parallel=True)
def fold_sum(parts, out, accumulate):
    """out[j] = ((out[j] + parts[0, j]) + parts[1, j]) + ..., left to right (without out[j] unless
    ``accumulate``): per-sample weight gradients summed in sample order, whatever the chunking.

    parts (S, L), out (L,), C-contiguous.
    """
    nb = (out.shape[0] + SUM_BLOCK - 1) // SUM_BLOCK
    if parts.size <= SERIAL_MAX:
        for b in range(nb):
            _fold_sum_block(parts, out, b, accumulate)
        return
    for b in prange(nb):
        _fold_sum_block(parts, out, b, accumulate)


@helper
def _channel_sum_one(g, out, c):
    acc = 0.0
    for n in range(g.shape[0]):
        row = g[n, c]
        part = 0.0
        for i in range(row.shape[0]):
            part += row[i]
        acc += part
    out[c] = acc


@kernel(parallel=True)
def channel_sum(g, out):
    """out[c] = sum over n, i of g[n, c, i] (a bias gradient): float64 sums, per sample then over n.

    g (N, C, L) C-contiguous, out (C,). One ``prange`` iteration per channel.
    """
    C = g.shape[1]
    if g.size <= SERIAL_MAX:
        for c in range(C):
            _channel_sum_one(g, out, c)
        return
    for c in prange(C):
        _channel_sum_one(g, out, c)
