"""Backward through time frees each step's saved tensors as it goes: the arena peak of an LSTM
training step stays within 1.2x of the bytes its graph holds after the forward (issue 14)."""
import pytest

import newch


@pytest.mark.parametrize("input_grad", [False, True])
def test_lstm_backward_peak_is_at_most_1_2x_the_graph(input_grad):
    newch.manual_seed(0)
    lstm = newch.nn.LSTM(32, 32, num_layers=2)
    ctx = newch.default_context()
    x = newch.randn(20, 8, 32).requires_grad_(input_grad)
    w = newch.randn(20, 8, 32)
    base = newch.mem_stats()["arena_bytes_in_use"]
    out, _ = lstm(x)
    loss = (out * w).sum()
    held = newch.mem_stats()["arena_bytes_in_use"] - base
    ctx.reset_peak()
    loss.backward()
    peak = newch.mem_stats()["arena_peak_bytes"] - base
    assert held > 0
    assert peak <= 1.2 * held, f"backward peak {peak} B > 1.2 x the {held} B the graph holds"
    newch.step_end()


@pytest.mark.parametrize("layers,input_grad", [(1, False), (1, True), (2, False), (2, True)])
def test_benchmark_sized_lstm_step_peak_is_at_most_1_2x_the_graph(layers, input_grad):
    # benchmarks/lstm_memory.py's sizes (the word LM's LSTM): there the products are gemms
    # whose packing scratch alone (2.3 MiB in one piece) would exceed the bound
    newch.manual_seed(0)
    lstm = newch.nn.LSTM(200, 200, num_layers=layers)
    ctx = newch.default_context()
    newch.step_end()
    w = newch.randn(35, 20, 200)
    base = newch.mem_stats()["arena_bytes_in_use"]
    ctx.reset_peak()
    x = newch.randn(35, 20, 200).requires_grad_(input_grad)
    out, _ = lstm(x)
    loss = (out * w).sum()
    held = newch.mem_stats()["arena_bytes_in_use"] - base
    loss.backward()
    # the whole step: the forward's peak (its gemm scratch) counts too
    peak = newch.mem_stats()["arena_peak_bytes"] - base
    assert peak <= 1.2 * held, f"step peak {peak} B > 1.2 x the {held} B the graph holds"
    assert all(p.grad.is_persistent for p in lstm.parameters())
    newch.step_end()
