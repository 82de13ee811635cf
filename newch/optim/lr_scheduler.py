"""Learning-rate schedulers (``torch.optim.lr_scheduler``): lr as a function of the epoch.

Each class sets ``group["lr"]`` of its optimizer on ``step()`` with PyTorch's
recursive rule (``get_lr``) and, where PyTorch has one, its closed form
(``step(epoch)``). The cyclic schedules live in ``lr_cycles``, ReduceLROnPlateau
in ``lr_plateau`` and the combinators in ``lr_sequence``; all are importable
from here.

Example:
    >>> from newch.optim.lr_scheduler import CosineAnnealingLR
    >>> sched = CosineAnnealingLR(opt, T_max=100)
    >>> for epoch in range(100):
    ...     opt.step(); sched.step()          # one epoch of training, then the schedule
"""
import math
import types
from bisect import bisect_right
from collections import Counter

from .lr_base import LRScheduler, per_group


def _lambda_state(self):
    state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
    # NOTE: as in PyTorch, plain functions are not saved; callable objects save their __dict__
    state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
                           for fn in self.lr_lambdas]
    return state


def _lambda_load(self, state_dict):
    state = dict(state_dict)
    saved = state.pop("lr_lambdas", [])
    self.__dict__.update(state)
    for fn, d in zip(self.lr_lambdas, saved):
        if d is not None:
            fn.__dict__.update(d)


def _lambdas(optimizer, lr_lambda):
    if isinstance(lr_lambda, (list, tuple)):
        if len(lr_lambda) != len(optimizer.param_groups):
            raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got "
                             f"{len(lr_lambda)}")
        fns = list(lr_lambda)
    else:
        fns = [lr_lambda] * len(optimizer.param_groups)
    for fn in fns:
        if not callable(fn):
            raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
    return fns


class LambdaLR(LRScheduler):
    """lr = initial lr * ``lr_lambda(epoch)`` (one function, or one per group).

    Example:
        >>> sched = LambdaLR(opt, lr_lambda=lambda epoch: 0.95 ** epoch)
    """

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = optimizer
        self.lr_lambdas = _lambdas(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """base_lr * lr_lambda(last_epoch) per group."""
        self._lrs()
        return [base * fn(self.last_epoch) for fn, base in zip(self.lr_lambdas, self.base_lrs)]

    state_dict = _lambda_state
    load_state_dict = _lambda_load


class MultiplicativeLR(LRScheduler):
    """Each step multiplies lr by ``lr_lambda(epoch)``.

    Example:
        >>> sched = MultiplicativeLR(opt, lr_lambda=lambda epoch: 0.95)
    """

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = optimizer
        self.lr_lambdas = _lambdas(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """lr * lr_lambda(last_epoch) per group (unchanged on the initial step)."""
        lrs = self._lrs()
        if self._is_initial:
            return lrs
        return [lr * fn(self.last_epoch) for fn, lr in zip(self.lr_lambdas, lrs)]

    state_dict = _lambda_state
    load_state_dict = _lambda_load


class StepLR(LRScheduler):
    """Multiply lr by ``gamma`` every ``step_size`` epochs.

    Example:
        >>> sched = StepLR(opt, step_size=30, gamma=0.1)   # 0.1, 0.01 at 30, 0.001 at 60
    """

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """lr * gamma when last_epoch is a positive multiple of step_size, else lr."""
        lrs = self._lrs()
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return lrs
        return [lr * self.gamma for lr in lrs]

    def _get_closed_form_lr(self):
        return [base * self.gamma ** (self.last_epoch // self.step_size) for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply lr by ``gamma`` at each epoch listed in ``milestones`` (repeats count twice).

    Example:
        >>> sched = MultiStepLR(opt, milestones=[30, 80], gamma=0.1)
    """

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """lr * gamma^(times last_epoch is listed) at a milestone, else lr."""
        lrs = self._lrs()
        if self.last_epoch not in self.milestones:
            return lrs
        return [lr * self.gamma ** self.milestones[self.last_epoch] for lr in lrs]

    def _get_closed_form_lr(self):
        passed = bisect_right(sorted(self.milestones.elements()), self.last_epoch)
        return [base * self.gamma ** passed for base in self.base_lrs]


class ConstantLR(LRScheduler):
    """lr * ``factor`` for the first ``total_iters`` epochs, then lr.

    Example:
        >>> sched = ConstantLR(opt, factor=0.5, total_iters=4)
    """

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """lr * factor at epoch 0, lr / factor at total_iters, else lr."""
        lrs = self._lrs()
        if self.last_epoch == 0:
            return [lr * self.factor for lr in lrs]
        if self.last_epoch != self.total_iters:
            return lrs
        return [lr * (1.0 / self.factor) for lr in lrs]

    def _get_closed_form_lr(self):
        done = self.last_epoch >= self.total_iters
        return [base * (self.factor + done * (1 - self.factor)) for base in self.base_lrs]


class LinearLR(LRScheduler):
    """lr scaled by a factor going linearly from ``start_factor`` to ``end_factor`` over
    ``total_iters`` epochs.

    Example:
        >>> sched = LinearLR(opt, start_factor=0.1, total_iters=10)   # a linear warm-up
    """

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5,
                 last_epoch=-1):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and "
                             "less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """The ratio of consecutive factors applied to the current lr."""
        lrs = self._lrs()
        if self.last_epoch == 0:
            return [lr * self.start_factor for lr in lrs]
        if self._is_initial or self.last_epoch > self.total_iters:
            return lrs
        span = self.end_factor - self.start_factor
        ratio = 1.0 + span / (self.total_iters * self.start_factor
                              + (self.last_epoch - 1) * span)
        return [lr * ratio for lr in lrs]

    def _get_closed_form_lr(self):
        span = self.end_factor - self.start_factor
        f = self.start_factor + span * min(self.total_iters, self.last_epoch) / self.total_iters
        return [base * f for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply lr by ``gamma`` every epoch.

    Example:
        >>> sched = ExponentialLR(opt, gamma=0.95)
    """

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """lr * gamma (unchanged on the initial step)."""
        lrs = self._lrs()
        return lrs if self._is_initial else [lr * self.gamma for lr in lrs]

    def _get_closed_form_lr(self):
        return [base * self.gamma ** self.last_epoch for base in self.base_lrs]


class PolynomialLR(LRScheduler):
    """lr * (1 - epoch / total_iters) ** power, then 0 after ``total_iters`` epochs.

    Example:
        >>> sched = PolynomialLR(opt, total_iters=100, power=2.0)
    """

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1):
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """The ratio of consecutive polynomial factors applied to the current lr."""
        lrs = self._lrs()
        if self._is_initial or self.last_epoch > self.total_iters:
            return lrs
        t, n = self.last_epoch, self.total_iters
        ratio = ((1.0 - t / n) / (1.0 - (t - 1) / n)) ** self.power
        return [lr * ratio for lr in lrs]

    def _get_closed_form_lr(self):
        f = (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters) ** self.power
        return [base * f for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Cosine annealing from the initial lr down to ``eta_min`` over ``T_max`` epochs
    (and back up over the next ``T_max``, as PyTorch's recursive rule does).

    Example:
        >>> sched = CosineAnnealingLR(opt, T_max=50, eta_min=1e-5)
    """

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """PyTorch's recursive cosine rule."""
        lrs = self._lrs()
        t, T, lo = self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return lrs
        if self._step_count == 1 and t > 0:
            return [lo + (base - lo) * (1 + math.cos(t * math.pi / T)) / 2
                    for base in self.base_lrs]
        if (t - 1 - T) % (2 * T) == 0:
            return [lr + (base - lo) * (1 - math.cos(math.pi / T)) / 2
                    for base, lr in zip(self.base_lrs, lrs)]
        ratio = (1 + math.cos(math.pi * t / T)) / (1 + math.cos(math.pi * (t - 1) / T))
        return [ratio * (lr - lo) + lo for lr in lrs]

    def _get_closed_form_lr(self):
        c = 1 + math.cos(math.pi * self.last_epoch / self.T_max)
        return [self.eta_min + (base - self.eta_min) * c / 2 for base in self.base_lrs]


# NOTE: imported last: these modules build on LRScheduler and the helpers above.
from .lr_cycles import CosineAnnealingWarmRestarts, OneCycleLR  # noqa: E402
from .lr_plateau import ReduceLROnPlateau  # noqa: E402
from .lr_sequence import ChainedScheduler, SequentialLR  # noqa: E402

__all__ = ["LRScheduler", "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR",
           "LinearLR", "ExponentialLR", "PolynomialLR", "CosineAnnealingLR",
           "CosineAnnealingWarmRestarts", "OneCycleLR", "ReduceLROnPlateau", "SequentialLR",
           "ChainedScheduler"]
