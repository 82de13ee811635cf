"""DataLoader: batching, shuffling, samplers, collation, workers, and memory, against references."""
import collections

import numpy as np
import pytest

import newch
from newch.data import (BatchSampler, DataLoader, Dataset, IterableDataset, RandomSampler,
                        SequentialSampler, TensorDataset, WeightedRandomSampler, default_collate,
                        get_worker_info)


def _ds(n=10):
    x = newch.arange(n * 2, dtype=newch.float32).reshape(n, 2)
    return TensorDataset(x, newch.arange(n))


def test_sequential_batches_equal_numpy_slices():
    ref = np.arange(20, dtype=np.float32).reshape(10, 2)
    got = [(x.numpy(), y.tolist()) for x, y in DataLoader(_ds(), batch_size=4)]
    assert [len(y) for _, y in got] == [4, 4, 2]
    np.testing.assert_array_equal(np.concatenate([x for x, _ in got]), ref)
    assert sum((y for _, y in got), []) == list(range(10))


def test_drop_last_and_len():
    dl = DataLoader(_ds(10), batch_size=4, drop_last=True)
    assert len(dl) == 2 and [len(y) for _, y in dl] == [4, 4]
    assert len(DataLoader(_ds(10), batch_size=4)) == 3


def test_shuffle_is_a_permutation_and_follows_the_generator():
    def order(seed):
        g = newch.Generator().manual_seed(seed)
        return sum((y.tolist() for _, y in DataLoader(_ds(), batch_size=3, shuffle=True,
                                                      generator=g)), [])
    a = order(1)
    assert sorted(a) == list(range(10)) and a != list(range(10))
    assert order(1) == a and order(2) != a


def test_shuffle_differs_between_epochs():
    dl = DataLoader(_ds(50), batch_size=50, shuffle=True, generator=newch.Generator().manual_seed(0))
    e1, e2 = [y.tolist() for _, y in dl], [y.tolist() for _, y in dl]
    assert e1 != e2 and sorted(e1[0]) == sorted(e2[0])


def test_sampler_and_batch_sampler():
    dl = DataLoader(_ds(), batch_size=2, sampler=[9, 0, 5])
    assert [y.tolist() for _, y in dl] == [[9, 0], [5]]
    dl = DataLoader(_ds(), batch_sampler=[[1, 2, 3], [7]])
    assert [y.tolist() for _, y in dl] == [[1, 2, 3], [7]]
    assert len(dl) == 2


def test_argument_conflicts_raise_value_error_like_torch():
    with pytest.raises(ValueError, match="mutually exclusive with shuffle"):
        DataLoader(_ds(), sampler=[0], shuffle=True)
    with pytest.raises(ValueError, match="batch_sampler"):
        DataLoader(_ds(), batch_sampler=[[0]], batch_size=2)
    with pytest.raises(ValueError, match="batch_size"):
        DataLoader(_ds(), batch_size=0)
    with pytest.raises(ValueError, match="num_workers"):
        DataLoader(_ds(), num_workers=-1)


def test_batch_size_none_yields_items_uncollated():
    items = list(DataLoader(_ds(3), batch_size=None))
    assert len(items) == 3 and items[1][1].item() == 1 and items[1][0].tolist() == [2.0, 3.0]


def test_collate_fn_is_used():
    dl = DataLoader(_ds(4), batch_size=2, collate_fn=lambda items: len(items))
    assert list(dl) == [2, 2]


def test_default_collate_kinds():
    Point = collections.namedtuple("Point", "a b")
    batch = default_collate([{"x": np.ones(2, np.float32), "n": 1, "f": 0.5, "s": "u",
                              "p": Point(1, 2.0), "t": (newch.tensor(1.0), True)},
                             {"x": np.zeros(2, np.float32), "n": 2, "f": 1.5, "s": "v",
                              "p": Point(3, 4.0), "t": (newch.tensor(2.0), False)}])
    assert batch["x"].tolist() == [[1.0, 1.0], [0.0, 0.0]] and batch["x"].dtype == newch.float32
    assert batch["n"].dtype == newch.int64 and batch["n"].tolist() == [1, 2]
    assert batch["f"].dtype == newch.float64
    assert batch["s"] == ["u", "v"]
    assert isinstance(batch["p"], Point) and batch["p"].a.tolist() == [1, 3]
    assert batch["t"][0].tolist() == [1.0, 2.0] and batch["t"][1].dtype == newch.bool


def test_default_collate_refuses_ragged_and_unknown():
    with pytest.raises(RuntimeError, match="equal size"):
        default_collate([(1, 2), (1,)])
    with pytest.raises(TypeError, match="default_collate"):
        default_collate([object(), object()])


def test_default_collate_matches_torch():
    torch = pytest.importorskip("torch")
    from torch.utils.data import default_collate as tc
    items = [(np.arange(3, dtype=np.float32) + i, i, float(i)) for i in range(4)]
    ours, theirs = default_collate(items), tc(items)
    for o, t in zip(ours, theirs):
        np.testing.assert_array_equal(o.numpy(), t.numpy())
        assert str(o.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]


class _Squares(Dataset):
    def __len__(self):
        return 17

    def __getitem__(self, i):
        return newch.tensor([float(i * i)]), i


def test_generic_dataset_is_collated():
    got = list(DataLoader(_Squares(), batch_size=5))
    assert [y.tolist() for _, y in got][-1] == [15, 16]
    assert got[0][0].tolist() == [[0.0], [1.0], [4.0], [9.0], [16.0]]


def test_workers_give_the_same_batches_as_the_main_thread():
    ref = [(x.tolist(), y.tolist()) for x, y in DataLoader(_Squares(), batch_size=4)]
    got = [(x.tolist(), y.tolist()) for x, y in DataLoader(_Squares(), batch_size=4,
                                                           num_workers=2)]
    assert got == ref


def test_worker_info_is_none_in_the_main_thread():
    assert get_worker_info() is None


class _Stream(IterableDataset):
    def __iter__(self):
        return iter(range(7))


def test_iterable_dataset_batches():
    assert [b.tolist() for b in DataLoader(_Stream(), batch_size=3)] == [[0, 1, 2], [3, 4, 5], [6]]
    assert [b.tolist() for b in DataLoader(_Stream(), batch_size=3, drop_last=True)] == \
        [[0, 1, 2], [3, 4, 5]]
    with pytest.raises(ValueError, match="IterableDataset"):
        DataLoader(_Stream(), shuffle=True)


def test_samplers():
    assert list(SequentialSampler(range(3))) == [0, 1, 2]
    r = list(RandomSampler(range(6), generator=newch.Generator().manual_seed(0)))
    assert sorted(r) == list(range(6))
    r = list(RandomSampler(range(3), replacement=True, num_samples=50,
                           generator=newch.Generator().manual_seed(0)))
    assert len(r) == 50 and set(r) <= {0, 1, 2}
    w = list(WeightedRandomSampler([0, 0, 1, 0], 10, generator=newch.Generator().manual_seed(0)))
    assert w == [2] * 10
    assert list(BatchSampler(range(5), 2, True)) == [[0, 1], [2, 3]]


def test_batches_are_temporaries_and_a_loop_without_step_end_stays_bounded():
    with newch.persistent():
        x = newch.randn(512, 32)
        y = newch.arange(512)
    ds = TensorDataset(x, y)
    persistent = newch.mem_stats()["persistent_bytes"]
    dl = DataLoader(ds, batch_size=64, shuffle=True)
    reserved = []
    for epoch in range(30):
        for xb, yb in dl:
            assert not xb.is_persistent
            (xb * 2).sum().item()
        reserved.append(newch.mem_stats()["arena_bytes_reserved"])
    assert len(set(reserved[1:])) == 1            # no growth after the first epoch
    assert newch.mem_stats()["arena_bytes_in_use"] < 64 * 32 * 4 * 4
    assert newch.mem_stats()["persistent_bytes"] == persistent   # the dataset is never copied


def test_batches_die_at_step_end():
    xb, yb = next(iter(DataLoader(_ds(), batch_size=2)))
    newch.step_end()
    with pytest.raises(newch.NcError):
        xb.sum()
