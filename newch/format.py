"""How tensors print: ``tensor([[1.0000, 2.5000]], requires_grad=True)``, like PyTorch."""
import numpy as np

from . import dtypes as D

def _float_formatter(a):
    finite = a[np.isfinite(a)]
    if finite.size == 0:
        return lambda x: _special(x) or f"{x:.4f}"
    amax = float(np.abs(finite).max())
    nonzero = np.abs(finite[finite != 0])
    amin = float(nonzero.min()) if nonzero.size else 0.0
    if np.all(finite == np.round(finite)) and amax < 1e8:
        return lambda x: _special(x) or f"{x:.0f}."
    if amax >= 1e8 or (amin and amin < 1e-4) or (amin and amax / amin > 1e3 and amax >= 1e3):
        return lambda x: _special(x) or f"{x:.4e}"
    return lambda x: _special(x) or f"{x:.4f}"


def _special(x):
    if np.isnan(x):
        return "nan"
    if np.isinf(x):
        return "inf" if x > 0 else "-inf"
    return None


def tensor_repr(t):
    """The torch-like text of tensor ``t`` (a freed tensor says so instead of reading memory)."""
    d = t.dtype
    if not t._s.gen.alive:
        return f"tensor(<freed: {t._s.gen.how}>, shape={tuple(t.shape)}, dtype={d})"
    a = t._a
    extras = []
    if a.size == 0:
        body = "[]"
        extras.append(f"size={tuple(a.shape)}")
    else:
        kw = {}
        if d.is_floating_point:
            fmt = _float_formatter(a.astype(np.float64))
            kw["formatter"] = {"float_kind": fmt}
        elif d is D.bool_:
            kw["formatter"] = {"bool": lambda x: "True" if x else "False"}
        body = np.array2string(a, separator=", ", prefix="tensor(", threshold=1000,
                               edgeitems=3, max_line_width=80, **kw)
    if d not in (D.get_default_dtype(), D.int64, D.bool_):
        extras.append(f"dtype={d}")
    if t._node is not None:
        extras.append(f"grad_fn=<{t._node.name()}>")
    elif t._rg:
        extras.append("requires_grad=True")
    return "tensor(" + ", ".join([body] + extras) + ")"
