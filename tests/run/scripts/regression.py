#!/usr/bin/env python
"""Fit a random cubic polynomial with one linear layer (the shape of pytorch/examples' regression)."""
import argparse

import torch
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--max-batches", type=int, default=2000)
parser.add_argument("--seed", type=int, default=1)
args = parser.parse_args()
torch.manual_seed(args.seed)

DEGREE = 3
W_true = torch.randn(DEGREE, 1) * 5
b_true = torch.randn(1) * 5


def powers(x):
    """Columns x, x^2, x^3 for a batch of scalars."""
    x = x.unsqueeze(1)
    return torch.cat([x ** i for i in range(1, DEGREE + 1)], 1)


def target(x):
    return x.mm(W_true) + b_true.item()


def describe(W, b):
    terms = " ".join(f"{w:+.2f} x^{i}" for i, w in enumerate(W.view(-1).tolist(), 1))
    return f"y = {terms} {b.item():+.2f}"


def batch(size=32):
    x = powers(torch.randn(size))
    return x, target(x)


model = torch.nn.Linear(W_true.size(0), 1)
for step in range(1, args.max_batches + 1):
    x, y = batch()
    model.zero_grad()
    loss = F.smooth_l1_loss(model(x), y)
    loss.backward()
    with torch.no_grad():
        for p in model.parameters():
            p.add_(-0.1 * p.grad)
    if loss.item() < 1e-3:
        break

print(f"Loss: {loss.item():.6f} after {step} batches")
print("==> Learned function:\t" + describe(model.weight.view(-1), model.bias))
print("==> Actual function:\t" + describe(W_true.view(-1), b_true))
