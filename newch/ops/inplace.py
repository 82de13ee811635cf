"""In-place forms (``add_``, ``mul_``, ``copy_``, ``fill_``, ...): write the result into self.

Elementwise ops on a float ``self`` run their kernel with ``out`` = ``self``'s
memory: no temporary (each element is read, then written, by the same loop
iteration, so exact aliasing is safe). Under autograd too: what the backward
needs is saved around the write (``ops/inplace_grad.py``) and ``self`` takes the
new node. The other cases run the out-of-place twin and copy the result into
``self``, so broadcasting, dtype checks and strided ``self`` all behave. Either
way the version bump makes backward refuse tensors an earlier node saved, as
PyTorch does.

As in PyTorch, an operand that partly overlaps ``self`` (``x[1:].add_(x[:-1])``)
is refused: the result would depend on the order elements are written in, so
on the thread count. The very same memory (``x.mul_(x)``) is fine.
"""
import numpy as np

from .. import dtypes as D
from ..graph import is_grad_enabled, no_grad
from ..kernels import codes as C
from ..tensor import Tensor
from . import activation, arith, conditional, unary
from .alloc import check_writable, data, empty as _empty, is_scalar, kernels
from .layout import broadcast_shapes, nd_views
from .launch import as_array, check_fits, copy_into, launch_binary, launch_unary, operand_dtype
from .inplace_grad import SPECS
from .overlap import overlap_error, partial_overlap
from .record import check_inplace, needs_grad, record, sum_to
from .relu_mask import relu_saving_bits
from .convert import clone

__all__ = [
    "abs_", "add_", "addcdiv_", "addcmul_", "clamp_", "clamp_max_", "clamp_min_", "clip_", "copy_",
    "div_", "exp_", "fill_", "floor_", "lerp_", "log_", "mul_", "neg_", "pow_", "relu_",
    "remainder_", "round_", "sigmoid_", "sqrt_", "sub_", "tanh_", "zero_"
]
# also bound as Tensor methods (ops/methods.py):
TENSOR_METHODS = [
    "abs_", "add_", "addcdiv_", "addcmul_", "clamp_", "clamp_max_", "clamp_min_", "clip_", "copy_",
    "div_", "exp_", "fill_", "floor_", "lerp_", "log_", "mul_", "neg_", "pow_", "relu_",
    "remainder_", "round_", "sigmoid_", "sqrt_", "sub_", "tanh_", "zero_"
]


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


def check_overlap(op, a, operands):
    """Refuse operands whose memory partly overlaps the written array ``a`` (PyTorch's rule)."""
    for x in operands:
        if isinstance(x, Tensor) and partial_overlap(a, data(x, op)):
            raise overlap_error(op)


def _unit_rows(a):
    """True if ``a``'s innermost non-1 dim is contiguous: what the kernels' ``out`` needs."""
    inner = [s for n, s in zip(a.shape, a.strides) if n != 1]
    return not inner or inner[-1] == a.itemsize


_INT_UNARY = {C.NEG, C.ABS, C.RELU}          # integer forms of the twin's kernel
_INT_IDENTITY = {C.FLOOR, C.ROUND}             # the identity on integers
_INT_BINARY = {C.ADD, C.SUB, C.MUL}            # integer codes that wrap like the twin


def _direct_unary(code):
    """Unary ``code`` written over ``self``; False when the twin must run instead."""
    def run(self, a, pre, *args, **kwargs):
        dt = self.dtype
        if args or kwargs or dt is D.bool_:
            return False
        if not dt.is_floating_point:
            if code in _INT_IDENTITY:
                return True
            if code not in _INT_UNARY:
                return False
        v = a if a.ndim else a.reshape(1)
        pre and pre()
        launch_unary(code, v, v)
        return True
    return run


def _direct_binary(op, code):
    """``self = code(self, other * alpha)`` for an operand that keeps ``self``'s dtype."""
    allowed = {C.ADD: {"alpha"}, C.SUB: {"alpha"}}.get(code, set())

    def run(self, a, pre, other, **kwargs):
        dt = self.dtype
        alpha = kwargs.get("alpha", 1)
        if set(kwargs) - allowed or dt is D.bool_ or not _scalar_ok(alpha) or \
                not (is_scalar(other) or isinstance(other, Tensor)) or \
                (isinstance(other, Tensor) and other.dtype is not dt) or \
                operand_dtype(op, self, other) is not dt:
            return False
        if not dt.is_floating_point and (code not in _INT_BINARY or alpha != 1 or
                                         isinstance(alpha, (float, np.floating))):
            return False
        if isinstance(other, Tensor):
            b = data(other, op)
            if broadcast_shapes(op, a.shape, b.shape) != tuple(a.shape):
                return False
            if alpha != 1:
                return _axpy(a, b, alpha if code == C.ADD else -alpha, code, pre)
            if b.ndim == 0:
                b = dt.np.type(b[()])
        else:
            b, _ = as_array(other * alpha if alpha != 1 else other, dt, op)
        v = a if a.ndim else a.reshape(1)
        pre and pre()
        launch_binary(code, v, b, v)
        return True
    return run


def _scalar_ok(x):
    return is_scalar(x) and not isinstance(x, (bool, np.bool_))


def _axpy(a, b, alpha, code, pre):
    """a += alpha * b for add_/sub_ with ``alpha``: one pass, rounded as mul then add."""
    if code not in (C.ADD, C.SUB) or a.shape != b.shape or not (
            a.flags.c_contiguous and b.flags.c_contiguous):
        return False
    t = a.dtype.type
    pre and pre()
    kernels().axpby(t(1), a.reshape(-1), t(alpha), b.reshape(-1), a.reshape(-1))
    return True


def _direct_clamp(which):
    """clamp_ / clamp_min_ / clamp_max_ with number bounds over a float ``self``.

    Arguments the twin would refuse send it there, so its errors stay the same.
    """
    def run(self, a, pre, *args, **kwargs):
        names = ("min", "max") if which == "both" else (which,)
        if len(args) > len(names) or set(names[:len(args)]) & set(kwargs):
            return False          # NOTE: the twin raises the TypeError
        bounds = dict(zip(names, args), **kwargs)
        lo, hi = bounds.get("min"), bounds.get("max")
        if set(bounds) - set(names) or (lo is None and hi is None) or \
                not self.dtype.is_floating_point or \
                not all(v is None or _scalar_ok(v) for v in (lo, hi)):
            return False
        v = a if a.ndim else a.reshape(1)
        t = self.dtype.np.type
        pre and pre()
        if lo is not None:
            launch_binary(C.MAXIMUM, v, t(lo), v)
        if hi is not None:
            launch_binary(C.MINIMUM, v, t(hi), v)
        return True
    return run


def _direct_fused(op, first):
    """addcmul_ / addcdiv_ / lerp_: ``self += scale * first(self, t1, t2)`` with one temporary
    (the twin's product), scaled and added in place, rounded as the twin rounds."""
    def run(self, a, pre, t1, t2=None, *, value=1, weight=None):
        if op == "lerp_":
            t2, value = None, t2 if weight is None else weight
        dt = self.dtype
        tensors = [t for t in (t1, t2) if t is not None]
        if not dt.is_floating_point or not _scalar_ok(value) or \
                not all(isinstance(t, Tensor) and t.dtype is dt for t in tensors) or \
                broadcast_shapes(op, a.shape, *(t.shape for t in tensors)) != tuple(a.shape):
            return False
        tmp = first(self, t1, t2)
        data(tmp, op)
        tv = tmp._a if tmp._a.ndim else tmp._a.reshape(1)
        launch_binary(C.MUL, tv, dt.np.type(value), tv)
        v = a if a.ndim else a.reshape(1)
        pre and pre()
        launch_binary(C.ADD, v, tmp._a if tmp._a.ndim else dt.np.type(tmp._a[()]), v)
        return True
    return run


def _graded(op, direct):
    """``direct`` under autograd: saves what ``SPECS[op]``'s backward needs, writes, records."""
    spec = SPECS.get(op)

    def run(self, a, *args, **kwargs):
        operands = list(args) + list(kwargs.values())
        if spec is None or any(isinstance(x, Tensor) and x._s is self._s for x in operands):
            return False     # NOTE: x.mul_(x) needs the old x for both factors: the twin path
        plan = spec(self, *args, **kwargs)
        if plan is None:
            return False
        before, after = plan
        with no_grad():
            if not direct(self, a, before, *args, **kwargs):
                return False
        self._s.version += 1
        after()
        return True
    return run


def _relu_graded(self, a, *args, **kwargs):
    """relu_ under autograd: written in place, the node keeps a bit mask (``ops/relu.py``)."""
    return not (args or kwargs) and relu_saving_bits(self, inplace=True) is not None


def _inplace(op, fn, direct=None, graded=None):
    graded = graded or (_graded(op, direct) if direct is not None else None)

    def f(self, *args, **kwargs):
        check_inplace(op, self)
        a = data(self, op)
        check_writable(op, self)
        check_overlap(op, a, list(args) + list(kwargs.values()))
        if direct is not None and _unit_rows(a):
            if not needs_grad(self, *args, *kwargs.values()):
                if direct(self, a, None, *args, **kwargs):
                    self._s.version += 1
                    return self
            elif graded(self, a, *args, **kwargs):
                return self
        result = fn(self, *args, **kwargs)
        node = result._node
        if node is not None and any(s.storage is self._s for s in node.saved):
            # NOTE: the backward needs self's values from before the write (y.mul_(w) needs
            # y for w's gradient): compute from a copy, as PyTorch keeps the original self.
            result = fn(clone(self), *args, **kwargs)
        return _write(op, self, result)
    f.__name__ = op
    f.__doc__ = f"In-place ``{op[:-1]}``: writes the result into ``self`` and returns it."
    return f


add_ = _inplace("add_", arith.add, _direct_binary("add_", C.ADD))
sub_ = _inplace("sub_", arith.sub, _direct_binary("sub_", C.SUB))
mul_ = _inplace("mul_", arith.mul, _direct_binary("mul_", C.MUL))
div_ = _inplace("div_", arith.div, _direct_binary("div_", C.DIV))
pow_ = _inplace("pow_", arith.pow, _direct_binary("pow_", C.POW))
remainder_ = _inplace("remainder_", arith.remainder, _direct_binary("remainder_", C.REMAINDER))
clamp_ = _inplace("clamp_", conditional.clamp, _direct_clamp("both"))
clip_ = clamp_
clamp_min_ = _inplace("clamp_min_", conditional.clamp_min, _direct_clamp("min"))
clamp_max_ = _inplace("clamp_max_", conditional.clamp_max, _direct_clamp("max"))
addcmul_ = _inplace("addcmul_", conditional.addcmul,
                    _direct_fused("addcmul_", lambda s, t1, t2: arith.mul(t1, t2)))
addcdiv_ = _inplace("addcdiv_", conditional.addcdiv,
                    _direct_fused("addcdiv_", lambda s, t1, t2: arith.div(t1, t2)))
lerp_ = _inplace("lerp_", conditional.lerp, _direct_fused("lerp_", lambda s, end, _: arith.sub(end, s)))
neg_ = _inplace("neg_", unary.neg, _direct_unary(C.NEG))
abs_ = _inplace("abs_", unary.abs, _direct_unary(C.ABS))
exp_ = _inplace("exp_", unary.exp, _direct_unary(C.EXP))
log_ = _inplace("log_", unary.log, _direct_unary(C.LOG))
sqrt_ = _inplace("sqrt_", unary.sqrt, _direct_unary(C.SQRT))
sigmoid_ = _inplace("sigmoid_", unary.sigmoid, _direct_unary(C.SIGMOID))
tanh_ = _inplace("tanh_", unary.tanh, _direct_unary(C.TANH))
relu_ = _inplace("relu_", activation.relu, _direct_unary(C.RELU), _relu_graded)
floor_ = _inplace("floor_", unary.floor, _direct_unary(C.FLOOR))
round_ = _inplace("round_", unary.round, _direct_unary(C.ROUND))


def copy_(self, src, non_blocking=False):
    """Copy ``src`` (broadcast to self's shape, converted to self's dtype) into ``self``."""
    check_inplace("copy_", self)
    if not isinstance(src, Tensor):
        raise TypeError(f"copy_: src must be a Tensor, got {type(src).__name__}")
    a = data(self, "copy_")
    check_writable("copy_", self)
    s = data(src, "copy_")
    if broadcast_shapes("copy_", a.shape, s.shape) != tuple(a.shape):
        raise ValueError(f"copy_: src of shape {tuple(s.shape)} cannot be broadcast to "
                         f"{tuple(a.shape)}")
    if partial_overlap(a, s):
        # NOTE: as PyTorch (x[1:].copy_(x[:-1]), x.copy_(x.T), x.copy_(x[0])): the result
        # would depend on the order elements are written in
        raise overlap_error("copy_")
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
    return _fill("fill_", self, value)


def _fill(op, self, value):
    check_inplace(op, self)
    a = data(self, op)
    check_writable(op, self)
    if isinstance(value, Tensor):
        if value.ndim:
            raise ValueError(f"{op}: value must be a number or 0-dim tensor, got shape "
                             f"{tuple(value.shape)}")
        # NOTE: a tensor value is cast (nan -> int64 min, as PyTorch), never refused
        value = value.to(self.dtype).item()
    elif not is_scalar(value):
        raise TypeError(f"{op}: value must be a number, got {type(value).__name__}")
    else:
        check_fits(op, value, self.dtype)
    if a.size:
        v, _ = as_array(value, self.dtype, op)
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
    return _fill("zero_", self, 0)
