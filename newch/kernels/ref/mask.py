"""Numpy twins of ``kernels/mask.py``."""
import numpy as np

__all__ = ["relu_bits", "bits_select"]


def relu_bits(x, out, bits):
    """out = max(x, 0) (NaN passes through); bit i of bits = out[i] > 0 (little bit order)."""
    out[...] = np.where(x < 0, x.dtype.type(0), x)
    bits[...] = np.packbits(out > 0, bitorder="little")


def bits_select(g, bits, out):
    """out[i] = g[i] where bit i of bits is set, else 0."""
    keep = np.unpackbits(bits, count=g.shape[0], bitorder="little").astype(bool)
    out[...] = np.where(keep, g, g.dtype.type(0))
