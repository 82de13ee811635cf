"""Globals a user allows under ``weights_only=True``, and finding the globals a checkpoint names.

PyTorch's spelling: ``torch.serialization.add_safe_globals([MyConfig])`` lets
a weights-only load rebuild ``MyConfig`` objects; ``safe_globals([...])`` does
it for one ``with`` block; ``get_unsafe_globals_in_checkpoint(f)`` lists what
a file would need, reading its pickle without running it.
"""
import contextlib
import io
import threading

_ALLOWED = {}           # "module.name" -> object, shared by all threads (as in PyTorch)
_LOCK = threading.Lock()


def _entry(obj):
    if isinstance(obj, tuple):
        if len(obj) != 2 or not isinstance(obj[1], str):
            raise TypeError(f"add_safe_globals: expected an object or (object, 'module.name'), "
                            f"got {obj!r}")
        return obj[1], obj[0]
    module, name = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if not (isinstance(module, str) and isinstance(name, str)):
        raise TypeError(f"add_safe_globals: {obj!r} has no __module__ / __qualname__; pass "
                        f"(obj, 'module.name')")
    return f"{module}.{name}", obj


def add_safe_globals(safe_globals):
    """Allow these classes or functions in ``weights_only=True`` loads (from now on).

    Args:
        safe_globals: a list of objects, or of ``(object, "module.name")`` pairs
            for an object pickled under another name.

    Example:
        >>> newch.serialization.add_safe_globals([MyConfig])   # doctest: +SKIP
        >>> newch.load("run.pt")     # may now rebuild MyConfig objects  # doctest: +SKIP
    """
    entries = [_entry(g) for g in safe_globals]
    with _LOCK:
        _ALLOWED.update(entries)


def get_safe_globals():
    """The objects ``add_safe_globals`` allowed, as a list."""
    with _LOCK:
        return list(_ALLOWED.values())


def clear_safe_globals():
    """Forget every global ``add_safe_globals`` allowed."""
    with _LOCK:
        _ALLOWED.clear()


@contextlib.contextmanager
def safe_globals(globals_list):
    """``with safe_globals([MyConfig]):`` allows them in weights-only loads inside the block.

    Example:
        >>> with newch.serialization.safe_globals([MyConfig]):   # doctest: +SKIP
        ...     ckpt = newch.load("run.pt")
    """
    entries = [_entry(g) for g in globals_list]
    with _LOCK:
        before = dict(_ALLOWED)
        _ALLOWED.update(entries)
    try:
        yield
    finally:
        with _LOCK:
            _ALLOWED.clear()
            _ALLOWED.update(before)


def allowed(module, name):
    """The object the user allowed as ``module.name``, or None."""
    shown = "builtins" if module == "__builtin__" else module
    with _LOCK:
        return _ALLOWED.get(f"{shown}.{name}")


def globals_in_pickle(data):
    """Every ``module.name`` the pickle bytes ``data`` refer to, in order, without unpickling."""
    import pickletools  # NOTE: imported on first use; keeps ``import newch`` fast
    found, strings, memo, count, top = [], [], {}, 0, None
    for op, arg, _ in pickletools.genops(io.BytesIO(data)):
        kind, pushed = op.name, None
        if kind == "GLOBAL":
            module, name = arg.split(" ", 1)
            found.append(f"{'builtins' if module == '__builtin__' else module}.{name}")
        elif kind == "STACK_GLOBAL" and len(strings) >= 2:
            found.append(f"{strings[-2]}.{strings[-1]}")
        elif "UNICODE" in kind and isinstance(arg, str):
            pushed = arg
        elif kind in ("BINPUT", "LONG_BINPUT", "PUT", "MEMOIZE"):
            index = count if kind == "MEMOIZE" else arg
            count += kind == "MEMOIZE"
            if top is not None:
                memo[index] = top
            continue                    # NOTE: memoizing leaves the stack (and ``top``) as it was
        elif kind in ("BINGET", "LONG_BINGET", "GET"):
            pushed = memo.get(arg)
        if pushed is not None:
            strings.append(pushed)
        top = pushed
    return list(dict.fromkeys(found))
