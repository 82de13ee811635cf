"""numpy twins of ``kernels/optim_adam.py``: the same update rules, one array operation per term.

Same names, arguments and in-place results as the JIT kernels, with the same
rounding (every operation in the arrays' dtype, no fused multiply-add).
"""
import numpy as np

__all__ = ["adam_step", "adamax_step", "nadam_step", "radam_step"]


def lerp(a, b, w, one_minus_w):
    """a + w (b - a) from the nearer end, as PyTorch's lerp (w a scalar of a's dtype)."""
    if w < 0.5:
        return a + w * (b - a)
    return b - (b - a) * one_minus_w


def decayed(param, grad, weight_decay, decay, maximize):
    """(parameter after decoupled decay, gradient after maximize and L2), new arrays."""
    t = param.dtype.type
    pv = param * t(decay) if decay != 1 else param.copy()
    d = -grad if maximize else grad
    if weight_decay != 0:
        d = d + t(weight_decay) * pv
    return pv, d


def _moments(d, exp_avg, exp_avg_sq, beta1, beta2):
    t = exp_avg.dtype.type
    w1 = t(1.0 - beta1)
    exp_avg[...] = lerp(exp_avg, d, w1, t(1) - w1)
    exp_avg_sq[...] = exp_avg_sq * t(beta2) + t(1.0 - beta2) * d * d


def _check(name, param, *arrays):
    if any(a.shape != param.shape for a in arrays):
        raise ValueError(f"{name}: grad or state length differs from param length")


def adam_step(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, weight_decay, decay, beta1,
              beta2, eps, step_size, bias_correction2_sqrt, amsgrad, maximize):
    """One Adam / AdamW step in place; see kernels.optim_adam.adam_step."""
    _check("adam_step", param, grad, exp_avg, exp_avg_sq, *([max_exp_avg_sq] if amsgrad else []))
    t = param.dtype.type
    pv, d = decayed(param, grad, weight_decay, decay, maximize)
    _moments(d, exp_avg, exp_avg_sq, beta1, beta2)
    v = exp_avg_sq
    if amsgrad:
        max_exp_avg_sq[...] = np.maximum(max_exp_avg_sq, exp_avg_sq)
        v = max_exp_avg_sq
    param[...] = pv + t(-step_size) * exp_avg / (np.sqrt(v) / t(bias_correction2_sqrt) + t(eps))


def adamax_step(param, grad, exp_avg, exp_inf, weight_decay, beta1, beta2, eps, clr, maximize):
    """One Adamax step in place; see kernels.optim_adam.adamax_step."""
    _check("adamax_step", param, grad, exp_avg, exp_inf)
    t = param.dtype.type
    pv, d = decayed(param, grad, weight_decay, 1.0, maximize)
    w1 = t(1.0 - beta1)
    exp_avg[...] = lerp(exp_avg, d, w1, t(1) - w1)
    exp_inf[...] = np.maximum(exp_inf * t(beta2), np.abs(d) + t(eps))
    param[...] = pv + t(-clr) * exp_avg / exp_inf


def nadam_step(param, grad, exp_avg, exp_avg_sq, weight_decay, decay, beta1, beta2, eps,
               bias_correction2, grad_coef, avg_coef, maximize):
    """One NAdam step in place; see kernels.optim_adam.nadam_step."""
    _check("nadam_step", param, grad, exp_avg, exp_avg_sq)
    t = param.dtype.type
    pv, d = decayed(param, grad, weight_decay, decay, maximize)
    _moments(d, exp_avg, exp_avg_sq, beta1, beta2)
    denom = np.sqrt(exp_avg_sq / t(bias_correction2)) + t(eps)
    pv = pv + t(grad_coef) * d / denom
    param[...] = pv + t(avg_coef) * exp_avg / denom


def radam_step(param, grad, exp_avg, exp_avg_sq, weight_decay, decay, beta1, beta2, eps,
               bias_correction1, lr, bias_correction2_sqrt, rect, maximize):
    """One RAdam step in place; see kernels.optim_adam.radam_step."""
    _check("radam_step", param, grad, exp_avg, exp_avg_sq)
    t = param.dtype.type
    pv, d = decayed(param, grad, weight_decay, decay, maximize)
    _moments(d, exp_avg, exp_avg_sq, beta1, beta2)
    u = exp_avg / t(bias_correction1) * t(lr)
    if t(rect) > 0:
        u = u * (t(bias_correction2_sqrt) / (np.sqrt(exp_avg_sq) + t(eps))) * t(rect)
    param[...] = pv - u
