"""Normalisation ops with fused kernels: batch_norm (per channel) and layer_norm (per row).

Both call the kernels of ``kernels/norm.py`` and record one node whose
backward is one more kernel call. They save the input, the parameters and
their own float64 statistics (mean and variance, or mean and 1/std): small
(C,) or (M,) temporaries, never the normalised output. Running statistics of
batch norm are updated in place (their version changes, as in PyTorch).
"""
import math

from .. import dtypes as D
from ..tensor import Tensor
from .alloc import data, empty, kernels, need_float
from .launch import copy_into
from .record import needs_grad, pack, record
from .convert import contiguous
from .shape import reshape


def _param(op, t, n, name, x):
    """(kernel array, the tensor holding it) for parameter ``t``: an (n,) array of x's dtype,
    or an empty one when ``t`` is None. Keep the tensor while the array is in use: a
    temporary's bytes go back to the arena when its last reference goes.
    """
    if t is None:
        e = empty((0,), x.dtype)
        return e._a, e
    if not isinstance(t, Tensor):
        raise TypeError(f"{op}: {name} must be a Tensor or None, got {type(t).__name__}")
    if t.numel() != n:
        raise RuntimeError(f"{op}: {name} should contain {n} elements, got {t.numel()} "
                           f"(shape {tuple(t.shape)})")
    need_float(op, t)
    c = contiguous(t.detach() if t.dtype is x.dtype else t.detach().to(x.dtype))
    return data(c, op).reshape(n), c


def _dtype_of(t):
    """(dtype, shape) of a parameter that needs a gradient, else None: what its gradient needs
    (the backward closure keeps this, never the parameter itself)."""
    if t is None or not t.requires_grad:
        return None
    return t.dtype, tuple(t.shape)


def _grad_to(g64, spec):
    """A float64 (n,) parameter gradient in the parameter's dtype and shape (None if none needed)."""
    if g64 is None or spec is None:
        return None
    return g64.to(spec[0]).reshape(spec[1])


def _stats64(t, n, op):
    """A float64 (n,) copy of running statistic ``t``."""
    out = empty((n,), D.float64)
    copy_into(data(t, op).reshape(n), out._a)
    return out


def _check_running(op, t, n, name):
    if t is None:
        return
    if not isinstance(t, Tensor):
        raise TypeError(f"{op}: {name} must be a Tensor or None, got {type(t).__name__}")
    if t.numel() != n:
        raise RuntimeError(f"{op}: {name} should contain {n} elements, got {t.numel()}")


def _running(op, running_mean, running_var, C, x, update):
    """(mean array, var array, keep-alive) for the kernel to update in place: the running
    statistics themselves when they are contiguous and of x's dtype, else scratch copies
    (written back by ``_write_back``); empty arrays when nothing is to be updated.
    """
    if not update or running_mean is None or running_var is None:
        e = empty((0,), x.dtype)
        return e._a, e._a, None
    pair = []
    for t in (running_mean, running_var):
        a = data(t, op)
        if t.dtype is x.dtype and a.flags.c_contiguous:
            pair.append((t, None))
        else:
            tmp = empty((C,), x.dtype)
            copy_into(a.reshape(C), tmp._a)
            pair.append((t, tmp))
    arrays = [data(tmp if tmp is not None else t, op).reshape(C) for t, tmp in pair]
    return arrays[0], arrays[1], pair


def _write_back(keep, running_mean, running_var):
    """Copy scratch running statistics back and bump the versions (they changed in place)."""
    if keep is None:
        return
    for t, tmp in keep:
        if tmp is not None:
            copy_into(data(tmp, "batch_norm"), data(t, "batch_norm").reshape(tmp._a.shape))
        t._s.version += 1


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """Normalise each channel (dim 1) of ``input`` (N, C, ...) over the batch and spatial dims.

    Training mode uses the batch's mean and biased variance and, when given,
    updates ``running_mean`` / ``running_var`` in place with ``momentum`` (the
    variance stored is the unbiased one). Evaluation mode uses the running ones.

    Example:
        >>> x = newch.tensor([[1.0], [3.0]])
        >>> [round(v, 3) for v in batch_norm(x, None, None, training=True).flatten().tolist()]
        [-1.0, 1.0]
    """
    op = "batch_norm"
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(input).__name__}")
    need_float(op, input)
    if input.ndim < 2:
        raise ValueError(f"{op}: expected an input of shape (N, C, ...), got shape "
                         f"{tuple(input.shape)}")
    shape = tuple(input.shape)
    N, C = shape[0], shape[1]
    L = math.prod(shape[2:])
    _check_running(op, running_mean, C, "running_mean")
    _check_running(op, running_var, C, "running_var")
    if training and N * L == 1:
        raise ValueError(f"{op}: expected more than 1 value per channel when training, got input "
                         f"size {shape}")
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError(f"{op}: running_mean and running_var must be given in evaluation mode "
                           f"(training=False)")
    x3 = reshape(contiguous(input), (N, C, L))
    xa = data(x3, op)
    w, wkeep = _param(op, weight, C, "weight", input)
    b, bkeep = _param(op, bias, C, "bias", input)
    if training:
        mean, var = empty((C,), D.float64), empty((C,), D.float64)
    else:
        mean, var = _stats64(running_mean, C, op), _stats64(running_var, C, op)
    rm, rv, keep = _running(op, running_mean, running_var, C, input, training and xa.size > 0)
    out = empty((N, C, L), input.dtype)
    if xa.size:
        kernels().batch_norm_forward(xa, mean._a, var._a, float(eps), w, b, bool(training), rm, rv,
                                     float(momentum), out._a)
    _write_back(keep, running_mean, running_var)
    if needs_grad(input, weight, bias):
        want_x, dt = needs_grad(input), input.dtype

        saved, restore = pack(x3, weight, mean, var)
        w_dtype, b_dtype = _dtype_of(weight), _dtype_of(bias)

        def backward(g, *s):
            xs, ws, ms, vs = restore(*s)
            gc = contiguous(g)
            dx = empty((N, C, L) if want_x else (0, C, L), dt)
            dw, db = empty((C,), D.float64), empty((C,), D.float64)
            wk, wkeep = _param(op, ws, C, "weight", xs)
            if gc.numel():
                kernels().batch_norm_backward(data(xs, op), data(gc, op), data(ms, op),
                                              data(vs, op), float(eps), wk, bool(training), dx._a,
                                              dw._a, db._a)
            else:
                dw._a[...] = 0.0
                db._a[...] = 0.0
            return (dx if want_x else None), _grad_to(dw, w_dtype), _grad_to(db, b_dtype)
        record(out, "NativeBatchNormBackward0", (x3, weight, bias), backward, saved)
    return reshape(out, shape)


def _layer_norm_rows(op, x2, weight, bias, eps):
    """The normalisation of each row of the (M, K) tensor ``x2`` (a newch graph node)."""
    M, K = tuple(x2.shape)
    xa = data(x2, op)
    w, wkeep = _param(op, weight, K, "weight", x2)
    b, bkeep = _param(op, bias, K, "bias", x2)
    mean, rstd = empty((M,), D.float64), empty((M,), D.float64)
    out = empty((M, K), x2.dtype)
    if xa.size:
        kernels().layer_norm_rows(xa, w, b, float(eps), out._a, mean._a, rstd._a)
    if needs_grad(x2, weight, bias):
        want_x = needs_grad(x2)
        want_p = needs_grad(weight, bias)

        saved, restore = pack(x2, weight, mean, rstd)
        w_dtype, b_dtype = _dtype_of(weight), _dtype_of(bias)

        def backward(g, *s):
            x2s, ws, ms, rs = restore(*s)
            gc = contiguous(g)
            xs, gs = data(x2s, op), data(gc, op)
            dx = dw = db = None
            if want_x:
                dx = empty((M, K), x2s.dtype)
                wk, wkeep = _param(op, ws, K, "weight", x2s)
                if dx._a.size:
                    kernels().layer_norm_backward(xs, gs, data(ms, op), data(rs, op), wk, dx._a)
            if want_p:
                dw, db = empty((K,), D.float64), empty((K,), D.float64)
                if xs.size:
                    kernels().layer_norm_param_grad(xs, gs, data(ms, op), data(rs, op),
                                                    dw._a, db._a)
                else:
                    dw._a[...] = 0.0
                    db._a[...] = 0.0
            return dx, _grad_to(dw, w_dtype), _grad_to(db, b_dtype)
        record(out, "NativeLayerNormBackward0", (x2, weight, bias), backward, saved)
    return out


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalise over the last ``len(normalized_shape)`` dims, then scale by weight, add bias.

    Example:
        >>> y = layer_norm(newch.tensor([[1.0, 3.0]]), (2,))
        >>> [round(v, 3) for v in y.flatten().tolist()]
        [-1.0, 1.0]
    """
    op = "layer_norm"
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(input).__name__}")
    need_float(op, input)
    ns = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(ns)
    shape = tuple(input.shape)
    if k == 0 or k > len(shape) or shape[len(shape) - k:] != ns:
        raise RuntimeError(f"{op}: given normalized_shape={list(ns)}, expected input with shape "
                           f"[*, {', '.join(map(str, ns))}], but got input of size {list(shape)}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != ns:
            raise RuntimeError(f"{op}: {name} of shape {tuple(t.shape)} does not match "
                               f"normalized_shape {ns}")
    K = math.prod(ns)
    x2 = reshape(contiguous(input), (math.prod(shape) // K if K else 0, K))
    w = reshape(weight, (K,)) if weight is not None else None
    b = reshape(bias, (K,)) if bias is not None else None
    return reshape(_layer_norm_rows(op, x2, w, b, eps), shape)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalise ``input`` (N, C, ...) over each group of C // num_groups channels (and all of
    their positions), then scale and shift each channel by weight and bias.

    Example:
        >>> y = group_norm(newch.tensor([[1.0, 3.0]]), 1)
        >>> [round(v, 3) for v in y.flatten().tolist()]
        [-1.0, 1.0]
    """
    op = "group_norm"
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(input).__name__}")
    need_float(op, input)
    shape = tuple(input.shape)
    if input.ndim < 2:
        raise RuntimeError(f"{op}: expected an input of shape (N, C, ...), got shape {shape}")
    N, C = shape[0], shape[1]
    if not isinstance(num_groups, int) or num_groups <= 0 or C % num_groups:
        raise RuntimeError(f"{op}: expected the number of channels ({C}) to be divisible by "
                           f"num_groups ({num_groups})")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (not isinstance(t, Tensor) or t.numel() != C):
            raise RuntimeError(f"{op}: expected {name} to be a tensor of {C} elements, got "
                               f"{getattr(t, 'shape', type(t).__name__)}")
    if N * C // num_groups * math.prod(shape[2:]) == 1:
        raise ValueError(f"{op}: expected more than 1 value per group, got input size {shape} "
                         f"with {num_groups} groups")
    per = math.prod(shape) // (N * num_groups) if N else 0
    x2 = reshape(contiguous(input), (N * num_groups, per))
    y = reshape(_layer_norm_rows(op, x2, None, None, eps), shape)
    along = (1, C) + (1,) * (len(shape) - 2)
    if weight is not None:
        y = y * reshape(weight, along)
    if bias is not None:
        y = y + reshape(bias, along)
    return y
