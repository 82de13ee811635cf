"""Pooling over the last two dims: max (with argmax), average, and their adaptive forms.

Each op turns its arguments into per-output-row and per-output-column windows
(first input position, number of positions inside the input, divisor), so one
pair of kernels serves plain, padded, ceil-mode, dilated and adaptive pooling.
The leading dims are flattened into planes; 1-D pooling is a height-1 image.

What max pooling keeps for backward: the winning position inside each window,
one byte per output element (int32 for windows over 255 elements); not the
input, not int64 indices. Average pooling keeps nothing but the shapes.
"""
import numpy as np

from .. import dtypes as D
from .alloc import data, empty, kernels
from .conv import refuse_create_graph
from .launch import contiguous_array
from .record import needs_grad, record


def out_len(op, n, k, s, p, d, ceil_mode):
    """Output length of pooling n positions: floor (or ceil) mode, last window starting in range."""
    span = n + 2 * p - d * (k - 1) - 1
    if span < 0:
        raise ValueError(f"{op}: input size {n} (padded by {p}) is smaller than the window "
                         f"{d * (k - 1) + 1}")
    o = (span + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (o - 1) * s >= n + p:
        o -= 1
    return o


def windows(n, o, k, s, p, d):
    """(start, count, divisor with padding) of each of o windows over n positions."""
    start = np.arange(o, dtype=np.int64) * s - p
    t0 = np.maximum(-start + d - 1, 0) // d
    t1 = np.minimum((n - start + d - 1) // d, k)
    count = np.maximum(t1 - t0, 0)
    den = np.minimum(start + k, n + p) - start
    return start + t0 * d, count, den


def adaptive_windows(n, o):
    """(start, count) of the adaptive windows: [floor(i*n/o), ceil((i+1)*n/o))."""
    i = np.arange(o, dtype=np.int64)
    start = i * n // o
    end = -((-(i + 1) * n) // o)
    return start, end - start


def _planes(op, input, nd, keep):
    x = data(input, op)
    if not input.dtype.is_floating_point:
        raise TypeError(f"{op}: expected a floating point tensor, got {input.dtype}")
    if input.ndim not in (nd + 1, nd + 2):
        raise ValueError(f"{op}: expected a {nd + 1}-D (unbatched) or {nd + 2}-D (batched) input, "
                         f"got shape {tuple(input.shape)}")
    if any(s == 0 for s in x.shape[-nd:]):
        raise ValueError(f"{op}: input of shape {tuple(input.shape)} has an empty spatial dim")
    H, W = (1, x.shape[-1]) if nd == 1 else x.shape[-2:]
    return contiguous_array(x, keep).reshape(-1, H, W)


def _shaped(out, input, nd, o):
    """out (P, OH, OW) reshaped to input's leading dims + the nd output dims."""
    return out.reshape(tuple(input.shape[:-nd]) + tuple(o[-nd:]))


def max_pool(op, input, nd, geo, return_indices=False):
    """Max pooling with windows ``geo`` = ((hs, hc, dh, OH), (ws, wc, dw, OW)) over nd dims."""
    keep = []      # NOTE: holds an arena copy of a non-contiguous input until the kernel ran
    x = _planes(op, input, nd, keep)
    (hs, hc, dh, OH), (ws, wc, dw, OW) = geo
    P, H, W = x.shape
    out = empty((P, OH, OW), input.dtype)
    most = int(hc.max()) * int(wc.max()) if hc.size and wc.size else 0
    arg = empty((P, OH, OW), D.uint8 if most <= 255 else D.int32)
    if out._a.size:
        kernels().max_pool(x, out._a, arg._a, hs, hc, ws, wc, dh, dw)
    res = _shaped(out, input, nd, (OH, OW))
    if needs_grad(input):
        shape, dt = tuple(input.shape), input.dtype

        def backward(g, args):
            refuse_create_graph("MaxPool2DWithIndicesBackward0", g)
            dx = empty((P, H, W), dt)
            keep = []
            ga = contiguous_array(data(g, "MaxPool2DWithIndicesBackward0"), keep).reshape(P, OH, OW)
            kernels().max_pool_backward(ga, data(args, "MaxPool2DWithIndicesBackward0"), hs, hc,
                                        ws, wc, dh, dw, dx._a)
            return (dx.reshape(shape),)
        record(res, "MaxPool2DWithIndicesBackward0", (input,), backward, saved=[arg])
    if not return_indices:
        return res
    # flat index (hs + a // wc * dh) * W + ws + a % wc * dw of the winner's position a in its
    # window, computed in place in arena memory (no numpy temporaries of the output's size)
    idx, rows = empty((P, OH, OW), D.int64), empty((P, OH, OW), D.int64)
    ia, ra = idx._a, rows._a
    ia[...] = arg._a
    np.floor_divide(ia, wc[None, :], out=ra)
    np.remainder(ia, wc[None, :], out=ia)
    ra *= dh
    ra += hs[:, None]
    ra *= W
    ia *= dw
    ia += ws[None, :]
    ia += ra
    del rows, ia, ra
    return res, _shaped(idx, input, nd, (OH, OW))


def avg_pool(op, input, nd, geo, divisor=0):
    """Average pooling with unit-step windows ``geo`` = ((hs, hc, hden, OH), (ws, wc, wden, OW))."""
    keep = []      # NOTE: holds an arena copy of a non-contiguous input until the kernel ran
    x = _planes(op, input, nd, keep)
    (hs, hc, hden, OH), (ws, wc, wden, OW) = geo
    # NOTE: divisors in the data's dtype, so the kernels divide and accumulate in that dtype
    hden, wden, divisor = hden.astype(x.dtype), wden.astype(x.dtype), x.dtype.type(divisor)
    P, H, W = x.shape
    out = empty((P, OH, OW), input.dtype)
    if out._a.size:
        kernels().avg_pool(x, out._a, hs, hc, ws, wc, hden, wden, divisor)
    res = _shaped(out, input, nd, (OH, OW))
    if needs_grad(input):
        shape, dt = tuple(input.shape), input.dtype

        def backward(g):
            refuse_create_graph("AvgPool2DBackward0", g)
            dx = empty((P, H, W), dt)
            keep = []
            ga = contiguous_array(data(g, "AvgPool2DBackward0"), keep).reshape(P, OH, OW)
            kernels().avg_pool_backward(ga, hs, hc, ws, wc, hden, wden, divisor, dx._a)
            return (dx.reshape(shape),)
        record(res, "AvgPool2DBackward0", (input,), backward)
    return res
