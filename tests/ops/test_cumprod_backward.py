"""cumprod's backward: PyTorch's gradients with zeros anywhere along the dim (none, one, several,
first, last), any dim, a dtype= cast; and computed in arena memory only (no numpy temporaries)."""
import tracemalloc

import numpy as np
import pytest

import newch


def _case(shape, dim, zeros, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.5, 1.5, shape) * rng.choice([-1.0, 1.0], shape)
    flat = x.reshape(-1)
    for i in zeros:
        flat[i] = 0.0
    g = rng.standard_normal(shape)
    return x, g


CASES = [((4, 6), 1, []), ((4, 6), 1, [0]), ((4, 6), 1, [5]), ((4, 6), 1, [2, 3, 14]),
         ((4, 6), 0, [1, 7]), ((3, 4, 5), 1, [6, 26, 27]), ((7,), 0, [3]), ((2, 3, 4), 2, [0, 1])]


@pytest.mark.parametrize("shape,dim,zeros", CASES)
def test_cumprod_gradient_matches_pytorch(shape, dim, zeros):
    torch = pytest.importorskip("torch")
    x, g = _case(shape, dim, zeros)
    nx = newch.tensor(x, requires_grad=True)
    newch.cumprod(nx, dim).backward(newch.tensor(g))
    tx = torch.tensor(x, requires_grad=True)
    torch.cumprod(tx, dim).backward(torch.tensor(g))
    np.testing.assert_allclose(nx.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_cumprod_gradient_by_hand_with_a_zero():
    # y = (a, ab, abc) with b = 0: dy.g/da = g0 + b g1 + bc g2 = g0, dy/db = a g1 + ac g2, dy/dc = ab g2 = 0
    x = newch.tensor([2.0, 0.0, 3.0], requires_grad=True)
    newch.cumprod(x, 0).backward(newch.tensor([1.0, 10.0, 100.0]))
    assert x.grad.tolist() == [1.0, 2 * 10.0 + 2 * 3 * 100.0, 0.0]


def test_cumprod_with_a_dtype_gives_the_input_dtype_gradient():
    x = newch.tensor([1.5, 0.0, 2.0], requires_grad=True)
    y = newch.cumprod(x, 0, dtype=newch.float64)
    y.sum().backward()
    assert x.grad.dtype == newch.float32
    assert x.grad.tolist() == [1.0, 1.5 + 1.5 * 2.0, 0.0]


@pytest.mark.parametrize("zeros", [False, True])
def test_cumprod_backward_allocates_nothing_outside_the_arena(zeros):
    x_np = np.random.default_rng(0).uniform(0.5, 1.5, (64, 4096)).astype(np.float32)
    if zeros:
        x_np[:, 100] = 0
    with newch.persistent():
        x = newch.tensor(x_np, requires_grad=True)
        g = newch.ones(64, 4096)
    newch.autograd.grad(newch.cumprod(x, 1), x, g)     # the arena grows its blocks once
    newch.step_end()
    y = newch.cumprod(x, 1)
    tracemalloc.start()
    try:
        (gx,) = newch.autograd.grad(y, x, g)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # the arena's own blocks are numpy arrays too: warmed above, so none is added here
    assert peak < x_np.nbytes // 8, f"{peak} B of numpy/Python memory in backward"
    assert np.isfinite(gx.numpy()).all()
    newch.step_end()
