"""Adamax, NAdam and RAdam (``torch.optim``): Adam's moments with other step rules."""
from .adam import adam_scalars
from .checks import check_betas, check_flags, check_nonnegative
from .optimizer import Optimizer, advance_step, state_array, state_tensor, step_tensor
from ..ops.alloc import data
from ..tensor import Tensor


class _AdamLike(Optimizer):
    """Validation and state shared by Adamax, NAdam and RAdam."""

    _extra = ()   # further options that must be >= 0

    def check_group(self, group):
        """Validate lr, eps, betas, weight_decay (and the class's own options) as PyTorch does."""
        name = type(self).__name__
        check_nonnegative(name, group, "lr", "eps")
        check_betas(name, group["betas"])
        check_nonnegative(name, group, "weight_decay", *self._extra)
        check_flags(name, group)

    def init_single(self, p, group):
        """A step count of 0 and zero first and second moments."""
        return {"step": step_tensor(), "exp_avg": state_tensor(p), "exp_avg_sq": state_tensor(p)}


class Adamax(_AdamLike):
    """Adamax: Adam with the infinity norm (``torch.optim.Adamax``).

    exp_avg = b1 exp_avg + (1 - b1) g; exp_inf = max(b2 exp_inf, |g| + eps);
    p -= lr / (1 - b1^t) * exp_avg / exp_inf, with g the gradient (negated if
    ``maximize``) plus weight_decay * p.

    Args:
        params: tensors or parameter groups. lr: 2e-3. betas: (0.9, 0.999). eps: 1e-8.
        weight_decay: 0. foreach, capturable: ignored. differentiable: must be False.
        maximize: False.

    Example:
        >>> opt = newch.optim.Adamax(model.parameters(), lr=2e-3)
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        self.check_group(defaults)
        super().__init__(params, defaults)

    def init_single(self, p, group):
        """A step count of 0, zero ``exp_avg`` and ``exp_inf``."""
        return {"step": step_tensor(), "exp_avg": state_tensor(p), "exp_inf": state_tensor(p)}

    def apply_single(self, kernels, param, grad, state, group, fresh):
        """One fused ``adamax_step`` kernel call."""
        m = state_array(state, "exp_avg", param, "Adamax.step")
        u = state_array(state, "exp_inf", param, "Adamax.step")
        step = advance_step(state, "Adamax.step")
        beta1, beta2 = (float(b) for b in group["betas"])
        clr = float(group["lr"]) / (1 - beta1 ** step)
        kernels.adamax_step(param, grad, m, u, float(group["weight_decay"]), beta1, beta2,
                            float(group["eps"]), clr, bool(group["maximize"]))


class NAdam(_AdamLike):
    """NAdam: Adam with Nesterov momentum (``torch.optim.NAdam``).

    mu_t = b1 (1 - 0.5 * 0.96^(t * momentum_decay)); with Adam's moments m and v,
    denom = sqrt(v / (1 - b2^t)) + eps and p -= lr (1 - mu_t) / (1 - prod mu) g / denom
    + lr mu_{t+1} / (1 - prod mu * mu_{t+1}) m / denom. ``mu_product`` is kept, as in
    PyTorch, in a float32 0-d tensor (the parameter's dtype after a load).

    Args:
        params: tensors or parameter groups. lr: 2e-3. betas: (0.9, 0.999). eps: 1e-8.
        weight_decay: 0. momentum_decay: 4e-3. decoupled_weight_decay: decay p directly
        (NAdamW). foreach, capturable: ignored. differentiable: must be False. maximize: False.

    Example:
        >>> opt = newch.optim.NAdam(model.parameters(), lr=2e-3)
    """

    _extra = ("momentum_decay",)

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable)
        self.check_group(defaults)
        super().__init__(params, defaults)

    def init_single(self, p, group):
        """A step count of 0, ``mu_product`` 1 and zero moments."""
        return {"step": step_tensor(), "mu_product": step_tensor(1.0),
                "exp_avg": state_tensor(p), "exp_avg_sq": state_tensor(p)}

    def apply_single(self, kernels, param, grad, state, group, fresh):
        """Update ``mu_product``, then one fused ``nadam_step`` kernel call."""
        op = "NAdam.step"
        m = state_array(state, "exp_avg", param, op)
        v = state_array(state, "exp_avg_sq", param, op)
        mp = state.get("mu_product")
        if not isinstance(mp, Tensor) or data(mp, op).size != 1:
            raise ValueError(f"{op}: a parameter's state has no one-element 'mu_product' tensor")
        step = advance_step(state, op)
        beta1, beta2 = (float(b) for b in group["betas"])
        lr, md = float(group["lr"]), float(group["momentum_decay"])
        mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * md))
        mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * md))
        a = data(mp, op)
        a[...] = a * a.dtype.type(mu)        # rounded in mu_product's dtype, as PyTorch
        mp._bump_version()
        prod = float(a.reshape(-1)[0])
        l2, decay = adam_scalars(group)
        kernels.nadam_step(param, grad, m, v, l2, decay, beta1, beta2, float(group["eps"]),
                           1 - beta2 ** step, -lr * (1.0 - mu) / (1.0 - prod),
                           (-lr * mu_next) / (1.0 - prod * mu_next), bool(group["maximize"]))


class RAdam(_AdamLike):
    """RAdam: Adam with a rectified adaptive step (``torch.optim.RAdam``).

    While the variance of the adaptive term is intractable (rho_t <= 5, the
    first few steps) the step is p -= lr m / (1 - b1^t); after, it is multiplied
    by sqrt(1 - b2^t) / (sqrt(v) + eps) and the rectification factor r_t.

    Args:
        params: tensors or parameter groups. lr: 1e-3. betas: (0.9, 0.999). eps: 1e-8.
        weight_decay: 0. decoupled_weight_decay: decay p directly. foreach, capturable:
        ignored. differentiable: must be False. maximize: False.

    Example:
        >>> opt = newch.optim.RAdam(model.parameters(), lr=1e-3)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        self.check_group(defaults)
        super().__init__(params, defaults)

    def apply_single(self, kernels, param, grad, state, group, fresh):
        """One fused ``radam_step`` kernel call."""
        m = state_array(state, "exp_avg", param, "RAdam.step")
        v = state_array(state, "exp_avg_sq", param, "RAdam.step")
        step = advance_step(state, "RAdam.step")
        beta1, beta2 = (float(b) for b in group["betas"])
        bc2 = 1 - beta2 ** step
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bc2
        rect = 0.0
        if rho_t > 5.0:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                    / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
        l2, decay = adam_scalars(group)
        kernels.radam_step(param, grad, m, v, l2, decay, beta1, beta2, float(group["eps"]),
                           1 - beta1 ** step, float(group["lr"]), bc2 ** 0.5, rect,
                           bool(group["maximize"]))
