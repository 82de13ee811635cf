"""``torch.cuda`` as seen from a machine without a GPU: nothing is available, seeding is a no-op.

Scripts ask ``torch.cuda.is_available()`` to pick a device and call
``torch.cuda.manual_seed(...)`` unconditionally; both work and say "no GPU".
"""
from .device import DeviceUnavailable


def is_available():
    """False: newch runs on the CPU."""
    return False


def device_count():
    """0: no CUDA devices."""
    return 0


def manual_seed(seed):
    """Accepted and ignored (no CUDA generator exists); seed the CPU with ``newch.manual_seed``."""


def manual_seed_all(seed):
    """Accepted and ignored, like ``manual_seed``."""


def seed():
    """Accepted and ignored."""


def seed_all():
    """Accepted and ignored."""


def synchronize(device=None):
    """Nothing to wait for on the CPU."""


def empty_cache():
    """Nothing to free: see ``newch.default_context().trim()`` for the CPU arena."""


def is_initialized():
    return False


def current_device():
    raise DeviceUnavailable("torch.cuda.current_device: no CUDA device (newch runs on the CPU)")


def get_device_name(device=None):
    raise DeviceUnavailable("torch.cuda.get_device_name: no CUDA device (newch runs on the CPU)")
