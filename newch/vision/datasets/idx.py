"""Reading IDX files (the MNIST family's format), gzip-compressed or raw.

IDX: a big-endian int32 magic whose low byte is the number of dimensions and
whose third byte is the element type (0x08 = uint8), then one big-endian int32
per dimension, then the data. A wrong magic, a size that does not match the
header, or a broken gzip stream is a ``RuntimeError`` naming the file: never a
wrong array.
"""
import gzip
import os
import zlib

import numpy as np

_UBYTE = 0x08


def read_idx(path, ndim):
    """The uint8 array stored in IDX file ``path`` (``.gz`` or raw), checked to have ``ndim`` dims.

    Example:
        >>> import tempfile, os
        >>> p = os.path.join(tempfile.mkdtemp(), "x-idx1-ubyte")
        >>> _ = open(p, "wb").write(bytes([0, 0, 8, 1, 0, 0, 0, 2, 7, 9]))
        >>> read_idx(p, 1).tolist()
        [7, 9]
    """
    try:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rb") as f:
            raw = f.read()
    except (OSError, EOFError, zlib.error) as e:
        raise RuntimeError(f"read_idx: {path} is not a readable IDX file "
                           f"(corrupt or truncated: {e})") from None
    if len(raw) < 4 + 4 * ndim:
        raise RuntimeError(f"read_idx: {path} is truncated: {len(raw)} bytes, shorter than its "
                           f"header")
    magic = int.from_bytes(raw[:4], "big")
    if magic >> 16 != 0 or (magic >> 8) & 0xFF != _UBYTE or magic & 0xFF != ndim:
        raise RuntimeError(f"read_idx: {path} has magic number {magic:#010x}, expected "
                           f"{(_UBYTE << 8) | ndim:#010x} (uint8 data with {ndim} dims)")
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    start = 4 + 4 * ndim
    want = int(np.prod(dims))
    if len(raw) - start != want:
        raise RuntimeError(f"read_idx: {path} should hold {want} bytes of data for shape "
                           f"{tuple(dims)}, found {len(raw) - start} (truncated or corrupt)")
    return np.frombuffer(raw, np.uint8, count=want, offset=start).reshape(dims).copy()


def find_file(folder, name):
    """``folder/name`` or ``folder/name.gz``, whichever exists, else None."""
    for candidate in (name, name + ".gz"):
        p = os.path.join(folder, candidate)
        if os.path.isfile(p):
            return p
    return None
