"""ReLU with its backward mask packed into bits: one bit per element kept for backward.

relu's gradient only needs where the output is positive. Kept as float32 that
is 4 bytes per element (9 MiB for the MNIST Net's second activation); as
bits, 1/32 of it. ``relu_bits`` writes the output and the mask in one pass;
``bits_select`` applies the mask to an incoming gradient.

Layout: flat C-contiguous arrays of n elements and a uint8 array of
ceil(n / 8) bytes; bit k of byte b is element 8*b + k. One ``prange``
task owns ``CHUNK`` bytes (8 * CHUNK elements), so each output element and
each mask byte has one writer; small arrays run serially, same bits.

Cold start: the kernels are serial task functions over chunks [lo, hi),
launched in parallel by ``tasks.run`` (no parallel copy of their bodies).
"""
import numpy as np

from .jit import helper, kernel
from .tasks import run

__all__ = ["relu_bits", "bits_select"]

CHUNK = 2048           # mask bytes (8x as many elements) owned by one prange iteration
SERIAL_MAX = 32768     # at or below this many elements: no thread launch


@helper
def _relu_chunk(x, out, bits, c):
    n = x.shape[0]
    e0 = c * CHUNK * 8
    e1 = min(e0 + CHUNK * 8, n)
    u0 = np.uint64(e0)
    for t in range(np.uint64(e1 - e0)):
        v = x[u0 + t]
        out[u0 + t] = 0 if v < 0 else v
    # NOTE: whole bytes without a branch per element (the comparisons vectorize), then the
    # partial last byte
    b0, b1 = np.uint64(c * CHUNK), np.uint64(e1 // 8)
    eight = np.uint64(8)
    for b in range(b0, b1):
        i = b * eight
        byte = np.uint8(0)
        for k in range(eight):
            byte |= np.uint8(out[i + k] > 0) << np.uint8(k)
        bits[b] = byte
    if e1 % 8:
        i = e1 // 8 * 8
        byte = np.uint8(0)
        for k in range(e1 - i):
            byte |= np.uint8(out[i + k] > 0) << np.uint8(k)
        bits[e1 // 8] = byte


@kernel
def _relu_chunks(x, out, bits, lo, hi):
    """Chunks [lo, hi) of ``relu_bits``; a task function."""
    for c in range(lo, hi):
        _relu_chunk(x, out, bits, c)


def relu_bits(x, out, bits):
    """out = max(x, 0) (NaN passes through); bit i of bits = out[i] > 0.

    x, out: flat C-contiguous float arrays of n elements; bits: uint8 (ceil(n / 8),).

    Example:
        >>> x = np.array([-1.0, 2.0, 0.0, 3.0], np.float32)
        >>> out, bits = np.empty_like(x), np.empty(1, np.uint8)
        >>> relu_bits(x, out, bits); int(bits[0])
        10
    """
    nc = (bits.shape[0] + CHUNK - 1) // CHUNK
    run(_relu_chunks, nc, x.shape[0] > SERIAL_MAX, x, out, bits)


@helper
def _select_chunk(g, bits, out, c):
    n = g.shape[0]
    b0 = np.uint64(c * CHUNK)
    b1 = np.uint64(min((c + 1) * CHUNK, n // 8))
    eight = np.uint64(8)
    for b in range(b0, b1):
        byte = bits[b]
        i = b * eight
        for k in range(eight):
            # NOTE: g and out are the float arrays viewed as same-size ints: AND with all
            # ones keeps the bits, with zero gives +0.0 (also for NaN and inf); vectorizes.
            out[i + k] = g[i + k] & -((byte >> k) & 1)
    if (c + 1) * CHUNK >= bits.shape[0]:      # the last chunk also does the partial byte
        for i in range(n // 8 * 8, n):
            out[i] = g[i] & -((bits[i // 8] >> (i % 8)) & 1)


@kernel
def _bits_select(g, bits, out, lo, hi):
    """Chunks [lo, hi) of out[i] = g[i] where bit i of bits is set, else 0; g, out int32 or int64
    views of floats; a task function."""
    for c in range(lo, hi):
        _select_chunk(g, bits, out, c)


def bits_select(g, bits, out):
    """out[i] = g[i] where bit i of bits is set, else +0.0 (g, out float32 or float64)."""
    it = np.int32 if g.dtype.itemsize == 4 else np.int64
    nc = (bits.shape[0] + CHUNK - 1) // CHUNK
    run(_bits_select, nc, g.shape[0] > SERIAL_MAX, g.view(it), bits, out.view(it))
