"""Numpy twins of ``kernels/indexing.py``: same names, same signatures, obvious code.

They are the test oracle and the fallback where numba is missing. Accumulating
kernels add in increasing j, like the JIT kernels, so they agree bit for bit.
"""
import numpy as np

__all__ = ["index_select_3d", "gather_3d", "scatter_add_3d", "mask_count",
           "masked_select", "masked_fill_nd", "index_put_3d", "wrap_index"]


def _check(idx, D):
    """IndexError unless every index is in [0, D) (numpy would wrap negatives silently)."""
    if idx.size and (idx.min() < 0 or idx.max() >= D):
        raise IndexError("indexing kernel: an index is out of range for the indexed dim")


def wrap_index(idx, n, allow_negative, out, bad):
    """out[k] = idx[k] (+ n if negative and allowed); bad[0] = first k out of range, else -1."""
    bad[0] = -1
    for k in range(idx.shape[0]):
        v = int(idx[k])
        if v < 0 and allow_negative:
            v += n
        if v < 0 or v >= n:
            bad[0] = k
            return
        out[k] = v


def index_select_3d(x, idx, out):
    """out[o, j, i] = x[o, idx[j], i]."""
    _check(idx, x.shape[1])
    out[...] = x[:, idx, :]


def gather_3d(x, idx, out):
    """out[o, j, i] = x[o, idx[o, j, i], i]."""
    _check(idx, x.shape[1])
    out[...] = np.take_along_axis(x, idx, axis=1)


def scatter_add_3d(out, idx, src):
    """out[o, idx[o, j, i], i] += src[o, j, i], one j at a time."""
    _check(idx, out.shape[1])
    O, J, I = idx.shape
    o = np.arange(O)[:, None]
    i = np.arange(I)[None, :]
    # NOTE: within one j every (o, i) hits a different element, so fancy += is exact.
    for j in range(J):
        out[o, idx[:, j, :], i] += src[:, j, :]


def mask_count(mask, out):
    """out[0] = number of True entries of mask."""
    out[0] = np.count_nonzero(mask)


def masked_select(x, mask, out):
    """out = x[mask]."""
    if mask.shape[0] != x.shape[0] or np.count_nonzero(mask) > out.shape[0]:
        raise IndexError("masked_select: the mask, the input and the output lengths disagree")
    out[...] = x[mask]


def masked_fill_nd(dst, mask, value):
    """dst[mask] = value, in place."""
    dst[mask] = value


def index_put_3d(dst, idx, src, accumulate):
    """dst[o, idx[j], i] = src[o, j, i] (or +=), one j at a time: the last duplicate wins."""
    _check(idx, dst.shape[1])
    for j in range(idx.shape[0]):
        if accumulate:
            dst[:, idx[j], :] += src[:, j, :]
        else:
            dst[:, idx[j], :] = src[:, j, :]
