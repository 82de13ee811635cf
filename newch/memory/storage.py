"""A Storage is one allocation: a run of bytes that tensors (and their views) share.

Liveness is a generation flag, not a pointer check: every temporary allocated
in a step shares that step's ``Generation``; ``step_end()`` flips one flag and
all of them are dead at once, whatever their number.
"""
import weakref


class Generation:
    """The lifetime tag a storage carries: ``alive`` until its step ends or it is released."""
    __slots__ = ("alive", "step", "how")

    def __init__(self, step, how="step_end()"):
        self.alive = True
        self.step = step      # step number the allocations of this generation belong to
        self.how = how        # what will have freed them: "step_end()" or "release()"

    def kill(self, how=None):
        self.alive = False
        if how:
            self.how = how


# Persistent storages all carry this one generation; it never dies.
PERSISTENT = Generation(step=-1, how="release()")


class Storage:
    """Bytes owned by an arena (temporary) or by the persistent pool.

    Fields: ``buf`` uint8 view of exactly ``nbytes`` (64-byte aligned; for an arena
    storage cut from its block when first asked for, see ``buf``), ``gen`` its Generation, ``owner`` the arena or pool that takes the bytes
    back, ``block``/``offset`` where it sits in an arena block, ``views`` a weak
    set of the tensors viewing a persistent storage (so release() can drop them),
    ``version`` counts in-place writes.
    """
    __slots__ = ("_buf", "nbytes", "gen", "owner", "block", "offset", "views", "version",
                 "__weakref__")

    def __init__(self, buf, nbytes, gen, owner, block=None, offset=0):
        self._buf = buf
        self.nbytes = nbytes
        self.gen = gen
        self.owner = owner
        self.block = block
        self.offset = offset
        # NOTE: arena storages (given a block) are never persistent: no global looked up
        self.views = None if block is not None else (weakref.WeakSet() if gen is PERSISTENT
                                                     else None)
        self.version = 0      # bumped by in-place writes; autograd checks saved tensors against it

    @property
    def buf(self):
        """The storage's bytes as a uint8 array (None once freed by ``release()``)."""
        # NOTE: an arena storage is made without its slice (allocation makes its tensor's
        # array straight from ``block`` and ``offset``); it is cut here when code asks for it.
        b = self._buf
        if b is None and self.block is not None:
            return self.block[self.offset:self.offset + self.nbytes]
        return b

    @buf.setter
    def buf(self, value):
        self._buf = value

    @property
    def persistent(self):
        return self.views is not None

    def release(self):
        """Free the bytes now; every tensor viewing them becomes stale.

        Waits until ops other threads have in flight on the owner's memory are done.
        """
        with self.owner.guard.exclusive():
            if not self.gen.alive:
                return
            dead = Generation(self.gen.step, how="release()")
            dead.alive = False
            old, self.gen = self.gen, dead
            self.owner.guard.free(self.owner, *self._freed(old))
            self._buf = self.block = None

    def _freed(self, gen):
        """The arguments of the owner's ``_give_back`` for these bytes."""
        if self.persistent:
            return (self.nbytes,)
        return (gen, self.block, self.offset, self.nbytes)

    def __del__(self):
        # NOTE: the last reference (Python or graph) to a temporary is gone: its
        # bytes go back to the arena's free list so the step can reuse them.
        gen = self.gen
        if gen is not None and gen.alive:
            self.owner.give_back(self)
