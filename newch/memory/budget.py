"""The byte budget an arena and a persistent pool share (``Context(memory_limit=...)``).

``parse_bytes`` reads a limit written as an int or a string with a unit
(``"512MiB"``, ``"1GB"``); ``NEWCH_MEMORY_LIMIT`` and ``memory_limit=`` both use it.
"""
import re
from fractions import Fraction

import numpy as np

from ..errors import NcError

# binary units are powers of 2**10, decimal ones of 10**3 (as disk and RAM vendors write them)
UNITS = {"b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
         "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
_SIZE = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([a-zA-Z]*)\s*")


def parse_bytes(value, what="memory_limit"):
    """A positive number of bytes from an int or a string such as ``"512MiB"`` or ``"1GB"``.

    Args:
        value: an int (bytes), or a string: a number then one of B, KB, MB, GB, TB
            (powers of 1000), KiB, MiB, GiB, TiB (powers of 1024); no unit means bytes.
        what: the name the error messages use.

    Example:
        >>> parse_bytes("512MiB"), parse_bytes("1GB"), parse_bytes(4096)
        (536870912, 1000000000, 4096)
    """
    expected = (f"{what}: expected a positive int number of bytes or a string with a unit "
                f"such as '512MiB', '1GiB', '500MB' or '1GB'")
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        n = int(value)
    elif isinstance(value, str):
        m = _SIZE.fullmatch(value)
        unit = m.group(2).lower() if m else None
        if unit not in UNITS and unit != "":
            raise ValueError(f"{expected}, got {value!r}")
        n = int(Fraction(m.group(1)) * UNITS.get(unit, 1))
    else:
        raise TypeError(f"{expected}, got {value!r} ({type(value).__name__})")
    if n <= 0:
        raise ValueError(f"{expected}, got {value!r}")
    return n


class Budget:
    """Bytes reserved by the arena plus bytes of persistent tensors, against an optional limit.

    ``reclaim`` (set by the Context) is a weak method giving idle arena blocks back
    before a persistent request is refused.
    """
    __slots__ = ("limit", "arena_reserved", "persistent", "reclaim")

    def __init__(self, limit=None):
        self.limit = limit
        self.arena_reserved = 0
        self.persistent = 0
        self.reclaim = None

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
