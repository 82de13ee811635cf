"""Shared determinism checks: a module's ``det_outputs()`` must be bit-identical on any thread count."""
import os
import subprocess
import sys
import textwrap

import pytest

numba = pytest.importorskip("numba", reason="thread determinism checks need numba")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def outputs_on_1_and_2_threads(det_outputs):
    """(outputs with 1 thread, outputs with 2 threads), in this process."""
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("needs 2 numba threads")
    numba.set_num_threads(1)
    one = det_outputs()
    numba.set_num_threads(2)
    two = det_outputs()
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    return one, two


def run_1_3_4_threads(module):
    """Run ``module.det_outputs`` on 1, 3 and 4 threads under NUMBA_NUM_THREADS=4; returns the process."""
    code = textwrap.dedent("""
        import numba, sys
        sys.path.insert(0, {root!r})
        from tests.kernels.{module} import det_outputs
        runs = []
        for n in (1, 3, 4):
            numba.set_num_threads(n)
            runs.append(det_outputs())
        print("SAME" if runs[0] == runs[1] == runs[2] else "DIFFERENT")
    """).format(root=ROOT, module=module)
    env = dict(os.environ, NUMBA_NUM_THREADS="4")
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=900)
