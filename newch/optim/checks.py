"""Option checks shared by the optimizers, with PyTorch's messages ("Invalid learning rate: -1")."""
from .optimizer import check_number

# option name -> how PyTorch's message names it
_LABELS = {"lr": "learning rate", "eps": "epsilon value", "weight_decay": "weight_decay value",
           "momentum": "momentum value", "alpha": "alpha value", "lr_decay": "lr_decay value",
           "initial_accumulator_value": "initial_accumulator_value value",
           "momentum_decay": "momentum_decay value", "rho": "rho value"}


def check_nonnegative(cls, group, *keys):
    """ValueError ``Invalid <what>: <value>`` unless every option in ``keys`` is a number >= 0."""
    for key in keys:
        value = group[key]
        check_number(cls, key, value)
        if not 0.0 <= value:
            raise ValueError(f"Invalid {_LABELS[key]}: {value}")


def check_betas(cls, betas):
    """ValueError unless ``betas`` is a pair of numbers in [0, 1), as PyTorch's Adam family asks."""
    if not isinstance(betas, (tuple, list)) or len(betas) != 2:
        raise TypeError(f"{cls}: betas must be a pair (beta1, beta2), got {betas!r}")
    for i, b in enumerate(betas):
        check_number(cls, f"betas[{i}]", b)
        if not 0.0 <= b < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {b}")


def check_flags(cls, group):
    """Refuse ``differentiable=True`` (newch steps are not recorded by autograd).

    ``foreach``, ``fused`` and ``capturable`` are accepted and ignored: every
    newch step is one fused kernel per parameter on the CPU.
    """
    if group.get("differentiable"):
        raise ValueError(f"{cls}: differentiable=True is not supported; newch optimizer steps "
                         f"are not recorded by autograd")
