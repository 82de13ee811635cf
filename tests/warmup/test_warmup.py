"""newch.warmup: fills the kernel cache with what common first steps compile."""
import os
import subprocess
import sys
import textwrap

import pytest

import newch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _python(code, **env):
    e = dict(os.environ, PYTHONPATH=ROOT, **env)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=e, cwd=ROOT,
                          capture_output=True, text=True, timeout=900)


def test_unknown_workload_is_a_value_error_naming_the_choices():
    with pytest.raises(ValueError, match=r"warmup: unknown workload\(s\) \['lstm'\]; expected some of "
                                         r"\['mlp', 'cnn'\]"):
        newch.warmup(workloads=("mlp", "lstm"))


def test_background_warmup_leaves_the_callers_context_and_random_stream_alone():
    # ref backend: the logic without compiling; the warm-up runs in a context of its own.
    r = _python("""
        import threading, newch
        newch.manual_seed(5)
        want = newch.randn(4).tolist()
        newch.manual_seed(5)
        before = newch.default_context().mem_stats()
        t = newch.warmup(background=True)
        assert isinstance(t, threading.Thread) and t.daemon and t.name == "newch-warmup"
        t.join()
        assert newch.randn(4).tolist() == want
        assert newch.default_context().mem_stats() == before
        print("ok")
    """, NEWCH_BACKEND="ref")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"


def test_command_line_rejects_unknown_workloads():
    r = subprocess.run([sys.executable, "-m", "newch.warmup", "bogus"], cwd=ROOT,
                       env=dict(os.environ, PYTHONPATH=ROOT, NEWCH_BACKEND="ref"),
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 2
    assert "unknown workload(s) ['bogus']" in r.stderr


@pytest.mark.slow
def test_after_warmup_the_mlp_benchmark_compiles_nothing(tmp_path):
    pytest.importorskip("numba")
    env = dict(NEWCH_CACHE_DIR=str(tmp_path))
    r = subprocess.run([sys.executable, "-m", "newch.warmup", "mlp"], cwd=ROOT,
                       env=dict(os.environ, PYTHONPATH=ROOT, **env), capture_output=True,
                       text=True, timeout=1800)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("newch.warmup: mlp in ")
    r = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "cold_start.py"),
                        "--workload", "mlp", "--report"], cwd=ROOT,
                       env=dict(os.environ, PYTHONPATH=ROOT, **env), capture_output=True,
                       text=True, timeout=1800)
    assert r.returncode == 0, r.stderr
    last = r.stdout.strip().splitlines()[-1]
    assert last.startswith("0 compiled in 0.00 s"), r.stdout
