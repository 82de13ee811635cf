"""Reading a PyTorch pickle: a restricted unpickler (weights_only), a full one; torch names mapped.

Unpickling runs whatever callables a pickle names; the only way a pickle can
name one is a global (``find_class``). ``WeightsOnlyUnpickler`` answers
``find_class`` from a short allowlist (tensor and storage rebuilders,
OrderedDict, set, Size, dtypes...) and refuses everything else *before* it
is imported or called, so a hostile file executes nothing.
``FullUnpickler`` resolves any global (trusted files only), translating
torch's names to newch's: ``torch.nn.modules.linear.Linear`` is
``newch.nn.Linear``.
"""
import collections
import io
import pickle

from .. import dtypes as D
from ..tensor import Size
from .names import STORAGE_DTYPES, TORCH_DTYPE_NAMES, dtype_value
from .rebuild import Rebuilder
from .safe_globals import allowed

_REFUSED = ("newch.load: weights_only=True refuses {what}: only tensors, dicts, lists, tuples, "
            "sets, numbers, strings, dtypes and torch.Size load this way, and nothing a file "
            "names is ever called. If you trust the file and its author, load it with "
            "newch.load(f, weights_only=False), which can run any code the file asks for, or "
            "allow just this global with newch.serialization.add_safe_globals([...]).")


class Refused(pickle.UnpicklingError):
    """A load refused something in the file (a global, a persistent id...), having run nothing."""


class StorageType:
    """Stands for ``torch.FloatStorage``... in a storage's persistent id."""
    __slots__ = ("dtype_name",)

    def __init__(self, dtype_name):
        self.dtype_name = dtype_name      # None for torch.UntypedStorage


def _device(*args):
    """``torch.device('cpu')`` in a file: newch keeps the name (everything runs on the CPU)."""
    if not args or not all(isinstance(a, (str, int)) for a in args):
        raise Refused(f"newch.load: torch.device{args!r} is not a device name")
    return ":".join(str(a) for a in args)


def _encode(text, encoding="latin1"):
    """``_codecs.encode``: how protocol 2 pickles ``bytes``; only that use is allowed."""
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise Refused("newch.load: _codecs.encode is only allowed to rebuild bytes")
    return text.encode("latin1")


def _torch_global(module, name, rebuilder):
    """The newch object for torch's data-only global ``module.name``, or None."""
    if module == "torch._utils":
        return {"_rebuild_tensor_v2": rebuilder.rebuild_tensor_v2,
                "_rebuild_tensor_v3": rebuilder.rebuild_tensor_v3,
                "_rebuild_parameter": rebuilder.rebuild_parameter,
                "_rebuild_parameter_with_state": rebuilder.rebuild_parameter}.get(name)
    if module in ("torch", "torch.storage") and name == "UntypedStorage":
        return StorageType(None)
    if module != "torch":
        return None
    if name in STORAGE_DTYPES:
        return StorageType(STORAGE_DTYPES[name])
    if name in TORCH_DTYPE_NAMES:
        return dtype_value(name)
    return {"Size": Size, "device": _device}.get(name)


_SAFE = {
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("collections", "Counter"): collections.Counter,   # MultiStepLR's milestones (torch allows it)
    ("builtins", "set"): set, ("__builtin__", "set"): set,
    ("builtins", "frozenset"): frozenset, ("__builtin__", "frozenset"): frozenset,
    ("builtins", "complex"): complex, ("__builtin__", "complex"): complex,
    ("_codecs", "encode"): _encode,
    ("newch.dtypes", "from_any"): D.from_any,
}


class _Base(pickle.Unpickler):
    def __init__(self, file, rebuilder, **kwargs):
        super().__init__(file, **kwargs)
        self.rebuilder = rebuilder

    def persistent_load(self, pid):
        if isinstance(pid, tuple) and len(pid) == 4 and pid[0] == "module":
            # NOTE: the legacy format names a module class with its source file and text (for a
            # "source changed" warning); the class itself already went through find_class.
            return pid[1]
        if not (isinstance(pid, tuple) and len(pid) >= 5 and pid[0] == "storage"
                and isinstance(pid[1], StorageType) and isinstance(pid[2], str)
                and isinstance(pid[4], int) and not isinstance(pid[4], bool) and pid[4] >= 0):
            raise Refused(f"newch.load: unknown persistent id {str(pid)[:200]}; "
                                         f"only PyTorch storages are expected")
        if len(pid) > 5 and pid[5] is not None:
            raise Refused("newch.load: the file uses storage views of PyTorch's "
                                         "oldest legacy format, which newch does not read")
        return self.rebuilder.storage(pid[2], pid[1].dtype_name, pid[4])


class WeightsOnlyUnpickler(_Base):
    """Unpickle only data: tensors, containers, primitives; any other global is refused."""

    def find_class(self, module, name):
        found = (_SAFE.get((module, name)) or _torch_global(module, name, self.rebuilder)
                 or allowed(module, name))
        if found is None:
            shown = "builtins" if module == "__builtin__" else module     # protocol 2's spelling
            raise Refused(_REFUSED.format(what=f"the global {shown}.{name}"))
        return found


def is_data_global(module, name):
    """True when a weights-only load accepts global ``module.name`` (built in or user-allowed)."""
    return ((module, name) in _SAFE or _torch_global(module, name, Rebuilder()) is not None
            or allowed(module, name) is not None)


def _newch_class(module, name):
    """newch's object for torch's ``torch.nn...``, ``torch.optim...`` or ``torch.<op>``, or None."""
    from .. import net, ops, optim    # NOTE: the namespaces are complete only once newch loaded
    if module == "torch":
        return getattr(ops, name) if name in ops.__all__ else None     # public ops only, no module
    if module == "torch.nn.functional":
        return getattr(net.functional, name, None)
    if module.startswith("torch.nn"):
        return getattr(net, name, None)
    if module.startswith("torch.optim"):
        parts = module.split(".")
        space = optim
        if len(parts) > 2 and parts[2] == "lr_scheduler":
            space = getattr(optim, "lr_scheduler", None)
        return getattr(space, name, None)
    return None


class FullUnpickler(_Base):
    """Unpickle anything (trusted files only), torch's names translated to newch's."""

    def find_class(self, module, name):
        if module == "torch" or module.startswith("torch."):
            found = _torch_global(module, name, self.rebuilder) or _newch_class(module, name)
            if found is None:
                raise Refused(
                    f"newch.load: the file needs {module}.{name}, which newch does not provide")
            return found
        return super().find_class(module, name)


def unpickle(data, weights_only, encoding="utf-8", check_size=None, map_record=None):
    """(object, Rebuilder) from the bytes of ``data.pkl`` (the callbacks: StorageHandle.bind)."""
    rebuilder = Rebuilder(check_size, map_record)
    cls = WeightsOnlyUnpickler if weights_only else FullUnpickler
    obj = cls(io.BytesIO(data), rebuilder, encoding=encoding).load()
    return obj, rebuilder

