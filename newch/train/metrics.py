"""Metrics ``fit`` and ``evaluate`` report beside the loss: ``"accuracy"`` or any callable.

A metric is called as ``metric(output, target)`` on one batch and returns a
number (or a one-element tensor); ``fit`` reports its average over the batches,
weighted by batch size.
"""
from ..graph import no_grad
from ..tensor import Tensor


def accuracy(output, target):
    """Fraction of correct predictions in a batch.

    Class scores of shape (N, C) are compared by argmax with class indices (N,)
    or with one-hot / probability targets (N, C); a single output column (or 1-d
    outputs) are probabilities, right when ``> 0.5`` matches the 0/1 target.

    Example:
        >>> accuracy(newch.tensor([[0.1, 0.9], [0.8, 0.2]]), newch.tensor([1, 1]))
        0.5
    """
    with no_grad():
        if output.ndim >= 2 and output.shape[1] > 1:
            pred = output.argmax(1)
            if target.dtype.is_floating_point and target.shape == output.shape:
                target = target.argmax(1)
            right = pred == target
        else:
            right = (output.reshape(target.shape) > 0.5) == (target > 0.5)
        n = right.numel()
        return right.sum().item() / n if n else 0.0


NAMED = {"accuracy": accuracy, "acc": accuracy}


def resolve(metrics):
    """[(name, fn)] from names and callables; a clear error for anything else."""
    out = []
    for m in metrics or ():
        if isinstance(m, str):
            if m not in NAMED:
                raise ValueError(f"fit: unknown metric {m!r}; known names are {sorted(NAMED)}, or "
                                 f"pass a callable metric(output, target)")
            out.append(("accuracy" if m == "acc" else m, NAMED[m]))
        elif callable(m):
            out.append((getattr(m, "__name__", type(m).__name__), m))
        else:
            raise TypeError(f"fit: a metric must be a name or a callable, got {type(m).__name__}")
    return out


def value(x):
    """A metric's or loss's result as a Python float (taken out before step_end())."""
    if isinstance(x, Tensor):
        return float(x.detach().item())
    return float(x)
