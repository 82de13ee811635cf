"""Reading PyTorch's legacy checkpoint format (``torch.save`` before 1.6, or with
``_use_new_zipfile_serialization=False``).

The legacy file is a run of pickles followed by raw storage bytes, all in one stream::

    pickle: the magic number 0x1950a86a20f9469cfc6c
    pickle: the protocol version, 1001
    pickle: {"protocol_version": 1001, "little_endian": True, "type_sizes": {...}}
    pickle: the object; storages are persistent ids ("storage", torch.FloatStorage, key,
            location, numel, None)
    pickle: the list of storage keys, in the order their bytes follow
    for each key: numel as an 8-byte integer, then numel elements

The small pickles are read with the weights-only unpickler whatever
``weights_only`` says: they are data.
"""
import pickle

from .rebuild import Rebuilder, read_into, stream_reader
from .unpickler import FullUnpickler, Refused, WeightsOnlyUnpickler

MAGIC = 0x1950A86A20F9469CFC6C
PROTOCOL = 1001


def _small(fh, rebuilder, encoding, what):
    try:
        return WeightsOnlyUnpickler(fh, rebuilder, encoding=encoding).load()
    except Refused:
        raise
    except Exception as e:
        raise RuntimeError(f"newch.load: the legacy file's {what} cannot be read ({e}): it is "
                           f"truncated or corrupt") from None


def read_legacy(fh, weights_only, encoding):
    """(object, Rebuilder, fill) from a legacy-format stream positioned at its start.

    ``fill(where)`` reads the storage bytes that follow the pickles, once the
    caller has checked dtypes; ``where(handle)`` names a storage's keys.
    """
    here = fh.tell()
    total = fh.seek(0, 2) - here
    fh.seek(here)

    def check_size(key, nbytes):
        if nbytes > total:
            return f"it needs {nbytes} bytes, more than the whole file ({total})"
        return None

    rebuilder = Rebuilder(check_size)
    if _small(fh, rebuilder, encoding, "magic number") != MAGIC:
        raise RuntimeError("newch.load: not a PyTorch legacy file (wrong magic number)")
    version = _small(fh, rebuilder, encoding, "protocol version")
    if version != PROTOCOL:
        raise RuntimeError(f"newch.load: legacy protocol version {version!r} is not supported "
                           f"(only {PROTOCOL})")
    info = _small(fh, rebuilder, encoding, "system info")
    little = not isinstance(info, dict) or info.get("little_endian", True)
    cls = WeightsOnlyUnpickler if weights_only else FullUnpickler
    try:
        obj = cls(fh, rebuilder, encoding=encoding).load()
    except Refused:
        raise
    except (pickle.UnpicklingError, EOFError, ValueError, IndexError, KeyError, TypeError,
            AttributeError) as e:
        if not weights_only and isinstance(e, (TypeError, AttributeError)):
            raise       # NOTE: may come from the file's own classes (a renamed class...)
        raise RuntimeError(f"newch.load: the legacy file's object pickle is corrupt: {e}") from None
    keys = _small(fh, rebuilder, encoding, "storage key list")
    if not (isinstance(keys, list) and all(isinstance(k, str) for k in keys)):
        raise RuntimeError("newch.load: the legacy file's storage key list is corrupt")

    def fill(where):
        order = "little" if little else "big"
        for key in keys:
            handle = rebuilder.handles.get(key)
            if handle is None or handle.numel is None:
                raise RuntimeError(f"newch.load: the legacy file has bytes for storage {key}, "
                                   f"which no tensor uses: the file is corrupt")
            head = fh.read(8)
            numel = int.from_bytes(head, order) if len(head) == 8 else -1
            if numel != handle.numel:
                raise RuntimeError(f"newch.load: storage {key} (the data of {where(handle)}) "
                                   f"should hold {handle.numel} elements, the file says "
                                   f"{numel}: it is truncated or corrupt")
            read_into(handle, stream_reader(fh), order, f"storage {key}", where(handle))

    return obj, rebuilder, fill
