"""Parameter: a Tensor that a Module owns, always in persistent memory.

A parameter lives across steps, so it never sits in the step arena: a
temporary handed to ``Parameter`` is copied into its own persistent storage,
a persistent tensor is shared as is (no copy).
"""

from .. import dtypes as D
from ..ops.alloc import data as _alive, empty as _empty, persistent_copy_of
from ..tensor import Tensor


def persistent_copy(t, op):
    """``t`` itself when its memory is persistent, else a persistent copy of its values.

    The result is cut from the graph. Used for parameters, buffers and
    ``load_state_dict(assign=True)``.
    """
    if not isinstance(t, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(t).__name__}")
    _alive(t, op)
    if t.is_persistent:
        return t._alias()
    return copy_to_persistent(t)


def empty_persistent(shape, dtype=None):
    """An uninitialised persistent tensor of ``shape``: what layers build their parameters on.

    Example:
        >>> w = empty_persistent((3, 2))
        >>> w.is_persistent
        True
    """
    dt = D.from_any(dtype) if dtype is not None else D.get_default_dtype()
    return _empty(tuple(shape), dt, persistent=True)


class Parameter(Tensor):
    """A Tensor registered by a Module as one of its parameters; always persistent.

    Args:
        data: the values (a Tensor). A temporary is copied into persistent
            memory; a persistent tensor is shared. None gives an empty parameter.
        requires_grad: whether autograd tracks it (True by default).

    Example:
        >>> w = Parameter(newch.zeros(2, 3))
        >>> w.is_persistent, w.requires_grad
        (True, True)
    """

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = empty_persistent((0,))
        src = persistent_copy(data, "Parameter")
        p = src._alias(cls)
        if requires_grad:
            p.requires_grad_(True)
        return p

    def __init__(self, data=None, requires_grad=True):
        pass  # NOTE: everything happens in __new__; Tensor.__init__ refuses direct construction.

    @property
    def data(self):
        """A plain Tensor sharing this parameter's memory, cut from the graph."""
        return self._alias()

    @data.setter
    def data(self, other):
        # NOTE: a parameter must stay persistent, so a temporary is copied first.
        Tensor.data.fset(self, persistent_copy(other, "Parameter.data"))

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__


def copy_to_persistent(t):
    """A new persistent tensor holding a copy of ``t``'s values (never shared)."""
    return persistent_copy_of(_alive(t, "copy"), t.dtype)
