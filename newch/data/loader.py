"""DataLoader: batches from a dataset, in order or shuffled, as temporaries of the current step.

Each batch is made when ``__next__`` returns it, in the caller's context: a
batch is an ordinary temporary, so ``step_end()`` frees it and a loop that
never calls ``step_end()`` reuses the same arena bytes batch after batch.
With ``num_workers > 0``, worker threads read items and copy their values
out as numpy arrays (inside a private context each); tensors are only made
by the consumer. Nothing is prefetched as a temporary: a prefetched
temporary would die at the consumer's ``step_end()``.
"""
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..context import Context, default_context
from ..ops.creation import as_tensor
from ..tensor import Tensor
from .collate import default_collate, default_convert
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler

_worker = threading.local()


class WorkerInfo:
    """What ``get_worker_info()`` returns inside a worker thread."""

    def __init__(self, id, num_workers, seed, dataset):
        self.id, self.num_workers, self.seed, self.dataset = id, num_workers, seed, dataset

    def __repr__(self):
        return f"WorkerInfo(id={self.id}, num_workers={self.num_workers})"


def get_worker_info():
    """Inside a DataLoader worker: its ``WorkerInfo`` (id, num_workers, seed, dataset); else None."""
    return getattr(_worker, "info", None)


class _Frozen:
    """A tensor's values copied out by a worker, to be made a tensor again by the consumer."""
    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array


def _freeze(x):
    if isinstance(x, Tensor):
        return _Frozen(np.array(x.detach().numpy(force=True)))
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*(_freeze(v) for v in x))
    if isinstance(x, (list, tuple)):
        return type(x)(_freeze(v) for v in x)
    if isinstance(x, dict):
        return {k: _freeze(v) for k, v in x.items()}
    return x


def _thaw(x):
    if isinstance(x, _Frozen):
        return as_tensor(x.array)
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*(_thaw(v) for v in x))
    if isinstance(x, (list, tuple)):
        return type(x)(_thaw(v) for v in x)
    if isinstance(x, dict):
        return {k: _thaw(v) for k, v in x.items()}
    return x


def _check_args(dataset, batch_size, shuffle, sampler, batch_sampler, drop_last, num_workers):
    if isinstance(num_workers, bool) or not isinstance(num_workers, int) or num_workers < 0:
        raise ValueError(f"DataLoader: num_workers option should be non-negative; use "
                         f"num_workers=0 to disable multiprocessing, got {num_workers!r}")
    if isinstance(dataset, IterableDataset):
        if shuffle not in (None, False):
            raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle "
                             f"option, but got shuffle={shuffle}")
        if sampler is not None:
            raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler "
                             f"option, but got sampler={sampler}")
        if batch_sampler is not None:
            raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                             f"batch_sampler option, but got batch_sampler={batch_sampler}")
    if sampler is not None and shuffle:
        raise ValueError("DataLoader: sampler option is mutually exclusive with shuffle")
    if batch_sampler is not None and (batch_size != 1 or shuffle or sampler is not None
                                      or drop_last):
        raise ValueError("DataLoader: batch_sampler option is mutually exclusive with "
                         "batch_size, shuffle, sampler, and drop_last")
    if batch_size is None and drop_last:
        raise ValueError("DataLoader: batch_size=None option disables auto-batching and is "
                         "mutually exclusive with drop_last")


class DataLoader:
    """Iterate over ``dataset`` in batches (``torch.utils.data.DataLoader``).

    Args:
        dataset: a map-style ``Dataset`` (``ds[i]``, ``len(ds)``) or an ``IterableDataset``.
        batch_size: items per batch (default 1); ``None`` yields items one by one, uncollated.
        shuffle: visit the items in a new random order each epoch.
        sampler: an iterable of indices (instead of ``shuffle``).
        batch_sampler: an iterable of index lists (instead of batch_size/shuffle/sampler/drop_last).
        num_workers: threads that read items ahead as numpy values (0: read in the caller).
        collate_fn: list of items -> batch (default ``default_collate``).
        drop_last: drop the last, smaller batch.
        generator: the ``newch.Generator`` that shuffling draws from.
        worker_init_fn: called with the worker id at the start of each worker thread.
        pin_memory, timeout, prefetch_factor, persistent_workers, multiprocessing_context,
        pin_memory_device, in_order: accepted for compatibility (CPU only, threads).

    Example:
        >>> from newch.data import TensorDataset
        >>> ds = TensorDataset(newch.arange(10.).reshape(5, 2), newch.arange(5))
        >>> [tuple(x.shape) for x, y in DataLoader(ds, batch_size=2)]
        [(2, 2), (2, 2), (1, 2)]
    """

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        _check_args(dataset, batch_size, shuffle, sampler, batch_sampler, drop_last, num_workers)
        if batch_size is not None and (isinstance(batch_size, bool) or not isinstance(batch_size, int)
                                       or batch_size <= 0):
            raise ValueError(f"DataLoader: batch_size should be a positive integer value, but "
                             f"got batch_size={batch_size}")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor if prefetch_factor is not None else 2
        self.pin_memory, self.timeout, self.persistent_workers = pin_memory, timeout, persistent_workers
        self.worker_init_fn, self.generator = worker_init_fn, generator
        self.drop_last = drop_last
        self._iterable = isinstance(dataset, IterableDataset)
        if batch_sampler is not None:
            batch_size, drop_last = None, False
        elif sampler is None and not self._iterable:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else \
                SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size, self.sampler, self.batch_sampler = batch_size, sampler, batch_sampler
        self._auto_collation = batch_sampler is not None or (self._iterable and batch_size is not None)
        self._default_collate = collate_fn is None
        self.collate_fn = collate_fn if collate_fn is not None else (
            default_collate if self._auto_collation else default_convert)

    def __len__(self):
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        return len(self.batch_sampler if self.batch_sampler is not None else self.sampler)

    def __iter__(self):
        if self._iterable:
            return self._iter_iterable()
        keys = iter(self.batch_sampler if self._auto_collation else self.sampler)
        if self.num_workers > 0 and _threads_have_contexts():
            return self._iter_workers(keys)
        return (self._fetch(k) for k in keys)

    # -- map-style --------------------------------------------------------------------------
    def _fetch(self, key):
        if not self._auto_collation:
            return self.collate_fn(self.dataset[key])
        if self._default_collate:
            gather = getattr(self.dataset, "_gather", None)
            batch = gather(key) if gather is not None else None
            if batch is not None:
                return batch
        return self.collate_fn(self._items(key))

    def _items(self, key):
        many = getattr(self.dataset, "__getitems__", None)
        return many(key) if many is not None else [self.dataset[i] for i in key]

    def _iter_workers(self, keys):
        parent = default_context()
        ids = iter(range(self.num_workers))
        lock = threading.Lock()

        def start():
            with lock:
                wid = next(ids)
            _worker.ctx = Context(threads=1, backend="ref" if parent.backend == "ref" else None)
            _worker.info = WorkerInfo(wid, self.num_workers, int(parent.rng.integers(1 << 62)),
                                      self.dataset)
            if self.worker_init_fn is not None:
                with _worker.ctx:
                    self.worker_init_fn(wid)

        def load(key):
            ctx = _worker.ctx
            with ctx:
                items = self.dataset[key] if not self._auto_collation else self._items(key)
                frozen = _freeze(items)
                ctx.step_end()
            return frozen

        depth = self.num_workers * self.prefetch_factor
        with ThreadPoolExecutor(self.num_workers, initializer=start) as pool:
            pending = []
            for key in keys:
                pending.append(pool.submit(load, key))
                if len(pending) >= depth:
                    yield self.collate_fn(_thaw(pending.pop(0).result()))
            while pending:
                yield self.collate_fn(_thaw(pending.pop(0).result()))

    # -- iterable-style ---------------------------------------------------------------------
    def _iter_iterable(self):
        # NOTE: workers are not used for an IterableDataset: each would replay the whole
        # dataset (as PyTorch's processes do unless the dataset shards itself); reading it once
        # in the caller gives every item exactly once.
        if self.batch_size is None:
            for item in self.dataset:
                yield self.collate_fn(item)
            return
        batch = []
        for item in self.dataset:
            batch.append(item)
            if len(batch) == self.batch_size:
                yield self.collate_fn(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.collate_fn(batch)


def _threads_have_contexts():
    """True when ``with ctx:`` gives a thread its own current context (workers need it)."""
    return hasattr(Context, "__enter__")
