"""Update kernels of the squared-gradient optimizers: RMSprop, Adagrad and Adadelta.

Same layout and rules as ``kernels/optim.py`` (flat 1-D arrays of one float
dtype, in place, fixed chunks per ``prange`` iteration, per-step scalars
computed by the optimizer and rounded to the arrays' dtype once, no fused
multiply-add). g below is the gradient, negated when ``maximize``, plus
``weight_decay`` times the parameter.
"""
import numpy as np

from .jit import helper, kernel
from .optim import CHUNK, SERIAL_MAX, check_state
from .tasks import chunked
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


@kernel
def _rmsprop_span(p, g, v, ga, buf, wd, alpha, oma, eps, nlr, mom, use_mom, centered, maximize,
                  lo, hi):
    gs = ga[lo:hi] if centered else ga
    bs = buf[lo:hi] if use_mom else buf
    _rmsprop_rows(p[lo:hi], g[lo:hi], v[lo:hi], gs, bs, wd, alpha, oma, eps, nlr, mom, use_mom,
                  centered, maximize)


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
    # NOTE: decided in float64 as PyTorch does (a tiny momentum may round to 0 in float32)
    use_mom = momentum > 0
    n = check_state("rmsprop_step", param, grad, square_avg, *((grad_avg,) if centered else ()),
                    *((momentum_buffer,) if use_mom else ()))
    t = param.dtype.type
    chunked(_rmsprop_span, n, CHUNK, SERIAL_MAX, param, grad, square_avg,
            grad_avg if centered else param[:0], momentum_buffer if use_mom else param[:0],
            t(weight_decay), t(alpha), t(1.0 - alpha), t(eps), t(-lr), t(momentum),
            bool(use_mom), bool(centered), bool(maximize))


@helper
def _adagrad_rows(p, g, s, wd, eps, nclr, maximize):
    one = p.dtype.type(1)
    for i in range(p.shape[0]):
        pv, d = decayed(p, g, i, wd, one, maximize)
        si = s[i] + one * d * d
        s[i] = si
        p[i] = pv + nclr * d / (np.sqrt(si) + eps)


@kernel
def _adagrad_span(p, g, s, wd, eps, nclr, maximize, lo, hi):
    _adagrad_rows(p[lo:hi], g[lo:hi], s[lo:hi], wd, eps, nclr, maximize)


def adagrad_step(param, grad, state_sum, weight_decay, eps, clr, maximize):
    """One Adagrad step: state_sum += g g; param -= clr g / (sqrt(state_sum) + eps), with
    clr = lr / (1 + (step - 1) lr_decay) from the optimizer.

    Example:
        >>> p = np.ones(2); g = np.full(2, 0.5); s = np.zeros(2)
        >>> adagrad_step(p, g, s, 0.0, 1e-10, 0.01, False)
    """
    n = check_state("adagrad_step", param, grad, state_sum)
    t = param.dtype.type
    chunked(_adagrad_span, n, CHUNK, SERIAL_MAX, param, grad, state_sum, t(weight_decay), t(eps),
            t(-clr), bool(maximize))


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


@kernel
def _adadelta_span(p, g, v, acc, wd, rho, omr, eps, nlr, maximize, lo, hi):
    _adadelta_rows(p[lo:hi], g[lo:hi], v[lo:hi], acc[lo:hi], wd, rho, omr, eps, nlr, maximize)


def adadelta_step(param, grad, square_avg, acc_delta, lr, rho, eps, weight_decay, maximize):
    """One Adadelta step: square_avg = rho square_avg + (1 - rho) g g; delta =
    sqrt(acc_delta + eps) / sqrt(square_avg + eps) g; acc_delta = rho acc_delta + (1 - rho)
    delta^2; param -= lr delta.

    Example:
        >>> p = np.ones(2); g = np.full(2, 0.5); v = np.zeros(2); acc = np.zeros(2)
        >>> adadelta_step(p, g, v, acc, 1.0, 0.9, 1e-6, 0.0, False)
    """
    n = check_state("adadelta_step", param, grad, square_avg, acc_delta)
    t = param.dtype.type
    chunked(_adadelta_span, n, CHUNK, SERIAL_MAX, param, grad, square_avg, acc_delta,
            t(weight_decay), t(rho), t(1.0 - rho), t(eps), t(-lr), bool(maximize))
