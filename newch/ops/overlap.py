"""Partial memory overlap between a written array and an operand: PyTorch's rule.

An in-place write whose operand shares some, but not exactly the same, memory
(``x[1:].add_(x[:-1])``, ``x[1:].copy_(x[:-1])``, ``x[1:] = x[:-1]``) is refused, as
PyTorch refuses it: written element by element, its result would depend on the
order the elements are written in, so under ``prange`` on the thread count. The
very same memory in the same layout (``x.mul_(x)``) is fine: each element is read,
then written, by one loop iteration.
"""
import numpy as np


def _signature(a):
    """Where ``a``'s elements sit: data address plus (size, stride) of its non-1 dims."""
    return a.__array_interface__["data"][0], [(n, s) for n, s in zip(a.shape, a.strides) if n != 1]


def partial_overlap(a, b):
    """True when arrays ``a`` and ``b`` share memory without being the same elements in the same layout."""
    if b is a or not np.may_share_memory(a, b) or _signature(a) == _signature(b):
        return False
    try:
        return bool(np.shares_memory(a, b, max_work=10_000))
    except Exception:      # noqa: BLE001  (numpy's TooHardError: assume they overlap)
        return True


def overlap_error(op):
    """The RuntimeError PyTorch raises for a partial overlap, naming ``op``."""
    return RuntimeError(f"{op}: unsupported operation: some elements of the input tensor and "
                        f"the written-to tensor refer to a single memory location. Please "
                        f"clone() the tensor before performing the operation.")


def any_overlap(a, b):
    """True when arrays ``a`` and ``b`` share any memory (scatters and ``index_put`` refuse even
    the exact overlap, as PyTorch does: they read their source while writing elsewhere)."""
    if not np.may_share_memory(a, b):
        return False
    try:
        return bool(np.shares_memory(a, b, max_work=10_000))
    except Exception:      # noqa: BLE001  (numpy's TooHardError: assume they overlap)
        return True
