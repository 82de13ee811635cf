"""Saving and loading: PyTorch's checkpoint format (``newch.save``, ``newch.load``), safetensors.

Files cross both ways with PyTorch: ``torch.load`` reads what ``newch.save``
writes and ``newch.load`` reads what ``torch.save`` writes, with no torch
import. ``newch.safetensors`` reads and writes the safetensors format.

Example:
    >>> newch.save(model.state_dict(), "model.pt")
    >>> model.load_state_dict(newch.load("model.pt"))
    <All keys matched successfully>
"""
from .safe_globals import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals
from .torchfile import get_unsafe_globals_in_checkpoint, load, save

__all__ = ["save", "load", "add_safe_globals", "clear_safe_globals", "get_safe_globals",
           "safe_globals", "get_unsafe_globals_in_checkpoint"]
