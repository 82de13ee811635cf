"""Input generators for shape, joining and indexing ops (reshape targets, permutations, indices).

Like ``gens``, each factory returns ``gen(draw) -> Case``; now and then a drawn
case is invalid (a size that does not fit, a dim out of range, an index out of
bounds) so that error conformance is exercised as well.
"""
import numpy as np

from . import strategies as S
from .cases import Const, DT
from .gens import index_tensor, make_case, tensor_list
from .strategies import ALL, FLOAT


def _target_shape(draw, shp):
    """A shape with as many elements as ``shp`` (dims merged / split / reordered, maybe one -1)."""
    n = int(np.prod(shp))
    if n == 0:
        out = [0] + [S.integer(draw, 1, 3) for _ in range(S.integer(draw, 0, 2))]
    else:
        factors = [f for s in shp for f in _factor(s)]
        draw_order = S.integer(draw, 0, 2 ** 16)
        np.random.default_rng(draw_order).shuffle(factors)
        out, i = [], 0
        while i < len(factors):
            k = S.integer(draw, 1, 2)
            out.append(int(np.prod(factors[i:i + k])))
            i += k
        out += [1] * S.integer(draw, 0, 1)
    if out and S.flag(draw):
        out[S.integer(draw, 0, len(out) - 1)] = -1
    if S.integer(draw, 0, 15) == 0:
        out.append(2)
    return tuple(out)


def _factor(n):
    out, p = [], 2
    while n > 1 and p * p <= n:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    return out + ([n] if n > 1 else [])


def reshape(varargs=True):
    """x and a target shape, passed as varargs or as one tuple."""
    def gen(draw):
        x = S.array(draw, None, ALL)
        tgt = _target_shape(draw, x.shape)
        if varargs and tgt and S.flag(draw):
            return make_case(draw, (x,) + tgt)
        return make_case(draw, (x, tgt))
    return gen


def like(kind):
    """x and a second tensor whose shape x can take (reshape_as / view_as) or expand to."""
    def gen(draw):
        x = S.array(draw, None, FLOAT)
        if kind == "expand":
            sa, sb = S.broadcast_pair(draw, 2)
            x = S.fill(draw, sa, x.dtype.name)
            shp = tuple(max(a, b) for a, b in zip((1,) * (len(sb) - len(sa)) + sa, sb)) \
                if len(sb) >= len(sa) else sb
        else:
            shp = tuple(abs(s) for s in _target_shape(draw, x.shape) if s != -1)
        return make_case(draw, (x, Const(np.zeros(shp, x.dtype))))
    return gen


def flatten(draw):
    x = S.array(draw, None, ALL)
    args = tuple(S.dim(draw, x.ndim) for _ in range(S.integer(draw, 0, 2)))
    return make_case(draw, (x,) + args)


def unflatten(draw):
    x = S.array(draw, None, FLOAT, min_dims=1)
    d = S.dim(draw, x.ndim)
    n = x.shape[d] if -x.ndim <= d < x.ndim else 1
    sizes = _target_shape(draw, (n,))
    return make_case(draw, (x, d, sizes))


def squeeze(draw):
    x = S.array(draw, None, ALL, max_side=2)
    how = S.choice(draw, ("none", "int", "tuple"))
    if how == "none":
        return make_case(draw, (x,))
    d = S.dims(draw, x.ndim, allow_none=False, allow_tuple=how == "tuple")
    return make_case(draw, (x, d))


def permutation(varargs=True):
    """x and a permutation of its dims (negative entries mixed in; now and then a wrong one)."""
    def gen(draw):
        x = S.array(draw, None, ALL)
        perm = list(np.random.default_rng(S.seed(draw)).permutation(x.ndim))
        perm = [int(p) - x.ndim if S.flag(draw) else int(p) for p in perm]
        if S.integer(draw, 0, 11) == 0:
            perm = perm[:-1] if perm else [0]
        if varargs and perm and S.flag(draw):
            return make_case(draw, (x,) + tuple(perm))
        return make_case(draw, (x, tuple(perm)))
    return gen


def two_dims(draw):
    """x, dim0, dim1 (transpose, swapaxes, movedim)."""
    x = S.array(draw, None, ALL)
    return make_case(draw, (x, S.dim(draw, x.ndim), S.dim(draw, x.ndim)))


def expand(draw):
    """x and target sizes: -1 keeps a size, new leading dims, now and then a clash."""
    x = S.array(draw, None, FLOAT, max_dims=3, max_side=3)
    sizes = [S.integer(draw, 1, 3) if s == 1 else (-1 if S.flag(draw) else s) for s in x.shape]
    if sizes and S.integer(draw, 0, 11) == 0:
        sizes[0] = x.shape[0] + 1 if x.shape[0] != 1 else -1
        if x.shape[0] == 1 and not S.flag(draw):
            sizes[0] = 2
    lead = [S.integer(draw, 0, 3) for _ in range(S.integer(draw, 0, 2))]
    tgt = tuple(lead + sizes)
    if tgt and S.flag(draw):
        return make_case(draw, (x,) + tgt)
    return make_case(draw, (x, tgt))


def narrow(draw):
    x = S.array(draw, None, FLOAT, min_dims=1)
    d = S.dim(draw, x.ndim)
    n = x.shape[d] if -x.ndim <= d < x.ndim else 2
    start = S.integer(draw, -n, n)
    length = S.integer(draw, 0, n + 1)
    return make_case(draw, (x, d, start, length))


def select(draw):
    x = S.array(draw, None, FLOAT, min_dims=1)
    d = S.dim(draw, x.ndim)
    n = x.shape[d] if -x.ndim <= d < x.ndim else 2
    return make_case(draw, (x, d, S.integer(draw, -n - 1, n)))


def split(draw):
    x = S.array(draw, None, FLOAT, min_dims=1)
    d = S.dim(draw, x.ndim)
    n = x.shape[d] if -x.ndim <= d < x.ndim else 2
    if S.flag(draw):
        size = S.integer(draw, 1 if n else 0, max(n, 1) + 1)
    else:
        parts = [S.integer(draw, 0, n) for _ in range(S.integer(draw, 1, 3))]
        if S.integer(draw, 0, 7):
            parts[-1] = max(0, n - sum(parts[:-1]))
            parts = parts if sum(parts) == n else [n]
        size = parts
    return _positional_or_keyword(draw, (x, size), d)


def _positional_or_keyword(draw, args, d):
    """``args + (d,)``, or ``args`` with ``dim=d``."""
    return make_case(draw, args + (d,)) if S.flag(draw) else make_case(draw, args, {"dim": d})


def chunk(draw):
    x = S.array(draw, None, FLOAT, min_dims=1)
    return make_case(draw, (x, S.integer(draw, 0 if S.integer(draw, 0, 15) == 0 else 1, 6),
                        S.dim(draw, x.ndim)))


def joined(stack):
    """A list of tensors and a dim for cat (sizes differ along dim) or stack (same shapes)."""
    def gen(draw):
        ts, d = tensor_list(draw, same_shape=stack)
        return _positional_or_keyword(draw, (ts,), d)
    return gen


def _basic_item(draw, n):
    kind = S.choice(draw, ("int", "slice", "slice", "none", "ellipsis"))
    if kind == "int":
        return S.integer(draw, -n - (1 if S.integer(draw, 0, 15) == 0 else 0), max(n - 1, 0))
    if kind == "slice":
        a = S.choice(draw, (None, S.integer(draw, -n - 1, n + 1)))
        b = S.choice(draw, (None, S.integer(draw, -n - 1, n + 1)))
        step = S.choice(draw, (None, 1, 2, 3) + ((-1,) if S.integer(draw, 0, 15) == 0 else ()))
        return slice(a, b, step)
    return None if kind == "none" else Ellipsis


def index(draw, shp):
    """An index for ``x[index]``: basic items, an int (Const) index tensor / list, or a bool mask."""
    kind = S.choice(draw, ("basic", "basic", "int_tensor", "int_list", "mask", "mask_dim0", "mixed"))
    if kind == "basic" or not shp:
        items = [_basic_item(draw, shp[i] if i < len(shp) else 1)
                 for i in range(S.integer(draw, 1, max(len(shp), 1)))]
        items = [it for k, it in enumerate(items) if it is not Ellipsis or Ellipsis not in items[:k]]
        return tuple(items) if len(items) != 1 or S.flag(draw) else items[0]
    if kind in ("int_tensor", "int_list"):
        ix = index_tensor(draw, shp[0], S.shape(draw, 1, 2, 0, 3))
        if S.flag(draw):
            ix = np.where(ix > 0, ix - shp[0], ix) if shp[0] else ix
        return Const(ix) if kind == "int_tensor" else ix.tolist()
    if kind == "mask":
        return Const(np.random.default_rng(S.seed(draw)).random(shp) < 0.5)
    if kind == "mask_dim0":
        return Const(np.random.default_rng(S.seed(draw)).random(shp[:1]) < 0.5)
    ix = index_tensor(draw, shp[-1], (S.integer(draw, 0, 3),))
    return (slice(None), Ellipsis, Const(ix)) if len(shp) > 1 else (Ellipsis, Const(ix))


def getitem(draw):
    x = S.array(draw, None, ALL, min_dims=0, max_side=4)
    return make_case(draw, (x, index(draw, x.shape)))


def setitem(draw):
    """x, an index, and a value: a number or a tensor of the indexed shape (or broadcastable)."""
    x = S.array(draw, None, FLOAT + ("int64",), min_dims=0, max_side=4)
    idx = index(draw, x.shape)
    try:
        sel = np.empty(x.shape)[_np_index(idx)].shape
    except (IndexError, ValueError, TypeError):
        sel = ()
    if S.flag(draw):
        v = S.scalar(draw, "float" if x.dtype.kind == "f" else "int")
    else:
        vs = tuple(1 if S.integer(draw, 0, 3) == 0 else s for s in sel)
        vs = vs[S.integer(draw, 0, len(vs)):] if vs else vs
        v = S.fill(draw, vs, x.dtype.name)
    return make_case(draw, (x, idx, v))


def _np_index(idx):
    if isinstance(idx, tuple):
        return tuple(_np_index(i) for i in idx)
    if isinstance(idx, Const):
        return idx.array
    return np.asarray(idx) if isinstance(idx, list) else idx


def index_select(draw):
    x = S.array(draw, None, FLOAT, min_dims=0)
    d = S.dim(draw, x.ndim)
    n = x.shape[d] if x.ndim and -x.ndim <= d < x.ndim else 1
    ix = index_tensor(draw, n, (S.integer(draw, 0, 5),))
    dt = S.choice(draw, ("int64", "int64", "int32"))
    return make_case(draw, (x, d, Const(ix.astype(dt))))


def masked(fill):
    """x and a broadcastable bool mask (and for masked_fill a number or 0-d tensor value)."""
    def gen(draw):
        sa, sb = S.broadcast_pair(draw, 2)
        if fill:
            sb = sb[len(sb) - min(len(sb), len(sa)):]
        x = S.fill(draw, sa, S.dtype(draw, FLOAT + ("int64",)))
        mask = Const(np.random.default_rng(S.seed(draw)).random(sb) < 0.5)
        if not fill:
            return make_case(draw, (x, mask))
        v = S.scalar(draw, "float" if x.dtype.kind == "f" else "int")
        value = Const(np.array(v, x.dtype)) if S.integer(draw, 0, 3) == 0 else v
        return make_case(draw, (x, mask, value))
    return gen


def where(draw):
    """A bool condition and two broadcastable operands (tensors or numbers)."""
    sc, sa, sb = S.broadcast_pair(draw, 3)
    cond = Const(np.random.default_rng(S.seed(draw)).random(sc) < 0.5)
    dts = FLOAT + ("int64",)
    a = S.fill(draw, sa, S.dtype(draw, dts)) if S.integer(draw, 0, 3) else S.scalar(draw, "float")
    b = S.fill(draw, sb, S.dtype(draw, dts)) if S.integer(draw, 0, 3) else S.scalar(draw, "int")
    return make_case(draw, (cond, a, b))


def nonzero(draw):
    x = S.array(draw, None, ALL, styles=("ints",), lo=-1, hi=1)
    return make_case(draw, (x,), {"as_tuple": True} if S.flag(draw) else {})


def cast(draw):
    """x and a dtype (as the dtype, a dtype= keyword or a tensor to take it from)."""
    x = S.array(draw, None, ALL, lo=-3, hi=3)
    dt = S.choice(draw, ALL)
    how = S.choice(draw, ("positional", "keyword", "tensor"))
    if how == "positional":
        return make_case(draw, (x, DT(dt)))
    if how == "keyword":
        return make_case(draw, (x,), {"dtype": DT(dt)})
    return make_case(draw, (x, Const(np.zeros((1,), dt))))
