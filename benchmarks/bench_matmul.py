"""GFLOP/s of newch's gemm against numpy's matmul (OpenBLAS), side by side in one run.

    python benchmarks/bench_matmul.py [--sizes 64,128,256,512,1024] [--threads 1,2]
                                      [--dtypes float32,float64] [--reps 7]

For each thread count, size (square n x n x n) and dtype it prints the
GFLOP/s (2*n^3 / time of one call) of newch and of numpy, each the best over
``--reps`` bursts of calls after a warm-up, and their ratio. Both libraries
get the same thread count. Bursts alternate between the two (with a pause
between bursts) so that a noisy machine slows both alike.

OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE (which can pin OpenBLAS to a slower
kernel) are removed from the environment before numpy loads: if they are set,
the script re-executes itself without them.
"""
import argparse
import ctypes
import glob
import os
import sys
import time

_OPENBLAS_VARS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
if any(v in os.environ for v in _OPENBLAS_VARS):
    env = {k: v for k, v in os.environ.items() if k not in _OPENBLAS_VARS}
    print("note: re-running without", ", ".join(v for v in _OPENBLAS_VARS if v in os.environ), flush=True)
    os.execve(sys.executable, [sys.executable] + sys.argv, env)

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numba  # noqa: E402
import numpy as np  # noqa: E402

from newch.kernels import matmul, simd_level  # noqa: E402


class OpenBLAS:
    """numpy's bundled OpenBLAS through ctypes (threadpoolctl when that is installed)."""

    def __init__(self):
        self.lib = None
        self.prefix = ""
        libdir = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
        for path in glob.glob(os.path.join(libdir, "lib*openblas*.so*")):
            lib = ctypes.CDLL(path)
            for prefix, suffix in (("scipy_openblas_", "64_"), ("openblas_", ""), ("scipy_openblas_", "")):
                if hasattr(lib, prefix + "get_corename" + suffix):
                    self.lib, self.prefix, self.suffix = lib, prefix, suffix
                    return

    def _fn(self, name, restype=None):
        fn = getattr(self.lib, self.prefix + name + self.suffix)
        fn.restype = restype
        return fn

    def describe(self):
        if self.lib is None:
            try:
                import threadpoolctl
                info = [i for i in threadpoolctl.threadpool_info() if i.get("internal_api") == "openblas"]
                if info:
                    return "OpenBLAS %s, core %s" % (info[0].get("version"), info[0].get("architecture"))
            except ImportError:
                pass
            np.show_config()
            return "BLAS unknown (see numpy config above)"
        config = self._fn("get_config", ctypes.c_char_p)().decode()
        core = self._fn("get_corename", ctypes.c_char_p)().decode()
        return "%s; core kernel in use: %s" % (config.strip(), core)

    def set_threads(self, n):
        if self.lib is not None:
            self._fn("set_num_threads")(ctypes.c_int(n))
            return
        try:
            import threadpoolctl
            threadpoolctl.threadpool_limits(n, user_api="blas")
        except ImportError:
            print("warning: cannot set the BLAS thread count")


PAUSE = 0.2     # seconds between timed blocks


def best_seconds(fn, n):
    """Best time of one call of fn over a burst of calls (at least 3, about 0.1 s in all)."""
    best = float("inf")
    for _ in range(max(3, int(2e8 / n ** 3))):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def bench(n, dtype, reps):
    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, n)).astype(dtype)
    b = rng.standard_normal((n, n)).astype(dtype)
    out = np.empty((n, n), dtype)
    scratch = np.empty(matmul.gemm_scratch(n, n, n), dtype)
    ours = lambda: matmul.gemm(a, b, out, scratch)  # noqa: E731
    theirs = lambda: np.matmul(a, b, out=out)  # noqa: E731
    ours(), theirs()            # warm-up (compiles on first use)
    t_ours, t_theirs = float("inf"), float("inf")
    for _ in range(reps):
        # NOTE: alternate so that machine noise hits both; pause after each
        # block because idle OpenBLAS threads keep spinning (~0.1 s) and would
        # steal a core from whoever runs next.
        t_ours = min(t_ours, best_seconds(ours, n))
        time.sleep(PAUSE)
        t_theirs = min(t_theirs, best_seconds(theirs, n))
        time.sleep(PAUSE)
    flop = 2.0 * n ** 3
    return flop / t_ours / 1e9, flop / t_theirs / 1e9


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sizes", default="64,128,256,512,1024")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--dtypes", default="float32,float64")
    p.add_argument("--reps", type=int, default=7)
    args = p.parse_args()
    blas = OpenBLAS()
    print("numpy %s: %s" % (np.__version__, blas.describe()))
    nr = matmul.NV * matmul.VBYTES // 4
    print("numba %s (%s threads max); newch SIMD %s, micro-tile %d x %d (float32), KC=%d MC=%d NC=%d"
          % (numba.__version__, numba.config.NUMBA_NUM_THREADS, simd_level(), matmul.MR, nr,
             matmul.KC, matmul.MC, matmul.NC))
    print("%-7s %5s %-8s %12s %12s %7s" % ("threads", "n", "dtype", "newch GF/s", "numpy GF/s", "ratio"))
    for threads in (int(t) for t in args.threads.split(",")):
        if threads > numba.config.NUMBA_NUM_THREADS:
            print("skipping %d threads (NUMBA_NUM_THREADS=%d)" % (threads, numba.config.NUMBA_NUM_THREADS))
            continue
        numba.set_num_threads(threads)
        blas.set_threads(threads)
        for n in (int(s) for s in args.sizes.split(",")):
            for dtype in args.dtypes.split(","):
                ours, theirs = bench(n, np.dtype(dtype).type, args.reps)
                print("%-7d %5d %-8s %12.1f %12.1f %7.2f" % (threads, n, dtype, ours, theirs, ours / theirs),
                      flush=True)


if __name__ == "__main__":
    main()
