"""What an in-place op records for autograd when it writes straight into ``self``.

An in-place op under autograd (``y.add_(1)``, ``y.mul_(w)``, ``y.exp_()`` with ``y``
or an operand requiring grad) writes its result over ``self``, as outside autograd:
no full-size temporary. What its backward reads is settled around that write:

- nothing (``add_``, ``sub_``, ``neg_``, ``floor_``, ``mul_`` / ``div_`` by a number):
  no memory kept;
- the result (``exp_``, ``sqrt_``, ``tanh_``, ``sigmoid_``, ``div_`` for the divisor's
  gradient): ``self`` itself is saved after the write, so changing it again before
  backward is refused at backward, as PyTorch does;
- the operands (``mul_``'s ``self`` gradient, ``addcmul_``, ``addcdiv_``): saved as they are;
- the old value (``log_``, ``abs_``, ``pow_``, ``mul_`` for the operand's gradient):
  a copy of ``self`` taken just before the write, which costs one ``self`` of
  memory (what computing aside did too, without the result's copy);
- ``clamp_`` keeps one bool per element (which elements were inside the bounds; two
  bools per element at the peak).

A spec ``spec(self, *args, **kwargs)`` returns ``(before, after)``, or None when the
compute-aside path must run instead: ``before()`` runs just before the write,
``after()`` records the node once ``self`` holds the result and its version was bumped.
"""
from ..graph import no_grad
from ..kernels import codes as C
from ..tensor import Tensor
from . import unary
from .arith import div, ge, le, mul, pow
from .launch import launch_binary
from .record import pack, record, sum_to
from .conditional import where


def _wants(x):
    return isinstance(x, Tensor) and x._rg


def _old(self):
    """A copy of ``self``'s current values that records nothing."""
    with no_grad():
        return self.clone()


def unary_spec(fn, grad_spec=None):
    """Spec for the in-place form of unary op ``fn`` (its ``grad_spec`` = (name, grad, saves))."""
    name, grad, saves = grad_spec or fn.grad_spec

    def spec(self):
        kept = []

        def before():
            if saves in ("x", "both"):
                kept.append(_old(self))

        def after():
            if saves == "x":
                record(self, name, (self,), lambda g, xs: (grad(g, xs, None),), saved=kept)
            elif saves == "out":
                record(self, name, (self,), lambda g, o: (grad(g, None, o),), saved=[self])
            elif saves == "both":
                record(self, name, (self,), lambda g, xs, o: (grad(g, xs, o),),
                       saved=kept + [self])
            else:
                record(self, name, (self,), lambda g: (grad(g, None, None),))
        return before, after
    return spec


def add_spec(name, sign):
    """add_ / sub_: self's gradient is g, the operand's ``sign * alpha * g`` (summed to its shape)."""
    def spec(self, other, alpha=1):
        k = sign * alpha
        if not isinstance(other, Tensor):
            return _nothing, lambda: record(self, name, (self,), lambda g: (g,))
        sb = tuple(other.shape)

        def backward(g):
            return g, sum_to(g if k == 1 else mul(g, k), sb)
        return _nothing, lambda: record(self, name, (self, other), backward)
    return spec


def mul_spec(self, other):
    """mul_: self's gradient g * other; other's g * (self before the write)."""
    if not isinstance(other, Tensor):
        return _nothing, lambda: record(self, "MulBackward0", (self,), lambda g: (mul(g, other),))
    ga, gb, sb = _wants(self), _wants(other), tuple(other.shape)
    kept = []

    def before():
        if gb:
            kept.append(_old(self))

    def after():
        saved, restore = pack(other if ga else None, kept[0] if gb else None)

        def backward(g, *s):
            b, a = restore(*s)
            return (mul(g, b) if ga else None, sum_to(mul(g, a), sb) if gb else None)
        record(self, "MulBackward0", (self, other), backward, saved)
    return before, after


def div_spec(self, other):
    """div_: self's gradient g / other; other's -g * result / other."""
    if not isinstance(other, Tensor):
        return _nothing, lambda: record(self, "DivBackward0", (self,), lambda g: (div(g, other),))
    ga, gb, sb = _wants(self), _wants(other), tuple(other.shape)

    def after():
        saved, restore = pack(other, self if gb else None)

        def backward(g, *s):
            b, o = restore(*s)
            gi = div(g, b)
            return (gi if ga else None, sum_to(unary.neg(mul(gi, o)), sb) if gb else None)
        record(self, "DivBackward0", (self, other), backward, saved)
    return _nothing, after


def pow_spec(self, exponent):
    """pow_ by a number: gradient g * e * old ** (e - 1) (0 where e == 0, as PyTorch)."""
    if isinstance(exponent, Tensor):
        return None
    if exponent == 0:
        return _nothing, lambda: record(self, "PowBackward0", (self,), lambda g: (mul(g, 0.0),))
    kept = []

    def after():
        record(self, "PowBackward0", (self,),
               lambda g, x: (mul(mul(g, exponent), pow(x, exponent - 1)),), saved=kept)
    return lambda: kept.append(_old(self)), after


def remainder_spec(self, other):
    """remainder_: self's gradient is g; an operand that requires grad takes the twin path."""
    if _wants(other):
        return None
    return _nothing, lambda: record(self, "RemainderBackward0", (self,), lambda g: (g,))


def clamp_spec(which):
    """clamp_ / clamp_min_ / clamp_max_ by numbers: g where the old value was within bounds."""
    names = ("min", "max") if which == "both" else (which,)

    def spec(self, *args, **kwargs):
        bounds = dict(zip(names, args), **kwargs)
        lo, hi = bounds.get("min"), bounds.get("max")
        kept = []

        def before():
            with no_grad():
                keep = ge(self, lo) if lo is not None else None
                if hi is not None:
                    below = le(self, hi)
                    if keep is None:
                        keep = below
                    else:      # NOTE: and-ed into keep: one bool per element kept, two at the peak
                        launch_binary(C.LOGICAL_AND, keep._a, below._a, keep._a)
                        del below
            kept.append(keep)

        def after():
            record(self, "ClampBackward1", (self,), lambda g, m: (where(m, g, 0.0),), saved=kept)
        return before, after
    return spec


def addcmul_spec(self, t1, t2, *, value=1):
    """addcmul_: self += value * t1 * t2."""
    s1, s2, g1, g2 = tuple(t1.shape), tuple(t2.shape), _wants(t1), _wants(t2)

    def after():
        def backward(g, a, b):
            gv = mul(g, value) if value != 1 else g
            return g, sum_to(mul(gv, b), s1) if g1 else None, sum_to(mul(gv, a), s2) if g2 else None
        record(self, "AddcmulBackward0", (self, t1, t2), backward, saved=[t1, t2])
    return _nothing, after


def addcdiv_spec(self, t1, t2, *, value=1):
    """addcdiv_: self += value * t1 / t2."""
    s1, s2, g1, g2 = tuple(t1.shape), tuple(t2.shape), _wants(t1), _wants(t2)

    def after():
        def backward(g, a, b):
            q = div(mul(g, value) if value != 1 else g, b)
            return (g, sum_to(q, s1) if g1 else None,
                    sum_to(unary.neg(div(mul(q, a), b)), s2) if g2 else None)
        record(self, "AddcdivBackward0", (self, t1, t2), backward, saved=[t1, t2])
    return _nothing, after


def lerp_spec(self, end, weight=None):
    """lerp_ by a number weight w: self's gradient g * (1 - w), end's g * w."""
    if isinstance(weight, Tensor) or weight is None:
        return None
    se = tuple(end.shape)
    return _nothing, lambda: record(
        self, "LerpBackward0", (self, end),
        lambda g: (mul(g, 1.0 - weight), sum_to(mul(g, weight), se)))


def _nothing():
    return None


SPECS = {
    "add_": add_spec("AddBackward0", 1), "sub_": add_spec("SubBackward0", -1),
    "mul_": mul_spec, "div_": div_spec, "pow_": pow_spec, "remainder_": remainder_spec,
    "clamp_": clamp_spec("both"), "clamp_min_": clamp_spec("min"), "clamp_max_": clamp_spec("max"),
    "addcmul_": addcmul_spec, "addcdiv_": addcdiv_spec, "lerp_": lerp_spec,
    "neg_": unary_spec(unary.neg), "abs_": unary_spec(unary.abs), "exp_": unary_spec(unary.exp),
    "log_": unary_spec(unary.log), "sqrt_": unary_spec(unary.sqrt),
    "sigmoid_": unary_spec(unary.sigmoid), "tanh_": unary_spec(unary.tanh),
    "floor_": unary_spec(unary.floor),
    "round_": unary_spec(None, ("RoundBackward0", unary._zero_grad, None)),
}
