"""Module: the base class of layers and models (``torch.nn.Module``).

A Module owns parameters (``Parameter``), buffers (tensors saved with the
model but not trained) and child modules, registered by plain attribute
assignment as in PyTorch. Parameters and buffers always live in persistent
memory: they survive ``step_end()``.
"""
from collections import OrderedDict

from .. import dtypes as D
from ..tensor import Tensor
from .parameter import Parameter, persistent_copy
from . import state as _state


class Module:
    """Base class of every layer and model: subclass it and define ``forward``.

    Example:
        >>> class Net(Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.fc = newch.nn.Linear(4, 2)
        ...     def forward(self, x):
        ...         return self.fc(x).relu()
        >>> [name for name, _ in Net().named_parameters()]
        ['fc.weight', 'fc.bias']
    """

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got unexpected arguments "
                            f"{args or ''}{kwargs or ''}")
        setattr_ = object.__setattr__
        setattr_(self, "training", True)
        setattr_(self, "_parameters", OrderedDict())
        setattr_(self, "_buffers", OrderedDict())
        setattr_(self, "_non_persistent_buffers_set", set())
        setattr_(self, "_modules", OrderedDict())
        setattr_(self, "_forward_pre_hooks", OrderedDict())
        setattr_(self, "_forward_hooks", OrderedDict())

    def forward(self, *args, **kwargs):
        """The computation of this module; every subclass defines it."""
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                                  f'"forward" function')

    def __call__(self, *args, **kwargs):
        if not (self._forward_pre_hooks or self._forward_hooks):
            return self.forward(*args, **kwargs)      # NOTE: no hooks, the common case
        for hook in tuple(self._forward_pre_hooks.values()):
            res = hook(self, args)
            if res is not None:
                args = res if isinstance(res, tuple) else (res,)
        out = self.forward(*args, **kwargs)
        for hook in tuple(self._forward_hooks.values()):
            res = hook(self, args, out)
            if res is not None:
                out = res
        return out

    # -- registration ---------------------------------------------------------
    def _check_name(self, kind, name):
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"cannot assign {kind} before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string, got {type(name).__name__}")
        if name == "" or "." in name:
            raise KeyError(f'{kind} name can\'t be empty or contain ".", got {name!r}')

    def register_parameter(self, name, param):
        """Add ``param`` (a Parameter, or None for an absent one) as parameter ``name``.

        Example:
            >>> m = Module(); m.register_parameter("scale", Parameter(newch.ones(1)))
        """
        self._check_name("parameter", name)
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                            f"(newch.nn.Parameter or None required)")
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        """Add ``tensor`` as buffer ``name``: saved in ``state_dict`` unless ``persistent=False``.

        The buffer's memory is newch-persistent either way (it survives
        ``step_end()``); a temporary is copied. ``persistent`` here is PyTorch's
        "part of the state_dict", not the memory kind.

        Example:
            >>> m = Module(); m.register_buffer("count", newch.zeros(1))
            >>> m.count.is_persistent
            True
        """
        self._check_name("buffer", name)
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                            f"(newch Tensor or None required)")
        self._buffers[name] = _as_buffer(tensor)
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name, module):
        """Add child ``module`` (or None) under ``name``.

        Example:
            >>> m = Module(); m.add_module("act", newch.nn.ReLU())
        """
        self._check_name("module", name)
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._modules[name] = module

    register_module = add_module

    def __setattr__(self, name, value):
        d = self.__dict__
        params, bufs, mods = d.get("_parameters"), d.get("_buffers"), d.get("_modules")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            _forget(name, d, bufs, mods, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                                f"(newch.nn.Parameter or None expected)")
            params[name] = None
        elif isinstance(value, Module):
            if mods is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            _forget(name, d, params, bufs, self._non_persistent_buffers_set)
            mods[name] = value
        elif mods is not None and name in mods:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module '{name}' "
                                f"(newch.nn.Module or None expected)")
            mods[name] = None
        elif bufs is not None and name in bufs:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                f"(newch Tensor or None expected)")
            bufs[name] = _as_buffer(value)
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        d = self.__dict__
        for kind in ("_parameters", "_buffers", "_modules"):
            table = d.get(kind)
            if table is not None and name in table:
                return table[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for kind in ("_parameters", "_buffers", "_modules"):
            table = self.__dict__.get(kind)
            if table is not None and name in table:
                del table[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        keys = set(dir(type(self))) | set(self.__dict__)
        keys |= set(self._parameters) | set(self._buffers) | set(self._modules)
        return sorted(k for k in keys if not k[:1].isdigit())

    # -- walking the tree -------------------------------------------------------
    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """Yield (dotted name, module) for this module and every descendant, depth first.

        Example:
            >>> [n for n, _ in newch.nn.Sequential(newch.nn.ReLU()).named_modules()]
            ['', '0']
        """
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, child in self._modules.items():
            if child is None:
                continue
            yield from child.named_modules(memo, f"{prefix}.{name}" if prefix else name,
                                           remove_duplicate)

    def modules(self):
        """Every module of the tree (this one first), each once."""
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        """Yield (name, module) for the direct children, each once."""
        seen = set()
        for name, child in self._modules.items():
            if child is not None and id(child) not in seen:
                seen.add(id(child))
                yield name, child

    def children(self):
        """The direct child modules, each once."""
        for _, child in self.named_children():
            yield child

    def _named_members(self, table, prefix, recurse, remove_duplicate):
        seen = set()
        tree = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse \
            else [(prefix, self)]
        for mod_prefix, mod in tree:
            for name, value in getattr(mod, table).items():
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                seen.add(id(value))
                yield (f"{mod_prefix}.{name}" if mod_prefix else name), value

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """Yield (dotted name, parameter); a parameter shared by two modules comes once.

        Example:
            >>> [n for n, _ in newch.nn.Linear(2, 1).named_parameters()]
            ['weight', 'bias']
        """
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        """Every parameter of this module (and of its descendants when ``recurse``)."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        """Yield (dotted name, buffer) for this module's buffers and its descendants'."""
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        """Every buffer of this module (and of its descendants when ``recurse``)."""
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def get_submodule(self, target):
        """The descendant named by dotted path ``target`` ("" is this module)."""
        mod = self
        for part in target.split(".") if target else ():
            child = mod._modules.get(part)
            if child is None:
                raise AttributeError(f"{mod._get_name()} has no submodule `{part}` "
                                     f"(looking up {target!r})")
            mod = child
        return mod

    def get_parameter(self, target):
        """The parameter named by dotted path ``target``."""
        mod_path, _, name = target.rpartition(".")
        mod = self.get_submodule(mod_path)
        if name not in mod._parameters:
            raise AttributeError(f"{mod._get_name()} has no parameter `{name}`")
        return mod._parameters[name]

    def get_buffer(self, target):
        """The buffer named by dotted path ``target``."""
        mod_path, _, name = target.rpartition(".")
        mod = self.get_submodule(mod_path)
        if name not in mod._buffers:
            raise AttributeError(f"{mod._get_name()} has no buffer `{name}`")
        return mod._buffers[name]

    # -- modes and bulk changes -----------------------------------------------
    def train(self, mode=True):
        """Set training mode (``mode=True``) or evaluation mode on the whole tree; returns self."""
        if not isinstance(mode, bool):
            raise ValueError(f"train: mode is expected to be a bool, got {type(mode).__name__}")
        self.training = mode
        for child in self.children():
            child.train(mode)
        return self

    def eval(self):
        """Evaluation mode (``train(False)``): dropout off, batch norm uses running stats."""
        return self.train(False)

    # -- Keras-style training (newch.train) ------------------------------------
    # NOTE: these three are the one sanctioned upward import of net/: train/ sits above net/
    # (it drives modules), so the methods import it when called, never at module load.
    def fit(self, x, y=None, *, loss, optimizer, epochs=1, batch_size=32, shuffle=True,
            validation_data=None, validation_split=0.0, metrics=(), callbacks=(), verbose=1,
            initial_epoch=0, steps_per_epoch=None, validation_batch_size=None, generator=None):
        """Train this module on ``x`` (and targets ``y``) for ``epochs``; returns a ``History``.

        Each batch runs ``optimizer.zero_grad()``, forward, ``loss(output, target)``,
        ``backward()``, ``optimizer.step()``, then ``step_end()`` (temporaries the caller
        made before calling survive). Ctrl-C stops after the current batch.

        Args:
            x: inputs: a Tensor or numpy array (with ``y``), a Dataset or a DataLoader
                yielding (input, target) pairs.
            y: targets when ``x`` is a tensor or array.
            loss: ``loss(output, target)``: a function, an ``nn`` loss module, or a name
                (``"cross_entropy"``, ``"nll"``, ``"mse"``, ``"l1"``, ``"bce"``...).
            optimizer: a ``newch.optim`` optimizer over this module's parameters.
            epochs, batch_size, shuffle: the loop (batch_size/shuffle unused for a DataLoader).
            validation_data: (x, y), a Dataset or a DataLoader evaluated after each epoch.
            validation_split: fraction of ``x``/``y`` (the last rows) held out for validation.
            metrics: names (``"accuracy"``) or callables ``metric(output, target)``.
            callbacks: ``newch.train.Callback`` objects (EarlyStopping, ModelCheckpoint...).
            verbose: 0 silent, 1 a progress bar, 2 one line per epoch.
            initial_epoch, steps_per_epoch, validation_batch_size: as in Keras.
            generator: a ``newch.Generator`` for the shuffling.

        Example:
            >>> model = newch.nn.Linear(3, 1)
            >>> x, y = newch.randn(64, 3), newch.randn(64, 1)
            >>> h = model.fit(x, y, loss="mse", optimizer=newch.optim.SGD(model.parameters(), lr=0.1),
            ...               epochs=2, verbose=0)
            >>> len(h.history["loss"])
            2
        """
        from ..train import loop   # NOTE: train/ drives modules, so it sits above net/
        return loop.fit(self, x, y, loss=loss, optimizer=optimizer, epochs=epochs,
                        batch_size=batch_size, shuffle=shuffle, validation_data=validation_data,
                        validation_split=validation_split, metrics=metrics, callbacks=callbacks,
                        verbose=verbose, initial_epoch=initial_epoch,
                        steps_per_epoch=steps_per_epoch,
                        validation_batch_size=validation_batch_size, generator=generator)

    def evaluate(self, x, y=None, *, loss=None, metrics=None, batch_size=32, verbose=0,
                 callbacks=()):
        """Loss and metrics on data, as a dict (``{"loss": ..., "accuracy": ...}``).

        Runs in ``no_grad`` and eval mode (the previous mode is restored). ``loss`` and
        ``metrics`` default to the last ``fit``'s.

        Example:
            >>> model = newch.nn.Linear(3, 1)
            >>> sorted(model.evaluate(newch.randn(8, 3), newch.randn(8, 1), loss="mse"))
            ['loss']
        """
        from ..train import loop   # NOTE: train/ drives modules, so it sits above net/
        return loop.evaluate(self, x, y, loss=loss, metrics=metrics, batch_size=batch_size,
                             verbose=verbose, callbacks=callbacks)

    def predict(self, x, *, batch_size=32, numpy=False, verbose=0, callbacks=()):
        """The outputs for all of ``x`` as one persistent tensor (numpy array if ``numpy=True``).

        Runs batch by batch in ``no_grad`` and eval mode, restoring the previous mode.

        Example:
            >>> model = newch.nn.Linear(3, 2)
            >>> tuple(model.predict(newch.randn(10, 3), batch_size=4).shape)
            (10, 2)
        """
        from ..train import loop   # NOTE: train/ drives modules, so it sits above net/
        return loop.predict(self, x, batch_size=batch_size, numpy=numpy, verbose=verbose,
                            callbacks=callbacks)

    def apply(self, fn):
        """Call ``fn(module)`` on every descendant, then on this module; returns self.

        Example:
            >>> net = newch.nn.Sequential(newch.nn.Linear(2, 2))
            >>> _ = net.apply(lambda m: print(type(m).__name__))
            Linear
            Sequential
        """
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    def requires_grad_(self, requires_grad=True):
        """Set ``requires_grad`` of every parameter; returns self."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Reset the gradients of every parameter: to None (default) or to zeros."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                p.grad.detach_()
                p.grad.zero_()

    def to(self, *args, **kwargs):
        """Convert floating point parameters and buffers to a dtype; devices other than CPU fail.

        Parameters keep their identity (an optimizer holding them still works).

        Example:
            >>> lin = newch.nn.Linear(2, 2).to(newch.float64)
            >>> lin.weight.dtype
            newch.float64
        """
        return _state.convert(self, _state.target_dtype(args, kwargs))

    def float(self):
        """Floating point parameters and buffers to float32; returns self."""
        return self.to(D.float32)

    def double(self):
        """Floating point parameters and buffers to float64; returns self."""
        return self.to(D.float64)

    def cpu(self):
        """Returns self: newch runs on the CPU."""
        return self

    def share_memory(self):
        return self

    # -- saving and loading -----------------------------------------------------
    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """An OrderedDict name -> tensor of every parameter and (state_dict-)persistent buffer.

        Values share the module's memory (they are detached views, not copies).

        Example:
            >>> list(newch.nn.Linear(2, 1).state_dict())
            ['weight', 'bias']
        """
        if args:    # NOTE: the old positional form state_dict(destination, prefix, keep_vars)
            destination, prefix, keep_vars = (args + (None, prefix, keep_vars)[len(args):])[:3]
        if destination is None:
            destination = OrderedDict()
        for name, mod in self.named_modules(remove_duplicate=False):
            mod._save_to_state_dict(destination, prefix + (f"{name}." if name else ""), keep_vars)
        return destination

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy values from ``state_dict`` into this module's parameters and buffers.

        Args:
            state_dict: a mapping name -> Tensor, as made by ``state_dict()``.
            strict: raise RuntimeError when keys are missing or unexpected.
            assign: replace the tensors instead of copying into them.

        Returns:
            a named tuple ``(missing_keys, unexpected_keys)``.

        Example:
            >>> a, b = newch.nn.Linear(2, 1), newch.nn.Linear(2, 1)
            >>> b.load_state_dict(a.state_dict())
            <All keys matched successfully>
        """
        return _state.load(self, state_dict, strict, assign)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        _state.load_own(self, state_dict, prefix, missing_keys, error_msgs,
                        local_metadata.get("assign", False))

    # -- hooks ----------------------------------------------------------------
    def register_forward_pre_hook(self, hook):
        """Call ``hook(module, args)`` before ``forward``; a non-None result replaces the args."""
        return _Handle(self._forward_pre_hooks, hook)

    def register_forward_hook(self, hook):
        """Call ``hook(module, args, output)`` after ``forward``; a non-None result replaces it."""
        return _Handle(self._forward_hooks, hook)

    # -- printing ---------------------------------------------------------------
    def extra_repr(self):
        """The text between the parentheses of this module's repr (subclasses override it)."""
        return ""

    def _get_name(self):
        return type(self).__name__

    def __repr__(self):
        extra = self.extra_repr()
        lines = extra.split("\n") if extra else []
        children = [f"({name}): {_indent(repr(mod))}" for name, mod in self._modules.items()]
        if not children and len(lines) == 1:
            return f"{self._get_name()}({lines[0]})"
        body = lines + children
        if not body:
            return f"{self._get_name()}()"
        return self._get_name() + "(\n  " + "\n  ".join(body) + "\n)"


def _indent(text):
    """Indent every line after the first by two spaces (a child's repr inside its parent's)."""
    return text.replace("\n", "\n  ")


def _as_buffer(tensor):
    """Buffers live in persistent memory: share a persistent tensor, copy a temporary."""
    if tensor is None or tensor.is_persistent:
        return tensor
    out = persistent_copy(tensor, "register_buffer")
    if tensor.requires_grad and tensor.is_leaf:
        out.requires_grad_(True)
    return out


def _forget(name, d, *tables):
    """Remove ``name`` from the instance dict and from the other registration tables."""
    d.pop(name, None)
    for table in tables:
        if table is not None and name in table:
            if isinstance(table, set):
                table.discard(name)
            else:
                del table[name]


class _Handle:
    """What ``register_forward_hook`` returns: ``remove()`` unregisters the hook."""
    _next = [0]

    def __init__(self, table, hook):
        _Handle._next[0] += 1
        self.id = _Handle._next[0]
        self.table = table
        table[self.id] = hook

    def remove(self):
        self.table.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
