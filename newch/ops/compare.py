"""Whole-tensor comparisons: ``isclose``, ``allclose``, ``equal``.

``isclose`` is elementwise ``|a - b| <= atol + rtol * |b|`` (infinities are close
only to the same infinity, NaN only to NaN when ``equal_nan``), made of the
elementwise ops, so it has their broadcasting, memory and determinism.
"""
from ..graph import no_grad
from ..tensor import Tensor
from .alloc import check_tensor, data

__all__ = ["allclose", "equal", "isclose"]
TENSOR_METHODS = ["allclose", "equal", "isclose"]   # also bound as Tensor methods (ops/methods.py)


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise: are ``input`` and ``other`` equal within ``atol + rtol * |other|``?

    Example:
        >>> isclose(newch.tensor([1.0, 2.0]), newch.tensor([1.0 + 1e-9, 2.1])).tolist()
        [True, False]
    """
    check_tensor("isclose", input)
    if not isinstance(other, Tensor):
        raise TypeError(f"isclose: other must be a Tensor, got {type(other).__name__}")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"isclose: expected both tensors to have the same dtype, got "
                           f"{input.dtype} and {other.dtype}")
    if rtol < 0 or atol < 0:
        raise ValueError(f"isclose: rtol and atol must be non-negative, got rtol={rtol}, atol={atol}")
    with no_grad():
        same = input == other
        if not input.dtype.is_floating_point:
            if rtol == 0 and atol == 0:
                return same
            diff = (input.double() - other.double()).abs()
            return same | (diff <= atol + rtol * other.double().abs())
        close = (input - other).abs() <= (other.abs() * rtol + atol)
        out = same | (close & input.isfinite() & other.isfinite())
        if equal_nan:
            out = out | (input.isnan() & other.isnan())
        return out


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True when every element of ``input`` is close to ``other`` (see ``isclose``).

    Example:
        >>> allclose(newch.tensor([1.0, 2.0]), newch.tensor([1.0, 2.0 + 1e-7]))
        True
    """
    return bool(isclose(input, other, rtol, atol, equal_nan).all().item())


def equal(input, other):
    """True when both tensors have the same shape and the same values.

    Example:
        >>> equal(newch.tensor([1, 2]), newch.tensor([1.0, 2.0]))
        True
    """
    check_tensor("equal", input)
    if not isinstance(other, Tensor):
        raise TypeError(f"equal: other must be a Tensor, got {type(other).__name__}")
    data(input, "equal")
    data(other, "equal")
    if tuple(input.shape) != tuple(other.shape):
        return False
    with no_grad():
        return bool((input == other).all().item())
