"""``torch.backends.cudnn``: flags accepted and ignored (newch has no cuDNN; kernels are deterministic)."""

enabled = True
benchmark = False        # NOTE: assigning True changes nothing: there is no cuDNN autotuner
deterministic = False    # NOTE: newch is deterministic whatever this says
allow_tf32 = False


def is_available():
    """False: no cuDNN."""
    return False


def version():
    return None
