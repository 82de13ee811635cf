"""Turning the storages and tensor descriptions of a PyTorch pickle into newch tensors.

While the pickle is read, each storage becomes a ``StorageHandle``: a newch
persistent allocation of the right size, not yet filled. Each tensor is a
strided view into its handle's memory, so tensors that shared a storage in
the file share memory in newch too. The bytes are read afterwards
(``fill``), once every tensor's key in the loaded object is known, so a
corrupt record is reported by the keys it feeds.

Nothing here allocates in the step arena: a load only makes persistent tensors.
"""
import numbers
import struct
import zlib

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .. import dtypes as D
from ..context import default_context
from ..net.parameter import Parameter
from ..tensor import Tensor
from .names import WIDENED, canonical_dtype_name, element_size, numpy_dtype

_CHUNK = 1 << 20


class UnsupportedTensor:
    """A tensor of a dtype newch cannot hold (int8, int16, complex...), kept only to be reported."""
    __slots__ = ("dtype", "shape", "key")

    def __init__(self, dtype, shape, key):
        self.dtype, self.shape, self.key = dtype, tuple(shape), key

    def __repr__(self):
        return f"<{self.dtype} tensor of shape {self.shape}, storage {self.key}>"


class StorageHandle:
    """One storage of the file: its record key, element type and the newch memory it fills."""

    def __init__(self, key, dtype_name, count):
        self.key = key
        self.dtype_name = dtype_name    # None for torch.UntypedStorage until a tensor names it
        self.count = count              # elements, or bytes when untyped
        self.numel = None
        self.storage = None             # newch persistent Storage (None when unsupported)
        self.problem = None             # why the file cannot fill it, if it cannot
        self.target = None              # numpy dtype of the newch memory
        self.mapped = False             # True when the memory is the file, mapped (mmap=True)

    def bind(self, dtype_name, check_size=None, map_record=None):
        """Fix the element type (checks a storage is not read as two types) and allocate.

        ``check_size(key, nbytes)`` says what is wrong (or None) when the file does not
        hold ``nbytes`` for this storage: a few hostile bytes must not make newch
        allocate terabytes. The problem is kept and reported with the keys later.
        ``map_record(key)``, when given, returns the storage's bytes mapped from the
        file (or None): such a storage is not copied (``load(mmap=True)``).
        """
        if self.numel is not None:
            if dtype_name is not None and dtype_name != self.dtype_name:
                raise RuntimeError(f"newch.load: storage {self.key} is used as both "
                                   f"{self.dtype_name} and {dtype_name}; the file is corrupt")
            return
        if self.dtype_name is None:
            if dtype_name is None:
                raise RuntimeError(f"newch.load: storage {self.key} has no element type")
            size = element_size(dtype_name)
            if self.count % size:
                raise RuntimeError(f"newch.load: storage {self.key} holds {self.count} bytes, "
                                   f"not a whole number of {dtype_name} elements")
            self.dtype_name, self.count = dtype_name, self.count // size
        self.numel = self.count
        if check_size is not None:
            self.problem = check_size(self.key, self.count * element_size(self.dtype_name))
            if self.problem:
                return
        name = self.dtype_name
        if name in WIDENED:
            self.target = np.dtype(np.float32)
        elif _newch_dtype(name) is not None:
            self.target = _newch_dtype(name).np
        else:
            return
        mapped = map_record(self.key) if map_record is not None and name not in WIDENED else None
        if mapped is not None and mapped.ctypes.data % self.target.itemsize == 0:
            self.storage = default_context().pool.adopt(mapped)
            self.storage.buf = mapped
            self.mapped = True
            return
        nbytes = self.numel * self.target.itemsize
        self.storage = default_context().alloc(nbytes, persistent=True)

    def array(self):
        """The handle's memory as a 1-D array of its newch element type."""
        return self.storage.buf[:self.numel * self.target.itemsize].view(self.target)


def _newch_dtype(name):
    try:
        d = D.from_any(name)
    except TypeError:
        return None
    return d if d.name == name else None


def _int(v):
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _check_layout(key, numel, offset, size, stride):
    if not (_int(offset) and isinstance(size, tuple) and isinstance(stride, tuple)
            and all(_int(s) for s in size) and all(_int(s) for s in stride)
            and len(size) == len(stride) and len(size) <= 32):
        raise RuntimeError(f"newch.load: a tensor of storage {key} has an invalid layout "
                           f"(offset {offset!r}, size {size!r}, stride {stride!r})")
    if offset < 0 or any(s < 0 for s in size) or any(s < 0 for s in stride):
        raise RuntimeError(f"newch.load: a tensor of storage {key} has a negative offset, size or "
                           f"stride (offset {offset}, size {size}, stride {stride})")
    if 0 in size:
        end = offset
    else:
        end = offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1
    if end > numel:
        raise RuntimeError(f"newch.load: a tensor of storage {key} (offset {offset}, size "
                           f"{tuple(size)}, stride {tuple(stride)}) reaches element {end}, past "
                           f"the storage's {numel} elements: the file is corrupt")


class Rebuilder:
    """The functions a PyTorch pickle calls to make tensors, bound to one load."""

    def __init__(self, check_size=None, map_record=None):
        self.handles = {}          # key -> StorageHandle
        self.tensors = []          # (tensor or UnsupportedTensor, handle) in order of creation
        self.check_size = check_size
        self.map_record = map_record

    def storage(self, key, dtype_name, count):
        """The handle of storage ``key`` (one per key, however many tensors use it)."""
        h = self.handles.get(key)
        if h is None:
            h = self.handles[key] = StorageHandle(key, dtype_name, count)
        elif h.count != count and h.numel is None:
            raise RuntimeError(f"newch.load: storage {key} is declared with two sizes")
        return h

    def tensor(self, handle, offset, size, stride, requires_grad, dtype_name=None):
        if not isinstance(handle, StorageHandle):
            raise RuntimeError(f"newch.load: a tensor is built on {type(handle).__name__}, not on "
                               f"a storage of the file")
        handle.bind(dtype_name, self.check_size, self.map_record)
        size, stride = tuple(size), tuple(stride)
        _check_layout(handle.key, handle.numel, offset, size, stride)
        if handle.storage is None:
            out = UnsupportedTensor(handle.dtype_name, size, handle.key)
        else:
            base = handle.array()[offset:]
            item = handle.target.itemsize
            try:
                a = as_strided(base, shape=size, strides=tuple(s * item for s in stride))
            except (ValueError, OverflowError) as e:
                raise RuntimeError(f"newch.load: a tensor of storage {handle.key} has an invalid "
                                   f"layout (size {size}, stride {stride}): {e}") from None
            out = Tensor._make(a, handle.storage)
            if requires_grad and out.dtype.is_floating_point:
                out.requires_grad_(True)
        self.tensors.append((out, handle))
        return out

    def rebuild_tensor_v2(self, storage, storage_offset, size, stride, requires_grad=False,
                          backward_hooks=None, metadata=None):
        return self.tensor(storage, storage_offset, size, stride, requires_grad)

    def rebuild_tensor_v3(self, storage, storage_offset, size, stride, requires_grad,
                          backward_hooks, dtype, metadata=None):
        name = getattr(dtype, "name", None)
        if not isinstance(name, str):
            raise RuntimeError(f"newch.load: _rebuild_tensor_v3 got {dtype!r} as a dtype")
        return self.tensor(storage, storage_offset, size, stride, requires_grad,
                           canonical_dtype_name(name))

    def rebuild_parameter(self, data, requires_grad, backward_hooks=None, state=None):
        if isinstance(data, UnsupportedTensor):
            return data
        if not isinstance(data, Tensor):
            raise RuntimeError(f"newch.load: _rebuild_parameter got {type(data).__name__}, "
                               f"not a tensor")
        p = Parameter(data, bool(requires_grad) and data.dtype.is_floating_point)
        for i in range(len(self.tensors) - 1, -1, -1):
            if self.tensors[i][0] is data:      # NOTE: the parameter, not its data, has a key
                self.tensors[i] = (p, self.tensors[i][1])
                break
        return p


def file_dtype(handle, byteorder):
    """The numpy dtype of ``handle``'s elements as stored in the file."""
    dt = numpy_dtype(handle.dtype_name)
    return dt.newbyteorder(">") if byteorder == "big" else dt


def read_into(handle, fill_bytes, byteorder, record, where):
    """Fill ``handle``'s newch memory with its elements, converting float16/bfloat16 and byte order.

    ``fill_bytes(dest)`` writes exactly ``dest.size`` bytes of the file into
    uint8 array ``dest`` (or raises); ``record`` and ``where`` (the keys using
    the storage) name it in errors.
    """
    src = file_dtype(handle, byteorder)
    out = handle.array()
    direct = src == out.dtype
    dest = out.view(np.uint8) if direct else np.empty(handle.numel * src.itemsize, np.uint8)
    try:
        fill_bytes(dest)
    except Exception as e:  # zipfile raises BadZipFile, zlib.error, EOFError, OSError...
        raise RuntimeError(f"newch.load: {record} (the data of {where}) cannot be read: "
                           f"{e}. The file is truncated or corrupt.") from None
    if not direct:
        raw = dest.view(src)
        if handle.dtype_name == "bfloat16":
            out[...] = (raw.astype(np.uint32) << 16).view(np.float32)
        else:
            out[...] = raw


def stream_reader(fh):
    """``fill_bytes`` reading the next bytes of stream ``fh`` (in chunks: bounded extra memory)."""
    def fill_bytes(dest):
        pos, n = 0, dest.size
        while pos < n:
            chunk = fh.read(min(_CHUNK, n - pos))
            if not chunk:
                raise EOFError(f"only {pos} of {n} bytes are there")
            dest[pos:pos + len(chunk)] = np.frombuffer(chunk, np.uint8)
            pos += len(chunk)
    return fill_bytes


def data_offset(raw, info):
    """Where zip record ``info``'s bytes start in seekable stream ``raw`` (after its local header)."""
    raw.seek(info.header_offset)
    head = raw.read(30)
    if len(head) < 30 or head[:4] != b"PK\x03\x04":
        raise ValueError("its local zip header is damaged")
    n, m = struct.unpack("<HH", head[26:30])
    return info.header_offset + 30 + n + m


def _stored_reader(raw, info):
    """``fill_bytes`` for an uncompressed zip record: one read straight into place, then the CRC."""
    def fill_bytes(dest):
        raw.seek(data_offset(raw, info))
        view, pos, crc = memoryview(dest), 0, 0
        while pos < dest.size:
            got = raw.readinto(view[pos:pos + _CHUNK])
            if not got:
                raise EOFError(f"only {pos} of {dest.size} bytes are there")
            crc = zlib.crc32(view[pos:pos + got], crc)    # NOTE: while the chunk is in cache
            pos += got
        if crc != info.CRC:
            raise ValueError("its CRC-32 does not match (the bytes changed after saving)")
    return fill_bytes


def _zip_reader(zf, info):
    """``fill_bytes`` for any zip record, through zipfile (decompression, CRC at the end)."""
    def fill_bytes(dest):
        with zf.open(info) as fh:
            stream_reader(fh)(dest)
            fh.read(1)      # NOTE: reaching the record's end makes zipfile check its CRC
    return fill_bytes


def fill(zf, raw, prefix, handle, byteorder, where):
    """Read storage ``handle``'s record from zip ``zf`` (over seekable stream ``raw``) into newch.

    ``where`` names the keys that use the storage, for error messages.
    """
    name = f"{prefix}/data/{handle.key}"
    expected = handle.numel * file_dtype(handle, byteorder).itemsize
    info = zf.NameToInfo.get(name)
    if info is None or info.file_size != expected:
        held = "is missing" if info is None else f"holds {info.file_size} bytes"
        raise RuntimeError(f"newch.load: record {name} (the data of {where}) {held}, but "
                           f"{handle.numel} {handle.dtype_name} elements need {expected}: the "
                           f"file is truncated or corrupt")
    stored = info.compress_type == 0 and hasattr(raw, "readinto")
    reader = _stored_reader(raw, info) if stored else _zip_reader(zf, info)
    read_into(handle, reader, byteorder, f"record {name}", where)
