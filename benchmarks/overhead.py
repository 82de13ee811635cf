"""Per-op overhead, side by side with PyTorch in one run: tiny ops, an MLP step, import cost.

    python benchmarks/overhead.py [--threads 2] [--reps 7]

Rows (median of ``--reps`` rounds, newch and PyTorch alternating so a noisy
machine slows both alike; ratio = newch time / PyTorch time, lower is better;
tiny ops are timed in CPU seconds of the calling thread, the MLP step in wall
seconds):

- ``x + x`` on 10 float32: the Python path of one op (validation, promotion,
  allocation, launch). Bar: ratio <= 3.
- ``relu(x)``, ``x * 2.0``, ``x.sum()`` on 10 float32.
- MLP training step: Linear(784, 256) -> ReLU -> Linear(256, 10), mse_loss,
  SGD(lr=0.01, momentum=0.9), batch 64, ``--threads`` threads. Bar: ratio <= 1.
  Then the same step on one thread timed in CPU seconds of the process (stable
  on a busy machine, where the wall time of parallel launches is not).
- ``import newch``: seconds and MiB RSS of a fresh interpreter (bars: < 0.5 s,
  < 60 MiB), next to ``import torch``.

PyTorch rows are skipped when torch is not installed.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def per_call(fn, calls, clock=time.perf_counter):
    """Seconds per call of ``fn`` over ``calls`` calls."""
    t0 = clock()
    for _ in range(calls):
        fn()
    return (clock() - t0) / calls


def compare(name, ours, theirs, calls, reps, clock=time.perf_counter):
    """Print one row: medians of alternating rounds and their ratio."""
    ours()
    if theirs:
        theirs()
    a, b = [], []
    for _ in range(reps):
        a.append(per_call(ours, calls, clock))
        if theirs:
            b.append(per_call(theirs, calls, clock))
    ma = statistics.median(a)
    if theirs:
        mb = statistics.median(b)
        print(f"{name:28} {ma * 1e6:10.1f} {mb * 1e6:10.1f} {ma / mb:7.2f}")
    else:
        print(f"{name:28} {ma * 1e6:10.1f} {'-':>10} {'-':>7}")


def tiny_cases(nc, torch):
    x = nc.ones(10)
    cases = [("x + x (10 floats)", lambda: x + x), ("relu(x)", lambda: x.relu()),
             ("x * 2.0", lambda: x * 2.0), ("x.sum()", lambda: x.sum())]
    if torch is None:
        return [(n, f, None) for n, f in cases]
    y = torch.ones(10)
    theirs = [lambda: y + y, lambda: y.relu(), lambda: y * 2.0, lambda: y.sum()]
    return [(n, f, g) for (n, f), g in zip(cases, theirs)]


def mlp_step(lib, step_end=None):
    """A closure running one training step of the 784-256-10 MLP in ``lib`` (newch or torch)."""
    nn, F = lib.nn, lib.nn.functional
    lib.manual_seed(0)
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = lib.randn(64, 784), lib.randn(64, 10)
    if step_end is not None:
        with lib.persistent():
            x, y = x.clone(), y.clone()

    def step():
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()
        if step_end is not None:
            step_end()
    return step


def import_cost(module):
    """(seconds, MiB max RSS) of ``import module`` in a fresh interpreter."""
    # NOTE: VmHWM (peak RSS of this process image); ru_maxrss would include the parent's
    # memory at fork.
    code = ("import time; t = time.perf_counter(); import {m}; s = time.perf_counter() - t; "
            "print(s, [l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')][0])")
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    best = None
    for _ in range(3):
        r = subprocess.run([sys.executable, "-c", code.format(m=module)], capture_output=True,
                           text=True, env=env, check=True)
        s, kib = r.stdout.split()
        best = min(best or (9e9, 0), (float(s), int(kib) / 1024))
    return best


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--reps", type=int, default=7)
    args = p.parse_args()
    import newch as nc
    try:
        import torch
        torch.set_num_threads(args.threads)
    except ImportError:
        torch = None
    nc.set_default_context(nc.Context(seed=0, threads=args.threads))
    print(f"{'':28} {'newch us':>10} {'torch us':>10} {'ratio':>7}")
    for name, ours, theirs in tiny_cases(nc, torch):
        # NOTE: single-threaded work, timed in CPU seconds of this thread: time the OS gives
        # to other processes on a busy machine does not count against either side.
        compare(name, ours, theirs, 2000, args.reps, time.thread_time)
    compare(f"MLP step, {args.threads} threads", mlp_step(nc, nc.step_end),
            mlp_step(torch) if torch else None, 50, args.reps)
    # NOTE: the same step on one thread in CPU seconds of the process: on a machine other
    # processes keep busy, parallel launches wait for descheduled threads and wall times
    # stop meaning much; this row still compares the work of both sides.
    nc.set_default_context(nc.Context(seed=0, threads=1))
    if torch:
        torch.set_num_threads(1)
    compare("MLP step, 1 thread, CPU", mlp_step(nc, nc.step_end),
            mlp_step(torch) if torch else None, 50, args.reps, time.process_time)
    for m in ("newch",) + (("torch",) if torch else ()):
        s, mib = import_cost(m)
        print(f"import {m:21} {s:9.3f} s {mib:8.1f} MiB RSS")


if __name__ == "__main__":
    main()
