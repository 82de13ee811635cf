"""One conformance example as plain data, and how each library turns it into its own values.

A ``Case`` holds the positional and keyword arguments of one call with numpy
arrays where tensors go. ``convert(lib, ...)`` makes them ``lib`` tensors
(``lib`` is the ``newch`` or ``torch`` module), so both libraries see the same
numbers. Floating-point arrays require grad when the row is differentiable,
unless wrapped in ``Const``.

Example:
    >>> case = Case((np.ones(3, np.float32), 2.0), {"alpha": 3})
    >>> args, kwargs = convert(newch, case, grad=True)
"""
import numpy as np


class Case:
    """Arguments of one call (numpy arrays for tensors), plus a seed for upstream gradients."""

    def __init__(self, args, kwargs=None, seed=0):
        self.args = tuple(args)
        self.kwargs = dict(kwargs or {})
        self.seed = seed

    def __repr__(self):
        return f"Case(args={describe(self.args)}, kwargs={describe(self.kwargs)})"


class Const:
    """An array that becomes a tensor which never requires grad (indices, masks, targets)."""

    def __init__(self, array):
        self.array = np.asarray(array)

    def __repr__(self):
        return f"Const({describe(self.array)})"


class Raw:
    """A numpy array passed as it is (a fresh copy for each library): ``from_numpy``, ``as_tensor``."""

    def __init__(self, array):
        self.array = np.asarray(array)

    def __repr__(self):
        return f"Raw({describe(self.array)})"


class DT:
    """A dtype by name: ``DT("float64")`` is ``newch.float64`` or ``torch.float64``."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"DT({self.name})"


def describe(value):
    """A short text for reports: arrays show shape, dtype and (small) values."""
    if isinstance(value, np.ndarray):
        body = np.array2string(value, threshold=12, precision=4) if value.size <= 12 else "..."
        return f"array{value.shape}:{value.dtype}={body}"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(describe(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {describe(v)}" for k, v in value.items()) + "}"
    return repr(value)


def _tensor(lib, array):
    if lib.__name__ == "torch":
        return lib.from_numpy(np.array(array, copy=True))
    return lib.tensor(array)


def convert_value(lib, value, grad):
    """``value`` with numpy arrays made ``lib`` tensors (float ones requiring grad if ``grad``)."""
    if isinstance(value, np.ndarray):
        t = _tensor(lib, value)
        if grad and value.dtype.kind == "f":
            t.requires_grad_(True)
        return t
    if isinstance(value, Const):
        return _tensor(lib, value.array)
    if isinstance(value, DT):
        return getattr(lib, value.name)
    if isinstance(value, Raw):
        return np.array(value.array, copy=True)
    if isinstance(value, list):
        return [convert_value(lib, v, grad) for v in value]
    if isinstance(value, tuple):
        return tuple(convert_value(lib, v, grad) for v in value)
    if isinstance(value, dict):
        return {k: convert_value(lib, v, grad) for k, v in value.items()}
    return value


def convert(lib, case, grad):
    """(args, kwargs) of ``case`` for ``lib``."""
    return convert_value(lib, case.args, grad), convert_value(lib, case.kwargs, grad)


def tensors_in(value, is_tensor):
    """Every tensor inside nested lists / tuples / dicts ``value``, in a fixed order."""
    if is_tensor(value):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in tensors_in(v, is_tensor)]
    if isinstance(value, dict):
        return [t for k in sorted(value) for t in tensors_in(value[k], is_tensor)]
    return []


def arrays_in(value):
    """The numpy arrays inside ``value`` that ``convert_value`` turns into tensors, in that order."""
    if isinstance(value, np.ndarray):
        return [value]
    if isinstance(value, Const):
        return [value.array]
    if isinstance(value, (list, tuple)):
        return [a for v in value for a in arrays_in(v)]
    if isinstance(value, dict):
        return [a for k in sorted(value) for a in arrays_in(value[k])]
    return []
