"""The memory contract of nn: parameters and buffers are persistent, building a model takes
nothing from the step arena, and a training step's temporaries go away with step_end()."""
import newch
import newch.nn as nn
import newch.nn.init as init


def _arena():
    s = newch.mem_stats()
    return s["arena_bytes_in_use"], s["arena_peak_bytes"]


def test_building_modules_allocates_nothing_in_the_arena():
    ctx = newch.default_context()
    ctx.reset_peak()
    before = _arena()
    p0 = newch.mem_stats()["persistent_bytes"]
    model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10), nn.Softmax(dim=1))
    assert _arena() == before
    n = sum(p.numel() for p in model.parameters())
    assert newch.mem_stats()["persistent_bytes"] - p0 >= 4 * n


def test_default_initialisers_allocate_nothing_in_the_arena():
    w = nn.Parameter(newch.ones(64, 32))
    newch.default_context().reset_peak()
    before = _arena()
    for fn in (init.uniform_, init.normal_, init.xavier_uniform_, init.xavier_normal_,
               init.kaiming_uniform_, init.kaiming_normal_, init.zeros_, init.ones_):
        fn(w)
    init.constant_(w, 0.1)
    assert _arena() == before


def test_parameters_buffers_and_grads_survive_step_end():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 2)
            self.register_buffer("seen", newch.zeros(1))

    m = M()
    x = newch.randn(4, 3)
    m.lin(x).pow(2).sum().backward()
    m.seen = m.seen + 1                     # a temporary assigned to a buffer is kept
    newch.step_end()
    assert all(p.is_alive and p.grad.is_alive and p.grad.is_persistent for p in m.parameters())
    assert m.seen.tolist() == [1.0]
    assert m.lin(newch.ones(1, 3)).shape == (1, 2)


def test_training_step_temporaries_are_freed_by_step_end():
    model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 1))
    newch.step_end()
    base = newch.mem_stats()["arena_bytes_in_use"]
    for _ in range(3):
        x = newch.randn(32, 8)
        loss = nn.MSELoss()(model(x), newch.zeros(32, 1))
        loss.backward()
        assert newch.mem_stats()["arena_bytes_in_use"] > base
        newch.step_end()
        assert newch.mem_stats()["arena_bytes_in_use"] == base


def _peak_growth(model, x, grad):
    newch.default_context().reset_peak()
    base = newch.mem_stats()["arena_bytes_in_use"]
    with newch.set_grad_enabled(grad):
        y = model(x)
    assert y.shape == x.shape
    return newch.mem_stats()["arena_peak_bytes"] - base


def test_inference_under_no_grad_does_not_grow_with_depth():
    x = newch.randn(32, 64)
    shallow = nn.Sequential(*[nn.Linear(64, 64) for _ in range(2)])
    deep = nn.Sequential(*[nn.Linear(64, 64) for _ in range(8)])
    # without a graph each layer's input is freed as soon as the next layer has run
    assert _peak_growth(deep, x, False) == _peak_growth(shallow, x, False)
    assert _peak_growth(deep, x, True) > _peak_growth(deep, x, False) + 5 * 32 * 64 * 4
