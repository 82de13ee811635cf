"""Batch, layer and group norm: torch parity (values, gradients, running statistics over several
steps, momentum=None, eval mode, options), finite differences, state_dict, reprs and errors."""
import numpy as np
import pytest

import newch
import newch.nn as nn
import newch.nn.functional as F

from tests.autograd.gradcheck import gradcheck, to_np

RNG = np.random.default_rng(11)


def _copy_params(src, dst):
    with newch.no_grad():
        for (name, p), (_, q) in zip(src.named_parameters(), dst.named_parameters()):
            q.copy_(newch.tensor(p.detach().numpy()))


def _run_steps(torch, make, shape, steps, train=True):
    """Run both libraries' layer ``steps`` times; returns per-step (out, dx, param grads) and layers."""
    t_mod, n_mod = make(torch), make(newch)
    _copy_params(t_mod, n_mod)
    t_mod.train(train)
    n_mod.train(train)
    results = []
    for k in range(steps):
        x0 = RNG.standard_normal(shape).astype(np.float32) * (k + 1) + k
        up = RNG.standard_normal(shape).astype(np.float32)
        pair = []
        for lib, mod in ((torch, t_mod), (newch, n_mod)):
            mod.zero_grad()
            x = lib.tensor(x0, requires_grad=True)
            y = mod(x)
            y.backward(lib.tensor(up))
            grads = [p.grad.numpy().copy() for p in mod.parameters()]
            pair.append([y.detach().numpy().copy(), x.grad.numpy().copy()] + grads)
        results.append(pair)
        newch.step_end()
    return results, t_mod, n_mod


def _close(pairs, rtol=1e-4, atol=1e-5):
    for t_vals, n_vals in pairs:
        assert len(t_vals) == len(n_vals)
        for a, b in zip(n_vals, t_vals):
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def _buffers_close(t_mod, n_mod):
    tb, nb = dict(t_mod.named_buffers()), dict(n_mod.named_buffers())
    assert list(tb) == list(nb)
    for k in tb:
        np.testing.assert_allclose(nb[k].numpy(), tb[k].numpy(), rtol=1e-5, atol=1e-6, err_msg=k)


@pytest.mark.parametrize("cls, shape", [("BatchNorm1d", (8, 3)), ("BatchNorm1d", (4, 3, 5)),
                                        ("BatchNorm2d", (4, 3, 5, 6))])
@pytest.mark.parametrize("momentum", [0.1, 0.5, None])
def test_batch_norm_training_steps_match_torch(torch, cls, shape, momentum):
    results, t_mod, n_mod = _run_steps(
        torch, lambda lib: getattr(lib.nn, cls)(3, momentum=momentum), shape, 4)
    _close(results)
    _buffers_close(t_mod, n_mod)
    assert n_mod.num_batches_tracked.item() == 4
    # then eval mode uses the running statistics, in both
    results, _, _ = _run_eval(torch, t_mod, n_mod, shape)
    _close(results)


def _run_eval(torch, t_mod, n_mod, shape):
    t_mod.eval()
    n_mod.eval()
    x0 = RNG.standard_normal(shape).astype(np.float32)
    up = RNG.standard_normal(shape).astype(np.float32)
    pair = []
    for lib, mod in ((torch, t_mod), (newch, n_mod)):
        mod.zero_grad()
        x = lib.tensor(x0, requires_grad=True)
        mod(x).backward(lib.tensor(up))
        pair.append([mod(x).detach().numpy(), x.grad.numpy()] +
                    [p.grad.numpy() for p in mod.parameters()])
    return [pair], t_mod, n_mod


@pytest.mark.parametrize("kw", [{"affine": False}, {"track_running_stats": False},
                                {"affine": False, "track_running_stats": False}, {"bias": False},
                                {"eps": 1e-2}])
def test_batch_norm_options_match_torch(torch, kw):
    results, t_mod, n_mod = _run_steps(torch, lambda lib: lib.nn.BatchNorm2d(3, **kw),
                                       (2, 3, 4, 4), 2)
    _close(results)
    _buffers_close(t_mod, n_mod)
    results, _, _ = _run_eval(torch, t_mod, n_mod, (2, 3, 4, 4))
    _close(results)
    assert list(n_mod.state_dict()) == list(t_mod.state_dict())
    assert repr(n_mod) == repr(t_mod)


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_finite_differences(training):
    rm, rv = newch.tensor(RNG.standard_normal(3)), newch.tensor(RNG.random(3) + 0.5)
    gradcheck(lambda x, w, b: F.batch_norm(x, rm.clone() if training else rm, rv.clone() if training
                                           else rv, w, b, training=training, eps=1e-3),
              RNG.standard_normal((4, 3, 5)), RNG.standard_normal(3), RNG.standard_normal(3))


def test_batch_norm_large_input_parallel_path_matches_ref():
    x = newch.tensor(RNG.standard_normal((16, 8, 32, 32)).astype(np.float32), requires_grad=True)
    w = newch.tensor(RNG.standard_normal(8).astype(np.float32), requires_grad=True)
    y = F.batch_norm(x, None, None, w, None, training=True)
    y.backward(newch.tensor(RNG.standard_normal((16, 8, 32, 32)).astype(np.float32)))
    a = x.detach().numpy().astype(np.float64)
    m = a.mean((0, 2, 3), keepdims=True)
    v = a.var((0, 2, 3), keepdims=True)
    want = (a - m) / np.sqrt(v + 1e-5) * w.detach().numpy()[None, :, None, None]
    np.testing.assert_allclose(y.detach().numpy(), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("shape, ns", [((4, 6), (6,)), ((2, 3, 4, 5), (4, 5)), ((3, 200), 200)])
@pytest.mark.parametrize("kw", [{}, {"elementwise_affine": False}, {"bias": False}])
def test_layer_norm_matches_torch(torch, shape, ns, kw):
    def make(lib):
        m = lib.nn.LayerNorm(ns, **kw)
        with lib.no_grad():
            for p in m.parameters():
                p.copy_(lib.tensor(RNG_P.standard_normal(tuple(p.shape)).astype(np.float32)))
        return m
    RNG_P = np.random.default_rng(3)
    results, t_mod, n_mod = _run_steps(torch, make, shape, 1)
    _close(results)
    assert repr(n_mod) == repr(t_mod)


@pytest.mark.parametrize("groups, shape", [(1, (2, 4, 3)), (2, (2, 4, 3, 3)), (4, (3, 4, 2))])
@pytest.mark.parametrize("affine", [True, False])
def test_group_norm_matches_torch(torch, groups, shape, affine):
    def make(lib):
        m = lib.nn.GroupNorm(groups, 4, affine=affine)
        with lib.no_grad():
            for p in m.parameters():
                p.copy_(lib.tensor(np.linspace(-1, 2, 4, dtype=np.float32)))
        return m
    results, t_mod, n_mod = _run_steps(torch, make, shape, 1)
    _close(results)
    assert repr(n_mod) == repr(t_mod)


def test_layer_and_group_norm_finite_differences():
    gradcheck(lambda x, w, b: F.layer_norm(x, (2, 3), w, b), RNG.standard_normal((4, 2, 3)),
              RNG.standard_normal((2, 3)), RNG.standard_normal((2, 3)))
    gradcheck(lambda x, w, b: F.group_norm(x, 2, w, b, eps=1e-3), RNG.standard_normal((2, 4, 3)),
              RNG.standard_normal(4), RNG.standard_normal(4))
    gradcheck(lambda x, b: F.layer_norm(x, (3,), None, b), RNG.standard_normal((2, 3)),
              RNG.standard_normal(3))


def test_layer_norm_param_grad_parallel_path():
    x = newch.tensor(RNG.standard_normal((300, 130)), requires_grad=True)
    w = newch.tensor(RNG.standard_normal(130), requires_grad=True)
    b = newch.tensor(RNG.standard_normal(130), requires_grad=True)
    g = RNG.standard_normal((300, 130))
    F.layer_norm(x, (130,), w, b).backward(newch.tensor(g))
    a = to_np(x)
    xhat = (a - a.mean(1, keepdims=True)) / np.sqrt(a.var(1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(to_np(w.grad), (g * xhat).sum(0), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(to_np(b.grad), g.sum(0), rtol=1e-9, atol=1e-9)


def test_batch_norm_state_dict_round_trips_with_torch(torch):
    t_bn = torch.nn.BatchNorm1d(3)
    t_bn(torch.randn(5, 3))
    n_bn = nn.BatchNorm1d(3)
    n_bn.load_state_dict({k: newch.tensor(v.numpy()) for k, v in t_bn.state_dict().items()})
    assert n_bn.num_batches_tracked.item() == 1
    np.testing.assert_allclose(n_bn.running_var.numpy(), t_bn.running_var.numpy())
    assert all(t.is_persistent for t in n_bn.buffers())


def test_batch_norm_errors():
    with pytest.raises(ValueError, match="BatchNorm2d: expected 4D input \\(got 2D input\\)"):
        nn.BatchNorm2d(3)(newch.randn(2, 3))
    with pytest.raises(ValueError, match="batch_norm: expected more than 1 value per channel"):
        nn.BatchNorm1d(3)(newch.randn(1, 3))
    with pytest.raises(RuntimeError, match="batch_norm: running_mean should contain 3 elements"):
        F.batch_norm(newch.randn(2, 3), newch.zeros(4), newch.ones(3))
    with pytest.raises(RuntimeError, match="batch_norm: running_mean and running_var must be"):
        F.batch_norm(newch.randn(2, 3), None, None)
    with pytest.raises(TypeError, match="batch_norm: expected a floating point tensor"):
        F.batch_norm(newch.tensor([[1, 2], [3, 4]]), None, None, training=True)


def test_layer_and_group_norm_errors():
    with pytest.raises(RuntimeError, match="layer_norm: given normalized_shape=\\[4\\]"):
        F.layer_norm(newch.randn(3, 5), (4,))
    with pytest.raises(ValueError, match="GroupNorm: num_channels \\(4\\) must be divisible"):
        nn.GroupNorm(3, 4)
    with pytest.raises(RuntimeError, match="group_norm: expected the number of channels"):
        F.group_norm(newch.randn(2, 4), 3)


def test_eval_backward_after_running_stats_change_is_safe():
    """The eval-mode graph keeps its own copy of the running statistics."""
    bn = nn.BatchNorm1d(2)
    bn.eval()
    x = newch.randn(4, 2, requires_grad=True)
    y = bn(x)
    bn.train()
    bn(newch.randn(4, 2) * 5)          # changes running_mean / running_var in place
    y.sum().backward()
    np.testing.assert_allclose(to_np(x.grad), np.full((4, 2), 1 / np.sqrt(1 + 1e-5)), rtol=1e-6)


def test_stale_input_is_reported_at_backward():
    x = newch.randn(4, 3, requires_grad=True)
    with newch.persistent():
        w = newch.ones(3, requires_grad=True)
    y = F.layer_norm(x * 2, (3,), w)
    newch.step_end()
    with pytest.raises(newch.NcError):
        y.sum()


def test_weight_changed_in_place_before_backward_is_refused():
    bn = nn.BatchNorm1d(3)
    x = newch.randn(4, 3, requires_grad=True)
    y = bn(x)
    with newch.no_grad():
        bn.weight.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_released_input_is_reported_at_backward():
    with newch.persistent():
        x = newch.randn(4, 3, requires_grad=True)
    w = nn.LayerNorm(3).weight
    y = F.layer_norm(x, (3,), w)
    newch.release(x)
    with pytest.raises(newch.NcError, match="freed by release"):
        y.sum().backward()
