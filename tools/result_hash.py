"""Print one sha256 over the bits of a fixed newch workload, to compare machines.

The workload: float32/float64 matmuls (plain, transposed operands, batched),
full and row/column sums, a few elementwise ops, a 3-step training of a
small MLP (Linear-ReLU-Linear, MSE, SGD with momentum) and one training step of
a tiny CNN (Conv2d-ReLU-MaxPool2d-Linear, cross-entropy) from fixed seeds. Every
result's raw bytes go into the hash in a fixed order, so two machines that
print the same hash computed the same bits. CI compares the host (x86) with an
emulated aarch64 root (tools/pi.sh arm64 --hash).

    python tools/result_hash.py            # one line: the hash
    python tools/result_hash.py --verbose  # one line per result as well, to find which differs
"""
import hashlib
import os
import sys

import numpy as np

# Run from a checkout: import its newch, and not tools/ modules (tools/conformance_report.py) as packages.
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:] = [_ROOT] + [p for p in sys.path if p not in ("", os.path.join(_ROOT, "tools"))]

import newch as torch  # noqa: E402


def _data(seed, *shape, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _kernel_results():
    """(name, numpy array) of the matmul, reduction and elementwise parts."""
    out = []
    for dt in (np.float32, np.float64):
        a, b = torch.from_numpy(_data(1, 64, 784, dtype=dt)), torch.from_numpy(_data(2, 784, 256, dtype=dt))
        out.append((f"mm {dt.__name__}", (a @ b).numpy()))
        out.append((f"mm_t {dt.__name__}", (b.t() @ a.t()).numpy()))
        c = torch.from_numpy(_data(3, 4, 33, 65, dtype=dt))
        d = torch.from_numpy(_data(4, 4, 65, 17, dtype=dt))
        out.append((f"bmm {dt.__name__}", torch.matmul(c, d).numpy()))
        x = torch.from_numpy(_data(5, 300, 1000, dtype=dt))
        out.append((f"sum {dt.__name__}", x.sum().numpy()))
        out.append((f"sum rows {dt.__name__}", x.sum(dim=1).numpy()))
        out.append((f"sum cols {dt.__name__}", x.sum(dim=0).numpy()))
        out.append((f"mean {dt.__name__}", x.mean(dim=1).numpy()))
        out.append((f"elementwise {dt.__name__}", (torch.exp(x * 0.1) - torch.sigmoid(x) / 3).numpy()))
    return out


def _mlp_results():
    """Weights and losses of a 3-step MLP training from fixed seeds."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = torch.from_numpy(_data(10, 64, 784)), torch.from_numpy(_data(11, 64, 10))
    out = []
    for step in range(3):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        out.append((f"mlp loss {step}", loss.detach().numpy()))
        torch.default_context().step_end()
    for name, p in model.named_parameters():
        out.append((f"mlp {name}", p.detach().numpy()))
    return out


def _cnn_results():
    """Output, loss, gradients and weights of one training step of a tiny CNN from fixed seeds."""
    nn = torch.nn
    torch.manual_seed(1)
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(4 * 6 * 6, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    x = torch.from_numpy(_data(12, 8, 1, 12, 12))
    y = torch.from_numpy((np.arange(8) * 7 % 10).astype(np.int64))
    opt.zero_grad()
    logits = model(x)
    loss = torch.nn.functional.cross_entropy(logits, y)
    loss.backward()
    out = [("cnn logits", logits.detach().numpy()), ("cnn loss", loss.detach().numpy())]
    out += [(f"cnn grad {name}", p.grad.numpy()) for name, p in model.named_parameters()]
    opt.step()
    out += [(f"cnn {name}", p.detach().numpy()) for name, p in model.named_parameters()]
    torch.default_context().step_end()
    return out


def result_hash(verbose=False):
    """The sha256 (hex) of the workload's results; with verbose, print each part's own hash."""
    total = hashlib.sha256()
    for name, arr in _kernel_results() + _mlp_results() + _cnn_results():
        raw = np.ascontiguousarray(arr).tobytes()
        total.update(name.encode() + b"\0" + raw)
        if verbose:
            print(f"{hashlib.sha256(raw).hexdigest()[:16]}  {name}")
    return total.hexdigest()


if __name__ == "__main__":
    print(result_hash(verbose="--verbose" in sys.argv[1:]))
