"""Indexing kernels against their numpy twins (bit for bit), and determinism across threads."""

import numpy as np
import pytest
numba = pytest.importorskip("numba", reason="JIT kernel tests need numba (not installed: the ref backend is tested elsewhere)")
from .thread_check import outputs_on_1_and_2_threads, run_1_3_4_threads

from newch.kernels import indexing as K
from newch.kernels.ref import indexing as REF

DTYPES = [np.float32, np.float64, np.int32, np.int64, np.uint8, np.bool_]
# (O, D, I, J): zero sizes, odd sizes, I == 1, and sizes past the serial threshold.
SHAPES = [(0, 3, 4, 2), (2, 3, 0, 2), (2, 3, 4, 0), (1, 1, 1, 1), (3, 5, 1, 7), (2, 9, 33, 4),
          (1, 50, 700, 60), (300, 4, 3, 50), (2, 7, 4099, 5)]


def values(rng, shape, dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(0, 100, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def strided(x):
    """A non-contiguous view equal to x (every other element of a wider last axis)."""
    big = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), x.dtype)
    big[..., ::2] = x
    return big[..., ::2]


def transposed(x):
    """A non-contiguous view equal to the 3-D x, stored with the axes reversed."""
    big = np.zeros((x.shape[2], x.shape[1], x.shape[0] + 1), x.dtype)
    big[:, :, :x.shape[0]] = x.transpose(2, 1, 0)
    return big[:, :, :x.shape[0]].transpose(2, 1, 0)


def layouts(x):
    return [x, strided(x), transposed(x)]


def both(fn_name, make_args):
    """Run kernel fn_name of both backends on fresh arguments; return both argument lists."""
    got, want = make_args(), make_args()
    getattr(K, fn_name)(*got)
    getattr(REF, fn_name)(*want)
    return got, want


def assert_same(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype", DTYPES)
def test_index_select_and_gather(dtype):
    rng = np.random.default_rng(1)
    for O, D, I, J in SHAPES:
        x = values(rng, (O, D, I), dtype)
        idx = rng.integers(0, D, size=J)
        gidx = rng.integers(0, D, size=(O, J, I))
        for xv in layouts(x):
            got, want = both("index_select_3d", lambda: (xv, idx, np.zeros((O, J, I), dtype)))
            assert_same(got[2], want[2])
            for iv in (gidx, transposed(gidx)):
                got, want = both("gather_3d", lambda: (xv, iv, np.zeros((O, J, I), dtype)))
                assert_same(got[2], want[2])


@pytest.mark.parametrize("dtype", DTYPES)
def test_index_add_and_scatter_add(dtype):
    rng = np.random.default_rng(2)
    for O, D, I, J in SHAPES:
        base = values(rng, (O, D, I), dtype)
        src = values(rng, (O, J, I), dtype)
        # NOTE: few distinct targets, so duplicates are common and their order matters.
        idx = rng.integers(0, min(D, 3), size=J)
        sidx = rng.integers(0, min(D, 3), size=(O, J, I))
        for sv in (src, strided(src), transposed(src)):
            got, want = both("index_put_3d", lambda: (base.copy(), idx, sv, True))
            assert_same(got[0], want[0])
            got, want = both("scatter_add_3d", lambda: (base.copy(), transposed(sidx), sv))
            assert_same(got[0], want[0])


@pytest.mark.parametrize("dtype", DTYPES)
def test_index_put(dtype):
    rng = np.random.default_rng(3)
    for O, D, I, J in SHAPES:
        base = values(rng, (O, D, I), dtype)
        src = values(rng, (O, J, I), dtype)
        idx = rng.integers(0, min(D, 3), size=J)
        for accumulate in (False, True):
            for make in (np.copy, strided, transposed):
                got, want = both("index_put_3d",
                                 lambda: (make(base), idx, transposed(src), accumulate))
                assert_same(got[0], want[0])


def test_index_put_last_duplicate_wins():
    dst = np.zeros((1, 3, 2), np.float32)
    src = np.arange(8, dtype=np.float32).reshape(1, 4, 2)
    K.index_put_3d(dst, np.array([2, 0, 2, 2]), src, False)
    assert dst[0].tolist() == [[2, 3], [0, 0], [6, 7]]
    K.index_put_3d(dst, np.array([1, 1, 1, 1]), src, True)
    assert dst[0, 1].tolist() == [12, 16]


@pytest.mark.parametrize("dtype", DTYPES)
def test_masks(dtype):
    rng = np.random.default_rng(4)
    for n in (0, 1, 7, 40000, 100003):
        x = values(rng, n, dtype)
        mask = rng.random(n) < 0.3
        got, want = both("mask_count", lambda: (mask, np.full(1, -1, np.int64)))
        assert got[1][0] == want[1][0] == mask.sum()
        count = int(mask.sum())
        got, want = both("masked_select", lambda: (x, mask, np.zeros(count, dtype)))
        assert_same(got[2], want[2])
    value = values(rng, 1, dtype)[0]
    for shape in [(0, 2, 3, 4), (2, 3, 5, 1), (3, 1, 7, 9), (4, 5, 60, 70), (1, 1, 1, 70001)]:
        dst = values(rng, shape, dtype)
        full = rng.random(shape) < 0.4
        row = np.broadcast_to(rng.random(shape[:1] + (1, 1) + shape[3:]) < 0.4, shape)
        assert 0 in row.strides
        for make in (np.copy, strided):
            for mask in (full, row, strided(full)):
                got, want = both("masked_fill_nd", lambda: (make(dst), mask, value))
                assert_same(got[0], want[0])


def test_masked_fill_writes_in_place_through_view():
    base = np.zeros((1, 1, 2, 6), np.float64)
    view = base[..., ::2]
    K.masked_fill_nd(view, np.ones(view.shape, np.bool_), np.float64(5.0))
    assert base[0, 0].tolist() == [[5, 0, 5, 0, 5, 0]] * 2


def det_outputs():
    """Every parallel kernel on inputs past the serial threshold, with many duplicates, as bytes."""
    rng = np.random.default_rng(7)
    res = []
    for O, D, I, J in [(1, 5, 1, 200001), (3, 4, 700, 90), (500, 6, 3, 40)]:
        x = rng.standard_normal((O, D, I)).astype(np.float32)
        src = rng.standard_normal((O, J, I)).astype(np.float32)
        idx = rng.integers(0, D, size=J)
        sidx = rng.integers(0, D, size=(O, J, I))
        out = np.zeros((O, J, I), np.float32)
        K.index_select_3d(x, idx, out)
        res.append(out.tobytes())
        K.gather_3d(x, sidx, out)
        res.append(out.tobytes())
        for fn, args in ((K.scatter_add_3d, (sidx, src)), (K.index_put_3d, (idx, src, True))):
            acc = x.copy()
            fn(acc, *args)
            res.append(acc.tobytes())
    dst = rng.standard_normal((4, 5, 60, 70))
    K.masked_fill_nd(dst, dst > 0.5, np.float64(-1.0))
    res.append(dst.tobytes())
    return res


def test_determinism_one_vs_two_threads():
    one, two = outputs_on_1_and_2_threads(det_outputs)
    assert one == two


def test_determinism_subprocess_1_3_4_threads():
    res = run_1_3_4_threads("test_indexing")
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip().endswith("SAME"), res.stdout
