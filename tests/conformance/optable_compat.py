"""Rows for the ops PyTorch scripts reach for beyond the core (issue: run unmodified scripts).

isclose / allclose / equal, addmm / outer, diag, unique, bernoulli, std_mean / var_mean.
"""
import numpy as np

from . import gens as G
from . import strategies as S
from .cases import Case
from .entry import Layer, Op, spellings
from .optable_nn import _linear_layer
from .strategies import ALL, FLOAT

LOOSE = {"float32": (1e-4, 1e-5)}


def _close_pair(draw):
    dt = S.dtype(draw, FLOAT)
    sa, sb = S.broadcast_pair(draw)
    a = S.fill(draw, sa, dt, -3, 3, ("uniform", "ints", "special"))
    b = S.fill(draw, sb, S.dtype(draw, FLOAT) if S.integer(draw, 0, 9) == 0 else dt, -3, 3,
               ("uniform", "ints", "special"))
    kw = {}
    if S.flag(draw):
        kw = {"rtol": S.choice(draw, (0.0, 1e-3, 0.5)), "atol": S.choice(draw, (0.0, 1e-2, 1.0)),
              "equal_nan": S.flag(draw)}
    return G.make_case(draw, (a, b), kw)


def _addmm(draw):
    dt = S.dtype(draw, FLOAT)
    n, k, m = (S.integer(draw, 0, 4) for _ in range(3))
    k2 = k if S.integer(draw, 0, 9) else k + 1
    inp = S.choice(draw, ((n, m), (m,), (1, m), (n, 1), ()))
    kw = {}
    if S.flag(draw):
        kw = {"beta": S.choice(draw, (0, 1, 0.5, -2)), "alpha": S.choice(draw, (1, 2.5, -1))}
    return G.make_case(draw, (S.fill(draw, inp, dt), S.fill(draw, (n, k), dt),
                              S.fill(draw, (k2, m), dt)), kw)


def _outer(draw):
    a = S.array(draw, (S.integer(draw, 0, 5),), ALL)
    b = S.array(draw, (S.integer(draw, 0, 5),), ALL)
    return G.make_case(draw, (a, b))


def _diag(draw):
    nd = S.choice(draw, (1, 2, 2, 3))
    x = S.array(draw, S.shape(draw, nd, nd, 0, 4), ALL)
    return G.make_case(draw, (x,), {"diagonal": S.integer(draw, -3, 3)} if S.flag(draw) else {})


def _unique(draw):
    x = S.array(draw, None, ("int64", "float32", "bool"), -3, 3, ("ints",))
    kw = {"return_inverse": S.flag(draw), "return_counts": S.flag(draw)}
    if x.ndim and S.integer(draw, 0, 3) == 0:
        kw["dim"] = S.integer(draw, 0, x.ndim - 1)
    return G.make_case(draw, (x,), kw)


def _zero_one(out, case):
    np.testing.assert_array_equal(np.isin(out.numpy(), (0.0, 1.0)), True)


COMPAT = [
    Op("isclose", _close_pair, {**spellings("isclose", "fm"), **spellings("allclose", "fm")},
       grad=False),
    Op("equal", G.binary(ALL, scalars=False), spellings("equal", "fm"), grad=False),
    Op("addmm", _addmm, spellings("addmm", "fm"), tol=LOOSE, gtol=LOOSE,
       bad=[Case((np.zeros((2, 2), np.float32), np.zeros((2, 3), np.float32),
                  np.zeros((4, 2), np.float32)))]),
    Op("outer", _outer, {**spellings("outer", "fm"), **spellings("ger", "fm")}),
    Op("diag", _diag, spellings("diag", "fm")),
    Op("unique", _unique, spellings("unique", "fm"), grad=False),
    Op("bernoulli", G.unary(FLOAT, lo=0.0, hi=1.0), spellings("bernoulli", "fm"), values=False,
       grad=False, prop=_zero_one),
    Op("var_mean", G.reduction(FLOAT, keepdim=False, empty_tuple=False, kw=lambda d, x: {
        "keepdim": S.flag(d), **({"correction": S.choice(d, (0, 1))} if S.flag(d) else {})}),
       {**spellings("var_mean", "f"), **spellings("std_mean", "f")}, tol=LOOSE, gtol=LOOSE),
]

COMPAT.append(Layer("nn.DataParallel", lambda lib, **kw: lib.nn.DataParallel(lib.nn.Linear(**kw)),
                    _linear_layer, tol=LOOSE))
