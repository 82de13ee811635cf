"""RMSprop, Adagrad and Adadelta (``torch.optim``): steps scaled by a running sum of squares."""
from .checks import check_flags, check_nonnegative
from .optimizer import Optimizer, advance_step, state_array, state_tensor, step_tensor


class RMSprop(Optimizer):
    """RMSprop (``torch.optim.RMSprop``), optionally centered and with momentum.

    v = alpha v + (1 - alpha) g^2; avg = sqrt(v - ga^2) + eps when ``centered``
    (ga = alpha ga + (1 - alpha) g), else sqrt(v) + eps; with momentum
    buf = momentum buf + g / avg and p -= lr buf, else p -= lr g / avg. g is the
    gradient (negated if ``maximize``) plus weight_decay * p.

    Args:
        params: tensors or parameter groups. lr: 1e-2. alpha: 0.99. eps: 1e-8.
        weight_decay: 0. momentum: 0. centered: False. capturable, foreach: ignored.
        maximize: False. differentiable: must be False.

    Example:
        >>> opt = newch.optim.RMSprop(model.parameters(), lr=1e-2, momentum=0.9)
    """

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                        maximize=maximize, differentiable=differentiable)
        self.check_group(defaults)
        super().__init__(params, defaults)

    def check_group(self, group):
        """Validate lr, eps, momentum, weight_decay and alpha as PyTorch does."""
        check_nonnegative("RMSprop", group, "lr", "eps", "momentum", "weight_decay", "alpha")
        check_flags("RMSprop", group)

    def init_single(self, p, group):
        """Step 0, zero ``square_avg``; ``momentum_buffer`` and ``grad_avg`` when used."""
        state = {"step": step_tensor(), "square_avg": state_tensor(p)}
        if group["momentum"] > 0:
            state["momentum_buffer"] = state_tensor(p)
        if group["centered"]:
            state["grad_avg"] = state_tensor(p)
        return state

    def apply_single(self, kernels, param, grad, state, group, fresh):
        """One fused ``rmsprop_step`` kernel call."""
        op = "RMSprop.step"
        momentum, centered = float(group["momentum"]), bool(group["centered"])
        v = state_array(state, "square_avg", param, op)
        ga = state_array(state, "grad_avg", param, op) if centered else param[:0]
        buf = state_array(state, "momentum_buffer", param, op) if momentum > 0 else param[:0]
        advance_step(state, op)
        kernels.rmsprop_step(param, grad, v, ga, buf, float(group["lr"]), float(group["alpha"]),
                             float(group["eps"]), float(group["weight_decay"]), momentum,
                             centered, bool(group["maximize"]))


def _adagrad_state(p, initial_accumulator_value):
    total = state_tensor(p)
    total._data("Adagrad").fill(float(initial_accumulator_value))
    return {"step": step_tensor(), "sum": total}


class Adagrad(Optimizer):
    """Adagrad (``torch.optim.Adagrad``): steps scaled by the root of the summed squared gradients.

    sum += g^2; p -= lr / (1 + (t - 1) lr_decay) * g / (sqrt(sum) + eps), with g the
    gradient (negated if ``maximize``) plus weight_decay * p. As in PyTorch the state
    (``step`` and ``sum``, filled with ``initial_accumulator_value``) is made at
    construction, so a state_dict has it before the first step.

    Args:
        params: tensors or parameter groups. lr: 1e-2. lr_decay: 0. weight_decay: 0.
        initial_accumulator_value: 0. eps: 1e-10. foreach, fused: ignored.
        maximize: False. differentiable: must be False.

    Example:
        >>> opt = newch.optim.Adagrad(model.parameters(), lr=0.01, lr_decay=1e-4)
    """

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None):
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, fused=fused)
        self.check_group(defaults)
        super().__init__(params, defaults)
        # NOTE: as PyTorch, the constructor's initial_accumulator_value fills every sum made
        # here, even for a group that gives its own (that one serves groups added later)
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p] = _adagrad_state(p, initial_accumulator_value)

    def check_group(self, group):
        """Validate lr, lr_decay, weight_decay, initial_accumulator_value and eps."""
        check_nonnegative("Adagrad", group, "lr", "lr_decay", "weight_decay",
                          "initial_accumulator_value", "eps")
        check_flags("Adagrad", group)

    def init_single(self, p, group):
        """Step 0 and ``sum`` filled with the group's ``initial_accumulator_value`` (for
        parameters of a group added after construction)."""
        return _adagrad_state(p, group["initial_accumulator_value"])

    def apply_single(self, kernels, param, grad, state, group, fresh):
        """One fused ``adagrad_step`` kernel call."""
        total = state_array(state, "sum", param, "Adagrad.step")
        step = advance_step(state, "Adagrad.step")
        clr = float(group["lr"]) / (1 + (step - 1) * float(group["lr_decay"]))
        kernels.adagrad_step(param, grad, total, float(group["weight_decay"]),
                             float(group["eps"]), clr, bool(group["maximize"]))


class Adadelta(Optimizer):
    """Adadelta (``torch.optim.Adadelta``): steps scaled by running averages of g^2 and of steps.

    v = rho v + (1 - rho) g^2; delta = sqrt(acc + eps) / sqrt(v + eps) g;
    acc = rho acc + (1 - rho) delta^2; p -= lr delta.

    Args:
        params: tensors or parameter groups. lr: 1.0. rho: 0.9. eps: 1e-6.
        weight_decay: 0. foreach, capturable: ignored. maximize: False.
        differentiable: must be False.

    Example:
        >>> opt = newch.optim.Adadelta(model.parameters())
    """

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        self.check_group(defaults)
        super().__init__(params, defaults)

    def check_group(self, group):
        """Validate lr, rho (in [0, 1]), eps and weight_decay as PyTorch does."""
        check_nonnegative("Adadelta", group, "lr", "rho")
        if not group["rho"] <= 1.0:
            raise ValueError(f"Invalid rho value: {group['rho']}")
        check_nonnegative("Adadelta", group, "eps", "weight_decay")
        check_flags("Adadelta", group)

    def init_single(self, p, group):
        """Step 0, zero ``square_avg`` and ``acc_delta``."""
        return {"step": step_tensor(), "square_avg": state_tensor(p),
                "acc_delta": state_tensor(p)}

    def apply_single(self, kernels, param, grad, state, group, fresh):
        """One fused ``adadelta_step`` kernel call."""
        v = state_array(state, "square_avg", param, "Adadelta.step")
        acc = state_array(state, "acc_delta", param, "Adadelta.step")
        advance_step(state, "Adadelta.step")
        kernels.adadelta_step(param, grad, v, acc, float(group["lr"]), float(group["rho"]),
                              float(group["eps"]), float(group["weight_decay"]),
                              bool(group["maximize"]))
