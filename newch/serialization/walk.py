"""Finding where each loaded tensor sits in the loaded object, and tidying loaded modules.

A checkpoint's errors and warnings should name keys (``fc.weight``,
``state.0.exp_avg``), but tensors are made deep inside the unpickler, which
knows no keys. After unpickling, ``key_paths`` walks the result (dicts,
lists, tuples, sets, modules and plain objects) and gives each object the
first dotted path that reaches it.
"""
from collections import OrderedDict

from ..net.module import Module
from .names import TORCH_MODULE_TABLES

_LEAVES = (str, bytes, int, float, complex, bool, type(None))


def _children(obj):
    if isinstance(obj, dict):
        return obj.items()
    if isinstance(obj, (list, tuple)):
        return enumerate(obj)
    if isinstance(obj, (set, frozenset)):
        return ((f"<set item {i}>", v) for i, v in enumerate(obj))
    if isinstance(obj, Module):
        d = obj.__dict__
        kids = [(k, v) for table in ("_parameters", "_buffers", "_modules")
                for k, v in (d.get(table) or {}).items()]
        kids += [(k, v) for k, v in d.items() if k not in ("_parameters", "_buffers", "_modules")]
        return kids
    d = getattr(obj, "__dict__", None)
    return d.items() if isinstance(d, dict) else ()


def key_paths(root):
    """{id(obj): dotted path} for every object reachable from ``root`` (the root is ``''``)."""
    paths = {id(root): ""}
    stack = [(root, "")]
    while stack:
        obj, path = stack.pop()
        if isinstance(obj, _LEAVES):
            continue
        for k, v in _children(obj):
            if id(v) in paths or isinstance(v, _LEAVES):
                continue
            paths[id(v)] = f"{path}.{k}" if path else str(k)
            stack.append((v, paths[id(v)]))
    return paths


def modules_in(root):
    """Every newch Module reachable from ``root``."""
    found, seen, stack = [], {id(root)}, [root]
    while stack:
        obj = stack.pop()
        if isinstance(obj, Module):
            found.append(obj)
        if isinstance(obj, _LEAVES):
            continue
        for _, v in _children(obj):
            if id(v) not in seen:
                seen.add(id(v))
                stack.append(v)
    return found


def settle_module(m):
    """Make a module unpickled from a torch file a well-formed newch module.

    torch's extra hook tables are dropped when empty; the tables newch's
    Module needs and a torch file may lack are added.
    """
    d = m.__dict__
    for name in TORCH_MODULE_TABLES:
        if name in d and not d[name]:
            del d[name]
    if d.get("_is_full_backward_hook", 0) is None:
        del d["_is_full_backward_hook"]
    d.setdefault("training", True)
    for name in ("_parameters", "_buffers", "_modules", "_forward_pre_hooks", "_forward_hooks"):
        if not isinstance(d.get(name), dict):
            d[name] = OrderedDict()
    if not isinstance(d.get("_non_persistent_buffers_set"), set):
        d["_non_persistent_buffers_set"] = set()
