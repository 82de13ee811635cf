"""Numpy twins of ``kernels/conv.py``: same names, same signatures, obvious loops over (i, j)."""
import numpy as np

__all__ = ["im2col", "col2im", "fold_sum", "channel_sum"]


def _taps(n_in, n_out, k, s, p, d):
    """For each kernel tap t: (valid output positions, the input positions they read)."""
    o = np.arange(n_out)
    res = []
    for t in range(k):
        pos = o * s - p + t * d
        ok = (pos >= 0) & (pos < n_in)
        res.append((o[ok], pos[ok]))
    return res


def im2col(x, col, kh, kw, sh, sw, ph, pw, dh, dw, OH):
    """col[s, (c*kh+i)*kw+j, oh*OW+ow] = x[s, c, oh*sh-ph+i*dh, ow*sw-pw+j*dw] (0 outside x)."""
    S, C, H, W = x.shape
    OW = col.shape[2] // OH if OH else 0
    c6 = col.reshape(S, C, kh, kw, OH, OW)
    c6[...] = 0
    for i, (oh, h) in enumerate(_taps(H, OH, kh, sh, ph, dh)):
        for j, (ow, w) in enumerate(_taps(W, OW, kw, sw, pw, dw)):
            c6[:, :, i, j, oh[:, None], ow[None, :]] = x[:, :, h[:, None], w[None, :]]


def col2im(col, x, kh, kw, sh, sw, ph, pw, dh, dw, OH):
    """x[s, c, h, w] = sum of the col entries ``im2col`` would copy from x[s, c, h, w]."""
    S, C, H, W = x.shape
    OW = col.shape[2] // OH if OH else 0
    c6 = col.reshape(S, C, kh, kw, OH, OW)
    x[...] = 0
    for i, (oh, h) in enumerate(_taps(H, OH, kh, sh, ph, dh)):
        for j, (ow, w) in enumerate(_taps(W, OW, kw, sw, pw, dw)):
            # NOTE: with stride >= dilation the positions are distinct, but not in general: add.at
            np.add.at(x, (slice(None), slice(None), h[:, None], w[None, :]),
                      c6[:, :, i, j, oh[:, None], ow[None, :]])


def fold_sum(parts, out, accumulate):
    """out = out + parts[0] + parts[1] + ... (left to right); without out unless ``accumulate``."""
    acc = out.copy() if accumulate else parts[0].copy()
    for s in range(0 if accumulate else 1, parts.shape[0]):
        acc = acc + parts[s]
    out[...] = acc


def channel_sum(g, out):
    """out[c] = sum over n, i of g[n, c, i], summed in float64."""
    out[...] = g.astype(np.float64).sum(axis=2).sum(axis=0)
