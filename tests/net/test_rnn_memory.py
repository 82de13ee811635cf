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
