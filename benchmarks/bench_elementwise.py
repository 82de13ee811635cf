"""GB/s of newch's flat elementwise kernels against numpy, side by side in one run.

    python benchmarks/bench_elementwise.py [--sizes 65536,1048576,16777216]
                                           [--threads 1,2] [--reps 15]

Two float32 operations: ADD (``binary``, 12 bytes moved per element: two
reads, one write) against ``np.add(a, b, out=c)``, and EXP (``unary``, 8
bytes per element) against ``np.exp(a, out=c)``. GB/s = bytes read and
written / seconds, best of ``--reps`` rounds after a warm-up (the first call
compiles the kernel or loads it from the cache). newch and numpy are timed in
alternation so a noisy machine slows both alike. numpy is single-threaded;
the thread count applies to newch (``numba.set_num_threads``).
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numba  # noqa: E402
import numpy as np  # noqa: E402

from newch.kernels import codes as C, elementwise, simd_level  # noqa: E402


def best_seconds(fn, reps):
    """Shortest wall time of ``fn()`` over ``reps`` calls (more calls for tiny sizes)."""
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def cases(n):
    """(name, bytes moved, newch call, numpy call) for arrays of ``n`` float32."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal(n, dtype=np.float32)
    b = rng.standard_normal(n, dtype=np.float32)
    c = np.empty_like(a)
    return [
        ("ADD", 12 * n, lambda: elementwise.binary(C.ADD, a, b, c), lambda: np.add(a, b, out=c)),
        ("EXP", 8 * n, lambda: elementwise.unary(C.EXP, a, c), lambda: np.exp(a, out=c)),
    ]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="65536,1048576,16777216")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--reps", type=int, default=15)
    args = p.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    threads = [int(t) for t in args.threads.split(",")]
    print(f"numpy {np.__version__}, numba {numba.__version__}, SIMD {simd_level()}, "
          f"CHUNK {elementwise.CHUNK}, SERIAL_MAX {elementwise.SERIAL_MAX}")
    print(f"{'op':4} {'threads':>7} {'n':>10} {'newch GB/s':>11} {'numpy GB/s':>11} {'ratio':>6}")
    old = numba.get_num_threads()
    try:
        for n in sizes:
            for name, nbytes, ours, theirs in cases(n):
                for t in threads:
                    numba.set_num_threads(t)
                    ours()                                   # compile / warm up
                    theirs()
                    reps = args.reps * max(1, (1 << 20) // n)
                    t_ours, t_theirs = float("inf"), float("inf")
                    for _ in range(3):                       # alternate: noise hits both
                        t_ours = min(t_ours, best_seconds(ours, reps // 3 + 1))
                        t_theirs = min(t_theirs, best_seconds(theirs, reps // 3 + 1))
                    g_ours, g_theirs = nbytes / t_ours / 1e9, nbytes / t_theirs / 1e9
                    print(f"{name:4} {t:>7} {n:>10} {g_ours:>11.1f} {g_theirs:>11.1f} "
                          f"{g_ours / g_theirs:>6.2f}", flush=True)
    finally:
        numba.set_num_threads(old)


if __name__ == "__main__":
    main()
