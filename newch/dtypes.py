"""newch dtypes (torch spellings) and PyTorch's type promotion rules."""
import numpy as np


class dtype:
    """A tensor element type: ``newch.float32``, ``newch.int64``, ..."""
    __slots__ = ("name", "np", "itemsize", "is_floating_point", "is_signed", "_rank")

    def __init__(self, name, np_dtype, rank):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.itemsize = self.np.itemsize
        self.is_floating_point = self.np.kind == "f"
        self.is_signed = self.np.kind in "fi"
        self._rank = rank

    def __repr__(self):
        return f"newch.{self.name}"

    def __reduce__(self):
        return (from_any, (self.name,))


bool_ = dtype("bool", np.bool_, 0)
uint8 = dtype("uint8", np.uint8, 1)
int32 = dtype("int32", np.int32, 2)
int64 = dtype("int64", np.int64, 3)
float32 = dtype("float32", np.float32, 4)
float64 = dtype("float64", np.float64, 5)

ALL = (bool_, uint8, int32, int64, float32, float64)
_BY_NP = {d.np: d for d in ALL}
_BY_NAME = {d.name: d for d in ALL}
_BY_NAME.update({"float": float32, "double": float64, "long": int64, "int": int32})
_DEFAULT_FLOAT = [float32]


def get_default_dtype():
    """The dtype floating-point tensors get when none is given (float32 unless changed)."""
    return _DEFAULT_FLOAT[0]


def set_default_dtype(d):
    """Make ``d`` (float32 or float64) the default floating-point dtype."""
    d = from_any(d)
    if not d.is_floating_point:
        raise TypeError(f"set_default_dtype: expected a floating point dtype, got {d}")
    _DEFAULT_FLOAT[0] = d


def from_any(d):
    """Turn a newch dtype, numpy dtype, Python type or name into a newch dtype."""
    if isinstance(d, dtype):
        return d
    if d is float:
        return get_default_dtype()
    if d is int:
        return int64
    if d is bool:
        return bool_
    if isinstance(d, str) and d in _BY_NAME:
        return _BY_NAME[d]
    try:
        return _BY_NP[np.dtype(d)]
    except (TypeError, KeyError):
        raise TypeError(f"unsupported dtype {d!r}; newch has "
                        f"{', '.join(x.name for x in ALL)}") from None


def from_numpy_dtype(npd):
    """The newch dtype of a numpy dtype, or TypeError naming the supported ones."""
    try:
        return _BY_NP[np.dtype(npd)]
    except KeyError:
        raise TypeError(f"numpy dtype {np.dtype(npd)} is not supported; newch has "
                        f"{', '.join(x.name for x in ALL)}") from None


def category(d):
    """0 for bool, 1 for integers, 2 for floating point."""
    return 2 if d.is_floating_point else (0 if d is bool_ else 1)


def promote_types(a, b):
    """The smallest dtype both ``a`` and ``b`` convert to (torch.promote_types)."""
    a, b = from_any(a), from_any(b)
    if a is b:
        return a
    ca, cb = category(a), category(b)
    if ca != cb:
        return a if ca > cb else b
    return a if a._rank >= b._rank else b


def scalar_dtype(value):
    """The dtype a Python scalar takes on its own (bool, int64 or the default float)."""
    if isinstance(value, (bool, np.bool_)):
        return bool_
    if isinstance(value, (int, np.integer)):
        return int64
    return get_default_dtype()


def result_type(dimmed, zerodim, scalars):
    """PyTorch's promotion: tensors with dims, then 0-dim tensors, then Python scalars.

    A lower tier only changes the result when its category (bool < int < float)
    is higher than everything above it.
    """
    result = None
    for tier in (dimmed, zerodim):
        if not tier:
            continue
        t = tier[0]
        for d in tier[1:]:
            t = promote_types(t, d)
        if result is None or category(t) > category(result):
            result = t
    for s in scalars:
        sd = scalar_dtype(s)
        if result is None:
            result = sd
        elif category(sd) > category(result):
            result = sd if category(sd) == 2 else promote_types(result, sd)
    return result
