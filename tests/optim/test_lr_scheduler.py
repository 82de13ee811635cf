"""Learning-rate schedulers without torch: hand-computed schedules, warnings, resuming."""
import math
import warnings

import pytest

import newch
from newch.optim import SGD, Adam
from newch.optim import lr_scheduler as L


def opt(lr=0.1, cls=SGD, **kw):
    with newch.persistent():
        p = newch.zeros(2, requires_grad=True)
    return cls([p], lr=lr, **kw)


def lrs(o, sched, n, *args):
    out = []
    for _ in range(n):
        out.append(sched.get_last_lr()[0])
        o.step()
        sched.step(*args)
    return out


def test_step_lr_by_hand():
    o = opt()
    s = L.StepLR(o, step_size=2, gamma=0.5)
    assert lrs(o, s, 6) == pytest.approx([0.1, 0.1, 0.05, 0.05, 0.025, 0.025], rel=1e-15)
    assert o.param_groups[0]["initial_lr"] == 0.1


def test_cosine_annealing_follows_the_closed_form():
    o = opt()
    s = L.CosineAnnealingLR(o, T_max=10, eta_min=0.01)
    got = lrs(o, s, 11)
    want = [0.01 + 0.09 * (1 + math.cos(math.pi * t / 10)) / 2 for t in range(11)]
    assert got == pytest.approx(want, rel=1e-12)


def test_one_cycle_rises_to_max_lr_then_anneals_and_cycles_momentum():
    o = opt(momentum=0.9)
    s = L.OneCycleLR(o, max_lr=1.0, total_steps=10, pct_start=0.3)
    got, mom = [], []
    for _ in range(10):
        got.append(s.get_last_lr()[0])
        mom.append(o.param_groups[0]["momentum"])
        o.step()
        s.step()
    assert got[0] == pytest.approx(1.0 / 25) and max(got) == pytest.approx(1.0)
    assert got.index(max(got)) == 2                     # end of the first phase: 0.3 * 10 - 1
    assert got[-1] == pytest.approx(1.0 / 25 / 1e4)
    assert mom[0] == pytest.approx(0.95) and mom[2] == pytest.approx(0.85)
    assert mom[-1] == pytest.approx(0.95)
    a = opt(cls=Adam)
    L.OneCycleLR(a, max_lr=0.01, total_steps=5)
    assert a.param_groups[0]["betas"] == (0.95, 0.999)
    with pytest.raises(ValueError, match="Tried to step 11 times"):
        s.step()


def test_reduce_on_plateau_by_hand():
    o = opt(lr=1.0)
    s = L.ReduceLROnPlateau(o, patience=1, factor=0.5)
    for metric in (5.0, 4.0, 4.0, 4.0, 4.0, 3.0):
        s.step(metric)
    # bad epochs after 4.0: 1, 2 (> patience: cut to 0.5, reset), 1, then 3.0 improves
    assert s.get_last_lr() == [0.5]
    s.step(3.0)
    s.step(3.0)
    assert s.get_last_lr() == [0.25]


def test_sequential_warmup_then_decay():
    o = opt(lr=1.0)
    s = L.SequentialLR(o, [L.LinearLR(o, start_factor=0.5, total_iters=2),
                           L.ExponentialLR(o, gamma=0.5)], milestones=[2])
    assert lrs(o, s, 5) == pytest.approx([0.5, 0.75, 1.0, 0.5, 0.25])


def test_warnings_for_misuse():
    o = opt()
    s = L.ExponentialLR(o, gamma=0.9)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        s.step()
    with pytest.warns(UserWarning, match="get_last_lr"):
        s.get_lr()
    o.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s.step()


def test_resuming_needs_initial_lr_and_state_dict_round_trips():
    o = opt()
    with pytest.raises(KeyError, match="initial_lr"):
        L.StepLR(o, step_size=3, last_epoch=4)
    s = L.StepLR(o, step_size=3, gamma=0.1)
    lrs(o, s, 5)
    o2 = opt()
    o2.load_state_dict(o.state_dict())
    s2 = L.StepLR(o2, step_size=3, gamma=0.1, last_epoch=4)
    s2.load_state_dict(s.state_dict())
    assert lrs(o, s, 5) == lrs(o2, s2, 5)


def test_scheduler_needs_an_optimizer():
    with pytest.raises(TypeError, match="list is not an Optimizer"):
        L.StepLR([], step_size=1)


def test_no_false_warning_for_an_optimizer_that_overrides_step():
    class Plain(newch.optim.Optimizer):
        def __init__(self, params):
            super().__init__(params, dict(lr=0.1))

        def step(self, closure=None):
            return "stepped"

    with newch.persistent():
        p = newch.zeros(1, requires_grad=True)
    o = Plain([p])
    s = L.StepLR(o, step_size=1)
    assert o.step() == "stepped"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s.step()
    o2 = Plain([p])
    s2 = L.StepLR(o2, step_size=1)
    with pytest.warns(UserWarning, match="before `optimizer.step"):
        s2.step()
