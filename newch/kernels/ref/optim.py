"""numpy twins of ``kernels/optim.py``: the same update rules, one array operation per term.

Same names, arguments and in-place results as the JIT kernels; the rounding
matches (every operation in the arrays' dtype, no fused multiply-add).
"""
__all__ = ["sgd_step"]


def sgd_step(param, grad, buf, lr, weight_decay, momentum, dampening, nesterov, maximize, first):
    """One SGD step on ``param`` (and the momentum buffer ``buf``) in place; see kernels.optim."""
    if grad.shape != param.shape or (momentum != 0.0 and buf.shape != param.shape):
        raise ValueError("sgd_step: param, grad and momentum buffer lengths differ")
    t = param.dtype.type
    d = -grad if maximize else grad
    if weight_decay != 0.0:
        d = d + t(weight_decay) * param
    if momentum != 0.0:
        if first:
            buf[...] = d
        else:
            buf[...] = t(momentum) * buf + t(1.0 - dampening) * d
        d = d + t(momentum) * buf if nesterov else buf
    param += t(-lr) * d
