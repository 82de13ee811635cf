"""tools/pi.sh's refusals and tools/result_hash.py's invariance (the emulated runs themselves are CI's)."""
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PI_SH = os.path.join(ROOT, "tools", "pi.sh")


def _run(cmd, timeout=120, **env):
    full = dict(os.environ, **env)
    return subprocess.run(cmd, capture_output=True, text=True, env=full, timeout=timeout)


def _unprivileged(cmd):
    """``cmd`` run as an ordinary user: directly when not root, through setpriv when root."""
    if os.geteuid() != 0:
        return cmd
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: cannot drop privileges")
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + cmd


def test_pi_sh_rejects_an_unknown_architecture():
    r = _run(["bash", PI_SH, "riscv64"])
    assert r.returncode == 2
    assert "usage: tools/pi.sh arm64|armhf" in r.stderr


def test_pi_sh_without_root_skips_by_hand_and_fails_in_ci():
    by_hand = _run(_unprivileged(["bash", PI_SH, "arm64", "-m", "pi"]), CI="")
    assert by_hand.returncode == 0, by_hand.stderr
    assert "skipped (arm64): needs root" in by_hand.stdout
    in_ci = _run(_unprivileged(["bash", PI_SH, "armhf", "-m", "pi"]), CI="true")
    assert in_ci.returncode == 1
    assert "FAIL (armhf): needs root" in in_ci.stderr


@pytest.mark.slow
def test_result_hash_is_the_same_on_one_and_two_threads():
    hashes = []
    for threads in ("1", "2"):
        r = _run([sys.executable, os.path.join(ROOT, "tools", "result_hash.py")], timeout=1200,
                 NUMBA_NUM_THREADS=threads)
        assert r.returncode == 0, r.stderr
        hashes.append(r.stdout.strip().splitlines()[-1])
    assert len(hashes[0]) == 64 and hashes[0] == hashes[1]
