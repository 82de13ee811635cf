"""The short paths a tiny op takes (ops/pointwise.py, ops/alloc.py, memory/arena.py, layout.nd_views):
same results as the general path, and every memory check still in force."""
import numpy as np
import pytest

import newch
from newch.errors import NcError
from newch.ops import layout


def _tensor(values, dtype=None, persistent=False):
    if persistent:
        with newch.persistent():
            return newch.tensor(values, dtype=dtype)
    return newch.tensor(values, dtype=dtype)


@pytest.mark.parametrize("dtype", [newch.float32, newch.float64, newch.int64, newch.int32,
                                   newch.uint8])
def test_same_shape_fast_path_matches_numpy(dtype, rng):
    a = rng.integers(0, 9, (3, 5)).astype(dtype.np)
    b = rng.integers(1, 9, (3, 5)).astype(dtype.np)
    x, y = newch.tensor(a), newch.tensor(b)
    for got, want in ((x + y, a + b), (x * y, a * b), (x - y, a - b)):
        assert got.dtype is dtype
        np.testing.assert_array_equal(got.numpy(), want)
    assert (x < y).dtype is newch.bool
    np.testing.assert_array_equal((x < y).numpy(), a < b)


def test_float_tensor_and_number_fast_path(rng):
    a = rng.standard_normal(7).astype(np.float32)
    x = newch.tensor(a)
    np.testing.assert_array_equal((x * 2.0).numpy(), a * np.float32(2.0))
    np.testing.assert_array_equal((x + 3).numpy(), a + np.float32(3))
    np.testing.assert_array_equal((x - 0.1).numpy(), a - np.float32(0.1))
    np.testing.assert_array_equal((x / 3.0).numpy(), a / np.float32(3.0))
    assert (x * 2.0).dtype is newch.float32
    d = newch.tensor(a.astype(np.float64))
    assert (d * 2.0).dtype is newch.float64
    np.testing.assert_array_equal((d * 0.1).numpy(), a.astype(np.float64) * 0.1)


def test_numbers_on_integer_and_bool_tensors_keep_promotion():
    """Not the fast path (float tensors only): promotion and wrap-around as before."""
    i = newch.tensor([1, 2, 3])
    assert (i * 2.0).dtype is newch.float32
    assert (i * 2).dtype is newch.int64
    u = newch.tensor([1, 2], dtype=newch.uint8)
    assert (u + 300).tolist() == [45, 46]          # 300 wraps to 44 in uint8, as PyTorch
    b = newch.tensor([True, False])
    assert (b + 1).tolist() == [2, 1]
    assert (b * 1.5).dtype is newch.float32


def test_mixed_dtypes_and_layouts_still_promote_and_broadcast():
    x = newch.ones(2, 3)
    assert (x + newch.ones(2, 3, dtype=newch.float64)).dtype is newch.float64
    assert (x + newch.tensor(1.0, dtype=newch.float64)).dtype is newch.float32   # 0-d: no say
    t = newch.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal((t.t() + t.t()).numpy(), 2 * np.arange(6.0).reshape(2, 3).T)
    np.testing.assert_array_equal((t + newch.tensor([1.0, 2.0, 3.0])).numpy(),
                                  np.arange(6.0).reshape(2, 3) + [1, 2, 3])


@pytest.mark.parametrize("expr", [lambda x: x + x, lambda x: x * 2.0, lambda x: x - 1,
                                  lambda x: x.relu(), lambda x: x < x])
def test_stale_tensor_raises_through_the_fast_path(expr):
    x = newch.ones(10)
    expr(x)                        # warm: the fast path is the one taken
    newch.step_end()
    with pytest.raises(NcError, match="step_end"):
        expr(x)


def test_released_tensor_raises_through_the_fast_path():
    x = _tensor([1.0, 2.0], persistent=True)
    y = x + x
    assert y.tolist() == [2.0, 4.0]
    newch.release(x)
    with pytest.raises(NcError, match="release"):
        x + x
    with pytest.raises(NcError, match="release"):
        x * 2.0


def test_one_stale_operand_is_enough():
    p = _tensor([1.0, 2.0], persistent=True)
    t = newch.ones(2)
    newch.step_end()
    with pytest.raises(NcError):
        p + t
    with pytest.raises(NcError):
        t + p


def test_fast_path_records_the_graph_only_when_asked():
    w = _tensor([1.0, 2.0, 3.0], persistent=True).requires_grad_()
    y = w * w
    assert y.requires_grad and y.grad_fn is not None
    y.sum().backward()
    assert w.grad.tolist() == [2.0, 4.0, 6.0]
    with newch.no_grad():
        z = w * w
    assert not z.requires_grad and z.grad_fn is None
    c = _tensor([1.0, 2.0, 3.0], persistent=True)
    assert (c * c).grad_fn is None and (c * 2.0).grad_fn is None


def test_in_place_ops_still_bump_versions():
    x = newch.ones(4)
    v = x._s.version
    x += 1.0
    x.mul_(2.0)
    assert x._s.version == v + 2
    assert x.tolist() == [4.0] * 4


def test_in_place_change_of_a_saved_input_is_caught():
    w = _tensor([1.0, 2.0], persistent=True).requires_grad_()
    a = w * 1.0
    y = a * a                       # saves a
    with newch.no_grad():
        a += 1.0
    with pytest.raises(RuntimeError, match="modified|in place|in-place"):
        y.sum().backward()


def test_results_come_from_the_current_context():
    ctx = newch.Context(seed=0)
    x = _tensor([1.0, 2.0], persistent=True)
    with ctx:
        before = ctx.mem_stats()["arena_bytes_in_use"]
        y = x + x
        z = x * 3.0
        assert ctx.mem_stats()["arena_bytes_in_use"] >= before + 128
    assert y._s.owner is ctx.arena and z._s.owner is ctx.arena
    ctx.step_end()
    with pytest.raises(NcError):
        y + y


def test_arena_reuses_the_bytes_of_a_dropped_result():
    ctx = newch.Context(seed=0)
    with ctx:
        x = newch.ones(1000)
        used = ctx.mem_stats()["arena_bytes_in_use"]
        for _ in range(50):
            x + x                   # each result dies at once: its bytes come back
        assert ctx.mem_stats()["arena_bytes_in_use"] == used
        keep = [x + x for _ in range(3)]
        assert ctx.mem_stats()["arena_bytes_in_use"] == used + 3 * 4032
        del keep
        assert ctx.mem_stats()["arena_bytes_in_use"] == used


def test_nd_views_cache_keys_on_strides(rng):
    """Same shapes, different strides: the cached merged layout of one must not serve the other."""
    a = rng.standard_normal((4, 6))
    c = np.ascontiguousarray(a)
    f = np.asfortranarray(a)
    s = a[:, ::2]
    for src in (c, f, c, f, s):
        out = np.zeros(src.shape)
        (views,) = list(layout.nd_views(out.shape, [src, out]))
        views[1][...] = views[0]            # the views walk both arrays element for element
        np.testing.assert_array_equal(out, src)
    row = rng.standard_normal(6)
    out = np.zeros((4, 6))
    (views,) = list(layout.nd_views((4, 6), [row, out]))
    assert views[0].strides[-2:] == (0, 8)
    views[1][...] = views[0]
    np.testing.assert_array_equal(out, np.broadcast_to(row, (4, 6)))


def test_nd_views_of_many_dims_and_read_only_memory():
    big = np.arange(2 * 3 * 2 * 3 * 2 * 3, dtype=np.float64).reshape(2, 3, 2, 3, 2, 3)
    src = big.transpose(1, 0, 3, 2, 5, 4)       # no dims merge: more than 4 remain
    out = np.empty(src.shape)
    for views in layout.nd_views(out.shape, [src, out]):
        views[1][...] = views[0]
    np.testing.assert_array_equal(out, src)
    ro = np.arange(6.0)
    ro.flags.writeable = False
    (views,) = list(layout.nd_views((6,), [ro]))
    assert not views[0].flags.writeable


def test_binary_ops_through_views_match_numpy(rng):
    a = rng.standard_normal((5, 4)).astype(np.float32)
    b = rng.standard_normal((4, 5)).astype(np.float32)
    x, y = newch.tensor(a), newch.tensor(b)
    for _ in range(2):          # the second round runs on cached layouts
        np.testing.assert_array_equal((x + y.t()).numpy(), a + b.T)
        np.testing.assert_array_equal((x.t() * y).numpy(), a.T * b)
        np.testing.assert_array_equal((x[:, 1:] - x[:, :3]).numpy(), a[:, 1:] - a[:, :3])


def test_serial_loop_matches_the_checked_entry_points(rng):
    """``kernels.serial_loop`` (what tiny ops call) gives the bits of ``binary`` / ``unary``."""
    from newch.context import default_context
    from newch.kernels import codes as C
    K = default_context().kernels
    a = rng.standard_normal(37).astype(np.float32)
    b = rng.standard_normal(37).astype(np.float32)
    for code in (C.ADD, C.MUL, C.DIV, C.LT):
        want = np.empty(37, np.bool_ if code == C.LT else np.float32)
        got = np.empty_like(want)
        K.binary(code, a, b, want)
        K.serial_loop("binary", code, a, got)(a, b, got, 0, 37)
        assert np.array_equal(got, want)
        K.binary_scalar(code, a, np.float32(0.5), want)
        K.serial_loop("binary_scalar", code, a, got)(a, np.float32(0.5), got, 0, 37)
        assert np.array_equal(got, want)
    want, got = np.empty(37, np.float32), np.empty(37, np.float32)
    K.unary(C.EXP, a, want)
    K.serial_loop("unary", C.EXP, a, got)(a, got, 0, 37)
    assert np.array_equal(got, want)
    with pytest.raises(ValueError):
        K.serial_loop("binary", C.ADD, a.reshape(37, 1), got)
    with pytest.raises(ValueError):
        K.serial_loop("nope", C.ADD, a, got)
