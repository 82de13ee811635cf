"""The persistent pool: one allocation per tensor, counted in ``bytes``.

Parameters, buffers, optimizer state, gradients of persistent leaves and
anything made inside ``persistent()`` live here. A storage's bytes are freed
when its last tensor is gone, or at once by ``release()``.
"""
from .budget import Budget
from .arena import aligned_bytes
from .guard import Guard
from .storage import PERSISTENT, Storage


class PersistentPool:
    """Individually allocated storages; ``bytes`` is their total size."""

    def __init__(self, budget=None, guard=None):
        self.bytes = 0
        self.count = 0
        self.budget = budget if budget is not None else Budget()
        self.guard = guard if guard is not None else Guard()

    def alloc(self, nbytes):
        """Return a fresh persistent Storage of ``nbytes`` (64-byte aligned)."""
        size = max(nbytes, 1)
        with self.guard.lock:
            self.guard.flush()
            if not self.budget.fits(size) and self.budget.reclaim is not None:
                trim = self.budget.reclaim()      # a weak method: the arena's _trim
                if trim is not None:
                    trim()                        # idle arena blocks go back first
            if not self.budget.fits(size):
                self.budget.refuse("persistent", size)
            return self._track(Storage(aligned_bytes(size), size, PERSISTENT, self))

    def adopt(self, array):
        """Wrap an existing numpy array's memory (from_numpy) as a persistent storage."""
        with self.guard.lock:
            return self._track(Storage(None, array.nbytes, PERSISTENT, self))

    def _track(self, st):
        self.bytes += st.nbytes
        self.count += 1
        self.budget.persistent = self.bytes
        return st

    def give_back(self, st):
        """Take back a dead or released storage's bytes (queued if the lock is busy)."""
        self.guard.free(self, st.nbytes)

    def _give_back(self, nbytes):
        self.bytes -= nbytes
        self.count -= 1
        self.budget.persistent = self.bytes

