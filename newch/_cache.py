"""Pick the directory Numba caches compiled kernels in, before numba is imported.

A user's ``NUMBA_CACHE_DIR`` wins. Otherwise newch uses ``$NEWCH_CACHE_DIR`` or
``~/.cache/newch/numba``. If no candidate is writable, kernels compile without a
disk cache (slower first run, never an import error).
"""
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


def choose_cache_dir():
    """Set NUMBA_CACHE_DIR (unless the user did) and return the chosen directory or None."""
    global CACHE_ENABLED
    user = os.environ.get("NUMBA_CACHE_DIR")
    if user:
        CACHE_ENABLED = _writable(user)
        return user if CACHE_ENABLED else None
    base = os.environ.get("NEWCH_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "newch", "numba")
    if _writable(base):
        os.environ["NUMBA_CACHE_DIR"] = base
        return base
    CACHE_ENABLED = False
    return None


CACHE_DIR = choose_cache_dir()
