"""SGD against a hand-written numpy reference: every option, several steps, groups, validation.

Parameters are plain persistent tensors and gradients are assigned directly,
so these tests need neither newch.net nor backward (one test uses backward).
"""
import itertools

import numpy as np
import pytest

import newch
from newch.optim import SGD

# (momentum, dampening, weight_decay, nesterov, maximize), nesterov only where it is valid
OPTIONS = [o for o in itertools.product((0.0, 0.9), (0.0, 0.3), (0.0, 0.05), (False, True),
                                        (False, True))
           if not (o[3] and (o[0] == 0.0 or o[1] != 0.0))]
SHAPES = [(3, 4), (5,), ()]


def param(array, requires_grad=True):
    """A persistent parameter holding a copy of ``array``."""
    with newch.persistent():
        return newch.tensor(array, requires_grad=requires_grad)


def set_grad(p, array):
    with newch.persistent():
        p.grad = newch.tensor(array)


def grads_for(shapes, steps, dtype, seed=1):
    rng = np.random.default_rng(seed)
    return [[rng.standard_normal(s).astype(dtype) for s in shapes] for _ in range(steps)]


def reference_sgd(params, grads_per_step, lr, momentum, dampening, weight_decay, nesterov,
                  maximize):
    """The update rule in numpy, in the parameters' dtype, one rounding per operation."""
    params = [p.copy() for p in params]
    bufs = [None] * len(params)
    history = []
    for grads in grads_per_step:
        for i, (p, g) in enumerate(zip(params, grads)):
            t = p.dtype.type
            d = np.negative(g) if maximize else g
            if weight_decay:
                d = d + t(weight_decay) * p
            if momentum:
                if bufs[i] is None:
                    bufs[i] = d.copy()
                else:
                    bufs[i] = t(momentum) * bufs[i] + t(1 - dampening) * d
                d = d + t(momentum) * bufs[i] if nesterov else bufs[i]
            params[i] = p + t(-lr) * d
        history.append([p.copy() for p in params])
    return history, bufs


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("opts", OPTIONS, ids=lambda o: "m{}_d{}_wd{}_n{:d}_max{:d}".format(*o))
def test_matches_numpy_reference_exactly(dtype, opts):
    mom, damp, wd, nest, maxi = opts
    rng = np.random.default_rng(0)
    start = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
    grads = grads_for(SHAPES, 4, dtype)
    ps = [param(a) for a in start]
    opt = SGD(ps, lr=0.1, momentum=mom, dampening=damp, weight_decay=wd, nesterov=nest,
              maximize=maxi)
    want, bufs = reference_sgd(start, grads, 0.1, mom, damp, wd, nest, maxi)
    for step, gs in enumerate(grads):
        for p, g in zip(ps, gs):
            set_grad(p, g)
        opt.step()
        for p, w in zip(ps, want[step]):
            got = p.detach().numpy()
            assert got.dtype == dtype and got.shape == w.shape
            np.testing.assert_array_equal(got, w, err_msg=f"step {step}")
    for p, b in zip(ps, bufs):
        if mom:
            np.testing.assert_array_equal(opt.state[p]["momentum_buffer"].numpy(), b)
        else:
            assert "momentum_buffer" not in opt.state[p]


def test_defaults_match_torch():
    opt = SGD([param(np.zeros(2, np.float32))])
    assert {k: v for k, v in opt.param_groups[0].items() if k != "params"} == dict(
        lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, maximize=False,
        foreach=None, differentiable=False, fused=None)


def test_parameters_without_grad_are_skipped():
    a, b = param(np.ones(3, np.float32)), param(np.ones(3, np.float32))
    opt = SGD([a, b], lr=0.5, momentum=0.9)
    set_grad(a, np.full(3, 2.0, np.float32))
    opt.step()
    assert a.detach().numpy().tolist() == [0.0, 0.0, 0.0]
    assert b.detach().numpy().tolist() == [1.0, 1.0, 1.0]
    assert b not in opt.state or not opt.state[b]


def test_param_groups_use_their_own_lr():
    a, b = param(np.ones(2, np.float64)), param(np.ones(2, np.float64))
    opt = SGD([{"params": [a]}, {"params": [b], "lr": 0.01, "momentum": 0.5}], lr=0.1)
    assert opt.param_groups[0]["lr"] == 0.1 and opt.param_groups[0]["momentum"] == 0
    assert opt.param_groups[1]["lr"] == 0.01 and opt.param_groups[1]["momentum"] == 0.5
    for _ in range(2):
        set_grad(a, np.full(2, 1.0))
        set_grad(b, np.full(2, 1.0))
        opt.step()
    assert a.detach().numpy().tolist() == [1 - 0.1 - 0.1] * 2
    # b: buf 1 then 0.5 * 1 + 1 = 1.5; steps 0.01 * 1 and 0.01 * 1.5
    assert b.detach().numpy().tolist() == [1 - 0.01 - 0.01 * 1.5] * 2
    assert a not in opt.state or not opt.state[a]


def test_changing_lr_in_a_group_takes_effect_next_step():
    a = param(np.ones(1, np.float64))
    opt = SGD([a], lr=0.1)
    set_grad(a, np.ones(1))
    opt.step()
    opt.param_groups[0]["lr"] = 0.5
    opt.step()
    assert a.detach().numpy().tolist() == [1 - 0.1 - 0.5]


def test_momentum_turned_on_later_starts_its_buffer_from_the_gradient():
    a = param(np.zeros(1, np.float64))
    opt = SGD([a], lr=1.0, momentum=0, dampening=0.5)
    set_grad(a, np.ones(1))
    opt.step()
    opt.param_groups[0]["momentum"] = 0.5
    set_grad(a, np.full(1, 2.0))
    opt.step()                                 # buf = 2 (no dampening on its first step)
    assert opt.state[a]["momentum_buffer"].tolist() == [2.0]
    opt.step()                                 # buf = 0.5 * 2 + 0.5 * 2 = 2
    assert a.detach().numpy().tolist() == [-1.0 - 2.0 - 2.0]


def test_step_with_backward_minimises_a_quadratic():
    w = param(np.array([3.0, -2.0], np.float32))
    opt = SGD([w], lr=0.25)
    for _ in range(3):
        opt.zero_grad()
        (w * w).sum().backward()               # grad 2w: w <- w - 0.25 * 2w = w / 2
        opt.step()
        newch.step_end()
    assert w.detach().numpy().tolist() == [3.0 / 8, -2.0 / 8]


def test_closure_is_called_with_grad_enabled_and_its_loss_returned():
    w = param(np.array([1.0], np.float32))
    opt = SGD([w], lr=0.5)
    seen = []

    def closure():
        seen.append(newch.is_grad_enabled())
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    with newch.no_grad():
        loss = opt.step(closure)
    assert seen == [True] and loss.item() == 1.0
    assert w.detach().numpy().tolist() == [0.0]


def test_step_bumps_the_parameter_version():
    w = param(np.ones(2, np.float32))
    opt = SGD([w], lr=0.1)
    set_grad(w, np.ones(2, np.float32))
    v = w._s.version
    opt.step()
    assert w._s.version == v + 1


# ---------------------------------------------------------------- zero_grad

def test_zero_grad_sets_to_none_by_default():
    w = param(np.ones(2, np.float32))
    opt = SGD([w], lr=0.1)
    set_grad(w, np.ones(2, np.float32))
    opt.zero_grad()
    assert w.grad is None


def test_zero_grad_in_place_keeps_the_same_tensor():
    w = param(np.ones(2, np.float32))
    opt = SGD([w], lr=0.1)
    set_grad(w, np.full(2, 3.0, np.float32))
    g = w.grad
    opt.zero_grad(set_to_none=False)
    assert w.grad is g and g.tolist() == [0.0, 0.0]
    assert not g.requires_grad and g.is_persistent


def test_zero_grad_in_place_then_backward_accumulates_from_zero():
    w = param(np.array([2.0], np.float32))
    opt = SGD([w], lr=0.1)
    (w * w).sum().backward()
    opt.zero_grad(set_to_none=False)
    (w * 3.0).sum().backward()
    assert w.grad.tolist() == [3.0]
    newch.step_end()


# ---------------------------------------------------------------- validation

@pytest.mark.parametrize("kwargs, message", [
    (dict(lr=-1), "Invalid learning rate: -1"),
    (dict(lr=-0.5), "Invalid learning rate: -0.5"),
    (dict(momentum=-0.1), "Invalid momentum value: -0.1"),
    (dict(weight_decay=-1e-4), "Invalid weight_decay value: -0.0001"),
    (dict(nesterov=True), "Nesterov momentum requires a momentum and zero dampening"),
    (dict(nesterov=True, momentum=0.9, dampening=0.1),
     "Nesterov momentum requires a momentum and zero dampening"),
])
def test_invalid_arguments_raise_torch_messages(kwargs, message):
    with pytest.raises(ValueError) as e:
        SGD([param(np.zeros(1, np.float32))], **kwargs)
    assert str(e.value) == message


def test_invalid_group_options_are_checked_too():
    opt = SGD([param(np.zeros(1, np.float32))], lr=0.1)
    with pytest.raises(ValueError, match="Invalid learning rate: -2"):
        opt.add_param_group({"params": [param(np.zeros(1, np.float32))], "lr": -2})
    with pytest.raises(TypeError, match="SGD: lr must be a number"):
        SGD([param(np.zeros(1, np.float32))], lr="0.1")
    assert len(opt.param_groups) == 1
