"""Process-level calls PyTorch scripts make: thread count and ``torch.compile``."""
import numbers
import warnings

from .context import _max_threads, default_context


def set_num_threads(n):
    """Threads the current context's parallel kernels use (``torch.set_num_threads``).

    Clamped to the threads numba was started with. Results do not depend on it.

    Example:
        >>> set_num_threads(1); get_num_threads()
        1
    """
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise ValueError(f"set_num_threads: expected a positive int, got {n!r}")
    ctx = default_context()
    ctx.threads = min(int(n), _max_threads(ctx.backend))


def get_num_threads():
    """Threads the current context's parallel kernels use (``torch.get_num_threads``)."""
    return default_context().threads


_noted = []


def compile(model=None, **kwargs):
    """``torch.compile``: returns ``model`` unchanged (newch's kernels are compiled already).

    Works as ``compile(model)`` and as a decorator (``@compile``, ``@compile(mode=...)``);
    says so once with a ``UserWarning``.

    Example:
        >>> f = lambda x: x + 1
        >>> compile(f) is f
        True
    """
    if not _noted:
        _noted.append(True)
        warnings.warn("newch.compile: returns the model unchanged; newch's kernels are compiled "
                      "by Numba on first use", UserWarning, stacklevel=2)
    if model is None:
        return lambda fn: fn
    return model
