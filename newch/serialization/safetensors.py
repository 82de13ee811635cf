"""The safetensors format, read and written without the ``safetensors`` package.

A safetensors file is: 8 bytes (little-endian u64) giving the header length
N, N bytes of JSON (padded with spaces to a multiple of 8), then the raw
little-endian tensor bytes. The header maps each name to
``{"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}``, offsets
relative to the start of the data; ``"__metadata__"`` maps strings to
strings. Loading never runs code: the header is JSON.

The API mirrors ``safetensors.torch``: ``save_file``, ``load_file``, ``save``
and ``load``. Loaded tensors are persistent (they survive ``step_end()``).
"""
import io
import math
import os
import struct
import sys
import warnings

import numpy as np

from ..context import default_context
from ..tensor import Tensor

_CODES = {"F64": "float64", "F32": "float32", "F16": "float16", "BF16": "bfloat16",
          "I64": "int64", "I32": "int32", "I16": "int16", "I8": "int8", "U8": "uint8",
          "BOOL": "bool", "U16": "uint16", "U32": "uint32", "U64": "uint64",
          "F8_E4M3": "float8_e4m3fn", "F8_E5M2": "float8_e5m2", "C64": "complex64"}
_CODE_OF = {"float64": "F64", "float32": "F32", "int64": "I64", "int32": "I32", "uint8": "U8",
            "bool": "BOOL"}
_READ_AS = {"float64": "<f8", "float32": "<f4", "int64": "<i8", "int32": "<i4", "uint8": "u1",
            "bool": "?", "float16": "<f2", "bfloat16": "<u2"}
_MAX_HEADER = 100_000_000


def _check_tensors(op, tensors):
    if not isinstance(tensors, dict):
        raise TypeError(f"{op}: expected a dict of name -> Tensor, got {type(tensors).__name__}")
    for name, t in tensors.items():
        if not isinstance(name, str):
            raise TypeError(f"{op}: tensor names must be strings, got {name!r}")
        if name == "__metadata__":
            raise ValueError(f"{op}: '__metadata__' is reserved by the format, not a tensor name")
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: {name!r} is a {type(t).__name__}, not a Tensor")
        t._data(op)


def _encode(op, tensors, metadata):
    """(header bytes incl. length prefix, [arrays in data order])."""
    _check_tensors(op, tensors)
    if metadata is not None:
        if not isinstance(metadata, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
            raise TypeError(f"{op}: metadata must be a dict of str -> str, got {metadata!r}")
    order = sorted(tensors, key=lambda n: (-tensors[n].element_size(), n))
    header = {"__metadata__": metadata} if metadata else {}
    arrays, offset = [], 0
    for name in order:
        a = tensors[name]._data(op)
        # NOTE: not np.ascontiguousarray, which turns a 0-d array into a 1-d one
        a = a if a.flags.c_contiguous else a.copy(order="C")
        if sys.byteorder == "big" and a.itemsize > 1:
            a = a.byteswap()
        header[name] = {"dtype": _CODE_OF[a.dtype.name], "shape": list(a.shape),
                        "data_offsets": [offset, offset + a.nbytes]}
        offset += a.nbytes
        arrays.append(a)
    import json         # NOTE: imported on first use; keeps ``import newch`` fast
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * ((-len(text)) % 8)
    return struct.pack("<Q", len(text)) + text, arrays


def save(tensors, metadata=None):
    """The safetensors bytes of ``tensors`` (a dict name -> Tensor).

    Example:
        >>> blob = newch.safetensors.save({"w": newch.ones(2)})
    """
    head, arrays = _encode("safetensors.save", tensors, metadata)
    return head + b"".join(a.tobytes() for a in arrays)


def save_file(tensors, filename, metadata=None):
    """Write ``tensors`` (a dict name -> Tensor) to ``filename`` in the safetensors format.

    The write is atomic: a temporary file in the same folder is renamed over
    ``filename`` once complete.

    Args:
        tensors: dict of name -> Tensor (values are written contiguous; views are copied).
        filename: a path.
        metadata: optional dict of str -> str stored in the header.

    Example:
        >>> newch.safetensors.save_file(model.state_dict(), "model.safetensors")
    """
    head, arrays = _encode("safetensors.save_file", tensors, metadata)
    import tempfile     # NOTE: imported on first use; keeps ``import newch`` fast
    path = os.fspath(filename)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(head)
            for a in arrays:
                out.write(memoryview(a.reshape(-1)).cast("B"))
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _header(op, fh, size):
    raw = fh.read(8)
    if len(raw) < 8:
        raise ValueError(f"{op}: the data is too short to be a safetensors file "
                         f"({len(raw)} bytes)")
    (n,) = struct.unpack("<Q", raw)
    if n > min(_MAX_HEADER, size - 8):
        raise ValueError(f"{op}: the header claims {n} bytes but the data has {size - 8} after "
                         f"the length: not a safetensors file, or truncated")
    import json         # NOTE: imported on first use; keeps ``import newch`` fast
    try:
        header = json.loads(fh.read(n).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{op}: the header is not valid JSON ({e}): corrupt file") from None
    if not isinstance(header, dict):
        raise ValueError(f"{op}: the header is not a JSON object: corrupt file")
    return 8 + n, header


def _entries(op, header, data_size):
    """[(name, dtype name, shape, begin, end)] in data order, checked against the format's rules."""
    out = []
    for name, e in header.items():
        if name == "__metadata__":
            continue
        try:
            code, shape, (begin, end) = e["dtype"], tuple(e["shape"]), e["data_offsets"]
        except (KeyError, TypeError, ValueError):
            raise ValueError(f"{op}: the header entry of {name!r} is malformed: {e!r}") from None
        if code not in _CODES:
            raise ValueError(f"{op}: {name!r} has unknown dtype {code!r}")
        if not all(type(s) is int and s >= 0 for s in shape + (begin, end)):
            raise ValueError(f"{op}: {name!r} has an invalid shape or offsets: {e!r}")
        dt = _CODES[code]
        item = {"bool": 1, "uint8": 1, "int8": 1, "float8_e4m3fn": 1, "float8_e5m2": 1,
                "float16": 2, "bfloat16": 2, "int16": 2, "uint16": 2, "float32": 4, "int32": 4,
                "uint32": 4, "complex64": 8}.get(dt, 8)
        if end - begin != math.prod(shape) * item:
            raise ValueError(f"{op}: {name!r} ({code}, shape {list(shape)}) needs "
                             f"{math.prod(shape) * item} bytes but its offsets span "
                             f"{end - begin}: corrupt file")
        out.append((name, dt, shape, begin, end))
    out.sort(key=lambda x: (x[3], x[4]))
    pos = 0
    for name, _, _, begin, end in out:
        if begin != pos:
            raise ValueError(f"{op}: the data of {name!r} starts at byte {begin}, expected {pos} "
                             f"(tensors must tile the data without gaps or overlap): corrupt file")
        pos = end
    if pos != data_size:
        raise ValueError(f"{op}: the tensors cover {pos} bytes of data but the file has "
                         f"{data_size}: truncated or corrupt file")
    return out


def _read(op, fh, size):
    start, header = _header(op, fh, size)
    entries = _entries(op, header, size - start)
    bad = [f"{n!r} is {dt}" for n, dt, *_ in entries if dt not in _READ_AS]
    if bad:
        raise TypeError(f"{op}: the file holds tensors of dtypes newch does not have: "
                        f"{'; '.join(bad[:10])}. newch has bool, uint8, int32, int64, float32, "
                        f"float64 (float16 and bfloat16 load as float32)")
    out, widened, ctx = {}, [], default_context()
    for name, dt, shape, begin, end in entries:
        target = np.dtype(np.float32) if dt in ("float16", "bfloat16") else np.dtype(dt)
        n = math.prod(shape)
        st = ctx.alloc(n * target.itemsize, persistent=True)
        a = st.buf[:n * target.itemsize].view(target)
        fh.seek(start + begin)
        raw = np.frombuffer(fh.read(end - begin), dtype=np.dtype(_READ_AS[dt]))
        if dt == "bfloat16":
            a[...] = (raw.astype(np.uint32) << 16).view(np.float32)
        else:
            a[...] = raw
        if dt in ("float16", "bfloat16"):
            widened.append(repr(name))
        out[name] = Tensor._make(a.reshape(shape), st)
    if widened:
        warnings.warn(f"{op}: {len(widened)} tensor(s) stored as float16/bfloat16 were loaded as "
                      f"float32 (newch has no 16-bit floats): {', '.join(widened)}",
                      UserWarning, stacklevel=3)
    return out


def load(data):
    """The tensors (dict name -> persistent Tensor) held in safetensors bytes ``data``.

    Example:
        >>> newch.safetensors.load(newch.safetensors.save({"w": newch.ones(2)}))["w"]
        tensor([1., 1.])
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"safetensors.load: expected bytes, got {type(data).__name__}")
    return _read("safetensors.load", io.BytesIO(data), len(data))


def load_file(filename, device="cpu"):
    """The tensors (dict name -> persistent Tensor) of safetensors file ``filename``.

    Args:
        filename: a path.
        device: accepted for compatibility; newch runs on the CPU.

    Example:
        >>> newch.safetensors.save_file(model.state_dict(), "model.safetensors")
        >>> model.load_state_dict(newch.safetensors.load_file("model.safetensors"))
        <All keys matched successfully>
    """
    if str(device).split(":")[0] != "cpu":
        raise ValueError(f"safetensors.load_file: device {device!r} is not available; newch "
                         f"runs on the CPU")
    path = os.fspath(filename)
    with open(path, "rb") as fh:
        return _read("safetensors.load_file", fh, os.fstat(fh.fileno()).st_size)


def metadata(filename):
    """The ``__metadata__`` dict of safetensors file ``filename`` (empty when it has none)."""
    path = os.fspath(filename)
    with open(path, "rb") as fh:
        _, header = _header("safetensors.metadata", fh, os.fstat(fh.fileno()).st_size)
    return dict(header.get("__metadata__") or {})
