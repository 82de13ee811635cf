"""Cold start: from interpreter start (import included) to the end of a workload's first step.

    python benchmarks/cold_start.py [--workload mlp] [--threads 2] [--report]

Run it with an empty kernel cache to measure what a newcomer waits for
(``python -m newch.kernels.report --cold mlp`` does that in a fresh process,
with an empty temporary ``NUMBA_CACHE_DIR``, and prints which kernels were
compiled and how long each took). With a warm cache it measures loading.

Workloads (later issues add theirs to ``WORKLOADS``):

- ``mlp``: ``Linear(784, 256) -> ReLU -> Linear(256, 10)``, ``F.mse_loss``,
  ``SGD(lr=0.01, momentum=0.9)``, batch 64, one training step.
- ``cnn``: pytorch/examples' MNIST ``Net`` (two 3x3 convolutions, max pool,
  dropout, two Linear layers, ``log_softmax``), ``F.nll_loss``, SGD with
  momentum, batch 64 of 1x28x28, one training step.
- ``tiny``: ``(x + x).sum()`` on 10 floats (the smallest cold start).
- ``rnn``: one forward and backward of a fused ``LSTM(200, 200)``, ``GRU(200, 200)``
  and ``RNN(200, 200)`` (one layer each) over a sequence of 35 steps, batch 20 (the
  word LM's sizes: the cell kernels run serially).

Prints ``workload <name>: first step <s> s wall, <s> s CPU (import <s> s)``; the
times start before ``import newch`` (CPU time is the figure to trust on a busy
machine: compilation is single-threaded).
"""
import time

T0 = time.perf_counter()
C0 = time.process_time()

import argparse  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def mlp(torch, steps=1):
    """One (or ``steps``) SGD training steps of a 784-256-10 MLP on random data, batch 64."""
    nn, F = torch.nn, torch.nn.functional
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    for _ in range(steps):
        x = torch.randn(64, 784)
        y = torch.randn(64, 10)
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        torch.step_end()


def cnn(torch, steps=1):
    """One SGD step of pytorch/examples' MNIST Net (conv 32, conv 64, max pool, dropout, fc 128,
    fc 10, log_softmax), ``F.nll_loss``, ``SGD(lr=0.01, momentum=0.9)``, batch 64 of 1x28x28."""
    nn, F = torch.nn, torch.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 32, 3, 1)
            self.conv2 = nn.Conv2d(32, 64, 3, 1)
            self.dropout1 = nn.Dropout(0.25)
            self.dropout2 = nn.Dropout(0.5)
            self.fc1 = nn.Linear(9216, 128)
            self.fc2 = nn.Linear(128, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv2(F.relu(self.conv1(x)))), 2)
            x = torch.flatten(self.dropout1(x), 1)
            x = self.dropout2(F.relu(self.fc1(x)))
            return F.log_softmax(self.fc2(x), dim=1)

    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    for _ in range(steps):
        x = torch.randn(64, 1, 28, 28)
        y = torch.randint(0, 10, (64,))
        opt.zero_grad()
        loss = F.nll_loss(model(x), y)
        loss.backward()
        opt.step()
        torch.step_end()


def tiny(torch):
    """One elementwise op on 10 floats: the smallest cold start (tests use it)."""
    x = torch.ones(10)
    (x + x).sum().item()


def rnn(torch):
    """Forward and backward of a fused LSTM, GRU and RNN (200 -> 200, one layer), T=35, batch 20."""
    torch.manual_seed(0)
    for kind in ("LSTM", "GRU", "RNN"):
        layer = getattr(torch.nn, kind)(200, 200)
        out, _ = layer(torch.randn(35, 20, 200, requires_grad=True))
        out.sum().backward()
        torch.step_end()


WORKLOADS = {"mlp": mlp, "cnn": cnn, "tiny": tiny, "rnn": rnn}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workload", default="mlp", choices=sorted(WORKLOADS))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--report", action="store_true",
                   help="print newch.kernels.report() after the step")
    args = p.parse_args(argv)
    import newch as torch
    t_import = time.perf_counter() - T0
    torch.set_default_context(torch.Context(seed=0, threads=args.threads))
    WORKLOADS[args.workload](torch)
    total = time.perf_counter() - T0
    cpu = time.process_time() - C0
    print(f"workload {args.workload}: first step {total:.2f} s wall, {cpu:.2f} s CPU "
          f"(import {t_import:.2f} s)")
    if args.report:
        from newch.kernels import report
        print(report.report())


if __name__ == "__main__":
    main()
