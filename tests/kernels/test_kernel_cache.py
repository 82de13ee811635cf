"""newch's kernel cache: its own directory, old versions pruned, safe for concurrent processes."""
import os
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from newch import _cache
numba = pytest.importorskip("numba", reason="JIT kernel tests need numba (not installed: the ref backend is tested elsewhere)")
from newch.kernels.cache import LockedIndexFile
from numba.core.caching import IndexDataCacheFile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))


def _env(**kw):
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "NEWCH_CACHE_DIR")}
    env.update(kw)
    return env


# -- pruning ------------------------------------------------------------------------
def _hash_dirs(root, ages):
    now = time.time()
    for i, age in enumerate(ages):
        d = root / f"{i:016x}"
        (d / "kernels_x").mkdir(parents=True)
        os.utime(d / "kernels_x", (now - age, now - age))
        os.utime(d, (now - age, now - age))
    return now


def test_prune_keeps_the_newest_few_and_the_current_one(tmp_path):
    day = 86400
    _hash_dirs(tmp_path, [1 * day, 30 * day, 20 * day, 40 * day, 50 * day])
    (tmp_path / "not-a-hash").mkdir()
    current = f"{4:016x}"                                 # the oldest, but in use now
    gone = _cache.prune(str(tmp_path), current, keep=3, min_age=0)
    left = sorted(os.listdir(tmp_path))
    assert sorted(gone) == [f"{1:016x}", f"{3:016x}"]
    assert left == sorted([f"{0:016x}", f"{2:016x}", current, "not-a-hash"])


def test_prune_spares_directories_used_recently(tmp_path):
    _hash_dirs(tmp_path, [10, 20, 30, 40, 8 * 86400])     # seconds: others are running them
    gone = _cache.prune(str(tmp_path), "f" * 16, keep=2)
    assert gone == [f"{4:016x}"]
    assert len(os.listdir(tmp_path)) == 4


# -- concurrent saves into one index ------------------------------------------------------
def _race(cls, tmp_path, monkeypatch):
    """Two savers of one index whose index reads overlap (as two processes compiling at once)."""
    orig = cls._load_index

    def slow_load(self):
        out = orig(self)
        time.sleep(0.3)
        return out
    monkeypatch.setattr(cls, "_load_index", slow_load)
    files = [cls(str(tmp_path), "twice-3.py311", ("stamp", 1)) for _ in range(2)]
    ts = [threading.Thread(target=f.save, args=(k, k.upper() * 3))
          for f, k in zip(files, ("sig_a", "sig_b"))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    monkeypatch.setattr(cls, "_load_index", orig)
    reader = cls(str(tmp_path), "twice-3.py311", ("stamp", 1))
    return reader.load("sig_a"), reader.load("sig_b")


def test_numbas_own_index_loses_or_mixes_a_signature_when_saves_overlap(tmp_path, monkeypatch):
    # NOTE: the race newch's cache closes: both read an empty index and take data file 1
    a, b = _race(IndexDataCacheFile, tmp_path, monkeypatch)
    assert (a, b) != ("SIG_ASIG_ASIG_A", "SIG_BSIG_BSIG_B")


def test_locked_index_keeps_both_signatures_with_their_own_data(tmp_path, monkeypatch):
    a, b = _race(LockedIndexFile, tmp_path, monkeypatch)
    assert (a, b) == ("SIG_A" * 3, "SIG_B" * 3)
    names = sorted(n for n in os.listdir(tmp_path) if n.endswith(".nbc"))
    assert names == ["twice-3.py311.1.nbc", "twice-3.py311.2.nbc"]


# -- whole processes ----------------------------------------------------------------------
KERNEL_MODULE = """
from newch.kernels.jit import kernel


@kernel
def twice(a, out):
    for i in range(a.size):
        out[i] = a[i] * 2
"""

RUN = """
import sys, time
sys.path.insert(0, sys.argv[1])
import numpy as np
import tk
start = float(sys.argv[2])
while time.time() < start:
    time.sleep(0.005)
for dt in sys.argv[3:]:
    a = np.arange(5, dtype=dt)
    out = np.empty_like(a)
    tk.twice(a, out)
    assert out.tolist() == (a * 2).tolist(), (dt, out)
print(sum(tk.twice.stats.cache_hits.values()), sum(tk.twice.stats.cache_misses.values()))
"""


@pytest.mark.slow
def test_processes_compiling_different_dtypes_at_once_share_one_cache(tmp_path):
    (tmp_path / "tk.py").write_text(KERNEL_MODULE)
    (tmp_path / "run.py").write_text(RUN)
    env = _env(NEWCH_CACHE_DIR=str(tmp_path / "cache"), NUMBA_NUM_THREADS="1")
    dtypes = ["float32", "float64", "int64", "int32"]
    start = str(time.time() + 8)
    procs = [subprocess.Popen([sys.executable, str(tmp_path / "run.py"), str(tmp_path), start, dt],
                              env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for dt in dtypes]
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err
        assert out.split() == ["0", "1"]                # each compiled its own signature
    res = subprocess.run([sys.executable, str(tmp_path / "run.py"), str(tmp_path), "0", *dtypes],
                         env=env, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["4", "0"]             # all four loaded, none recompiled


@pytest.mark.slow
def test_cache_goes_to_newchs_directory_even_if_numba_was_imported_first(tmp_path):
    (tmp_path / "tk.py").write_text(KERNEL_MODULE)
    user = tmp_path / "user_numba_cache"
    code = ("import numba, sys; sys.path.insert(0, sys.argv[1]); import os, numpy as np, tk; "
            "a = np.ones(3); o = np.empty(3); tk.twice(a, o); "
            "import newch._cache as c; print(os.environ['NUMBA_CACHE_DIR']); print(c.CACHE_DIR)")
    res = subprocess.run([sys.executable, "-c", code, str(tmp_path)], env=_env(NUMBA_CACHE_DIR=str(user)),
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    env_dir, newch_dir = res.stdout.split()
    assert env_dir == str(user)                         # the user's setting is untouched
    assert newch_dir == os.path.join(str(user), "newch", _cache.kernel_sources_hash())
    found = [f for _, _, fs in os.walk(newch_dir) for f in fs if f.startswith("tk.twice")]
    assert any(f.endswith(".nbi") for f in found) and any(f.endswith(".nbc") for f in found)
