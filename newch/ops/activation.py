"""Activations: relu, silu, gelu, leaky_relu, elu, softmax, log_softmax.

``relu`` keeps a bit mask for its backward (``ops/relu_mask.py``); silu and the erf
form of gelu are one-kernel unary ops. The others have a hand-written backward.

Each forward runs existing kernels under ``no_grad`` (so its intermediates are
freed at once) and records a single node that saves only what its gradient
needs: the output where the output determines the slope, else the input.
softmax and log_softmax subtract the maximum along ``dim`` first, so large
logits neither overflow nor lose precision.
"""
import math

from ..graph import is_grad_enabled, no_grad
from ..kernels import codes as C
from .alloc import data, need_float, norm_dim
from .arith import add, gt, mul, sub
from .launch import launch_binary, launch_unary
from .record import needs_grad, record
from .reduce import reduce, sum as _sum
from .conditional import where
from .relu_mask import relu_saving_bits
from ..tensor import Tensor
from .unary import _op, erf, exp, expm1, log, sigmoid, tanh

__all__ = ["elu", "gelu", "leaky_relu", "log_softmax", "relu", "silu", "softmax"]
TENSOR_METHODS = ["log_softmax", "relu", "softmax"]   # also bound as Tensor methods (ops/methods.py)

_GELU_K = math.sqrt(2.0 / math.pi)
_GELU_C = 0.044715


def leaky_relu(input, negative_slope=0.01):
    """x where x > 0, else negative_slope * x.

    Example:
        >>> leaky_relu(newch.tensor([-2.0, 3.0]), 0.25).tolist()
        [-0.5, 3.0]
    """
    need_float("leaky_relu", input)
    with no_grad():
        out = where(gt(input, 0), input, mul(input, negative_slope))
    if needs_grad(input):
        # NOTE: with a slope >= 0 the output has the input's sign, so keep the output
        # (it survives an in-place write of the result into the input).
        ref = out if negative_slope >= 0 else input
        record(out, "LeakyReluBackward0", (input,),
               lambda g, r: (where(gt(r, 0), g, mul(g, negative_slope)),), saved=[ref])
    return out


def elu(input, alpha=1.0):
    """x where x > 0, else alpha * (exp(x) - 1).

    Example:
        >>> [round(v, 4) for v in elu(newch.tensor([-1.0, 2.0])).tolist()]
        [-0.6321, 2.0]
    """
    need_float("elu", input)
    with no_grad():
        out = where(gt(input, 0), input, mul(expm1(input), alpha))
    if needs_grad(input):
        if alpha >= 0:
            # NOTE: for x <= 0 the slope alpha * exp(x) equals out + alpha.
            record(out, "EluBackward0", (input,),
                   lambda g, o: (where(gt(o, 0), g, mul(g, add(o, alpha))),), saved=[out])
        else:
            record(out, "EluBackward0", (input,),
                   lambda g, x: (where(gt(x, 0), g, mul(g, mul(exp(x), alpha))),),
                   saved=[input])
    return out


def _gelu_tanh_parts(x):
    """(tanh(u), du/dx) with u = sqrt(2/pi) * (x + 0.044715 x^3)."""
    x2 = mul(x, x)
    u = mul(mul(x, add(mul(x2, _GELU_C), 1.0)), _GELU_K)
    du = mul(add(mul(x2, 3.0 * _GELU_C), 1.0), _GELU_K)
    return tanh(u), du


def gelu(input, approximate="none"):
    """Gaussian error linear unit x * Phi(x); ``approximate='tanh'`` uses the tanh formula.

    Example:
        >>> round(gelu(newch.tensor([1.0])).item(), 4)
        0.8413
    """
    if approximate == "none":
        return _gelu_erf(input)
    if approximate != "tanh":
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    need_float("gelu", input)
    with no_grad():
        t, _ = _gelu_tanh_parts(input)
        out = mul(mul(input, add(t, 1.0)), 0.5)
    if needs_grad(input):
        def backward(g, input):
            th, du = _gelu_tanh_parts(input)
            # d/dx [x (1 + tanh u) / 2] = (1 + tanh u) / 2 + x (1 - tanh^2 u) u' / 2
            slope = add(mul(add(th, 1.0), 0.5),
                        mul(mul(input, sub(1.0, mul(th, th))), mul(du, 0.5)))
            return (mul(g, slope),)
        record(out, "GeluBackward0", (input,), backward, saved=[input])
    return out


def _shifted(op, x, d):
    """(x - max(x), max(x)) along ``d``: the first is <= 0, so its exp cannot overflow."""
    m = reduce(op, C.MAX, x, (d,) if x.ndim else (), True, x.dtype)
    return sub(x, m), m


def softmax(input, dim, dtype=None):
    """exp(x) / sum(exp(x)) along ``dim``, computed as exp(x - max) / sum(exp(x - max)).

    Example:
        >>> softmax(newch.tensor([0.0, 0.0]), 0).tolist()
        [0.5, 0.5]
    """
    x = input.to(dtype) if dtype is not None else input
    need_float("softmax", x)
    d = norm_dim("softmax", dim, x.ndim)
    with no_grad():
        out, _ = _shifted("softmax", x, d)
        a = data(out, "softmax")
        # NOTE: out is a fresh contiguous tensor: the elementwise kernels may write it in place.
        launch_unary(C.EXP, a, a)
        launch_binary(C.DIV, a, data(_sum(out, d, keepdim=True), "softmax"), a)
    if needs_grad(x):
        record(out, "SoftmaxBackward0", (x,), lambda g, o: (_softmax_grad(g, o, d),), saved=[out])
    return out


def _softmax_grad(g, o, d):
    """o * (g - sum(g * o)) along d. Without create_graph it is computed in one fresh buffer (the
    same bits as the recorded formula): backward holds one temporary of the input's size, not three."""
    if is_grad_enabled():
        return mul(o, sub(g, _sum(mul(g, o), d, keepdim=True)))
    op = "softmax backward"
    r = mul(g, o)
    ra = data(r, op)
    s = _sum(r, d, keepdim=True)
    launch_binary(C.SUB, data(g, op), data(s, op), ra)
    launch_binary(C.MUL, data(o, op), ra, ra)
    return r


def log_softmax(input, dim, dtype=None):
    """(x - max) - log(sum(exp(x - max))) along ``dim``: log(softmax) without overflow or log(0).

    Example:
        >>> [round(v, 4) for v in log_softmax(newch.tensor([0.0, 0.0]), 0).tolist()]
        [-0.6931, -0.6931]
    """
    x = input.to(dtype) if dtype is not None else input
    need_float("log_softmax", x)
    d = norm_dim("log_softmax", dim, x.ndim)
    with no_grad():
        out, m = _shifted("log_softmax", x, d)
        total = reduce("log_softmax", C.SUMEXP, x, (d,) if x.ndim else (), True, x.dtype, center=m)
        a = data(out, "log_softmax")
        launch_binary(C.SUB, a, data(log(total), "log_softmax"), a)
    if needs_grad(x):
        record(out, "LogSoftmaxBackward0", (x,), lambda g, o: (_log_softmax_grad(g, o, d),),
               saved=[out])
    return out


def _log_softmax_grad(g, o, d):
    """g - exp(o) * sum(g) along d. Without create_graph it is computed in one fresh buffer (the
    same bits as the recorded formula): a classifier over a large vocabulary holds one temporary
    of the logits' size in this backward, not three."""
    s = _sum(g, d, keepdim=True)
    if is_grad_enabled():
        return sub(g, mul(exp(o), s))
    op = "log_softmax backward"
    r = exp(o)
    ra = data(r, op)
    launch_binary(C.MUL, ra, data(s, op), ra)
    launch_binary(C.SUB, data(g, op), ra, ra)
    return r


_relu_plain = _op("relu", C.RELU, "ReluBackward0", lambda g, x, o: mul(g, o > 0), "out")


def relu(input):
    """max(x, 0) elementwise; under autograd the node keeps a bit mask (see ``ops/relu_mask.py``).

    Example:
        >>> relu(newch.tensor([-1.0, 2.0])).tolist()
        [0.0, 2.0]
    """
    if isinstance(input, Tensor) and input._rg:     # NOTE: without a gradient, the plain op
        out = relu_saving_bits(input)
        if out is not None:
            return out
    return _relu_plain(input)


def _silu_grad(g, x, o):
    s = sigmoid(x)
    return mul(g, mul(s, add(mul(x, sub(1.0, s)), 1.0)))


def _gelu_grad(g, x, o):
    cdf = mul(add(erf(mul(x, 1.0 / math.sqrt(2.0))), 1.0), 0.5)
    pdf = mul(exp(mul(mul(x, x), -0.5)), 1.0 / math.sqrt(2.0 * math.pi))
    return mul(g, add(cdf, mul(x, pdf)))


silu = _op("silu", C.SILU, "SiluBackward0", _silu_grad)
_gelu_erf = _op("gelu", C.GELU_ERF, "GeluBackward0", _gelu_grad)
