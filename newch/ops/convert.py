"""Copies and conversions: contiguous, clone, detach, ``to`` (dtype), the ``.float()``-style casts."""
from .. import dtypes as D
from ..device import check_device, device
from ..tensor import Tensor
from .alloc import data, empty, making_persistent, view_of
from .launch import cast, copy_into
from .record import needs_grad, record

__all__ = ["clone", "contiguous", "detach", "detach_", "to", "type_as"]
# also bound as Tensor methods (ops/methods.py):
TENSOR_METHODS = ["clone", "contiguous", "detach", "detach_", "to", "type_as"]


def contiguous(input):
    """``input`` itself if C-contiguous, else a contiguous copy."""
    if data(input, "contiguous").flags.c_contiguous:
        return own(input)
    return clone(input)


def clone(input):
    """A copy of ``input`` with its own memory (temporary, or persistent inside ``persistent()``)."""
    a = data(input, "clone")
    out = empty(a.shape, input.dtype)
    copy_into(a, out._a)
    if needs_grad(input):
        record(out, "CloneBackward0", (input,), lambda g: (g,))
    return out


def own(input):
    """``input`` itself, or inside ``persistent()`` a persistent copy of a temporary ``input``.

    For ops that may hand back their input unchanged (contiguous, ``to`` the same
    dtype, ``as_tensor``, ``.data``...): inside ``persistent()`` every result is
    persistent, and a temporary would die at ``step_end()``.
    """
    if input._s.views is None and making_persistent():
        return clone(input)
    return input


def detach(input):
    """A tensor sharing ``input``'s memory, cut from the graph."""
    return view_of(input, input._a)


def detach_(input):
    """Cut ``input`` from the graph in place; returns it."""
    input._node = None
    input._rg = False
    return input


def to(input, *args, dtype=None, copy=False, **kwargs):
    """Convert to ``dtype`` (devices other than "cpu" are not available)."""
    for a in args:
        if isinstance(a, Tensor):
            dtype = a.dtype
        elif isinstance(a, (D.dtype, type)) or (isinstance(a, str) and a in ("float32", "float64")):
            dtype = a
        elif isinstance(a, (str, device)):
            check_device("to", a)
        elif a is not None:
            raise TypeError(f"to: expected a dtype, a device or a tensor, got {type(a).__name__}")
    check_device("to", kwargs.pop("device", None))
    kwargs.pop("non_blocking", None)
    if kwargs:
        raise TypeError(f"to: unexpected arguments {sorted(kwargs)}")
    if dtype is None:
        return clone(input) if copy else own(input)
    dt = D.from_any(dtype)
    if dt is input.dtype:
        return clone(input) if copy else own(input)
    out = cast(input, dt, "to")
    if needs_grad(input) and dt.is_floating_point:
        src = input.dtype
        record(out, "ToCopyBackward0", (input,), lambda g: (to(g, src),))
    return out


def _caster(dt):
    def f(input):
        return to(input, dt)
    f.__doc__ = f"``input`` converted to {dt}."
    return f


# Tensor.float(), .double(), ... (kept in a table: the names would shadow builtins here)
CASTS = {"float": _caster(D.float32), "double": _caster(D.float64), "long": _caster(D.int64),
         "int": _caster(D.int32), "bool": _caster(D.bool_), "byte": _caster(D.uint8)}


def type_as(input, other):
    """``input`` converted to ``other``'s dtype."""
    return to(input, other.dtype)
