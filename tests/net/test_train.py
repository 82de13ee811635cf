"""End to end: a small MLP learns sin(x) on [-3, 3] with hand-written SGD, ending every step.

NOTE: SiLU rather than Tanh: with plain full-batch SGD the Tanh net of the same
shape needs about 2500 steps to reach MSE 1e-3 (PyTorch too), the SiLU one about 500.
"""
import newch
import newch.nn as nn
import newch.nn.functional as F


def test_mlp_fits_sine_with_plain_sgd():
    newch.manual_seed(0)
    model = nn.Sequential(nn.Linear(1, 32), nn.SiLU(), nn.Linear(32, 32), nn.SiLU(),
                          nn.Linear(32, 1))
    with newch.persistent():
        x = newch.linspace(-3, 3, 64).reshape(64, 1)
        y = x.sin()
    first = None
    for step in range(1500):
        loss = F.mse_loss(model(x), y)
        model.zero_grad()
        loss.backward()
        with newch.no_grad():
            for p in model.parameters():
                p -= 0.1 * p.grad
        value = loss.item()
        first = value if first is None else first
        newch.step_end()
        if value < 5e-4:
            break
    assert all(p.is_persistent and p.grad.is_persistent for p in model.parameters())
    with newch.no_grad():
        final = F.mse_loss(model(x), y).item()
    assert final < 1e-3 < first, (first, final, step)
