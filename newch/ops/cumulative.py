"""Running sums and products along a dim: cumsum, cumprod (with their backward)."""
import numpy as np

from .. import dtypes as D
from .alloc import check_tensor, data, empty, norm_dim
from .launch import copy_into
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


def _cumprod_grad(x, o, g, d, gx, s):
    """d(sum(g * cumprod(x, d))) / dx, exact where x has zeros, written into ``gx`` or ``s``
    (arena arrays of x's shape); returns the one holding it. numpy works on views with ``out=``:
    nothing is allocated outside the arena.

    Without zeros: the reversed running sum of g * cumprod, divided by x. With a zero: gx_k =
    L_k * S_k, L_k = x_0 * ... * x_{k-1} (the exclusive running product) and S_k = g_k +
    x_{k+1} * S_{k+1} (a recurrence from the end): no division, so zeros need no special case.
    """
    n = x.shape[d]

    def at(k, stop=None):
        return (slice(None),) * d + (slice(k, k + 1 if stop is None else stop),)
    rev = (slice(None),) * d + (slice(None, None, -1),)
    if np.count_nonzero(x) == x.size:
        np.multiply(g, o, out=s)
        np.cumsum(s[rev], axis=d, out=gx)     # gx[j] = sum of s over the last j + 1 positions
        np.divide(gx[rev], x, out=s)
        return s
    s[at(n - 1)] = g[at(n - 1)]
    for k in range(n - 2, -1, -1):
        np.multiply(x[at(k + 1)], s[at(k + 1)], out=s[at(k)])
        s[at(k)] += g[at(k)]
    gx[at(0)] = 1
    if n > 1:
        np.cumprod(x[at(0, n - 1)], axis=d, out=gx[at(1, n)])
    np.multiply(gx, s, out=gx)
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
            op = "cumprod backward"
            xc = xs if xs.dtype is dt else xs.to(dt)
            x, o, gg = data(xc, op), data(os, op), data(g, op)
            gx = empty(x.shape, dt)
            if x.ndim == 0 or x.size == 0:
                gx._a[...] = gg
            else:
                scratch = empty(x.shape, dt)
                if _cumprod_grad(x, o, gg, d, gx._a, scratch._a) is scratch._a:
                    gx, scratch = scratch, gx
                del scratch
            if xs.dtype is dt:
                return (gx,)
            gi = empty(x.shape, xs.dtype)
            copy_into(gx._a, gi._a)
            return (gi,)
        record(out, "CumprodBackward0", (input,), backward, saved=[input, out])
    return out
