"""``torch.accelerator``: no accelerator on newch; ``current_accelerator()`` is None as on PyTorch's CPU build."""


def is_available():
    return False


def current_accelerator(check_available=False):
    return None


def device_count():
    return 0
