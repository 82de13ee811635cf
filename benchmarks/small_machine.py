"""Figures for small machines: RSS after import, after the first op, peak of the cold first training
step, and the training step time (median of warm steps) on the current backend.

    python benchmarks/small_machine.py              # MLP, JIT (or ref where numba is missing)
    NEWCH_BACKEND=ref python benchmarks/small_machine.py
    python benchmarks/small_machine.py --cnn        # the MNIST CNN (benchmarks/mnist_cnn.py's Net)
    NUMBA_CACHE_DIR=$(mktemp -d) NEWCH_CACHE_DIR=$(mktemp -d) python benchmarks/small_machine.py  # cold
    python benchmarks/small_machine.py --steps 10   # fewer warm steps

Prints one ``key: value`` line per figure. RSS figures come from /proc (Linux only). The step
figures are wall and CPU time; on a shared machine the CPU time is the steadier one.
"""
import argparse
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


def _mlp(torch):
    """(model, step inputs, loss function) of the 784-256-10 MLP, batch 64, MSE."""
    model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
    return model, (torch.randn(64, 784), torch.randn(64, 10)), torch.nn.functional.mse_loss


def _cnn(torch):
    """(model, step inputs, loss function) of the MNIST CNN (two 3x3 convs, pool, two Linear), batch 64."""
    sys.path.insert(0, os.path.join(_ROOT, "benchmarks"))
    from mnist_cnn import mnist_net   # the same Net as the CNN benchmark
    model = mnist_net(torch)
    y = torch.from_numpy((torch.randn(64).numpy() * 1000).astype("int64") % 10)
    return model, (torch.randn(64, 1, 28, 28), y), torch.nn.functional.nll_loss


def main(steps=40, cnn=False):
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
    name = "cnn" if cnn else "mlp"
    model, (xb, yb), loss_fn = (_cnn if cnn else _mlp)(torch)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    with ctx.persistent():
        xb, yb = xb.clone(), yb.clone()
    times, cpu = [], []
    for i in range(steps + 1):
        t, c = time.perf_counter(), time.process_time()
        opt.zero_grad()
        loss_fn(model(xb), yb).backward()
        opt.step()
        ctx.step_end()
        times.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
        if i == 0:
            print(f"first_step_s: {times[0]:.2f}")
            print(f"peak_rss_first_step_mib: {peak_mib():.0f}")
    warm = sorted(times[1:])
    print(f"{name}_step_ms_median: {1000 * warm[len(warm) // 2]:.2f}")
    warm_cpu = sorted(cpu[1:])
    print(f"{name}_step_cpu_ms_median: {1000 * warm_cpu[len(warm_cpu) // 2]:.2f}")
    print(f"arena_bytes_reserved: {ctx.mem_stats()['arena_bytes_reserved']}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cnn", action="store_true", help="time the MNIST CNN instead of the MLP")
    ap.add_argument("--steps", type=int, default=40, help="warm steps to time (default 40)")
    args = ap.parse_args()
    main(args.steps, args.cnn)
