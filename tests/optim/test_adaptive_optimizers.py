"""Adam, AdamW, Adamax, NAdam, RAdam, RMSprop, Adagrad, Adadelta without torch: hand-computed
steps, persistent state, no arena use in step(), state_dict round trips and clear errors."""
import math

import numpy as np
import pytest

import newch
import newch.optim as O

ALL = ["Adam", "AdamW", "Adamax", "NAdam", "RAdam", "RMSprop", "Adagrad", "Adadelta"]


def param(array, requires_grad=True):
    with newch.persistent():
        return newch.tensor(array, requires_grad=requires_grad)


def set_grad(p, array):
    with newch.persistent():
        p.grad = newch.tensor(array)


def test_adam_two_steps_by_hand():
    p = param(np.array([1.0, -1.0]))
    opt = O.Adam([p], lr=0.1, betas=(0.5, 0.75), eps=0.0)
    g1, g2 = np.array([2.0, -1.0]), np.array([1.0, 3.0])
    set_grad(p, g1)
    opt.step()
    # step 1: m/(1-b1) = g, sqrt(v/(1-b2)) = |g|: p -= lr * sign(g)
    np.testing.assert_allclose(p.detach().numpy(), [0.9, -0.9], rtol=1e-15)
    set_grad(p, g2)
    opt.step()
    m = 0.5 * (0.5 * g1) + 0.5 * g2
    v = 0.75 * (0.25 * g1 ** 2) + 0.25 * g2 ** 2
    want = np.array([0.9, -0.9]) - 0.1 / (1 - 0.25) * m / (np.sqrt(v) / math.sqrt(1 - 0.5625))
    np.testing.assert_allclose(p.detach().numpy(), want, rtol=1e-14)
    assert opt.state[p]["step"].item() == 2.0 and opt.state[p]["step"].dtype == newch.float32


def test_adamw_decays_the_weights_before_the_step():
    p = param(np.array([2.0]))
    opt = O.AdamW([p], lr=0.1, weight_decay=0.5, eps=0.0)
    set_grad(p, np.array([3.0]))
    opt.step()
    assert p.item() == pytest.approx(2.0 * (1 - 0.05) - 0.1, rel=1e-15)


def test_amsgrad_keeps_the_running_maximum():
    p = param(np.array([0.0]))
    opt = O.Adam([p], lr=0.1, amsgrad=True)
    for g in (4.0, 0.1):
        set_grad(p, np.array([g]))
        opt.step()
    st = opt.state[p]
    assert st["max_exp_avg_sq"].item() == pytest.approx(0.001 * 16, rel=1e-12)
    assert st["exp_avg_sq"].item() < st["max_exp_avg_sq"].item()


def test_adagrad_with_lr_decay_and_initial_accumulator_by_hand():
    p = param(np.array([1.0]))
    opt = O.Adagrad([p], lr=0.5, lr_decay=1.0, initial_accumulator_value=5.0, eps=0.0)
    set_grad(p, np.array([2.0]))
    opt.step()                                    # sum 9, p -= 0.5 * 2 / 3
    set_grad(p, np.array([4.0]))
    opt.step()                                    # sum 25, clr 0.5 / 2, p -= 0.25 * 4 / 5
    assert p.item() == pytest.approx(1.0 - 1.0 / 3.0 - 0.2, rel=1e-15)


def test_rmsprop_centered_momentum_by_hand():
    p = param(np.array([1.0]))
    opt = O.RMSprop([p], lr=0.1, alpha=0.5, eps=0.0, centered=True, momentum=0.5)
    set_grad(p, np.array([2.0]))
    opt.step()               # v = 2, ga = 1, avg = sqrt(2 - 1) = 1, buf = 2, p = 1 - 0.2
    assert p.item() == pytest.approx(0.8, rel=1e-15)
    assert opt.state[p]["momentum_buffer"].item() == 2.0


def test_adadelta_first_step_by_hand():
    p = param(np.array([1.0]))
    opt = O.Adadelta([p], lr=1.0, rho=0.5, eps=1e-2)
    set_grad(p, np.array([3.0]))
    opt.step()               # v = 4.5, delta = sqrt(eps) / sqrt(4.5 + eps) * 3
    assert p.item() == pytest.approx(1.0 - 0.1 / math.sqrt(4.51) * 3, rel=1e-14)


def test_radam_uses_the_plain_momentum_step_while_rho_is_small():
    p = param(np.array([1.0]))
    opt = O.RAdam([p], lr=0.1, betas=(0.5, 0.999))
    set_grad(p, np.array([3.0]))
    opt.step()               # rho_1 = 1 <= 5: p -= lr * m / (1 - b1) = lr * g
    assert p.item() == pytest.approx(1.0 - 0.3, rel=1e-15)


def test_nadam_first_step_by_hand():
    p = param(np.array([1.0]))
    opt = O.NAdam([p], lr=0.1, betas=(0.5, 0.75), eps=0.0, momentum_decay=1.0)
    set_grad(p, np.array([2.0]))
    opt.step()
    mu1 = 0.5 * (1 - 0.5 * 0.96)
    mu2 = 0.5 * (1 - 0.5 * 0.96 ** 2)
    prod = float(np.float32(mu1))                # mu_product is float32, as in PyTorch
    denom = math.sqrt(0.25 * 4 / 0.25)
    want = 1.0 - 0.1 * (1 - mu1) / (1 - prod) * 2 / denom - 0.1 * mu2 / (1 - prod * mu2) * 1 / denom
    assert p.item() == pytest.approx(want, rel=1e-14)


def test_adamax_first_step_by_hand():
    p = param(np.array([1.0]))
    opt = O.Adamax([p], lr=0.1, betas=(0.5, 0.9), eps=0.0)
    set_grad(p, np.array([-2.0]))
    opt.step()               # m = -1, u = 2, p -= 0.1 / 0.5 * (-1) / 2
    assert p.item() == pytest.approx(1.1, rel=1e-15)


@pytest.mark.parametrize("name", ALL)
def test_step_allocates_nothing_in_the_arena_and_state_is_persistent(name):
    ctx = newch.default_context()
    newch.step_end()
    rng = np.random.default_rng(0)
    ps = [param(rng.standard_normal(s).astype(np.float32)) for s in [(16, 8), (40000,)]]
    for p in ps:
        set_grad(p, rng.standard_normal(tuple(p.shape)).astype(np.float32))
    opt = getattr(O, name)(ps)
    for _ in range(3):
        before = ctx.mem_stats()["arena_bytes_in_use"]
        ctx.reset_peak()
        opt.step()
        after = ctx.mem_stats()
        assert after["arena_bytes_in_use"] == before and after["arena_peak_bytes"] == before
    newch.step_end()
    for p in ps:
        for key, t in opt.state[p].items():
            assert t.is_persistent, key
            t.numpy()                              # still readable after step_end()


@pytest.mark.parametrize("name", ALL)
def test_state_dict_round_trip_resumes_the_same_trajectory(name):
    rng = np.random.default_rng(1)
    start = rng.standard_normal(6)
    grads = [rng.standard_normal(6) for _ in range(6)]
    a, b = param(start.copy()), param(start.copy())
    opt_a = getattr(O, name)([a], lr=0.01)
    for g in grads[:3]:
        set_grad(a, g)
        opt_a.step()
    opt_b = getattr(O, name)([b], lr=0.5)              # other options, replaced by the load
    opt_b.load_state_dict(opt_a.state_dict())
    with newch.no_grad():
        b.copy_(a)
    assert opt_b.param_groups[0]["lr"] == 0.01
    assert opt_b.state[b]["step"].dtype == newch.float32
    for g in grads[3:]:
        set_grad(a, g)
        set_grad(b, g)
        opt_a.step()
        opt_b.step()
    if name == "NAdam":
        # as in PyTorch, a loaded mu_product takes the parameter's dtype (float64 here), so
        # the resumed run rounds it less than the original float32 one
        assert opt_b.state[b]["mu_product"].dtype == newch.float64
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-9)
    else:
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def test_state_dict_step_given_as_a_number_is_accepted():
    p = param(np.ones(2))
    opt = O.Adam([p])
    sd = {"state": {0: {"step": 3, "exp_avg": param(np.zeros(2), False),
                        "exp_avg_sq": param(np.zeros(2), False)}},
          "param_groups": opt.state_dict()["param_groups"]}
    opt.load_state_dict(sd)
    assert opt.state[p]["step"].dtype == newch.float32 and opt.state[p]["step"].item() == 3.0


def test_released_state_or_state_of_another_optimizer_is_a_clear_error():
    p = param(np.ones(3))
    opt = O.Adam([p])
    set_grad(p, np.ones(3))
    opt.step()
    newch.release(opt.state[p]["exp_avg"])
    with pytest.raises(newch.NcError, match="Adam.step"):
        opt.step()
    q = param(np.ones(3))
    sgd = O.SGD([q], lr=0.1, momentum=0.9)
    set_grad(q, np.ones(3))
    sgd.step()
    rms = O.RMSprop([q])
    rms.load_state_dict({"state": sgd.state_dict()["state"],
                         "param_groups": rms.state_dict()["param_groups"]})
    with pytest.raises(ValueError, match="RMSprop.step: .*'square_avg'"):
        rms.step()


def test_bad_options_are_clear_errors():
    p = param(np.ones(1))
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        O.Adam([p], lr=-1)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1: 1.0"):
        O.NAdam([p], betas=(0.9, 1.0))
    with pytest.raises(TypeError, match="betas"):
        O.Adam([p], betas=0.9)
    with pytest.raises(TypeError, match="lr must be a number"):
        O.RMSprop([p], lr="fast")
    with pytest.raises(ValueError, match="differentiable"):
        O.Adam([p], differentiable=True)
    O.Adam([p], foreach=True, fused=False, capturable=False)    # accepted and ignored
