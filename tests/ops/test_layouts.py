"""Seeded random layouts against numpy: broadcast shapes up to 6 dims, permuted and strided views,
every dtype, for elementwise ops, copies, in-place writes and reductions."""
import numpy as np
import pytest

import newch

DTYPES = [np.float32, np.float64, np.int64, np.int32, np.uint8]


def random_view(rng, shape, dtype):
    """(numpy array, the same as a newch tensor view) with ``shape``, often not contiguous."""
    kind = rng.integers(3)
    if kind == 0 or not shape:
        a = (rng.standard_normal(shape) * 4).astype(dtype)
        return a, newch.tensor(a)
    if kind == 1:
        perm = rng.permutation(len(shape))
        base_shape = tuple(shape[i] for i in perm)
        b = (rng.standard_normal(base_shape) * 4).astype(dtype)
        inv = tuple(np.argsort(perm))
        return b.transpose(inv), newch.tensor(b).permute(inv)
    steps = [int(rng.integers(1, 3)) for _ in shape]
    big = tuple(n * s for n, s in zip(shape, steps))
    b = (rng.standard_normal(big) * 4).astype(dtype)
    idx = tuple(slice(None, None, s) for s in steps)
    return b[idx], newch.tensor(b)[idx]


def random_pair_shapes(rng):
    nd = int(rng.integers(0, 7))
    out = [int(rng.integers(1, 4)) for _ in range(nd)]
    sa = [n if rng.random() < 0.7 else 1 for n in out]
    sb = [n if rng.random() < 0.7 else 1 for n in out]
    sa = sa[int(rng.integers(0, nd + 1)):] if rng.random() < 0.3 else sa
    sb = sb[int(rng.integers(0, nd + 1)):] if rng.random() < 0.3 else sb
    return tuple(sa), tuple(sb)


OPS = {
    "add": (lambda x, y: x + y, np.add),
    "mul": (lambda x, y: x * y, np.multiply),
    "sub": (lambda x, y: x - y, np.subtract),
    "maximum": (newch.maximum, np.maximum),
    "lt": (lambda x, y: x < y, np.less),
    "ne": (lambda x, y: x != y, np.not_equal),
}


@pytest.mark.parametrize("seed", range(12))
def test_random_binary_layouts(seed):
    rng = np.random.default_rng(seed)
    for _ in range(20):
        sa, sb = random_pair_shapes(rng)
        dt = DTYPES[int(rng.integers(len(DTYPES)))]
        a, x = random_view(rng, sa, dt)
        b, y = random_view(rng, sb, dt)
        name = list(OPS)[int(rng.integers(len(OPS)))]
        fn, ref = OPS[name]
        got = fn(x, y)
        want = ref(a, b)
        assert tuple(got.shape) == want.shape, (name, sa, sb)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, err_msg=f"{name} {sa} {sb} {dt}")


@pytest.mark.parametrize("seed", range(6))
def test_random_unary_copy_and_in_place_layouts(seed):
    rng = np.random.default_rng(100 + seed)
    for _ in range(20):
        shape, other = random_pair_shapes(rng)
        a, x = random_view(rng, shape, np.float32)
        np.testing.assert_allclose(newch.tanh(x).numpy(), np.tanh(a), rtol=1e-6, atol=1e-7)
        np.testing.assert_array_equal(x.contiguous().numpy(), a)
        np.testing.assert_array_equal(x.to(newch.int64).numpy(), a.astype(np.int64))
        if np.broadcast_shapes(shape, other) == shape:
            b, y = random_view(rng, other, np.float32)
            x.add_(y)
            np.testing.assert_allclose(x.numpy(), a + b, rtol=1e-6)


@pytest.mark.parametrize("seed", range(6))
def test_random_reduction_layouts(seed):
    rng = np.random.default_rng(200 + seed)
    for _ in range(15):
        nd = int(rng.integers(1, 7))
        shape = tuple(int(rng.integers(1, 5)) for _ in range(nd))
        a, x = random_view(rng, shape, np.float64)
        k = int(rng.integers(1, nd + 1))
        dims = tuple(int(d) for d in rng.choice(nd, size=k, replace=False))
        keep = bool(rng.integers(2))
        np.testing.assert_allclose(x.sum(dims, keepdim=keep).numpy(), a.sum(axis=dims, keepdims=keep),
                                   rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(x.amax(dims, keepdim=keep).numpy(),
                                      a.max(axis=dims, keepdims=keep))
        d = int(rng.integers(nd))
        np.testing.assert_array_equal(x.argmin(d).numpy(), a.argmin(axis=d))
        ai, xi = random_view(rng, shape, np.int32)
        np.testing.assert_array_equal(xi.sum(dims).numpy(), ai.sum(axis=dims, dtype=np.int64))
