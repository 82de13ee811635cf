"""Memory limits: unit strings, NEWCH_MEMORY_LIMIT, trimming idle arena blocks before refusing."""
import os
import subprocess
import sys

import numpy as np
import pytest

import newch
from newch.errors import NcError
from newch.memory.budget import parse_bytes

MiB = 1 << 20


@pytest.mark.parametrize("text, n", [
    ("512MiB", 512 * 2**20), ("1GiB", 2**30), ("500MB", 500 * 10**6), ("1GB", 10**9),
    ("4KiB", 4096), ("4KB", 4000), ("123B", 123), ("123", 123), (" 2 mib ", 2 * 2**20),
    ("1.5KiB", 1536), ("2TB", 2 * 10**12), ("1TiB", 2**40),
])
def test_unit_strings_are_powers_of_1024_or_1000(text, n):
    assert parse_bytes(text) == n


def test_ints_pass_through_and_numpy_ints_too():
    assert parse_bytes(8 << 20) == 8 << 20
    assert parse_bytes(np.int64(4096)) == 4096


@pytest.mark.parametrize("bad, err", [
    (0.5, TypeError), (1e9, TypeError), (True, TypeError), ([1], TypeError),
    ("1XB", ValueError), ("GB", ValueError), ("-1GB", ValueError), ("", ValueError),
    (0, ValueError), (-5, ValueError), ("0MiB", ValueError), ("1 G B", ValueError),
])
def test_other_values_are_refused_with_a_message_naming_the_forms(bad, err):
    with pytest.raises(err, match="memory_limit.*'512MiB'"):
        newch.Context(memory_limit=bad)


def test_context_accepts_a_unit_string_as_its_limit():
    c = newch.Context(memory_limit="8MiB", backend="ref")
    assert c.arena.budget.limit == 8 * MiB
    with c, pytest.raises(NcError, match="limit 8388608 bytes"):
        newch.zeros(3 * MiB)          # 12 MiB of float32


def test_reproducer_6mib_after_two_4mib_temporaries_and_step_end():
    c = newch.Context(memory_limit=8 << 20, backend="ref")
    with c:
        a = newch.zeros(MiB)          # 4 MiB each: two arena blocks, the whole limit
        b = newch.zeros(MiB)
        del a, b
        c.step_end()
        big = newch.ones(6 * MiB // 4)            # needs the idle blocks trimmed first
        assert float(big.sum()) == 6 * MiB // 4
        small = newch.full((10,), 2.0)            # later allocations keep working
        assert small.tolist() == [2.0] * 10
        c.step_end()
        again = newch.ones(6 * MiB // 4)
        assert again.shape == (6 * MiB // 4,)
        c.step_end()
        for _ in range(3):
            x, y = newch.zeros(MiB // 2), newch.zeros(MiB // 2)
            assert x.is_alive and y.is_alive
            c.step_end()


def test_refused_temporary_after_trim_leaves_the_arena_usable():
    c = newch.Context(memory_limit=8 << 20, backend="ref")
    with c:
        keep = newch.full((MiB,), 3.0)            # 4 MiB live
        with pytest.raises(NcError, match="memory limit"):
            newch.zeros(2 * MiB)                  # 8 MiB more cannot fit next to it
        assert keep.sum().item() == 3.0 * MiB
        more = newch.zeros(MiB // 2)
        assert more.is_alive


def test_persistent_allocation_that_fits_once_idle_blocks_are_trimmed():
    c = newch.Context(memory_limit=8 << 20, backend="ref")
    with c:
        a, b = newch.zeros(MiB), newch.zeros(MiB)     # 8 MiB of arena blocks reserved
        del a, b
        c.step_end()
        assert c.mem_stats()["arena_bytes_reserved"] == 8 * MiB
        with newch.persistent():
            w = newch.ones(MiB + MiB // 2)            # 6 MiB persistent
        assert w.is_persistent and w.sum().item() == MiB + MiB // 2
        assert c.mem_stats()["arena_bytes_reserved"] <= 2 * MiB


def test_environment_variable_sets_the_default_contexts_limit():
    code = ("import newch; c = newch.default_context(); print(c.arena.budget.limit)")
    env = dict(os.environ, NEWCH_MEMORY_LIMIT="64MiB", NEWCH_BACKEND="ref")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    assert out.stdout.strip() == str(64 * MiB), out.stderr
    env["NEWCH_MEMORY_LIMIT"] = "lots"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    assert out.returncode != 0 and "NEWCH_MEMORY_LIMIT" in out.stderr and "'lots'" in out.stderr
