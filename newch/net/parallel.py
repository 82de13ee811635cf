"""``nn.parallel`` / ``nn.DataParallel``: on one CPU the wrapper just runs the module.

Scripts wrap their model (``model = nn.DataParallel(model)``) when several GPUs
are present, or unconditionally; the wrapper keeps PyTorch's ``module.``
prefix in state_dict keys so checkpoints interchange.
"""
from .module import Module


class DataParallel(Module):
    """Runs ``module`` as is (newch's kernels already use every core); ``.module`` is the wrapped one.

    Example:
        >>> net = DataParallel(newch.nn.Linear(2, 1))
        >>> list(net.state_dict())
        ['module.weight', 'module.bias']
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DataParallel: expected a Module, got {type(module).__name__}")
        self.module = module
        self.dim = dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    """Functional form: ``module(*inputs)`` on the CPU."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,)
    return module(*inputs, **(module_kwargs or {}))
