"""Extremes: max/min (with indices), amax/amin, argmax/argmin."""
from collections import namedtuple

import numpy as np

from .. import dtypes as D
from ..kernels import codes as C
from .alloc import data, empty, kernels, norm_dim, norm_dims
from .layout import reshape_view
from .arith import div, eq, logical_and, logical_or, maximum, minimum, mul, ne
from .reduce import _expand_back, _out_shape, reduce
from .record import needs_grad, record
from .indexing import scatter_add_zeros
from .launch import copy_into

__all__ = ["amax", "amin", "argmax", "argmin", "max", "min"]
# also bound as Tensor methods (ops/methods.py):
TENSOR_METHODS = ["amax", "amin", "argmax", "argmin", "max", "min"]

MaxMin = namedtuple("MaxMin", ["values", "indices"])
# NOTE: torch returns a named tuple ``torch.return_types.max``; values/indices and
# tuple unpacking are what scripts use, and this namedtuple gives both.


def _arg_reduce(op, code, x, dim, keepdim):
    a = data(x, op)
    if a.ndim == 0:
        a = a.reshape(1)
        dim = 0
    if a.shape[dim] == 0:
        raise IndexError(f"{op}: cannot reduce over an empty dim {dim} (size 0) of shape "
                         f"{tuple(a.shape)}")
    o = int(np.prod(a.shape[:dim]))
    i = int(np.prod(a.shape[dim + 1:]))
    shape = _out_shape(x.shape, (dim,), keepdim) if x.ndim else ()
    vals = empty(shape, x.dtype)
    idx = empty(shape, D.int64)
    v, keep = (a.reshape(o, a.shape[dim], i), None) if a.flags.c_contiguous else _strided3(a, dim)
    # NOTE: the outputs take v's (O, I): (o*i, 1) when _strided3 moved dim last
    kernels().argreduce_3d(code, v, vals._a.reshape(v.shape[0], v.shape[2]),
                           idx._a.reshape(v.shape[0], v.shape[2]))
    del keep
    return vals, idx


def _strided3(a, dim):
    """(``a`` as (O, D, 1) with ``dim`` in the middle, keep-alive of the arena copy if one was made)."""
    moved = np.moveaxis(a, dim, -1)
    o = int(np.prod(moved.shape[:-1]))
    v = reshape_view(moved, (o, a.shape[dim], 1))
    if v is None:
        tmp = empty(moved.shape, D.from_numpy_dtype(a.dtype))
        copy_into(moved, tmp._a)
        return tmp._a.reshape(o, a.shape[dim], 1), tmp
    return v, None


def _extreme(op, code, argcode, input, dim, keepdim):
    if dim is None:
        if input.numel() == 0:
            raise IndexError(f"{op}: the tensor is empty; specify dim to reduce over")
        out = reduce(op, code, input, tuple(range(input.ndim)), False, input.dtype)
        if needs_grad(input):
            record(out, f"{op.capitalize()}Backward1", (input,),
                   lambda g, x, o: (_spread(g, x, o, tuple(range(x.ndim)), False, True),),
                   saved=[input, out])
        return out
    if isinstance(dim, (tuple, list)):
        raise TypeError(f"{op}: dim must be an int; use amax/amin for several dims")
    d = norm_dim(op, dim, input.ndim)
    vals, idx = _arg_reduce(op, argcode, input, d, keepdim)
    if needs_grad(input):
        shape = input.shape

        def backward(g, idx):
            if not shape:       # a 0-d input is its own max along dim 0
                return (g,)
            return (scatter_add_zeros(shape, d, idx if keepdim else idx.unsqueeze(d),
                                      g if keepdim else g.unsqueeze(d)),)
        # NOTE: the indices are saved like any tensor: `i.zero_()` before backward is refused
        record(vals, f"{op.capitalize()}Backward0", (input,), backward, saved=[idx])
    return MaxMin(vals, idx)


def _spread(g, x, out, dims, keepdim, to_nan=False):
    """Gradient of amax/amin/max(all): shared evenly among the tied extreme elements.

    ``to_nan``: a NaN result sends its gradient to the NaN inputs (PyTorch's max() / min();
    its amax / amin give NaN gradients there instead).
    """
    gg = _expand_back(g, x.shape, dims, keepdim)
    oo = _expand_back(out, x.shape, dims, keepdim)
    hit = eq(x, oo)
    if to_nan and x.dtype.is_floating_point:
        hit = logical_or(hit, logical_and(ne(x, x), ne(oo, oo)))
    mask = hit.to(g.dtype)
    count = mask.sum(dims, keepdim=True)
    return mul(mask, div(gg, count))


def max(input, dim=None, keepdim=False):
    """The largest element; with ``dim``, (values, indices) along it; with a tensor, maximum."""
    if isinstance(dim, type(input)):
        return maximum(input, dim)
    return _extreme("max", C.MAX, C.ARGMAX, input, dim, keepdim)


def min(input, dim=None, keepdim=False):
    """The smallest element; with ``dim``, (values, indices) along it; with a tensor, minimum."""
    if isinstance(dim, type(input)):
        return minimum(input, dim)
    return _extreme("min", C.MIN, C.ARGMIN, input, dim, keepdim)


def _amm(op, code, input, dim, keepdim):
    dims = norm_dims(op, dim if dim != () else None, input.ndim)
    if 0 in [input.shape[d] for d in dims] or (input.numel() == 0 and not dims):
        raise IndexError(f"{op}: cannot reduce over an empty dim of shape {tuple(input.shape)}")
    out = reduce(op, code, input, dims, keepdim, input.dtype)
    if needs_grad(input):
        record(out, f"{op.capitalize()}Backward0", (input,),
               lambda g, x, o: (_spread(g, x, o, dims, keepdim),), saved=[input, out])
    return out


def amax(input, dim=(), keepdim=False):
    """Maximum over ``dim`` (int or tuple; all dims by default); ties share the gradient."""
    return _amm("amax", C.MAX, input, dim, keepdim)


def amin(input, dim=(), keepdim=False):
    """Minimum over ``dim`` (int or tuple; all dims by default); ties share the gradient."""
    return _amm("amin", C.MIN, input, dim, keepdim)


def argmax(input, dim=None, keepdim=False):
    """Index of the largest element (of the flattened tensor when ``dim`` is None)."""
    return _argx("argmax", C.ARGMAX, input, dim, keepdim)


def argmin(input, dim=None, keepdim=False):
    """Index of the smallest element (of the flattened tensor when ``dim`` is None)."""
    return _argx("argmin", C.ARGMIN, input, dim, keepdim)


def _argx(op, code, input, dim, keepdim):
    if input.dtype is D.bool_:
        raise TypeError(f"{op}: not supported for bool tensors")
    if dim is None:
        if input.numel() == 0:
            raise IndexError(f"{op}: the tensor is empty")
        flat = input.reshape(-1)
        _, idx = _arg_reduce(op, code, flat, 0, False)
        return idx.reshape((1,) * input.ndim) if keepdim else idx
    return _arg_reduce(op, code, input, norm_dim(op, dim, input.ndim), keepdim)[1]
