"""numpy twins of ``kernels/norm.py``: the same statistics and gradients as whole-array expressions.

Sums are float64 (numpy's pairwise order, so the last bits may differ from the
JIT kernels' fixed order; tests compare within float tolerance).
"""
import numpy as np

__all__ = ["batch_norm_forward", "batch_norm_backward", "layer_norm_rows",
           "layer_norm_backward", "layer_norm_param_grad"]


def _vec(a, n, default):
    return a.astype(np.float64) if a.shape[0] else np.full(n, default)


def batch_norm_forward(x, mean, var, eps, weight, bias, train, run_mean, run_var, momentum, out):
    """Per-channel normalisation of x (N, C, L), batch statistics if ``train``; see kernels.norm."""
    C = x.shape[1]
    if train:
        x64 = x.astype(np.float64)
        mean[...] = x64.mean(axis=(0, 2))
        var[...] = ((x64 - mean[None, :, None]) ** 2).mean(axis=(0, 2))
        if run_mean.shape[0]:
            m = x.shape[0] * x.shape[2]
            unbiased = var * m / (m - 1) if m > 1 else var
            run_mean[...] = (1.0 - momentum) * run_mean + momentum * mean
            run_var[...] = (1.0 - momentum) * run_var + momentum * unbiased
    scale = _vec(weight, C, 1.0) / np.sqrt(var + eps)
    shift = _vec(bias, C, 0.0) - mean * scale
    out[...] = x * scale[None, :, None] + shift[None, :, None]


def batch_norm_backward(x, dy, mean, var, eps, weight, train, dx, dweight, dbias):
    """Gradients of batch_norm_forward; see kernels.norm."""
    C = x.shape[1]
    invstd = 1.0 / np.sqrt(var + eps)
    xmu = x.astype(np.float64) - mean[None, :, None]
    g = dy.astype(np.float64)
    sg = g.sum(axis=(0, 2))
    sgx = (g * xmu).sum(axis=(0, 2))
    dweight[...] = sgx * invstd
    dbias[...] = sg
    if dx.shape[0] == 0:
        return
    k = (invstd * _vec(weight, C, 1.0))[None, :, None]
    if train:
        M = x.shape[0] * x.shape[2]
        mx = (sgx * invstd * invstd / M)[None, :, None]
        dx[...] = (g - (sg / M)[None, :, None] - xmu * mx) * k
    else:
        dx[...] = g * k


def layer_norm_rows(x, weight, bias, eps, out, mean, rstd):
    """Normalise each row of x (M, K); see kernels.norm."""
    x64 = x.astype(np.float64)
    mean[...] = x64.mean(axis=1)
    xmu = x64 - mean[:, None]
    rstd[...] = 1.0 / np.sqrt((xmu ** 2).mean(axis=1) + eps)
    y = xmu * rstd[:, None]
    if weight.shape[0]:
        y = y * weight.astype(np.float64)
    if bias.shape[0]:
        y = y + bias.astype(np.float64)
    out[...] = y


def layer_norm_backward(x, dy, mean, rstd, weight, dx):
    """Input gradient of layer_norm_rows; see kernels.norm."""
    K = x.shape[1]
    xmu = x.astype(np.float64) - mean[:, None]
    g = dy.astype(np.float64)
    if weight.shape[0]:
        g = g * weight.astype(np.float64)
    a = g.sum(axis=1) / K
    b = (g * xmu).sum(axis=1) * rstd * rstd / K
    dx[...] = (g - a[:, None] - xmu * b[:, None]) * rstd[:, None]


def layer_norm_param_grad(x, dy, mean, rstd, dweight, dbias):
    """Sums over rows of dy * xhat and dy; see kernels.norm."""
    xhat = (x.astype(np.float64) - mean[:, None]) * rstd[:, None]
    g = dy.astype(np.float64)
    dweight[...] = (g * xhat).sum(axis=0)
    dbias[...] = g.sum(axis=0)
