"""The byte budget an arena and a persistent pool share (``Context(memory_limit=...)``)."""
from ..errors import NcError


class Budget:
    """Bytes reserved by the arena plus bytes of persistent tensors, against an optional limit."""
    __slots__ = ("limit", "arena_reserved", "persistent")

    def __init__(self, limit=None):
        self.limit = limit
        self.arena_reserved = 0
        self.persistent = 0

    def fits(self, nbytes):
        return self.limit is None or self.arena_reserved + self.persistent + nbytes <= self.limit

    def refuse(self, kind, nbytes, arena_in_use=None):
        """Raise the out-of-memory NcError: what was asked, what is in use, the limit."""
        live = "" if arena_in_use is None else f", {arena_in_use} of them in use"
        raise NcError(
            f"memory limit: asked for {nbytes} bytes of {kind} memory; newch holds "
            f"{self.arena_reserved} arena bytes{live} + {self.persistent} persistent bytes; "
            f"limit {self.limit} bytes. Call step_end() more often, release() tensors you no "
            f"longer need, use smaller batches or raise memory_limit.")
