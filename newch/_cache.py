"""Where newch's compiled kernels are cached on disk (chosen without importing numba).

The directory is ``<root>/<hash of the kernel sources>``: numba's cache only
notices changes to a kernel's own file, not to the helpers it calls from other
files, so a new newch version (or an edited kernel) must not load old machine
code. ``<root>`` is ``$NEWCH_CACHE_DIR``, else ``$NUMBA_CACHE_DIR/newch`` when the
user set that, else ``$XDG_CACHE_HOME/newch/numba`` (``~/.cache/newch/numba``).
Only newch's kernels go there (``kernels/cache.py`` gives them a locator of
their own): the environment is left as the user set it, so child processes and
the user's other numba code are unaffected, and it works even if numba was
imported first. The newest ``KEEP`` hash directories are kept, older ones
deleted. If nothing is writable, kernels compile without a disk cache.
"""
import hashlib
import os
import re
import shutil
import tempfile
import time

KEEP = 3            # hash directories (newch versions / kernel edits) kept side by side
MIN_AGE = 7 * 86400  # seconds unused before a directory beyond KEEP may be deleted
CACHE_ENABLED = True
_HASH_DIR = re.compile(r"[0-9a-f]{16}")


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


def cache_root():
    """The directory holding one subdirectory per kernel-sources hash."""
    if os.environ.get("NEWCH_CACHE_DIR"):
        return os.environ["NEWCH_CACHE_DIR"]
    if os.environ.get("NUMBA_CACHE_DIR"):
        return os.path.join(os.environ["NUMBA_CACHE_DIR"], "newch")
    home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(home, "newch", "numba")


def _last_used(path):
    """Newest mtime of ``path`` and the folders in it (numba writes one level down)."""
    try:
        t = os.stat(path).st_mtime
        with os.scandir(path) as it:
            for e in it:
                if e.is_dir(follow_symlinks=False):
                    t = max(t, e.stat(follow_symlinks=False).st_mtime)
        return t
    except OSError:
        return 0.0


def prune(root, current, keep=KEEP, min_age=MIN_AGE):
    """Delete hash directories under ``root`` beyond the ``keep`` most recently used.

    ``current`` (a directory name) is always kept, and so is any directory used in
    the last ``min_age`` seconds: another newch install (a second venv, a checkout)
    may be running from it. Returns the names deleted.
    """
    try:
        names = [n for n in os.listdir(root) if _HASH_DIR.fullmatch(n) and n != current]
    except OSError:
        return []
    used = {n: _last_used(os.path.join(root, n)) for n in names}
    now = time.time()
    old = sorted(names, key=used.get, reverse=True)[max(keep - 1, 0):]
    old = [n for n in old if now - used[n] >= min_age]
    for n in old:
        shutil.rmtree(os.path.join(root, n), ignore_errors=True)
    return old


def choose_cache_dir():
    """The kernel cache directory for this newch (created, marked used, old ones pruned), or None."""
    global CACHE_ENABLED
    root = cache_root()
    key = kernel_sources_hash()
    path = os.path.join(root, key)
    if not _writable(path):
        CACHE_ENABLED = False
        return None
    try:
        os.utime(path)          # "most recently used" is what prune() keeps
    except OSError:
        pass
    prune(root, key)
    return path


CACHE_DIR = choose_cache_dir()
