"""Creating tensors: tensor, from_numpy, zeros, ones, full, empty, arange, linspace, eye, *_like."""
import math

import numpy as np

from .. import dtypes as D
from ..context import default_context
from ..device import check_device
from ..errors import IntegerOverflow
from ..tensor import Tensor
from .alloc import data, empty as _empty, is_scalar, kernels, norm_shape
from .convert import own
from .launch import as_array, check_fits, copy_into

__all__ = [
    "arange", "as_tensor", "empty", "empty_like", "eye", "from_numpy", "full", "full_like",
    "linspace", "ones", "ones_like", "scalar_tensor", "tensor", "zeros", "zeros_like"
]
TENSOR_METHODS = []   # also bound as Tensor methods (ops/methods.py)


def _infer_dtype(obj):
    """The dtype ``tensor(obj)`` gets: numpy arrays keep theirs, Python data follows torch."""
    if isinstance(obj, (np.ndarray, np.generic)):
        return _numpy_dtype("tensor", obj.dtype)
    try:
        arr = np.asarray(obj)
    except ValueError as e:
        raise ValueError(f"tensor: data must be a regular nested sequence of numbers: {e}") from None
    if arr.dtype.kind == "b":
        return D.bool_
    if arr.dtype.kind in "iu":
        return D.int64
    if arr.dtype.kind == "f":
        return D.get_default_dtype()
    if arr.dtype.kind == "O":
        big = [v for v in arr.reshape(-1).tolist() if isinstance(v, int) and not isinstance(v, bool)]
        if big and all(isinstance(v, (int, float)) for v in arr.reshape(-1).tolist()):
            v = max(big, key=abs)
            raise IntegerOverflow(f"tensor: value {v} cannot be converted to type int64 "
                                  "without overflow")
    raise TypeError(f"tensor: could not infer a dtype from {type(obj).__name__} "
                    f"(numpy made it {arr.dtype})")


def _numpy_dtype(op, npd):
    """The newch dtype of numpy dtype ``npd``, or TypeError naming ``op``."""
    try:
        return D.from_numpy_dtype(npd)
    except TypeError as e:
        raise TypeError(f"{op}: {e}") from None


def _from_data(op, obj, dtype):
    if isinstance(obj, Tensor):
        a = data(obj, op)
        dt = D.from_any(dtype) if dtype is not None else obj.dtype
        out = _empty(a.shape, dt)
        copy_into(a, out._a)
        return out
    if isinstance(obj, (list, tuple)) and any(isinstance(x, Tensor) for x in _flat(obj)):
        obj = [x.tolist() if isinstance(x, Tensor) else x for x in obj]
    dt = D.from_any(dtype) if dtype is not None else _infer_dtype(obj)
    try:
        arr = np.asarray(obj)
    except ValueError as e:
        raise ValueError(f"{op}: data must be a regular nested sequence of numbers: {e}") from None
    if arr.dtype == object or arr.dtype.kind in "USV":
        raise TypeError(f"{op}: could not convert {type(obj).__name__} with elements of type "
                        f"{arr.dtype} to a tensor")
    if not isinstance(obj, (np.ndarray, np.generic)):
        check_fits(op, arr, dt)
    out = _empty(arr.shape, dt)
    if arr.size:
        out._a[...] = arr
    return out


def _flat(seq):
    for x in seq:
        if isinstance(x, (list, tuple)):
            yield from _flat(x)
        else:
            yield x


def tensor(data, *, dtype=None, device=None, requires_grad=False):
    """A new tensor holding a copy of ``data`` (nested lists, numbers or a numpy array).

    Example: ``newch.tensor([[1., 2.], [3., 4.]])``
    """
    _check_device("tensor", device)
    out = _from_data("tensor", data, dtype)
    if requires_grad:
        out.requires_grad_(True)
    return out


def as_tensor(data, dtype=None, device=None):
    """``data`` itself if it is already a tensor of ``dtype``, otherwise ``tensor(data)``."""
    _check_device("as_tensor", device)
    if isinstance(data, Tensor) and (dtype is None or D.from_any(dtype) is data.dtype):
        return own(data)
    if isinstance(data, np.ndarray) and (dtype is None or D.from_any(dtype).np == data.dtype):
        return from_numpy(data)
    return tensor(data, dtype=dtype)


def from_numpy(ndarray):
    """A persistent tensor sharing ``ndarray``'s memory (changes show on both sides)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"from_numpy: expected np.ndarray, got {type(ndarray).__name__}")
    _numpy_dtype("from_numpy", ndarray.dtype)
    if not ndarray.dtype.isnative:
        raise TypeError("from_numpy: arrays in non-native byte order are not supported")
    st = default_context().pool.adopt(ndarray)
    return Tensor._make(ndarray, st)


def scalar_tensor(value, dtype=None):
    """A 0-dim tensor holding ``value`` (of the default float dtype unless ``dtype`` says otherwise)."""
    return tensor(value, dtype=dtype or D.get_default_dtype())


def _check_device(op, device):
    check_device(op, device)


def _filled(op, size, value, dtype, requires_grad, device=None):
    _check_device(op, device)
    shape = norm_shape(op, size)
    dt = D.from_any(dtype) if dtype is not None else (
        D.scalar_dtype(value) if op == "full" else D.get_default_dtype())
    if op == "full":
        check_fits(op, value, dt)
    out = _empty(shape, dt)
    if value is not None and out._a.size:
        # NOTE: a fresh contiguous tensor: the fill kernel straight away (not the checked
        # in-place op fill_, which would also bump the version: PyTorch's factories leave 0)
        kernels().fill_nd(out._a.reshape((1, 1, 1, -1)), as_array(value, dt, op)[0])
    if requires_grad:
        out.requires_grad_(True)
    return out


def zeros(*size, dtype=None, device=None, requires_grad=False):
    """A tensor of zeros of shape ``size``."""
    return _filled("zeros", size, 0, dtype, requires_grad, device)


def ones(*size, dtype=None, device=None, requires_grad=False):
    """A tensor of ones of shape ``size``."""
    return _filled("ones", size, 1, dtype, requires_grad, device)


def empty(*size, dtype=None, device=None, requires_grad=False):
    """An uninitialised tensor of shape ``size`` (its values are whatever the memory held)."""
    return _filled("empty", size, None, dtype, requires_grad, device)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False):
    """A tensor of shape ``size`` filled with ``fill_value``."""
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    if not is_scalar(fill_value):
        raise TypeError(f"full: fill_value must be a number, got {type(fill_value).__name__}")
    size = tuple(size) if isinstance(size, (list, tuple)) else (size,)
    return _filled("full", size, fill_value, dtype, requires_grad, device)


def _like(fn):
    def like(input, *, dtype=None, device=None, requires_grad=False):
        return fn(tuple(input.shape), dtype=dtype or input.dtype, device=device,
                  requires_grad=requires_grad)
    like.__name__ = fn.__name__ + "_like"
    like.__doc__ = f"``{fn.__name__}`` with the shape (and by default the dtype) of ``input``."
    return like


zeros_like, ones_like, empty_like = _like(zeros), _like(ones), _like(empty)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False):
    """``full`` with the shape (and by default the dtype) of ``input``."""
    return full(tuple(input.shape), fill_value, dtype=dtype or input.dtype, device=device,
                requires_grad=requires_grad)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    """Values from ``start`` (default 0) up to but not including ``end``, ``step`` apart."""
    _check_device("arange", device)
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    for v in vals:
        if not is_scalar(v):
            raise TypeError(f"arange: start, end and step must be numbers, got {type(v).__name__}")
    start, end, step = vals
    if dtype is None:
        dtype = D.int64 if all(isinstance(v, (int, np.integer)) for v in vals) else D.get_default_dtype()
    dt = D.from_any(dtype)
    if step == 0 or (not dt.is_floating_point and int(step) == 0):
        raise ValueError(f"arange: step must be nonzero (got {step} for {dt})")
    if (end - start) * step < 0:
        raise ValueError(f"arange: upper bound and step sign are inconsistent "
                         f"(start={start}, end={end}, step={step})")
    n = max(0, math.ceil((end - start) / step))
    if not dt.is_floating_point:
        # NOTE: as PyTorch: an integer dtype truncates start and step (int64 its end too, and then
        # counts the values from the truncated bounds)
        start, step = int(start), int(step)
        if dt is D.int64:
            n = max(0, math.ceil((int(end) - start) / step))
    out = _empty((n,), dt)
    if n:
        wide = np.float64 if dt.is_floating_point else np.int64
        out._a[...] = start + np.arange(n, dtype=wide) * step
    if requires_grad:
        out.requires_grad_(True)
    return out


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False):
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    _check_device("linspace", device)
    if not isinstance(steps, (int, np.integer)) or steps < 0:
        raise ValueError(f"linspace: steps must be a non-negative int, got {steps!r}")
    dt = D.from_any(dtype) if dtype is not None else D.get_default_dtype()
    out = _empty((int(steps),), dt)
    if steps:
        out._a[...] = np.linspace(start, end, int(steps))
    if requires_grad:
        out.requires_grad_(True)
    return out


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    """An ``n`` x ``m`` matrix with ones on the diagonal."""
    m = n if m is None else m
    for v in (n, m):
        if not isinstance(v, (int, np.integer)) or v < 0:
            raise ValueError(f"eye: sizes must be non-negative ints, got {v!r}")
    out = zeros(n, m, dtype=dtype, device=device)
    k = min(n, m)
    if k:
        out._a[np.arange(k), np.arange(k)] = 1
    if requires_grad:
        out.requires_grad_(True)
    return out
