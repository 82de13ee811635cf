"""The Context owns everything a computation needs: arena, persistent pool, RNG, threads, kernels."""
import contextlib
import os
import threading

import numpy as np

from . import _cache  # noqa: F401  (kernel cache directory is chosen before numba loads)
from . import kernels
from .memory import Arena, PersistentPool
from .memory.budget import Budget
from .memory.arena import DEFAULT_BLOCK_BYTES

_applied = threading.local()


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
        memory_limit: bytes (arena reserved + persistent) newch may hold, or None.
        block_bytes: size of the arena's blocks.

    Example:
        >>> ctx = Context(seed=1, threads=2)
        >>> ctx.threads >= 1
        True
    """

    def __init__(self, seed=None, threads=0, backend=None, memory_limit=None,
                 block_bytes=DEFAULT_BLOCK_BYTES):
        if not isinstance(threads, int) or threads < 0:
            raise ValueError(f"Context: threads must be an int >= 0, got {threads!r}")
        if memory_limit is not None and memory_limit <= 0:
            raise ValueError(f"Context: memory_limit must be a positive number of bytes, got {memory_limit!r}")
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
        self.pool = PersistentPool(budget)
        self.arena = Arena(block_bytes, budget)
        self.seed = seed
        self.rng = np.random.Generator(np.random.PCG64(seed))
        self.persistent_depth = 0

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
        if persistent or self.persistent_depth:
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
        """Tensors created inside this block are persistent (survive step_end())."""
        self.persistent_depth += 1
        try:
            yield
        finally:
            self.persistent_depth -= 1

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


_default = [None]


def default_context():
    """The context newch uses when none is given (created on first use)."""
    if _default[0] is None:
        _default[0] = Context()
    return _default[0]


def set_default_context(ctx):
    """Make ``ctx`` the default context; returns the previous one."""
    if not isinstance(ctx, Context):
        raise TypeError(f"set_default_context: expected a Context, got {type(ctx).__name__}")
    prev, _default[0] = _default[0], ctx
    return prev


def manual_seed(seed):
    """Reseed the default context's random generator (torch.manual_seed)."""
    if not isinstance(seed, (int, np.integer)):
        raise TypeError(f"manual_seed: expected an int seed, got {type(seed).__name__}")
    default_context().manual_seed(int(seed))
