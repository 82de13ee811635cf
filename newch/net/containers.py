"""Containers: Sequential (a chain), ModuleList (an indexable list), ModuleDict (a named dict)."""
import operator
from collections import OrderedDict
from collections.abc import Mapping

from .module import Module


def _index(op, idx, n):
    """``idx`` (an int, possibly negative) as a position 0..n-1, or IndexError."""
    i = operator.index(idx)
    if not -n <= i < n:
        raise IndexError(f"{op}: index {i} is out of range for {n} modules")
    return i % n


class _Indexed(Module):
    """What Sequential and ModuleList share: children named "0", "1", ... in order."""

    def _check(self, module):
        if not isinstance(module, Module):
            raise TypeError(f"{self._get_name()}: expected a Module, got {type(module).__name__}")
        return module

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def _renumber(self, modules):
        self._modules.clear()
        for i, m in enumerate(modules):
            self._modules[str(i)] = m

    def __setitem__(self, idx, module):
        key = list(self._modules)[_index(f"{self._get_name()}.__setitem__", idx, len(self))]
        self._modules[key] = self._check(module)

    def __delitem__(self, idx):
        mods = list(self._modules.values())
        if isinstance(idx, slice):
            del mods[idx]
        else:
            del mods[_index(f"{self._get_name()}.__delitem__", idx, len(mods))]
        self._renumber(mods)

    def append(self, module):
        """Add ``module`` at the end; returns self."""
        self._modules[str(len(self))] = self._check(module)
        return self

    def extend(self, modules):
        """Add every module of ``modules`` at the end; returns self."""
        for m in modules:
            self.append(m)
        return self

    def insert(self, index, module):
        """Put ``module`` before position ``index``."""
        mods = list(self._modules.values())
        mods.insert(index, self._check(module))
        self._renumber(mods)

    def pop(self, idx=-1):
        """Remove the module at ``idx`` and return it."""
        mod = self[idx]
        del self[idx]
        return mod

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]


class Sequential(_Indexed):
    """Modules applied one after another: ``Sequential(a, b)(x) == b(a(x))``.

    Also ``Sequential(OrderedDict(name=module, ...))`` to name the steps.

    Example:
        >>> net = Sequential(newch.nn.Linear(4, 2), newch.nn.ReLU())
        >>> net(newch.randn(3, 4)).shape
        newch.Size([3, 2])
    """

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, module in args[0].items():
                self.add_module(name, module)
        else:
            for i, module in enumerate(args):
                self.add_module(str(i), module)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        return list(self._modules.values())[_index("Sequential.__getitem__", idx, len(self))]

    def __add__(self, other):
        if not isinstance(other, Sequential):
            return NotImplemented
        return Sequential(*self, *other)

    def forward(self, input):
        for module in self:
            input = module(input)
        return input


class ModuleList(_Indexed):
    """A list of modules whose parameters the parent module sees (a plain list hides them).

    Example:
        >>> layers = ModuleList([newch.nn.Linear(2, 2) for _ in range(3)])
        >>> len(list(layers.parameters()))
        6
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return list(self._modules.values())[_index("ModuleList.__getitem__", idx, len(self))]

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        return ModuleList([*self, *other])

    def __repr__(self):
        # NOTE: runs of identical children print once as "(0-2): 3 x Linear(...)", as PyTorch does.
        reprs = [repr(m) for m in self]
        if not reprs:
            return "ModuleList()"
        lines, start = [], 0
        for i in range(1, len(reprs) + 1):
            if i < len(reprs) and reprs[i] == reprs[start]:
                continue
            text = reprs[start].replace("\n", "\n  ")
            head = f"({start})" if i - start == 1 else f"({start}-{i - 1}): {i - start} x"
            lines.append(f"{head}: {text}" if i - start == 1 else f"{head} {text}")
            start = i
        return "ModuleList(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """A dict of modules (insertion ordered) whose parameters the parent module sees.

    Example:
        >>> heads = ModuleDict({"a": newch.nn.Linear(2, 1), "b": newch.nn.Linear(2, 3)})
        >>> heads["b"].out_features
        3
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def clear(self):
        """Remove every module."""
        self._modules.clear()

    def pop(self, key):
        """Remove the module under ``key`` and return it."""
        mod = self[key]
        del self[key]
        return mod

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules):
        """Add (or replace) modules from a mapping or an iterable of (key, module) pairs."""
        pairs = modules.items() if isinstance(modules, Mapping) else modules
        for j, pair in enumerate(pairs):
            if len(pair) != 2:
                raise ValueError(f"ModuleDict.update: element #{j} should have 2 items "
                                 f"(key, module), got {len(pair)}")
            self[pair[0]] = pair[1]
