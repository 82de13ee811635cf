"""``make_grid`` and ``save_image``: tile a batch of images and write it as a PNG, no image library.

PNG is written with the standard library (``zlib`` + ``struct``): 8-bit
greyscale or RGB, one IDAT chunk, filter 0 on every row.
"""
import os
import struct
import zlib

import numpy as np

from ..ops.creation import as_tensor
from ..tensor import Tensor


def _batch(tensor):
    if isinstance(tensor, (list, tuple)):
        arrays = [t.detach().numpy(force=True) if isinstance(t, Tensor) else np.asarray(t)
                  for t in tensor]
        a = np.stack(arrays)
    elif isinstance(tensor, Tensor):
        a = tensor.detach().numpy(force=True)
    else:
        a = np.asarray(tensor)
    if a.ndim == 2:
        a = a[None, None]
    elif a.ndim == 3:
        a = a[None] if a.shape[0] in (1, 3) else a[:, None]
    if a.ndim != 4:
        raise ValueError(f"make_grid: expected (B, C, H, W), (C, H, W) or (H, W) images, got "
                         f"shape {a.shape}")
    if a.shape[1] == 1:
        a = np.repeat(a, 3, axis=1)
    return a.astype(np.float64)


def _normalize(a, value_range, scale_each):
    def norm(x):
        lo, hi = value_range if value_range is not None else (x.min(), x.max())
        return np.clip((x - lo) / max(hi - lo, 1e-5), 0, 1)
    return np.stack([norm(x) for x in a]) if scale_each else norm(a)


def make_grid(tensor, nrow=8, padding=2, normalize=False, value_range=None, scale_each=False,
              pad_value=0.0):
    """Tile images (B, C, H, W) into one (3, H', W') tensor, ``nrow`` images per row.

    Example:
        >>> tuple(make_grid(newch.zeros(4, 1, 5, 5), nrow=2, padding=1).shape)
        (3, 13, 13)
    """
    a = _batch(tensor)
    if normalize:
        a = _normalize(a, value_range, scale_each)
    b, c, h, w = a.shape
    if b == 1 and padding == 0:
        return as_tensor(a[0].astype(np.float32))
    cols = min(nrow, b)
    rows = -(-b // cols)
    hp, wp = h + padding, w + padding
    grid = np.full((c, rows * hp + padding, cols * wp + padding), pad_value, np.float64)
    for k in range(b):
        r, q = divmod(k, cols)
        grid[:, r * hp + padding:r * hp + padding + h, q * wp + padding:q * wp + padding + w] = a[k]
    return as_tensor(grid.astype(np.float32))


def png_bytes(pixels):
    """PNG file contents for a uint8 array (H, W) greyscale or (H, W, 3) RGB."""
    pixels = np.ascontiguousarray(pixels, np.uint8)
    if pixels.ndim == 2:
        color = 0
    elif pixels.ndim == 3 and pixels.shape[2] == 3:
        color = 2
    else:
        raise ValueError(f"png_bytes: expected (H, W) or (H, W, 3) uint8 pixels, got {pixels.shape}")
    h, w = pixels.shape[:2]
    rows = pixels.reshape(h, -1)
    raw = b"".join(b"\x00" + rows[i].tobytes() for i in range(h))

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(
            ">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
    header = struct.pack(">IIBBBBB", w, h, 8, color, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 6))
            + chunk(b"IEND", b""))


def save_image(tensor, fp, format=None, **grid_kwargs):
    """Write images (values in [0, 1]) as one PNG grid to a path or binary file.

    Example:
        >>> import io
        >>> buf = io.BytesIO(); save_image(newch.rand(2, 3, 4, 4), buf)
        >>> buf.getvalue()[:4]
        b'\\x89PNG'
    """
    if format not in (None, "png", "PNG"):
        raise ValueError(f"save_image: only PNG is supported, got format={format!r}")
    grid = make_grid(tensor, **grid_kwargs).numpy()
    pixels = np.clip(grid * 255 + 0.5, 0, 255).astype(np.uint8).transpose(1, 2, 0)
    data = png_bytes(pixels)
    if hasattr(fp, "write"):
        fp.write(data)
        return
    path = os.fspath(fp)
    if os.path.splitext(path)[1].lower() not in ("", ".png") and format is None:
        raise ValueError(f"save_image: only PNG files can be written, got {path!r}")
    with open(path, "wb") as f:
        f.write(data)
