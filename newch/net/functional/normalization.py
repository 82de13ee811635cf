"""Functional normalisation: ``F.batch_norm``, ``F.layer_norm``, ``F.group_norm`` (torch's signatures).

The work is done by the fused ops of ``newch.ops.normalization`` (one kernel forward,
one kernel backward, float64 statistics); see docs/nn.md.
"""
from ...ops import normalization as _norm


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """Normalise each channel of ``input`` (N, C, ...) with batch or running statistics.

    Args:
        running_mean, running_var: (C,) tensors or None; updated in place when ``training``.
        weight, bias: per-channel scale and shift, or None.
        training: use (and record) the batch's statistics instead of the running ones.
        momentum: weight of the new batch in the running statistics.
        eps: added to the variance before the square root.

    Example:
        >>> x = newch.tensor([[1.0, 2.0], [3.0, 6.0]])
        >>> [round(v, 3) for v in batch_norm(x, None, None, training=True)[:, 1].tolist()]
        [-1.0, 1.0]
    """
    return _norm.batch_norm(input, running_mean, running_var, weight, bias, training, momentum,
                            eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalise over the trailing ``normalized_shape`` dims of ``input``, then weight and bias.

    Example:
        >>> [round(v, 3) for v in layer_norm(newch.tensor([2.0, 4.0]), (2,)).tolist()]
        [-1.0, 1.0]
    """
    return _norm.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalise ``input`` (N, C, ...) over groups of channels, then per-channel weight and bias.

    Example:
        >>> x = newch.tensor([[1.0, 3.0, 5.0, 9.0]])
        >>> [round(v, 3) for v in group_norm(x, 2).flatten().tolist()]
        [-1.0, 1.0, -1.0, 1.0]
    """
    return _norm.group_norm(input, num_groups, weight, bias, eps)
