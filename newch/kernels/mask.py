"""ReLU with its backward mask packed into bits: one bit per element kept for backward.

relu's gradient only needs where the output is positive. Kept as float32 that
is 4 bytes per element (9 MiB for the MNIST Net's second activation); as
bits, 1/32 of it. ``relu_bits`` writes the output and the mask in one pass;
``bits_select`` applies the mask to an incoming gradient.

Layout: flat C-contiguous arrays of n elements and a uint8 array of
ceil(n / 8) bytes; bit k of byte b is element 8*b + k. One ``prange``
iteration owns ``CHUNK`` bytes (8 * CHUNK elements), so each output element
and each mask byte has one writer; small arrays run serially, same bits.
"""
import numpy as np

from .jit import helper, kernel, prange

__all__ = ["relu_bits", "bits_select"]

CHUNK = 2048           # mask bytes (8x as many elements) owned by one prange iteration
SERIAL_MAX = 32768     # at or below this many elements: no thread launch


@helper
def _relu_chunk(x, out, bits, c):
    n = x.shape[0]
    b1 = min((c + 1) * CHUNK, bits.shape[0])
    for b in range(c * CHUNK, b1):
        byte = 0
        for k in range(8):
            i = 8 * b + k
            if i < n:
                v = x[i]
                if v < 0:
                    out[i] = 0
                else:
                    out[i] = v
                if v > 0:
                    byte |= 1 << k
        bits[b] = np.uint8(byte)


@kernel(parallel=True)
def relu_bits(x, out, bits):
    """out = max(x, 0) (NaN passes through); bit i of bits = out[i] > 0."""
    nc = (bits.shape[0] + CHUNK - 1) // CHUNK
    if x.shape[0] <= SERIAL_MAX:
        for c in range(nc):
            _relu_chunk(x, out, bits, c)
        return
    for c in prange(nc):
        _relu_chunk(x, out, bits, c)


@helper
def _select_chunk(g, bits, out, c):
    n = g.shape[0]
    b1 = min((c + 1) * CHUNK, bits.shape[0])
    for b in range(c * CHUNK, b1):
        byte = bits[b]
        for k in range(8):
            i = 8 * b + k
            if i < n:
                if (byte >> k) & 1:
                    out[i] = g[i]
                else:
                    out[i] = 0


@kernel(parallel=True)
def bits_select(g, bits, out):
    """out[i] = g[i] where bit i of bits is set, else 0."""
    nc = (bits.shape[0] + CHUNK - 1) // CHUNK
    if g.shape[0] <= SERIAL_MAX:
        for c in range(nc):
            _select_chunk(g, bits, out, c)
        return
    for c in prange(nc):
        _select_chunk(g, bits, out, c)
