"""Compile cost of the indexing kernels: each kernel on the dtypes and layouts of its tests, cold.

    python benchmarks/compile_indexing.py [--kernel NAME ...]

For each kernel (``index_select_3d``, ``gather_3d``, ``index_put_3d`` with and without
accumulate, ``scatter_add_3d``, ``masked_fill_nd``) a fresh process with an empty kernel
cache (``NEWCH_CACHE_DIR``, ``NUMBA_CACHE_DIR``) runs it on the 6 dtypes of
``tests/kernels/test_indexing.py``, on contiguous, strided and transposed operands, serial
and parallel sizes, then prints the totals of ``newch.kernels.report``: how many
signatures were compiled and their CPU seconds. CPU seconds are the figure to trust on a
busy machine (compilation is single-threaded).
"""
import argparse
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNELS = ("index_select_3d", "gather_3d", "index_put_3d", "scatter_add_3d", "masked_fill_nd")

_CHILD = r"""
import sys, numpy as np
sys.path.insert(0, {root!r})
from newch.kernels import indexing as K, report
name = {name!r}
DTYPES = [np.float32, np.float64, np.int32, np.int64, np.uint8, np.bool_]

def strided(x):
    big = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), x.dtype)
    big[..., ::2] = x
    return big[..., ::2]

def transposed(x):
    return np.ascontiguousarray(x.transpose(2, 1, 0)).transpose(2, 1, 0)

for dt in DTYPES:
    for O, D, I, J in [(2, 3, 4, 2), (300, 4, 3, 50)]:
        x = np.ones((O, D, I), dt)
        src = np.ones((O, J, I), dt)
        idx = np.arange(J, dtype=np.int64) % D
        cidx = np.zeros((O, J, I), np.int64)
        for lay in (np.copy, strided, transposed):
            if name == "index_select_3d":
                K.index_select_3d(lay(x), idx, np.zeros((O, J, I), dt))
            elif name == "gather_3d":
                K.gather_3d(lay(x), lay(cidx), np.zeros((O, J, I), dt))
            elif name == "index_put_3d":
                for acc in (False, True):
                    K.index_put_3d(lay(x), idx, lay(src), acc)
            elif name == "scatter_add_3d":
                K.scatter_add_3d(x.copy(), lay(cidx), lay(src))
        if name == "masked_fill_nd":
            d4 = np.ones((O, D, I, 7), dt)
            m4 = np.ones(d4.shape, np.bool_)
            ro = np.broadcast_to(m4[:1], d4.shape)
            for dst in (d4.copy(), strided(d4)):
                for mask in (m4, strided(m4), ro):
                    K.masked_fill_nd(dst, mask, dt(1))
recs = [r for r in report.records() if r["depth"] == 0 and r["state"] == "compiled"]
mine = [r for r in recs if r["name"].startswith("indexing.")]
print(f"{{name:16}} {{len(mine):4}} indexing signatures {{sum(r['seconds'] for r in mine):7.2f}} s; "
      f"all compiles {{len(recs):4}} {{sum(r['seconds'] for r in recs):7.2f}} s "
      f"(tasks._launch/_drive: {{sum(1 for r in recs if r['name'].startswith('tasks.'))}})")
"""


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kernel", nargs="*", default=KERNELS)
    args = p.parse_args(argv)
    for name in args.kernel:
        with tempfile.TemporaryDirectory(prefix="newch-cold-") as cache:
            env = dict(os.environ, NEWCH_CACHE_DIR=cache, NUMBA_CACHE_DIR=cache)
            subprocess.run([sys.executable, "-c", _CHILD.format(root=ROOT, name=name)],
                           env=env, check=True)


if __name__ == "__main__":
    main()
