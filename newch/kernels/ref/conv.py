"""Numpy twins of ``kernels/conv.py``: same names, same signatures, obvious loops over (i, j)."""
import numpy as np

__all__ = ["channel_sum", "conv_forward", "conv_backward",
           "conv_forward_plan", "conv_backward_plan", "depthwise_forward", "depthwise_input_grad",
           "depthwise_weight_grad"]


def _taps(n_in, n_out, k, s, p, d):
    """For each kernel tap t: (valid output positions, the input positions they read)."""
    o = np.arange(n_out)
    res = []
    for t in range(k):
        pos = o * s - p + t * d
        ok = (pos >= 0) & (pos < n_in)
        res.append((o[ok], pos[ok]))
    return res


def _im2col(x, col, kh, kw, sh, sw, ph, pw, dh, dw, OH):
    """col[s, (c*kh+i)*kw+j, oh*OW+ow] = x[s, c, oh*sh-ph+i*dh, ow*sw-pw+j*dw] (0 outside x)."""
    S, C, H, W = x.shape
    OW = col.shape[2] // OH if OH else 0
    c6 = col.reshape(S, C, kh, kw, OH, OW)
    c6[...] = 0
    for i, (oh, h) in enumerate(_taps(H, OH, kh, sh, ph, dh)):
        for j, (ow, w) in enumerate(_taps(W, OW, kw, sw, pw, dw)):
            c6[:, :, i, j, oh[:, None], ow[None, :]] = x[:, :, h[:, None], w[None, :]]


def _col2im(col, x, kh, kw, sh, sw, ph, pw, dh, dw, OH):
    """x[s, c, h, w] = sum of the col entries ``_im2col`` would copy from x[s, c, h, w]."""
    S, C, H, W = x.shape
    OW = col.shape[2] // OH if OH else 0
    c6 = col.reshape(S, C, kh, kw, OH, OW)
    x[...] = 0
    for i, (oh, h) in enumerate(_taps(H, OH, kh, sh, ph, dh)):
        for j, (ow, w) in enumerate(_taps(W, OW, kw, sw, pw, dw)):
            # NOTE: with stride >= dilation the positions are distinct, but not in general: add.at
            np.add.at(x, (slice(None), slice(None), h[:, None], w[None, :]),
                      c6[:, :, i, j, oh[:, None], ow[None, :]])


def channel_sum(g, out):
    """out[c] = sum over n, i of g[n, c, i], summed in float64."""
    out[...] = g.astype(np.float64).sum(axis=2).sum(axis=0)


_LAY = (1, 1, 1, 0, 0, 0)


def conv_forward_plan(x_shape, w_shape, G, OH, OW, itemsize):
    """(nslot, lay, colsz, scratch elements, par): the twin needs no scratch."""
    return min(x_shape[0], 8), _LAY, 0, 0, False


def conv_backward_plan(x_shape, w_shape, G, OH, OW, itemsize):
    """(nslot, lw, lx, colsz, wsz, scratch elements, par): the twin needs no scratch."""
    return min(x_shape[0], 8), _LAY, _LAY, 0, 0, 0, False


def _columns(x, geo, OH, L):
    S, C = x.shape[:2]
    col = np.empty((S, C * geo[0] * geo[1], L), x.dtype)
    _im2col(x, col, *geo, OH)
    return col


def conv_forward(x, w3, bias, out, scratch, geo, OH, nslot, lay, colsz, has_bias, par):
    """out[n] = w (G, C_out/G, K) @ columns of x[n] (+ bias): one matrix product per sample."""
    N, L = x.shape[0], out.shape[2]
    G, Cg, Kg = w3.shape
    col = _columns(x, geo, OH, L).reshape(N, G, Kg, L)
    out[...] = np.matmul(w3[None], col).reshape(out.shape)
    if has_bias:
        out += bias[None, :, None]


def conv_backward(x, wt, g, dx, dwf, scratch, geo, OH, nslot, lw, lx, colsz, wsz, par):
    """Input gradient into dx, weight gradient into dwf (runs of samples summed in order)."""
    N, Co, L = g.shape
    G = wt.shape[0]
    if dx.shape[0]:
        C = dx.shape[1]
        Kg = C // G * geo[0] * geo[1]
        gg = g.reshape(N, G, Co // G, L)
        col = np.matmul(wt[None], gg).reshape(N, C * geo[0] * geo[1], L)
        _col2im(col, dx, *geo, OH)
    if x.shape[0]:
        C = x.shape[1]
        Kg = C // G * geo[0] * geo[1]
        col = _columns(x, geo, OH, L).reshape(N, G, Kg, L)
        parts = np.matmul(g.reshape(N, G, Co // G, L), col.transpose(0, 1, 3, 2)).reshape(N, -1)
        runs = [parts[s * N // nslot:(s + 1) * N // nslot].sum(axis=0) for s in range(nslot)]
        acc = runs[0]
        for r in runs[1:]:
            acc = acc + r
        dwf[...] = acc


def _dw_taps(x_shape, g_shape, geo):
    """(i, j, output rows, input rows, output cols, input cols) of every tap."""
    kh, kw, sh, sw, ph, pw, dh, dw = geo
    H, W, OH, OW = x_shape[2], x_shape[3], g_shape[2], g_shape[3]
    for i, (oh, h) in enumerate(_taps(H, OH, kh, sh, ph, dh)):
        for j, (ow, w) in enumerate(_taps(W, OW, kw, sw, pw, dw)):
            yield i, j, oh[:, None], h[:, None], ow[None, :], w[None, :]


def depthwise_forward(x, w, bias, out, geo, has_bias, par):
    """out[n, o] = sum of taps of w[o] over x[n, o // m] (+ bias[o])."""
    m = out.shape[1] // x.shape[1]
    xs = np.repeat(x, m, axis=1)
    out[...] = 0
    for i, j, oh, h, ow, wc in _dw_taps(x.shape, out.shape, geo):
        out[:, :, oh, ow] += w[None, :, i * geo[1] + j, None, None] * xs[:, :, h, wc]
    if has_bias:
        out += bias[None, :, None, None]


def depthwise_input_grad(w, g, dx, geo, par):
    """dx = the adjoint of depthwise_forward applied to g."""
    N, C = dx.shape[:2]
    m = g.shape[1] // C
    acc = np.zeros((N, C * m) + dx.shape[2:], dx.dtype)
    for i, j, oh, h, ow, wc in _dw_taps(dx.shape, g.shape, geo):
        np.add.at(acc, (slice(None), slice(None), h, wc),
                  w[None, :, i * geo[1] + j, None, None] * g[:, :, oh, ow])
    dx[...] = acc.reshape(N, C, m, *dx.shape[2:]).sum(axis=2)


def depthwise_weight_grad(x, g, dw_, geo, par):
    """dw[o, tap] = sum over n, positions of g[n, o] * x[n, o // m] shifted (float64)."""
    m = g.shape[1] // x.shape[1]
    xs = np.repeat(x, m, axis=1).astype(np.float64)
    for i, j, oh, h, ow, wc in _dw_taps(x.shape, g.shape, geo):
        dw_[:, i * geo[1] + j] = (g[:, :, oh, ow].astype(np.float64) * xs[:, :, h, wc]).sum(axis=(0, 2, 3))
