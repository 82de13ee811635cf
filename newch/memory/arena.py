"""The step arena: temporaries are carved out of large preallocated blocks.

Sizes are bytes. Every allocation is rounded up to ``ALIGN`` (64) bytes and
starts 64-byte aligned. Within a step, allocation first reuses a free region
(regions freed when their last tensor died, coalesced with their neighbours),
then bumps a pointer through the blocks; a block is added when none fits, so
live tensors never move. ``step_end()`` kills the step's generation and
rewinds the bump pointer: O(1) whatever the number of live tensors.

Scopes nest: ``push_scope()`` marks the current position; the scope's
``step_end()`` frees only what was allocated since the mark, so a caller's
temporaries survive a training loop that ends steps on its own.
"""
import bisect
import ctypes

import numpy as np

from ..errors import NcError
from .budget import Budget
from .guard import Guard
from .storage import Generation, Storage

ALIGN = 64
DEFAULT_BLOCK_BYTES = 4 << 20


def aligned_bytes(nbytes):
    """A fresh uint8 array of ``nbytes`` whose first byte is 64-byte aligned."""
    raw = np.empty(nbytes + ALIGN, np.uint8)
    # NOTE: the address through a ctypes view of the buffer: 4x cheaper than ``raw.ctypes.data``
    # (every persistent tensor, each step's fresh gradients among them, comes here)
    skip = (-ctypes.addressof(ctypes.c_char.from_buffer(raw))) % ALIGN
    return raw[skip:skip + nbytes]


class _Scope:
    """One level of step nesting: its generation, bump mark, free list and bytes in use."""
    __slots__ = ("gen", "mark_block", "mark_top", "free", "in_use", "steps")

    def __init__(self, gen, mark_block, mark_top):
        self.gen = gen
        self.mark_block = mark_block  # position in Arena.blocks where this scope started
        self.mark_top = mark_top
        self.free = []                # sorted [(block_pos, offset, size)], coalesced
        self.in_use = 0
        self.steps = 0


class Arena:
    """Hands out 64-byte aligned temporary storages from large blocks.

    ``budget`` (a Budget, shared with the persistent pool) caps reserved bytes;
    ``guard`` (a Guard, shared likewise) locks every change for threads.
    """

    def __init__(self, block_bytes=DEFAULT_BLOCK_BYTES, budget=None, guard=None):
        self.block_bytes = int(block_bytes)
        self.budget = budget if budget is not None else Budget()
        self.guard = guard if guard is not None else Guard()
        self.blocks = []          # uint8 arrays, in bump order
        self.ends = []            # per block: where its bump pointer stood when we moved on
        self.cur = 0              # position of the block being bumped
        self.top = 0              # bytes used at the bump end of blocks[cur]
        self.reserved = 0
        self.in_use = 0
        self.peak = 0
        self.step = 0             # number of step_end() calls at the outer level
        self.scopes = [_Scope(Generation(0), 0, 0)]

    # -- allocation -------------------------------------------------------
    def alloc(self, nbytes):
        """Return a Storage of ``nbytes`` (rounded up to 64) from the innermost scope.

        The storage's bytes are ``block[offset:offset + nbytes]`` of its ``block``.
        """
        size = (nbytes + 63) & -64 or 64          # NOTE: rounded up to ALIGN (64), at least 64
        guard = self.guard
        lock = guard.lock
        lock.acquire()          # NOTE: not ``with``: 40 ns less on every op's output
        try:
            # NOTE: the scope (and its generation) is read under the lock, with the
            # position: a step_end() on another thread cannot slip in between.
            scope = self.scopes[-1]
            if scope.free:
                pos, off = self._take_free(scope, size)
                if pos < 0:
                    pos, off = self._bump(size)
            else:
                # NOTE: _bump's common case inlined (the hot path of every op's output)
                blocks, pos, off = self.blocks, self.cur, self.top
                if blocks and off + size <= len(blocks[pos]):
                    self.top = off + size
                else:
                    pos, off = self._bump(size)
            scope.in_use += size
            in_use = self.in_use = self.in_use + size
            if in_use > self.peak:
                self.peak = in_use
            st = Storage(None, size, scope.gen, self, self.blocks[pos], off)
            if guard.deferred:
                guard.flush()
        finally:
            lock.release()
        return st

    def _take_free(self, scope, size):
        free = scope.free
        for i, (pos, off, fsize) in enumerate(free):
            if fsize >= size:
                if fsize == size:
                    del free[i]
                else:
                    free[i] = (pos, off + size, fsize - size)
                return pos, off
        return -1, 0

    def _bump(self, size):
        if self.blocks and self.top + size <= len(self.blocks[self.cur]):
            off = self.top
            self.top += size
            return self.cur, off
        nxt = self.cur + 1 if self.blocks else 0
        if self.blocks:
            self.ends[self.cur] = self.top
        if not (nxt < len(self.blocks) and size <= len(self.blocks[nxt])):
            nxt = self._add_block(nxt, size)
        self.cur, self.top = nxt, size
        return nxt, 0

    def _add_block(self, pos, size):
        """Insert a block of at least ``size`` bytes at ``pos`` (trimming first if over the
        limit); return the position it landed at, which trimming may have moved."""
        want = max(size, self.block_bytes)
        if not self.budget.fits(want):
            self._trim()
            pos = min(pos, len(self.blocks))  # trim() may drop every block and rewind to 0
            if not self.budget.fits(want):
                want = size
                if not self.budget.fits(want):
                    self.budget.refuse("temporary", size, self.in_use)
        self.blocks.insert(pos, aligned_bytes(want))
        self.ends.insert(pos, 0)
        self.reserved += want
        self.budget.arena_reserved = self.reserved
        # NOTE: inserting shifts later positions; free lists and marks only ever
        # point at positions <= cur, so none of them moves.
        return pos

    # -- freeing ----------------------------------------------------------
    def give_back(self, st):
        """Return a dead-by-reference storage's bytes to its scope's free list."""
        guard = self.guard
        if guard.lock.acquire(False):         # NOTE: Guard.free, inlined: once per temporary
            try:
                scope, size, offset = self.scopes[-1], st.nbytes, st.offset
                if (scope.gen is st.gen and offset + size == self.top
                        and self.blocks[self.cur] is st.block):
                    # NOTE: the commonest case of _give_back, inlined: the newest temporary
                    # dies, the bump pointer steps back over it (and over free regions
                    # below it)
                    scope.in_use -= size
                    self.in_use -= size
                    self.top = offset
                    if scope.free or not offset:
                        self._lower_top(scope)
                else:
                    self._give_back(st.gen, st.block, offset, size)
                if guard.deferred:
                    guard.flush()
            finally:
                guard.lock.release()
        else:
            guard.deferred.append((self, (st.gen, st.block, st.offset, st.nbytes)))

    def _give_back(self, gen, block, offset, size):
        scope = self.scopes[-1]
        cur = self.cur
        if scope.gen is gen and offset + size == self.top and self.blocks[cur] is block:
            # NOTE: the common case (the newest temporary of the innermost scope dies) in
            # a few comparisons: the bump pointer steps back over it
            scope.in_use -= size
            self.in_use -= size
            self.top = offset
            if scope.free or not offset:
                self._lower_top(scope)
            return
        for scope in reversed(self.scopes):
            if scope.gen is gen:
                break
        else:
            return
        pos = self._position(block)
        scope.in_use -= size
        self.in_use -= size
        if scope is self.scopes[-1] and pos == cur and offset + size == self.top:
            self.top = offset
            self._lower_top(scope)
        else:
            _insert_coalesced(scope.free, pos, offset, size)

    def _position(self, block):
        for i in range(self.cur, -1, -1):
            if self.blocks[i] is block:
                return i
        raise AssertionError("storage block not in arena")

    def _lower_top(self, scope):
        """Pull the bump pointer back over free regions at its end, block by block."""
        free = scope.free
        while True:
            while free and free[-1][0] == self.cur and free[-1][1] + free[-1][2] == self.top:
                self.top = free.pop()[1]
            if self.top or self.cur <= scope.mark_block:
                return
            self.cur -= 1
            self.top = self.ends[self.cur]

    # -- steps ------------------------------------------------------------
    def step_end(self):
        """Free every temporary of the innermost scope's current step at once.

        Waits until ops other threads have in flight on this arena are done.
        """
        with self.guard.exclusive(step=True), self.guard.lock:
            self.guard.flush()
            self._step_end()

    def _step_end(self):
        scope = self.scopes[-1]
        scope.gen.kill()
        scope.steps += 1
        if len(self.scopes) == 1:
            self.step += 1
        scope.gen = Generation(self.step if len(self.scopes) == 1 else scope.gen.step)
        self.in_use -= scope.in_use
        scope.in_use = 0
        scope.free = []
        self.cur, self.top = scope.mark_block, scope.mark_top

    def push_scope(self):
        """Start a nested step scope; temporaries made before it survive its step_end()."""
        with self.guard.lock:
            self.scopes.append(_Scope(Generation(self.step), self.cur, self.top))

    def pop_scope(self):
        """Leave the innermost scope, freeing what it still holds."""
        with self.guard.exclusive(step=True), self.guard.lock:
            if len(self.scopes) == 1:
                raise NcError("pop_scope: no nested step scope is open")
            self.guard.flush()
            self._step_end()
            self.scopes.pop()

    @property
    def generation(self):
        return self.scopes[-1].gen

    def trim(self):
        """Give blocks no live temporary uses back to the OS; return the bytes freed."""
        with self.guard.exclusive(), self.guard.lock:
            self.guard.flush()
            return self._trim()

    def _trim(self):
        if self.in_use == 0 and len(self.scopes) == 1:
            keep = 0
            self.scopes[0].free = []
            self.cur = self.top = 0
        else:
            keep = self.cur + 1
        freed = sum(len(b) for b in self.blocks[keep:])
        del self.blocks[keep:]
        del self.ends[keep:]
        self.reserved -= freed
        self.budget.arena_reserved = self.reserved
        return freed


def _insert_coalesced(free, pos, off, size):
    i = bisect.bisect_left(free, (pos, off, 0))
    if i < len(free) and free[i][0] == pos and off + size == free[i][1]:
        size += free[i][2]
        del free[i]
    if i > 0 and free[i - 1][0] == pos and free[i - 1][1] + free[i - 1][2] == off:
        off, size = free[i - 1][1], free[i - 1][2] + size
        i -= 1
        del free[i]
    free.insert(i, (pos, off, size))
