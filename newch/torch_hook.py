"""An import hook that makes ``import torch`` (and ``torchvision``) load newch, for ``newch.run``.

``install()`` puts a finder first on ``sys.meta_path``: ``torch`` and
``torch.X.Y`` resolve to ``newch`` and ``newch.X.Y`` (through newch's own
PyTorch spellings, so ``torch.nn`` is ``newch.nn``), ``torchvision[.X]`` to
``newch.vision[.X]``. Each torch module is a thin proxy over the newch module
(never a copy): attribute reads go to newch, are recorded for the
compatibility report, and a name newch lacks raises ``NotProvided`` (an
``AttributeError``, so ``hasattr`` still works) naming it and the supported list.
"""
import importlib
import importlib.abc
import importlib.util
import sys
import types

from .errors import CONFORMANCE_DOC, NotProvided

API_VERSION = "2.13.0"      # the PyTorch version whose API newch follows
ROOTS = {"torch": "newch", "torchvision": "newch.vision"}
TOUCHED = {}                # "torch.nn.Linear" -> True (newch has it) / False (it does not)


def newch_name(torch_name):
    """The newch module a torch module name maps to (``torch.nn`` -> ``newch.nn``)."""
    root, _, rest = torch_name.partition(".")
    return ROOTS[root] + ("." + rest if rest else "")


class MissingModule(ModuleNotFoundError):
    """``import torch.X`` where newch has no ``X``."""


class TorchModule(types.ModuleType):
    """A torch module as seen by a script: every attribute read goes to the newch module."""

    def __init__(self, name, target):
        super().__init__(name, getattr(target, "__doc__", None))
        object.__setattr__(self, "_newch_target", target)
        if name == "torch":
            from . import __version__
            self.__dict__["__version__"] = f"{API_VERSION}+newch{__version__}"

    def __getattr__(self, attr):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        full = f"{self.__name__}.{attr}"
        target = self.__dict__["_newch_target"]
        try:
            value = getattr(target, attr)
        except AttributeError:
            value = _submodule(full)
            if value is None:
                TOUCHED.setdefault(full, False)
                raise NotProvided(full) from None
        if isinstance(value, types.ModuleType) and value.__name__.startswith("newch"):
            value = proxy(full, value)
        TOUCHED[full] = True
        self.__dict__[attr] = value      # NOTE: later reads skip __getattr__ (no cost per use)
        return value

    def __dir__(self):
        return sorted(set(dir(self.__dict__["_newch_target"])) | set(self.__dict__))

    def __repr__(self):
        return f"<module {self.__name__!r} (newch: {self.__dict__['_newch_target'].__name__})>"


_PROXIES = {}


def proxy(torch_name, target):
    """The one proxy module for ``torch_name`` over newch module ``target``."""
    p = _PROXIES.get(torch_name)
    if p is None:
        p = _PROXIES[torch_name] = TorchModule(torch_name, target)
        p.__path__ = []
    return p


def _submodule(torch_name):
    try:
        return importlib.import_module(torch_name)
    except ImportError:
        return None


class TorchFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``torch``/``torchvision`` modules and loads them as proxies over newch modules."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname.partition(".")[0] not in ROOTS:
            return None
        return importlib.util.spec_from_loader(fullname, self, is_package=True)

    def create_module(self, spec):
        name = newch_name(spec.name)
        try:
            target = importlib.import_module(name)
        except ImportError:
            TOUCHED.setdefault(spec.name, False)
            raise MissingModule(f"{spec.name}: newch does not provide this module yet; the "
                                f"supported names are listed in {CONFORMANCE_DOC}",
                                name=spec.name) from None
        TOUCHED[spec.name] = True
        return proxy(spec.name, target)

    def exec_module(self, module):
        pass


_FINDER = TorchFinder()


_SAVED = {}     # a real torch imported before install(), put back by uninstall()


def install():
    """Make ``import torch`` / ``import torchvision`` load newch in this process."""
    for name in [m for m in sys.modules if m.partition(".")[0] in ROOTS]:
        _SAVED[name] = sys.modules.pop(name)   # NOTE: a real torch imported earlier must not be used
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)


def uninstall():
    """Undo ``install()`` (a real torch imported before it is restored)."""
    if _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
    for name in [m for m in sys.modules if m.partition(".")[0] in ROOTS]:
        del sys.modules[name]
    sys.modules.update(_SAVED)
    _SAVED.clear()
    _PROXIES.clear()


def report():
    """The compatibility report: every torch name the script touched, and whether newch has it."""
    have = sorted(n for n, ok in TOUCHED.items() if ok)
    missing = sorted(n for n, ok in TOUCHED.items() if not ok)
    lines = [f"newch compatibility report: {len(have)} torch names used and provided, "
             f"{len(missing)} missing"]
    lines += [f"  missing  {n}" for n in missing]
    lines += [f"  ok       {n}" for n in have]
    lines.append(f"(supported names: {CONFORMANCE_DOC})")
    return "\n".join(lines)
