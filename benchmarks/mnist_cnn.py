"""The MNIST CNN training step (pytorch/examples' Net), newch against PyTorch, each in its own process.

    python benchmarks/mnist_cnn.py [--threads 1,2] [--steps 20] [--no-cold] [--no-resnet] [--no-mobile]

For each thread count it prints the median step time of newch and of PyTorch
(when installed) and their ratio, on batch 64 of fixed random data, SGD with
momentum. For newch it also prints, in MiB: the arena peak of one step, what
the graph holds for backward right after the forward, and the peak when
``backward(retain_graph=True)`` keeps every saved tensor; and the seconds of a
cold first step (import + first step with an empty kernel cache, in a fresh
process with a temporary NUMBA_CACHE_DIR). Then a CIFAR ResNet-20 step (batch
32, 3x32x32) and a MobileNet-style stack of depthwise-separable blocks (batch 32, 3x32x32)
when newch has BatchNorm2d.

Dropout and nll_loss come from newch when it has them; otherwise the script
uses small stand-ins built from newch ops (a bool mask times the input, and
minus the mean of the gathered log-probabilities), which keep the same bytes
for backward as a byte-mask Dropout would.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MIB = 1 << 20


def _stand_ins(lib):
    """(dropout, nll_loss) of ``lib``, or stand-ins built from its ops."""
    F = lib.nn.functional
    dropout, nll = getattr(F, "dropout", None), getattr(F, "nll_loss", None)
    if dropout is None:
        def dropout(x, p=0.5, training=True):
            if not training or p == 0:
                return x
            return x * (lib.rand(tuple(x.shape)) >= p) * (1.0 / (1.0 - p))
    if nll is None:
        def nll(logp, target):
            return -(logp.gather(1, target.unsqueeze(1))).mean()
    return dropout, nll


def mnist_net(lib):
    """pytorch/examples' MNIST Net, written once for either library."""
    nn, F = lib.nn, lib.nn.functional
    dropout, _ = _stand_ins(lib)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 32, 3, 1)
            self.conv2 = nn.Conv2d(32, 64, 3, 1)
            self.fc1 = nn.Linear(9216, 128)
            self.fc2 = nn.Linear(128, 10)

        def forward(self, x):
            x = F.relu(self.conv1(x))
            x = F.relu(self.conv2(x))
            x = F.max_pool2d(x, 2)
            x = dropout(x, 0.25, self.training)
            x = lib.flatten(x, 1)
            x = F.relu(self.fc1(x))
            x = dropout(x, 0.5, self.training)
            return F.log_softmax(self.fc2(x), dim=1)
    return Net()


def resnet20(lib):
    """CIFAR ResNet-20: 3x3 conv 16, three stages of 3 basic blocks (16/32/64), avg pool, Linear."""
    nn, F = lib.nn, lib.nn.functional

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.short = None
            if stride != 1 or cin != cout:
                self.short = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                           nn.BatchNorm2d(cout))

        def forward(self, x):
            y = F.relu(self.bn1(self.conv1(x)))
            y = self.bn2(self.conv2(y))
            return F.relu(y + (x if self.short is None else self.short(x)))

    layers = [nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU()]
    cin = 16
    for cout, stride in ((16, 1), (32, 2), (64, 2)):
        for i in range(3):
            layers.append(Block(cin, cout, stride if i == 0 else 1))
            cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10)]
    return nn.Sequential(*layers)


def mobile_block(lib):
    """A MobileNet-style stack: 3x3 conv 32, then two depthwise-separable blocks (3x3 depthwise
    conv with groups=C, BatchNorm, ReLU, 1x1 pointwise conv, BatchNorm, ReLU) to 64 and 128 channels."""
    nn = lib.nn

    def block(cin, cout, stride):
        return [nn.Conv2d(cin, cin, 3, stride, 1, groups=cin, bias=False), nn.BatchNorm2d(cin),
                nn.ReLU(), nn.Conv2d(cin, cout, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()]

    layers = [nn.Conv2d(3, 32, 3, 1, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU()]
    layers += block(32, 64, 1) + block(64, 128, 2)
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, 10)]
    return nn.Sequential(*layers)


MODELS = {"mnist": ("MNIST Net, batch 64", 64, (1, 28, 28)),
          "resnet": ("ResNet-20, batch 32, 3x32x32", 32, (3, 32, 32)),
          "mobile": ("MobileNet-style blocks (depthwise groups=C), batch 32, 3x32x32", 32, (3, 32, 32))}


def _data(lib, batch, shape, classes=10):
    import numpy as np
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch,) + shape).astype(np.float32)
    y = rng.integers(0, classes, batch)
    return lib.tensor(x), lib.tensor(y)


def _step_fn(lib, model, opt, x, y, resnet):
    F = lib.nn.functional
    _, nll = _stand_ins(lib)

    def step(retain=False):
        opt.zero_grad()
        out = model(x)
        loss = nll(F.log_softmax(out, dim=1) if resnet else out, y)
        loss.backward(retain_graph=retain)
        opt.step()
        return loss
    return step


def worker(lib_name, threads, steps, which):
    """Run in a child process: time steps, measure memory; print one JSON line."""
    t0 = time.perf_counter()
    if lib_name == "torch":
        import torch as lib
        lib.set_num_threads(threads)
    else:
        sys.path.insert(0, ROOT)
        import newch as lib
        lib.set_default_context(lib.Context(seed=0, threads=threads))
    lib.manual_seed(0)
    resnet = which != "mnist"     # the image models end in logits, not log-probabilities
    if resnet and not hasattr(lib.nn, "BatchNorm2d"):
        print(json.dumps({"skipped": "no BatchNorm2d"}))
        return
    model = {"mnist": mnist_net, "resnet": resnet20, "mobile": mobile_block}[which](lib)
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    _, batch, shape = MODELS[which]
    x, y = _data(lib, batch, shape)
    if lib_name == "newch":
        with lib.persistent():
            x, y = x.clone(), y.clone()
    step = _step_fn(lib, model, opt, x, y, resnet)
    step()
    res = {"first_step_s": time.perf_counter() - t0}
    end = getattr(lib, "step_end", lambda: None)
    end()
    times = []
    for _ in range(steps):
        t = time.perf_counter()
        step()
        times.append(time.perf_counter() - t)
        end()
    res["median_ms"] = 1e3 * statistics.median(times)
    if lib_name == "newch":
        res.update(_newch_memory(lib, model, opt, x, y, step, resnet))
    print(json.dumps(res))


def _newch_memory(lib, model, opt, x, y, step, resnet):
    ctx = lib.default_context()
    ctx.reset_peak()
    step()
    peak = lib.mem_stats()["arena_peak_bytes"]
    lib.step_end()
    before = lib.mem_stats()["arena_bytes_in_use"]
    F = lib.nn.functional
    _, nll = _stand_ins(lib)
    opt.zero_grad()
    out = model(x)
    loss = nll(F.log_softmax(out, dim=1) if resnet else out, y)
    held = lib.mem_stats()["arena_bytes_in_use"] - before
    loss.backward()
    del out, loss
    lib.step_end()
    ctx.reset_peak()
    step(retain=True)
    retain_peak = lib.mem_stats()["arena_peak_bytes"]
    lib.step_end()
    return {"arena_peak_mib": peak / MIB, "held_after_forward_mib": held / MIB,
            "retain_graph_peak_mib": retain_peak / MIB}


def _run(args, env=None):
    cmd = [sys.executable, os.path.abspath(__file__), "--worker"] + args
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
    if p.returncode != 0:
        return {"error": p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "failed"}
    return json.loads(p.stdout.strip().splitlines()[-1])


def _have_torch():
    try:
        import importlib.util
        return importlib.util.find_spec("torch") is not None
    except ValueError:
        return False


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--no-cold", action="store_true", help="skip the empty-cache first step")
    ap.add_argument("--no-resnet", action="store_true", help="skip the ResNet-20 step")
    ap.add_argument("--no-mobile", action="store_true", help="skip the MobileNet-style step")
    ap.add_argument("--worker", nargs=4, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        lib, threads, steps, which = a.worker
        worker(lib, int(threads), int(steps), which)
        return
    torch_ok = _have_torch()
    models = ["mnist"] + ([] if a.no_resnet else ["resnet"]) + ([] if a.no_mobile else ["mobile"])
    for model in models:
        print(f"\n{MODELS[model][0]} (SGD momentum; median of {a.steps} steps)")
        print(f"{'threads':>7} {'newch ms':>9} {'torch ms':>9} {'ratio':>6} {'peak MiB':>9} "
              f"{'held MiB':>9} {'retain MiB':>10}")
        for n in [int(t) for t in a.threads.split(",")]:
            nc = _run(["newch", str(n), str(a.steps), model])
            tc = _run(["torch", str(n), str(a.steps), model]) if torch_ok else {}
            if "skipped" in nc or "error" in nc:
                print(f"{n:>7} newch: {nc.get('skipped') or nc.get('error')}")
                continue
            tms = tc.get("median_ms")
            ratio = f"{nc['median_ms'] / tms:6.2f}" if tms else "     -"
            print(f"{n:>7} {nc['median_ms']:9.1f} {tms if tms is None else round(tms, 1)!s:>9} {ratio} "
                  f"{nc['arena_peak_mib']:9.1f} {nc['held_after_forward_mib']:9.1f} "
                  f"{nc['retain_graph_peak_mib']:10.1f}")
    if not a.no_cold:
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, NUMBA_CACHE_DIR=cache)
            t = time.perf_counter()
            r = _run(["newch", "2", "1", "mnist"], env=env)
            print(f"\ncold first MNIST step (empty kernel cache, import included): "
                  f"{time.perf_counter() - t:.1f} s wall, {r.get('first_step_s', float('nan')):.1f} s "
                  f"in the process" + (f" ({r['error']})" if "error" in r else ""))


if __name__ == "__main__":
    main()
