"""Rows for the tensor ops sequence-model scripts use (issue 14): triangles, running sums,
flips and rolls, sorting, repeats, einsum, baddbmm, new_*, multinomial, normalize, cosine."""
import numpy as np

from . import gens as G
from . import strategies as S
from .cases import Case
from .entry import Op, same, spellings
from .strategies import ALL, FLOAT

LOOSE = {"float32": (1e-4, 1e-5)}


def _tri(draw):
    x = S.array(draw, None, ALL, min_dims=2)
    return G.make_case(draw, (x,), {"diagonal": S.integer(draw, -3, 3)} if S.flag(draw) else {})


def _cum(draw):
    x = S.array(draw, None, ALL, -2.0, 2.0, ("uniform", "ints"))
    return G.make_case(draw, (x, S.dim(draw, x.ndim)))


def _flip(draw):
    x = S.array(draw, None, ALL)
    ds = S.dims(draw, x.ndim, allow_none=False, allow_empty=False)
    return G.make_case(draw, (x, ds if isinstance(ds, tuple) else (ds,)))


def _roll(draw):
    x = S.array(draw, None, ALL, min_dims=1)
    if S.flag(draw):
        return G.make_case(draw, (x, S.integer(draw, -7, 7)))
    ds = tuple(sorted({S.dim(draw, x.ndim, bad=False) % x.ndim for _ in range(S.integer(draw, 1, 2))}))
    return G.make_case(draw, (x, tuple(S.integer(draw, -6, 6) for _ in ds), ds))


def _sort(draw):
    x = S.array(draw, None, FLOAT, styles=("uniform", "ints"), min_dims=1)
    kw = {"dim": S.dim(draw, x.ndim), "descending": S.flag(draw)}
    return G.make_case(draw, (x,), kw)


def _sort_stable(lib, x, **kw):
    return lib.sort(x, stable=True, **kw)


def _argsort_stable(lib, x, **kw):
    return lib.argsort(x, stable=True, **kw)


def _topk(draw):
    x = S.array(draw, None, FLOAT, styles=("uniform",), min_dims=1)
    d = S.dim(draw, x.ndim, bad=False)
    k = S.integer(draw, 0, x.shape[d])
    return G.make_case(draw, (x, k), {"dim": d, "largest": S.flag(draw)})


def _repeat(draw):
    x = S.array(draw, None, ALL, max_dims=3, max_side=3)
    reps = tuple(S.integer(draw, 0, 3) for _ in range(x.ndim + S.integer(draw, 0, 2)))
    return G.make_case(draw, (x,) + reps)


def _tile(draw):
    x = S.array(draw, None, ALL, max_dims=3, max_side=3)
    return G.make_case(draw, (x, tuple(S.integer(draw, 1, 3) for _ in range(S.integer(draw, 0, 4)))))


def _repeat_interleave(draw):
    x = S.array(draw, None, ALL, max_dims=3, max_side=4)
    if S.flag(draw) or x.ndim == 0:
        return G.make_case(draw, (x, S.integer(draw, 0, 3)), {"dim": None} if S.flag(draw) else {})
    d = S.dim(draw, x.ndim, bad=False)
    reps = np.asarray([S.integer(draw, 0, 3) for _ in range(x.shape[d])], np.int64)
    return G.make_case(draw, (x, reps), {"dim": d})


_EINSUM = ("ij,jk->ik", "bij,bjk->bik", "bhqd,bhkd->bhqk", "bhqk,bhkd->bhqd", "i,j->ij", "ij,ij->",
           "ij,kj", "ijk,k->ji", "bi,bi->b", "ij->ji", "ijk->k")


def _einsum(draw):
    eq = S.choice(draw, _EINSUM)
    dt = S.dtype(draw, FLOAT)
    sizes = {c: S.integer(draw, 0, 4) for c in "bhijkqd"}
    terms = eq.split("->")[0].split(",")
    return G.make_case(draw, (eq,) + tuple(S.fill(draw, tuple(sizes[c] for c in t), dt) for t in terms))


def _baddbmm(draw):
    dt = S.dtype(draw, FLOAT)
    b, n, k, m = (S.integer(draw, 0, 4) for _ in range(4))
    inp = S.choice(draw, ((b, n, m), (n, m), (1, 1, m), ()))
    kw = {"beta": S.choice(draw, (0, 1, 0.5)), "alpha": S.choice(draw, (1, -2.0))} if S.flag(draw) else {}
    return G.make_case(draw, (S.fill(draw, inp, dt), S.fill(draw, (b, n, k), dt),
                              S.fill(draw, (b, k, m), dt)), kw)


def _new(draw):
    x = S.array(draw, None, ALL, max_dims=2)
    return G.make_case(draw, (x, tuple(S.integer(draw, 0, 3) for _ in range(S.integer(draw, 0, 3)))))


def _news(lib, x, size):
    return (x.new_zeros(size), x.new_ones(*size), x.new_full(size, 7), x.new_zeros(size, dtype=lib.float64),
            x.new_tensor([[1, 2], [3, 4]]))


def _new_empty(lib, x, size):
    return x.new_empty(size).shape, x.new_empty(size).dtype


def _multinomial(draw):
    n = S.integer(draw, 1, 6)
    p = S.fill(draw, S.choice(draw, ((n,), (S.integer(draw, 1, 3), n))), S.dtype(draw, FLOAT), 0.0, 2.0)
    p[..., 0] += 0.5     # every row has some mass
    repl = S.flag(draw)
    k = S.integer(draw, 1, 8 if repl else int(np.count_nonzero(p, axis=-1).min()))
    return G.make_case(draw, (p, k), {"replacement": repl})


def _multinomial_prop(out, case):
    p, k = case.args[0], case.args[1]
    o = out.numpy().reshape(-1, k)
    pr = np.asarray(p).reshape(-1, np.asarray(p).shape[-1])
    assert o.dtype == np.int64 and (o >= 0).all() and (o < pr.shape[1]).all()
    for r in range(o.shape[0]):
        assert (pr[r][o[r]] > 0).all(), "drew a category of probability 0"
        if not case.kwargs.get("replacement"):
            assert len(set(o[r].tolist())) == k, "repeated category without replacement"


def _normalize(draw):
    x = S.array(draw, None, FLOAT, min_dims=1, styles=("uniform",))
    kw = {"dim": S.dim(draw, x.ndim)}
    if S.flag(draw):
        kw["p"] = S.choice(draw, (1.0, 2.0, 3.0))
    return G.make_case(draw, (x,), kw)


def _cosine(draw):
    dt = S.dtype(draw, FLOAT)
    sa, sb = S.broadcast_pair(draw, bad=False)
    sa, sb = sa + (3,), sb + (3,)
    a, b = S.fill(draw, sa, dt, styles=("uniform",)), S.fill(draw, sb, dt, styles=("uniform",))
    return G.make_case(draw, (a, b), {"dim": -1})


SEQ = [
    Op("tril", _tri, spellings("tril", "fm")),
    Op("triu", _tri, spellings("triu", "fm")),
    Op("cumsum", _cum, spellings("cumsum", "fm"), tol=LOOSE, gtol=LOOSE),
    Op("cumprod", _cum, spellings("cumprod", "fm"), tol=LOOSE, gtol=LOOSE),
    Op("flip", _flip, spellings("flip", "fm")),
    Op("roll", _roll, spellings("roll", "fm")),
    Op("sort", _sort, {"torch.sort": same(_sort_stable), "Tensor.sort": same(
        lambda lib, x, **kw: x.sort(stable=True, **kw))}),
    Op("argsort", _sort, {"torch.argsort": same(_argsort_stable), "Tensor.argsort": same(
        lambda lib, x, **kw: x.argsort(stable=True, **kw))}, grad=False),
    Op("topk", _topk, spellings("topk", "fm")),
    Op("repeat", _repeat, spellings("repeat", "mn")),
    Op("tile", _tile, spellings("tile", "fm")),
    Op("repeat_interleave", _repeat_interleave, spellings("repeat_interleave", "fm")),
    Op("einsum", _einsum, spellings("einsum", "f"), tol=LOOSE, gtol=LOOSE),
    Op("baddbmm", _baddbmm, spellings("baddbmm", "fm"), tol=LOOSE, gtol=LOOSE,
       bad=[Case((np.zeros((2, 2, 2), np.float32), np.zeros((2, 2, 3), np.float32),
                  np.zeros((2, 4, 2), np.float32)))]),
    Op("new_zeros", _new, {"Tensor.new_zeros": same(_news), "Tensor.new_ones": same(_news),
                           "Tensor.new_full": same(_news), "Tensor.new_tensor": same(_news)}, grad=False),
    Op("new_empty", _new, {"Tensor.new_empty": same(_new_empty)}, grad=False),
    Op("multinomial", _multinomial, spellings("multinomial", "fm"), values=False, grad=False,
       prop=_multinomial_prop),
    Op("normalize", _normalize, spellings("normalize", "F"), tol=LOOSE, gtol=LOOSE),
    Op("cosine_similarity", _cosine, spellings("cosine_similarity", "F"), tol=LOOSE, gtol=LOOSE),
]
