"""Time newch.save / newch.load against torch.save / torch.load on the same state_dict, one run.

    python benchmarks/bench_save_load.py                 # 64 MiB of float32 in 8 tensors, to a file
    python benchmarks/bench_save_load.py --mib 16 --tensors 64 --reps 3

Each side saves its own copy of the same values to a file in a temporary
folder and loads it back (the OS page cache serves the reads). Prints the
best of ``--reps`` seconds, MiB/s and newch / torch ratios (above 1: newch is
slower). torch is optional: without it only newch's figures print.
"""
import argparse
import os
import tempfile
import time

import numpy as np

import newch


def best(fn, reps):
    out = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        out = min(out, time.perf_counter() - t)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int, default=64)
    ap.add_argument("--tensors", type=int, default=8)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    n = args.mib * (1 << 20) // 4 // args.tensors
    rng = np.random.default_rng(0)
    arrays = {f"layer{i}.weight": rng.standard_normal(n, dtype=np.float32)
              for i in range(args.tensors)}
    with newch.persistent():
        ours = {k: newch.tensor(v) for k, v in arrays.items()}
    folder = tempfile.mkdtemp()
    path = os.path.join(folder, "newch.pt")
    rows = [("newch save", best(lambda: newch.save(ours, path), args.reps)),
            ("newch load", best(lambda: newch.load(path), args.reps))]
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        theirs = {k: torch.from_numpy(v) for k, v in arrays.items()}
        tpath = os.path.join(folder, "torch.pt")
        rows += [("torch save", best(lambda: torch.save(theirs, tpath), args.reps)),
                 ("torch load", best(lambda: torch.load(tpath), args.reps))]
    print(f"{args.mib} MiB float32 in {args.tensors} tensors, best of {args.reps}")
    for name, s in rows:
        print(f"{name:12s} {s * 1e3:9.1f} ms {args.mib / s:9.0f} MiB/s")
    if torch is not None:
        t = dict(rows)
        print(f"ratio save {t['newch save'] / t['torch save']:.2f}  "
              f"load {t['newch load'] / t['torch load']:.2f}  (newch / torch)")
    for f in os.listdir(folder):
        os.unlink(os.path.join(folder, f))
    os.rmdir(folder)


if __name__ == "__main__":
    main()
