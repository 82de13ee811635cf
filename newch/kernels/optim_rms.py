"""Update kernels of the squared-gradient optimizers: RMSprop, Adagrad and Adadelta.

Same layout and rules as ``kernels/optim.py`` (flat 1-D arrays of one float
dtype, in place, fixed chunks per ``prange`` iteration, per-step scalars
computed by the optimizer and rounded to the arrays' dtype once, no fused
multiply-add). g below is the gradient, negated when ``maximize``, plus
``weight_decay`` times the parameter.
"""
import numpy as np

from .jit import helper, kernel, prange
from .optim import CHUNK, SERIAL_MAX
from .optim_adam import decayed, lerp

__all__ = ["rmsprop_step", "adagrad_step", "adadelta_step"]


@helper
def _rmsprop_rows(p, g, v, ga, buf, wd, alpha, oma, eps, nlr, mom, use_mom, centered, maximize):
    one = p.dtype.type(1)
    for i in range(p.shape[0]):
        pv, d = decayed(p, g, i, wd, one, maximize)
        vi = v[i] * alpha + oma * d * d
        v[i] = vi
        if centered:
            gi = lerp(ga[i], d, oma, one - oma)
            ga[i] = gi
            avg = np.sqrt(vi + -one * gi * gi) + eps
        else:
            avg = np.sqrt(vi) + eps
        if use_mom:
            b = buf[i] * mom + d / avg
            buf[i] = b
            p[i] = pv + nlr * b
        else:
            p[i] = pv + nlr * d / avg


@kernel(parallel=True)
def rmsprop_step(param, grad, square_avg, grad_avg, momentum_buffer, lr, alpha, eps,
                 weight_decay, momentum, centered, maximize):
    """One RMSprop step: square_avg = alpha square_avg + (1 - alpha) g g; avg = sqrt(square_avg
    - grad_avg^2) + eps with ``centered`` (grad_avg = lerp(grad_avg, g, 1 - alpha)), else
    sqrt(square_avg) + eps; with momentum buf = momentum buf + g / avg, param -= lr buf; else
    param -= lr g / avg.

    grad_avg may be empty unless ``centered``, momentum_buffer unless momentum > 0.

    Example:
        >>> p = np.ones(2); g = np.full(2, 0.5); v = np.zeros(2)
        >>> rmsprop_step(p, g, v, v[:0], v[:0], 0.01, 0.99, 1e-8, 0.0, 0.0, False, False)
    """
    n = param.shape[0]
    if grad.shape[0] != n or square_avg.shape[0] != n:
        raise ValueError("rmsprop_step: grad or square_avg length differs from param length")
    if centered and grad_avg.shape[0] != n:
        raise ValueError("rmsprop_step: grad_avg length differs from param length")
    if momentum > 0 and momentum_buffer.shape[0] != n:
        raise ValueError("rmsprop_step: momentum_buffer length differs from param length")
    t = param.dtype.type
    wd, a, ep, nlr, mom = t(weight_decay), t(alpha), t(eps), t(-lr), t(momentum)
    oma = t(1.0 - alpha)
    # NOTE: decided in float64 as PyTorch does (a tiny momentum may round to 0 in float32)
    use_mom = momentum > 0
    if n <= SERIAL_MAX:
        _rmsprop_rows(param, grad, square_avg, grad_avg, momentum_buffer, wd, a, oma, ep, nlr, mom,
                      use_mom, centered, maximize)
        return
    for c in prange((n + CHUNK - 1) // CHUNK):
        lo = c * CHUNK
        hi = min(lo + CHUNK, n)
        ga = grad_avg[lo:hi] if centered else grad_avg
        buf = momentum_buffer[lo:hi] if momentum > 0 else momentum_buffer
        _rmsprop_rows(param[lo:hi], grad[lo:hi], square_avg[lo:hi], ga, buf, wd, a, oma, ep, nlr,
                      mom, use_mom, centered, maximize)


@helper
def _adagrad_rows(p, g, s, wd, eps, nclr, maximize):
    one = p.dtype.type(1)
    for i in range(p.shape[0]):
        pv, d = decayed(p, g, i, wd, one, maximize)
        si = s[i] + one * d * d
        s[i] = si
        p[i] = pv + nclr * d / (np.sqrt(si) + eps)


@kernel(parallel=True)
def adagrad_step(param, grad, state_sum, weight_decay, eps, clr, maximize):
    """One Adagrad step: state_sum += g g; param -= clr g / (sqrt(state_sum) + eps), with
    clr = lr / (1 + (step - 1) lr_decay) from the optimizer.

    Example:
        >>> p = np.ones(2); g = np.full(2, 0.5); s = np.zeros(2)
        >>> adagrad_step(p, g, s, 0.0, 1e-10, 0.01, False)
    """
    n = param.shape[0]
    if grad.shape[0] != n or state_sum.shape[0] != n:
        raise ValueError("adagrad_step: grad or sum length differs from param length")
    t = param.dtype.type
    wd, ep, nclr = t(weight_decay), t(eps), t(-clr)
    if n <= SERIAL_MAX:
        _adagrad_rows(param, grad, state_sum, wd, ep, nclr, maximize)
        return
    for c in prange((n + CHUNK - 1) // CHUNK):
        lo = c * CHUNK
        hi = min(lo + CHUNK, n)
        _adagrad_rows(param[lo:hi], grad[lo:hi], state_sum[lo:hi], wd, ep, nclr, maximize)


@helper
def _adadelta_rows(p, g, v, acc, wd, rho, omr, eps, nlr, maximize):
    one = p.dtype.type(1)
    for i in range(p.shape[0]):
        pv, d = decayed(p, g, i, wd, one, maximize)
        vi = v[i] * rho + omr * d * d
        v[i] = vi
        delta = np.sqrt(acc[i] + eps) / np.sqrt(vi + eps) * d
        acc[i] = acc[i] * rho + omr * delta * delta
        p[i] = pv + nlr * delta


@kernel(parallel=True)
def adadelta_step(param, grad, square_avg, acc_delta, lr, rho, eps, weight_decay, maximize):
    """One Adadelta step: square_avg = rho square_avg + (1 - rho) g g; delta =
    sqrt(acc_delta + eps) / sqrt(square_avg + eps) g; acc_delta = rho acc_delta + (1 - rho)
    delta^2; param -= lr delta.

    Example:
        >>> p = np.ones(2); g = np.full(2, 0.5); v = np.zeros(2); acc = np.zeros(2)
        >>> adadelta_step(p, g, v, acc, 1.0, 0.9, 1e-6, 0.0, False)
    """
    n = param.shape[0]
    if grad.shape[0] != n or square_avg.shape[0] != n or acc_delta.shape[0] != n:
        raise ValueError("adadelta_step: grad or state length differs from param length")
    t = param.dtype.type
    wd, r, ep, nlr = t(weight_decay), t(rho), t(eps), t(-lr)
    omr = t(1.0 - rho)
    if n <= SERIAL_MAX:
        _adadelta_rows(param, grad, square_avg, acc_delta, wd, r, omr, ep, nlr, maximize)
        return
    for c in prange((n + CHUNK - 1) // CHUNK):
        lo = c * CHUNK
        hi = min(lo + CHUNK, n)
        _adadelta_rows(param[lo:hi], grad[lo:hi], square_avg[lo:hi], acc_delta[lo:hi], wd, r, omr,
                       ep, nlr, maximize)
