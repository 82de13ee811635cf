"""Fill the kernel cache ahead of a first training step.

A cold start (empty kernel cache: a fresh install, an upgrade, a new machine)
compiles every kernel a program runs the first time it runs it, seconds on a PC
and minutes on a Raspberry Pi. ``warmup()`` pays that once, ahead of time, by
running one float32 training step of two common models on random data:

- ``"mlp"``: ``Linear(784, 256) -> ReLU -> Linear(256, 10)``, ``mse_loss`` and
  ``cross_entropy``, SGD with momentum, batch 64;
- ``"cnn"``: pytorch/examples' MNIST net (two 3x3 convolutions, max pool,
  dropout, two Linear layers, ``log_softmax``), ``nll_loss``, SGD with momentum,
  batch 64.

Kernels compiled here are cached on disk, so later processes load them in a
fraction of a second; a program using other ops or dtypes still compiles those
on first use. From a shell::

    python -m newch.warmup            # both workloads
    python -m newch.warmup mlp        # only the MLP's kernels

``warmup(background=True)`` runs in a daemon thread and returns it at once:
start it before loading data, and the compiling overlaps the loading. numba
compiles one kernel at a time per process, so a first step that needs a kernel
while the warm-up compiles another waits for it: the warm-up helps most when it
starts early. It runs in a context of its own (its own arena and seed), so the
caller's default context and random stream are untouched.

Example:
    >>> import newch
    >>> t = newch.warmup(background=True, workloads=("mlp",))
    >>> t.join()
"""
import threading
import time

__all__ = ["warmup", "WORKLOADS"]

WORKLOADS = ("mlp", "cnn")


def _mlp(torch):
    nn, F = torch.nn, torch.nn.functional
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    for loss_fn in (F.mse_loss, F.cross_entropy):
        x = torch.randn(64, 784)
        y = torch.randn(64, 10) if loss_fn is F.mse_loss else torch.randint(0, 10, (64,))
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()
        torch.step_end()


def _cnn(torch):
    nn, F = torch.nn, torch.nn.functional
    conv1, conv2 = nn.Conv2d(1, 32, 3, 1), nn.Conv2d(32, 64, 3, 1)
    fc1, fc2 = nn.Linear(9216, 128), nn.Linear(128, 10)
    params = [p for m in (conv1, conv2, fc1, fc2) for p in m.parameters()]
    opt = torch.optim.SGD(params, lr=0.01, momentum=0.9)
    x, y = torch.randn(64, 1, 28, 28), torch.randint(0, 10, (64,))
    h = F.max_pool2d(F.relu(conv2(F.relu(conv1(x)))), 2)
    h = F.dropout(torch.flatten(F.dropout(h, 0.25), 1), 0.5)
    out = F.log_softmax(fc2(F.relu(fc1(h))), dim=1)
    opt.zero_grad()
    F.nll_loss(out, y).backward()
    opt.step()
    torch.step_end()


_RUN = {"mlp": _mlp, "cnn": _cnn}


def _run(workloads):
    import newch as torch
    with torch.Context(seed=0):
        for name in workloads:
            _RUN[name](torch)


def warmup(background=False, workloads=WORKLOADS):
    """Compile (or load from the disk cache) the kernels of common float32 training steps.

    Args:
        background: run in a daemon thread and return it at once (``join()`` to wait).
        workloads: names from ``WORKLOADS`` ("mlp", "cnn").

    Returns:
        The ``threading.Thread`` when ``background``, else None.

    Example:
        >>> warmup(workloads=("mlp",))        # a few seconds cold, well under one warm
    """
    workloads = tuple(workloads)
    bad = [w for w in workloads if w not in _RUN]
    if bad:
        raise ValueError(f"warmup: unknown workload(s) {bad}; expected some of {list(WORKLOADS)}")
    if not background:
        _run(workloads)
        return None
    t = threading.Thread(target=_run, args=(workloads,), name="newch-warmup", daemon=True)
    t.start()
    return t
