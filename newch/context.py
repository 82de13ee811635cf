"""The Context owns everything a computation needs: arena, persistent pool, RNG, threads, kernels."""
import contextlib
import functools
import os
import threading
import types
import weakref

import numpy as np

from . import _cache  # noqa: F401  (kernel cache directory is chosen before numba loads)
from . import kernels
from .memory import Arena, PersistentPool
from .memory.budget import Budget, parse_bytes
from .memory.arena import DEFAULT_BLOCK_BYTES
from .memory.guard import Guard

_applied = threading.local()
class _Current(threading.local):
    stack = ()          # the contexts ``with ctx:`` made current on this thread (a list once used)


class _PerThread(threading.local):
    persistent = 0      # persistent() depth of this thread on one context


_current = _Current()


def _max_threads(backend):
    if backend != "ref":   # the JIT loaded numba already
        import numba
        return numba.config.NUMBA_NUM_THREADS
    try:   # the ref backend never imports numba (it may be missing or broken)
        return max(1, int(os.environ.get("NUMBA_NUM_THREADS", "")))
    except ValueError:
        return os.cpu_count() or 1


class Context:
    """Owns the step arena, the persistent pool, a random generator and the thread count.

    Args:
        seed: seed of the context's random generator (None: from the OS).
        threads: threads parallel kernels use; 0 means all cores. Clamped to
            what numba was started with (``NUMBA_NUM_THREADS``).
        backend: "ref" for the pure-numpy kernels; None picks the JIT unless
            ``NEWCH_BACKEND=ref`` is set or numba is missing.
        memory_limit: bytes (arena reserved + persistent) newch may hold: an int, a
            string with a unit ("512MiB", "1GiB", "500MB", "1GB"), or None for no limit.
        block_bytes: size of the arena's blocks.

    ``with ctx:`` makes ``ctx`` the current context of this thread (ops allocate
    from it, ``default_context()`` returns it); blocks nest. ``persistent()`` depth
    is per thread. One context may be shared by threads: its arena and pool are
    locked, and ``step_end()``, ``trim()`` and ``release()`` wait for the ops
    other threads have in flight on it.

    Example:
        >>> ctx = Context(seed=1, threads=2, memory_limit="256MiB")
        >>> with ctx:
        ...     default_context() is ctx
        True
    """

    def __init__(self, seed=None, threads=0, backend=None, memory_limit=None,
                 block_bytes=DEFAULT_BLOCK_BYTES):
        if not isinstance(threads, int) or threads < 0:
            raise ValueError(f"Context: threads must be an int >= 0, got {threads!r}")
        if memory_limit is not None:
            memory_limit = parse_bytes(memory_limit, "Context: memory_limit")
        backend = backend or os.environ.get("NEWCH_BACKEND") or "jit"
        if backend not in ("jit", "ref"):
            raise ValueError(f"Context: backend must be 'jit' or 'ref', got {backend!r}")
        if backend == "jit" and not kernels.numba_available():
            backend = "ref"
        self.kernels = kernels.load("ref" if backend == "ref" else "numba")
        self.backend = "ref" if backend == "ref" else kernels.simd_level()
        maxt = _max_threads(self.backend)
        self.threads = maxt if threads == 0 else min(threads, maxt)
        budget = Budget(memory_limit)
        self.guard = Guard()
        self.pool = PersistentPool(budget, self.guard)
        self.arena = Arena(block_bytes, budget, self.guard)
        # NOTE: a weak method (no arena <-> budget cycle); it runs with the guard's lock held
        budget.reclaim = weakref.WeakMethod(self.arena._trim)
        self.seed = seed
        self.rng = np.random.Generator(np.random.PCG64(seed))
        self._local = _PerThread()

    # -- current context of a thread -------------------------------------------
    def __enter__(self):
        if not _current.stack:
            _current.stack = []
        _current.stack.append(self)
        with _default_lock:
            _entered[0] += 1
        return self

    def __exit__(self, *exc):
        stack = _current.stack
        for i in range(len(stack) - 1, -1, -1):
            if stack[i] is self:
                del stack[i]
                with _default_lock:
                    _entered[0] -= 1
                break
        return False

    @property
    def persistent_depth(self):
        """How many ``persistent()`` blocks this thread is inside on this context."""
        return self._local.persistent

    # -- threads ------------------------------------------------------------
    def apply_threads(self):
        """Make numba's parallel kernels on this Python thread use ``self.threads``."""
        if getattr(_applied, "n", None) != self.threads and self.backend != "ref":
            import numba
            numba.set_num_threads(self.threads)
            _applied.n = self.threads

    # -- memory -------------------------------------------------------------
    def alloc(self, nbytes, persistent=False):
        """A Storage of ``nbytes``: persistent inside ``persistent()`` or when asked, else temporary."""
        if persistent or self._local.persistent:
            return self.pool.alloc(nbytes)
        return self.arena.alloc(nbytes)

    def step_end(self):
        """Free every temporary of the current step (O(1)); tensors of it become stale."""
        self.arena.step_end()

    @contextlib.contextmanager
    def step_scope(self):
        """A nested step scope: its step_end() frees only what was made inside it."""
        self.arena.push_scope()
        try:
            yield self
        finally:
            self.arena.pop_scope()

    @contextlib.contextmanager
    def persistent(self):
        """Tensors created inside this block on this thread are persistent (survive step_end())."""
        local = self._local
        local.persistent += 1
        try:
            yield
        finally:
            local.persistent -= 1

    def mem_stats(self):
        """Bytes in use, peak, reserved by the arena, and held by persistent tensors."""
        a = self.arena
        return {
            "arena_bytes_in_use": a.in_use,
            "arena_peak_bytes": a.peak,
            "arena_bytes_reserved": a.reserved,
            "persistent_bytes": self.pool.bytes,
            "persistent_tensors": self.pool.count,
            "arena_blocks": len(a.blocks),
            "step": a.step,
        }

    def reset_peak(self):
        """Start measuring ``arena_peak_bytes`` again from what is in use now."""
        self.arena.peak = self.arena.in_use

    def trim(self):
        """Give arena blocks that hold no live temporary back to the OS; return bytes freed."""
        return self.arena.trim()

    def manual_seed(self, seed):
        """Reseed this context's random generator."""
        self.seed = seed
        self.rng = np.random.Generator(np.random.PCG64(seed))

    def __repr__(self):
        return (f"Context(threads={self.threads}, backend={self.backend!r}, "
                f"arena_bytes_reserved={self.arena.reserved})")


_get_ident = threading.get_ident
_default = [None]
_default_lock = threading.Lock()
_entered = [0]          # `with ctx:` blocks open on all threads together


def _process_default():
    with _default_lock:
        if _default[0] is None:
            limit = os.environ.get("NEWCH_MEMORY_LIMIT") or None
            if limit is not None:
                limit = parse_bytes(limit, "NEWCH_MEMORY_LIMIT")
            _default[0] = Context(memory_limit=limit)
        return _default[0]


def default_context():
    """The context ops use: this thread's innermost ``with ctx:``, else the process default.

    The process default is created on first use; ``NEWCH_MEMORY_LIMIT`` (for example
    ``512MiB``) sets its memory limit.
    """
    if _entered[0]:                 # NOTE: skips the thread-local lookup while no thread uses `with`
        stack = _current.stack
        if stack:
            return stack[-1]
    return _default[0] or _process_default()


def set_default_context(ctx):
    """Make ``ctx`` the process default context; returns the previous one."""
    if not isinstance(ctx, Context):
        raise TypeError(f"set_default_context: expected a Context, got {type(ctx).__name__}")
    with _default_lock:
        prev, _default[0] = _default[0], ctx
    return prev


def track(fn, binary=False):
    """Run ``fn`` as an op in flight on the current context (see ``memory/guard.py``).

    ``step_end()``, ``trim()`` and ``release()`` on another thread wait until it
    returns; nested calls cost one dict lookup. ``binary=True`` for an operator
    method called with exactly two operands (``x + y``): a wrapper without
    ``*args, **kwargs`` packing.
    """
    if binary:
        @functools.wraps(fn)
        def op(a, b):
            guard, tid = _guard(), _get_ident()
            busy = guard.busy
            if tid in busy:
                return fn(a, b)
            busy[tid] = True
            if guard.draining:
                del busy[tid]
                guard.enter(tid)
            try:
                return fn(a, b)
            finally:
                del busy[tid]
                if guard.draining:
                    guard.wake()
    else:
        @functools.wraps(fn)
        def op(*args, **kwargs):
            guard, tid = _guard(), _get_ident()
            busy = guard.busy
            if tid in busy:                     # nested: the outer call is registered
                return fn(*args, **kwargs)
            busy[tid] = True                    # NOTE: Guard.enter's common case, inlined
            if guard.draining:
                del busy[tid]
                guard.enter(tid)
            try:
                return fn(*args, **kwargs)
            finally:
                del busy[tid]
                if guard.draining:
                    guard.wake()
    op.newch_tracked = True
    return op


def _guard():
    """The current context's guard; default_context() inlined for its common case (no
    ``with ctx:`` open on any thread)."""
    ctx = _default[0]
    return (default_context() if _entered[0] or ctx is None else ctx).guard


def manual_seed(seed):
    """Reseed the default context's random generator (torch.manual_seed)."""
    if not isinstance(seed, (int, np.integer)):
        raise TypeError(f"manual_seed: expected an int seed, got {type(seed).__name__}")
    default_context().manual_seed(int(seed))


# operator methods Python calls with exactly two operands (``x + y``, ``x < y``)
_BINARY_OPERATORS = {
    "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
    "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__matmul__",
    "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__iadd__", "__isub__",
    "__imul__", "__itruediv__"}

# Tensor methods (defined in tensor.py) that read a tensor's bytes outside any op
_TENSOR_READS = ("item", "tolist", "numpy", "__array__", "__repr__", "__bool__", "__float__",
                 "__int__", "__index__", "backward", "__reduce__", "__reduce_ex__",
                 "__deepcopy__", "__copy__")


def track_entry_points(namespace, tensor_cls, modules, optimizer_cls):
    """Make the public entry points ops in flight (``track``): newch's functions from ops/,
    the Tensor methods bound from ops/ and its reading methods, the functions in ``__all__``
    of ``modules`` (``nn.functional``, ``autograd``) and ``Optimizer.step``.
    """
    def wants(fn, name=""):
        return (isinstance(fn, types.FunctionType) and not getattr(fn, "newch_tracked", False)
                and (fn.__module__.startswith("newch.ops") or name in _TENSOR_READS))

    for name, fn in list(namespace.items()):
        if wants(fn) and not name.startswith("_"):
            namespace[name] = track(fn)
    for name, fn in list(vars(tensor_cls).items()):
        if wants(fn, name):
            setattr(tensor_cls, name, track(fn, binary=name in _BINARY_OPERATORS))
    for mod in modules:
        for name in mod.__all__:
            fn = getattr(mod, name)
            if isinstance(fn, types.FunctionType) and not getattr(fn, "newch_tracked", False):
                setattr(mod, name, track(fn))
    optimizer_cls.step = track(optimizer_cls.step)
