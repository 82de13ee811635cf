"""Update kernels of the Adam family: Adam / AdamW, Adamax, NAdam and RAdam.

Same layout and rules as ``kernels/optim.py``: flat 1-D C-contiguous arrays of
one float dtype updated in place, fixed ``CHUNK``-element pieces per ``prange``
iteration above ``SERIAL_MAX`` elements (``tasks.chunked`` runs the one serial
``_*_span`` task function either way), every element updated on its own (so
the split never changes a bit). The optimizer computes the per-step scalars
(bias corrections, step sizes) in Python float64; the launcher rounds each to the
arrays' dtype once and does every product and sum in that dtype, no fused
multiply-add, in the order of the update rule as PyTorch writes it.

Weight decay, in every kernel here: ``decay`` multiplies the parameter first
(1 for none; ``1 - lr * weight_decay`` for decoupled, AdamW-style decay), then
``weight_decay`` times the parameter is added to the gradient (0 for none).
"""
import numpy as np

from .jit import helper, kernel
from .optim import CHUNK, SERIAL_MAX, check_state
from .tasks import chunked

__all__ = ["adam_step", "adamax_step", "nadam_step", "radam_step"]


@helper
def lerp(a, b, w, one_minus_w):
    """a + w * (b - a), computed from the nearer end as PyTorch's lerp does."""
    if w < 0.5:
        return a + w * (b - a)
    return b - (b - a) * one_minus_w


@helper
def nan_max(a, b):
    """The larger of a and b, NaN if either is NaN (PyTorch's maximum)."""
    return a if (a > b or a != a) else b


@helper
def decayed(p, g, i, wd, decay, maximize):
    """(element i of the parameter after decoupled decay, of the gradient after maximize and L2)."""
    pv = p[i] * decay if decay != 1 else p[i]
    d = -g[i] if maximize else g[i]
    if wd != 0:
        d = d + wd * pv
    return pv, d


@helper
def _adam_rows(p, g, m, v, vmax, wd, decay, w1, b2, omb2, eps, nstep, bc2s, amsgrad, maximize):
    omw1 = p.dtype.type(1) - w1
    for i in range(p.shape[0]):
        pv, d = decayed(p, g, i, wd, decay, maximize)
        mi = lerp(m[i], d, w1, omw1)
        m[i] = mi
        vi = v[i] * b2 + omb2 * d * d
        v[i] = vi
        if amsgrad:
            vi = nan_max(vmax[i], vi)
            vmax[i] = vi
        p[i] = pv + nstep * mi / (np.sqrt(vi) / bc2s + eps)


@kernel
def _adam_span(p, g, m, v, vmax, wd, dec, w1, b2, omb2, eps, nstep, bc2s, amsgrad, maximize, lo, hi):
    vm = vmax[lo:hi] if amsgrad else vmax
    _adam_rows(p[lo:hi], g[lo:hi], m[lo:hi], v[lo:hi], vm, wd, dec, w1, b2, omb2, eps, nstep, bc2s,
               amsgrad, maximize)


def adam_step(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, weight_decay, decay, beta1,
              beta2, eps, step_size, bias_correction2_sqrt, amsgrad, maximize):
    """One Adam / AdamW step on ``param``, ``exp_avg``, ``exp_avg_sq`` (and ``max_exp_avg_sq``).

    g = grad (negated when ``maximize``); param *= decay; g += weight_decay * param;
    exp_avg = lerp(exp_avg, g, 1 - beta1); exp_avg_sq = beta2 exp_avg_sq + (1 - beta2) g g;
    v = exp_avg_sq, or with ``amsgrad`` max_exp_avg_sq = max(max_exp_avg_sq, exp_avg_sq);
    param -= step_size * exp_avg / (sqrt(v) / bias_correction2_sqrt + eps).

    Arrays: 1-D, one float dtype, one length (max_exp_avg_sq may be empty without
    ``amsgrad``). Scalars: Python floats; amsgrad, maximize: bools.

    Example:
        >>> p = np.ones(2); m = np.zeros(2); v = np.zeros(2)
        >>> adam_step(p, np.ones(2), m, v, m[:0], 0.0, 1.0, 0.9, 0.999, 1e-8, 0.01, 0.0316,
        ...           False, False)      # p is now about [0.99, 0.99]
    """
    n = check_state("adam_step", param, grad, exp_avg, exp_avg_sq,
                    *((max_exp_avg_sq,) if amsgrad else ()))
    t = param.dtype.type
    chunked(_adam_span, n, CHUNK, SERIAL_MAX, param, grad, exp_avg, exp_avg_sq,
            max_exp_avg_sq if amsgrad else param[:0], t(weight_decay), t(decay), t(1.0 - beta1),
            t(beta2), t(1.0 - beta2), t(eps), t(-step_size), t(bias_correction2_sqrt),
            bool(amsgrad), bool(maximize))


@helper
def _adamax_rows(p, g, m, u, wd, w1, b2, eps, nclr, maximize):
    omw1 = p.dtype.type(1) - w1
    for i in range(p.shape[0]):
        pv, d = decayed(p, g, i, wd, p.dtype.type(1), maximize)
        mi = lerp(m[i], d, w1, omw1)
        m[i] = mi
        ui = nan_max(u[i] * b2, np.abs(d) + eps)
        u[i] = ui
        p[i] = pv + nclr * mi / ui


@kernel
def _adamax_span(p, g, m, u, wd, w1, b2, eps, nclr, maximize, lo, hi):
    _adamax_rows(p[lo:hi], g[lo:hi], m[lo:hi], u[lo:hi], wd, w1, b2, eps, nclr, maximize)


def adamax_step(param, grad, exp_avg, exp_inf, weight_decay, beta1, beta2, eps, clr, maximize):
    """One Adamax step: exp_avg = lerp(exp_avg, g, 1 - beta1); exp_inf = max(beta2 exp_inf,
    |g| + eps); param -= clr * exp_avg / exp_inf, with clr = lr / (1 - beta1^step).

    g = grad (negated when ``maximize``) + weight_decay * param. Arrays: 1-D, one
    float dtype and length. Scalars: Python floats.

    Example:
        >>> p = np.ones(2); g = np.full(2, 0.5); m = np.zeros(2); u = np.zeros(2)
        >>> adamax_step(p, g, m, u, 0.0, 0.9, 0.999, 1e-8, 0.02, False)
    """
    n = check_state("adamax_step", param, grad, exp_avg, exp_inf)
    t = param.dtype.type
    chunked(_adamax_span, n, CHUNK, SERIAL_MAX, param, grad, exp_avg, exp_inf, t(weight_decay),
            t(1.0 - beta1), t(beta2), t(eps), t(-clr), bool(maximize))


@helper
def _nadam_rows(p, g, m, v, wd, decay, w1, b2, omb2, eps, bc2, cg, cm, maximize):
    omw1 = p.dtype.type(1) - w1
    for i in range(p.shape[0]):
        pv, d = decayed(p, g, i, wd, decay, maximize)
        mi = lerp(m[i], d, w1, omw1)
        m[i] = mi
        vi = v[i] * b2 + omb2 * d * d
        v[i] = vi
        denom = np.sqrt(vi / bc2) + eps
        pv = pv + cg * d / denom
        p[i] = pv + cm * mi / denom


@kernel
def _nadam_span(p, g, m, v, wd, dec, w1, b2, omb2, eps, bc2, cg, cm, maximize, lo, hi):
    _nadam_rows(p[lo:hi], g[lo:hi], m[lo:hi], v[lo:hi], wd, dec, w1, b2, omb2, eps, bc2, cg, cm,
                maximize)


def nadam_step(param, grad, exp_avg, exp_avg_sq, weight_decay, decay, beta1, beta2, eps,
               bias_correction2, grad_coef, avg_coef, maximize):
    """One NAdam step: Adam's moments, then param += grad_coef * g / denom and
    param += avg_coef * exp_avg / denom, with denom = sqrt(exp_avg_sq / bias_correction2) + eps.

    grad_coef = -lr (1 - mu_t) / (1 - prod mu) and avg_coef = -lr mu_{t+1} / (1 - prod mu
    up to t+1) come from the optimizer. Weight decay as in ``adam_step``.

    Example:
        >>> p = np.ones(2); g = np.full(2, 0.5); m = np.zeros(2); v = np.zeros(2)
        >>> nadam_step(p, g, m, v, 0.0, 1.0, 0.9, 0.999, 1e-8, 0.001, -0.1, -0.2, False)
    """
    n = check_state("nadam_step", param, grad, exp_avg, exp_avg_sq)
    t = param.dtype.type
    chunked(_nadam_span, n, CHUNK, SERIAL_MAX, param, grad, exp_avg, exp_avg_sq, t(weight_decay),
            t(decay), t(1.0 - beta1), t(beta2), t(1.0 - beta2), t(eps), t(bias_correction2),
            t(grad_coef), t(avg_coef), bool(maximize))


@helper
def _radam_rows(p, g, m, v, wd, decay, w1, b2, omb2, eps, bc1, lr, bc2s, rect, maximize):
    omw1 = p.dtype.type(1) - w1
    for i in range(p.shape[0]):
        pv, d = decayed(p, g, i, wd, decay, maximize)
        mi = lerp(m[i], d, w1, omw1)
        m[i] = mi
        vi = v[i] * b2 + omb2 * d * d
        v[i] = vi
        u = mi / bc1 * lr
        if rect > 0:
            u = u * (bc2s / (np.sqrt(vi) + eps)) * rect
        p[i] = pv - u


@kernel
def _radam_span(p, g, m, v, wd, dec, w1, b2, omb2, eps, bc1, lr, bc2s, rect, maximize, lo, hi):
    _radam_rows(p[lo:hi], g[lo:hi], m[lo:hi], v[lo:hi], wd, dec, w1, b2, omb2, eps, bc1, lr, bc2s,
                rect, maximize)


def radam_step(param, grad, exp_avg, exp_avg_sq, weight_decay, decay, beta1, beta2, eps,
               bias_correction1, lr, bias_correction2_sqrt, rect, maximize):
    """One RAdam step: Adam's moments, then param -= exp_avg / bias_correction1 * lr, times
    bias_correction2_sqrt / (sqrt(exp_avg_sq) + eps) * rect when ``rect`` > 0 (the variance
    is tractable, rho_t > 5). Gradient, maximize and weight decay as in ``adam_step``.

    Example:
        >>> p = np.ones(2); g = np.full(2, 0.5); m = np.zeros(2); v = np.zeros(2)
        >>> radam_step(p, g, m, v, 0.0, 1.0, 0.9, 0.999, 1e-8, 0.1, 1e-3, 0.0316, 0.0, False)
    """
    n = check_state("radam_step", param, grad, exp_avg, exp_avg_sq)
    t = param.dtype.type
    chunked(_radam_span, n, CHUNK, SERIAL_MAX, param, grad, exp_avg, exp_avg_sq, t(weight_decay),
            t(decay), t(1.0 - beta1), t(beta2), t(1.0 - beta2), t(eps), t(bias_correction1), t(lr),
            t(bias_correction2_sqrt), t(rect), bool(maximize))
