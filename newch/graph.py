"""Graph recording: grad mode and the Node an op attaches to its output.

This module sits low on purpose: every op records its backward right next to
its forward (ops/ imports this), while the engine that walks the graph lives
in ``autograd/engine.py`` above the ops.

A Node holds no reference to its output or input tensors, only to the nodes
(or leaf accumulators) of its inputs, so the graph keeps alive just what each
backward closure saved, and the engine drops those as soon as a node is done.
"""
import threading

from .errors import NcError

class _Mode(threading.local):
    # NOTE: a class default, so a thread that never set the mode reads it without the
    # AttributeError ``getattr(local, name, default)`` raises and swallows (7x slower)
    enabled = True


_mode = _Mode()


def is_grad_enabled():
    """True when operations record the graph (outside ``no_grad()``)."""
    return _mode.enabled


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


class SavedTensor:
    """A tensor a backward reads, kept so that reading it later is checked.

    ``unpack`` refuses a tensor whose memory was freed (``NcError``) or written in
    place since it was saved (``RuntimeError``), naming the node. An op's own output
    is held as a plain alias without the node (output -> node -> output would be a
    reference cycle keeping a dropped result's bytes until the cyclic GC runs); the
    node is attached again when it is unpacked under ``create_graph``.
    """
    __slots__ = ("tensor", "storage", "version", "is_output")

    def __init__(self, t, is_output):
        self.storage = t._s
        self.version = t._s.version
        self.is_output = is_output
        # NOTE: no numpy array kept here: release() swaps the arrays of a storage's tensors
        # (this alias included) so that its bytes really go back
        self.tensor = t._make(t._a, t._s) if is_output else t

    def check(self, node):
        """Raise unless the saved memory is alive and unmodified."""
        st = self.storage
        if not st.gen.alive:
            g = st.gen
            why = "release()" if g.how == "release()" else f"the step_end() of step {g.step}"
            raise NcError(
                f"backward: a tensor saved by {node.name()} (shape {tuple(self.tensor.shape)}) was "
                f"freed by {why} before backward ran; keep what backward needs alive (create it "
                f"inside `with newch.persistent():` or call backward before step_end())")
        if st.version != self.version:
            raise RuntimeError(
                f"backward: one of the tensors saved by {node.name()} for gradient computation "
                f"was modified by an inplace operation (an in-place write: version {st.version}, "
                f"expected {self.version}); use an out-of-place op or .clone() before modifying it")
        if self.tensor._s is not st:
            raise RuntimeError(
                f"backward: the data of a tensor saved by {node.name()} was replaced (`.data =`) "
                f"after it was saved; assign .data before the forward pass, or after backward")

    def unpack(self, node):
        """The saved tensor for ``node``'s backward, after ``check``."""
        self.check(node)
        t = self.tensor
        if self.is_output:
            # NOTE: a fresh alias each time: the node only lives in it while backward runs
            t = t._make(t._a, t._s)
            if is_grad_enabled():
                t._node, t._rg = node, True
        return t


class Node:
    """One recorded operation: ``backward(grad, *saved) -> tuple of input grads (or None)``.

    ``next`` has one entry per input: the input's Node, its leaf ``Accumulate``,
    or None when that input needs no gradient. ``saved`` holds a ``SavedTensor`` per
    tensor the backward reads; the engine unpacks them (checking each is alive and
    unmodified) and passes them after the gradient. ``dtypes`` are the inputs'
    numpy dtypes (None where no gradient flows): a gradient is cast to its input's
    dtype before it flows on.
    """
    __slots__ = ("_name", "backward", "next", "saved", "dtypes", "retain", "seq", "view_version",
                 "__weakref__")
    _counter = [0]

    def __init__(self, name, backward, nxt, saved, dtypes=None):
        self._name = name
        Node._counter[0] += 1
        self.seq = Node._counter[0]   # creation order: backward runs newest first
        self.backward = backward
        self.next = nxt
        self.saved = saved
        self.dtypes = dtypes
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
