"""The persistent pool: one allocation per tensor, counted in ``bytes``.

Parameters, buffers, optimizer state, gradients of persistent leaves and
anything made inside ``persistent()`` live here. A storage's bytes are freed
when its last tensor is gone, or at once by ``release()``.
"""
from .budget import Budget
from .arena import aligned_bytes
from .storage import PERSISTENT, Storage


class PersistentPool:
    """Individually allocated storages; ``bytes`` is their total size."""

    def __init__(self, budget=None):
        self.bytes = 0
        self.count = 0
        self.budget = budget if budget is not None else Budget()

    def alloc(self, nbytes):
        """Return a fresh persistent Storage of ``nbytes`` (64-byte aligned)."""
        size = max(nbytes, 1)
        if not self.budget.fits(size):
            self.budget.refuse("persistent", size)
        return self._track(Storage(aligned_bytes(size), size, PERSISTENT, self))

    def adopt(self, array):
        """Wrap an existing numpy array's memory (from_numpy) as a persistent storage."""
        return self._track(Storage(None, array.nbytes, PERSISTENT, self))

    def _track(self, st):
        self.bytes += st.nbytes
        self.count += 1
        self.budget.persistent = self.bytes
        return st

    def give_back(self, st):
        self.bytes -= st.nbytes
        self.count -= 1
        self.budget.persistent = self.bytes

