"""The step arena on its own: alignment, reuse, coalescing, growth, O(1) step_end, scopes, trim."""
import sys

import numpy as np
import pytest

from newch.errors import NcError
from newch.memory import ALIGN, Arena, PersistentPool
from newch.memory.budget import Budget


def addr(st):
    return st.buf.ctypes.data


def test_every_allocation_is_64_byte_aligned_and_rounded():
    a = Arena(block_bytes=4096)
    sts = [a.alloc(n) for n in (1, 63, 64, 65, 100, 1000, 0)]
    for st in sts:
        assert addr(st) % ALIGN == 0
        assert st.nbytes % ALIGN == 0 and st.nbytes >= ALIGN
    assert a.in_use == sum(st.nbytes for st in sts)


def test_allocations_do_not_overlap():
    a = Arena(block_bytes=4096)
    sts = [a.alloc(n) for n in np.random.default_rng(0).integers(1, 700, 50)]
    spans = sorted((addr(s), addr(s) + s.nbytes) for s in sts)
    for (s0, e0), (s1, _) in zip(spans, spans[1:]):
        assert e0 <= s1


def test_freed_region_is_reused_within_the_step():
    a = Arena(block_bytes=1 << 16)
    keep1 = a.alloc(256)
    mid = a.alloc(512)
    keep2 = a.alloc(256)
    where = addr(mid)
    del mid                       # last reference gone: back to the free list
    assert a.in_use == 512
    again = a.alloc(512)
    assert addr(again) == where
    assert keep1.gen.alive and keep2.gen.alive


def test_neighbouring_free_regions_coalesce():
    a = Arena(block_bytes=1 << 16)
    a0 = a.alloc(128)
    x, y, z = a.alloc(128), a.alloc(128), a.alloc(128)
    guard = a.alloc(64)
    base = addr(x)
    del x, z
    del y                        # joins both neighbours into one 384-byte region
    assert a.scopes[0].free == [(0, 128, 384)]
    big = a.alloc(384)
    assert addr(big) == base
    assert a0.gen.alive and guard.gen.alive


def test_freeing_the_top_lowers_the_bump_pointer():
    a = Arena(block_bytes=1 << 16)
    x = a.alloc(64)
    y = a.alloc(128)
    del y
    assert a.top == 64
    del x
    assert a.top == 0 and a.in_use == 0


def test_growth_adds_blocks_and_never_moves_live_data():
    a = Arena(block_bytes=1024)
    first = a.alloc(512)
    first.buf[:] = 7
    big = a.alloc(5000)          # larger than a block: gets its own block
    more = [a.alloc(700) for _ in range(5)]
    assert len(a.blocks) >= 3
    assert np.all(first.buf == 7)
    assert a.reserved == sum(len(b) for b in a.blocks)
    assert big.nbytes >= 5000 and all(m.gen.alive for m in more)


def _calls_during(fn):
    count = [0]

    def prof(frame, event, arg):
        if event in ("call", "c_call"):
            count[0] += 1
    sys.setprofile(prof)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return count[0]


@pytest.mark.parametrize("n", [10, 100_000])
def test_step_end_does_the_same_work_for_10_or_100000_live_tensors(n):
    a = Arena(block_bytes=1 << 20)
    live = [a.alloc(64) for _ in range(n)]
    calls = _calls_during(a.step_end)
    # NOTE: the work is counted in function calls, not timed: step_end flips one
    # generation flag and rewinds a pointer, so the count is a small constant (the
    # thread guard's lock and in-flight check included).
    assert calls == _calls_during(Arena(block_bytes=1 << 20).step_end)
    assert calls < 20
    assert not live[0].gen.alive and not live[-1].gen.alive
    assert a.in_use == 0 and a.top == 0 and a.cur == 0


def test_step_end_kills_all_and_next_step_reuses_the_same_memory():
    a = Arena(block_bytes=1 << 16)
    x = a.alloc(1000)
    where = addr(x)
    reserved = a.reserved
    a.step_end()
    assert not x.gen.alive and x.gen.step == 0
    y = a.alloc(1000)
    assert addr(y) == where and a.reserved == reserved and y.gen.step == 1
    del x                        # a dead storage's bytes are not freed twice
    assert a.in_use == y.nbytes


def test_nested_scope_frees_only_what_it_made():
    a = Arena(block_bytes=1 << 16)
    outer = a.alloc(256)
    a.push_scope()
    inner = a.alloc(256)
    a.step_end()
    assert outer.gen.alive and not inner.gen.alive
    inner2 = a.alloc(256)
    assert addr(inner2) == addr(inner)
    a.pop_scope()
    assert outer.gen.alive and not inner2.gen.alive
    assert a.in_use == outer.nbytes
    with pytest.raises(NcError):
        a.pop_scope()


def test_peak_tracks_the_most_in_use():
    a = Arena(block_bytes=1 << 16)
    x = a.alloc(1024)
    y = a.alloc(2048)
    del x, y
    z = a.alloc(64)
    assert a.peak == 3072 and a.in_use == 64
    del z


def test_trim_gives_unused_blocks_back():
    a = Arena(block_bytes=1024)
    sts = [a.alloc(1000) for _ in range(4)]
    assert a.reserved == 4096
    del sts
    a.step_end()
    assert a.trim() == 4096
    assert a.reserved == 0 and a.blocks == []
    keep = a.alloc(100)
    spare = [a.alloc(1000) for _ in range(3)]
    del spare
    a.trim()
    assert keep.gen.alive and a.reserved == 1024


def test_limit_refuses_with_asked_in_use_and_limit():
    b = Budget(limit=3000)
    a = Arena(block_bytes=1024, budget=b)
    pool = PersistentPool(b)
    p = pool.alloc(1000)
    x = a.alloc(1000)
    with pytest.raises(NcError) as e:
        a.alloc(1500)
    msg = str(e.value)
    assert "1536 bytes" in msg and "limit 3000" in msg and "1024 arena bytes" in msg
    assert "1000 persistent" in msg
    assert x.gen.alive and p.gen.alive and a.in_use == 1024
    with pytest.raises(NcError, match="persistent memory"):
        pool.alloc(2000)


def test_pool_counts_bytes_and_frees_on_last_reference_and_release():
    pool = PersistentPool()
    s1 = pool.alloc(100)
    s2 = pool.alloc(50)
    assert pool.bytes == 150 and addr(s1) % ALIGN == 0
    del s1
    assert pool.bytes == 50
    s2.release()
    assert pool.bytes == 0 and not s2.gen.alive and s2.gen.how == "release()"
    del s2
    assert pool.bytes == 0
