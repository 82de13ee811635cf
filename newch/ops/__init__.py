"""newch operations: validate input, allocate the output, call a kernel, record the backward.

Every public op is importable from here; ``bind_methods`` makes the ones that
PyTorch also spells as Tensor methods (``x.sum()``, ``x + y``) methods.

Where each op lives (one family per file):

- ``alloc.py``: allocating outputs, reading inputs (the stale check), dims and shapes.
- ``record.py``: attaching a backward to the graph (``record``, ``pack``, ``sum_to``).
- ``pointwise.py``: the elementwise *launcher* (dtype promotion, broadcasting, casts).
- ``layout.py``: strides, contiguity, dimension merging, views without copies.
- ``creation.py``: tensor, zeros, ones, full, arange, linspace, eye, ..._like.
- ``random.py``: randn, rand, randint, randperm, bernoulli, normal_, uniform_.
- ``arith.py``: + - * / // % pow, comparisons, logical and bitwise ops, maximum.
- ``unary.py``: exp, log, sqrt, sin, tanh, sigmoid, abs, floor, ... (``relu.py``: relu).
- ``activation.py``: softmax, log_softmax, gelu, elu, leaky_relu.
- ``select.py``: where, clamp/clip, masked_fill, lerp, addcmul, isnan/isinf/isfinite.
- ``compare.py``: isclose, allclose, equal.
- ``reduce.py``: sum, mean, var, std, prod, nansum, var_mean, std_mean.
- ``extrema.py``: max, min, amax, amin, argmax, argmin, all, any, logsumexp.
- ``norm.py``: norm, vector / matrix norms (``newch.linalg``).
- ``matmul.py``: matmul, mm, bmm; ``products.py``: addmm, outer.
- ``shape.py``: reshape, view, permute, transpose, squeeze, expand, clone, detach, to.
- ``join.py``: cat, stack, split, chunk, unbind, narrow, select.
- ``indexing.py``: ``x[i]``, ``x[i] = v``, gather, index_select, scatter_add, masked_select.
- ``diagonal.py``: diag; ``unique.py``: unique.
- ``inplace.py``: the ``op_`` forms (add_, mul_, clamp_, fill_, copy_, ...).
- ``conv.py``, ``pool.py``, ``pad.py``: convolution, pooling, padding (``nn.functional``).
- ``normalization.py``: batch / layer / group norm; ``dropout.py``; ``loss.py``: nll.
"""
from ..tensor import Tensor
from . import shape
from .activation import elu, gelu, leaky_relu, log_softmax, softmax
from .arith import (add, atan2, bitwise_and, bitwise_or, bitwise_xor, div, eq, floor_divide, fmod, ge, gt,
                    le, logical_and, logical_or, logical_xor, lt, maximum, minimum, mul, ne, pow,
                    rdiv, remainder, rfloordiv, rmod, rpow, rsub, sub)
from .creation import (arange, as_tensor, empty, empty_like, eye, from_numpy, full, full_like, linspace,
                       ones, ones_like, scalar_tensor, tensor, zeros, zeros_like)
from .extrema import all, amax, amin, any, argmax, argmin, logsumexp, max, min
from .indexing import (gather, getitem, index_select, masked_select, nonzero, scatter_add,
                       scatter_add_, setitem)
from .inplace import (abs_, add_, addcdiv_, addcmul_, clamp_, clamp_max_, clamp_min_, clip_, copy_,
                      div_, exp_, fill_, floor_, lerp_, log_, mul_, neg_, pow_, relu_, remainder_,
                      round_, sigmoid_, sqrt_, sub_, tanh_, zero_)
from .join import cat, chunk, concat, narrow, select as select_index, split, stack, unbind
from .matmul import bmm, matmul, mm
from .norms import norm
from .random import (bernoulli_, normal_, rand, rand_like, randint, randint_like, randn, randn_like,
                     randperm, uniform_)
from .reduce import mean, nansum, prod, std, sum, var
from .conditional import (addcdiv, addcmul, clamp, clamp_max, clamp_min, clip, isfinite, isinf, isnan,
                     lerp, masked_fill, masked_fill_, where)
from .shape import (clone, contiguous, detach, detach_, expand, expand_as, flatten, movedim, permute,
                    reshape, reshape_as, squeeze, swapaxes, swapdims, t, to, transpose, type_as,
                    unflatten, unsqueeze, view, view_as)
from .unary import (abs, absolute, acos, asin, atan, ceil, cos, cosh, erf, erfinv, exp, exp2, expm1, fix,
                    floor, gelu_erf, log, log1p, log2, logical_not, neg, negative, reciprocal, relu,
                    round, rsqrt, sign, sigmoid, silu, sin, sinh, sqrt, square, tan, tanh, trunc)
from .arith import (divide, greater, greater_equal, less, less_equal, not_equal, true_divide)
from .compare import allclose, equal, isclose
from .diagonal import diag
from .products import addmm, ger, outer
from .random import bernoulli
from .reduce import std_mean, var_mean
from .sets import unique
# sequence-model ops (issue 14)
from .cumulative import cumprod, cumsum
from .contraction import baddbmm, einsum
from .ordering import argsort, sort, topk
from .rearrange import flip, repeat, repeat_interleave, roll, tile, tril, triu
from .sampling import multinomial
from . import new_like as _new_like

# NOTE: torch.select(x, dim, index). This rebinds the package attribute that named the
# ``ops/select.py`` module (imports of that module go through sys.modules and are unaffected).
select = select_index

_METHODS = """
add sub mul div true_divide divide pow remainder fmod floor_divide maximum minimum atan2
eq ne lt le gt ge greater greater_equal less less_equal not_equal logical_and logical_or logical_xor
logical_not bitwise_and bitwise_or bitwise_xor
neg negative abs absolute exp expm1 exp2 log log1p log2 sqrt rsqrt sin cos tan tanh sigmoid relu
square reciprocal asin acos atan sinh cosh erf erfinv sign floor ceil trunc fix round
sum nansum mean var std prod max min amax amin argmax argmin logsumexp all any
matmul mm bmm
reshape view view_as reshape_as flatten unflatten squeeze unsqueeze permute transpose swapaxes
swapdims t movedim expand expand_as contiguous clone detach detach_ to type_as
gather index_select masked_select nonzero scatter_add scatter_add_ split chunk unbind narrow
isnan isinf isfinite clamp clip clamp_min clamp_max masked_fill masked_fill_ lerp addcmul addcdiv
add_ sub_ mul_ div_ pow_ remainder_ clamp_ clip_ clamp_min_ clamp_max_ addcmul_ addcdiv_ lerp_
neg_ abs_ exp_ log_ sqrt_ sigmoid_ tanh_ relu_ floor_ round_ copy_ fill_ zero_
normal_ uniform_ bernoulli_
softmax log_softmax
isclose allclose equal addmm outer ger diag unique bernoulli norm
cumsum cumprod baddbmm argsort sort topk flip repeat repeat_interleave roll tile tril triu multinomial
""".split()

_OPERATORS = {
    "__add__": add, "__radd__": add, "__sub__": sub, "__rsub__": rsub, "__mul__": mul,
    "__rmul__": mul, "__truediv__": div, "__rtruediv__": rdiv, "__floordiv__": floor_divide,
    "__rfloordiv__": rfloordiv, "__mod__": remainder, "__rmod__": rmod, "__pow__": pow,
    "__rpow__": rpow, "__matmul__": matmul, "__eq__": eq, "__ne__": ne, "__lt__": lt,
    "__le__": le, "__gt__": gt, "__ge__": ge, "__getitem__": getitem, "__setitem__": setitem,
    "__iadd__": add_, "__isub__": sub_, "__imul__": mul_, "__itruediv__": div_,
}


def _rmatmul(self, other):
    return matmul(other, self)


def _neg(self):
    return neg(self)


def _invert(self):
    if self.dtype.name == "bool":
        return logical_not(self)
    return bitwise_xor(self, -1)


def _pos(self):
    if self.dtype.name == "bool":
        raise TypeError("__pos__: the + operator is not supported on bool tensors")
    return shape.own(self)


def _where_method(self, condition, other):
    """``x.where(condition, y)``: ``where(condition, x, y)`` (the tensor is the "true" side)."""
    return where(condition, self, other)


def _logic(fn):
    def op(self, other):
        return fn(self, other)
    return op


def bind_methods(cls):
    """Install the op methods and operators on the Tensor class."""
    g = globals()
    for name in _METHODS:
        setattr(cls, name, g[name])
    for name, fn in _OPERATORS.items():
        setattr(cls, name, fn)
    for name, fn in shape.CASTS.items():
        setattr(cls, name, fn)
    cls.__rmatmul__ = _rmatmul
    cls.__neg__ = _neg
    cls.__pos__ = _pos
    cls.__abs__ = lambda self: abs(self)
    cls.__invert__ = _invert
    cls.__and__ = cls.__rand__ = _logic(bitwise_and)
    cls.__or__ = cls.__ror__ = _logic(bitwise_or)
    cls.__xor__ = cls.__rxor__ = _logic(bitwise_xor)
    cls.select = select_index
    cls.where = _where_method
    cls.T = property(lambda self: permute(self, tuple(reversed(range(self.ndim)))))
    cls.mT = property(lambda self: transpose(self, -2, -1))
    for name in ("new_zeros", "new_ones", "new_full", "new_empty", "new_tensor"):
        setattr(cls, name, getattr(_new_like, name))


bind_methods(Tensor)
