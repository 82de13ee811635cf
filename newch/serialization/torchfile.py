"""``newch.save`` and ``newch.load``: PyTorch's checkpoint file (a zip archive), without torch.

Layout of the archive (every record under one folder, ``archive/`` here)::

    archive/data.pkl            the object, pickled (protocol 2); tensors refer to storages
    archive/.format_version     b"1"
    archive/.storage_alignment  b"64": record data starts on 64-byte boundaries
    archive/byteorder           b"little"
    archive/data/<key>          the raw bytes of storage <key>
    archive/version             b"3\\n"
"""
import io
import os
import pickle
import sys
import warnings

from .. import dtypes as D
from .names import WIDENED
from .pickler import StorageTable, dump
from .legacy import read_legacy
from .rebuild import UnsupportedTensor, data_offset, fill
from .safe_globals import globals_in_pickle
from .unpickler import Refused, is_data_global, unpickle
from .zipwriter import ZipWriter
from .walk import key_paths, modules_in, settle_module

_PREFIX = "archive"
_LEGACY_MAGIC = b"\x80\x02\x8a\x0al\xfc\x9cF\xf9 j\xa8P\x19"   # pickled 0x1950a86a20f9469cfc6c
_BIG_ENDIAN = sys.byteorder == "big"


def _is_path(f):
    return isinstance(f, (str, os.PathLike))


def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Save ``obj`` (tensors, state_dicts, containers, whole modules) in PyTorch's file format.

    The file loads in PyTorch with ``torch.load`` (``weights_only=True`` when
    it holds only tensors, containers and primitives) and in newch with
    ``newch.load``. Writing to a path is atomic: the data goes to a temporary
    file in the same folder, renamed over ``f`` once complete.

    Args:
        obj: what to save.
        f: a path, or a binary file object open for writing (``io.BytesIO`` works).
        pickle_module: accepted for compatibility; only None or ``pickle`` is supported.
        pickle_protocol: 2 (PyTorch's default) to 5.

    Example:
        >>> newch.save(model.state_dict(), "model.pt")
    """
    if pickle_module not in (None, pickle):
        raise ValueError("newch.save: pickle_module must be None or pickle; newch writes "
                         "PyTorch's own pickle layout")
    if not _use_new_zipfile_serialization:
        raise NotImplementedError("newch.save: the legacy (pre-1.6) format is not written; "
                                  "newch writes the zip format every PyTorch >= 1.6 reads")
    if not (isinstance(pickle_protocol, int) and 2 <= pickle_protocol <= 5):
        raise ValueError(f"newch.save: pickle_protocol must be 2 to 5, got {pickle_protocol!r}")
    table, pkl = StorageTable(), io.BytesIO()
    dump(obj, pkl, table)
    if _is_path(f):
        _write_atomic(os.fspath(f), pkl.getbuffer(), table, not _disable_byteorder_record)
    elif hasattr(f, "write"):
        _write_archive(f, pkl.getbuffer(), table, not _disable_byteorder_record)
    else:
        raise TypeError(f"newch.save: f must be a path or a binary file object, got "
                        f"{type(f).__name__}")


def _write_archive(out, pkl, table, byteorder):
    w = ZipWriter(out)
    w.add(f"{_PREFIX}/data.pkl", pkl)
    w.add(f"{_PREFIX}/.format_version", b"1")
    w.add(f"{_PREFIX}/.storage_alignment", b"64")
    if byteorder:
        w.add(f"{_PREFIX}/byteorder", b"little")
    for ref in table.refs:
        a = ref.data()
        if a.dtype.byteorder == ">" or (a.dtype.byteorder == "=" and _BIG_ENDIAN):
            a = a.byteswap()
        w.add(f"{_PREFIX}/data/{ref.key}", a)
    w.add(f"{_PREFIX}/version", b"3\n")
    w.close()


def _write_atomic(path, pkl, table, byteorder):
    import tempfile     # NOTE: imported on first save; keeps ``import newch`` fast
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as out:
            _write_archive(out, pkl, table, byteorder)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None,
         **pickle_load_args):
    """Load an object saved by ``newch.save`` or ``torch.save`` (zip or legacy format).

    Every tensor comes back persistent (it survives ``step_end()``) and on
    the CPU; tensors that shared memory in the file share it again.
    float16 / bfloat16 tensors load as float32 (one warning lists them);
    other dtypes newch lacks (int8, int16, complex...) are an error naming
    the key.

    Args:
        f: a path, or a binary file object open for reading (``io.BytesIO`` works).
        map_location: accepted for compatibility; everything loads on the CPU.
        pickle_module: accepted for compatibility; only None or ``pickle``.
        weights_only: True (default): only tensors, containers and primitives
            load and nothing the file names is called. False unpickles
            anything, which can run arbitrary code: trusted files only.
        mmap: True maps the file (``f`` must be a path) copy-on-write instead of
            reading it; tensors then live in the OS page cache (their CRC is not checked).
        encoding: passed to the unpickler (``"latin1"`` for Python 2 files).

    Example:
        >>> newch.save(model.state_dict(), "model.pt")
        >>> model.load_state_dict(newch.load("model.pt"))
        <All keys matched successfully>
    """
    if pickle_module not in (None, pickle):
        raise ValueError("newch.load: pickle_module must be None or pickle")
    encoding = pickle_load_args.pop("encoding", "utf-8")
    if pickle_load_args:
        raise TypeError(f"newch.load: unexpected arguments {sorted(pickle_load_args)}")
    if weights_only is None:
        weights_only = True
    if mmap and not _is_path(f):
        raise ValueError("newch.load: mmap=True needs f to be a path (a file to map)")
    if _is_path(f):
        with open(os.fspath(f), "rb") as fh:
            return _load_stream(fh, os.fspath(f), weights_only, encoding, bool(mmap))
    if not hasattr(f, "read"):
        raise TypeError(f"newch.load: f must be a path or a binary file object, got "
                        f"{type(f).__name__}")
    if not (hasattr(f, "seek") and hasattr(f, "seekable") and f.seekable()):
        f = io.BytesIO(f.read())
    return _load_stream(f, getattr(f, "name", "the file"), weights_only, encoding)


def _load_stream(fh, name, weights_only, encoding, mmap=False):
    start = fh.tell()
    head = fh.read(16)
    fh.seek(start)
    if head[:4] == b"PK\x03\x04":
        obj, rebuilder, fill_all = _read_zip(fh, name, weights_only, encoding, mmap)
    elif head[:len(_LEGACY_MAGIC)] == _LEGACY_MAGIC:
        obj, rebuilder, fill_all = read_legacy(fh, weights_only, encoding)
    else:
        what = "is empty" if not head else "is not a PyTorch checkpoint (not a zip archive)"
        raise RuntimeError(f"newch.load: {name} {what}")
    paths = key_paths(obj)
    keys = {}                                   # id(handle) -> keys of its tensors
    for t, h in rebuilder.tensors:
        keys.setdefault(id(h), []).append(_key(paths, t))

    def where(handle):
        found = keys.get(id(handle), [])
        return ", ".join(found[:5]) + (f" and {len(found) - 5} more" if len(found) > 5 else "")

    _check_dtypes(rebuilder, paths, where)
    fill_all(where)
    for m in modules_in(obj):
        settle_module(m)
    return obj


def _read_zip(fh, name, weights_only, encoding, mmap=False):
    import zipfile      # NOTE: imported on first load; keeps ``import newch`` fast
    try:
        zf = zipfile.ZipFile(fh)
    except (zipfile.BadZipFile, OSError, ValueError) as e:
        raise RuntimeError(f"newch.load: {name} is a damaged zip archive ({e}); the file is "
                           f"truncated or corrupt") from None
    names = zf.namelist()
    prefix = names[0].split("/")[0] if names else ""
    if f"{prefix}/data.pkl" not in names:
        torchscript = f"{prefix}/constants.pkl" in names
        raise RuntimeError(f"newch.load: {name} is a zip archive without {prefix}/data.pkl: " +
                           ("a TorchScript archive (torch.jit.save), which newch does not run"
                            if torchscript else "not a PyTorch checkpoint"))
    byteorder = "little"
    if f"{prefix}/byteorder" in names:
        byteorder = _read(zf, f"{prefix}/byteorder").decode("ascii", "replace")
        if byteorder not in ("little", "big"):
            raise RuntimeError(f"newch.load: {name} has an unknown byteorder {byteorder!r}")
    pkl = _read(zf, f"{prefix}/data.pkl")

    total = fh.seek(0, 2)

    def check_size(key, nbytes):
        record = f"{prefix}/data/{key}"
        info = zf.NameToInfo.get(record)
        if info is None or info.file_size != nbytes:
            held = "is missing" if info is None else f"holds {info.file_size} bytes"
            return f"it needs {nbytes} bytes but record {record} {held}"
        # NOTE: sizes in the zip directory are claims; bound them by what the file can hold
        # (deflate expands at most ~1032x) so a forged header cannot make us allocate terabytes.
        room = total if info.compress_type == 0 else 1032 * info.compress_size + 64
        if nbytes > room:
            return f"record {record} claims {nbytes} bytes, more than the file can hold ({room})"
        return None

    map_record = _mapper(fh, zf, prefix) if mmap and byteorder == "little" else None
    try:
        obj, rebuilder = unpickle(pkl, weights_only, encoding, check_size, map_record)
    except Refused:
        raise
    except (pickle.UnpicklingError, EOFError, ValueError, IndexError, KeyError, TypeError,
            AttributeError) as e:
        if not weights_only and isinstance(e, (TypeError, AttributeError)):
            raise       # NOTE: may come from the file's own classes (a renamed class...)
        raise RuntimeError(f"newch.load: {prefix}/data.pkl of {name} is corrupt: {e}") from None

    def fill_all(where):
        for handle in rebuilder.handles.values():
            if handle.storage is not None and not handle.mapped:
                fill(zf, fh, prefix, handle, byteorder, where(handle))

    return obj, rebuilder, fill_all


def _mapper(fh, zf, prefix):
    """``map_record(key)``: storage ``key``'s bytes as a copy-on-write map of the file, or None."""
    import numpy as np
    whole = np.memmap(fh.name, dtype=np.uint8, mode="c")   # NOTE: writes stay private

    def map_record(key):
        info = zf.NameToInfo.get(f"{prefix}/data/{key}")
        if info is None or info.compress_type != 0:
            return None
        start = data_offset(fh, info)
        return whole[start:start + info.file_size]

    return map_record


def _read(zf, record):
    try:
        return zf.read(record)
    except Exception as e:
        raise RuntimeError(f"newch.load: record {record} cannot be read ({e}); the file is "
                           f"truncated or corrupt") from None


def _key(paths, t):
    p = paths.get(id(t))
    return repr(p) if p else "(a tensor not reachable by key)"


def _check_dtypes(rebuilder, paths, where):
    for handle in rebuilder.handles.values():
        if handle.problem:
            raise RuntimeError(f"newch.load: storage {handle.key} (the data of "
                               f"{where(handle)}) cannot be read: "
                               f"{handle.problem}. The file is truncated or corrupt.")
    bad = [(t, h) for t, h in rebuilder.tensors if isinstance(t, UnsupportedTensor)]
    if bad:
        lines = "; ".join(f"{_key(paths, t)} is {h.dtype_name}" for t, h in bad[:10])
        have = ", ".join(d.name for d in D.ALL)
        raise TypeError(f"newch.load: the file holds tensors of dtypes newch does not have: "
                        f"{lines}. newch has {have} (float16 and bfloat16 load as float32); "
                        f"convert these in PyTorch before saving (e.g. t.to(torch.int32))")
    widened = [_key(paths, t) for t, h in rebuilder.tensors if h.dtype_name in WIDENED]
    if widened:
        warnings.warn(f"newch.load: {len(widened)} tensor(s) stored as float16/bfloat16 were "
                      f"loaded as float32 (newch has no 16-bit floats): {', '.join(widened)}",
                      UserWarning, stacklevel=4)


def get_unsafe_globals_in_checkpoint(f):
    """The globals (``"module.name"``) of checkpoint ``f`` a weights-only load would refuse.

    The pickle is read, never run. An empty list means ``newch.load(f)`` will
    not refuse anything.

    Example:
        >>> newch.serialization.get_unsafe_globals_in_checkpoint("model.pt")  # doctest: +SKIP
        ['__main__.Net', 'torch.nn.modules.linear.Linear']
    """
    import zipfile      # NOTE: imported on first use; keeps ``import newch`` fast
    with zipfile.ZipFile(os.fspath(f) if _is_path(f) else f) as zf:
        names = zf.namelist()
        prefix = names[0].split("/")[0] if names else ""
        pkl = _read(zf, f"{prefix}/data.pkl")
    return [g for g in globals_in_pickle(pkl) if not is_data_global(*g.rsplit(".", 1))]
