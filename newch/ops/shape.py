"""Shape ops: views that share storage (reshape, view, permute, transpose, squeeze, expand, ...)."""
import numpy as np

from .. import dtypes as D
from .alloc import data, empty, norm_dim, view_of
from .layout import reshape_view
from .launch import copy_into
from .record import needs_grad, record, sum_to

__all__ = [
    "expand", "expand_as", "flatten", "movedim", "permute", "reshape", "reshape_as", "squeeze",
    "swapaxes", "swapdims", "t", "transpose", "unflatten", "unsqueeze", "view", "view_as"
]
# also bound as Tensor methods (ops/methods.py):
TENSOR_METHODS = [
    "expand", "expand_as", "flatten", "movedim", "permute", "reshape", "reshape_as", "squeeze",
    "swapaxes", "swapdims", "t", "transpose", "unflatten", "unsqueeze", "view", "view_as"
]


def _infer(op, shape, n):
    shape = list(shape)
    if shape.count(-1) > 1:
        raise ValueError(f"{op}: only one dimension can be -1, got {tuple(shape)}")
    if -1 in shape:
        known = int(np.prod([s for s in shape if s != -1]))
        i = shape.index(-1)
        if known == 0 or n % known:
            raise ValueError(f"{op}: shape {tuple(shape)} is invalid for input of size {n}")
        shape[i] = n // known
    if int(np.prod(shape)) != n:
        raise ValueError(f"{op}: shape {tuple(shape)} is invalid for input of size {n}")
    return tuple(shape)


def _shape_args(op, shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    for s in shape:
        if not isinstance(s, (int, np.integer)) or isinstance(s, bool) or s < -1:
            raise ValueError(f"{op}: invalid size {s!r} in shape {tuple(shape)}")
    return shape


def _view_grad(out, x, name):
    if needs_grad(x):
        shape = x.shape
        record(out, name, (x,), lambda g: (g.reshape(shape),))
    return out


def reshape(input, *shape):
    """The same data in ``shape`` (one size may be -1): a view when possible, else a copy."""
    a = data(input, "reshape")
    shape = _infer("reshape", _shape_args("reshape", shape), a.size)
    v = reshape_view(a, shape)
    if v is not None:
        out = view_of(input, v)
    else:
        out = empty(shape, input.dtype)
        copy_into(a.reshape(shape), out._a)
    return _view_grad(out, input, "ViewBackward0")


def view(input, *shape):
    """A view of the same data in ``shape``; ValueError if the strides do not allow one."""
    if len(shape) == 1 and isinstance(shape[0], D.dtype):
        raise TypeError("view: reinterpreting dtypes is not supported; use .to(dtype)")
    a = data(input, "view")
    shape = _infer("view", _shape_args("view", shape), a.size)
    arr = reshape_view(a, shape)
    if arr is None:
        raise ValueError(f"view: size {tuple(shape)} is not compatible with the input's shape "
                         f"{tuple(a.shape)} and strides; use .reshape() instead")
    return _view_grad(view_of(input, arr), input, "ViewBackward0")


def view_as(input, other):
    """``input.view(other.shape)``: a view sharing ``input``'s memory."""
    return view(input, tuple(other.shape))


def reshape_as(input, other):
    """``input.reshape(other.shape)``."""
    return reshape(input, tuple(other.shape))


def flatten(input, start_dim=0, end_dim=-1):
    """Merge dims ``start_dim``..``end_dim`` into one."""
    if input.ndim == 0:
        norm_dim("flatten", start_dim, 0), norm_dim("flatten", end_dim, 0)    # range checks only
        return reshape(input, 1)
    s = norm_dim("flatten", start_dim, input.ndim)
    e = norm_dim("flatten", end_dim, input.ndim)
    if s > e:
        raise ValueError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim}")
    shp = tuple(input.shape)
    return reshape(input, shp[:s] + (int(np.prod(shp[s:e + 1])),) + shp[e + 1:])


def unflatten(input, dim, sizes):
    """Split dim ``dim`` into ``sizes``."""
    d = norm_dim("unflatten", dim, input.ndim)
    shp = tuple(input.shape)
    if not len(sizes):
        raise ValueError("unflatten: sizes must be non-empty")
    sizes = _infer("unflatten", tuple(sizes), shp[d])
    return reshape(input, shp[:d] + sizes + shp[d + 1:])


def squeeze(input, dim=None):
    """Drop size-1 dims (all, or the given ones)."""
    shp = tuple(input.shape)
    if dim is None:
        dims = [i for i, n in enumerate(shp) if n == 1]
    else:
        dims = [norm_dim("squeeze", d, input.ndim) for d in (dim if isinstance(dim, (tuple, list)) else (dim,))]
        dims = [d for d in dims if input.ndim and shp[d] == 1]
    return reshape(input, tuple(n for i, n in enumerate(shp) if i not in dims))


def unsqueeze(input, dim):
    """Insert a size-1 dim at ``dim``."""
    d = norm_dim("unsqueeze", dim, input.ndim + 1)
    shp = tuple(input.shape)
    return reshape(input, shp[:d] + (1,) + shp[d:])


def permute(input, *dims):
    """Reorder the dims (a view)."""
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = tuple(dims[0])
    if len(dims) != input.ndim:
        raise ValueError(f"permute: expected {input.ndim} dims, got {dims}")
    dims = tuple(norm_dim("permute", d, input.ndim) for d in dims)
    if len(set(dims)) != len(dims):
        raise ValueError(f"permute: repeated dim in {dims}")
    out = view_of(input, data(input, "permute").transpose(dims))
    if needs_grad(input):
        inv = tuple(sorted(range(len(dims)), key=dims.__getitem__))   # the inverse permutation
        record(out, "PermuteBackward0", (input,), lambda g: (permute(g, inv),))
    return out


def transpose(input, dim0, dim1):
    """Swap two dims (a view)."""
    if input.ndim < 2 and dim0 in (0, -1) and dim1 in (0, -1):
        return _view_grad(view_of(input, data(input, "transpose")), input, "TransposeBackward0")
    d0 = norm_dim("transpose", dim0, input.ndim)
    d1 = norm_dim("transpose", dim1, input.ndim)
    perm = list(range(input.ndim))
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return permute(input, perm)


swapaxes = swapdims = transpose


def t(input):
    """Transpose a tensor of at most 2 dims."""
    if input.ndim > 2:
        raise ValueError(f"t: expects a tensor with <= 2 dims, got {input.ndim}; use transpose()")
    return transpose(input, 0, 1) if input.ndim == 2 else transpose(input, 0, 0)


def movedim(input, source, destination):
    """Move dim ``source`` to position ``destination``."""
    s = norm_dim("movedim", source, input.ndim)
    d = norm_dim("movedim", destination, input.ndim)
    order = [i for i in range(input.ndim) if i != s]
    order.insert(d, s)
    return permute(input, order if input.ndim else ())    # NOTE: a 0-d tensor moves to itself


def expand(input, *sizes):
    """Broadcast size-1 dims to ``sizes`` without copying (-1 keeps a size)."""
    sizes = _shape_args("expand", sizes)
    a = data(input, "expand")
    if len(sizes) < a.ndim:
        raise ValueError(f"expand: the number of sizes ({len(sizes)}) must be at least the "
                         f"number of dims ({a.ndim})")
    lead = len(sizes) - a.ndim
    shape = []
    for i, s in enumerate(sizes):
        own = a.shape[i - lead] if i >= lead else None
        if s == -1:
            if own is None:
                raise ValueError(f"expand: -1 is not allowed for a new leading dim, got {tuple(sizes)}")
            s = own
        if own is not None and own != s and own != 1:
            raise ValueError(f"expand: the expanded size {s} must match the existing size {own} "
                             f"at dim {i} (shape {tuple(a.shape)} to {tuple(sizes)})")
        shape.append(s)
    out = view_of(input, np.broadcast_to(a, tuple(shape)))
    if needs_grad(input):
        shp = input.shape
        record(out, "ExpandBackward0", (input,), lambda g: (sum_to(g, shp),))
    return out


def expand_as(input, other):
    """``input.expand(other.shape)``: a broadcast view, no copy."""
    return expand(input, tuple(other.shape))
