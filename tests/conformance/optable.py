"""THE conformance table: every public op of newch, how to draw its inputs, and what to compare.

Each row (``entry.Op`` / ``Layer`` / ``Optim``) is run on newch and on PyTorch
by ``test_conformance.py``: values, shapes, dtypes and gradients must agree, and
where torch raises newch must raise too. ``calls`` keys are the public
spellings a row covers; ``tools/conformance_report.py`` reads them to say which PyTorch
names are checked here, and ``test_table_complete.py`` fails when a public
newch op has no row (or is not listed in ``NOT_OPS`` with the reason).

This file holds the tensor operations; ``optable_nn`` adds functional, layers
and optimizers; ``TABLE`` is the whole list.
"""
import numpy as np

from . import gens as G
from . import gens_shape as GS
from . import gens_norm as GN
from . import strategies as S
from .cases import Case, Const, DT, Raw
from .entry import (Op, augmented, fn, functional, inplace, method, newch_only, operator, same,
                    spellings)
from .strategies import ALL, FLOAT, INT

ST = ("uniform", "ints")
SPECIAL = ("uniform", "ints", "special")
LOOSE = {"float32": (1e-4, 1e-5)}          # float32 sums over many elements / chained ops
BITS = INT + ("bool",)


def bad(*args, **kwargs):
    """A fixed invalid input (torch raises on it)."""
    return Case(args, kwargs)


def f32(*shape):
    return np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) / 4 - 1


def unary(name, forms="fm", extra=None, dtypes=ALL, lo=-3.0, hi=3.0, styles=ST, kw=None, **opts):
    """A row for an elementwise op of one tensor."""
    return Op(name, G.unary(dtypes, lo, hi, styles, kw), {**spellings(name, forms), **(extra or {})},
              **opts)


def unary_(name, forms="fm", lo=-3.0, hi=3.0, dtypes=ALL):
    """A row for an in-place elementwise op (run on a clone of the drawn tensor)."""
    return Op(name, G.unary(dtypes, lo, hi), inplace(name, forms))


def binary(name, forms="fm", extra=None, dtypes=ALL, other=None, lo=-3.0, hi=3.0, olo=None, ohi=None,
           kw=None, scalars=True, **opts):
    """A row for a broadcasting op of two operands (the second may be a number or 0-d)."""
    gen = G.binary(dtypes, other, lo, hi, olo, ohi, scalars, kw=kw)
    return Op(name, gen, {**spellings(name, forms), **(extra or {})}, **opts)


def _alpha(draw, a):
    return {"alpha": S.choice(draw, (2, -1, 0.5))} if S.integer(draw, 0, 2) == 0 else {}


def _rounding(draw, a):
    return {"rounding_mode": S.choice(draw, (None, "trunc", "floor"))} if S.flag(draw) else {}


def _decimals(draw, x):
    return {"decimals": S.integer(draw, -1, 2)} if S.integer(draw, 0, 2) == 0 else {}


def ops(dunders):
    """Operator spellings from {dunder: call}."""
    out = {}
    for d, c in dunders.items():
        out.update(operator(d, c))
    return out


MATH = [
    unary("neg", extra={**spellings("negative", "fm"), **operator("__neg__", lambda m, x: -x),
                        **operator("__pos__", lambda m, x: +x)}),
    unary("abs", extra={**spellings("absolute", "fm"), **operator("__abs__", lambda m, x: abs(x))}),
    unary("exp"), unary("expm1"), unary("exp2"),
    unary("log", lo=-0.5, hi=5.0), unary("log2", lo=-0.5, hi=5.0), unary("log1p", lo=-0.9, hi=5.0),
    unary("sqrt", lo=0.0, hi=5.0), unary("rsqrt", lo=0.0, hi=5.0),
    unary("sin"), unary("cos"), unary("tan", lo=-1.4, hi=1.4), unary("tanh"), unary("sigmoid"),
    unary("asin", lo=-0.99, hi=0.99), unary("acos", lo=-0.99, hi=0.99), unary("atan"),
    unary("sinh"), unary("cosh"), unary("erf"), unary("erfinv", dtypes=FLOAT, lo=-0.999, hi=0.999), unary("relu"), unary("square"),
    unary("reciprocal"), unary("sign"),
    unary("floor"), unary("ceil"), unary("trunc", extra=spellings("fix", "fm")),
    unary("round", kw=_decimals),
    unary("logical_not", grad=False),
    unary("isnan", styles=SPECIAL, grad=False), unary("isinf", styles=SPECIAL, grad=False),
    unary("isfinite", styles=SPECIAL, grad=False),
    unary("silu", forms="n", extra={"newch.silu": newch_only("silu", functional("silu")[1])}),
    Op("gelu", G.unary(ALL, kw=lambda d, x: {"approximate": S.choice(d, ("none", "tanh"))}
                       if S.flag(d) else {}),
       {"newch.gelu": newch_only("gelu", functional("gelu")[1])}),
    Op("elu", G.unary(ALL, kw=lambda d, x: {"alpha": S.choice(d, (1.0, 0.5, -0.3))}),
       {"newch.elu": newch_only("elu", functional("elu")[1])}),
    Op("leaky_relu", G.unary(ALL, kw=lambda d, x: {"negative_slope": S.choice(d, (0.01, 0.2, -0.5))}),
       {"newch.leaky_relu": newch_only("leaky_relu", functional("leaky_relu")[1])}),
    unary_("neg_"), unary_("abs_"), unary_("exp_"), unary_("log_", lo=0.1, hi=5.0),
    unary_("sqrt_", lo=0.0, hi=5.0), unary_("sigmoid_"), unary_("tanh_"), unary_("relu_"),
    unary_("floor_"), unary_("round_"),
    binary("add", kw=_alpha, extra={
        **ops({"__add__": lambda m, a, b: a + b, "__radd__": lambda m, a, b: b + a}),
        **augmented("__iadd__", lambda c, b: c.__iadd__(b))}),
    binary("sub", kw=_alpha, extra={
        **ops({"__sub__": lambda m, a, b: a - b, "__rsub__": lambda m, a, b: b - a}),
        **augmented("__isub__", lambda c, b: c.__isub__(b))}),
    binary("mul", extra={
        **ops({"__mul__": lambda m, a, b: a * b, "__rmul__": lambda m, a, b: b * a}),
        **augmented("__imul__", lambda c, b: c.__imul__(b))}),
    binary("true_divide", olo=0.25, ohi=3.0),
    binary("div", olo=0.25, ohi=3.0, kw=_rounding, extra={
        **spellings("divide", "fm"),
        **ops({"__truediv__": lambda m, a, b: a / b}),
        **augmented("__itruediv__", lambda c, b: c.__itruediv__(b))}),
    binary("rtruediv", forms="", extra=ops({"__rtruediv__": lambda m, a, b: b / a})),
    binary("floor_divide", extra=ops({"__floordiv__": lambda m, a, b: a // b,
                                      "__rfloordiv__": lambda m, a, b: b // a})),
    binary("remainder", extra=ops({"__mod__": lambda m, a, b: a % b,
                                   "__rmod__": lambda m, a, b: b % a})),
    binary("fmod"),
    binary("pow", dtypes=FLOAT + INT, lo=0.0, hi=3.0, olo=-2.0, ohi=3.0,
           extra=ops({"__pow__": lambda m, a, b: a ** b, "__rpow__": lambda m, a, b: b ** a}),
           bad=[bad(np.array([2, 3]), -1)]),
    binary("maximum", scalars=False), binary("minimum", scalars=False),
    binary("atan2", dtypes=FLOAT + ("int64",), scalars=False),
    binary("eq", grad=False, extra={**spellings("ne", "fm"), **ops({
        "__eq__": lambda m, a, b: a == b, "__ne__": lambda m, a, b: a != b})}),
    binary("lt", grad=False, extra={**spellings("less", "fm"), **spellings("gt", "fm"),
                                    **spellings("greater", "fm"), **ops({
                                        "__lt__": lambda m, a, b: a < b,
                                        "__gt__": lambda m, a, b: a > b})}),
    binary("le", grad=False, extra={**spellings("less_equal", "fm"), **spellings("ge", "fm"),
                                    **spellings("greater_equal", "fm"), **spellings("not_equal", "fm"),
                                    **ops({"__le__": lambda m, a, b: a <= b,
                                           "__ge__": lambda m, a, b: a >= b})}),
    binary("logical_and", grad=False, scalars=False, extra={**spellings("logical_or", "fm"),
                                             **spellings("logical_xor", "fm")}),
    binary("bitwise_and", dtypes=BITS, grad=False, extra={
        **spellings("bitwise_or", "fm"), **spellings("bitwise_xor", "fm"),
        **ops({"__and__": lambda m, a, b: a & b, "__rand__": lambda m, a, b: b & a,
               "__or__": lambda m, a, b: a | b, "__ror__": lambda m, a, b: b | a,
               "__xor__": lambda m, a, b: a ^ b, "__rxor__": lambda m, a, b: b ^ a})},
           bad=[bad(f32(2), f32(2))]),
    unary("invert", forms="", dtypes=BITS, grad=False,
          extra=operator("__invert__", lambda m, x: ~x), bad=[bad(f32(2))]),
    Op("add_", G.binary(ALL), {**inplace("add_", "nm"), **inplace("sub_", "nm"),
                              **inplace("mul_", "nm")}),
    Op("div_", G.binary(ALL, olo=0.25, ohi=3.0), {**inplace("div_", "nm"),
                                                 **inplace("remainder_", "nm")}),
    Op("pow_", G.binary(FLOAT, lo=0.0, hi=3.0), inplace("pow_", "nm")),
]

REDUCTIONS = [
    Op("sum", G.reduction(ALL, kw=lambda d, x: {"dtype": DT(S.choice(d, ("float64", "int64")))}
                          if S.integer(d, 0, 3) == 0 else {}), spellings("sum", "fm"), tol=LOOSE),
    Op("nansum", G.reduction(FLOAT, styles=SPECIAL), spellings("nansum", "fm"), tol=LOOSE),
    Op("mean", G.reduction(ALL), spellings("mean", "fm"), tol=LOOSE),
    Op("var", G.reduction(FLOAT, keepdim=False, empty_tuple=False, kw=lambda d, x: {
        "keepdim": S.flag(d), **({"correction": S.choice(d, (0, 1))} if S.flag(d) else {})}),
       {**spellings("var", "fm"), **spellings("std", "fm")}, tol=LOOSE, gtol=LOOSE),
    Op("var_unbiased", G.reduction(FLOAT, keepdim=False, empty_tuple=False,
                                   kw=lambda d, x: {"unbiased": S.flag(d)}),
       {**spellings("var", "fm"), **spellings("std", "fm")}, tol=LOOSE, gtol=LOOSE),
    Op("prod", G.reduction(ALL, dim_tuple=False, lo=-2.0, hi=2.0), spellings("prod", "fm"),
       tol=LOOSE, gtol=LOOSE),
    Op("max", G.reduction(ALL, dim_tuple=False, styles=SPECIAL), {**spellings("max", "fm"),
                                                                  **spellings("min", "fm")}),
    Op("max_binary", G.binary(ALL), {**spellings("max", "fm"), **spellings("min", "fm")}),
    Op("amax", G.reduction(ALL, styles=SPECIAL), {**spellings("amax", "fm"),
                                                  **spellings("amin", "fm")}),
    Op("argmax", G.reduction(ALL, dim_tuple=False, styles=SPECIAL),
       {**spellings("argmax", "fm"), **spellings("argmin", "fm")}),
    Op("logsumexp", G.reduction(FLOAT, dim_none=False, styles=SPECIAL, lo=-20, hi=20,
                                empty_tuple=False),
       spellings("logsumexp", "fm"), tol=LOOSE, gtol=LOOSE),
    Op("all", G.reduction(ALL, lo=-1, hi=1), {**spellings("all", "fm"), **spellings("any", "fm")}),
]

LINALG = [
    Op("matmul", G.matmul_pair(), {**spellings("matmul", "fm"), **ops({
        "__matmul__": lambda m, a, b: a @ b, "__rmatmul__": lambda m, a, b: b.__rmatmul__(a)})},
       tol=LOOSE, gtol=LOOSE, bad=[bad(f32(2, 3), f32(2, 3)), bad(f32(3), np.zeros((3,), np.float64))]),
    Op("mm", G.matmul_pair(2), spellings("mm", "fm"), tol=LOOSE, gtol=LOOSE,
       bad=[bad(f32(3), f32(3, 2))]),
    Op("bmm", G.matmul_pair(3), spellings("bmm", "fm"), tol=LOOSE, gtol=LOOSE,
       bad=[bad(f32(3, 2), f32(2, 3))]),
] + GN.NORMS

SELECTION = [
    Op("where", GS.where, spellings("where", "f")),
    Op("Tensor.where", GS.where, {"Tensor.where": same(
        lambda m, c, a, b: (a if isinstance(a, m.Tensor) else m.tensor(a)).where(c, b))}),
    Op("where_cond", G.unary(ALL, lo=-1, hi=1), {"torch.where": fn("where")}, grad=False),
    Op("clamp", G.unary(ALL, kw=lambda d, x: {
        k: (S.scalar(d, "float") if S.integer(d, 0, 2) else Const(S.fill(d, x.shape[1:], "float32")))
        for k in S.choice(d, (("min",), ("max",), ("min", "max"), ()))}),
       {**spellings("clamp", "fm"), **spellings("clip", "fm")}),
    Op("clamp_tensor", G.ternary(FLOAT, scalar_third=False, first_widest=True),
       {"torch.clamp": same(lambda m, x, lo, hi: m.clamp(x, lo, hi)),
        "Tensor.clip": same(lambda m, x, lo, hi: x.clip(min=lo, max=hi))}),
    Op("clamp_min", G.binary(FLOAT), {**spellings("clamp_min", "fm"), **spellings("clamp_max", "fm")}),
    Op("clamp_", G.unary(FLOAT, kw=lambda d, x: {"min": -1.0, "max": S.scalar(d, "float")}),
       {**inplace("clamp_", "fm"), **inplace("clip_", "fm")}),
    Op("clamp_min_", G.unary(FLOAT, kw=lambda d, x: {"min": S.scalar(d, "float")}),
       {**inplace("clamp_min_", "fm")}),
    Op("clamp_max_", G.unary(FLOAT, kw=lambda d, x: {"max": S.scalar(d, "float")}),
       {**inplace("clamp_max_", "fm")}),
    Op("masked_fill", GS.masked(fill=True), spellings("masked_fill", "fm"),
       bad=[bad(f32(2, 2), Const(np.ones((3,), bool)), 1.0)]),
    Op("masked_fill_", GS.masked(fill=True), inplace("masked_fill_", "nm")),
    Op("lerp", G.ternary(FLOAT), spellings("lerp", "fm")),
    Op("lerp_", G.ternary(FLOAT), inplace("lerp_", "nm")),
    Op("addcmul", G.ternary(FLOAT, scalar_third=False, kw=lambda d, x: {"value": 0.5} if S.flag(d)
                            else {}), {**spellings("addcmul", "fm"), **inplace("addcmul_", "nm")}),
    Op("addcdiv", G.ternary(FLOAT, third_lo=0.5, third_hi=3.0, scalar_third=False,
                            kw=lambda d, x: {"value": -2} if S.flag(d) else {}),
       {**spellings("addcdiv", "fm"), **inplace("addcdiv_", "nm")}),
]


def _casts(dt):
    return method(dt)


SHAPES = [
    Op("reshape", GS.reshape(varargs=False), spellings("reshape", "f")),
    Op("Tensor.reshape", GS.reshape(), spellings("reshape", "m")),
    Op("view", GS.reshape(), {**spellings("view", "mn")},
       bad=[bad(f32(2, 3), 4), bad(f32(2, 3), -1, -1)]),
    Op("view_noncontiguous", G.unary(FLOAT, min_dims=2),
       {"Tensor.view": same(lambda m, x: x.transpose(0, -1).view(-1))}),
    Op("reshape_as", GS.like("reshape"), {**spellings("reshape_as", "mn"),
                                          **spellings("view_as", "mn")}),
    Op("expand_as", GS.like("expand"), spellings("expand_as", "mn")),
    Op("expand", GS.expand, spellings("expand", "mn")),
    Op("flatten", GS.flatten, spellings("flatten", "fm")),
    Op("unflatten", GS.unflatten, spellings("unflatten", "fm")),
    Op("squeeze", GS.squeeze, spellings("squeeze", "fm")),
    Op("unsqueeze", G.dim_op(ALL, extra_rank=1), spellings("unsqueeze", "fm")),
    Op("permute", GS.permutation(varargs=False), spellings("permute", "f")),
    Op("Tensor.permute", GS.permutation(), spellings("permute", "m")),
    Op("transpose", GS.two_dims, {**spellings("transpose", "fm"), **spellings("swapaxes", "fm"),
                                  **spellings("swapdims", "fm"), **spellings("movedim", "fm")}),
    Op("t", G.unary(ALL, max_dims=3), spellings("t", "fm")),
    Op("T", G.unary(ALL, max_dims=2), {"Tensor.T": same(lambda m, x: x.T)}),
    Op("mT", G.unary(ALL, max_dims=4), {"Tensor.mT": same(lambda m, x: x.mT)},
       lenient=lambda case: case.args[0].ndim == 0),
    Op("contiguous", G.unary(ALL, min_dims=2),
       {"Tensor.contiguous": same(lambda m, x: x.transpose(0, 1).contiguous()),
        "newch.contiguous": (lambda m, x: m.contiguous(x.transpose(0, 1)),
                             lambda m, x: x.transpose(0, 1).contiguous())}),
    Op("clone", G.unary(ALL), spellings("clone", "fm")),
    Op("detach", G.unary(ALL), spellings("detach", "fm")),
    Op("detach_", G.unary(FLOAT), {"Tensor.detach_": same(lambda m, x: x.clone().detach_()),
                                   "torch.detach_": same(lambda m, x: m.detach_(x.clone()))}),
    Op("to", GS.cast, {**spellings("to", "mn"), **spellings("type_as", "mn")}),
    Op("casts", G.unary(ALL), {f"Tensor.{c}": _casts(c)
                               for c in ("float", "double", "long", "int", "bool", "byte")}),
    Op("select", GS.select, spellings("select", "fm")),
    Op("narrow", GS.narrow, spellings("narrow", "fm")),
    Op("split", GS.split, spellings("split", "fm")),
    Op("chunk", GS.chunk, spellings("chunk", "fm")),
    Op("unbind", G.dim_op(FLOAT, min_dims=1), spellings("unbind", "fm")),
    Op("cat", GS.joined(stack=False), {**spellings("cat", "f"), **spellings("concat", "f")},
       bad=[bad([]), bad([f32(2, 3), f32(3, 2)])]),
    Op("stack", GS.joined(stack=True), spellings("stack", "f"), bad=[bad([f32(2), f32(3)])]),
]

def _reads_nothing(case):
    """torch checks integer indices only for elements it reads; newch checks them all."""
    return case.args[0].size == 0


INDEXING = [
    Op("getitem", GS.getitem, operator("__getitem__", lambda m, x, i: x[i]), lenient=_reads_nothing,
       bad=[bad(f32(3), 3), bad(f32(3), slice(None, None, -1)), bad(f32(2), Const(np.zeros(1)))]),
    Op("setitem", GS.setitem, {"Tensor.__setitem__": same(lambda m, x, i, v: _set(x, i, v))},
       lenient=_reads_nothing),
    Op("gather", G.gather_like(), spellings("gather", "fm")),
    Op("scatter_add", G.gather_like(scatter=True), {**spellings("scatter_add", "fm"),
                                                    **inplace("scatter_add_", "nm")}),
    Op("index_select", GS.index_select, spellings("index_select", "fm"),
       bad=[bad(f32(3), 0, Const(np.zeros((1,), np.float32))), bad(f32(3), 0, Const([[0]]))]),
    Op("masked_select", GS.masked(fill=False), spellings("masked_select", "fm")),
    Op("nonzero", GS.nonzero, spellings("nonzero", "fm"), grad=False),
]


def _set(x, index, value):
    c = x.clone()
    c[index] = value
    return c


def _data(draw):
    """Data for tensor(): nested lists, a numpy array or a number; sometimes dtype= as well."""
    x = S.array(draw, None, ALL, max_dims=3)
    how = S.choice(draw, ("list", "list", "array", "number"))
    data = x.tolist() if how == "list" else (Raw(x) if how == "array" else
                                             S.scalar(draw, S.choice(draw, ("float", "int", "bool"))))
    kw = {"dtype": DT(S.choice(draw, ALL))} if S.flag(draw) else {}
    if S.integer(draw, 0, 4) == 0:
        kw["requires_grad"] = True
    return G.make_case(draw, (data,), kw)


def _like_kw(draw, x):
    return {"dtype": DT(S.choice(draw, FLOAT))} if S.flag(draw) else {}


def _arange(draw):
    kind = S.choice(draw, ("int", "float"))
    vals = [S.scalar(draw, kind, -6, 6) for _ in range(S.integer(draw, 1, 3))]
    if len(vals) == 3 and S.integer(draw, 0, 7):
        vals[2] = vals[2] or 1
        if (vals[1] - vals[0]) * vals[2] < 0:
            vals[2] = -vals[2]
    if len(vals) >= 2 and len(vals) < 3 and vals[1] < vals[0] and S.integer(draw, 0, 7):
        vals = vals[::-1]
    kw = {"dtype": DT(S.choice(draw, ("float32", "float64", "int64")))} if S.flag(draw) else {}
    return G.make_case(draw, tuple(vals) if len(vals) > 1 or vals[0] >= 0 else (abs(vals[0]),), kw)


def _range_prop(lo, hi):
    def check(out, case):
        a = out.numpy() if not isinstance(out, tuple) else out[0].numpy()
        assert a.size == 0 or (a.min() >= lo and a.max() < hi), f"values outside [{lo}, {hi})"
    return check


def _randint(draw):
    shp = S.shape(draw, 0, 3, 0, 4)
    lo, hi = S.integer(draw, -5, 5), S.integer(draw, -5, 10)
    if S.flag(draw):
        return G.make_case(draw, (max(hi, 0), shp))
    return G.make_case(draw, (lo, hi, shp))


def _randint_prop(out, case):
    lo, hi = (0, case.args[0]) if len(case.args) == 2 else case.args[:2]
    _range_prop(lo, hi)(out, case)


def _random_like(name, dtypes=FLOAT):
    return Op(name, G.unary(dtypes, kw=_like_kw if dtypes == FLOAT else None),
              spellings(name, "f"), values=False, grad=False)


CREATION = [
    Op("tensor", _data, spellings("tensor", "f"), grad=False),
    Op("as_tensor", lambda d: G.make_case(d, (Raw(S.array(d, None, ALL)),),
                                      {"dtype": DT(S.choice(d, ALL))} if S.flag(d) else {}),
       spellings("as_tensor", "f"), grad=False),
    Op("from_numpy", lambda d: G.make_case(d, (Raw(S.array(d, None, ALL)),)),
       spellings("from_numpy", "f"), grad=False),
    Op("scalar_tensor", lambda d: G.make_case(d, (S.scalar(d, S.choice(d, ("float", "int", "bool"))),),
                                          {"dtype": DT(S.choice(d, ALL))} if S.flag(d) else {}),
       spellings("scalar_tensor", "f"), grad=False),
    Op("zeros", G.creation("all"), {**spellings("zeros", "f"), **spellings("ones", "f")}, grad=False),
    Op("empty", G.creation("all"), spellings("empty", "f"), grad=False, values=False),
    Op("full", lambda d: G.make_case(d, (S.shape(d, 0, 3, 0, 4), S.scalar(d, S.choice(
        d, ("float", "int", "bool")))), {"dtype": DT(S.choice(d, ALL))} if S.flag(d) else {}),
       spellings("full", "f"), grad=False),
    Op("zeros_like", G.unary(ALL, kw=_like_kw), {**spellings("zeros_like", "f"),
                                                 **spellings("ones_like", "f")}, grad=False),
    Op("empty_like", G.unary(ALL, kw=_like_kw), spellings("empty_like", "f"), grad=False,
       values=False),
    Op("full_like", G.unary(ALL, kw=lambda d, x: {"fill_value": S.scalar(d, "int")}),
       spellings("full_like", "f"), grad=False),
    Op("arange", _arange, spellings("arange", "f"), grad=False, bad=[bad(0, 3, 0), bad(3, 0, 1)]),
    Op("linspace", lambda d: G.make_case(d, (S.scalar(d, "float"), S.scalar(d, "float"),
                                         S.integer(d, 0, 7)),
                                     {"dtype": DT(S.choice(d, FLOAT))} if S.flag(d) else {}),
       spellings("linspace", "f"), grad=False, bad=[bad(0.0, 1.0, -1)]),
    Op("eye", lambda d: G.make_case(d, (S.integer(d, 0, 4),) + ((S.integer(d, 0, 4),) if S.flag(d) else ()),
                                {"dtype": DT(S.choice(d, ALL))} if S.flag(d) else {}),
       spellings("eye", "f"), grad=False, bad=[bad(-1)]),
    Op("rand", G.creation("float"), spellings("rand", "f"), values=False, grad=False,
       prop=_range_prop(0.0, 1.0)),
    Op("randn", G.creation("float"), spellings("randn", "f"), values=False, grad=False),
    Op("randint", _randint, spellings("randint", "f"), values=False, grad=False,
       prop=_randint_prop, bad=[bad(3, 3, (2,))]),
    Op("randperm", lambda d: G.make_case(d, (S.integer(d, 0, 9),)), spellings("randperm", "f"),
       values=False, grad=False,
       prop=lambda out, case: np.testing.assert_array_equal(np.sort(out.numpy()),
                                                            np.arange(case.args[0]))),
    _random_like("rand_like"), _random_like("randn_like"),
    Op("randint_like", G.unary(FLOAT + ("int64",), kw=lambda d, x: {"high": S.integer(d, 1, 9)}),
       spellings("randint_like", "f"), values=False, grad=False),
    Op("normal_", G.unary(FLOAT), inplace("normal_", "nm"), values=False, grad=False),
    Op("uniform_", G.unary(FLOAT), inplace("uniform_", "nm"), values=False, grad=False,
       prop=_range_prop(0.0, 1.0)),
    Op("bernoulli_", G.unary(FLOAT), inplace("bernoulli_", "nm"), values=False, grad=False,
       prop=lambda out, case: np.testing.assert_array_equal(
           np.isin(out[0].numpy(), (0.0, 1.0)), True)),
    Op("fill_", G.unary(ALL, kw=lambda d, x: {"value": S.scalar(d, "int")}),
       {**inplace("fill_", "fm"), **inplace("zero_", "fm")}),
    Op("copy_", G.binary(ALL, scalars=False), inplace("copy_", "nm")),
]


def _grad_modes(m, x):
    with m.no_grad():
        a = x * 2
        with m.enable_grad():
            b = x * 3
        inner = m.is_grad_enabled()
    with m.set_grad_enabled(False):
        c = x + 1
    with m.inference_mode():
        d = x - 1
    return a, b, c, d, inner, m.is_grad_enabled(), m.no_grad()(lambda y: y * 4)(x)


def _default_dtype(m, x):
    old = m.get_default_dtype()
    m.set_default_dtype(m.float64)
    try:
        return m.tensor(x.tolist()), m.arange(2.0), m.zeros(2), m.get_default_dtype()
    finally:
        m.set_default_dtype(old)


def _seeded(m, s):
    m.manual_seed(s)
    a = m.rand(3)
    m.manual_seed(s)
    return (a == m.rand(3)).all()


MISC = [
    Op("promote_types", lambda d: Case((DT(S.choice(d, ALL)), DT(S.choice(d, ALL))),),
       spellings("promote_types", "f"), grad=False, examples=30),
    Op("default_dtype", G.unary(FLOAT, max_dims=1),
       {"torch.set_default_dtype": same(_default_dtype),
        "torch.get_default_dtype": same(lambda m, x: m.get_default_dtype())},
       grad=False, bad=[Case((np.float32(1),), {})] and []),
    Op("set_default_dtype_int", lambda d: Case((DT("int64"),)), spellings("set_default_dtype", "f"),
       grad=False, examples=1),
    Op("manual_seed", lambda d: Case((S.integer(d, 0, 1000),)), {"torch.manual_seed": same(_seeded)},
       grad=False, examples=5),
    Op("grad_modes", G.unary(FLOAT), {
        "torch.no_grad": same(_grad_modes), "torch.enable_grad": same(_grad_modes),
        "torch.set_grad_enabled": same(_grad_modes), "torch.is_grad_enabled": same(_grad_modes),
        "torch.inference_mode": same(_grad_modes)}, examples=5),
    Op("is_tensor", G.unary(ALL), {"torch.is_tensor": same(lambda m, x: (m.is_tensor(x),
                                                                         m.is_tensor(x.tolist()))),
                                   "torch.numel": fn("numel")}, grad=False),
]

def _autograd_attrs(m, x):
    y = x * 2
    y.retain_grad()
    (y * y).sum().backward()
    return (y.retains_grad, y.grad, x.grad, y.grad_fn is not None, x.grad_fn is None, x.data,
            x.data.requires_grad, y.requires_grad, y.detach().requires_grad)


def _autograd_fns(m, x):
    """autograd.grad (with create_graph, for a second derivative) and autograd.backward."""
    (gx,) = m.autograd.grad((x * x * x).sum(), x, create_graph=True)
    m.autograd.backward([(gx * gx).sum()])
    return gx.detach(), x.grad


def _custom_function(m, x):
    """A user-written autograd.Function (forward / backward / save_for_backward)."""
    class Cube(m.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t * t * t

        @staticmethod
        def backward(ctx, g):
            (t,) = ctx.saved_tensors
            return g * 3 * t * t
    return Cube.apply(x)


def _backward_sum(x):
    y = (x * x).sum() if x.dtype.is_floating_point else x
    y.backward() if y.requires_grad else None
    return x.grad


BASICS = [
    Op("item", G.unary(ALL, max_dims=2, max_side=1), {"Tensor.item": method("item")}, grad=False,
       bad=[bad(f32(2))]),
    Op("tolist", G.unary(ALL), {"Tensor.tolist": method("tolist")}, grad=False),
    Op("size", G.dim_op(ALL), {"Tensor.size": method("size"), "Tensor.shape": same(
        lambda m, x, d: tuple(x.shape)), "Tensor.dim": same(lambda m, x, d: x.dim()),
        "Tensor.ndim": same(lambda m, x, d: x.ndim), "Tensor.numel": same(lambda m, x, d: x.numel()),
        "Tensor.nelement": same(lambda m, x, d: x.nelement()),
        "Tensor.element_size": same(lambda m, x, d: x.element_size()),
        "Tensor.itemsize": same(lambda m, x, d: x.itemsize),
        "Tensor.nbytes": same(lambda m, x, d: x.nbytes),
        "Tensor.ndimension": same(lambda m, x, d: x.ndimension()),
        "Tensor.is_floating_point": same(lambda m, x, d: x.is_floating_point()),
        "Tensor.is_complex": same(lambda m, x, d: x.is_complex()),
        # NOTE: an empty tensor's strides depend on how torch made it: compared when non-empty
        "Tensor.stride": same(lambda m, x, d: (x.stride(), x.stride(d) if x.ndim else None,
                                               x.transpose(0, -1).stride() if x.ndim else None)
                              if x.numel() else None),
        "Tensor.is_contiguous": same(lambda m, x, d: (x.is_contiguous(), x.ndim and
                                                      x.transpose(0, -1).is_contiguous())),
        "Tensor.dtype": same(lambda m, x, d: x.dtype),
        "Tensor.__len__": same(lambda m, x, d: len(x))}, grad=False),
    Op("scalar_conversions", G.unary(FLOAT + ("int64", "bool"), max_dims=1, max_side=1),
       {"Tensor.__bool__": same(lambda m, x: bool(x)), "Tensor.__float__": same(lambda m, x: float(x)),
        "Tensor.__int__": same(lambda m, x: int(x)),
        "Tensor.__index__": same(lambda m, x: [10, 20, 30][x] if not x.dtype.is_floating_point
                                 else [10, 20, 30][int(x)])}, grad=False),
    Op("numpy", G.unary(ALL), {"Tensor.numpy": same(lambda m, x: x.detach().numpy()),
                               "Tensor.cpu": same(lambda m, x: x.cpu()),
                               "Tensor.device": same(lambda m, x: str(x.device)),
                               "Tensor.is_cuda": same(lambda m, x: x.is_cuda),
                               "Tensor.is_cpu": same(lambda m, x: x.is_cpu)}, grad=False),
    Op("autograd_attrs", G.unary(FLOAT), {
        "Tensor.grad": same(_autograd_attrs), "Tensor.grad_fn": same(_autograd_attrs),
        "Tensor.retain_grad": same(_autograd_attrs), "Tensor.retains_grad": same(_autograd_attrs),
        "Tensor.data": same(_autograd_attrs), "Tensor.requires_grad": same(_autograd_attrs)}),
    Op("requires_grad_", G.unary(ALL), {
        "Tensor.requires_grad_": same(lambda m, x: x.detach().requires_grad_().requires_grad),
        "Tensor.is_leaf": same(lambda m, x: (x.is_leaf, (x * 1).is_leaf)),
        "Tensor.backward": same(lambda m, x: _backward_sum(x))}),
    Op("autograd", G.unary(FLOAT), {"torch.autograd.grad": same(_autograd_fns),
                                    "torch.autograd.backward": same(_autograd_fns),
                                    "torch.autograd.Function": same(_custom_function)}),
]


from .optable_nn import NN  # noqa: E402  (the nn part of the table reuses the helpers above)
from .optable_compat import COMPAT  # noqa: E402
from .optable_seq import SEQ  # noqa: E402  (issue 14: sequence-model tensor ops)
from .optable_seq_nn import SEQ_NN  # noqa: E402  (issue 14: sequence-model layers)

TABLE = (MATH + REDUCTIONS + LINALG + SELECTION + SHAPES + INDEXING + CREATION + MISC + BASICS + NN
         + COMPAT + SEQ + SEQ_NN)

# Public names that are not operations on values, so no row compares them with torch.
NOT_OPS = {
    "Context": "newch's memory / thread context; torch has no counterpart",
    "default_context": "memory model (newch only)",
    "set_default_context": "memory model (newch only)",
    "step_end": "memory model (newch only)",
    "persistent": "memory model (newch only)",
    "release": "memory model (newch only)",
    "mem_stats": "memory model (newch only)",
    "warmup": "fills the kernel cache (newch only; tests/warmup/test_warmup.py)",
    "NcError": "an exception class",
    "Tensor": "the class (its methods have rows)",
    "Size": "a tuple subclass (compared wherever shapes are)",
    "dtype": "the dtype class (dtypes are compared by name in every row)",
    "autograd": "a module", "optim": "a module", "net": "a module", "nn": "a module",
    "Generator": "a random stream object (newch's streams are PCG64, not torch's; "
                 "tests/data/test_generator.py)",
    "device": "the device class (tests/run/test_runner.py; Tensor.device has a row)",
    "set_num_threads": "thread setting (results do not depend on it)",
    "get_num_threads": "thread setting (results do not depend on it)",
    "compile": "returns its argument unchanged (torch.compile)",
    "save": "file I/O (tests/serialization crosses files with torch)",
    "load": "file I/O (tests/serialization crosses files with torch)",
    "safetensors": "a module",
}
