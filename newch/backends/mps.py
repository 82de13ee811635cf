"""``torch.backends.mps``: Apple's GPU backend, never available in newch."""


def is_available():
    return False


def is_built():
    return False
