"""fit / evaluate / predict: Keras's training loop around PyTorch objects.

Every batch runs inside a nested step scope and ends with ``step_end()``, after
the values the loop reports (loss, metrics) were taken out as Python floats:
the batch's temporaries are freed, while the temporaries the caller made
before calling (a notebook cell's ``x``) are not touched.
"""
import signal
import threading
import weakref

import numpy as np

from ..graph import no_grad
from ..context import default_context
from ..data import DataLoader, Dataset, TensorDataset
from ..net import functional as F
from ..ops.alloc import data as _alive
from ..ops.alloc import empty
from ..ops.creation import from_numpy
from ..tensor import Tensor
from . import metrics as M
from .callbacks import CallbackList
from .history import History
from .progress import Progress

_LAST_FIT = weakref.WeakKeyDictionary()   # model -> (loss, metrics) of its last fit (evaluate's default)

LOSSES = {"cross_entropy": "cross_entropy", "ce": "cross_entropy", "nll": "nll_loss",
          "nll_loss": "nll_loss", "mse": "mse_loss", "mse_loss": "mse_loss", "l1": "l1_loss",
          "l1_loss": "l1_loss", "mae": "l1_loss", "smooth_l1": "smooth_l1_loss",
          "huber": "huber_loss", "bce": "binary_cross_entropy",
          "binary_cross_entropy": "binary_cross_entropy",
          "bce_with_logits": "binary_cross_entropy_with_logits", "kl_div": "kl_div"}


def resolve_loss(op, loss):
    """A callable ``loss(output, target)`` from a callable, an ``nn`` loss module or a name."""
    if callable(loss):
        return loss
    if isinstance(loss, str):
        fn = getattr(F, LOSSES.get(loss, loss), None) if loss in LOSSES else None
        if fn is None:
            raise ValueError(f"{op}: unknown loss {loss!r}; use a callable, an nn loss module, or "
                             f"one of {sorted(LOSSES)}")
        return fn
    raise TypeError(f"{op}: loss must be a callable, an nn loss module or a name, got "
                    f"{type(loss).__name__}")


def _as_tensor(op, x, name):
    if isinstance(x, Tensor):
        _alive(x, op)
        return x
    if isinstance(x, np.ndarray):
        with default_context().persistent():
            return from_numpy(np.ascontiguousarray(x)).clone()
    raise TypeError(f"{op}: {name} must be a Tensor, a numpy array, a Dataset or a DataLoader, "
                    f"got {type(x).__name__}")


def _loader(op, x, y, batch_size, shuffle, generator=None):
    if isinstance(x, DataLoader):
        if y is not None:
            raise ValueError(f"{op}: y must be None when x is a DataLoader (its batches carry the "
                             f"targets)")
        return x
    if isinstance(x, Dataset):
        if y is not None:
            raise ValueError(f"{op}: y must be None when x is a Dataset")
        return DataLoader(x, batch_size=batch_size, shuffle=shuffle, generator=generator)
    tensors = [_as_tensor(op, x, "x")] + ([_as_tensor(op, y, "y")] if y is not None else [])
    return DataLoader(TensorDataset(*tensors), batch_size=batch_size, shuffle=shuffle,
                      generator=generator)


def _split(op, batch, need_target):
    if isinstance(batch, (tuple, list)) and len(batch) >= 2:
        return batch[0], batch[1]
    if isinstance(batch, (tuple, list)) and len(batch) == 1:
        batch = batch[0]
    if need_target:
        raise ValueError(f"{op}: batches must be (input, target) pairs; got a single "
                         f"{type(batch).__name__}. Pass y=, or a dataset whose items are pairs")
    return batch, None


def _size(x):
    return x.shape[0] if isinstance(x, Tensor) and x.ndim else 1


class _Interrupt:
    """Ctrl-C during fit: the first press asks to stop after the current batch."""

    def __init__(self):
        self.hit = False
        self.prev = None

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            self.prev = signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum, frame):
        if self.hit:            # NOTE: a second Ctrl-C interrupts at once, as usual
            raise KeyboardInterrupt
        self.hit = True

    def __exit__(self, *exc):
        if self.prev is not None:
            signal.signal(signal.SIGINT, self.prev)


def _run_batches(op, model, loader, step, mets, progress, cbs=None, hook="train", stop=None,
                 max_steps=None):
    """Run ``step(x, y)`` per batch in a step scope; return the batch-size-weighted averages."""
    ctx = default_context()
    sums, seen, logs = {}, 0, {}
    with ctx.step_scope():
        for b, batch in enumerate(loader):
            if max_steps is not None and b >= max_steps:
                break
            if cbs is not None:
                getattr(cbs, f"on_{hook}_batch_begin")(b, logs)
            x, y = _split(op, batch, True)
            out, loss = step(x, y)
            n = _size(x)
            figures = {} if loss is None else {"loss": M.value(loss)}
            for name, fn in mets:
                figures[name] = M.value(fn(out, y))
            del batch, x, y, out, loss
            ctx.step_end()
            seen += n
            for k, v in figures.items():
                sums[k] = sums.get(k, 0.0) + v * n
            logs = {k: v / seen for k, v in sums.items()}
            if cbs is not None:
                getattr(cbs, f"on_{hook}_batch_end")(b, dict(logs))
            if progress is not None:
                progress.update(b + 1, logs)
            if stop is not None and stop.hit:
                break
    return logs


def _steps(loader, max_steps):
    try:
        n = len(loader)
    except TypeError:
        return max_steps
    return n if max_steps is None else min(n, max_steps)


def fit(model, x, y=None, *, loss, optimizer, epochs=1, batch_size=32, shuffle=True,
        validation_data=None, validation_split=0.0, metrics=(), callbacks=(), verbose=1,
        initial_epoch=0, steps_per_epoch=None, validation_batch_size=None, generator=None):
    """Train ``model``; see ``Module.fit`` for the arguments. Returns a ``History``."""
    op = "fit"
    loss_fn = resolve_loss(op, loss)
    if not hasattr(optimizer, "step") or not hasattr(optimizer, "zero_grad"):
        raise TypeError(f"{op}: optimizer must be a newch.optim optimizer, got "
                        f"{type(optimizer).__name__}")
    if not 0.0 <= validation_split < 1.0:
        raise ValueError(f"{op}: validation_split must be in [0, 1), got {validation_split}")
    mets = M.resolve(metrics)
    if validation_split:
        if isinstance(x, (Dataset, DataLoader)):
            raise ValueError(f"{op}: validation_split needs tensors or arrays; for a Dataset, use "
                             f"random_split and pass validation_data=")
        x, y = _as_tensor(op, x, "x"), _as_tensor(op, y, "y")
        cut = x.shape[0] - int(x.shape[0] * validation_split)
        validation_data = (x[cut:], y[cut:])
        x, y = x[:cut], y[:cut]
    train = _loader(op, x, y, batch_size, shuffle, generator)
    val = None
    if validation_data is not None:
        vx, vy = (validation_data, None) if isinstance(validation_data, (Dataset, DataLoader)) \
            else validation_data[:2]
        val = _loader(op, vx, vy, validation_batch_size or batch_size, False)
    # NOTE: kept beside the model, not on it: a model saved whole must not pickle the loss function
    _LAST_FIT[model] = (loss_fn, metrics)
    steps = _steps(train, steps_per_epoch)
    history = History()
    history.params = {"epochs": epochs, "steps": steps, "verbose": verbose}
    cbs = CallbackList(callbacks, model, history.params)
    model.stop_training = False

    def step(xb, yb):
        optimizer.zero_grad()
        out = model(xb)
        value = loss_fn(out, yb)
        value.backward()
        optimizer.step()
        return out, value

    cbs.on_train_begin({})
    with _Interrupt() as stop:
        for epoch in range(initial_epoch, epochs):
            model.train()
            cbs.on_epoch_begin(epoch, {})
            if verbose:
                print(f"Epoch {epoch + 1}/{epochs}")
            bar = Progress(steps, verbose)
            logs = _run_batches(op, model, train, step, mets, bar, cbs, "train", stop,
                                steps_per_epoch)
            if val is not None and not stop.hit:
                vlogs = _evaluate(model, val, loss_fn, mets, cbs)
                logs.update({f"val_{k}": v for k, v in vlogs.items()})
            bar.update(bar.done, logs, final=True)
            cbs.on_epoch_end(epoch, logs)
            history.append(epoch, logs)
            if stop.hit:
                history.interrupted = True
                if verbose:
                    print(f"fit: interrupted (Ctrl-C) in epoch {epoch + 1}; the model and "
                          f"optimizer hold the state after the last finished batch")
                break
            if model.stop_training:
                history.stopped_early = True
                break
    cbs.on_train_end(history.history)
    return history


def _evaluate(model, loader, loss_fn, mets, cbs=None, progress=None):
    was_training = model.training
    model.eval()

    def step(xb, yb):
        out = model(xb)
        return out, (loss_fn(out, yb) if loss_fn is not None else None)

    try:
        with no_grad():
            if cbs is not None:
                cbs.on_test_begin({})
            logs = _run_batches("evaluate", model, loader, step, mets, progress, cbs, "test")
            if cbs is not None:
                cbs.on_test_end(logs)
            return logs
    finally:
        model.train(was_training)


def evaluate(model, x, y=None, *, loss=None, metrics=None, batch_size=32, verbose=0,
             callbacks=()):
    """Loss and metrics of ``model`` on data, as a dict; see ``Module.evaluate``."""
    op = "evaluate"
    last = _LAST_FIT.get(model)
    loss_fn = resolve_loss(op, loss) if loss is not None else (last[0] if last else None)
    mets = M.resolve(metrics if metrics is not None else (last[1] if last else ()))
    if loss_fn is None and not mets:
        raise ValueError(f"{op}: nothing to compute: pass loss= and/or metrics= (or call fit "
                         f"first, whose loss and metrics are the defaults)")
    loader = _loader(op, x, y, batch_size, False)
    cbs = CallbackList(callbacks, model, {"steps": _steps(loader, None), "verbose": verbose})
    return _evaluate(model, loader, loss_fn, mets, cbs, Progress(_steps(loader, None), verbose))


def predict(model, x, *, batch_size=32, numpy=False, verbose=0, callbacks=()):
    """``model``'s outputs for every input, as one persistent tensor; see ``Module.predict``."""
    op = "predict"
    loader = _loader(op, x, None, batch_size, False)
    ctx = default_context()
    total = len(loader.dataset) if hasattr(loader.dataset, "__len__") else None
    cbs = CallbackList(callbacks, model, {"steps": _steps(loader, None), "verbose": verbose})
    bar = Progress(_steps(loader, None), verbose)
    was_training = model.training
    model.eval()
    result, filled = None, 0
    try:
        with no_grad(), ctx.step_scope():
            cbs.on_predict_begin({})
            for b, batch in enumerate(loader):
                cbs.on_predict_batch_begin(b, {})
                xb, _ = _split(op, batch, False)
                out = model(xb)
                if not isinstance(out, Tensor):
                    raise TypeError(f"{op}: the model must return a Tensor, got "
                                    f"{type(out).__name__}")
                n = out.shape[0]
                if result is None:
                    rows = total if total is not None else n
                    with ctx.persistent():
                        result = empty((rows,) + tuple(out.shape[1:]), out.dtype)
                if filled + n > result.shape[0]:
                    result = _grow(ctx, result, filled + n)
                result[filled:filled + n] = out
                filled += n
                del batch, xb, out
                ctx.step_end()
                cbs.on_predict_batch_end(b, {})
                bar.update(b + 1, {})
            cbs.on_predict_end({})
    finally:
        model.train(was_training)
    if result is None:
        raise ValueError(f"{op}: got no data")
    if filled != result.shape[0]:
        result = result[:filled]
    return result.numpy() if numpy else result


def _grow(ctx, result, rows):
    with ctx.persistent():
        bigger = empty((max(rows, 2 * result.shape[0]),) + tuple(result.shape[1:]), result.dtype)
        bigger[:result.shape[0]] = result
    return bigger
