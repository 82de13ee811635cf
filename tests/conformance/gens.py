"""Input generators for the conformance table, one per family of ops.

Each factory returns ``gen(draw) -> Case``. They cover what the issue asks of
every op: random shapes (0-d, odd sizes, empty dims), broadcasting, negative
and (now and then) out-of-range dims, mixed dtypes, Python-scalar operands,
and values with ties, zeros and, where asked, nan / inf.

Example:
    >>> gen = binary(dtypes=FLOAT)      # two broadcastable float tensors (or a scalar)
    >>> case = gen(draw)
"""
import numpy as np

from . import strategies as S
from .cases import Case, Const, DT
from .strategies import ALL, FLOAT

_KINDS = {"float32": "float", "float64": "float", "int64": "int", "int32": "int", "uint8": "int",
          "bool": "bool"}


def make_case(draw, args, kwargs=None):
    """A Case of ``args`` / ``kwargs`` with a drawn seed for its upstream gradients."""
    return Case(args, kwargs, seed=S.seed(draw))


def unary(dtypes=ALL, lo=-3.0, hi=3.0, styles=("uniform", "ints"), kw=None, **shape_kw):
    """One tensor; ``kw(draw, x)`` may add keyword arguments."""
    def gen(draw):
        x = S.array(draw, None, dtypes, lo, hi, styles, **shape_kw)
        return make_case(draw, (x,), kw(draw, x) if kw else None)
    return gen


def _operand(draw, shp, dtypes, lo, hi, styles, scalars):
    """A tensor of ``shp``, or (if ``scalars``) sometimes a Python number or a 0-d tensor."""
    how = S.choice(draw, ("tensor", "tensor", "scalar", "zerodim") if scalars else ("tensor",))
    dt = S.dtype(draw, dtypes)
    if how == "scalar":
        return S.scalar(draw, _KINDS[dt], lo, hi)
    return S.fill(draw, () if how == "zerodim" else shp, dt, lo, hi, styles)


def binary(dtypes=ALL, other=None, lo=-3.0, hi=3.0, olo=None, ohi=None, scalars=True,
           styles=("uniform", "ints"), kw=None):
    """A tensor and a broadcastable tensor / 0-d tensor / Python number (maybe of another dtype)."""
    def gen(draw):
        sa, sb = S.broadcast_pair(draw)
        a = S.fill(draw, sa, S.dtype(draw, dtypes), lo, hi, styles)
        b = _operand(draw, sb, other or dtypes, lo if olo is None else olo,
                     hi if ohi is None else ohi, styles, scalars)
        return make_case(draw, (a, b), kw(draw, a) if kw else None)
    return gen


def ternary(dtypes=FLOAT, lo=-3.0, hi=3.0, third_lo=None, third_hi=None, scalar_third=True, kw=None,
            first_widest=False):
    """Three broadcastable tensors (the third may be a Python number): lerp, addcmul, addcdiv.

    ``first_widest``: the others broadcast to the first one's shape (clamp's bounds).
    """
    def gen(draw):
        shapes = S.broadcast_pair(draw, 3)
        if first_widest:
            shapes[0] = tuple(_widest(shapes))
        dt = S.dtype(draw, dtypes)
        a, b = (S.fill(draw, s, dt, lo, hi) for s in shapes[:2])
        tl, th = (lo if third_lo is None else third_lo), (hi if third_hi is None else third_hi)
        c = _operand(draw, shapes[2], (dt,), tl, th, ("uniform",), scalar_third)
        return make_case(draw, (a, b, c), kw(draw, a) if kw else None)
    return gen


def _widest(shapes):
    n = max(len(s) for s in shapes)
    padded = [(1,) * (n - len(s)) + tuple(s) for s in shapes]
    return [max(sizes) if 0 not in sizes else 0 for sizes in zip(*padded)]


def reduction(dtypes=ALL, dim_tuple=True, dim_none=True, keepdim=True, lo=-3.0, hi=3.0,
              styles=("uniform", "ints"), kw=None, min_dims=0, empty_tuple=True):
    """One tensor and (positionally or by keyword) dim / keepdim (``dim=()`` only if ``empty_tuple``)."""
    def gen(draw):
        x = S.array(draw, None, dtypes, lo, hi, styles, min_dims=min_dims)
        d = S.dims(draw, x.ndim, allow_none=dim_none, allow_tuple=dim_tuple, allow_empty=empty_tuple)
        extra = kw(draw, x) if kw else {}
        if d is None:
            return make_case(draw, (x,), extra)
        k = S.flag(draw) if keepdim else None
        if S.flag(draw):
            return make_case(draw, (x, d) + ((k,) if k is not None else ()), extra)
        return make_case(draw, (x,), {"dim": d, **({"keepdim": k} if k is not None else {}), **extra})
    return gen


def dim_op(dtypes=ALL, lo=-3.0, hi=3.0, extra_rank=0, kw=None, min_dims=0, styles=("uniform", "ints")):
    """One tensor and one dim (``extra_rank`` widens the valid range: unsqueeze)."""
    def gen(draw):
        x = S.array(draw, None, dtypes, lo, hi, styles, min_dims=min_dims)
        d = S.dim(draw, x.ndim + extra_rank)
        return make_case(draw, (x, d), kw(draw, x) if kw else None)
    return gen


def _fit(shp, n):
    """``shp`` cut or padded with leading 1s to exactly ``n`` dims (broadcast compatibility kept)."""
    if n <= 0:
        return ()
    return ((1,) * n + tuple(shp))[-n:]


def matmul_pair(rank=None):
    """Two float tensors for matmul (ranks 1-4, broadcast batch dims), mm (rank 2), bmm (rank 3).

    Now and then the inner sizes (or bmm's batch sizes) do not match.
    """
    def gen(draw):
        dt = S.dtype(draw, FLOAT)
        n, k, m = (S.integer(draw, 0, 5) for _ in range(3))
        k2 = k if S.integer(draw, 0, 9) else k + 1
        if rank == 2:
            sa, sb = (n, k), (k2, m)
        elif rank == 3:
            b = S.integer(draw, 0, 3)
            sa, sb = (b, n, k), (b if S.integer(draw, 0, 9) else b + 1, k2, m)
        else:
            ra, rb = S.integer(draw, 1, 4), S.integer(draw, 1, 4)
            la, lb = S.broadcast_pair(draw, 2, bad=True, max_dims=2, max_side=3)
            sa = (k,) if ra == 1 else _fit(la, ra - 2) + (n, k)
            sb = (k2,) if rb == 1 else _fit(lb, rb - 2) + (k2, m)
        return make_case(draw, (S.fill(draw, sa, dt), S.fill(draw, sb, dt)))
    return gen


def softmax_like(dtypes=FLOAT, with_dtype=True):
    """A tensor, a dim and sometimes ``dtype=``."""
    def gen(draw):
        x = S.array(draw, None, dtypes, -5.0, 5.0, ("uniform", "ints"))
        d = S.dim(draw, x.ndim)
        kw = {"dtype": DT(S.choice(draw, FLOAT))} if with_dtype and S.flag(draw) else {}
        return make_case(draw, (x, d), kw)
    return gen


def index_tensor(draw, n, shp, bad=True):
    """An int64 index array of ``shp`` with entries valid for a dim of size ``n`` (negative for -n..)."""
    rng = np.random.default_rng(S.seed(draw))
    if n == 0:
        return np.zeros(shp, np.int64)      # out of range unless empty
    ix = np.asarray(rng.integers(0, n, size=shp), np.int64)
    if bad and ix.size and S.integer(draw, 0, 11) == 0:
        ix.flat[0] = n
    return ix


def gather_like(scatter=False):
    """x, dim, index (same rank, each size <= x's off-dim) and for scatter a src."""
    def gen(draw):
        x = S.array(draw, None, FLOAT, min_dims=1)
        d = S.dim(draw, x.ndim)
        dd = d % x.ndim if -x.ndim <= d < x.ndim else 0
        shp = tuple(S.integer(draw, 0, x.shape[i]) if i != dd else S.integer(draw, 0, 4)
                    for i in range(x.ndim))
        if x.shape[dd] == 0 and S.integer(draw, 0, 5):
            shp = shp[:dd] + (0,) + shp[dd + 1:]     # an index into an empty dim must be empty
        ix = Const(np.abs(index_tensor(draw, x.shape[dd], shp)))
        if not scatter:
            return make_case(draw, (x, d, ix))
        src = S.fill(draw, shp, x.dtype.name)
        return make_case(draw, (x, d, ix, src))
    return gen


def tensor_list(draw, same_shape, dtypes=FLOAT):
    """2-3 tensors for cat / stack; for cat they differ along one (drawn) dim."""
    base = S.shape(draw, 0 if same_shape else 1, 3, 0, 4)
    n = S.integer(draw, 1, 3)
    d = S.dim(draw, len(base) + (1 if same_shape else 0))
    out = []
    for _ in range(n):
        shp = list(base)
        if not same_shape and base and -len(base) <= d < len(base):
            shp[d] = S.integer(draw, 0, 3)
        out.append(S.fill(draw, tuple(shp), S.dtype(draw, dtypes)))
    if S.integer(draw, 0, 11) == 0 and len(out) > 1:
        out[-1] = S.fill(draw, tuple(base) + (2,), out[-1].dtype.name)
    return out, d


def creation(kind):
    """Size arguments for zeros / ones / empty / rand / randn: f(2, 3), f((2, 3)) or f([2, 3])."""
    def gen(draw):
        shp = S.shape(draw, 0, 3, 0, 4)
        how = S.choice(draw, ("varargs", "tuple", "list"))
        args = shp if how == "varargs" else (tuple(shp) if how == "tuple" else list(shp),)
        if how == "varargs" and not shp:
            args = ((),)
        dts = FLOAT if kind == "float" else ALL
        kw = {"dtype": DT(S.choice(draw, dts))} if S.flag(draw) else {}
        if S.integer(draw, 0, 15) == 0:
            args = (-1,) + tuple(args[1:]) if how == "varargs" else ((-1,) + tuple(shp[1:]),)
        return make_case(draw, tuple(args), kw)
    return gen
