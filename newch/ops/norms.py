"""Norms: ``linalg.vector_norm``, ``linalg.matrix_norm``, ``linalg.norm`` and ``torch.norm``.

Every norm is built from the deterministic reductions (``sum``, ``amax``,
``amin``: fixed-order block sums), so its value does not depend on the thread
count. ``vector_norm`` records one node with PyTorch's gradient (0 where the
norm is 0, ties of the inf norm share the gradient); ``matrix_norm`` composes
differentiable ops. Norms needing a singular value decomposition (``'nuc'``,
matrix ord 2 / -2) raise NotImplementedError.
"""
import math
from numbers import Real

from .. import dtypes as D
from ..graph import no_grad
from ..tensor import Tensor
from .alloc import check_tensor, norm_dims
from .arith import div, eq, logical_or, mul, ne, pow
from .creation import zeros, zeros_like
from .extrema import amax, amin
from .record import needs_grad, record
from .reduce import _expand_back, sum as _sum
from .conditional import isnan, where
from .unary import abs as _abs, sign, sqrt

__all__ = ["norm"]
TENSOR_METHODS = ["norm"]   # also bound as Tensor methods (ops/methods.py)


def _float_input(op, x, dtype):
    """``x`` checked to be floating point, cast to ``dtype`` when given (no narrowing)."""
    check_tensor(op, x)
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"{op}: Expected a floating point or complex tensor as input. "
                           f"Got {x.dtype}")
    if dtype is None:
        return x
    dt = D.from_any(dtype)
    if not dt.is_floating_point:
        raise RuntimeError(f"{op}: dtype should be floating point or complex, but got {dt}")
    if dt.itemsize < x.dtype.itemsize:
        raise RuntimeError(f"{op}: the dtype of the input ({x.dtype}) should be convertible "
                           f"without narrowing to the specified dtype ({dt})")
    return x.to(dt)


def _check_ord(op, ord):
    if isinstance(ord, bool) or not isinstance(ord, Real):
        raise TypeError(f"{op}: ord must be a number (2, 1, 0, inf, -inf, ...), got "
                        f"{type(ord).__name__} {ord!r}")
    return float(ord)


def _forward(x, p, dims, keepdim):
    """The p-norm of ``x`` over ``dims`` (no graph)."""
    if p == 2.0:
        return sqrt(_sum(mul(x, x), dims, keepdim))
    a = _abs(x)
    if p == 1.0:
        return _sum(a, dims, keepdim)
    if p == math.inf:
        return amax(a, dims, keepdim)
    if p == -math.inf:
        return amin(a, dims, keepdim)
    if p == 0.0:
        return _sum(ne(x, 0), dims, keepdim).to(x.dtype)
    return pow(_sum(pow(a, p), dims, keepdim), 1.0 / p)


def _backward(g, x, out, p, dims, keepdim):
    """d vector_norm / dx times ``g`` (PyTorch's subgradients at 0 and at ties)."""
    g = _expand_back(g, x.shape, dims, keepdim)
    n = _expand_back(out, x.shape, dims, keepdim)
    if p == 0.0:
        return zeros_like(x)
    if p == 1.0:
        return mul(sign(x), g)
    if p == 2.0:
        return mul(x, where(eq(n, 0), 0.0, div(g, n)))
    if math.isinf(p):
        a = _abs(x)
        hit = logical_or(eq(a, n), isnan(a))
        share = div(g, _sum(hit, dims, keepdim=True).to(x.dtype))
        return mul(sign(x), mul(share, hit.to(x.dtype)))
    a = _abs(x)
    if p < 1.0:
        scale = where(eq(x, 0), 0.0, mul(sign(x), pow(a, p - 1.0)))
        return mul(mul(scale, g), pow(n, 1.0 - p))
    scale = mul(sign(x), pow(a, p - 1.0)) if p < 2.0 else mul(x, pow(a, p - 2.0))
    return mul(scale, where(eq(n, 0), 0.0, div(g, pow(n, p - 1.0))))


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """The vector ``ord``-norm of ``x`` over ``dim`` (all elements by default).

    Args:
        x: a floating point tensor.
        ord: 2 (default), 1, 0 (count of non-zeros), inf (max |x|), -inf (min |x|) or any p.
        dim: int, tuple of ints, or None for all elements.
        keepdim: keep the reduced dims with size 1.
        dtype: compute in this (wider or equal) float dtype.

    Example:
        >>> newch.linalg.vector_norm(newch.tensor([3.0, -4.0]))
        tensor(5.)
    """
    op = "linalg.vector_norm"
    p = _check_ord(op, ord)
    x = _float_input(op, x, dtype)
    dims = norm_dims(op, dim, x.ndim)
    if (p < 0 or math.isinf(p)) and any(x.shape[d] == 0 for d in dims):
        shown = "inf" if p == math.inf else "-inf" if p == -math.inf else f"{ord}"
        raise RuntimeError(f"{op} cannot compute the {shown} norm on an empty tensor because "
                           f"the operation does not have an identity")
    with no_grad():
        out = _forward(x, p, dims, keepdim)
    if needs_grad(x):
        record(out, "LinalgVectorNormBackward0", (x,),
               lambda g, xs, os: (_backward(g, xs, os, p, dims, keepdim),), saved=[x, out])
    return out


def _matrix_dims(op, A, dim):
    if A.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor A must have at least 2 dimensions.")
    if not isinstance(dim, (tuple, list)) or len(dim) != 2:
        shown = " ".join(str(d) for d in dim) if isinstance(dim, (tuple, list)) else dim
        raise RuntimeError(f"{op}: dim must be a 2-tuple. Got {shown}")
    d0, d1 = norm_dims(op, dim[0], A.ndim)[0], norm_dims(op, dim[1], A.ndim)[0]
    if d0 == d1:
        raise RuntimeError(f"{op}: dims must be different. Got ({dim[0]}, {dim[1]})")
    return d0, d1


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """The matrix norm of ``A`` (batched over the other dims) over the two dims ``dim``.

    Args:
        A: a floating point tensor with at least 2 dims.
        ord: 'fro' (default, Frobenius), 1 / -1 (max / min absolute column sum),
            inf / -inf (max / min absolute row sum). 'nuc', 2 and -2 need a singular
            value decomposition and raise NotImplementedError.
        dim: the two dims holding the matrices. keepdim: keep them with size 1.
        dtype: compute in this float dtype.

    Example:
        >>> newch.linalg.matrix_norm(newch.tensor([[1.0, -2.0], [3.0, 4.0]]), ord=1)
        tensor(6.)
    """
    op = "linalg.matrix_norm"
    A = _float_input(op, A, dtype)
    d0, d1 = _matrix_dims(op, A, dim)
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim)
    if ord == "nuc" or (isinstance(ord, Real) and not isinstance(ord, bool) and ord in (2, -2)):
        raise NotImplementedError(f"{op}: ord={ord!r} needs a singular value decomposition, "
                                  f"which newch does not have; use 'fro', 1, -1, inf or -inf")
    if isinstance(ord, bool) or not isinstance(ord, Real) or ord not in (1, -1, math.inf,
                                                                          -math.inf):
        raise RuntimeError(f"{op}: Order {ord} not supported.")
    summed, reduced = (d0, d1) if abs(ord) == 1 else (d1, d0)
    pick = amax if ord > 0 else amin
    sums = _sum(_abs(A), summed, keepdim=True)
    if A.shape[reduced] == 0 and ord < 0:
        raise IndexError(f"{op}: ord={ord} takes the minimum over dim {reduced}, which has size "
                         f"0 (the minimum of nothing is undefined)")
    if A.shape[reduced] == 0:      # PyTorch: 0 for no rows / columns, not part of the graph
        out = zeros(tuple(1 if i == reduced else n for i, n in enumerate(sums.shape)),
                    dtype=A.dtype)
    else:
        out = pick(sums, reduced, keepdim=True)
    if not keepdim:
        out = out.reshape(tuple(n for i, n in enumerate(out.shape) if i not in (d0, d1)))
    return out


def linalg_norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """``torch.linalg.norm``: a vector norm or a matrix norm depending on ``dim`` and ``ord``.

    ord None: the 2-norm of the flattened tensor (dim None), of vectors along an int
    ``dim``, or the Frobenius norm over a 2-tuple ``dim``. With ``ord`` and no ``dim``,
    ``A`` must be 1-D (vector norm) or 2-D (matrix norm).

    Example:
        >>> newch.linalg.norm(newch.ones(2, 2))
        tensor(2.)
    """
    op = "linalg.norm"
    if dim is not None and not isinstance(dim, (tuple, list)):
        dim = (dim,)
    if ord is None:
        if dim is not None and len(dim) == 2:
            return matrix_norm(A, "fro", dim, keepdim, dtype=dtype)
        return vector_norm(A, 2, dim, keepdim, dtype=dtype)
    check_tensor(op, A)
    if dim is None:
        if A.ndim not in (1, 2):
            raise RuntimeError(f"{op}: If dim is not specified but ord is, the input must be 1D "
                               f"or 2D. Got {A.ndim}D.")
        dim = tuple(range(A.ndim))
    if len(dim) == 1 and not isinstance(ord, str):
        return vector_norm(A, ord, dim, keepdim, dtype=dtype)
    return matrix_norm(A, ord, dim, keepdim, dtype=dtype)


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """``torch.norm`` / ``Tensor.norm``: the Frobenius or vector ``p``-norm of ``input``.

    Args:
        input: a floating point tensor.
        p: 'fro' (default: the 2-norm of all elements, or over ``dim``), a number
            (vector p-norm over ``dim``, all elements when None), 'nuc' (not supported).
        dim: int or tuple of ints, or None. keepdim: keep reduced dims.
        dtype: compute in this float dtype.

    Example:
        >>> newch.tensor([[3.0, 4.0], [0.0, 0.0]]).norm()
        tensor(5.)
        >>> newch.norm(newch.tensor([1.0, -2.0]), p=1)
        tensor(3.)
    """
    if isinstance(dim, int):
        dim = (dim,)
    if p is None:
        p = 2
    if isinstance(p, str):
        if p == "fro" and (dim is None or len(dim) <= 2):
            return vector_norm(input, 2, dim, keepdim, dtype=dtype)
        if dim is not None and len(dim) != 2:
            raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                               f"{' '.join(str(d) for d in dim)}")
        if dim is None and isinstance(input, Tensor) and input.ndim != 2 and p == "nuc":
            raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                               f"{' '.join(str(d) for d in range(input.ndim))}")
        return matrix_norm(input, p, (-2, -1) if dim is None else dim, keepdim, dtype=dtype)
    return vector_norm(input, p, dim, keepdim, dtype=dtype)
