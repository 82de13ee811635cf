"""newch: PyTorch for small machines.

``import newch as torch`` and a PyTorch script runs on numpy + Numba kernels,
with memory you can predict (a step arena for temporaries, a persistent pool
for parameters) and results that are the same bit for bit on any thread count.
"""
from . import _cache  # noqa: F401  (chooses the kernel cache directory before numba loads)
from .context import Context, default_context, set_default_context
from .context import manual_seed as _seed_default_context
from .dtypes import (bool_ as bool, dtype, float32, float64, get_default_dtype, int32, int64,
                     promote_types, set_default_dtype, uint8)
from .errors import NcError
from .tensor import Size, Tensor, release
from . import ops
from .ops import *  # noqa: F401,F403  (every public op: ops.__all__)
from . import autograd
from .graph import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from . import optim
from . import net
from .generator import Generator, ContextGenerator as _ContextGenerator
from . import data
from .device import device
from . import accelerator, backends, cuda, onnx
from .runtime import compile, get_num_threads, set_num_threads
from .serialization import load, safetensors, save
from . import linalg
from . import _aliases
from .warmup import warmup   # fills the kernel cache (python -m newch.warmup)

# PyTorch's spellings: ``import newch.nn as nn``, ``import newch.nn.functional as F``,
# ``from newch.utils.data import DataLoader``.
_aliases.register(__name__, "nn", net)
_aliases.register(__name__, "nn.functional", net.functional)
_aliases.register(__name__, "nn.init", net.init)
_aliases.register(__name__, "utils.data", data)
_aliases.register(__name__, "nn.parallel", net.parallel)
_aliases.register(__name__, "nn.utils", net.utils)
_aliases.register(__name__, "nn.utils.rnn", net.utils.rnn)   # issue 14: one PackedSequence class
_aliases.register(__name__, "safetensors", safetensors)   # ``import newch.safetensors``
default_generator = _ContextGenerator()

float = float32
double = float64
long = int64
int = int32

__version__ = "0.1.0"


def step_end():
    """End the step: free every temporary of the default context at once (O(1))."""
    default_context().step_end()


def persistent():
    """``with newch.persistent():`` tensors made inside survive ``step_end()``."""
    return default_context().persistent()


def mem_stats():
    """The default context's memory figures in bytes (arena in use / peak / reserved, persistent)."""
    return default_context().mem_stats()


def manual_seed(seed):
    """Reseed the default context's random stream; returns ``newch.default_generator``.

    Example:
        >>> g = newch.manual_seed(0)
        >>> a = newch.randn(2).tolist(); _ = newch.manual_seed(0)
        >>> a == newch.randn(2).tolist()
        True
    """
    _seed_default_context(seed)
    return default_generator


def is_tensor(obj):
    """True if ``obj`` is a newch Tensor."""
    return isinstance(obj, Tensor)


def numel(input):
    """Number of elements of ``input``."""
    return input.numel()


__all__ = [
    "Context", "default_context", "set_default_context", "manual_seed", "NcError",
    "Tensor", "Size", "dtype", "float32", "float64", "int32", "int64", "uint8", "bool",
    "float", "double", "long", "int", "get_default_dtype", "set_default_dtype", "promote_types",
    "step_end", "persistent", "release", "mem_stats", "is_tensor", "numel",
    "autograd", "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
    "optim", "net", "nn", "utils", "data", "Generator", "default_generator",
    "device", "cuda", "backends", "accelerator", "onnx", "set_num_threads", "get_num_threads",
    "compile", "save", "load", "safetensors", "linalg",
    "warmup",
] + ops.__all__   # every op: each ops/ module lists its own in __all__

# NOTE: public entry points run as ops "in flight" on their context, so step_end(), trim()
# and release() called on another thread wait for them (newch/memory/guard.py).
from .context import track_entry_points as _track_entry_points  # noqa: E402
_track_entry_points(globals(), Tensor, (net.functional, autograd), optim.Optimizer)
