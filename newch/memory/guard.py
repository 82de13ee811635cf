"""What keeps one context's memory right when several threads use it.

Two things can go wrong when threads share a context:

- bookkeeping: the arena's bump pointer, free lists and the pool's byte counts
  are read-modify-write; two threads changing them at once hand out the same
  bytes twice. Every change runs under ``lock``. A storage that dies while the
  lock is held (a ``__del__`` run by the cyclic GC in the middle of an
  allocation, or on another thread) is queued in ``deferred`` and given back by
  whoever holds the lock, before it lets go.
- freeing under a reader: kernels run without the GIL, so thread A can be
  reading a temporary when thread B calls ``step_end()``, which lets the next
  allocation reuse those bytes. Public ops register their thread in ``busy``
  while they run (``newch.context.track``; nested calls only look);
  ``step_end()``, ``trim()`` and ``release()`` run inside ``exclusive()``, which
  stops new ops from starting and waits until the ops other threads have in
  flight are done.
"""
import threading

from ..errors import NcError

_get_ident = threading.get_ident


class Guard:
    """The lock and in-flight registry an arena and a persistent pool share.

    Fields: ``lock`` guards bookkeeping; ``deferred`` holds ``(owner, args)`` frees
    waiting for the lock; ``busy`` maps a thread id to True while that thread runs
    an op; ``draining`` is set while an ``exclusive()`` section waits or runs.
    """
    __slots__ = ("lock", "deferred", "busy", "draining", "waiting", "steps", "_cond", "_excl")

    def __init__(self):
        self.lock = threading.Lock()
        self.deferred = []
        self.busy = {}
        self.draining = False
        self.waiting = 0              # threads waiting in enter() for an exclusive section
        self.steps = 0                # exclusive sections that ended a step (see _Exclusive)
        self._cond = threading.Condition(threading.Lock())
        self._excl = threading.RLock()

    # -- bookkeeping ----------------------------------------------------------
    def free(self, owner, *args):
        """Run ``owner._give_back(*args)`` now if the lock is free, else queue it."""
        if self.lock.acquire(False):
            try:
                owner._give_back(*args)
                if self.deferred:
                    self.flush()
            finally:
                self.lock.release()
        else:
            self.deferred.append((owner, args))

    def flush(self):
        """Give back queued frees; call with ``lock`` held."""
        d = self.deferred
        while d:
            owner, args = d.pop()
            owner._give_back(*args)

    # -- ops in flight ----------------------------------------------------------
    def enter(self, tid):
        """Register thread ``tid`` (not registered yet) as running an op.

        The caller undoes it with ``del busy[tid]``, then ``wake()`` if ``draining``.
        """
        busy = self.busy
        while True:
            busy[tid] = True
            if not self.draining:
                return
            # NOTE: register first, then look: an exclusive section either sees us in
            # ``busy`` (and waits) or we see ``draining`` (and step back until it is done).
            del busy[tid]
            with self._cond:
                self.waiting += 1
                while self.draining:
                    self._cond.wait(0.05)
                self.waiting -= 1

    def wake(self):
        """Wake the threads waiting on this guard (an op left while a section drains)."""
        with self._cond:
            self._cond.notify_all()

    def exclusive(self, step=False):
        """``with guard.exclusive():`` runs a block while no other thread has an op in flight.

        ``step=True`` for a section that frees a whole step (``step_end()``).
        """
        return _Exclusive(self, step)


class _Exclusive:
    """The context manager ``Guard.exclusive()`` returns (a class: step_end() stays O(1) calls).

    ``step=True`` marks a section that kills a generation (step_end): an op of another
    thread that was parked meanwhile (below) raises NcError instead of reading on.
    """
    __slots__ = ("g", "outer", "step")

    def __init__(self, guard, step=False):
        self.g = guard
        self.step = step

    def __enter__(self):
        g = self.g
        if not g._excl.acquire(False):
            self._park(g)
        self.outer = g.draining
        g.draining = True
        busy = g.busy
        if len(busy) > (_get_ident() in busy):
            me = _get_ident()
            with g._cond:
                while any(t != me for t in list(busy)):
                    g._cond.wait(0.05)
        return self

    def _park(self, g):
        """Wait for another thread's exclusive section; if this thread is in an op, step out of
        ``busy`` while waiting (that section may be waiting for it: a deadlock otherwise)."""
        tid = _get_ident()
        if tid not in g.busy:
            g._excl.acquire()
            return
        del g.busy[tid]
        if g.draining:
            with g._cond:
                g._cond.notify_all()
        steps = g.steps
        g._excl.acquire()
        g.busy[tid] = True
        if g.steps != steps:
            g._excl.release()
            raise NcError("step_end() ran on another thread while this thread's op was "
                          "running on the same context; its inputs may be freed. Give each "
                          "thread its own Context (`with newch.Context():`) or end steps "
                          "where no other thread is computing")

    def __exit__(self, *exc):
        g = self.g
        if self.step:
            g.steps += 1
        g.draining = self.outer
        if not self.outer and g.waiting:
            with g._cond:
                g._cond.notify_all()
        g._excl.release()
        return False
