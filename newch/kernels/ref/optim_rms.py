"""numpy twins of ``kernels/optim_rms.py`` (RMSprop, Adagrad, Adadelta), same rounding."""
import numpy as np

from .optim_adam import decayed, lerp

__all__ = ["rmsprop_step", "adagrad_step", "adadelta_step"]


def _check(name, param, *arrays):
    if any(a.shape != param.shape for a in arrays):
        raise ValueError(f"{name}: grad or state length differs from param length")


def rmsprop_step(param, grad, square_avg, grad_avg, momentum_buffer, lr, alpha, eps,
                 weight_decay, momentum, centered, maximize):
    """One RMSprop step in place; see kernels.optim_rms.rmsprop_step."""
    _check("rmsprop_step", param, grad, square_avg, *([grad_avg] if centered else []),
           *([momentum_buffer] if momentum > 0 else []))
    t = param.dtype.type
    pv, d = decayed(param, grad, weight_decay, 1.0, maximize)
    oma = t(1.0 - alpha)
    square_avg[...] = square_avg * t(alpha) + oma * d * d
    if centered:
        grad_avg[...] = lerp(grad_avg, d, oma, t(1) - oma)
        avg = np.sqrt(square_avg + t(-1) * grad_avg * grad_avg) + t(eps)
    else:
        avg = np.sqrt(square_avg) + t(eps)
    if momentum > 0:
        momentum_buffer[...] = momentum_buffer * t(momentum) + d / avg
        param[...] = pv + t(-lr) * momentum_buffer
    else:
        param[...] = pv + t(-lr) * d / avg


def adagrad_step(param, grad, state_sum, weight_decay, eps, clr, maximize):
    """One Adagrad step in place; see kernels.optim_rms.adagrad_step."""
    _check("adagrad_step", param, grad, state_sum)
    t = param.dtype.type
    pv, d = decayed(param, grad, weight_decay, 1.0, maximize)
    state_sum[...] = state_sum + t(1) * d * d
    param[...] = pv + t(-clr) * d / (np.sqrt(state_sum) + t(eps))


def adadelta_step(param, grad, square_avg, acc_delta, lr, rho, eps, weight_decay, maximize):
    """One Adadelta step in place; see kernels.optim_rms.adadelta_step."""
    _check("adadelta_step", param, grad, square_avg, acc_delta)
    t = param.dtype.type
    pv, d = decayed(param, grad, weight_decay, 1.0, maximize)
    omr = t(1.0 - rho)
    square_avg[...] = square_avg * t(rho) + omr * d * d
    delta = np.sqrt(acc_delta + t(eps)) / np.sqrt(square_avg + t(eps)) * d
    acc_delta[...] = acc_delta * t(rho) + omr * delta * delta
    param[...] = pv + t(-lr) * delta
