"""Callbacks: code ``fit`` runs at the start and end of training, epochs and batches (Keras's hooks).

Subclass ``Callback`` and override the hooks you need; ``self.model`` is the
module being trained and ``self.params`` holds ``epochs`` and ``steps``. Setting
``self.model.stop_training = True`` ends ``fit`` after the current epoch.
"""
import math
import os
import tempfile

from ..context import default_context
from ..serialization import save


class Callback:
    """Base class: every hook does nothing; ``logs`` is a dict of the figures so far.

    Example:
        >>> class Count(Callback):
        ...     def on_epoch_end(self, epoch, logs=None):
        ...         print("epoch", epoch, "done")
    """

    def __init__(self):
        self.model = None
        self.params = {}

    def set_model(self, model):
        self.model = model

    def set_params(self, params):
        self.params = params

    def on_train_begin(self, logs=None): pass
    def on_train_end(self, logs=None): pass
    def on_epoch_begin(self, epoch, logs=None): pass
    def on_epoch_end(self, epoch, logs=None): pass
    def on_train_batch_begin(self, batch, logs=None): pass
    def on_train_batch_end(self, batch, logs=None): pass
    def on_test_begin(self, logs=None): pass
    def on_test_end(self, logs=None): pass
    def on_test_batch_begin(self, batch, logs=None): pass
    def on_test_batch_end(self, batch, logs=None): pass
    def on_predict_begin(self, logs=None): pass
    def on_predict_end(self, logs=None): pass
    def on_predict_batch_begin(self, batch, logs=None): pass
    def on_predict_batch_end(self, batch, logs=None): pass


class CallbackList:
    """Calls one hook on every callback in order."""

    def __init__(self, callbacks, model, params):
        self.callbacks = list(callbacks or ())
        for c in self.callbacks:
            if not isinstance(c, Callback):
                raise TypeError(f"fit: callbacks must be newch.train.Callback instances, got "
                                f"{type(c).__name__}")
            c.set_model(model)
            c.set_params(params)

    def __getattr__(self, hook):
        if not hook.startswith("on_"):
            raise AttributeError(hook)

        def call(*args):
            for c in self.callbacks:
                getattr(c, hook)(*args)
        return call


def _better(mode, monitor):
    if mode not in ("auto", "min", "max"):
        raise ValueError(f"mode must be 'auto', 'min' or 'max', got {mode!r}")
    if mode == "auto":
        mode = "max" if "acc" in monitor else "min"
    return (lambda a, b: a > b) if mode == "max" else (lambda a, b: a < b), mode


class EarlyStopping(Callback):
    """Stop training when ``monitor`` has not improved for ``patience`` epochs.

    Args:
        monitor: the figure to watch (``"val_loss"``, ``"loss"``, ``"val_accuracy"``...).
        min_delta: smallest change that counts as an improvement.
        patience: epochs without improvement before stopping.
        mode: ``"min"``, ``"max"`` or ``"auto"`` (max for accuracies, else min).
        baseline: stop unless the figure beats this value.
        restore_best_weights: load the best epoch's weights back when stopping or at the end.
        start_from_epoch: epochs to wait before watching.

    Example:
        >>> stop = EarlyStopping(monitor="loss", patience=2, restore_best_weights=True)
    """

    def __init__(self, monitor="val_loss", min_delta=0.0, patience=0, verbose=0, mode="auto",
                 baseline=None, restore_best_weights=False, start_from_epoch=0):
        super().__init__()
        self.monitor, self.min_delta, self.patience = monitor, abs(min_delta), patience
        self.verbose, self.baseline = verbose, baseline
        self.restore_best_weights, self.start_from_epoch = restore_best_weights, start_from_epoch
        self._better, self.mode = _better(mode, monitor)

    def on_train_begin(self, logs=None):
        self.wait, self.stopped_epoch, self.best_epoch = 0, 0, 0
        self.best = self.baseline if self.baseline is not None else (
            -math.inf if self.mode == "max" else math.inf)
        self.best_weights = None

    def _improved(self, current):
        delta = self.min_delta if self.mode == "max" else -self.min_delta
        return self._better(current - delta, self.best)

    def on_epoch_end(self, epoch, logs=None):
        current = (logs or {}).get(self.monitor)
        if current is None or epoch < self.start_from_epoch:
            return
        if self._improved(current):
            self.best, self.best_epoch, self.wait = current, epoch, 0
            if self.restore_best_weights:
                self.best_weights = _snapshot(self.model)
            return
        self.wait += 1
        if self.wait >= max(self.patience, 1):
            self.stopped_epoch = epoch
            self.model.stop_training = True
            if self.verbose:
                print(f"Epoch {epoch + 1}: early stopping (best {self.monitor} "
                      f"{self.best:.4g} at epoch {self.best_epoch + 1})")

    def on_train_end(self, logs=None):
        if self.restore_best_weights and self.best_weights is not None:
            self.model.load_state_dict(self.best_weights)


def _snapshot(model):
    """A persistent copy of the model's state_dict."""
    with default_context().persistent():
        return {k: v.detach().clone() for k, v in model.state_dict().items()}


class ModelCheckpoint(Callback):
    """Save the model (or its ``state_dict``) after every epoch, or only when it improved.

    Files are written with ``newch.save``, atomically: a crash mid-save leaves the
    previous file intact. ``filepath`` may name figures: ``"ckpt-{epoch:02d}-{val_loss:.3f}.pt"``.

    Args:
        filepath: where to write; formatted with ``epoch`` (1-based) and the epoch's logs.
        monitor, mode: what counts as better when ``save_best_only``.
        save_best_only: write only when ``monitor`` improved.
        save_weights_only: write ``model.state_dict()`` (loads with ``weights_only=True``)
            instead of the whole module (which needs ``newch.load(..., weights_only=False)``).

    Example:
        >>> ckpt = ModelCheckpoint("best.pt", monitor="val_loss", save_best_only=True,
        ...                        save_weights_only=True)
    """

    def __init__(self, filepath, monitor="val_loss", verbose=0, save_best_only=False,
                 save_weights_only=False, mode="auto", save_freq="epoch"):
        super().__init__()
        if save_freq != "epoch":
            raise ValueError(f"ModelCheckpoint: only save_freq='epoch' is supported, got "
                             f"{save_freq!r}")
        self.filepath, self.monitor, self.verbose = os.fspath(filepath), monitor, verbose
        self.save_best_only, self.save_weights_only = save_best_only, save_weights_only
        self._better, self.mode = _better(mode, monitor)
        self.best = -math.inf if self.mode == "max" else math.inf

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if self.save_best_only:
            current = logs.get(self.monitor)
            if current is None or not self._better(current, self.best):
                return
            self.best = current
        path = self.filepath.format(epoch=epoch + 1, **logs)
        obj = self.model.state_dict() if self.save_weights_only else self.model
        atomic_save(obj, path)
        if self.verbose:
            print(f"Epoch {epoch + 1}: saved {path}")


def atomic_save(obj, path):
    """``newch.save(obj, path)`` through a temporary file in the same folder, then a rename."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix="." + os.path.basename(path))
    try:
        with os.fdopen(fd, "wb") as f:
            save(obj, f)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


class LambdaCallback(Callback):
    """A callback from plain functions: ``LambdaCallback(on_epoch_end=lambda epoch, logs: ...)``.

    Example:
        >>> cb = LambdaCallback(on_epoch_end=lambda epoch, logs: print(epoch, logs["loss"]))
    """

    def __init__(self, on_epoch_begin=None, on_epoch_end=None, on_train_begin=None,
                 on_train_end=None, on_train_batch_begin=None, on_train_batch_end=None, **kwargs):
        super().__init__()
        given = dict(on_epoch_begin=on_epoch_begin, on_epoch_end=on_epoch_end,
                     on_train_begin=on_train_begin, on_train_end=on_train_end,
                     on_train_batch_begin=on_train_batch_begin,
                     on_train_batch_end=on_train_batch_end, **kwargs)
        for name, fn in given.items():
            if fn is None:
                continue
            if not hasattr(Callback, name):
                raise ValueError(f"LambdaCallback: unknown hook {name!r}")
            setattr(self, name, fn)


class LearningRateScheduler(Callback):
    """Step a ``newch.optim.lr_scheduler`` scheduler at the end of every epoch.

    ``ReduceLROnPlateau`` is stepped with the epoch's ``monitor`` figure.

    Example:
        >>> # LearningRateScheduler(newch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.7))
    """

    def __init__(self, scheduler, monitor="val_loss"):
        super().__init__()
        self.scheduler, self.monitor = scheduler, monitor

    def on_epoch_end(self, epoch, logs=None):
        if type(self.scheduler).__name__ == "ReduceLROnPlateau":
            logs = logs or {}
            value = logs.get(self.monitor, logs.get("loss"))
            self.scheduler.step(value)
        else:
            self.scheduler.step()
        if logs is not None and hasattr(self.scheduler, "get_last_lr"):
            logs["lr"] = self.scheduler.get_last_lr()[0]
