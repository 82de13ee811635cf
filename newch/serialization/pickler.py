"""Pickle newch objects the way ``torch.save`` pickles torch's, naming torch's globals.

A tensor becomes ``torch._utils._rebuild_tensor_v2(storage, offset, size,
stride, requires_grad, OrderedDict())`` where ``storage`` is a persistent id
``('storage', torch.FloatStorage, key, 'cpu', numel)`` whose bytes go to the
record ``data/<key>``. Tensors that share newch memory share a storage in
the file, as in PyTorch. Dtypes become ``torch.float32``..., ``Size`` becomes
``torch.Size``, layers become ``torch.nn.modules.<file>.<Name>``.

The pure-Python pickler is used because it lets a subclass write any global
name: torch is not importable here, so the C pickler would refuse the names.
"""
import copyreg
import pickle
from collections import OrderedDict

import numpy as np

from .. import dtypes as D
from ..net.module import Module
from ..net.parameter import Parameter
from ..tensor import Size, Tensor
from .names import (NN_FILE_OF, REBUILD_PARAMETER, REBUILD_TENSOR, STORAGE_OF, TORCH_MODULE_TABLES,
                    TORCH_SIZE, ForeignDtype, TorchGlobal)


class _StorageRef:
    """One storage record of the file: its key, torch class name, element count and bytes."""
    __slots__ = ("key", "storage_class", "numel", "array", "source")

    def __init__(self, key, storage_class, array, source=None):
        self.key = key
        self.storage_class = storage_class
        self.numel = array.size
        self.array = array        # 1-D, contiguous, the element dtype
        self.source = source      # the newch Storage viewed (None for a copy)

    def data(self):
        """The bytes to write, after checking the newch memory they view is still alive."""
        if self.source is not None and not self.source.gen.alive:
            raise RuntimeError(f"newch.save: the memory of storage {self.key} was freed while "
                               f"saving (step_end() or release() from another thread?); a "
                               f"save to a path leaves the previous file in place")
        return self.array


class _TensorData:
    """Stands for a Parameter's plain tensor inside ``_rebuild_parameter(...)``."""
    __slots__ = ("tensor",)

    def __init__(self, tensor):
        self.tensor = tensor


class StorageTable:
    """The storages a save writes, in key order; shared newch memory gives one shared record.

    A save pickles twice: the first pass (``surveying``) only measures which
    bytes of each newch Storage the saved tensors reach, the second writes
    records holding just that span, so a small view of a big tensor, or the
    arena's rounding padding, never lands in the file.
    """

    def __init__(self):
        self.refs = []
        self.surveying = True
        self._span = {}         # (id(Storage), dtype) -> [first byte, end byte]
        self._shared = {}       # (id(Storage), dtype) -> _StorageRef

    def _new(self, storage_class, array, source=None):
        ref = _StorageRef(str(len(self.refs)), storage_class, array, source)
        if not self.surveying:
            self.refs.append(ref)
        return ref

    def locate(self, t):
        """(storage ref, element offset, size, stride) describing tensor ``t`` in the file."""
        a = t._data("newch.save")
        storage_class = STORAGE_OF[a.dtype.name]
        shared = self._share(t, a, storage_class)
        if shared is not None:
            return shared
        flat = np.ascontiguousarray(a).reshape(-1)
        strides, acc = [], 1
        for n in reversed(a.shape):
            strides.append(acc)
            acc *= n
        return self._new(storage_class, flat), 0, tuple(a.shape), tuple(reversed(strides))

    def _share(self, t, a, storage_class):
        """A record of the newch Storage's reached span, when ``a`` is an ordinary view into it."""
        st = t._storage
        buf, item = st.buf, a.itemsize
        if buf is None or a.size == 0 or any(s < 0 or s % item for s in a.strides):
            return None
        start = a.__array_interface__["data"][0] - buf.__array_interface__["data"][0]
        end = start + sum((n - 1) * s for n, s in zip(a.shape, a.strides)) + item
        if start < 0 or start % item or end > buf.size:
            return None
        key = (id(st), a.dtype.str)
        size, stride = tuple(a.shape), tuple(s // item for s in a.strides)
        if self.surveying:
            lo, hi = self._span.get(key, (start, end))
            self._span[key] = (min(lo, start), max(hi, end))
            return _StorageRef("?", storage_class, np.empty(0, a.dtype)), 0, size, stride
        lo, hi = self._span[key]
        ref = self._shared.get(key)
        if ref is None:
            ref = self._shared[key] = self._new(storage_class, buf[lo:hi].view(a.dtype), st)
        return ref, (start - lo) // item, size, stride


def _torch_class_name(cls):
    """(module, name) torch uses for newch layer class ``cls``, or None to keep newch's name."""
    if not cls.__module__.startswith("newch.net"):
        return None
    if cls is Parameter:
        return "torch.nn.parameter", "Parameter"
    f = NN_FILE_OF.get(cls.__name__)
    return (f"torch.nn.modules.{f}", cls.__name__) if f else None


def module_state(m):
    """A newch Module's ``__dict__`` plus the (empty) hook tables torch's Module expects."""
    state = dict(m.__dict__)
    for name in TORCH_MODULE_TABLES:
        state.setdefault(name, OrderedDict())
    state.setdefault("_is_full_backward_hook", None)
    return state


class TorchPickler(pickle._Pickler):
    """A protocol-2 pickler that writes tensors as torch storages and names torch's globals.

    Args:
        file: where the pickle bytes go.
        table: the StorageTable collecting tensor bytes.
    """

    def __init__(self, file, table):
        super().__init__(file, protocol=2)
        self.table = table

    def persistent_id(self, obj):
        if type(obj) is _StorageRef:
            return ("storage", TorchGlobal("torch", obj.storage_class), obj.key, "cpu", obj.numel)
        return None

    def reducer_override(self, obj):
        if type(obj) in _PLAIN:
            return NotImplemented
        if isinstance(obj, (TorchGlobal, D.dtype, ForeignDtype)):
            return "global"         # NOTE: routed to save_global, which writes torch's name
        if isinstance(obj, Tensor):
            if isinstance(obj, Parameter):
                return REBUILD_PARAMETER, (_TensorData(obj), obj.requires_grad, OrderedDict())
            return self._tensor(obj, obj.requires_grad and obj.is_leaf)
        if isinstance(obj, _TensorData):
            return self._tensor(obj.tensor, False)
        if isinstance(obj, Size):
            return TORCH_SIZE, (tuple(obj),)
        if isinstance(obj, Module) and type(obj).__reduce_ex__ is object.__reduce_ex__:
            return copyreg.__newobj__, (type(obj),), module_state(obj)
        return NotImplemented

    def _tensor(self, t, requires_grad):
        ref, offset, size, stride = self.table.locate(t)
        return REBUILD_TENSOR, (ref, offset, size, stride, requires_grad, OrderedDict())

    def save_global(self, obj, name=None):
        if isinstance(obj, TorchGlobal):
            target = obj.module, obj.name
        elif isinstance(obj, (D.dtype, ForeignDtype)):
            target = "torch", obj.name
        elif isinstance(obj, type):
            target = _torch_class_name(obj)
        else:
            target = None
        if target is None:
            return super().save_global(obj, name)
        self.write(pickle.GLOBAL + f"{target[0]}\n{target[1]}\n".encode("ascii"))
        self.memoize(obj)


_PLAIN = frozenset({str, int, float, bool, type(None), bytes, tuple, list, dict, OrderedDict})


class _Sink:
    def write(self, data):
        return len(data)


class _Survey(pickle.Pickler):
    """The C pickler walking what a save will pickle, only to measure the tensors' storage spans."""

    def __init__(self, table):
        super().__init__(_Sink(), protocol=2)
        self.table = table

    def reducer_override(self, obj):
        if isinstance(obj, Tensor):
            self.table.locate(obj)
            return int, ()
        if isinstance(obj, (TorchGlobal, D.dtype, ForeignDtype, Size)):
            return int, ()
        if isinstance(obj, Module) and type(obj).__reduce_ex__ is object.__reduce_ex__:
            return copyreg.__newobj__, (type(obj),), module_state(obj)
        return NotImplemented


def dump(obj, file, table):
    """Pickle ``obj`` into ``file`` with torch's names, collecting tensor bytes in ``table``."""
    _Survey(table).dump(obj)
    table.surveying = False
    TorchPickler(file, table).dump(obj)
