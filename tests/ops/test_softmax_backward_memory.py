"""softmax / log_softmax backward without create_graph compute in one fresh buffer: the same bits as
the recorded formula (create_graph=True), gradients as PyTorch's, and one temporary of the input's
size at the backward's peak instead of three."""
import numpy as np
import pytest

import newch


def _grads(fn, x_np, g_np, create_graph):
    x = newch.tensor(x_np, requires_grad=True)
    y = fn(x, 1)
    (gx,) = newch.autograd.grad(y, x, newch.tensor(g_np), create_graph=create_graph)
    return gx.detach().numpy()


@pytest.mark.parametrize("fn", [newch.softmax, newch.log_softmax], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_buffer_path_gives_the_bits_of_the_recorded_formula_and_torchs_values(fn, dtype):
    rng = np.random.default_rng(1)
    x_np = (rng.standard_normal((7, 33)) * 3).astype(dtype)
    g_np = rng.standard_normal((7, 33)).astype(dtype)
    fast = _grads(fn, x_np, g_np, create_graph=False)
    recorded = _grads(fn, x_np, g_np, create_graph=True)
    np.testing.assert_array_equal(fast, recorded)
    torch = pytest.importorskip("torch")
    tx = torch.tensor(x_np, requires_grad=True)
    tf = torch.softmax if fn is newch.softmax else torch.log_softmax
    (tg,) = torch.autograd.grad(tf(tx, 1), tx, torch.tensor(g_np))
    np.testing.assert_allclose(fast, tg.numpy(), rtol=1e-5 if dtype == np.float32 else 1e-12,
                               atol=1e-6 if dtype == np.float32 else 1e-13)


def test_an_expanded_incoming_gradient_works():
    x = newch.randn(4, 5, requires_grad=True)
    newch.log_softmax(x, 1).sum().backward()          # the gradient of sum() is an expanded 1
    want = 1 - 5 * newch.softmax(x, 1).detach().numpy()
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-5, atol=1e-6)


def test_log_softmax_backward_holds_one_temporary_of_the_input_size():
    n = 256 * 1024                 # 1 MiB of float32 per buffer
    ctx = newch.default_context()
    newch.step_end()
    x = newch.randn(64, n // 64, requires_grad=True)
    y = newch.log_softmax(x, 1)
    g = newch.randn(64, n // 64)
    base = newch.mem_stats()["arena_bytes_in_use"]
    ctx.reset_peak()
    (gx,) = newch.autograd.grad(y, x, g)
    extra = newch.mem_stats()["arena_peak_bytes"] - base
    # the result itself (1 MiB) plus small row sums; the recorded formula needed 3 MiB
    assert extra < 1.5 * 4 * n, extra
    newch.step_end()
