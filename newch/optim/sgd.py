"""SGD: stochastic gradient descent with optional momentum, dampening, Nesterov and weight decay.

The class validates options and keeps the momentum buffers; the update rule
itself is one fused kernel call per parameter (``kernels.optim.sgd_step``).
"""
from .checks import check_flags
from .optimizer import Optimizer, check_number, state_tensor


def _check_sgd_options(lr, momentum, dampening, weight_decay, nesterov):
    for key, value in (("lr", lr), ("momentum", momentum), ("dampening", dampening),
                       ("weight_decay", weight_decay)):
        check_number("SGD", key, value)
    if lr < 0.0:
        raise ValueError(f"Invalid learning rate: {lr}")
    if momentum < 0.0:
        raise ValueError(f"Invalid momentum value: {momentum}")
    if weight_decay < 0.0:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")
    if nesterov and (momentum <= 0 or dampening != 0):
        raise ValueError("Nesterov momentum requires a momentum and zero dampening")


class SGD(Optimizer):
    """Stochastic gradient descent, with PyTorch's ``torch.optim.SGD`` semantics.

    With g the gradient (negated if ``maximize``) plus ``weight_decay * p``:
    the momentum buffer is g on a parameter's first step, then
    ``momentum * buf + (1 - dampening) * g``; the step is ``p -= lr * d`` with
    d = g without momentum, ``g + momentum * buf`` with ``nesterov``, else buf.

    Args:
        params: persistent float tensors, or dicts of them with per-group options.
        lr: learning rate (default 1e-3).
        momentum: momentum factor (default 0: no buffer is kept).
        dampening: dampening of the momentum (default 0).
        weight_decay: L2 penalty added to the gradient (default 0).
        nesterov: use Nesterov momentum (needs momentum > 0 and dampening 0).
        maximize: follow the gradient up instead of down.
        foreach, fused: accepted for PyTorch compatibility, ignored.
        differentiable: must be False.

    Example:
        >>> with newch.persistent():
        ...     w = newch.randn(3, requires_grad=True)
        >>> opt = newch.optim.SGD([w], lr=0.1, momentum=0.9)
        >>> (w * w).sum().backward(); opt.step(); opt.zero_grad()
    """

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False,
                 *, maximize=False, foreach=None, differentiable=False, fused=None):
        _check_sgd_options(lr, momentum, dampening, weight_decay, nesterov)
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening,
                        weight_decay=weight_decay, nesterov=nesterov, maximize=maximize,
                        foreach=foreach, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)

    def check_group(self, group):
        """Validate a group's lr, momentum, dampening, weight_decay and nesterov."""
        _check_sgd_options(group["lr"], group["momentum"], group["dampening"],
                           group["weight_decay"], group["nesterov"])
        check_flags("SGD", group)

    def init_single(self, p, group):
        """A momentum buffer shaped like ``p`` (none without momentum); filled by the first step."""
        return {"momentum_buffer": state_tensor(p)} if group["momentum"] != 0 else {}

    def apply_single(self, kernels, param, grad, state, group, fresh):
        """One fused ``sgd_step`` kernel call on flat ``param``, ``grad`` and momentum buffer."""
        momentum = float(group["momentum"])
        buf = param[:0]
        if momentum != 0.0:
            if "momentum_buffer" not in state:
                raise ValueError("SGD.step: a parameter's state has no 'momentum_buffer' (was it "
                                 "loaded from another optimizer's state_dict?)")
            t = state["momentum_buffer"]
            a = t._data("SGD.step")
            if a.size != param.size or a.dtype != param.dtype or not a.flags.c_contiguous:
                raise ValueError(f"SGD.step: a momentum buffer ({tuple(t.shape)}, {t.dtype}) "
                                 f"does not fit its parameter ({param.size} elements, "
                                 f"{param.dtype})")
            buf = a.reshape(-1)
        kernels.sgd_step(param, grad, buf, float(group["lr"]), float(group["weight_decay"]),
                         momentum, float(group["dampening"]), bool(group["nesterov"]),
                         bool(group["maximize"]), fresh)
