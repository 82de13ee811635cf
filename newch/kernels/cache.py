"""numba's on-disk cache for newch's kernels: newch's directory, safe for several processes.

``attach(dispatcher)`` gives a jitted function a cache of its own kind instead of
numba's ``cache=True``:

- a locator pointing into ``newch._cache.CACHE_DIR`` (the kernel-sources hash
  directory), whatever ``NUMBA_CACHE_DIR`` says and whenever numba was imported;
- index writes under a file lock. numba's index is read-modify-write: two
  processes compiling different signatures of one kernel at once both read an
  empty index, both pick data file ``1`` and both write it, so one signature's
  index entry can end up naming the other's machine code. Here the whole save
  (read the index, pick a free number, write the data, then the index) holds an
  exclusive lock on ``<index>.lock``; readers need none, since files are
  replaced atomically and the index is written after the data it names.
"""
import contextlib
import os

from numba.core import caching

from .. import _cache

try:
    import fcntl
except ImportError:         # Windows: no advisory locks; saves fall back to numba's behaviour
    fcntl = None


@contextlib.contextmanager
def file_lock(path):
    """Hold an exclusive advisory lock on ``path`` (created if missing) for the block."""
    if fcntl is None:
        yield
        return
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)            # closing drops the lock


class KernelLocator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
    """Caches a kernel under newch's hash directory, in a subdirectory per source folder."""

    def __init__(self, py_func, py_file):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._cache_path = os.path.join(_cache.CACHE_DIR, self.get_suitable_cache_subpath(py_file))

    def get_cache_path(self):
        return self._cache_path


class LockedIndexFile(caching.IndexDataCacheFile):
    """numba's index + data files, saved under a per-index file lock (see the module doc)."""

    def save(self, key, data):
        with file_lock(self._index_path + ".lock"):
            overloads = self._load_index()
            name = overloads.get(key)
            if name is None:
                used = set(overloads.values())
                n = 1
                while self._data_name(n) in used:
                    n += 1
                name = self._data_name(n)
            self._save_data(name, data)
            overloads[key] = name
            self._save_index(overloads)


class _KernelCacheImpl(caching.CompileResultCacheImpl):
    _locator_classes = [KernelLocator]


class KernelCache(caching.FunctionCache):
    """A FunctionCache with newch's locator and locked index writes."""
    _impl_class = _KernelCacheImpl

    def __init__(self, py_func):
        super().__init__(py_func)
        # NOTE: numba builds its IndexDataCacheFile in Cache.__init__; only its save changes.
        self._cache_file.__class__ = LockedIndexFile


def attach(dispatcher):
    """Give ``dispatcher`` newch's disk cache (no-op when caching is off); returns it."""
    if _cache.CACHE_ENABLED and _cache.CACHE_DIR:
        dispatcher._cache = KernelCache(dispatcher.py_func)
    return dispatcher
