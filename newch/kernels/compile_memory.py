"""What compiling a kernel leaves in memory, and two ways newch gives it back.

A cold first MLP step compiles about twenty kernels; with llvmlite 0.50 and
numba 0.68 each one kept 1-7 MiB of the C heap for good, about 55 MiB in all
(measured with glibc's ``mallinfo2`` around every llvmlite call; figures in
docs/pi.md, "A small machine's memory"). On a 512 MiB Pi Zero 2 W that is the difference between a first
step that fits and one that does not.

1. **Pass managers were never freed.** numba builds a new LLVM function pass
   manager for every function it optimises, and module pass managers for every
   library. llvmlite's ``FunctionPassManager`` and ``ModulePassManager`` list
   ``ffi.ObjectRef`` before the ``NewPassManager`` mixin that holds their
   ``_dispose``, so ``ObjectRef``'s empty ``_dispose`` wins and the C++ objects
   leak (about 11 KiB each, thousands per step). ``fix_pass_manager_leak``
   points both classes at the mixin's ``_dispose``, only where the bug is
   present: a fixed llvmlite is left alone.
2. **Freed memory stayed with the process.** LLVM frees many small blocks
   during a compile; glibc keeps the freed pages. At the end of each outermost
   compilation ``release_freed_memory`` calls glibc's ``malloc_trim(0)``
   (about 1 ms natively), so the next compile reuses the pages and the peak
   does not ratchet up. Where libc is not glibc it does nothing.

``install()`` applies both once; ``kernels/jit.py`` calls it when it imports numba.

Example:
    >>> from newch.kernels import compile_memory
    >>> compile_memory.install()
    >>> compile_memory.pass_managers_disposed()
    True
"""
import ctypes
import threading

from llvmlite.binding import ffi as _ffi
from numba.core import event

try:
    from llvmlite.binding import newpassmanagers as _npm
except ImportError:       # NOTE: llvmlite < 0.45 (numba 0.57-0.60) has only the legacy pass managers
    _npm = None

__all__ = ["install", "fix_pass_manager_leak", "pass_managers_disposed", "release_freed_memory"]

_state = {"installed": False, "trim": None}
_depth = threading.local()


def fix_pass_manager_leak():
    """Make llvmlite's new pass managers free their C++ object when collected.

    Returns the names of the classes patched ([] when llvmlite does it already).
    """
    patched = []
    for cls in _new_pass_managers():
        if cls._dispose is _ffi.ObjectRef._dispose:       # the mixin's _dispose is shadowed
            cls._dispose = _npm.NewPassManager._dispose
            patched.append(cls.__name__)
    return patched


def pass_managers_disposed():
    """True when collecting a pass manager frees its LLVM object (llvmlite fixed, or patched)."""
    return all(cls._dispose is not _ffi.ObjectRef._dispose for cls in _new_pass_managers())


def _new_pass_managers():
    """llvmlite's new-pass-manager classes, () where this llvmlite has none (or not this shape)."""
    names = ("FunctionPassManager", "ModulePassManager", "NewPassManager")
    if _npm is None or not all(hasattr(_npm, n) for n in names):
        return ()
    return (_npm.FunctionPassManager, _npm.ModulePassManager)


def _malloc_trim():
    """glibc's ``malloc_trim`` or None (musl, macOS, Windows)."""
    if _state["trim"] is None:
        try:
            fn = ctypes.CDLL(None).malloc_trim      # the process's own symbols: libc is loaded
            fn.argtypes = [ctypes.c_size_t]
            fn.restype = ctypes.c_int
        except (OSError, AttributeError, TypeError):
            fn = False
        _state["trim"] = fn
    return _state["trim"] or None


def release_freed_memory():
    """Give the heap's free pages back to the OS; True when libc could (glibc)."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


class _TrimAfterCompile(event.Listener):
    """Calls ``release_freed_memory`` when a thread's outermost numba compilation ends."""

    def on_start(self, ev):
        _depth.n = getattr(_depth, "n", 0) + 1

    def on_end(self, ev):
        _depth.n = getattr(_depth, "n", 1) - 1
        if _depth.n == 0:
            release_freed_memory()


def install():
    """Apply both fixes once (idempotent)."""
    if _state["installed"]:
        return
    fix_pass_manager_leak()
    event.register("numba:compile", _TrimAfterCompile())
    _state["installed"] = True
