"""Running sums and products along a dim: cumsum, cumprod (with their backward)."""
import numpy as np

from .. import dtypes as D
from .alloc import check_tensor, data, empty, norm_dim
from .rearrange import flip
from .record import needs_grad, record

__all__ = ["cumprod", "cumsum"]
TENSOR_METHODS = ["cumprod", "cumsum"]   # also bound as Tensor methods (ops/methods.py)


def _prepare(op, input, dim, dtype):
    check_tensor(op, input)
    a = data(input, op)
    d = norm_dim(op, dim, a.ndim)
    if dtype is not None:
        out_dt = D.from_any(dtype)
    elif input.dtype.is_floating_point:
        out_dt = input.dtype
    else:
        out_dt = D.int64     # integers and bools accumulate in int64, as in PyTorch
    return a, d, out_dt


def cumsum(input, dim, *, dtype=None):
    """``out[i] = input[0] + ... + input[i]`` along ``dim`` (integers accumulate in int64).

    Example:
        >>> cumsum(newch.tensor([1, 2, 3]), 0).tolist()
        [1, 3, 6]
    """
    a, d, dt = _prepare("cumsum", input, dim, dtype)
    out = empty(a.shape, dt)
    if a.ndim == 0:
        out._a[...] = a
    else:
        np.cumsum(a, axis=d, dtype=dt.np, out=out._a)
    if needs_grad(input) and dt.is_floating_point:
        src = input.dtype     # NOTE: the closure keeps the dtype, not the input tensor

        def backward(g):
            if g.ndim == 0:
                return (g.to(src),)
            return (flip(cumsum(flip(g, [d]), d), [d]).to(src),)
        record(out, "CumsumBackward0", (input,), backward)
    return out


def _cumprod_grad(x, out, g):
    """d(sum g * cumprod(x)) / dx for 2-d arrays (rows, n), exact where x has zeros."""
    gx = np.zeros_like(x)
    zero = x == 0
    rows = ~zero.any(axis=1)
    if rows.any():
        go = (g * out)[rows]
        gx[rows] = np.flip(np.cumsum(np.flip(go, 1), 1), 1) / x[rows]
    for r in np.nonzero(~rows)[0]:
        z = int(np.argmax(zero[r]))
        if z:
            go = g[r, :z] * out[r, :z]
            gx[r, :z] = np.flip(np.cumsum(go[::-1]))[:z] / x[r, :z]
        prefix = out[r, z - 1] if z else x.dtype.type(1)
        run, acc = prefix, g[r, z] * prefix
        for j in range(z + 1, x.shape[1]):
            run = run * x[r, j]
            acc = acc + g[r, j] * run
        gx[r, z] = acc
    return gx


def cumprod(input, dim, *, dtype=None):
    """``out[i] = input[0] * ... * input[i]`` along ``dim`` (integers accumulate in int64).

    Example:
        >>> cumprod(newch.tensor([1, 2, 3]), 0).tolist()
        [1, 2, 6]
    """
    a, d, dt = _prepare("cumprod", input, dim, dtype)
    out = empty(a.shape, dt)
    if a.ndim == 0:
        out._a[...] = a
    else:
        np.cumprod(a, axis=d, dtype=dt.np, out=out._a)
    if needs_grad(input) and dt.is_floating_point:
        def backward(g, xs, os):
            x = data(xs, "cumprod backward").astype(dt.np)
            o, gg = data(os, "cumprod backward"), data(g, "cumprod backward")
            if x.ndim == 0 or x.size == 0:
                res = gg.astype(dt.np)
            else:
                xm, om, gm = (np.moveaxis(v, d, -1) for v in (x, o, gg))
                shp = xm.shape
                n = shp[-1]
                res = _cumprod_grad(xm.reshape(-1, n), om.reshape(-1, n), gm.reshape(-1, n))
                res = np.moveaxis(res.reshape(shp), -1, d)
            gi = empty(x.shape, xs.dtype)
            gi._a[...] = res
            return (gi,)
        record(out, "CumprodBackward0", (input,), backward, saved=[input, out])
    return out
