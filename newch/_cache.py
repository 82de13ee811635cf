"""Pick the directory Numba caches compiled kernels in, before numba is imported.

A user's ``NUMBA_CACHE_DIR`` wins. Otherwise newch uses a subdirectory of
``$NEWCH_CACHE_DIR`` or ``~/.cache/newch/numba`` named by a hash of the kernel
sources: numba's cache only notices changes to a kernel's own file, not to the
helpers it calls from other files, so a new newch version (or an edited kernel)
must not load old machine code. If no candidate is writable, kernels compile
without a disk cache (slower first run, never an import error).
"""
import hashlib
import os
import tempfile

CACHE_ENABLED = True


def _writable(path):
    try:
        os.makedirs(path, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path):
            pass
        return True
    except OSError:
        return False


def kernel_sources_hash():
    """A short hash of the kernel package's source files (names and contents)."""
    here = os.path.join(os.path.dirname(__file__), "kernels")
    h = hashlib.sha256()
    for name in sorted(os.listdir(here)):
        if name.endswith(".py"):
            h.update(name.encode())
            with open(os.path.join(here, name), "rb") as f:
                h.update(f.read())
    return h.hexdigest()[:16]


def choose_cache_dir():
    """Set NUMBA_CACHE_DIR (unless the user did) and return the chosen directory or None."""
    global CACHE_ENABLED
    user = os.environ.get("NUMBA_CACHE_DIR")
    if user:
        CACHE_ENABLED = _writable(user)
        return user if CACHE_ENABLED else None
    base = os.path.join(os.environ.get("NEWCH_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "newch", "numba"), kernel_sources_hash())
    if _writable(base):
        os.environ["NUMBA_CACHE_DIR"] = base
        return base
    CACHE_ENABLED = False
    return None


CACHE_DIR = choose_cache_dir()
