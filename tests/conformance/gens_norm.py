"""Conformance rows of the norms: torch.norm / Tensor.norm and torch.linalg's three norms.

Drawn: float tensors (ties and zeros from the "ints" style), every supported
order (2, 1, 3, 0.5, 0, inf, -inf; 'fro', +-1, +-inf for matrices), None /
int / tuple dims (now and then out of range), keepdim, a float64 ``dtype=``.
Matrix orders that need an SVD (2, -2, 'nuc') are not drawn: newch raises
NotImplementedError for them (docs/optim.md says so).
"""
import math

import numpy as np
from hypothesis import strategies as st

from . import strategies as S
from .cases import Case, DT
from .entry import Op, same, spellings
from .gens import make_case
from .strategies import FLOAT

INF = math.inf
LOOSE = {"float32": (1e-4, 1e-5)}
VECTOR_ORDS = (2, 1, 3, 0.5, 0, INF, -INF, 2.5)


def _x(draw, min_dims=0):
    return S.array(draw, None, FLOAT, -3.0, 3.0, ("uniform", "ints"), min_dims=min_dims)


def _dtype(draw):
    return {"dtype": DT("float64")} if S.integer(draw, 0, 5) == 0 else {}


def vector_norm_gen(draw):
    x = _x(draw)
    kw = {"ord": S.choice(draw, VECTOR_ORDS), **_dtype(draw)}
    d = S.dims(draw, x.ndim, allow_empty=False)
    if d is not None:
        kw["dim"] = d
    if S.flag(draw):
        kw["keepdim"] = S.flag(draw)
    return make_case(draw, (x,), kw)


def _pair(draw, ndim):
    a, b = draw(st.lists(st.integers(0, ndim - 1), min_size=2, max_size=2, unique=True))
    return (a - ndim if S.flag(draw) else a, b - ndim if S.flag(draw) else b)


def matrix_norm_gen(draw):
    x = _x(draw, min_dims=2)
    kw = {"ord": S.choice(draw, ("fro", 1, -1, INF, -INF)), **_dtype(draw)}
    if S.flag(draw):
        kw["dim"] = _pair(draw, x.ndim)
    if S.flag(draw):
        kw["keepdim"] = S.flag(draw)
    return make_case(draw, (x,), kw)


def linalg_norm_gen(draw):
    x = _x(draw)
    kind = S.choice(draw, ("none", "int", "pair"))
    kw = {}
    if kind == "int":
        kw["dim"] = S.dim(draw, x.ndim)
        kw["ord"] = S.choice(draw, (None,) + VECTOR_ORDS)
    elif kind == "pair" and x.ndim >= 2:
        kw["dim"] = _pair(draw, x.ndim)
        kw["ord"] = S.choice(draw, (None, "fro", 1, -1, INF, -INF))
    elif x.ndim == 2:
        kw["ord"] = S.choice(draw, (None, "fro", 1, -1, INF, -INF))
    else:
        kw["ord"] = S.choice(draw, (None, 2, 1, INF)) if x.ndim == 1 else None
    if S.flag(draw):
        kw["keepdim"] = S.flag(draw)
    return make_case(draw, (x,), kw)


def norm_gen(draw):
    x = _x(draw)
    p = S.choice(draw, ("fro", None) + VECTOR_ORDS)
    kw = {"p": p} if S.flag(draw) or p != "fro" else {}
    d = S.dims(draw, x.ndim, allow_empty=False)
    if isinstance(d, tuple) and len(d) > 2 and p == "fro":
        d = d[:2]
    if d is not None:
        kw["dim"] = d
    if S.flag(draw):
        kw["keepdim"] = S.flag(draw)
    return make_case(draw, (x,), kw)


def _f32(*shape):
    return np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) - 1


def _linalg(name):
    return same(lambda lib, *a, **k: getattr(lib.linalg, name)(*a, **k))


NORMS = [
    Op("norm", norm_gen, spellings("norm", "fm"), tol=LOOSE, gtol=LOOSE,
       bad=[Case((np.arange(3),), {}), Case((_f32(2, 2, 2), "fro", (0, 1, 2)), {})]),
    Op("linalg.vector_norm", vector_norm_gen,
       {"torch.linalg.vector_norm": _linalg("vector_norm")}, tol=LOOSE, gtol=LOOSE,
       bad=[Case((np.zeros(0, np.float32), INF), {}), Case((np.arange(3),), {}),
            Case((np.zeros((2, 0), np.float32),), {"ord": -1, "dim": 1}),
            Case((np.zeros(2, np.float64),), {"dtype": DT("float32")})]),
    Op("linalg.matrix_norm", matrix_norm_gen,
       {"torch.linalg.matrix_norm": _linalg("matrix_norm")}, tol=LOOSE, gtol=LOOSE,
       bad=[Case((_f32(3),), {}), Case((_f32(2, 2),), {"ord": 3}),
            Case((_f32(2, 2),), {"dim": (0, 0)}), Case((_f32(2, 2, 2),), {"dim": (0,)})]),
    Op("linalg.norm", linalg_norm_gen, {"torch.linalg.norm": _linalg("norm")}, tol=LOOSE,
       gtol=LOOSE, bad=[Case((_f32(2, 2, 2), 1), {})]),
]
