"""``diag``: a vector's diagonal matrix, or a matrix's diagonal, with gradients through indexing."""
from .. import dtypes as D
from .alloc import check_tensor
from .creation import arange, zeros

__all__ = ["diag"]
TENSOR_METHODS = ["diag"]   # also bound as Tensor methods (ops/methods.py)


def _offsets(n, k):
    rows = arange(n, dtype=D.int64)
    return (rows, rows + k) if k >= 0 else (rows - k, rows)


def diag(input, diagonal=0):
    """1-d ``input``: the square matrix with it on diagonal ``diagonal``; 2-d: that diagonal.

    Example:
        >>> diag(newch.tensor([1.0, 2.0])).tolist()
        [[1.0, 0.0], [0.0, 2.0]]
        >>> diag(newch.arange(9.0).reshape(3, 3), -1).tolist()
        [3.0, 7.0]
    """
    check_tensor("diag", input)
    if not isinstance(diagonal, int) or isinstance(diagonal, bool):
        raise TypeError(f"diag: diagonal must be an int, got {type(diagonal).__name__}")
    k = diagonal
    if input.ndim == 1:
        n = input.shape[0]
        size = n + abs(k)
        out = zeros(size, size, dtype=input.dtype)
        rows, cols = _offsets(n, k)
        out[rows, cols] = input
        return out
    if input.ndim == 2:
        h, w = input.shape
        n = max(0, min(h, w - k) if k >= 0 else min(h + k, w))
        rows, cols = _offsets(n, k)
        return input[rows, cols]
    raise RuntimeError(f"diag: expected a 1-D or 2-D tensor, got a {input.ndim}-D tensor")
