"""numpy twins of ``kernels/loss.py``: the negative log likelihood as fancy indexing."""
import numpy as np

__all__ = ["nll_forward", "nll_backward"]


def _checked(target, C, ignore_index, op):
    keep = target != ignore_index
    safe = np.where(keep, target, 0)
    if ((safe < 0) | (safe >= C)).any():
        raise IndexError(f"{op}: target out of range")
    return keep, safe


def _weights(weight, safe, keep, dtype):
    w = weight[safe] if weight.shape[0] else np.ones(safe.shape, dtype)
    return np.where(keep, w, 0).astype(dtype)


def nll_forward(x, target, weight, ignore_index, loss, wsum):
    """loss = -x[n, t, l] * weight[t], wsum = weight[t] (0 where ignored); see kernels.loss."""
    N, C, L = x.shape
    keep, safe = _checked(target, C, ignore_index, "nll_forward")
    picked = np.take_along_axis(x, safe[:, None, :], 1)[:, 0, :]
    w = _weights(weight, safe, keep, x.dtype)
    loss[...] = np.where(keep, -(picked * w), 0)
    wsum[...] = w


def nll_backward(target, weight, ignore_index, g, dx):
    """dx = 0 except dx[n, t, l] = -weight[t] * g[n, l]; see kernels.loss."""
    N, C, L = dx.shape
    keep, safe = _checked(target, C, ignore_index, "nll_backward")
    w = _weights(weight, safe, keep, dx.dtype)
    dx[...] = 0
    vals = np.where(keep, -(w * g), 0).astype(dx.dtype)
    np.put_along_axis(dx, safe[:, None, :], vals[:, None, :], 1)
