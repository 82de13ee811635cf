"""Datasets: what a DataLoader reads items from (``torch.utils.data.Dataset`` and friends).

A map-style dataset answers ``ds[i]`` and ``len(ds)``; an iterable one yields
items. ``TensorDataset`` keeps references to its tensors (never copies them) and
can hand a whole batch over in one gather per tensor (``_gather``), which is
what ``DataLoader`` uses when the default collation would give the same batch.
"""
import bisect
import math
import warnings

from ..ops.creation import tensor
from ..ops.indexing import index_select
from ..ops.random import randperm
from ..tensor import Tensor


class Dataset:
    """A map-style dataset: subclass it and define ``__getitem__`` (and ``__len__``).

    Example:
        >>> class Squares(Dataset):
        ...     def __len__(self):
        ...         return 4
        ...     def __getitem__(self, i):
        ...         return i * i
        >>> [Squares()[i] for i in range(4)]
        [0, 1, 4, 9]
    """

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__}: a Dataset must define __getitem__")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset that yields its items: subclass it and define ``__iter__``.

    Example:
        >>> class Count(IterableDataset):
        ...     def __iter__(self):
        ...         return iter(range(3))
        >>> list(Count())
        [0, 1, 2]
    """

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__}: an IterableDataset must define __iter__")

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Items are the ``i``-th rows of the given tensors: ``(x[i], y[i], ...)``.

    Args:
        *tensors: tensors with the same size in their first dimension.

    Example:
        >>> ds = TensorDataset(newch.arange(6).reshape(3, 2), newch.tensor([0, 1, 0]))
        >>> x, y = ds[1]
        >>> x.tolist(), y.item()
        ([2, 3], 1)
    """

    def __init__(self, *tensors):
        if not tensors:
            raise ValueError("TensorDataset: expected at least one tensor")
        for t in tensors:
            if not isinstance(t, Tensor):
                raise TypeError(f"TensorDataset: expected tensors, got {type(t).__name__}")
            if t.ndim == 0:
                raise ValueError("TensorDataset: tensors must have at least one dimension")
        n = tensors[0].shape[0]
        if any(t.shape[0] != n for t in tensors):
            raise ValueError(f"TensorDataset: size mismatch between tensors, first dimensions "
                             f"{[t.shape[0] for t in tensors]}")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]

    def _gather(self, indices):
        """The batch ``default_collate([self[i] for i in indices])`` in one gather per tensor."""
        idx = tensor(list(indices))
        return tuple(index_select(t, 0, idx) for t in self.tensors)


class Subset(Dataset):
    """The items of ``dataset`` at ``indices``, in that order.

    Example:
        >>> Subset(TensorDataset(newch.arange(5)), [4, 0])[0][0].item()
        4
    """

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self):
        return len(self.indices)

    def _gather(self, indices):
        inner = getattr(self.dataset, "_gather", None)
        if inner is None:
            return None
        return inner([int(self.indices[i]) for i in indices])


class ConcatDataset(Dataset):
    """The items of several map-style datasets one after the other.

    Example:
        >>> ds = ConcatDataset([TensorDataset(newch.arange(2)), TensorDataset(newch.arange(3))])
        >>> len(ds), ds[3][0].item()
        (5, 1)
    """

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ConcatDataset: datasets should not be an empty iterable")
        self.cumulative_sizes = []
        total = 0
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise TypeError("ConcatDataset: does not support IterableDataset; use ChainDataset")
            total += len(d)
            self.cumulative_sizes.append(total)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError(f"ConcatDataset: absolute value of index {idx} should not exceed "
                                 f"dataset length {len(self)}")
            idx += len(self)
        k = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[k - 1] if k else 0
        return self.datasets[k][idx - start]


class ChainDataset(IterableDataset):
    """The items of several iterable datasets, one after the other."""

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise TypeError("ChainDataset: only supports IterableDataset")
            yield from d

    def __len__(self):
        return sum(len(d) for d in self.datasets)


def _lengths_from_fractions(fractions, n):
    sizes = [int(math.floor(n * f)) for f in fractions]
    for i in range(n - sum(sizes)):       # NOTE: the remainder goes round-robin, as PyTorch does
        sizes[i % len(sizes)] += 1
    for i, s in enumerate(sizes):
        if s == 0:
            warnings.warn(f"random_split: length of split at index {i} is 0; this might result "
                          f"in an empty dataset", UserWarning, stacklevel=3)
    return sizes


def random_split(dataset, lengths, generator=None):
    """Split ``dataset`` into non-overlapping random subsets of the given lengths (or fractions).

    Args:
        dataset: a map-style dataset.
        lengths: sizes that sum to ``len(dataset)``, or fractions that sum to 1.
        generator: a ``newch.Generator`` (default: the default context's stream).

    Example:
        >>> a, b = random_split(TensorDataset(newch.arange(10)), [0.8, 0.2],
        ...                     generator=newch.Generator().manual_seed(0))
        >>> len(a), len(b)
        (8, 2)
    """
    n = len(dataset)
    lengths = list(lengths)
    if lengths and all(isinstance(x, float) for x in lengths) and math.isclose(sum(lengths), 1) \
            and sum(lengths) <= 1:
        for f in lengths:
            if not 0 <= f <= 1:
                raise ValueError(f"random_split: fraction {f} is not between 0 and 1")
        lengths = _lengths_from_fractions(lengths, n)
    if any(not isinstance(x, int) or x < 0 for x in lengths):
        raise ValueError(f"random_split: lengths must be non-negative ints or fractions summing "
                         f"to 1, got {lengths}")
    if sum(lengths) != n:
        raise ValueError(f"random_split: sum of input lengths ({sum(lengths)}) does not equal the "
                         f"length of the input dataset ({n})")
    perm = randperm(n, generator=generator).tolist()
    out, start = [], 0
    for k in lengths:
        out.append(Subset(dataset, perm[start:start + k]))
        start += k
    return out
