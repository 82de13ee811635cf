"""Hypothesis building blocks for the conformance table: shapes, dims, dtypes and array values.

Every helper takes hypothesis's ``draw`` (from ``st.data()``) and returns plain
Python or numpy data, so one drawn example can be turned into newch tensors and
into torch tensors alike. Shapes, dims, dtypes and the kind of values are drawn
by hypothesis (and shrink on failure); the values themselves come from a numpy
generator seeded by a drawn integer, which keeps large arrays cheap to draw.

Example:
    >>> x = array(draw, dtypes=FLOAT)          # any shape, float32 or float64
    >>> a, b = broadcast_pair(draw)            # two broadcast-compatible shapes
"""
import numpy as np
from hypothesis import strategies as st

FLOAT = ("float32", "float64")
INT = ("int64", "int32", "uint8")
ALL = FLOAT + INT + ("bool",)


def shape(draw, min_dims=0, max_dims=4, min_side=0, max_side=5):
    """A tuple of ``min_dims``..``max_dims`` sizes in ``min_side``..``max_side`` (0 = empty)."""
    n = draw(st.integers(min_dims, max_dims))
    return tuple(draw(st.lists(st.integers(min_side, max_side), min_size=n, max_size=n)))


def dtype(draw, dtypes):
    """One dtype name from ``dtypes``."""
    return draw(st.sampled_from(dtypes))


def seed(draw):
    return draw(st.integers(0, 2 ** 32 - 1))


def fill(draw, shp, dt, lo=-3.0, hi=3.0, styles=("uniform", "ints")):
    """A numpy array of shape ``shp`` and dtype ``dt`` with values in [lo, hi].

    ``styles``: "uniform" (distinct floats), "ints" (small whole numbers: ties
    and exact zeros), "special" (some nan / inf / -inf / -0.0 mixed in).
    """
    rng = np.random.default_rng(seed(draw))
    style = draw(st.sampled_from(styles))
    if dt == "bool":
        return np.asarray(rng.random(shp) < 0.5)
    if dt in INT:
        info = np.iinfo(dt)
        a, b = max(int(np.floor(lo)), int(info.min)), min(int(np.ceil(hi)), int(info.max))
        return np.asarray(rng.integers(a, b + 1, size=shp), dtype=dt)
    if style == "ints":
        vals = rng.integers(int(np.ceil(lo)), int(np.floor(hi)) + 1, size=shp).astype(dt)
    else:
        vals = rng.uniform(lo, hi, size=shp).astype(dt)
    if style == "special" and vals.size:
        pick = rng.random(shp) < 0.3
        specials = np.array([np.nan, np.inf, -np.inf, -0.0], dt)
        vals = np.where(pick, specials[rng.integers(0, 4, size=shp)], vals)
    return np.asarray(vals, dtype=dt)


def array(draw, shp=None, dtypes=FLOAT, lo=-3.0, hi=3.0, styles=("uniform", "ints"), **shape_kw):
    """A drawn array: shape (drawn unless given), dtype from ``dtypes``, values as in ``fill``."""
    if shp is None:
        shp = shape(draw, **shape_kw)
    return fill(draw, shp, dtype(draw, dtypes), lo, hi, styles)


def broadcast_pair(draw, n=2, bad=True, max_dims=4, max_side=4):
    """``n`` shapes that broadcast together; with ``bad``, now and then a pair that does not."""
    base = shape(draw, 0, max_dims, 0, max_side)
    out = []
    for _ in range(n):
        k = draw(st.integers(0, len(base)))
        sub = list(base[len(base) - k:])
        for i in range(len(sub)):
            if draw(st.integers(0, 3)) == 0:
                sub[i] = 1
        out.append(tuple(sub))
    if bad and base and draw(st.integers(0, 11)) == 0:
        i = draw(st.integers(0, n - 1))
        if out[i]:
            s = list(out[i])
            s[-1] = s[-1] + 2 if s[-1] != 1 else 3
            out[i] = tuple(s)
    return out


def dim(draw, ndim, bad=True):
    """A dim for a tensor of ``ndim`` dims, negative half the time; now and then out of range."""
    n = max(ndim, 1)
    if bad and draw(st.integers(0, 15)) == 0:
        return draw(st.sampled_from([n, -n - 1]))
    return draw(st.integers(-n, n - 1))


def dims(draw, ndim, bad=True, allow_none=True, allow_tuple=True, allow_empty=True):
    """None (all dims), one dim, or a tuple of distinct dims (negative ones mixed in; maybe ())."""
    kinds = (["none"] if allow_none else []) + ["int"] + (["tuple"] if allow_tuple else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "none":
        return None
    if kind == "int" or ndim == 0:
        return dim(draw, ndim, bad)
    chosen = draw(st.lists(st.integers(0, ndim - 1), min_size=0 if allow_empty else 1, max_size=ndim,
                           unique=True))
    return tuple(d - ndim if draw(st.booleans()) else d for d in chosen)


def scalar(draw, kind, lo=-3.0, hi=3.0):
    """A Python number of ``kind`` "float", "int" or "bool"."""
    if kind == "bool":
        return draw(st.booleans())
    if kind == "int":
        return draw(st.integers(int(np.ceil(lo)), int(np.floor(hi))))
    return draw(st.sampled_from([0.5, -1.25, 2.0, 0.0, 1.0])) if draw(st.booleans()) else \
        float(np.float32(draw(st.floats(lo, hi, allow_nan=False, width=32))))


def flag(draw):
    return draw(st.booleans())


def choice(draw, options):
    return draw(st.sampled_from(options))


def integer(draw, lo, hi):
    return draw(st.integers(lo, hi))
