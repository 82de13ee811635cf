"""Products built on matmul: ``addmm`` (beta * input + alpha * mat1 @ mat2) and ``outer``."""
from .alloc import check_tensor
from .matrix import mm

__all__ = ["addmm", "ger", "outer"]
TENSOR_METHODS = ["addmm", "ger", "outer"]   # also bound as Tensor methods (ops/methods.py)


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat1 @ mat2)``; ``input`` broadcasts to the product's shape.

    With ``beta=0`` the values of ``input`` are ignored (NaN in it does not propagate).

    Example:
        >>> addmm(newch.ones(2, 2), newch.eye(2), newch.full((2, 2), 3.0), alpha=2).tolist()
        [[7.0, 7.0], [7.0, 7.0]]
    """
    for name, t in (("input", input), ("mat1", mat1), ("mat2", mat2)):
        check_tensor("addmm", t, name)
    if mat1.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"addmm: mat1 and mat2 must be matrices, got {mat1.ndim}-d and "
                           f"{mat2.ndim}-d tensors")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"addmm: mat1 and mat2 shapes cannot be multiplied "
                           f"({mat1.shape[0]}x{mat1.shape[1]} and {mat2.shape[0]}x{mat2.shape[1]})")
    prod = mm(mat1, mat2)
    if alpha != 1:
        prod = prod * alpha
    if not _broadcasts(tuple(input.shape), tuple(prod.shape)):
        raise RuntimeError(f"addmm: input of shape {tuple(input.shape)} does not broadcast to the "
                           f"product's shape {tuple(prod.shape)}")
    if beta == 0:
        return prod
    return prod + (input if beta == 1 else input * beta)


def _broadcasts(shape, to):
    if len(shape) > len(to):
        return False
    return all(s in (1, t) for s, t in zip(shape[::-1], to[::-1]))


def outer(input, vec2):
    """The outer product of two 1-d tensors: ``out[i, j] = input[i] * vec2[j]``.

    Example:
        >>> outer(newch.tensor([1, 2]), newch.tensor([3, 4, 5])).tolist()
        [[3, 4, 5], [6, 8, 10]]
    """
    check_tensor("outer", input)
    check_tensor("outer", vec2, "vec2")
    if input.ndim != 1 or vec2.ndim != 1:
        raise RuntimeError(f"outer: expected 1-D tensors, got {input.ndim}-D and {vec2.ndim}-D")
    return input.unsqueeze(1) * vec2.unsqueeze(0)


ger = outer
