"""numpy twin of ``kernels/dropout.py``: the same masked scaling, as one array expression."""
import numpy as np

__all__ = ["masked_scale"]


def masked_scale(x, mask, group, scale, out):
    """out[i] = x[i] * (scale if mask[i // group] else 0); see kernels.dropout."""
    if x.shape[0] != out.shape[0] or mask.shape[0] * group != out.shape[0]:
        raise ValueError("masked_scale: x, mask * group and out lengths differ")
    noise = np.where(np.repeat(mask, group), scale, scale - scale).astype(x.dtype)
    np.multiply(x, noise, out=out)
