"""How tensors print: ``tensor([[1.0000, 2.5000]], requires_grad=True)``, like PyTorch.

The layout follows PyTorch's print options (4 decimals, summarise above 1000
elements showing 3 at each edge, 80 columns): every element is padded to one
width, and a row holds as many elements as fit in the columns left after the
indent.
"""
import math

import numpy as np

from . import dtypes as D

PRECISION = 4
THRESHOLD = 1000
EDGE = 3
LINE_WIDTH = 80


def _summarised(a, summarise):
    """The elements a print shows, flattened (the first and last EDGE along each long dim)."""
    if summarise:
        for d in range(a.ndim):
            if a.shape[d] > 2 * EDGE:
                a = np.concatenate([np.take(a, range(EDGE), d), np.take(a, range(-EDGE, 0), d)], d)
    return a.reshape(-1)


def _float_text(shown):
    """(value -> text, width): fixed (``1.5000``), integer (``2.``) or scientific notation.

    NOTE: the choice and the width come from the finite nonzero elements shown, as in
    PyTorch; nan, inf and 0 are padded to that width but do not widen it.
    """
    vals = shown[np.isfinite(shown) & (shown != 0)]
    nz = np.abs(vals)
    int_mode = bool(np.all(vals == np.ceil(vals)))
    sci = False
    if nz.size:
        big, small = float(nz.max()), float(nz.min())
        sci = big / small > 1000.0 or big > 1.0e8 or (not int_mode and small < 1.0e-4)
    if sci:
        def text(x):
            return f"{x:.{PRECISION}e}"
    elif int_mode:
        def text(x):
            return f"{x:.0f}" + ("" if math.isnan(x) or math.isinf(x) else ".")
    else:
        def text(x):
            return f"{x:.{PRECISION}f}"
    width = max((len(text(float(x))) for x in vals), default=1)
    return text, width


def _formatter(a, dtype, summarise):
    """(value -> padded text, width) for the elements of array ``a``."""
    shown = _summarised(a, summarise)
    if dtype.is_floating_point:
        text, width = _float_text(shown.astype(np.float64))
        conv = float
    else:
        conv = bool if dtype is D.bool_ else int
        text = str
        width = max(len(str(conv(x))) for x in shown)
    return (lambda x: text(conv(x)).rjust(width)), width


def _layout(a, fmt, width, indent, summarise):
    """The bracketed text of array ``a`` whose first bracket sits at column ``indent``."""
    if a.ndim == 0:
        return fmt(a[()])
    n = a.shape[0]
    cut = summarise and n > 2 * EDGE
    if a.ndim == 1:
        items = ([fmt(x) for x in a[:EDGE]] + [" ..."] + [fmt(x) for x in a[-EDGE:]] if cut
                 else [fmt(x) for x in a])
        per_line = max(1, (LINE_WIDTH - indent) // (width + 2))
        lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    rows = range(n) if not cut else list(range(EDGE)) + [None] + list(range(n - EDGE, n))
    parts = ["..." if i is None else _layout(a[i], fmt, width, indent + 1, summarise) for i in rows]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(parts) + "]"


def tensor_repr(t):
    """The torch-like text of tensor ``t`` (a freed tensor raises NcError rather than print freed memory)."""
    d = t.dtype
    a = t._data("repr")
    extras = []
    if a.size == 0:
        body = "[]"
        if a.shape != (0,):
            extras.append(f"size={tuple(a.shape)}")
    else:
        summarise = a.size > THRESHOLD
        fmt, width = _formatter(a, d, summarise)
        body = _layout(a, fmt, width, len("tensor("), summarise)
    # NOTE: "[]" shows no values to tell the dtype by, so an empty tensor names any non-default one
    if d not in (D.get_default_dtype(), D.int64, D.bool_) or (a.size == 0 and d is not D.get_default_dtype()):
        extras.append(f"dtype={d}")
    if t._node is not None:
        extras.append(f"grad_fn=<{t._node.name()}>")
    elif t._rg:
        extras.append("requires_grad=True")
    return _with_extras("tensor(" + body, extras)


def _with_extras(text, extras):
    """Append ``, dtype=...`` and the like; one that would pass the line width starts a new line."""
    indent = len("tensor(")
    col = len(text) - text.rfind("\n") + 1
    for e in extras:
        if col + len(e) + 2 > LINE_WIDTH:
            text += ",\n" + " " * indent + e
            col = indent + len(e)
        else:
            text += ", " + e
            col += len(e) + 2
    return text + ")"
