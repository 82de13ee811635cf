"""Optimizer step time, newch against torch.optim (CPU, default single-tensor path), side by side.

Run: python benchmarks/bench_optim.py [n_elements]
Each optimizer updates one float32 parameter of n elements (default 1,000,000);
the figure is the fastest of 30 timed steps after one warm-up step (which
compiles newch's kernel or loads it from the cache), both libraries on 2
threads, in one process. Needs torch installed.
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import newch  # noqa: E402

NAMES = ["SGD", "Adam", "AdamW", "Adamax", "NAdam", "RAdam", "RMSprop", "Adagrad", "Adadelta"]


def best_ms(step, k=30):
    # NOTE: the fastest step, not the median: on a shared machine most of the spread is
    # time the process spent descheduled, which says nothing about either library
    step()
    times = []
    for _ in range(k):
        t = time.perf_counter()
        step()
        times.append(time.perf_counter() - t)
    return min(times) * 1e3


def main(n):
    import torch
    torch.set_num_threads(2)
    newch.set_default_context(newch.Context(threads=2))
    rng = np.random.default_rng(0)
    a = rng.standard_normal(n).astype(np.float32)
    g = rng.standard_normal(n).astype(np.float32)
    print(f"one float32 parameter of {n} elements, fastest step (ms)")
    for name in NAMES:
        kw = {"lr": 1e-3, **({"momentum": 0.9} if name in ("SGD", "RMSprop") else {})}
        with newch.persistent():
            p = newch.tensor(a, requires_grad=True)
            p.grad = newch.tensor(g)
        q = torch.tensor(a, requires_grad=True)
        q.grad = torch.tensor(g)
        ours = best_ms(getattr(newch.optim, name)([p], **kw).step)
        theirs = best_ms(getattr(torch.optim, name)([q], **kw).step)
        print(f"{name:9s} newch {ours:7.2f}   torch {theirs:7.2f}   torch/newch {theirs / ours:5.2f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
