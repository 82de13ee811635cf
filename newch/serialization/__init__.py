"""Saving and loading: PyTorch's checkpoint format (``newch.save``, ``newch.load``), safetensors.

Files cross both ways with PyTorch: ``torch.load`` reads what ``newch.save``
writes and ``newch.load`` reads what ``torch.save`` writes, with no torch
import. ``newch.safetensors`` reads and writes the safetensors format.

Example:
    >>> newch.save(model.state_dict(), "model.pt")
    >>> model.load_state_dict(newch.load("model.pt"))
"""
from .torchfile import load, save

__all__ = ["save", "load"]
