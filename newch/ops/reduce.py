"""Reductions over all or given dims: sum, mean, var, std, prod, nansum, logsumexp, all, any.

The extremes (max, min, argmax, ...) are in ``extrema.py`` and build on ``reduce`` here.
"""
import math

import numpy as np

from .. import dtypes as D
from ..kernels import codes as C
from ..tensor import Tensor
from ..graph import is_grad_enabled, no_grad
from .alloc import data, empty, empty_with_scratch, kernels, norm_dims
from .arith import div, mul, sub
from .layout import reshape_view
from .launch import copy_into, launch_binary
from .record import needs_grad, record
from .conditional import where
from .creation import full
from .creation import zeros
from .unary import exp
from .unary import log
from .unary import sqrt

__all__ = ["all", "any", "logsumexp", "mean", "nansum", "prod", "std", "std_mean", "sum", "var", "var_mean"]
# also bound as Tensor methods (ops/methods.py):
TENSOR_METHODS = ["all", "any", "logsumexp", "mean", "nansum", "prod", "std", "sum", "var"]


def _three_d(a, dims):
    """View ``a`` as (O, R, I) with ``dims`` (contiguous run) in R, or None if not possible."""
    if not dims:
        return a.reshape((1, 1, a.size)) if a.flags.c_contiguous else None
    lo, hi = dims[0], dims[-1] + 1
    if list(dims) != list(range(lo, hi)):
        return None
    o = math.prod(a.shape[:lo])
    r = math.prod(a.shape[lo:hi])
    i = math.prod(a.shape[hi:])
    return reshape_view(a, (o, r, i))


def _moved(a, dims):
    """``a`` with ``dims`` moved to the end, as an (O, R, 1) array (copied if needed)."""
    keep = [d for d in range(a.ndim) if d not in dims]
    p = np.transpose(a, keep + list(dims))
    o = math.prod(p.shape[:len(keep)])
    r = math.prod(p.shape[len(keep):])
    if p.flags.c_contiguous:
        return p.reshape(o, r, 1), None
    tmp = empty(p.shape, D.from_numpy_dtype(a.dtype))
    copy_into(p, tmp._a)
    return tmp._a.reshape(o, r, 1), tmp


def _out_shape(shape, dims, keepdim):
    if keepdim:
        return tuple(1 if i in dims else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in dims)


def _acc_dtype(code, dt, dtype):
    if dtype is not None:
        return D.from_any(dtype)
    if code in (C.ALL, C.ANY):
        return D.bool_
    if code in (C.SUM, C.PROD, C.NANSUM) and not dt.is_floating_point:
        return D.int64
    return dt


_NO_CENTER = np.zeros(1)          # NOTE: read-only dummies: the kernels never write ``center``
_NO_CENTER_2D = np.zeros((1, 1))


def reduce(op, code, x, dims, keepdim, out_dtype, center=None):
    """Run reduction ``code`` of ``x`` over ``dims`` into a new tensor of ``out_dtype``."""
    a = data(x, op)
    shape = _out_shape(a.shape, dims, keepdim)
    K = kernels()
    full = len(dims) == a.ndim
    keep = None
    if full and a.flags.c_contiguous and a.size > 0:
        part_dt = np.float64 if a.dtype.kind == "f" else np.int64
        nb = K.reduce_blocks(a.size)
        if nb <= 64:
            # NOTE: few partial sums (one per 4096 elements): they ride in the result's
            # allocation (at most 512 bytes, freed with it) rather than in one of their own
            out, parts = empty_with_scratch(shape, out_dtype, nb, part_dt)
        else:
            out = empty(shape, out_dtype)
            keep = empty((nb,), D.from_numpy_dtype(np.dtype(part_dt)))
            parts = keep._a
        # NOTE: one float64 (a keepdim Tensor centre has the input's ndim: taken as (1,), so
        # the kernel compiles once, not once per ndim)
        c = _NO_CENTER if center is None else np.array(
            data(center, op) if isinstance(center, Tensor) else center, np.float64).reshape(1)
        K.reduce_all(code, a.reshape(-1), c, parts, out._a.reshape(1))
        return out
    out = empty(shape, out_dtype)
    R = a.shape[-1] if a.ndim else 0
    if center is None and R and dims == (a.ndim - 1,) and a.flags.c_contiguous:
        # NOTE: the last axis of a C-contiguous input (``x.sum(-1)``, a softmax's sums): the
        # (O, R, 1) view ``_three_d`` makes, without working it out
        K.reduce_3d(code, a.reshape(a.size // R, R, 1), _NO_CENTER_2D,
                    out._a.reshape(a.size // R, 1))
        return out
    v = _three_d(a, dims) if a.ndim else a.reshape(1, 1, 1)
    if v is None:
        v, keep = _moved(a, dims)
    o, _, i = v.shape
    if center is None:
        cen = _NO_CENTER_2D
    else:
        # NOTE: one float64 centre per output element, in the arena (not a numpy scratch array)
        c = data(center, op) if isinstance(center, Tensor) else np.float64(center)
        cen_t = empty((o, i), D.float64)
        cen = cen_t._a
        copy_into(c.reshape(o, i) if getattr(c, "size", 1) == o * i else c, cen)
    K.reduce_3d(code, v, cen, out._a.reshape(o, i))
    del keep
    return out


def _expand_back(g, shape, dims, keepdim):
    """Reshape a reduced gradient so it broadcasts against the input's ``shape``."""
    if not keepdim:
        g = g.reshape(_out_shape(shape, dims, True))
    return g


def sum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum over all elements, or over ``dim`` (int or tuple)."""
    dims = norm_dims("sum", dim, input.ndim)
    acc = _acc_dtype(C.SUM, input.dtype, dtype)
    if needs_grad(input) and not acc.is_floating_point:
        raise TypeError(f"sum: autograd does not support a {acc} result (dtype=) of a tensor that "
                        f"requires grad")
    out = reduce("sum", C.SUM, input, dims, keepdim, acc)
    if needs_grad(input):
        shape = input.shape
        record(out, "SumBackward1" if dim is not None else "SumBackward0", (input,),
               lambda g: (_expand_back(g, shape, dims, keepdim).expand(shape),))
    return out


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum treating NaN as zero."""
    dims = norm_dims("nansum", dim, input.ndim)
    out = reduce("nansum", C.NANSUM, input, dims, keepdim, _acc_dtype(C.SUM, input.dtype, dtype))
    if needs_grad(input):
        shape = input.shape

        def backward(g, input):
            gg = _expand_back(g, shape, dims, keepdim).expand(shape)
            return (where(input != input, 0.0, gg),)
        record(out, "NansumBackward0", (input,), backward, saved=[input])
    return out


def mean(input, dim=None, keepdim=False, *, dtype=None):
    """Arithmetic mean over all elements or ``dim``; float tensors only."""
    dt = D.from_any(dtype) if dtype is not None else input.dtype
    if not dt.is_floating_point:
        raise TypeError(f"mean: expected a floating point tensor or dtype, got {dt}; "
                        f"use .float() first or pass dtype=")
    dims = norm_dims("mean", dim, input.ndim)
    n = math.prod(input.shape[d] for d in dims)
    out = _scale_inplace(reduce("mean", C.SUM, input, dims, keepdim, dt),
                         1.0 / n if n else float("nan"))
    if needs_grad(input):
        shape = input.shape
        record(out, "MeanBackward1" if dim is not None else "MeanBackward0", (input,),
               lambda g: (div(_expand_back(g, shape, dims, keepdim).expand(shape), n),))
    return out


def _scale_inplace(t, factor):
    """t *= factor (rounded to t's dtype) in place, for a fresh result ``t`` (mean, mse)."""
    a = t._a
    s = a.dtype.type(factor)
    if a.size and a.flags.c_contiguous:
        # NOTE: the kernel launch_binary picks for a contiguous array and a scalar (a 0-d
        # result included: its one value), without working that out
        f = a.reshape(-1)
        kernels().binary_scalar(C.MUL, f, s, f)
    else:
        launch_binary(C.MUL, a, s, a)
    return t


def var(input, dim=None, *, correction=1, keepdim=False, unbiased=None):
    """Variance over all elements or ``dim`` with Bessel's ``correction`` (1 by default)."""
    if unbiased is not None:
        correction = 1 if unbiased else 0
    if not input.dtype.is_floating_point:
        raise TypeError(f"var: expected a floating point tensor, got {input.dtype}")
    dims = norm_dims("var", dim, input.ndim)
    n = math.prod(input.shape[d] for d in dims)
    with no_grad():
        m = mean(input, dims, keepdim=True)
        out = reduce("var", C.SUMSQDEV, input, dims, keepdim, input.dtype, center=m)
    # NOTE: no degrees of freedom left divides by 0, as PyTorch: inf (nan where all values agree)
    _scale_inplace(out, 1.0 / (n - correction) if n - correction > 0 else float("inf"))
    if needs_grad(input):
        record(out, "VarBackward0", (input,),
               lambda g, x, mu: (_var_grad(g, x, mu, dims, keepdim, n - correction),), saved=[input, m])
    return out


def _var_grad(g, x, m, dims, keepdim, dof):
    """d var / dx times ``g``: 2 (x - mean) g / dof (NaN when dof <= 0, like the value)."""
    gg = _expand_back(g, x.shape, dims, keepdim)
    # NOTE: under create_graph the mean must be part of the graph (it depends on x)
    mu = mean(x, dims, keepdim=True) if is_grad_enabled() else m
    return mul(mul(gg, sub(x, mu)), 2.0 / dof if dof > 0 else float("inf"))


def std(input, dim=None, *, correction=1, keepdim=False, unbiased=None):
    """Standard deviation: the square root of ``var``; where it is 0 its gradient is 0 (as PyTorch)."""
    if unbiased is not None:
        correction = 1 if unbiased else 0
    with no_grad():
        out = sqrt(var(input, dim, correction=correction, keepdim=keepdim))
    if needs_grad(input):
        dims = norm_dims("std", dim, input.ndim)
        dof = math.prod(input.shape[d] for d in dims) - correction
        with no_grad():
            m = mean(input, dims, keepdim=True)

        def backward(g, input, out, m):
            gv = where(out == 0, 0.0, div(g, mul(out, 2.0)))
            return (_var_grad(gv, input, m, dims, keepdim, dof),)
        record(out, "StdBackward0", (input,), backward, saved=[input, out, m])
    return out


def prod(input, dim=None, keepdim=False, *, dtype=None):
    """Product of all elements, or over one ``dim``."""
    if dim is not None and isinstance(dim, (tuple, list)):
        raise TypeError("prod: dim must be a single int")
    dims = norm_dims("prod", dim, input.ndim)
    out = reduce("prod", C.PROD, input, dims, keepdim, _acc_dtype(C.PROD, input.dtype, dtype))
    if needs_grad(input):
        shape = input.shape
        def backward(g, input, out):
            # NOTE: out / x is exact except where x == 0; those need the product of the others.
            gg = _expand_back(g, shape, dims, keepdim)
            oo = _expand_back(out, shape, dims, keepdim)
            zero = input == 0
            if not bool(zero.any()):
                return (mul(gg, div(oo, input)),)
            others = _prod_without_each(input, dims)
            return (mul(gg, where(zero, others, div(oo, where(zero, 1.0, input)))),)
        record(out, "ProdBackward0", (input,), backward, saved=[input, out])
    return out


def _prod_without_each(x, dims):
    """The product of the other elements along ``dims``, where ``x`` is zero (what prod's
    backward needs there): the product of the nonzero rest if ``x`` is its slice's only
    zero, else 0. Arena ops only, no per-element loop."""
    zero = x == 0
    zeros = reduce("prod", C.SUM, zero, dims, True, D.int64)
    rest = reduce("prod", C.PROD, where(zero, 1.0, x), dims, True, x.dtype)
    return where(zeros == 1, rest, 0.0)


def var_mean(input, dim=None, *, correction=1, keepdim=False, unbiased=None):
    """``(var(input, dim), mean(input, dim))`` in one call.

    Example:
        >>> [t.tolist() for t in var_mean(newch.tensor([1.0, 2.0, 3.0]))]
        [1.0, 2.0]
    """
    return (var(input, dim, correction=correction, keepdim=keepdim, unbiased=unbiased),
            mean(input, dim, keepdim))


def std_mean(input, dim=None, *, correction=1, keepdim=False, unbiased=None):
    """``(std(input, dim), mean(input, dim))`` in one call.

    Example:
        >>> [round(t.item(), 4) for t in std_mean(newch.tensor([1.0, 2.0, 3.0]))]
        [1.0, 2.0]
    """
    return (std(input, dim, correction=correction, keepdim=keepdim, unbiased=unbiased),
            mean(input, dim, keepdim))


def logsumexp(input, dim, keepdim=False):
    """log(sum(exp(x))) over ``dim``, computed without overflow."""
    dims = norm_dims("logsumexp", dim, input.ndim)
    x = input if input.dtype.is_floating_point else input.to(D.get_default_dtype())
    want_grad = needs_grad(input)
    with no_grad():
        m = reduce("logsumexp", C.MAX, x, dims, True, x.dtype) if x.numel() else None
        if m is None:
            out = full(_out_shape(x.shape, dims, keepdim), float("-inf"), dtype=x.dtype)
            if want_grad:     # an empty input still has a (zero-size) gradient, as in PyTorch
                zshape = tuple(x.shape)
                record(out, "LogsumexpBackward0", (input,), lambda g: (_zeros(zshape, g.dtype),))
            return out
        m = where(m.isinf(), 0.0, m)
        s = reduce("logsumexp", C.SUMEXP, x, dims, keepdim, x.dtype, center=m)
        out = log(s) + (m if keepdim else m.reshape(_out_shape(x.shape, dims, False)))
    if needs_grad(input):
        def backward(g, x, out):
            gg = _expand_back(g, x.shape, dims, keepdim)
            oo = _expand_back(out, x.shape, dims, keepdim)
            return (mul(gg, exp(sub(x, oo))),)
        record(out, "LogsumexpBackward0", (input,), backward, saved=[x, out])
    return out


def _zeros(shape, dtype):
    return zeros(shape, dtype=dtype)


def _logic_dims(op, input, dim):
    """all / any: unlike sum, an empty dim list reduces nothing (PyTorch)."""
    if isinstance(dim, (tuple, list)) and not dim:
        return ()
    return norm_dims(op, dim, input.ndim)


def _logic_dtype(input):
    return D.uint8 if input.dtype is D.uint8 else D.bool_    # NOTE: PyTorch keeps uint8 here


def all(input, dim=None, keepdim=False):
    """True where every element (over ``dim``) is nonzero (uint8 in, uint8 out, as PyTorch)."""
    return reduce("all", C.ALL, input, _logic_dims("all", input, dim), keepdim, _logic_dtype(input))


def any(input, dim=None, keepdim=False):
    """True where some element (over ``dim``) is nonzero (uint8 in, uint8 out, as PyTorch)."""
    return reduce("any", C.ANY, input, _logic_dims("any", input, dim), keepdim, _logic_dtype(input))
