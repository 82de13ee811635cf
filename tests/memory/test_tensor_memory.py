"""The memory model as tensors see it: stale temporaries, persistent(), release(), numpy(), limits."""
import gc
import weakref

import numpy as np
import pytest

import newch
from newch import NcError


STALE_PATHS = {
    "op input": lambda x: x.sum(),
    "binary op input": lambda x: x + 1,
    "other operand": lambda x: newch.ones(3) * x,
    "in-place op": lambda x: x.add_(1),
    "in-place op target of copy": lambda x: x.copy_(newch.ones(3)),
    "item": lambda x: x[0].item(),
    "numpy": lambda x: x.numpy(),
    "tolist": lambda x: x.tolist(),
    "repr": lambda x: repr(x),
    "str": lambda x: str(x),
    "indexing": lambda x: x[1],
    "setitem": lambda x: x.__setitem__(0, 5.0),
    "matmul": lambda x: x @ x,
    "reshape": lambda x: x.reshape(3, 1),
    "bool": lambda x: bool(x[0]),
    "float": lambda x: float(x[0]),
}


@pytest.mark.parametrize("path", sorted(STALE_PATHS))
def test_stale_temporary_raises_on_every_path(ctx, path):
    x = newch.randn(3)
    newch.step_end()
    with pytest.raises(NcError) as e:
        STALE_PATHS[path](x)
    msg = str(e.value)
    assert "step 0" in msg and "step_end()" in msg and "persistent()" in msg


def test_stale_after_release_names_release(ctx):
    x = newch.randn(3)
    newch.release(x)
    with pytest.raises(NcError, match=r"release\(\)"):
        x.sum()


def test_view_of_stale_tensor_is_stale_too(ctx):
    x = newch.randn(4, 4)
    v = x[1:3]
    newch.step_end()
    with pytest.raises(NcError):
        v.sum()
    assert tuple(v.shape) == (2, 4)         # metadata stays readable


def test_persistent_block_survives_step_end(ctx):
    with newch.persistent():
        data = newch.randn(100, 4)
        mean = data.mean(0)
    expected = data.numpy().astype(np.float64).mean(0)
    before = newch.mem_stats()["persistent_bytes"]
    assert before >= 100 * 4 * 4 + 4 * 4
    newch.step_end()
    np.testing.assert_allclose(mean.numpy(), expected, rtol=1e-6, atol=1e-7)
    assert mean.is_persistent and not newch.randn(2).is_persistent


def test_release_frees_persistent_bytes_at_once(ctx):
    with newch.persistent():
        big = newch.zeros(1000)
        view = big[10:20]
    b0 = newch.mem_stats()["persistent_bytes"]
    newch.release(big)
    assert newch.mem_stats()["persistent_bytes"] == b0 - 4000
    with pytest.raises(NcError):
        view.sum()
    assert tuple(big.shape) == (1000,)


def test_persistent_memory_freed_when_last_reference_goes(ctx):
    with newch.persistent():
        x = newch.ones(256)
    b = newch.mem_stats()["persistent_bytes"]
    y = x[:10]
    del x
    assert newch.mem_stats()["persistent_bytes"] == b          # view y keeps it
    del y
    assert newch.mem_stats()["persistent_bytes"] == b - 1024


def test_release_of_a_temporary_returns_it_to_the_arena(ctx):
    keep = newch.ones(16)
    x = newch.ones(1024)
    used = newch.mem_stats()["arena_bytes_in_use"]
    newch.release(x)
    assert newch.mem_stats()["arena_bytes_in_use"] == used - 4096
    assert keep.sum().item() == 16


def test_numpy_copies_temporaries_and_views_persistent(ctx):
    t = newch.zeros(3)
    a = t.numpy()
    a[0] = 5
    assert t[0].item() == 0
    with newch.persistent():
        p = newch.zeros(3)
    b = p.numpy()
    b[0] = 5
    assert p[0].item() == 5


def test_from_numpy_shares_memory_and_is_persistent(ctx):
    arr = np.arange(6, dtype=np.float32)
    t = newch.from_numpy(arr)
    arr[0] = 42
    assert t[0].item() == 42 and t.is_persistent
    newch.step_end()
    assert t.sum().item() == 42 + 15


def test_unreferenced_temporaries_are_reused_within_a_step(ctx):
    x = newch.randn(256, 256)
    for _ in range(3):
        y = (x * 2).exp()
    reserved = newch.mem_stats()["arena_bytes_reserved"]
    for _ in range(200):
        y = (x * 2 + 1).exp().sum()
    del y
    assert newch.mem_stats()["arena_bytes_reserved"] == reserved
    assert newch.mem_stats()["arena_bytes_in_use"] == x.numel() * 4


def test_mem_stats_keys_and_peak(ctx):
    ctx.reset_peak()
    x = newch.ones(1000)
    y = x + 1
    del y
    s = newch.mem_stats()
    for k in ("arena_bytes_in_use", "arena_peak_bytes", "arena_bytes_reserved", "persistent_bytes"):
        assert isinstance(s[k], int)
    assert s["arena_bytes_in_use"] == 4032          # 4000 rounded up to 64
    assert s["arena_peak_bytes"] == 2 * 4032
    ctx.reset_peak()
    assert newch.mem_stats()["arena_peak_bytes"] == 4032


def test_memory_limit_error_leaves_tensors_and_arena_intact():
    c = newch.Context(memory_limit=2 << 20, block_bytes=1 << 20)
    prev = newch.set_default_context(c)
    try:
        x = newch.ones(1000)
        used = newch.mem_stats()["arena_bytes_in_use"]
        with pytest.raises(NcError) as e:
            newch.zeros(1 << 20)            # 4 MiB > 2 MiB limit
        msg = str(e.value)
        assert "4194304 bytes" in msg and "limit 2097152" in msg
        assert newch.mem_stats()["arena_bytes_in_use"] == used
        assert x.sum().item() == 1000
    finally:
        newch.set_default_context(prev)


def test_dropping_a_context_frees_its_arena_blocks():
    c = newch.Context()
    prev = newch.set_default_context(c)
    x = newch.ones(1 << 16)
    blocks = [weakref.ref(b) for b in c.arena.blocks]
    assert blocks
    newch.set_default_context(prev)
    del x, c
    assert all(b() is None for b in blocks)     # no cycle: freed by reference counting
    gc.collect()


def test_trim_gives_memory_back(ctx):
    x = newch.ones(4 << 20)                     # 16 MiB: its own block
    del x
    newch.step_end()
    reserved = newch.mem_stats()["arena_bytes_reserved"]
    freed = ctx.trim()
    assert freed == reserved and newch.mem_stats()["arena_bytes_reserved"] == 0
