"""``newch.device``: where a tensor lives. newch runs on the CPU; other devices parse but are unavailable.

Scripts written for PyTorch ask for a device (``torch.device("cuda" if
torch.cuda.is_available() else "cpu")``) and move tensors and modules with
``.to(device)``. newch answers with the CPU device; asking for any other
device is a ``DeviceUnavailable`` error (an ``AssertionError``, as PyTorch's
CPU build raises, and a ``RuntimeError``/``ValueError``).
"""

TYPES = ("cpu", "cuda", "mps", "xpu", "meta", "hip", "xla", "vulkan", "ipu", "hpu", "mtia",
         "privateuseone", "lazy", "mkldnn", "opengl", "opencl", "ideep", "ve", "fpga", "maia")


class DeviceUnavailable(AssertionError, RuntimeError, ValueError):
    """Raised when a script asks for a device newch does not have (anything but the CPU)."""


class device:
    """A device: ``device("cpu")``, ``device("cuda:0")``, ``device("cuda", 1)``.

    ``type`` and ``index`` as PyTorch's; ``str(d)`` is ``"cpu"`` or ``"cuda:1"``. A device
    compares equal to another device or to a string naming the same device.

    Example:
        >>> d = device("cpu")
        >>> d.type, d.index, str(d), d == "cpu"
        ('cpu', None, 'cpu', True)
    """
    __slots__ = ("type", "index")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            type, index = type.type, type.index if index is None else index
        elif isinstance(type, int) and not isinstance(type, bool):
            type, index = "cuda", type     # NOTE: PyTorch reads a bare ordinal as a CUDA device
        elif not isinstance(type, str):
            raise TypeError(f"device: expected a string or a device, got {builtin_type(type).__name__}")
        name, _, idx = type.partition(":")
        if name not in TYPES:
            raise RuntimeError(f"device: expected one of {', '.join(TYPES)} device type at start "
                               f"of device string: {type}")
        if idx:
            if index is not None:
                raise RuntimeError(f"device: type (string) must not include an index because index "
                                   f"was passed explicitly: {type}")
            if not idx.isdigit():
                raise RuntimeError(f"device: invalid device string: {type!r}")
            index = int(idx)
        if index is not None and (not isinstance(index, int) or index < 0):
            raise RuntimeError(f"device: device index must be a non-negative int, got {index!r}")
        object.__setattr__(self, "type", name)
        object.__setattr__(self, "index", index)

    def __setattr__(self, name, value):
        raise AttributeError("device: a device is immutable")

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __eq__(self, other):
        if isinstance(other, str):
            try:
                other = device(other)
            except (RuntimeError, TypeError):
                return False
        if not isinstance(other, device):
            return NotImplemented
        return self.type == other.type and self.index == other.index

    def __hash__(self):
        return hash((self.type, self.index))

    def __reduce__(self):
        return device, (self.type, self.index)


builtin_type = type
CPU = device("cpu")


def check_device(op, dev):
    """Accept None, ``"cpu"`` or a CPU device; anything else is ``DeviceUnavailable`` naming ``op``."""
    if dev is None or dev is CPU:
        return CPU
    d = dev if isinstance(dev, device) else device(dev)
    if d.type != "cpu":
        raise DeviceUnavailable(
            f"{op}: device {str(d)!r} is not available: newch runs on the CPU only "
            f"(torch.cuda.is_available() is False here; use device='cpu')")
    return CPU
