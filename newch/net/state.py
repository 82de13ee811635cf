"""A module's tensors as a whole: loading a state_dict into them, converting their dtype.

``Module.state_dict`` / ``load_state_dict`` / ``to`` are thin wrappers over
this file, which keeps module.py about the module tree itself.
"""
from collections import namedtuple
from collections.abc import Mapping

import numpy as np

from .. import dtypes as D
from ..graph import no_grad
from ..context import default_context
from ..ops.creation import tensor as _tensor
from ..device import check_device
from ..tensor import Tensor
from .parameter import Parameter, persistent_copy


class IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the keys it missed and the keys it did not use."""
    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _quoted(keys):
    return ", ".join(f'"{k}"' for k in keys)


def load(module, state_dict, strict, assign):
    """Load ``state_dict`` into ``module``'s tree; RuntimeError listing every problem."""
    if not isinstance(state_dict, Mapping):
        raise TypeError(f"load_state_dict: expected a mapping of names to tensors, got "
                        f"{type(state_dict).__name__}")
    missing, errors = [], []
    expected = set(module.state_dict(keep_vars=True))
    with no_grad():
        for name, mod in module.named_modules(remove_duplicate=False):
            mod._load_from_state_dict(state_dict, f"{name}." if name else "", {"assign": assign},
                                      strict, missing, [], errors)
    unexpected = [k for k in state_dict if k not in expected]
    if strict:
        if unexpected:
            errors.insert(0, f"Unexpected key(s) in state_dict: {_quoted(unexpected)}.")
        if missing:
            errors.insert(0, f"Missing key(s) in state_dict: {_quoted(missing)}.")
    if errors:
        raise RuntimeError(f"Error(s) in loading state_dict for {module._get_name()}:\n\t"
                           + "\n\t".join(errors))
    return IncompatibleKeys(missing, unexpected)


def load_own(mod, state_dict, prefix, missing, errors, assign):
    """Load ``mod``'s own parameters and state_dict buffers (not its children's)."""
    own = [(n, p, True) for n, p in mod._parameters.items() if p is not None]
    own += [(n, b, False) for n, b in mod._buffers.items()
            if b is not None and n not in mod._non_persistent_buffers_set]
    for name, current, is_param in own:
        key = prefix + name
        if key not in state_dict:
            missing.append(key)
            continue
        value = state_dict[key]
        if isinstance(value, np.ndarray):
            value = _tensor(value)
        if not isinstance(value, Tensor):
            errors.append(f'While copying the parameter named "{key}", expected a Tensor from '
                          f'the checkpoint but received {type(value).__name__}.')
            continue
        if tuple(value.shape) != tuple(current.shape):
            errors.append(f"size mismatch for {key}: copying a param with shape "
                          f"{value.shape} from checkpoint, the shape in current model is "
                          f"{current.shape}.")
            continue
        if not assign:
            current.copy_(value)
        elif is_param:
            mod._parameters[name] = Parameter(value.detach(), current.requires_grad)
        else:
            mod._buffers[name] = persistent_copy(value.detach(), "load_state_dict")


def target_dtype(args, kwargs):
    """The dtype ``Module.to(*args, **kwargs)`` asks for (None: keep); refuses non-CPU devices."""
    kwargs = dict(kwargs)
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    kwargs.pop("non_blocking", None)
    if kwargs:
        raise TypeError(f"Module.to: unexpected arguments {sorted(kwargs)}")
    for a in args:
        if isinstance(a, Tensor):
            dtype = a.dtype
        elif isinstance(a, D.dtype) or a in (float, int, bool):
            dtype = a
        elif isinstance(a, str) and a in ("float32", "float64", "float", "double"):
            dtype = a
        else:
            device = a
    check_device("Module.to", device)
    if dtype is None:
        return None
    dt = D.from_any(dtype)
    if not dt.is_floating_point:
        raise TypeError(f"Module.to: only floating point dtypes are accepted, got {dt}")
    return dt


def _cast_persistent(t, dt):
    with default_context().persistent():
        return t.detach().to(dt)


def convert(module, dt):
    """Convert every floating point parameter (and grad) and buffer of the tree to ``dt``.

    Parameters keep their identity: their memory is swapped for a converted copy.
    """
    if dt is None:
        return module
    with no_grad():
        for m in module.modules():
            for p in m._parameters.values():
                if p is None or not p.dtype.is_floating_point or p.dtype is dt:
                    continue
                p.data = _cast_persistent(p, dt)
                if p.grad is not None:
                    p.grad = _cast_persistent(p.grad, dt)
            for name, b in m._buffers.items():
                if b is not None and b.dtype.is_floating_point and b.dtype is not dt:
                    nb = _cast_persistent(b, dt)
                    m._buffers[name] = nb.requires_grad_(b.requires_grad)
    return module
