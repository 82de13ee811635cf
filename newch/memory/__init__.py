"""newch's memory: the step arena (temporaries) and the persistent pool.

| name | what it is |
|---|---|
| ``Arena`` | large 64-byte aligned blocks; ``alloc(nbytes)``, ``step_end()``, scopes, ``trim()`` |
| ``PersistentPool`` | one allocation per persistent tensor; ``bytes`` in use |
| ``Storage`` | one allocation shared by a tensor and its views; ``gen.alive`` says if it may be read |
| ``Generation`` | the lifetime tag of a step's temporaries; ``step_end()`` kills it in O(1) |
| ``Guard`` | the lock and in-flight registry that keep a context shared by threads correct |
| ``parse_bytes`` | a byte count from an int or a string with a unit (``"512MiB"``, ``"1GB"``) |
"""
from .arena import ALIGN, Arena
from .budget import parse_bytes
from .guard import Guard
from .pool import PersistentPool
from .storage import PERSISTENT, Generation, Storage

__all__ = ["ALIGN", "Arena", "PersistentPool", "Storage", "Generation", "PERSISTENT", "Guard",
           "parse_bytes"]
