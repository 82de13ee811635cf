"""Broadcasting and the canonical 4-D views the "nd" kernels take.

Kernels see at most 4 dims: adjacent dims that every operand walks
contiguously are merged, size-1 dims dropped, and the rest padded to 4 with
leading size-1 dims. More than 4 merged dims (rare) are handled by looping
over the leading ones here.
"""
import itertools

import numpy as np
from numpy.lib.stride_tricks import as_strided

# NOTE: ``reshape(..., copy=False)`` (refuse to copy) exists from numpy 2.1 only; older numpy
# (1.24 is Debian bookworm's) raises TypeError on the keyword. Assigning ``.shape`` on a view
# never copies there and raises AttributeError when the strides forbid it.
_RESHAPE_HAS_COPY = tuple(int(p) for p in np.__version__.split(".")[:2]) >= (2, 1)


def reshape_view(a, shape):
    """``a`` seen in ``shape`` without copying, or None when its strides do not allow a view.

    Args:
        a: a numpy array; ``shape``: a tuple with the same number of elements.

    Example:
        >>> reshape_view(np.arange(6.), (2, 3)).shape
        (2, 3)
    """
    if _RESHAPE_HAS_COPY:
        try:
            return a.reshape(shape, copy=False)
        except ValueError:
            return None
    v = a.view()
    try:
        v.shape = shape
    except AttributeError:
        return None
    return v


_BROADCAST = {}         # shapes -> their broadcast shape (only shapes that broadcast)


def broadcast_shapes(op, *shapes):
    """The broadcast shape of ``shapes`` (PyTorch/numpy rules) or ValueError naming the dims."""
    hit = _BROADCAST.get(shapes)
    if hit is not None:
        return hit
    out = _broadcast(op, shapes)
    if len(_BROADCAST) >= _MERGED_MAX:
        _BROADCAST.clear()
    _BROADCAST[shapes] = out
    return out


def _broadcast(op, shapes):
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for i, n in enumerate(s):
            j = ndim - len(s) + i
            if n != 1:
                if out[j] not in (1, n):
                    raise ValueError(
                        f"{op}: shapes {' and '.join(str(tuple(x)) for x in shapes)} cannot be "
                        f"broadcast: size {out[j]} vs {n} at dim {j - ndim}")
                out[j] = n
    return tuple(out)


def expand_strides(a, shape):
    """Strides (bytes) of array ``a`` broadcast to ``shape`` (0 on broadcast dims)."""
    pad = len(shape) - a.ndim
    st = [0] * pad + list(a.strides)
    for i, n in enumerate(a.shape):
        if n == 1 and shape[pad + i] != 1:
            st[pad + i] = 0
    return st


def merged(shape, strides_list):
    """Merge dims that every operand walks contiguously; drop size-1 dims."""
    dims = [i for i, n in enumerate(shape) if n != 1]
    if not dims:
        return [1], [[0] for _ in strides_list]
    shp = [shape[dims[0]]]
    sts = [[s[dims[0]]] for s in strides_list]
    for i in dims[1:]:
        n = shape[i]
        if all(st[-1] == s[i] * n for st, s in zip(sts, strides_list)):
            shp[-1] *= n
            for st, s in zip(sts, strides_list):
                st[-1] = s[i]
        else:
            shp.append(n)
            for st, s in zip(sts, strides_list):
                st.append(s[i])
    return shp, sts


_MERGED = {}        # (shape, ((shape, strides) of each array)) -> merged (shape, strides)
_MERGED_MAX = 4096  # entries kept; the cache starts over beyond it


def nd_views(shape, arrays):
    """Yield tuples of 4-D views of ``arrays`` (each broadcast to ``shape``), covering it.

    Usually one tuple; several when more than 4 dims remain after merging. The merged
    layout depends only on the shapes and byte strides, and is cached on them.
    """
    key = (tuple(shape), tuple([(a.shape, a.strides) for a in arrays]))
    hit = _MERGED.get(key)
    if hit is None:
        shp, sts = merged(shape, [expand_strides(a, shape) for a in arrays])
        if len(shp) <= 4:
            pad = 4 - len(shp)
            shp, sts = [1] * pad + shp, [[0] * pad + st for st in sts]
        hit = (tuple(shp), [tuple(st) for st in sts])
        if len(_MERGED) >= _MERGED_MAX:
            _MERGED.clear()
        _MERGED[key] = hit
    shp, sts = hit
    if len(shp) == 4:
        yield tuple([_strided(a, shp, st) for a, st in zip(arrays, sts)])
        return
    full = [_strided(a, shp, st) for a, st in zip(arrays, sts)]
    for idx in itertools.product(*(range(n) for n in shp[:-4])):
        yield tuple(f[idx] for f in full)


def _strided(a, shape, strides):
    """A view of ``a``'s memory in ``shape`` / ``strides`` (bytes), starting at its first element."""
    if a.flags.c_contiguous and a.size:
        # NOTE: a contiguous array lends its buffer: one numpy call, ~8x cheaper than as_strided
        try:
            return np.ndarray(shape, a.dtype, a, 0, strides)
        except (TypeError, ValueError):
            pass
    return as_strided(a, shape, strides)
