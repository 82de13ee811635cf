"""Memory is given back as it goes: during backward, under no_grad, and in loops without step_end()."""

import newch


def _mlp(depth, width):
    with newch.persistent():
        ws = [(newch.randn(width, width) * (2 / width) ** 0.5).requires_grad_() for _ in range(depth)]
    return ws


def _forward(ws, x):
    for w in ws:
        x = (x @ w).relu()
    return x.pow(2).mean()


def test_backward_of_a_20_layer_mlp_frees_as_it_goes(ctx):
    depth, width, batch = 20, 256, 64
    ws = _mlp(depth, width)
    x = newch.randn(batch, width)
    base = newch.mem_stats()["arena_bytes_in_use"]
    loss = _forward(ws, x)
    activations = newch.mem_stats()["arena_bytes_in_use"] - base    # what the graph saved
    act_grads = activations                                          # one gradient per activation
    ctx.reset_peak()
    loss.backward()
    peak = newch.mem_stats()["arena_peak_bytes"] - base
    print(f"\nactivations {activations} B, + all their gradients {activations + act_grads} B, "
          f"backward peak {peak} B")
    # NOTE: per layer the graph keeps one float tensor (the matmul's input, which is the previous
    # ReLU's output, as in PyTorch) and relu's one-bit mask, not a second float copy.
    full = depth * batch * width * 4
    assert full * 0.9 <= activations <= full * 1.2
    # NOTE: the peak is the saved activations plus a few gradients and the gemm packing
    # scratch at a time, not "every activation and every gradient".
    grad_bytes = batch * width * 4
    gemm_bytes = ctx.kernels.gemm_scratch(batch, width, width) * 4
    assert peak - activations <= gemm_bytes + 6 * grad_bytes
    assert peak < 0.8 * (activations + act_grads)
    del loss
    assert newch.mem_stats()["arena_bytes_in_use"] == base           # graph fully released
    assert all(w.grad is not None and w.grad.is_persistent for w in ws)


def test_no_grad_chain_of_1000_ops_peaks_at_a_few_intermediates(ctx):
    x = newch.randn(128, 128)
    size = x.numel() * 4
    ctx.reset_peak()
    base = newch.mem_stats()["arena_bytes_in_use"]
    with newch.no_grad():
        y = x
        for i in range(1000):
            y = (y * 0.999) if i % 2 else (y + 0.001)
    peak = newch.mem_stats()["arena_peak_bytes"] - base
    print(f"\n1000-op chain: intermediate {size} B, peak {peak} B")
    assert peak <= 2 * size
    assert newch.mem_stats()["arena_bytes_in_use"] - base == size


def test_training_loop_without_step_end_keeps_reserved_flat(ctx):
    ws = _mlp(3, 64)
    x = newch.randn(32, 64)
    reserved = []
    for step in range(1000):
        loss = _forward(ws, x)
        loss.backward()
        with newch.no_grad():
            for w in ws:
                w.sub_(w.grad * 0.01)
                w.grad = None
        reserved.append(newch.mem_stats()["arena_bytes_reserved"])
    assert reserved[10] == reserved[-1]
    assert newch.mem_stats()["arena_bytes_in_use"] <= x.numel() * 4 + 64 * 4 * 2
