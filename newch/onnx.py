"""``torch.onnx``: importable so scripts load; exporting is not provided by newch."""
from .errors import NotProvided


def export(*args, **kwargs):
    """Not provided: newch cannot write ONNX files."""
    raise NotProvided("torch.onnx.export")
