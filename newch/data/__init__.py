"""Datasets and batches (``torch.utils.data``; also importable as ``newch.utils.data``).

See docs/data.md. Batches are temporaries of the caller's step; a dataset's own
tensors are never copied per epoch.
"""
from .collate import default_collate, default_convert
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset, Subset,
                      TensorDataset, random_split)
from .loader import DataLoader, WorkerInfo, get_worker_info
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler,
                      SubsetRandomSampler, WeightedRandomSampler)

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "Subset", "ConcatDataset",
           "ChainDataset", "random_split", "DataLoader", "default_collate", "default_convert",
           "get_worker_info", "WorkerInfo", "Sampler", "SequentialSampler", "RandomSampler",
           "SubsetRandomSampler", "WeightedRandomSampler", "BatchSampler"]
