"""``newch.linalg`` (``torch.linalg``): vector and matrix norms.

Example:
    >>> import newch
    >>> newch.linalg.vector_norm(newch.tensor([3.0, 4.0]))
    tensor(5.)
"""
from .ops.norms import linalg_norm as norm, matrix_norm, vector_norm

__all__ = ["norm", "vector_norm", "matrix_norm"]
