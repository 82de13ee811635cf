"""Dropout's kernel: keep or zero elements (or whole channels) by a byte mask, scaling what is kept.

Layout (DESIGN.md, "Kernels and threads"): flat 1-D C-contiguous arrays. The
element range is cut into fixed chunks of ``CHUNK`` elements, one ``prange``
iteration per chunk; at or below ``SERIAL_MAX`` elements the calling thread
does all the work. Every element is independent, so results never depend on
the split or the thread count.

Cold start: the kernel is a serial task function over elements [lo, hi),
launched in parallel by ``tasks.chunked`` (no parallel copy of its body).
"""
from .jit import kernel
from .tasks import chunked

__all__ = ["masked_scale"]

CHUNK = 16384          # elements owned by one prange iteration
SERIAL_MAX = 32768     # at or below this many elements: no thread launch


@kernel
def _masked_span(x, mask, group, scale, out, lo, hi):
    """Elements [lo, hi) of ``masked_scale``; a task function."""
    zero = scale - scale
    if group == 1:
        for i in range(lo, hi):
            out[i] = x[i] * (scale if mask[i] else zero)
    else:
        for i in range(lo, hi):
            out[i] = x[i] * (scale if mask[i // group] else zero)


def masked_scale(x, mask, group, scale, out):
    """out[i] = x[i] * (scale if mask[i // group] else 0).

    x, out: (n,) C-contiguous float arrays (out may be x). mask: (n // group,)
    bool, one flag per run of ``group`` consecutive elements (1: per element;
    H*W: per channel, for dropout2d). scale: a scalar of x's dtype. NaN times
    a dropped 0 stays NaN, as a multiply by the mask does.
    Example: ``masked_scale(x, keep, 1, np.float32(2.0), out)`` is dropout(p=0.5).
    """
    n = out.shape[0]
    if x.shape[0] != n or mask.shape[0] * group != n:
        raise ValueError("masked_scale: x, mask * group and out lengths differ")
    chunked(_masked_span, n, CHUNK, SERIAL_MAX, x, mask, group, scale, out)
