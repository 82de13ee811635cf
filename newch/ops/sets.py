"""``unique``: the distinct values (or rows along ``dim``), sorted, with inverse indices and counts."""
import numpy as np

from .alloc import check_tensor, data, norm_dim
from .creation import as_tensor

__all__ = ["unique"]
TENSOR_METHODS = ["unique"]   # also bound as Tensor methods (ops/methods.py)


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """Distinct elements of ``input`` in ascending order (also when ``sorted=False``).

    Args:
        return_inverse: also return, for each input element, the index of its value in the output.
        return_counts: also return how often each distinct value occurs.
        dim: take distinct slices along ``dim`` instead of elements.

    Example:
        >>> [t.tolist() for t in unique(newch.tensor([3, 1, 3, 2]), return_inverse=True,
        ...                             return_counts=True)]
        [[1, 2, 3], [2, 0, 2, 1], [1, 1, 2]]
    """
    check_tensor("unique", input)
    a = data(input, "unique")
    if dim is None:
        vals, inv, counts = np.unique(a.reshape(-1), return_inverse=True, return_counts=True)
        inv = inv.reshape(a.shape)
    else:
        d = norm_dim("unique", dim, a.ndim)
        zeros = [i for i, n in enumerate(a.shape) if n == 0]
        if len(zeros) > 1:
            raise RuntimeError("unique: number of zero sized dimensions is more than one, so "
                               "unique cannot be applied")
        if zeros and zeros[0] != d:
            raise RuntimeError("unique: there are 0 sized dimensions, and they aren't selected, "
                               "so unique cannot be applied")
        if zeros:
            vals, inv, counts = a, np.zeros(0, np.int64), np.zeros(0, np.int64)
        else:
            vals, inv, counts = np.unique(a, return_inverse=True, return_counts=True, axis=d)
            inv = inv.reshape(-1)
    out = [as_tensor(np.ascontiguousarray(vals).astype(a.dtype, copy=False))]
    if return_inverse:
        out.append(as_tensor(inv.astype(np.int64)))
    if return_counts:
        out.append(as_tensor(counts.astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)
