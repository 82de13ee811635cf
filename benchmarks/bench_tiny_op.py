"""CPU time of a tiny op (``x + x`` on 10 floats) for a newch checkout, with and without the
in-flight registration public ops do for threads (``newch.context.track``).

Usage: python benchmarks/bench_tiny_op.py [CHECKOUT ...]   (default: this checkout)
Run two checkouts in one command to compare them; CPU time (process_time) keeps other
processes' load out of the figure.
"""
import os
import subprocess
import sys

CODE = """
import sys, time, timeit
sys.path.insert(0, sys.argv[1])
import newch as torch
x = torch.randn(10)
for _ in range(100):
    x + x
def best(fn):
    return min(timeit.repeat(fn, number=20000, repeat=10, timer=time.process_time)) / 20000 * 1e6
line = f"{sys.argv[1]}: x + x {best(lambda: x + x):.2f} us"
raw = getattr(torch.Tensor.__add__, "__wrapped__", None)
if raw is not None:
    line += f", untracked {best(lambda: raw(x, x)):.2f} us"
print(line)
"""

if __name__ == "__main__":
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for checkout in sys.argv[1:] or [here]:
        subprocess.run([sys.executable, "-c", CODE, os.path.abspath(checkout)], check=True)
