"""Loss kernels: the negative log likelihood of class-index targets, forward and backward.

Layout: log-probabilities viewed as (N, C, L) (L = 1 for (N, C) input, the
product of the trailing dims for (N, C, d1, ...)), targets as (N, L) int64.
The work is one read per target, so both kernels run serially (no thread
launch could pay for itself); every output element is written once.
Targets equal to ``ignore_index`` give loss 0 and weight 0; any other target
outside [0, C) is an IndexError (``ops/`` checks first and names the op).
"""
from .jit import kernel

__all__ = ["nll_forward", "nll_backward"]


@kernel
def nll_forward(x, target, weight, ignore_index, loss, wsum):
    """loss[n, l] = -x[n, t, l] * weight[t] and wsum[n, l] = weight[t], t = target[n, l].

    x: (N, C, L) C-contiguous float. target: (N, L) int64. weight: (C,) of x's
    dtype, or empty (all 1). loss, wsum: (N, L) of x's dtype.
    Example: ``nll_forward(logp.reshape(n, c, 1), t.reshape(n, 1), w, -100, loss, wsum)``.
    """
    N, C, L = x.shape
    for n in range(N):
        for j in range(L):
            t = target[n, j]
            if t == ignore_index:
                loss[n, j] = 0.0
                wsum[n, j] = 0.0
                continue
            if t < 0 or t >= C:
                raise IndexError("nll_forward: target out of range")
            w = weight[t] if weight.shape[0] else 1.0
            loss[n, j] = -(x[n, t, j] * w)
            wsum[n, j] = w


@kernel
def nll_backward(target, weight, ignore_index, g, dx):
    """dx = 0 except dx[n, t, l] = -weight[t] * g[n, l] for each target t = target[n, l].

    target: (N, L) int64. weight: (C,) or empty. g: (N, L) C-contiguous, dx's
    dtype. dx: (N, C, L) C-contiguous float, fully written.
    """
    N, C, L = dx.shape
    for n in range(N):
        for c in range(C):
            for j in range(L):
                dx[n, c, j] = 0.0
        for j in range(L):
            t = target[n, j]
            if t == ignore_index:
                continue
            if t < 0 or t >= C:
                raise IndexError("nll_backward: target out of range")
            w = weight[t] if weight.shape[0] else 1.0
            dx[n, t, j] = -(w * g[n, j])
