"""The Optimizer base through SGD: groups, state, state_dict round trips, memory, odd layouts."""
import numpy as np
import pytest

import newch
from newch.optim import SGD, Optimizer, required


def param(array, requires_grad=True):
    with newch.persistent():
        return newch.tensor(array, requires_grad=requires_grad)


def set_grad(p, array):
    with newch.persistent():
        p.grad = newch.tensor(array)


def values(ps):
    return [p.detach().numpy().copy() for p in ps]


# ---------------------------------------------------------------- construction

def test_params_may_be_a_generator_of_tensors():
    ps = [param(np.zeros(2, np.float32)) for _ in range(3)]
    opt = SGD((p for p in ps), lr=0.1)
    assert len(opt.param_groups) == 1 and opt.param_groups[0]["params"] == ps


def test_state_is_keyed_by_tensor_identity():
    a = param(np.zeros(2, np.float32))
    b = param(np.zeros(2, np.float32))
    opt = SGD([a, b], lr=0.1, momentum=0.9)
    set_grad(a, np.ones(2, np.float32))
    opt.step()
    assert a in opt.state and b not in opt.state
    assert opt.state[a]["momentum_buffer"].is_persistent
    assert opt.state[b] == {}                  # a defaultdict, as in PyTorch


@pytest.mark.parametrize("params, error, match", [
    ("tensor", TypeError, "iterable of Tensors or of dicts"),
    ([], ValueError, "empty parameter list"),
    ("set", TypeError, "ordered collection"),
    ([1.0], TypeError, "parameter 0 is a float"),
    ("int", TypeError, "floating point"),
    ("nonleaf", ValueError, "not a leaf"),
    ("twice", ValueError, "more than once"),
])
def test_bad_params_are_refused(params, error, match):
    p = param(np.zeros(2, np.float32))
    if params == "tensor":
        params = p
    elif params == "set":
        params = {p}
    elif params == "int":
        params = [param(np.zeros(2, np.int64), requires_grad=False)]
    elif params == "nonleaf":
        params = [p * 2]
    elif params == "twice":
        params = [p, p]
    with pytest.raises(error, match=match):
        SGD(params, lr=0.1)
    newch.step_end()


def test_temporary_parameters_work_until_their_step_ends():
    # NOTE: a PyTorch script may optimize a plain tensor; it works while the tensor lives.
    w = newch.zeros(2, requires_grad=True)
    opt = SGD([w], lr=0.5)
    w.grad = newch.ones(2)
    opt.step()
    assert w.tolist() == [-0.5, -0.5]
    newch.step_end()
    with pytest.raises(newch.NcError, match="step_end"):
        opt.step()


def test_add_param_group_fills_defaults_and_refuses_overlap():
    a, b = param(np.zeros(1, np.float32)), param(np.zeros(1, np.float32))
    opt = SGD([a], lr=0.1, momentum=0.9)
    opt.add_param_group({"params": b, "lr": 0.5})        # a lone tensor is accepted
    assert opt.param_groups[1]["params"] == [b]
    assert opt.param_groups[1]["lr"] == 0.5 and opt.param_groups[1]["momentum"] == 0.9
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [a]})
    with pytest.raises(TypeError, match="expected a dict"):
        opt.add_param_group([a])
    assert len(opt.param_groups) == 2


class Plain(Optimizer):
    """A minimal subclass: p -= lr * g, lr required."""

    def __init__(self, params, lr=required):
        super().__init__(params, dict(lr=lr))

    def apply_single(self, kernels, param, grad, state, group, fresh):
        kernels.sgd_step(param, grad, param[:0], float(group["lr"]), 0.0, 0.0, 0.0, False,
                         False, fresh)


def test_required_options_must_be_given_and_subclasses_work():
    a = param(np.ones(2, np.float64))
    with pytest.raises(ValueError, match="'lr'"):
        Plain([a])
    opt = Plain([{"params": [a], "lr": 0.5}])
    set_grad(a, np.ones(2))
    opt.step()
    assert a.detach().numpy().tolist() == [0.5, 0.5]


def test_repr_lists_the_groups():
    opt = SGD([param(np.zeros(1, np.float32))], lr=0.1, momentum=0.9)
    text = repr(opt)
    assert text.startswith("SGD (") and "Parameter Group 0" in text
    assert "lr: 0.1" in text and "momentum: 0.9" in text


# ---------------------------------------------------------------- state_dict

def run(opt, ps, grads):
    for gs in grads:
        for p, g in zip(ps, gs):
            set_grad(p, g)
        opt.step()


def test_state_dict_round_trip_continues_identically():
    rng = np.random.default_rng(0)
    shapes = [(3, 2), (4,)]
    start = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    grads = [[rng.standard_normal(s).astype(np.float32) for s in shapes] for _ in range(6)]
    kw = dict(lr=0.05, momentum=0.9, dampening=0.1, weight_decay=1e-2)
    ps = [param(a) for a in start]
    opt = SGD(ps, **kw)
    run(opt, ps, grads[:3])
    sd = opt.state_dict()
    assert sd["param_groups"][0]["params"] == [0, 1] and set(sd["state"]) == {0, 1}

    qs = [param(v) for v in values(ps)]
    opt2 = SGD(qs, lr=123.0)                  # options come from the state dict
    opt2.load_state_dict(sd)
    assert opt2.param_groups[0]["lr"] == 0.05 and opt2.param_groups[0]["params"] == qs
    for p, q in zip(ps, qs):
        b1, b2 = opt.state[p]["momentum_buffer"], opt2.state[q]["momentum_buffer"]
        assert b2 is not b1 and b2.is_persistent
        np.testing.assert_array_equal(b1.numpy(), b2.numpy())
    run(opt, ps, grads[3:])
    run(opt2, qs, grads[3:])
    for a, b in zip(values(ps), values(qs)):
        np.testing.assert_array_equal(a, b)


def test_loaded_state_does_not_share_memory_with_the_source():
    p = param(np.zeros(2, np.float32))
    opt = SGD([p], lr=0.1, momentum=0.9)
    set_grad(p, np.ones(2, np.float32))
    opt.step()
    q = param(np.zeros(2, np.float32))
    opt2 = SGD([q], lr=0.1, momentum=0.9)
    opt2.load_state_dict(opt.state_dict())
    opt.state[p]["momentum_buffer"].numpy()[:] = 7.0
    assert opt2.state[q]["momentum_buffer"].tolist() == [1.0, 1.0]


def test_loading_survives_step_end_of_temporary_state_tensors():
    p = param(np.zeros(2, np.float32))
    opt = SGD([p], lr=0.1, momentum=0.9)
    sd = {"state": {0: {"momentum_buffer": newch.tensor([1.0, 2.0])}},   # a temporary
          "param_groups": [dict(opt.state_dict()["param_groups"][0])]}
    opt.load_state_dict(sd)
    newch.step_end()
    assert opt.state[p]["momentum_buffer"].tolist() == [1.0, 2.0]


def test_loaded_state_takes_the_parameter_dtype():
    p = param(np.zeros(2, np.float64))
    opt = SGD([p], lr=0.1, momentum=0.9)
    sd = {"state": {0: {"momentum_buffer": newch.tensor([1.0, 2.0], dtype=newch.float32)}},
          "param_groups": opt.state_dict()["param_groups"]}
    opt.load_state_dict(sd)
    assert opt.state[p]["momentum_buffer"].dtype == newch.float64
    newch.step_end()


def test_load_state_dict_validates_group_count_and_sizes():
    a, b = param(np.zeros(1, np.float32)), param(np.zeros(1, np.float32))
    one = SGD([a, b], lr=0.1)
    two = SGD([{"params": [a]}, {"params": [b]}], lr=0.1)
    with pytest.raises(ValueError, match="2 parameter groups, this optimizer has 1"):
        one.load_state_dict(two.state_dict())
    short = SGD([a], lr=0.1)
    with pytest.raises(ValueError, match="group 0 of the state dict has 1 parameters"):
        one.load_state_dict(short.state_dict())
    with pytest.raises(ValueError, match="'state' and 'param_groups'"):
        one.load_state_dict({"state": {}})
    with pytest.raises(ValueError, match="Invalid learning rate"):
        sd = one.state_dict()
        sd["param_groups"][0]["lr"] = -1.0
        one.load_state_dict(sd)
    assert one.param_groups[0]["lr"] == 0.1


# ---------------------------------------------------------------- memory

def test_step_allocates_nothing_in_the_arena():
    ctx = newch.default_context()
    newch.step_end()
    rng = np.random.default_rng(0)
    ps = [param(rng.standard_normal(s).astype(np.float32)) for s in [(64, 32), (32,), (100000,)]]
    for p in ps:
        set_grad(p, rng.standard_normal(tuple(p.shape)).astype(np.float32))
    opt = SGD(ps, lr=0.01, momentum=0.9, weight_decay=1e-4, nesterov=True)
    for step in range(3):
        before = ctx.mem_stats()
        persistent = before["persistent_bytes"]
        ctx.reset_peak()
        opt.step()
        after = ctx.mem_stats()
        assert after["arena_bytes_in_use"] == before["arena_bytes_in_use"]
        assert after["arena_peak_bytes"] == before["arena_bytes_in_use"]
        grew = after["persistent_bytes"] - persistent
        assert grew == (sum(p.numel() * 4 for p in ps) if step == 0 else 0)


def test_non_contiguous_parameter_and_grad_are_updated_correctly():
    ctx = newch.default_context()
    base = param(np.arange(12, dtype=np.float64).reshape(4, 3), requires_grad=False)
    p = base.T.requires_grad_()                # a persistent, non-contiguous (3, 4) leaf
    assert p.is_persistent and not p._a.flags.c_contiguous
    g_base = param(np.linspace(-1, 1, 12).reshape(4, 3), requires_grad=False)
    p.grad = g_base.T
    want = base.numpy().T - 0.5 * (g_base.numpy().T * 1.0)
    opt = SGD([p], lr=0.5, momentum=0.9)
    in_use = ctx.mem_stats()["arena_bytes_in_use"]
    opt.step()
    assert ctx.mem_stats()["arena_bytes_in_use"] == in_use   # scratch was given back
    np.testing.assert_array_equal(p.detach().numpy(), want)
    np.testing.assert_array_equal(opt.state[p]["momentum_buffer"].numpy(), g_base.numpy().T)
    np.testing.assert_array_equal(base.numpy(), want.T)       # written through the view


def test_released_parameter_or_mismatched_grad_is_a_clear_error():
    p = param(np.zeros(2, np.float32))
    opt = SGD([p], lr=0.1)
    with newch.persistent():
        p.grad = newch.zeros(2, dtype=newch.float64)
    with pytest.raises(TypeError, match="SGD.step: a parameter is newch.float32 but its grad is "
                                        "newch.float64"):
        opt.step()
    set_grad(p, np.ones(2, np.float32))
    newch.release(p)
    with pytest.raises(newch.NcError, match="SGD.step"):
        opt.step()


def test_state_is_committed_only_after_a_successful_update():
    p = param(np.zeros(2, np.float32))
    opt = SGD([p], lr=0.1, momentum=0.9)
    with newch.persistent():
        p.grad = newch.zeros(2, dtype=newch.float64)
    with pytest.raises(TypeError):
        opt.step()
    assert p not in opt.state
