"""Rearranging ops built on index_select / masked_fill: flip, roll, tril, triu, repeat, tile,
repeat_interleave. Gradients come from the ops they are made of."""
import numpy as np

from .. import dtypes as D
from ..tensor import Tensor
from .alloc import check_tensor, data, norm_dim
from .creation import tensor
from .indexing import index_select
from .conditional import masked_fill

__all__ = ["flip", "repeat", "repeat_interleave", "roll", "tile", "tril", "triu"]
# also bound as Tensor methods (ops/methods.py):
TENSOR_METHODS = ["flip", "repeat", "repeat_interleave", "roll", "tile", "tril", "triu"]


def _long(a):
    return tensor(np.ascontiguousarray(a, dtype=np.int64), dtype=D.int64)


def _int_list(op, name, v):
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return [int(v)]
    if isinstance(v, (list, tuple)) and all(isinstance(s, (int, np.integer)) and not isinstance(s, bool)
                                            for s in v):
        return [int(s) for s in v]
    raise TypeError(f"{op}: {name} must be an int or a sequence of ints, got {v!r}")


def flip(input, dims):
    """``input`` with the order of entries reversed along each of ``dims``.

    Example:
        >>> flip(newch.tensor([[1, 2], [3, 4]]), [1]).tolist()
        [[2, 1], [4, 3]]
    """
    check_tensor("flip", input)
    ds = [norm_dim("flip", d, input.ndim) for d in _int_list("flip", "dims", dims)]
    if len(set(ds)) != len(ds):
        raise RuntimeError(f"flip: dims {tuple(dims)} names a dim more than once")
    out = input
    for d in ds:
        if input.ndim:
            out = index_select(out, d, _long(np.arange(input.shape[d] - 1, -1, -1)))
    return out if out is not input else input.clone()


def roll(input, shifts, dims=None):
    """``input`` rotated by ``shifts`` along ``dims`` (entries leaving one end enter at the other);
    with ``dims=None`` the flattened tensor is rolled and its shape restored.

    Example:
        >>> roll(newch.tensor([1, 2, 3, 4]), 1).tolist()
        [4, 1, 2, 3]
    """
    check_tensor("roll", input)
    sh = _int_list("roll", "shifts", shifts)
    if dims is None:
        if len(sh) != 1:
            raise RuntimeError(f"roll: with dims=None, shifts must be one int, got {shifts!r}")
        return roll(input.flatten(), sh, 0).reshape(input.shape)
    ds = [norm_dim("roll", d, input.ndim) for d in _int_list("roll", "dims", dims)]
    if len(ds) != len(sh):
        raise RuntimeError(f"roll: shifts and dims must have the same length, got {len(sh)} and "
                           f"{len(ds)}")
    out = input
    for s, d in zip(sh, ds):
        n = input.shape[d] if input.ndim else 1
        if n:
            out = index_select(out, d, _long((np.arange(n) - s) % n))
    return out if out is not input else input.clone()


def _triangle(op, input, diagonal, keep_lower):
    check_tensor(op, input)
    if input.ndim < 2:
        raise RuntimeError(f"{op}: input tensor must have at least 2 dimensions, got {input.ndim}")
    if not isinstance(diagonal, (int, np.integer)) or isinstance(diagonal, bool):
        raise TypeError(f"{op}: diagonal must be an int, got {type(diagonal).__name__}")
    h, w = input.shape[-2:]
    ones = np.ones((h, w), dtype=bool)
    keep = np.tril(ones, int(diagonal)) if keep_lower else np.triu(ones, int(diagonal))
    return masked_fill(input, tensor(~keep, dtype=D.bool_), 0)


def tril(input, diagonal=0):
    """The lower triangle of the last two dims (entries above diagonal ``diagonal`` set to 0).

    Example:
        >>> tril(newch.ones(2, 2)).tolist()
        [[1.0, 0.0], [1.0, 1.0]]
    """
    return _triangle("tril", input, diagonal, True)


def triu(input, diagonal=0):
    """The upper triangle of the last two dims (entries below diagonal ``diagonal`` set to 0).

    Example:
        >>> triu(newch.ones(2, 2)).tolist()
        [[1.0, 1.0], [0.0, 1.0]]
    """
    return _triangle("triu", input, diagonal, False)


def _sizes(op, sizes):
    if len(sizes) == 1 and isinstance(sizes[0], (list, tuple)):
        sizes = tuple(sizes[0])
    if len(sizes) == 1 and isinstance(sizes[0], Tensor):
        sizes = tuple(int(v) for v in sizes[0].tolist())
    out = _int_list(op, "sizes", list(sizes))
    if any(s < 0 for s in out):
        raise RuntimeError(f"{op}: repeats must be >= 0, got {tuple(out)}")
    return out


def repeat(input, *sizes):
    """``input`` tiled ``sizes[i]`` times along each dim (Tensor.repeat); extra leading sizes add dims.

    Example:
        >>> newch.tensor([1, 2]).repeat(2).tolist()
        [1, 2, 1, 2]
    """
    check_tensor("repeat", input)
    if not sizes:
        raise TypeError("repeat: missing the repeat counts (x.repeat(2, 1) or x.repeat((2, 1)))")
    reps = _sizes("repeat", sizes)
    if len(reps) < input.ndim:
        raise RuntimeError(f"repeat: number of repeat dims ({len(reps)}) can not be smaller than the "
                           f"number of dims of the tensor ({input.ndim})")
    shape = [1] * (len(reps) - input.ndim) + list(input.shape)
    x = input.reshape(shape)
    inter, big, final = [], [], []
    for r, s in zip(reps, shape):
        inter += [1, s]
        big += [r, s]
        final.append(r * s)
    return x.reshape(inter).expand(big).reshape(final)


def tile(input, dims):
    """``input`` repeated ``dims[i]`` times along each dim; a short ``dims`` is padded with 1s in front.

    Example:
        >>> tile(newch.tensor([[1, 2]]), (2,)).tolist()
        [[1, 2, 1, 2]]
    """
    check_tensor("tile", input)
    reps = _int_list("tile", "dims", dims)
    reps = [1] * (input.ndim - len(reps)) + reps
    return repeat(input, reps)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Each entry of ``input`` repeated ``repeats`` times (an int, or one count per entry) along
    ``dim`` (the flattened tensor when None). ``repeat_interleave(counts)`` alone gives the indices.

    Example:
        >>> repeat_interleave(newch.tensor([1, 2]), 2).tolist()
        [1, 1, 2, 2]
    """
    check_tensor("repeat_interleave", input)
    if repeats is None:
        if input.ndim > 1 or input.dtype not in (D.int64, D.int32):
            raise RuntimeError("repeat_interleave: the single-argument form takes a 1-D long tensor "
                               "of counts")
        counts = data(input, "repeat_interleave").reshape(-1)
        if (counts < 0).any():
            raise RuntimeError("repeat_interleave: repeats can not be negative")
        return _long(np.repeat(np.arange(counts.shape[0]), counts))
    x = input.flatten() if dim is None else input
    d = 0 if dim is None else norm_dim("repeat_interleave", dim, input.ndim)
    if x.ndim == 0:
        x = x.reshape(1)
    n = x.shape[d]
    if isinstance(repeats, Tensor):
        if repeats.dtype not in (D.int64, D.int32) or repeats.ndim > 1:
            raise RuntimeError(f"repeat_interleave: repeats must be an int or a 0-d/1-d long tensor, "
                               f"got {repeats.dtype} of shape {tuple(repeats.shape)}")
        r = data(repeats, "repeat_interleave").reshape(-1)
        if r.shape[0] == 1:
            r = np.full(n, r[0])
        elif r.shape[0] != n:
            raise RuntimeError(f"repeat_interleave: repeats must have the same size as input along "
                               f"dim ({n}), got {r.shape[0]}")
    else:
        r = np.full(n, _int_list("repeat_interleave", "repeats", repeats)[0])
    if (r < 0).any():
        raise RuntimeError("repeat_interleave: repeats can not be negative")
    return index_select(x, d, _long(np.repeat(np.arange(n), r)))
