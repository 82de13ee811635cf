"""The kernels a small model spends its time in, against numpy (and PyTorch), with ratios.

    python benchmarks/bench_small_kernels.py [--threads 2] [--reps 7]

Each row times one newch kernel call (through the ops layer where that is what
a user runs) and the numpy call doing the same work, alternating rounds, and
prints the best round's microseconds per call and ``speed`` = numpy time / newch time (higher
is better; the project's bars: >= 0.8 for the 64x784x256 float32 gemm and for
row-wise float32 sums). A PyTorch column is added when torch is installed.

Rows: gemm 64x784x256, 64x256x10 and batch 1 (1x784x256, and x @ w.T as a linear layer
reads its weight, then ``nn.Linear(784, 256)`` on one sample under no_grad); the fused SGD update
(momentum 0.9) of a 784x256 weight; copies of non-contiguous views (a
transpose, a strided slice); row-wise float32 sums (sum over the last,
contiguous axis) of 64x784 and 1024x1024.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402


def per_call(fn, calls):
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls


def row(name, fns, reps):
    """Median seconds of each function in ``fns`` (newch first, then numpy, then torch)."""
    for f in fns:
        f()
    t1 = per_call(fns[0], 1)
    calls = max(3, min(2000, int(0.02 / max(t1, 1e-7))))
    times = [[] for _ in fns]
    for _ in range(reps):
        for i, f in enumerate(fns):
            times[i].append(per_call(f, calls))
    # NOTE: the best round: on a shared machine the other rounds measure the neighbours
    med = [min(t) for t in times]
    cols = " ".join(f"{m * 1e6:10.1f}" for m in med)
    ratios = " ".join(f"{m / med[0]:7.2f}" for m in med[1:])
    print(f"{name:34} {cols}   {ratios}")


def cases(nc, K, torch):
    """(name, newch call, numpy call, torch call or None)."""
    rng = np.random.default_rng(0)
    f32 = np.float32
    out = []
    for m, k, n in ((64, 784, 256), (64, 256, 10), (1, 784, 256)):
        a = rng.standard_normal((m, k)).astype(f32)
        b = rng.standard_normal((k, n)).astype(f32)
        c = np.empty((m, n), f32)
        s = np.empty(K.gemm_scratch(m, n, k), f32)
        ta, tb = (torch.from_numpy(a), torch.from_numpy(b)) if torch else (None, None)
        out.append((f"gemm {m}x{k}x{n} f32", lambda a=a, b=b, c=c, s=s: K.gemm(a, b, c, s),
                    lambda a=a, b=b, c=c: np.matmul(a, b, out=c),
                    (lambda ta=ta, tb=tb: ta @ tb) if torch else None))
    # batch 1 through a linear layer's weight: x @ w.T, w (256, 784) C-contiguous (the
    # kernel reads w's columns in place), then the whole layer as a user calls it
    x1 = rng.standard_normal((1, 784)).astype(f32)
    wt = rng.standard_normal((256, 784)).astype(f32)
    c1 = np.empty((1, 256), f32)
    tx, tw = (torch.from_numpy(x1), torch.from_numpy(wt)) if torch else (None, None)
    out.append(("gemm 1x784x256 f32, x @ w.T", lambda: K.gemm(x1, wt.T, c1, s[:0]),
                lambda: np.matmul(x1, wt.T, out=c1), (lambda: tx @ tw.T) if torch else None))
    with nc.persistent():
        lin, xin = nc.nn.Linear(784, 256), nc.tensor(x1)
    wb = lin.weight.detach().numpy(), lin.bias.detach().numpy()
    c2 = np.empty((1, 256), f32)

    def ours_linear():
        with nc.no_grad():
            lin(xin)

    def np_linear():
        np.matmul(x1, wb[0].T, out=c2)
        np.add(c2, wb[1], out=c2)
    tlin = None
    if torch:
        tl = torch.nn.Linear(784, 256)

        def tlin():
            with torch.no_grad():
                tl(tx)
    out.append(("Linear(784, 256) batch 1 (op)", ours_linear, np_linear, tlin))
    w = rng.standard_normal(784 * 256).astype(f32)
    g = rng.standard_normal(784 * 256).astype(f32)
    buf = np.zeros_like(w)

    def np_sgd():
        np.multiply(buf, f32(0.9), out=buf)
        np.add(buf, g, out=buf)
        np.subtract(w, f32(0.01) * buf, out=w)
    out.append(("SGD momentum 784x256 (fused)",
                lambda: K.sgd_step(w, g, buf, 0.01, 0.0, 0.9, 0.0, False, False, False),
                np_sgd, None))
    x = rng.standard_normal((784, 256)).astype(f32)
    y = np.empty((256, 784), f32)
    out.append(("copy of a transpose 784x256",
                lambda: K.copy_nd(x.T[None, None], y[None, None]),
                lambda: np.copyto(y, x.T), None))
    z = rng.standard_normal((512, 1024)).astype(f32)
    zz = np.empty((512, 512), f32)
    out.append(("copy of z[:, ::2] 512x512",
                lambda: K.copy_nd(z[None, None, :, ::2], zz[None, None]),
                lambda: np.copyto(zz, z[:, ::2]), None))
    for r, cdim in ((64, 784), (1024, 1024)):
        v = rng.standard_normal((r, cdim)).astype(f32)
        with nc.persistent():
            tv = nc.tensor(v)
        o = np.empty(r, f32)
        tt = torch.from_numpy(v) if torch else None
        out.append((f"row sums {r}x{cdim} f32 (op)", lambda tv=tv: tv.sum(1),
                    lambda v=v, o=o: np.sum(v, axis=1, out=o),
                    (lambda tt=tt: tt.sum(1)) if torch else None))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--reps", type=int, default=7)
    args = p.parse_args()
    import numba
    import newch as nc
    from newch.kernels import load
    try:
        import torch
        torch.set_num_threads(args.threads)
    except ImportError:
        torch = None
    nc.set_default_context(nc.Context(seed=0, threads=args.threads))
    numba.set_num_threads(min(args.threads, numba.config.NUMBA_NUM_THREADS))
    K = load("numba")
    head = f"{'':34} {'newch us':>10} {'numpy us':>10}" + (f" {'torch us':>10}" if torch else "")
    print(head + "   speed vs numpy" + (", torch" if torch else "") + " (>1: newch faster)")
    for name, ours, theirs, tor in cases(nc, K, torch):
        row(name, [ours, theirs] + ([tor] if tor else []), args.reps)
        nc.step_end()


if __name__ == "__main__":
    main()
