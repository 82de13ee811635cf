"""griffe extensions for newch's API reference (mkdocs.yml, mkdocstrings ``extensions``).

The reference is built by importing newch (``force_inspection``: ``newch.__all__``
is computed at import time). Two things inspection gets wrong for newch:

- ``HideDunderAttributes``: every class carries ``__doc__``, ``__module__``,
  ``__dict__``...; dunder *attributes* are marked not public so the ``public``
  filter hides them. Dunder *methods* (``Tensor.__add__``) stay: they are API.
- ``FactoryFunctions``: many ops are made by small factories
  (``exp = _op("exp", ...)``), so their ``__qualname__`` is ``_op.<locals>.f``;
  griffe turns them into aliases of a path that does not exist and drops them.
  This extension puts a function with the public name, the runtime signature
  and the docstring in their place (in the public modules and on ``Tensor``).

Example (what ``HideDunderAttributes`` decides):
    >>> hidden("__module__", is_attribute=True), hidden("__add__", is_attribute=False)
    (True, False)
"""
import importlib
import inspect

from griffe import Docstring, Extension, Function, Parameter, ParameterKind, Parameters

# Modules (by runtime name) whose public names are documented, as griffe paths.
PUBLIC_MODULES = ("newch", "newch.net", "newch.net.functional", "newch.net.init", "newch.optim",
                  "newch.optim.lr_scheduler", "newch.data", "newch.train", "newch.serialization")


def hidden(name, is_attribute):
    """True for a dunder attribute (``__doc__``), False for anything else."""
    return is_attribute and name.startswith("__") and name.endswith("__")


class HideDunderAttributes(Extension):
    """Set ``public = False`` on dunder attributes as griffe creates them."""

    def on_attribute_instance(self, *, attr, **kwargs):
        if hidden(attr.name, is_attribute=True):
            attr.public = False


def _made_by_factory(obj):
    return inspect.isfunction(obj) and "<locals>" in obj.__qualname__


def _function(name, obj, docstring_parser=None):
    """A griffe Function named ``name`` with ``obj``'s runtime signature and docstring."""
    try:
        sig = inspect.signature(obj)
        params = [Parameter(p.name, kind=ParameterKind(p.kind.description),
                            default=None if p.default is p.empty else repr(p.default))
                  for p in sig.parameters.values()]
    except (TypeError, ValueError):
        params = []
    func = Function(name, parameters=Parameters(*params))
    if obj.__doc__:
        func.docstring = Docstring(inspect.cleandoc(obj.__doc__), parent=func,
                                   parser=docstring_parser)
    return func


class FactoryFunctions(Extension):
    """Replace the dropped aliases of factory-made functions with real entries."""

    def on_package(self, *, pkg, loader, **kwargs):
        if pkg.path != "newch":
            return
        parser = getattr(loader, "docstring_parser", None)
        for modname in PUBLIC_MODULES:
            try:
                runtime = importlib.import_module(modname)
                target = pkg if modname == "newch" else pkg.get_member(modname[len("newch."):])
            except (ImportError, KeyError):
                continue
            names = getattr(runtime, "__all__", [])
            self._fill(target, runtime, names, parser)
        tensor_cls = pkg.get_member("Tensor")
        if tensor_cls.is_alias:
            tensor_cls = tensor_cls.final_target
        import newch
        names = [n for n in vars(newch.Tensor) if not n.startswith("_") or n.endswith("__")]
        self._fill(tensor_cls, newch.Tensor, names, parser)

    @staticmethod
    def _fill(target, runtime, names, parser):
        for name in names:
            obj = getattr(runtime, name, None)
            if not _made_by_factory(obj):
                continue
            member = target.members.get(name)
            if member is not None and not member.is_alias:
                continue
            if member is not None:
                try:
                    member.final_target
                    continue                      # an alias that resolves: keep it
                except Exception:
                    pass
            target.set_member(name, _function(name, obj, parser))
