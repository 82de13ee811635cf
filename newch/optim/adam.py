"""Adam and AdamW (``torch.optim.Adam``, ``torch.optim.AdamW``), one fused kernel per parameter."""
from .checks import check_betas, check_flags, check_nonnegative
from .optimizer import Optimizer, advance_step, state_array, state_tensor, step_tensor


def adam_scalars(group):
    """(L2 coefficient, decoupled decay factor) of an Adam-family group at this step."""
    lr, wd = float(group["lr"]), float(group["weight_decay"])
    if wd == 0.0:
        return 0.0, 1.0
    if group.get("decoupled_weight_decay", False):
        return 0.0, 1.0 - lr * wd
    return wd, 1.0


class Adam(Optimizer):
    """Adam (Kingma and Ba), with PyTorch's ``torch.optim.Adam`` options and state layout.

    Per step t, with g the gradient (negated if ``maximize``): m = b1 m + (1 - b1) g,
    v = b2 v + (1 - b2) g^2 (with ``amsgrad`` the running max of v is used), and
    p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps). ``weight_decay`` adds
    wd * p to g, or with ``decoupled_weight_decay`` multiplies p by 1 - lr * wd (AdamW).

    Args:
        params: persistent float tensors, or dicts of them with per-group options.
        lr: learning rate (default 1e-3).
        betas: averaging coefficients (b1, b2) of the gradient and its square (0.9, 0.999).
        eps: added to the denominator (1e-8).
        weight_decay: L2 penalty (0).
        amsgrad: use the maximum of past second moments (False).
        foreach, capturable, fused: accepted for PyTorch compatibility, ignored.
        differentiable: must be False.
        maximize: follow the gradient up.
        decoupled_weight_decay: decay the weights directly, as AdamW.

    State per parameter (as PyTorch): ``step`` (float32 0-d tensor), ``exp_avg``,
    ``exp_avg_sq`` and with amsgrad ``max_exp_avg_sq``, persistent.

    Example:
        >>> opt = newch.optim.Adam(model.parameters(), lr=1e-3)
        >>> loss.backward(); opt.step(); opt.zero_grad()
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        defaults = dict(lr=lr, betas=tuple(betas) if isinstance(betas, list) else betas, eps=eps,
                        weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable,
                        fused=fused, decoupled_weight_decay=decoupled_weight_decay)
        self.check_group(defaults)
        super().__init__(params, defaults)

    def check_group(self, group):
        """Validate lr, eps, betas and weight_decay as PyTorch does."""
        name = type(self).__name__
        check_nonnegative(name, group, "lr", "eps")
        check_betas(name, group["betas"])
        check_nonnegative(name, group, "weight_decay")
        check_flags(name, group)

    def init_single(self, p, group):
        """Zero moments (and their running max with amsgrad) and a step count of 0."""
        state = {"step": step_tensor(), "exp_avg": state_tensor(p), "exp_avg_sq": state_tensor(p)}
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = state_tensor(p)
        return state

    def apply_single(self, kernels, param, grad, state, group, fresh):
        """One fused ``adam_step`` kernel call."""
        op = f"{type(self).__name__}.step"
        m = state_array(state, "exp_avg", param, op)
        v = state_array(state, "exp_avg_sq", param, op)
        amsgrad = bool(group["amsgrad"])
        vmax = state_array(state, "max_exp_avg_sq", param, op) if amsgrad else param[:0]
        step = advance_step(state, op)
        beta1, beta2 = (float(b) for b in group["betas"])
        lr = float(group["lr"])
        l2, decay = adam_scalars(group)
        step_size = lr / (1 - beta1 ** step)
        bc2_sqrt = (1 - beta2 ** step) ** 0.5
        kernels.adam_step(param, grad, m, v, vmax, l2, decay, beta1, beta2, float(group["eps"]),
                          step_size, bc2_sqrt, amsgrad, bool(group["maximize"]))


class AdamW(Adam):
    """Adam with decoupled weight decay (``torch.optim.AdamW``): p *= 1 - lr * weight_decay.

    Same arguments and state as :class:`Adam`, but ``weight_decay`` defaults to
    1e-2 and ``decoupled_weight_decay`` is always True.

    Example:
        >>> opt = newch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable, differentiable=differentiable,
                         fused=fused, decoupled_weight_decay=True)
