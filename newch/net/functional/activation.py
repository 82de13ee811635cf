"""Functional activations (``F.relu``, ``F.softmax``, ...) with PyTorch's signatures.

``inplace=True`` writes the result into ``input`` and returns it; autograd
stays correct (the value the backward needs is kept aside).
"""
import warnings

from ... import ops
from ...graph import is_grad_enabled


def _write_back(input, fn, needs_input):
    """``inplace=True``: store ``fn(input)`` into ``input``.

    ``needs_input``: the backward of ``fn`` reads its input, so it gets a copy to
    read when ``input`` is being differentiated.
    """
    src = input.clone() if needs_input and input.requires_grad and is_grad_enabled() else input
    return input.copy_(fn(src))


def relu(input, inplace=False):
    """max(x, 0) elementwise.

    Example:
        >>> relu(newch.tensor([-1.0, 2.0])).tolist()
        [0.0, 2.0]
    """
    return ops.relu_(input) if inplace else ops.relu(input)


def relu_(input):
    """In-place ``relu``."""
    return ops.relu_(input)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """x where x > 0, else negative_slope * x.

    Example:
        >>> leaky_relu(newch.tensor([-1.0, 2.0]), 0.5).tolist()
        [-0.5, 2.0]
    """
    if inplace:
        return _write_back(input, lambda x: ops.leaky_relu(x, negative_slope), negative_slope < 0)
    return ops.leaky_relu(input, negative_slope)


def leaky_relu_(input, negative_slope=0.01):
    """In-place ``leaky_relu``."""
    return leaky_relu(input, negative_slope, inplace=True)


def elu(input, alpha=1.0, inplace=False):
    """x where x > 0, else alpha * (exp(x) - 1).

    Example:
        >>> elu(newch.tensor([0.0, 2.0])).tolist()
        [0.0, 2.0]
    """
    if inplace:
        return _write_back(input, lambda x: ops.elu(x, alpha), alpha < 0)
    return ops.elu(input, alpha)


def elu_(input, alpha=1.0):
    """In-place ``elu``."""
    return elu(input, alpha, inplace=True)


def gelu(input, approximate="none"):
    """x * Phi(x) (exact, with erf), or its tanh approximation with ``approximate='tanh'``.

    Example:
        >>> gelu(newch.tensor([0.0])).tolist()
        [0.0]
    """
    return ops.gelu(input, approximate)


def silu(input, inplace=False):
    """x * sigmoid(x) (also called swish).

    Example:
        >>> silu(newch.tensor([0.0])).tolist()
        [0.0]
    """
    return _write_back(input, ops.silu, True) if inplace else ops.silu(input)


def sigmoid(input):
    """1 / (1 + exp(-x)).

    Example:
        >>> sigmoid(newch.tensor([0.0])).tolist()
        [0.5]
    """
    return ops.sigmoid(input)


def tanh(input):
    """Hyperbolic tangent.

    Example:
        >>> tanh(newch.tensor([0.0])).tolist()
        [0.0]
    """
    return ops.tanh(input)


def _softmax_dim(op, ndim, stacklevel):
    warnings.warn(f"{op}: implicit dimension choice is deprecated; pass dim= explicitly",
                  UserWarning, stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """exp(x) / sum(exp(x)) along ``dim``; stable for large inputs.

    Args:
        dim: the dim that sums to one (None picks one with a warning, like PyTorch).
        dtype: convert the input to this dtype first.

    Example:
        >>> softmax(newch.tensor([[1.0, 1.0]]), dim=1).tolist()
        [[0.5, 0.5]]
    """
    if dim is None:
        dim = _softmax_dim("softmax", input.ndim, _stacklevel)
    return ops.softmax(input, dim, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """log(softmax(x)) along ``dim``, computed as x - logsumexp(x) (no overflow, no log(0)).

    Example:
        >>> [round(v, 4) for v in log_softmax(newch.tensor([1.0, 1.0]), dim=0).tolist()]
        [-0.6931, -0.6931]
    """
    if dim is None:
        dim = _softmax_dim("log_softmax", input.ndim, _stacklevel)
    return ops.log_softmax(input, dim, dtype)
