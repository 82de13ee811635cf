"""``Tensor.new_zeros / new_ones / new_full / new_empty / new_tensor``: new tensors that take
the dtype of the tensor they are called on unless told otherwise."""
from .creation import empty, full, ones, tensor, zeros

__all__ = []   # methods only: x.new_zeros(...) has no torch.new_zeros
TENSOR_METHODS = ["new_empty", "new_full", "new_ones", "new_tensor", "new_zeros"]


def _size(size):
    if not size:
        raise TypeError("new_*: missing the size argument (x.new_zeros(2, 3) or x.new_zeros((2, 3)))")
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        return tuple(size[0])
    return tuple(size)


def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
    """Zeros of ``size`` with ``self``'s dtype.

    Example:
        >>> newch.ones(2, dtype=newch.float64).new_zeros(3).dtype
        newch.float64
    """
    return zeros(_size(size), dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)


def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
    """Ones of ``size`` with ``self``'s dtype (``x.new_ones(2, 3)``)."""
    return ones(_size(size), dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)


def new_empty(self, *size, dtype=None, device=None, requires_grad=False):
    """An uninitialised tensor of ``size`` with ``self``'s dtype (``x.new_empty(2)``)."""
    return empty(_size(size), dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)


def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    """``fill_value`` everywhere in a tensor of ``size`` with ``self``'s dtype."""
    return full(tuple(size), fill_value, dtype=dtype or self.dtype, device=device,
                requires_grad=requires_grad)


def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    """A copy of ``data`` as a tensor with ``self``'s dtype (``x.new_tensor([1, 2])``)."""
    return tensor(data, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)
