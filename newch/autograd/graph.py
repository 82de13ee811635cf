"""Graph recording: grad mode and the Node an op attaches to its output.

This module sits low on purpose: every op records its backward right next to
its forward (ops/ imports this), while the engine that walks the graph lives
in ``autograd/engine.py`` above the ops.

A Node holds no reference to its output or input tensors, only to the nodes
(or leaf accumulators) of its inputs, so the graph keeps alive just what each
backward closure saved, and the engine drops those as soon as a node is done.
"""
import threading

_mode = threading.local()


def is_grad_enabled():
    """True when operations record the graph (outside ``no_grad()``)."""
    return getattr(_mode, "enabled", True)


def set_grad_enabled_flag(flag):
    _mode.enabled = bool(flag)


class no_grad:
    """Context manager (and decorator) in which operations record no graph."""

    _flag = False

    def __new__(cls, *args, **kwargs):
        # NOTE: ``@no_grad`` without parentheses (as torch allows) hands the function here.
        if len(args) == 1 and not kwargs and callable(args[0]) and cls is not set_grad_enabled:
            return cls()(args[0])
        return super().__new__(cls)

    def __enter__(self):
        self._prev = is_grad_enabled()
        set_grad_enabled_flag(self._flag)
        return self

    def __exit__(self, *exc):
        set_grad_enabled_flag(self._prev)
        return False

    def __call__(self, fn):
        import functools
        flag = self._flag

        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            prev = is_grad_enabled()
            set_grad_enabled_flag(flag)
            try:
                return fn(*args, **kwargs)
            finally:
                set_grad_enabled_flag(prev)
        return wrapped


class enable_grad(no_grad):
    """Context manager (and decorator) that turns graph recording back on."""

    _flag = True


class set_grad_enabled(no_grad):
    """Turn graph recording on or off: as a call, a context manager or a decorator."""

    def __init__(self, mode):
        self._prev = is_grad_enabled()
        self._flag = bool(mode)
        set_grad_enabled_flag(self._flag)

    def __enter__(self):
        return self

    def __call__(self, fn):
        set_grad_enabled_flag(self._prev)     # as a decorator it changes nothing until called
        return super().__call__(fn)


class inference_mode(no_grad):
    """Like ``no_grad`` (newch has no separate inference tensors); ``mode=False`` records."""

    def __init__(self, mode=True):
        self._flag = not mode


class Node:
    """One recorded operation: ``backward(grad) -> tuple of input grads (or None)``.

    ``next`` has one entry per input: the input's Node, its leaf ``Accumulate``,
    or None when that input needs no gradient. ``saved`` lists (storage, version)
    of tensors the closure captured, checked for in-place changes at backward.
    """
    __slots__ = ("_name", "backward", "next", "saved", "retain", "seq", "view_version", "__weakref__")
    _counter = [0]

    def __init__(self, name, backward, nxt, saved):
        self._name = name
        Node._counter[0] += 1
        self.seq = Node._counter[0]   # creation order: backward runs newest first
        self.backward = backward
        self.next = nxt
        self.saved = saved
        self.retain = None     # weakref to the output tensor when retain_grad() was called
        # when the output is a view of an input: the memory's version when the view was made
        # (None otherwise); in-place on the view, or using it after its base changed, is refused
        self.view_version = None

    def name(self):
        """The operation's name, e.g. ``MulBackward0``."""
        return self._name

    def __repr__(self):
        return f"<{self._name} object>"


class Accumulate:
    """The end of the graph at a leaf tensor: adds incoming gradients into ``leaf.grad``."""
    __slots__ = ("leaf", "__weakref__")

    def __init__(self, leaf):
        self.leaf = leaf

    def name(self):
        return "AccumulateGrad"

    def __repr__(self):
        return "<AccumulateGrad object>"
