"""Optimizers: ``newch.optim.SGD`` and the ``Optimizer`` base they share (``torch.optim``).

Optimizer state (momentum buffers, ...) is persistent; ``step()`` updates each
parameter with one fused kernel call and allocates nothing in the step arena.

Example:
    >>> opt = newch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    >>> opt.zero_grad(); loss.backward(); opt.step()
"""
from .optimizer import Optimizer, required
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "required"]
