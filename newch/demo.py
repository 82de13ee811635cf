"""newch's main job: train the MNIST CNN of pytorch/examples on real digits, ``python -m newch.demo``.

Trains on the first 8,000 of the 10,000 MNIST images shipped with newch (or a
full MNIST under ``--data DIR``) with ``Module.fit``, evaluates on the last
2,000, and prints accuracy, time per step and the memory figures.
``--tour`` runs the memory-model tour instead.
"""
import argparse
import time

import newch as torch
import newch.nn as nn
import newch.nn.functional as F
from newch.optim.lr_scheduler import StepLR
from newch.train import LearningRateScheduler
from newch.vision.datasets import MNIST

MEAN, STD = 0.1307, 0.3081


class Net(nn.Module):
    """pytorch/examples' MNIST network: two convolutions, max pooling, dropout, two linears."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = self.dropout2(x)
        return F.log_softmax(self.fc2(x), dim=1)


def images(ds):
    """A dataset's digits as one persistent float tensor (N, 1, 28, 28), normalised once."""
    with torch.persistent():
        x = ((ds.data.float() / 255 - MEAN) / STD).unsqueeze(1)
    return x, ds.targets


def _mib(n):
    return f"{n / 2**20:.1f} MiB"


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m newch.demo", description=__doc__.split("\n")[0])
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=1.0, help="Adadelta learning rate")
    p.add_argument("--threads", type=int, default=0, help="0 = all cores")
    p.add_argument("--data", default=None, help="folder holding MNIST/raw/ (default: shipped)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--verbose", type=int, default=1)
    p.add_argument("--tour", action="store_true", help="the memory-model tour instead")
    args = p.parse_args(argv)
    if args.tour:
        from . import tour
        return tour.main()

    ctx = torch.Context(seed=args.seed, threads=args.threads)
    torch.set_default_context(ctx)
    print(f"newch {torch.__version__}: {ctx.threads} threads, kernels: {ctx.backend}")
    train, test = MNIST(args.data, train=True), MNIST(args.data, train=False)
    x, y = images(train)
    tx, ty = images(test)
    print(f"MNIST: {len(train)} training and {len(test)} test images "
          f"({'shipped with newch' if args.data is None else args.data})")

    model = Net()
    opt = torch.optim.Adadelta(model.parameters(), lr=args.lr)
    sched = LearningRateScheduler(StepLR(opt, step_size=1, gamma=0.7))
    t0 = time.perf_counter()
    hist = model.fit(x, y, loss=F.nll_loss, optimizer=opt, epochs=args.epochs,
                     batch_size=args.batch_size, metrics=["accuracy"], callbacks=[sched],
                     verbose=args.verbose, generator=torch.Generator().manual_seed(args.seed))
    seconds = time.perf_counter() - t0
    steps = hist.params["steps"] * len(hist.epoch)
    res = model.evaluate(tx, ty, loss=F.nll_loss, metrics=["accuracy"], batch_size=100)
    stats = torch.mem_stats()
    print(f"test accuracy {100 * res['accuracy']:.2f}% (loss {res['loss']:.4f}) on "
          f"{len(test)} images after {len(hist.epoch)} epochs")
    print(f"training: {steps} steps in {seconds:.1f} s, {1000 * seconds / max(steps, 1):.1f} ms "
          f"per step (first step includes compiling the kernels)")
    print(f"memory: arena peak {_mib(stats['arena_peak_bytes'])}, reserved "
          f"{_mib(stats['arena_bytes_reserved'])}, persistent {_mib(stats['persistent_bytes'])} "
          f"(data {_mib(x.numel() * 4 + tx.numel() * 4)})")
    return res["accuracy"]


if __name__ == "__main__":
    main()
