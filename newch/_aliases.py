"""PyTorch's module spellings for newch's packages (``newch.nn`` is ``newch.net``, ...).

One mechanism for every alias: ``register("nn.functional", net.functional)``
puts the module in ``sys.modules`` under ``newch.nn.functional`` (making the
parents ``newch.nn`` as needed), so both ``import newch.nn.functional as F``
and attribute access ``newch.nn.functional`` reach the same module object.
"""
import sys
import types

ALIASES = {}   # "nn.functional" -> module


def register(package, spelling, module):
    """Make ``package.spelling`` (dotted) import as ``module``."""
    parts = spelling.split(".")
    parent = sys.modules[package]
    for i, name in enumerate(parts):
        full = package + "." + ".".join(parts[:i + 1])
        if i == len(parts) - 1:
            sys.modules[full] = module
            setattr(parent, name, module)
        else:
            mod = sys.modules.get(full)
            if mod is None:
                mod = getattr(parent, name, None) or types.ModuleType(full)
                sys.modules[full] = mod
                setattr(parent, name, mod)
            parent = mod
    ALIASES[spelling] = module
