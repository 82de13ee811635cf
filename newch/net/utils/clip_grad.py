"""Gradient clipping (``torch.nn.utils.clip_grad_norm_`` / ``clip_grad_value_``), in place.

The gradients are scaled (or clamped) where they are: persistent gradients
stay persistent, nothing is recorded by autograd. The total norm is a
temporary 0-d tensor: read it with ``.item()`` before ``step_end()``.
"""
import math
from numbers import Real

from ...graph import no_grad
from ...ops.arith import add, div
from ...ops.join import stack
from ...ops.norms import vector_norm
from ...ops.alloc import stale
from ...ops.creation import tensor as _tensor
from ...tensor import Tensor


def _grads(op, parameters):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    out = []
    for i, p in enumerate(parameters):
        if not isinstance(p, Tensor):
            raise TypeError(f"{op}: parameters must be Tensors, but item {i} is a "
                            f"{type(p).__name__}")
        g = p.grad
        if g is not None:
            if not g.is_alive:
                raise stale(g, f"{op} (the gradient of parameter {i})")
            out.append(g)
    return out


def _norm_type(op, norm_type):
    if isinstance(norm_type, str) and norm_type == "inf":
        return math.inf
    if isinstance(norm_type, bool) or not isinstance(norm_type, Real):
        raise TypeError(f"{op}: norm_type must be a number (2.0, 1, inf, ...), got "
                        f"{type(norm_type).__name__} {norm_type!r}")
    return float(norm_type)


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The ``norm_type`` norm of the norms of ``tensors`` (as if they were one long vector).

    Args:
        tensors: a tensor or an iterable of tensors (typically gradients).
        norm_type: 2.0 (default), 1, inf, or any p.
        error_if_nonfinite: raise RuntimeError when the norm is nan or inf.
        foreach: accepted for PyTorch compatibility, ignored.

    Example:
        >>> newch.nn.utils.get_total_norm([newch.tensor([3.0]), newch.tensor([4.0])])
        tensor(5.)
    """
    op = "get_total_norm"
    p = _norm_type(op, norm_type)
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    if not tensors:
        return _tensor(0.0)
    with no_grad():
        norms = [vector_norm(t.detach(), p) for t in tensors]
        dt = norms[0].dtype
        total = vector_norm(stack([n.to(dt) for n in norms]), p)
    if error_if_nonfinite:
        value = total.item()
        if math.isnan(value) or math.isinf(value):
            raise RuntimeError(f"The total norm of order {norm_type} for gradients from "
                               f"`parameters` is non-finite, so it cannot be clipped. To disable "
                               f"this error and scale the gradients by the non-finite norm "
                               f"anyway, set `error_if_nonfinite=False`")
    return total


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scale the gradients of ``parameters`` in place so their total norm is at most ``max_norm``.

    The total norm is computed over all gradients together, as if concatenated
    into one vector; every gradient is multiplied by min(1, max_norm / (total + 1e-6)).

    Args:
        parameters: a tensor or an iterable of tensors whose ``.grad`` is clipped.
        max_norm: the largest allowed total norm.
        norm_type: the p of the norm: 2.0 (default), 1, inf (``float('inf')`` or 'inf').
        error_if_nonfinite: raise RuntimeError when the total norm is nan or inf
            (default False: the gradients are then scaled by a nan / 0 factor, as PyTorch).
        foreach: accepted for PyTorch compatibility, ignored.

    Returns:
        The total norm of the gradients before clipping (a 0-d temporary tensor).

    Example:
        >>> loss_fn(model(x), y).backward()
        >>> total = newch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        >>> total.item() > 0.0
        True
    """
    op = "clip_grad_norm_"
    if isinstance(max_norm, Tensor):
        max_norm = max_norm.item()
    if isinstance(max_norm, bool) or not isinstance(max_norm, Real):
        raise TypeError(f"{op}: max_norm must be a number, got {type(max_norm).__name__}")
    grads = _grads(op, parameters)
    if not grads:
        return _tensor(0.0)
    total = get_total_norm(grads, norm_type, error_if_nonfinite)
    with no_grad():
        coef = div(float(max_norm), add(total, 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef.to(g.dtype))
    return total


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient of ``parameters`` in place to [-clip_value, clip_value].

    Example:
        >>> newch.nn.utils.clip_grad_value_(model.parameters(), clip_value=0.5)
    """
    op = "clip_grad_value_"
    if isinstance(clip_value, bool) or not isinstance(clip_value, Real):
        raise TypeError(f"{op}: clip_value must be a number, got {type(clip_value).__name__}")
    clip_value = float(clip_value)
    with no_grad():
        for g in _grads(op, parameters):
            g.clamp_(min=-clip_value, max=clip_value)
