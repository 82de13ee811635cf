"""Datasets and random_split, against hand-computed expectations and PyTorch where installed."""
import numpy as np
import pytest

import newch
from newch.data import ConcatDataset, Dataset, Subset, TensorDataset, random_split


def test_tensor_dataset_items_are_rows_of_each_tensor():
    x = newch.arange(12.).reshape(4, 3)
    y = newch.tensor([5, 6, 7, 8])
    ds = TensorDataset(x, y)
    assert len(ds) == 4
    xi, yi = ds[2]
    assert xi.tolist() == [6.0, 7.0, 8.0] and yi.item() == 7


def test_tensor_dataset_refuses_mismatched_first_dims():
    with pytest.raises(ValueError, match="TensorDataset: size mismatch"):
        TensorDataset(newch.zeros(3, 2), newch.zeros(4))
    with pytest.raises(TypeError, match="TensorDataset"):
        TensorDataset(np.zeros(3))


def test_tensor_dataset_keeps_references_not_copies():
    with newch.persistent():
        x = newch.arange(10.)
    before = newch.mem_stats()["persistent_bytes"]
    ds = TensorDataset(x)
    assert ds.tensors[0] is x
    assert newch.mem_stats()["persistent_bytes"] == before


def test_subset_and_concat_index_like_lists():
    base = TensorDataset(newch.arange(5))
    sub = Subset(base, [4, 1, 3])
    assert [sub[i][0].item() for i in range(len(sub))] == [4, 1, 3]
    cat = ConcatDataset([TensorDataset(newch.arange(2)), TensorDataset(newch.arange(10, 13))])
    assert len(cat) == 5
    assert [cat[i][0].item() for i in range(5)] == [0, 1, 10, 11, 12]
    assert cat[-1][0].item() == 12
    with pytest.raises(ValueError):
        ConcatDataset([])


def test_random_split_partitions_the_indices():
    ds = TensorDataset(newch.arange(20))
    parts = random_split(ds, [12, 5, 3], generator=newch.Generator().manual_seed(1))
    seen = sorted(p[i][0].item() for p in parts for i in range(len(p)))
    assert [len(p) for p in parts] == [12, 5, 3]
    assert seen == list(range(20))


def test_random_split_fractions_round_robin_the_remainder():
    ds = TensorDataset(newch.arange(10))
    # floor(10 * 0.33) = 3 each, the remaining 1 goes to the first split (as PyTorch)
    parts = random_split(ds, [0.34, 0.33, 0.33])
    assert [len(p) for p in parts] == [4, 3, 3]


def test_random_split_same_generator_seed_same_split():
    ds = TensorDataset(newch.arange(30))
    a = random_split(ds, [10, 20], generator=newch.Generator().manual_seed(7))
    b = random_split(ds, [10, 20], generator=newch.Generator().manual_seed(7))
    assert a[0].indices == b[0].indices
    c = random_split(ds, [10, 20], generator=newch.Generator().manual_seed(8))
    assert a[0].indices != c[0].indices


def test_random_split_bad_lengths():
    ds = TensorDataset(newch.arange(10))
    with pytest.raises(ValueError, match="sum of input lengths"):
        random_split(ds, [3, 3])
    with pytest.raises(ValueError):
        random_split(ds, [-1, 11])


def test_custom_dataset_add_concatenates():
    class Three(Dataset):
        def __len__(self):
            return 3

        def __getitem__(self, i):
            return i

    both = Three() + Three()
    assert len(both) == 6 and [both[i] for i in range(6)] == [0, 1, 2, 0, 1, 2]


def test_random_split_lengths_match_torch():
    torch = pytest.importorskip("torch")
    for n, fr in [(10, [0.34, 0.33, 0.33]), (7, [0.5, 0.5]), (101, [0.8, 0.1, 0.1])]:
        ours = [len(p) for p in random_split(TensorDataset(newch.arange(n)), fr)]
        theirs = [len(p) for p in torch.utils.data.random_split(range(n), fr)]
        assert ours == theirs
