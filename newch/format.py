"""How tensors print: ``tensor([[1.0000, 2.5000]], requires_grad=True)``, like PyTorch."""
import numpy as np

from . import dtypes as D

def _summarised(a, threshold=1000, edge=3):
    """The elements a summarised print shows (the first and last ``edge`` along each dim)."""
    if a.size <= threshold or a.ndim == 0:
        return a.reshape(-1)
    for d in range(a.ndim):
        if a.shape[d] > 2 * edge:
            a = np.concatenate([np.take(a, range(edge), d), np.take(a, range(-edge, 0), d)], d)
    return a.reshape(-1)


def _float_formatter(a):
    """PyTorch's choice of fixed (``1.5000``), integer (``2.``) or scientific notation, with
    every element padded to the widest one.

    NOTE: the statistics use only the elements a summarised print shows, as PyTorch does.
    """
    shown = _summarised(a)
    vals = shown[np.isfinite(shown) & (shown != 0)]
    nz = np.abs(vals)
    int_mode = bool(np.all(vals == np.ceil(vals)))
    sci = False
    if nz.size:
        big, small = float(nz.max()), float(nz.min())
        sci = big / small > 1000.0 or big > 1.0e8 or (not int_mode and small < 1.0e-4)
    if sci:
        text = lambda x: f"{x:.4e}"                                      # noqa: E731
    elif int_mode:
        text = lambda x: f"{x:.0f}" + ("" if np.isnan(x) or np.isinf(x) else ".")  # noqa: E731
    else:
        text = lambda x: f"{x:.4f}"                                      # noqa: E731
    width = max((len(text(float(x))) for x in shown), default=1)
    return lambda x: text(float(x)).rjust(width)


def tensor_repr(t):
    """The torch-like text of tensor ``t`` (a freed tensor raises NcError rather than print freed memory)."""
    d = t.dtype
    a = t._check("repr")
    extras = []
    if a.size == 0:
        body = "[]"
        if a.shape != (0,):
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
    # NOTE: "[]" shows no values to tell the dtype by, so an empty tensor names any non-default one
    if d not in (D.get_default_dtype(), D.int64, D.bool_) or (a.size == 0 and d is not D.get_default_dtype()):
        extras.append(f"dtype={d}")
    if t._node is not None:
        extras.append(f"grad_fn=<{t._node.name()}>")
    elif t._rg:
        extras.append("requires_grad=True")
    return "tensor(" + ", ".join([body] + extras) + ")"
