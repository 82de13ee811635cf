"""The learning-rate scheduler base: ``initial_lr`` bookkeeping, ``step()``, state_dict.

A scheduler sets ``group["lr"]`` of every parameter group of its optimizer
each time ``step()`` is called (once per epoch, or per batch for OneCycleLR).
Like PyTorch, ``step()`` follows the recursive ("chainable") rule of each
scheduler: the new lr is computed from the group's current lr, so several
schedulers can act on one optimizer; ``step(epoch)`` (deprecated in PyTorch)
uses the closed form of the epoch instead, where the scheduler has one.

The attribute names are PyTorch's (``base_lrs``, ``last_epoch``,
``_step_count``, ``_last_lr``, ...), so a state_dict carries over between
the two libraries.
"""
import functools
import warnings
import weakref

from .optimizer import Optimizer

EPOCH_DEPRECATED = ("lr_scheduler.step(epoch): passing an epoch is deprecated in PyTorch; "
                    "call scheduler.step() once per epoch. The closed form of the schedule "
                    "is used for this step.")


def per_group(name, optimizer, value):
    """``value`` repeated for every parameter group, or a list checked to have one per group."""
    if isinstance(value, (list, tuple)):
        if len(value) != len(optimizer.param_groups):
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. "
                             f"{name} has {len(value)} values, param_groups has "
                             f"{len(optimizer.param_groups)}.")
        return list(value)
    return [value] * len(optimizer.param_groups)


def check_optimizer(optimizer):
    """TypeError unless ``optimizer`` is a newch Optimizer."""
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")


def track_steps(optimizer):
    """Make ``optimizer.step()`` record that it ran, also when a subclass overrides ``step``.

    The base ``Optimizer.step`` records it itself; an override is wrapped on the
    instance (through a weak reference: no cycle keeps the optimizer alive).
    """
    func = type(optimizer).step
    if func is Optimizer.step or getattr(optimizer.step, "_newch_tracked", False):
        return
    ref = weakref.ref(optimizer)

    @functools.wraps(func)
    def tracked(*args, **kwargs):
        opt = ref()
        opt._opt_called = True
        return func(opt, *args, **kwargs)
    tracked._newch_tracked = True
    optimizer.step = tracked


class LRScheduler:
    """Base class of the learning-rate schedulers (``torch.optim.lr_scheduler.LRScheduler``).

    Args:
        optimizer: the optimizer whose groups' ``lr`` this scheduler sets.
        last_epoch: index of the last epoch done; -1 (default) starts a new
            schedule and records each group's ``lr`` as its ``initial_lr``. A
            value >= 0 resumes and needs ``initial_lr`` in every group.

    Subclasses define ``get_lr()`` (the recursive rule) and may define
    ``_get_closed_form_lr()``.

    Example:
        >>> sched = newch.optim.lr_scheduler.StepLR(opt, step_size=30, gamma=0.1)
        >>> for epoch in range(100):
        ...     opt.step(); sched.step()      # one epoch of training, then the schedule
        >>> [round(lr, 8) for lr in sched.get_last_lr()]    # 0.1 cut by 10 at 30, 60, 90
        [0.0001]
    """

    _get_lr_called_within_step = False
    _is_initial = False

    def __init__(self, optimizer, last_epoch=-1):
        check_optimizer(optimizer)
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] "
                                   f"when resuming scheduler with last_epoch >= 0; load the "
                                   f"optimizer's state_dict first, or start with last_epoch=-1")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        track_steps(optimizer)
        self._initial_step()

    def _initial_step(self):
        """The step every scheduler takes at construction (sets the lr of epoch 0)."""
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self):
        """The lr of every group for ``last_epoch`` (use ``get_last_lr()`` from outside)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement get_lr")

    def _lrs(self):
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use "
                          "`get_last_lr()`.", UserWarning, stacklevel=3)
        return [group["lr"] for group in self.optimizer.param_groups]

    def get_last_lr(self):
        """The learning rates (one per group) set by the last ``step()``.

        Example:
            >>> sched = newch.optim.lr_scheduler.StepLR(opt, step_size=30)
            >>> sched.get_last_lr()
            [0.1]
        """
        return self._last_lr

    def step(self, epoch=None):
        """Advance the schedule one epoch and set every group's ``lr``.

        Args:
            epoch: deprecated; jump to this epoch using the closed form.
        """
        if self._step_count == 1 and not getattr(self.optimizer, "_opt_called", False):
            warnings.warn("Detected call of `lr_scheduler.step()` before `optimizer.step()`; "
                          "call `optimizer.step()` first, or the first value of the schedule "
                          "is skipped.", UserWarning, stacklevel=2)
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATED, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch=None):
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed = getattr(self, "_get_closed_form_lr", None)
                values = closed() if closed is not None else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        self._set_lrs(values)

    def _set_lrs(self, values):
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self):
        """The scheduler's state: every attribute but the optimizer (PyTorch's layout).

        Example:
            >>> sched = newch.optim.lr_scheduler.StepLR(opt, step_size=30)
            >>> for _ in range(3):
            ...     opt.step(); sched.step()
            >>> sd = sched.state_dict(); sd["last_epoch"]
            3
        """
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict):
        """Restore a state saved by ``state_dict()``.

        Example:
            >>> sched = newch.optim.lr_scheduler.StepLR(opt, step_size=30)
            >>> sched.load_state_dict({"last_epoch": 3, "_step_count": 4})   # from torch too
            >>> sched.last_epoch
            3
        """
        if not isinstance(state_dict, dict):
            raise TypeError(f"{type(self).__name__}.load_state_dict: expected a dict, got "
                            f"{type(state_dict).__name__}")
        self.__dict__.update(state_dict)
