"""Optimizers and learning-rate schedulers (``torch.optim``, ``torch.optim.lr_scheduler``).

Optimizer state (momentum buffers, moments, ...) is persistent; ``step()``
updates each parameter with one fused kernel call and allocates nothing in
the step arena.

Example:
    >>> opt = newch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    >>> opt.zero_grad(); loss.backward(); opt.step()
"""
from .optimizer import Optimizer, required
from .sgd import SGD
from .adam import Adam, AdamW
from .adam_variants import Adamax, NAdam, RAdam
from .rms import Adadelta, Adagrad, RMSprop
from . import lr_scheduler
from .lbfgs import LBFGS  # issue 14

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "Adamax", "NAdam", "RAdam", "RMSprop",
           "Adagrad", "Adadelta", "required", "lr_scheduler", "LBFGS"]
