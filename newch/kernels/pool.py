"""Pooling kernels: max (with the argmax kept as a small int) and average, forward and backward.

Windows are given per output row and column, so one kernel serves plain,
padded, ceil-mode, dilated and adaptive pooling: output (oh, ow) reads input
rows hs[oh] + t*dh for t < hc[oh] and columns ws[ow] + u*dw for u < wc[ow]
(the caller has already clipped windows to the input). Arrays: x (P, H, W),
out (P, OH, OW), C-contiguous, with P = batch * channels planes.

max: ``arg`` records which window element won as t*wc[ow] + u, in uint8
when every window has at most 255 elements (int32 otherwise): a quarter of a
float32 activation, an eighth of PyTorch's int64 indices. Ties go to the first
element in row-major order; a NaN wins (and the last NaN), as in PyTorch.

Determinism: one task (one ``prange`` iteration when parallel) owns one plane,
forward and backward; the backward zeroes its plane of dx, then adds the
gradients in output order.

Cold start: each kernel is a serial task function over planes [lo, hi),
launched in parallel by ``tasks.run`` (no parallel copy of its body).
"""
import numpy as np

from .jit import helper, kernel
from .tasks import run

__all__ = ["max_pool", "max_pool_backward", "avg_pool", "avg_pool_backward"]

SERIAL_MAX = 32768     # at or below this many input elements: no thread launch


@helper
def _max_plane(xf, outf, argf, shape, p, hs, hc, ws, wc, dh, dw):
    """Plane p; xf, outf, argf flat views. Unsigned indexes: no negative-index guards."""
    H, W, OH, OW = shape[0], shape[1], shape[2], shape[3]
    ux = np.uint64(p * H * W)
    uo = np.uint64(p * OH * OW)
    for oh in range(OH):
        h0, nh = hs[oh], hc[oh]
        for ow in range(OW):
            w0, nw = ws[ow], wc[ow]
            base = ux + np.uint64(h0 * W + w0)
            best = xf[base]
            bi = 0
            for t in range(nh):
                row = base + np.uint64(t * dh * W)
                for u in range(nw):
                    v = xf[row + np.uint64(u * dw)]
                    if v > best or v != v:
                        best = v
                        bi = t * nw + u
            o = uo + np.uint64(oh * OW + ow)
            outf[o] = best
            argf[o] = bi


@kernel
def _max_planes(xf, outf, argf, H, W, OH, OW, hs, hc, ws, wc, dh, dw, lo, hi):
    """Planes [lo, hi) of ``max_pool`` on flat views; a task function."""
    shape = (H, W, OH, OW)
    for p in range(lo, hi):
        _max_plane(xf, outf, argf, shape, p, hs, hc, ws, wc, dh, dw)


def max_pool(x, out, arg, hs, hc, ws, wc, dh, dw):
    """out[p, oh, ow] = max over the window of (oh, ow); arg[p, oh, ow] = its position t*wc[ow] + u.

    Example (one 2x2 plane, one window over it):
        >>> x = np.array([[[1.0, 5.0], [3.0, 2.0]]], np.float32)
        >>> out, arg = np.empty((1, 1, 1), np.float32), np.empty((1, 1, 1), np.uint8)
        >>> i0, n2 = np.zeros(1, np.int64), np.full(1, 2, np.int64)
        >>> max_pool(x, out, arg, i0, n2, i0, n2, 1, 1); float(out[0, 0, 0]), int(arg[0, 0, 0])
        (5.0, 1)
    """
    run(_max_planes, x.shape[0], x.size > SERIAL_MAX, x.reshape(-1), out.reshape(-1),
        arg.reshape(-1), x.shape[1], x.shape[2], out.shape[1], out.shape[2], hs, hc, ws, wc, dh, dw)


@helper
def _max_back_plane(g, arg, p, hs, hc, ws, wc, dh, dw, dx):
    dst, src, am = dx[p], g[p], arg[p]
    H, W = dst.shape
    for h in range(H):
        for w in range(W):
            dst[h, w] = 0
    for oh in range(src.shape[0]):
        for ow in range(src.shape[1]):
            a = am[oh, ow]
            nw = wc[ow]
            t, u = a // nw, a % nw
            h, w = hs[oh] + t * dh, ws[ow] + u * dw
            # NOTE: an index-taking kernel checks bounds; arg comes from max_pool, so this never skips.
            if t < hc[oh] and 0 <= h < H and 0 <= w < W:
                dst[h, w] += src[oh, ow]


@kernel
def _max_pool_backward_planes(g, arg, hs, hc, ws, wc, dh, dw, dx, lo, hi):
    """Planes [lo, hi) of ``max_pool_backward``; a task function."""
    for p in range(lo, hi):
        _max_back_plane(g, arg, p, hs, hc, ws, wc, dh, dw, dx)


def max_pool_backward(g, arg, hs, hc, ws, wc, dh, dw, dx):
    """dx (P, H, W) overwritten: each g[p, oh, ow] added where ``max_pool`` found the maximum."""
    run(_max_pool_backward_planes, dx.shape[0], dx.size > SERIAL_MAX,
        g, arg, hs, hc, ws, wc, dh, dw, dx)


@helper
def _avg_plane(x, out, p, hs, hc, ws, wc, hden, wden, divisor):
    src, dst = x[p], out[p]
    for oh in range(out.shape[1]):
        h0, nh = hs[oh], hc[oh]
        for ow in range(out.shape[2]):
            w0, nw = ws[ow], wc[ow]
            acc = src[h0, w0] * 0
            for t in range(nh):
                row = src[h0 + t]
                for u in range(nw):
                    acc += row[w0 + u]
            den = divisor if divisor > 0 else hden[oh] * wden[ow]
            dst[oh, ow] = acc / den if den > 0 else acc * 0


@kernel
def _avg_pool_planes(x, out, hs, hc, ws, wc, hden, wden, divisor, lo, hi):
    """Planes [lo, hi) of ``avg_pool``; a task function."""
    for p in range(lo, hi):
        _avg_plane(x, out, p, hs, hc, ws, wc, hden, wden, divisor)


def avg_pool(x, out, hs, hc, ws, wc, hden, wden, divisor):
    """out[p, oh, ow] = window sum / (divisor if > 0 else hden[oh] * wden[ow]); unit-step windows."""
    run(_avg_pool_planes, x.shape[0], x.size > SERIAL_MAX,
        x, out, hs, hc, ws, wc, hden, wden, divisor)


@helper
def _avg_back_plane(g, p, hs, hc, ws, wc, hden, wden, divisor, dx):
    dst, src = dx[p], g[p]
    H, W = dst.shape
    for h in range(H):
        for w in range(W):
            dst[h, w] = 0
    for oh in range(src.shape[0]):
        h0, nh = hs[oh], hc[oh]
        for ow in range(src.shape[1]):
            w0, nw = ws[ow], wc[ow]
            den = divisor if divisor > 0 else hden[oh] * wden[ow]
            v = src[oh, ow] / den if den > 0 else src[oh, ow] * 0
            for t in range(nh):
                for u in range(nw):
                    dst[h0 + t, w0 + u] += v


@kernel
def _avg_pool_backward_planes(g, hs, hc, ws, wc, hden, wden, divisor, dx, lo, hi):
    """Planes [lo, hi) of ``avg_pool_backward``; a task function."""
    for p in range(lo, hi):
        _avg_back_plane(g, p, hs, hc, ws, wc, hden, wden, divisor, dx)


def avg_pool_backward(g, hs, hc, ws, wc, hden, wden, divisor, dx):
    """dx (P, H, W) overwritten: each g[p, oh, ow] / divisor spread over its window."""
    run(_avg_pool_backward_planes, dx.shape[0], dx.size > SERIAL_MAX,
        g, hs, hc, ws, wc, hden, wden, divisor, dx)
