"""Random tensors: distributions (statistics on 100k samples), seeding and thread independence."""
import numpy as np
import pytest

import newch

N = 100_000


def test_randn_is_standard_normal():
    x = newch.randn(N).numpy()
    assert x.dtype == np.float32
    assert abs(x.mean()) < 0.02
    assert abs(x.std() - 1.0) < 0.02
    assert abs((np.abs(x) < 1).mean() - 0.6827) < 0.01


def test_rand_is_uniform_on_0_1():
    x = newch.rand(N, dtype=newch.float64).numpy()
    assert x.dtype == np.float64
    assert x.min() >= 0.0 and x.max() < 1.0
    assert abs(x.mean() - 0.5) < 0.01
    assert abs(x.var() - 1 / 12) < 0.005
    hist = np.histogram(x, bins=10, range=(0, 1))[0]
    assert (np.abs(hist - N / 10) < 0.05 * N / 10).all()


@pytest.mark.parametrize("args, low, high", [((0, 10, (N,)), 0, 10), ((-3, 4, (N,)), -3, 4),
                                             ((5, (N,)), 0, 5)])
def test_randint_covers_low_to_high_exclusive(args, low, high):
    x = newch.randint(*args)
    assert x.dtype is newch.int64 and x.shape == (N,)
    a = x.numpy()
    assert a.min() == low and a.max() == high - 1
    counts = np.bincount(a - low)
    assert (np.abs(counts - N / (high - low)) < 0.05 * N / (high - low)).all()
    assert newch.randint(0, 3, (2, 2), dtype=newch.int32).dtype is newch.int32


def test_randperm_is_a_permutation():
    p = newch.randperm(1000)
    assert p.dtype is newch.int64
    assert sorted(p.tolist()) == list(range(1000))
    assert p.tolist() != list(range(1000))
    assert newch.randperm(0).shape == (0,)


def test_normal_and_uniform_in_place():
    x = newch.empty(N)
    assert x.normal_(2.0, 3.0) is x
    a = x.numpy()
    assert abs(a.mean() - 2.0) < 0.05 and abs(a.std() - 3.0) < 0.05
    x.uniform_(-2.0, 5.0)
    a = x.numpy()
    assert a.min() >= -2.0 and a.max() <= 5.0
    assert abs(a.mean() - 1.5) < 0.05
    assert abs(a.var() - 49 / 12) < 0.1


def test_random_fill_into_a_non_contiguous_view():
    x = newch.zeros(300, 400)
    x.T[::2].normal_()
    a = x.numpy()
    assert (a[:, 1::2] == 0).all()
    filled = a[:, ::2]
    assert abs(filled.mean()) < 0.03 and abs(filled.std() - 1) < 0.03
    x[:, 1::2].uniform_(3.0, 4.0)
    assert (x.numpy()[:, 1::2] >= 3.0).all()


def test_random_into_float64_and_zero_size():
    x = newch.randn(3, 4, dtype=newch.float64)
    assert x.dtype is newch.float64 and x.shape == (3, 4)
    assert newch.randn(0, 5).shape == (0, 5)
    assert newch.rand(()).shape == ()


def test_randn_rejects_integer_dtypes():
    with pytest.raises(TypeError, match="randn"):
        newch.randn(3, dtype=newch.int64)
    with pytest.raises(TypeError, match="normal_"):
        newch.zeros(3, dtype=newch.int64).normal_()


def test_manual_seed_repeats_the_numbers():
    newch.manual_seed(123)
    a = (newch.randn(50).tolist(), newch.rand(5).tolist(), newch.randint(0, 100, (5,)).tolist(),
         newch.randperm(10).tolist(), newch.empty(4).normal_().tolist())
    newch.manual_seed(123)
    b = (newch.randn(50).tolist(), newch.rand(5).tolist(), newch.randint(0, 100, (5,)).tolist(),
         newch.randperm(10).tolist(), newch.empty(4).normal_().tolist())
    assert a == b
    newch.manual_seed(124)
    assert newch.randn(50).tolist() != a[0]


def test_thread_count_does_not_change_random_numbers():
    prev = newch.default_context()
    try:
        out = []
        for threads in (1, 2):
            newch.set_default_context(newch.Context(seed=1, threads=threads))
            out.append((newch.randn(100_000).numpy(), newch.rand(33, 7).numpy()))
            newch.step_end()
        np.testing.assert_array_equal(out[0][0], out[1][0])
        np.testing.assert_array_equal(out[0][1], out[1][1])
    finally:
        newch.set_default_context(prev)
