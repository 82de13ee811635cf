"""Figures for small machines: RSS after import, after the first op, peak of the cold first MLP step,
and the MLP training step time (median of warm steps) on the current backend.

    python benchmarks/small_machine.py              # JIT (or ref where numba is missing)
    NEWCH_BACKEND=ref python benchmarks/small_machine.py
    NUMBA_CACHE_DIR=$(mktemp -d) python benchmarks/small_machine.py   # cold compile

Prints one ``key: value`` line per figure. RSS figures come from /proc (Linux only).
"""
import os
import resource
import sys
import time

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:] = [_ROOT] + [p for p in sys.path if p not in ("", os.path.join(_ROOT, "benchmarks"))]


def rss_mib():
    """Current resident set size in MiB (from /proc/self/status)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def peak_mib():
    """Peak resident set size of this process so far, in MiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(steps=40):
    t0 = time.perf_counter()
    import newch as torch
    print(f"import_s: {time.perf_counter() - t0:.2f}")
    print(f"rss_after_import_mib: {rss_mib():.0f}")
    x = torch.ones(10)
    (x + x).sum().item()
    ctx = torch.default_context()
    print(f"backend: {ctx.backend}")
    print(f"rss_after_first_op_mib: {rss_mib():.0f}")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    xb, yb = torch.randn(64, 784), torch.randn(64, 10)
    with ctx.persistent():
        xb, yb = xb.clone(), yb.clone()
    times, cpu = [], []
    for i in range(steps + 1):
        t, c = time.perf_counter(), time.process_time()
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(xb), yb).backward()
        opt.step()
        ctx.step_end()
        times.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
        if i == 0:
            print(f"first_step_s: {times[0]:.2f}")
            print(f"peak_rss_first_step_mib: {peak_mib():.0f}")
    warm = sorted(times[1:])
    print(f"mlp_step_ms_median: {1000 * warm[len(warm) // 2]:.2f}")
    warm_cpu = sorted(cpu[1:])   # CPU time: steadier than wall time on a shared machine
    print(f"mlp_step_cpu_ms_median: {1000 * warm_cpu[len(warm_cpu) // 2]:.2f}")
    print(f"arena_bytes_reserved: {ctx.mem_stats()['arena_bytes_reserved']}")


if __name__ == "__main__":
    main()
