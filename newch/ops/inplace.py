"""In-place forms (``add_``, ``mul_``, ``copy_``, ``fill_``, ...): compute, then write into self.

Each in-place op runs its out-of-place twin and writes the result into
``self``'s memory, so broadcasting, aliasing (``x.add_(x.T)``) and strided
``self`` all behave. Under autograd, ``self`` takes over the result's node;
tensors an earlier node saved see the version bump and backward refuses them,
as PyTorch does.
"""
import numpy as np

from .. import dtypes as D
from ..autograd.graph import is_grad_enabled
from ..tensor import Tensor
from . import arith, select, unary
from .alloc import data, empty as _empty, is_scalar
from .pointwise import as_array, copy_into
from .record import check_inplace, needs_grad, record, sum_to


def _write(op, self, result):
    """Store ``result`` into ``self`` (checks the dtype can be kept); returns self."""
    if D.category(result.dtype) > D.category(self.dtype):
        raise TypeError(f"{op}: result type {result.dtype} can't be cast to the desired output "
                        f"type {self.dtype}")
    if tuple(result.shape) != tuple(self.shape):
        raise ValueError(f"{op}: output with shape {tuple(self.shape)} doesn't match the "
                         f"broadcast shape {tuple(result.shape)}")
    copy_into(data(result, op), data(self, op))
    self._s.version += 1
    if result._node is not None and is_grad_enabled():
        self._node = result._node
        self._rg = True
    return self


def _inplace(op, fn):
    def f(self, *args, **kwargs):
        check_inplace(op, self)
        data(self, op)
        result = fn(self, *args, **kwargs)
        node = result._node
        if node is not None and any(s.storage is self._s for s in node.saved):
            # NOTE: the backward needs self's values from before the write (y.mul_(w) needs
            # y for w's gradient): compute from a copy, as PyTorch keeps the original self.
            from .shape import clone
            result = fn(clone(self), *args, **kwargs)
        return _write(op, self, result)
    f.__name__ = op
    f.__doc__ = f"In-place ``{op[:-1]}``: writes the result into ``self`` and returns it."
    return f


add_ = _inplace("add_", arith.add)
sub_ = _inplace("sub_", arith.sub)
mul_ = _inplace("mul_", arith.mul)
div_ = _inplace("div_", arith.div)
pow_ = _inplace("pow_", arith.pow)
remainder_ = _inplace("remainder_", arith.remainder)
clamp_ = _inplace("clamp_", select.clamp)
clip_ = clamp_
clamp_min_ = _inplace("clamp_min_", select.clamp_min)
clamp_max_ = _inplace("clamp_max_", select.clamp_max)
addcmul_ = _inplace("addcmul_", select.addcmul)
addcdiv_ = _inplace("addcdiv_", select.addcdiv)
lerp_ = _inplace("lerp_", select.lerp)
neg_ = _inplace("neg_", unary.neg)
abs_ = _inplace("abs_", unary.abs)
exp_ = _inplace("exp_", unary.exp)
log_ = _inplace("log_", unary.log)
sqrt_ = _inplace("sqrt_", unary.sqrt)
sigmoid_ = _inplace("sigmoid_", unary.sigmoid)
tanh_ = _inplace("tanh_", unary.tanh)
relu_ = _inplace("relu_", unary.relu)
floor_ = _inplace("floor_", unary.floor)
round_ = _inplace("round_", unary.round)


def copy_(self, src, non_blocking=False):
    """Copy ``src`` (broadcast to self's shape, converted to self's dtype) into ``self``."""
    check_inplace("copy_", self)
    if not isinstance(src, Tensor):
        raise TypeError(f"copy_: src must be a Tensor, got {type(src).__name__}")
    a = data(self, "copy_")
    s = data(src, "copy_")
    from .layout import broadcast_shapes
    if broadcast_shapes("copy_", a.shape, s.shape) != tuple(a.shape):
        raise ValueError(f"copy_: src of shape {tuple(s.shape)} cannot be broadcast to "
                         f"{tuple(a.shape)}")
    tmp = None
    if np.may_share_memory(s, a):
        # NOTE: x.copy_(x.T) would read elements it has already overwritten: go through a copy
        tmp = _empty(s.shape, src.dtype)
        copy_into(s, tmp._a)
        s = tmp._a
    copy_into(s, a)
    self._s.version += 1
    if needs_grad(src) and self.dtype.is_floating_point:
        ss, sd = src.shape, src.dtype
        record(self, "CopyBackwards", (src,), lambda g: (sum_to(g, ss).to(sd),))
    elif self._node is not None and is_grad_enabled():
        # NOTE: all old values are overwritten by a constant: no gradient flows back, but self
        # stays a non-leaf that requires grad (a leaf without a node would collect .grad)
        record(self, "CopyBackwards", (), lambda g: ())
    return self


def fill_(self, value):
    """Set every element to ``value`` (a number or 0-dim tensor); returns self."""
    check_inplace("fill_", self)
    a = data(self, "fill_")
    if isinstance(value, Tensor):
        if value.ndim:
            raise ValueError(f"fill_: value must be a number or 0-dim tensor, got shape "
                             f"{tuple(value.shape)}")
        value = value.item()
    if not is_scalar(value):
        raise TypeError(f"fill_: value must be a number, got {type(value).__name__}")
    if a.size:
        from .alloc import kernels
        from .layout import nd_views
        v, _ = as_array(value, self.dtype, "fill_")
        o = a if a.ndim else a.reshape(1)
        for (dv,) in nd_views(o.shape, [o]):
            kernels().fill_nd(dv, v)
    self._s.version += 1
    if self._rg and is_grad_enabled():
        # NOTE: the old values are gone: no gradient flows to them (or to anything before).
        record(self, "FillBackward0", (), lambda g: ())
    return self


def zero_(self):
    """Set every element to zero; returns self."""
    return fill_(self, 0)
