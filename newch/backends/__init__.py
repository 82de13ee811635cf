"""``torch.backends``: the settings scripts touch (cudnn flags, MPS availability), as no-ops on a CPU."""
from . import cudnn, mps

__all__ = ["cudnn", "mps"]
