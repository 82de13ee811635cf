"""Cyclic learning-rate schedules: CosineAnnealingWarmRestarts and OneCycleLR (PyTorch's rules)."""
import math

from .lr_base import LRScheduler, check_optimizer, per_group


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing that restarts: the i-th cycle lasts T_0 * T_mult^i epochs.

    lr = eta_min + (initial lr - eta_min) (1 + cos(pi T_cur / T_i)) / 2, where
    T_cur counts epochs since the last restart. ``step(epoch)`` accepts
    fractional epochs (e.g. ``epoch + batch / n_batches``), as in PyTorch.

    Example:
        >>> sched = CosineAnnealingWarmRestarts(opt, T_0=10, T_mult=2)
    """

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1):
        if not isinstance(T_0, int) or T_0 <= 0:
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if not isinstance(T_mult, int) or T_mult < 1:
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type "
                             f"{type(eta_min)}")
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """The cosine of the position T_cur / T_i in the current cycle."""
        self._lrs()
        c = 1 + math.cos(math.pi * self.T_cur / self.T_i)
        return [self.eta_min + (base - self.eta_min) * c / 2 for base in self.base_lrs]

    def step(self, epoch=None):
        """Advance one epoch, or jump to ``epoch`` (may be fractional) and set every lr."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        else:
            self._jump(epoch)
        self.last_epoch = math.floor(epoch)
        self._get_lr_called_within_step = True
        try:
            values = self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        self._set_lrs(values)

    def _jump(self, epoch):
        if epoch < 0:
            raise ValueError(f"Expected non-negative epoch, but got {epoch}")
        if epoch < self.T_0:
            self.T_i = self.T_0
            self.T_cur = epoch
        elif self.T_mult == 1:
            self.T_cur = epoch % self.T_0
        else:
            n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
            self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
            self.T_i = self.T_0 * self.T_mult ** n


def _phases(total, pct_start, three_phase):
    up = {"end_step": float(pct_start * total) - 1, "start_lr": "initial_lr",
          "end_lr": "max_lr", "start_momentum": "max_momentum", "end_momentum": "base_momentum"}
    if not three_phase:
        return [up, {"end_step": total - 1, "start_lr": "max_lr", "end_lr": "min_lr",
                     "start_momentum": "base_momentum", "end_momentum": "max_momentum"}]
    return [up,
            {"end_step": float(2 * pct_start * total) - 2, "start_lr": "max_lr",
             "end_lr": "initial_lr", "start_momentum": "base_momentum",
             "end_momentum": "max_momentum"},
            {"end_step": total - 1, "start_lr": "initial_lr", "end_lr": "min_lr",
             "start_momentum": "max_momentum", "end_momentum": "max_momentum"}]


def _total_steps(total_steps, epochs, steps_per_epoch):
    if total_steps is not None:
        if not isinstance(total_steps, int) or total_steps <= 0:
            raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
        return total_steps
    if epochs is None or steps_per_epoch is None:
        raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
    if not isinstance(epochs, int) or epochs <= 0:
        raise ValueError(f"Expected positive integer epochs, but got {epochs}")
    if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
        raise ValueError(f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}")
    return epochs * steps_per_epoch


class OneCycleLR(LRScheduler):
    """The 1cycle policy: lr rises from max_lr / div_factor to ``max_lr``, then anneals to
    max_lr / div_factor / final_div_factor; momentum (or Adam's beta1) moves the other way.
    Step it after every batch.

    Args:
        optimizer: the optimizer. max_lr: peak lr (or one per group).
        total_steps: number of steps, or give ``epochs`` and ``steps_per_epoch``.
        pct_start: fraction of the steps spent rising (0.3). anneal_strategy: 'cos' or 'linear'.
        cycle_momentum: also cycle momentum between base_momentum (0.85) and max_momentum (0.95).
        div_factor: 25. final_div_factor: 1e4. three_phase: rise, fall back, then anneal.

    Example:
        >>> sched = OneCycleLR(opt, max_lr=0.1, total_steps=1000)
    """

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None,
                 pct_start=0.3, anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85,
                 max_momentum=0.95, div_factor=25.0, final_div_factor=1e4, three_phase=False,
                 last_epoch=-1):
        check_optimizer(optimizer)
        self.optimizer = optimizer
        self.total_steps = _total_steps(total_steps, epochs, steps_per_epoch)
        self._schedule_phases = _phases(self.total_steps, pct_start, three_phase)
        if not isinstance(pct_start, float) or pct_start < 0 or pct_start > 1:
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._anneal_func_type = anneal_strategy
        max_lrs = per_group("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for peak, group in zip(max_lrs, optimizer.param_groups):
                group["initial_lr"] = peak / div_factor
                group["max_lr"] = peak
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self._init_momentum(optimizer, base_momentum, max_momentum, last_epoch)
        super().__init__(optimizer, last_epoch)

    def _init_momentum(self, optimizer, base_momentum, max_momentum, last_epoch):
        if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
            raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` "
                             "option enabled")
        self.use_beta1 = "betas" in optimizer.defaults
        highs = per_group("max_momentum", optimizer, max_momentum)
        lows = per_group("base_momentum", optimizer, base_momentum)
        if last_epoch == -1:
            for high, low, group in zip(highs, lows, optimizer.param_groups):
                self._set_momentum(group, high)
                group["max_momentum"] = high
                group["base_momentum"] = low

    def _set_momentum(self, group, value):
        if self.use_beta1:
            group["betas"] = (value, *group["betas"][1:])
        else:
            group["momentum"] = value

    def _anneal(self, start, end, pct):
        if self._anneal_func_type == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self):
        """The lr of this step's phase (and sets the group's momentum when cycling it)."""
        self._lrs()
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"Tried to step {step} times. The specified number of total steps "
                             f"is {self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end = phase["end_step"]
                if step <= end or i == len(self._schedule_phases) - 1:
                    pct = (step - start) / (end - start)
                    lrs.append(self._anneal(group[phase["start_lr"]], group[phase["end_lr"]],
                                            pct))
                    if self.cycle_momentum:
                        self._set_momentum(group, self._anneal(
                            group[phase["start_momentum"]], group[phase["end_momentum"]], pct))
                    break
                start = phase["end_step"]
        return lrs
