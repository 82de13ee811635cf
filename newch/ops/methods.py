"""The Tensor methods and operators: which op each one calls.

Each ops module lists the ops PyTorch also spells as methods in its
``TENSOR_METHODS``; ``bind`` installs those, plus the operators (``x + y``,
``x[i]``, ``-x``...) and the few methods whose argument order differs from the
op's (``x.where(cond, y)``). ``tools/gen_tensor_pyi.py`` reads the same lists
to write ``newch/tensor.pyi``, so editors see every method.
"""
import sys

from . import alloc
from . import (activation, arith, compare, conditional, contraction, convert, creation, cumulative,
               diagonal, extrema, indexing, inplace, join, matrix, new_like, norms, ordering, products,
               random, rearrange, reduce, sampling, sets, shape, unary)

# the op modules, in the order their names appear in ``newch.ops.__all__``
FAMILIES = (arith, unary, activation, conditional, compare, reduce, extrema, norms, matrix, products,
            contraction, shape, convert, join, indexing, rearrange, diagonal, sets, ordering, cumulative,
            creation, random, sampling, inplace, new_like)

OPERATORS = {
    "__add__": arith.add, "__radd__": arith.add, "__sub__": arith.sub, "__rsub__": arith.rsub,
    "__mul__": arith.mul, "__rmul__": arith.mul, "__truediv__": arith.div, "__rtruediv__": arith.rdiv,
    "__floordiv__": arith.floor_divide, "__rfloordiv__": arith.rfloordiv, "__mod__": arith.remainder,
    "__rmod__": arith.rmod, "__pow__": arith.pow, "__rpow__": arith.rpow, "__matmul__": matrix.matmul,
    "__eq__": arith.eq, "__ne__": arith.ne, "__lt__": arith.lt, "__le__": arith.le, "__gt__": arith.gt,
    "__ge__": arith.ge, "__getitem__": indexing.getitem, "__setitem__": indexing.setitem,
    "__iadd__": inplace.add_, "__isub__": inplace.sub_, "__imul__": inplace.mul_,
    "__itruediv__": inplace.div_,
}


def method_table():
    """{method name: the op it calls} for every op method (not the operators)."""
    table = {}
    for mod in FAMILIES:
        for name in mod.TENSOR_METHODS:
            table[name] = getattr(mod, name)
    table.update(convert.CASTS)
    table["where"] = _where
    return table


def _rmatmul(self, other):
    return matrix.matmul(other, self)


def _neg(self):
    return unary.neg(self)


def _abs(self):
    return unary.abs(self)


def _invert(self):
    if self.dtype.name == "bool":
        return unary.logical_not(self)
    return arith.bitwise_xor(self, -1)


def _pos(self):
    if self.dtype.name == "bool":
        raise TypeError("__pos__: the + operator is not supported on bool tensors")
    return convert.own(self)


def _where(self, condition, other):
    """``x.where(condition, y)``: ``where(condition, x, y)`` (the tensor is the "true" side)."""
    return conditional.where(condition, self, other)


def _logic(fn):
    def op(self, other):
        return fn(self, other)
    op.__name__ = fn.__name__
    return op


def _T(self):
    """The tensor with its dims reversed."""
    return shape.permute(self, tuple(reversed(range(self.ndim))))


def _mT(self):
    """The last two dims swapped (a batch of transposed matrices)."""
    return shape.transpose(self, -2, -1)


def bind(cls):
    """Install the op methods and operators on the Tensor class, and the ops the Tensor's own
    methods call (``tensor.UPPER``: tensor.py sits below ops/ and does not import them)."""
    upper = sys.modules[cls.__module__].UPPER
    upper.norm_dim, upper.view_of, upper.stale = alloc.norm_dim, alloc.view_of, alloc.stale
    upper.persistent_copy_of, upper.own = alloc.persistent_copy_of, convert.own
    for name, fn in method_table().items():
        setattr(cls, name, fn)
    for name, fn in OPERATORS.items():
        setattr(cls, name, fn)
    cls.__rmatmul__ = _rmatmul
    cls.__neg__ = _neg
    cls.__pos__ = _pos
    cls.__abs__ = _abs
    cls.__invert__ = _invert
    cls.__and__ = cls.__rand__ = _logic(arith.bitwise_and)
    cls.__or__ = cls.__ror__ = _logic(arith.bitwise_or)
    cls.__xor__ = cls.__rxor__ = _logic(arith.bitwise_xor)
    cls.T = property(_T)
    cls.mT = property(_mT)
