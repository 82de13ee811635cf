"""Forward + backward time of batch norm, layer norm, dropout and cross entropy: newch vs PyTorch.

Shapes are those of the MNIST CNN (dropout after the pooling, cross entropy of
10 classes) and of a CIFAR ResNet-20 block (BatchNorm2d of 16 channels at
32x32, batch 32). Both libraries run in this one process, alternating, with
the same thread count; the figures are the median and the best of ``--reps``
calls after a warm-up (the first newch call compiles or loads the kernels);
the ratio is newch's median over torch's.

    python benchmarks/bench_norm_loss.py --threads 2 --reps 20
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _cases(lib):
    nn, F = lib.nn, lib.nn.functional
    bn = nn.BatchNorm2d(16)
    ln = nn.LayerNorm(512)
    return {
        "BatchNorm2d(16) x (32,16,32,32)": (bn, (32, 16, 32, 32)),
        "LayerNorm(512) x (256,512)": (ln, (256, 512)),
        "dropout(0.25) x (64,64,12,12)": (lambda x: F.dropout(x, 0.25), (64, 64, 12, 12)),
        "dropout(0.5) x (64,128)": (lambda x: F.dropout(x, 0.5), (64, 128)),
        "cross_entropy (64,10)": (lambda x: F.cross_entropy(x, lib.tensor(np.arange(64) % 10)),
                                  (64, 10)),
    }


def _time(lib, fn, x0, up, reps):
    times = []
    for _ in range(reps + 1):
        x = lib.tensor(x0, requires_grad=True)
        t = time.perf_counter()
        y = fn(x)
        if y.ndim:
            y.backward(lib.tensor(up))
        else:
            y.backward()
        times.append(time.perf_counter() - t)
        if lib.__name__ == "newch":
            lib.step_end()
    return float(np.median(times[1:])), float(np.min(times[1:]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=20)
    args = ap.parse_args()
    import newch
    newch.set_default_context(newch.Context(seed=0, threads=args.threads))
    try:
        import torch
        torch.set_num_threads(args.threads)
    except ImportError:
        torch = None
    rng = np.random.default_rng(0)
    nc = _cases(newch)
    th = _cases(torch) if torch else {}
    print(f"threads={args.threads}  (ms of forward + backward: median / best of {args.reps})")
    print(f"{'case':34s} {'newch':>15s} {'torch':>15s} {'ratio':>6s}")
    for name, (fn, shape) in nc.items():
        x0 = rng.standard_normal(shape).astype(np.float32)
        up = rng.standard_normal(shape).astype(np.float32)
        n_med, n_min = _time(newch, fn, x0, up, args.reps)
        t_med, t_min = _time(torch, th[name][0], x0, up, args.reps) if torch else (np.nan, np.nan)
        print(f"{name:34s} {n_med * 1e3:7.3f}/{n_min * 1e3:7.3f} {t_med * 1e3:7.3f}/"
              f"{t_min * 1e3:7.3f} {n_med / t_med:6.2f}")


if __name__ == "__main__":
    main()
