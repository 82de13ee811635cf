"""Every lr scheduler against torch.optim.lr_scheduler: 100-step lr sequences, state_dicts."""
import warnings

import numpy as np
import pytest

import newch
import newch.optim.lr_scheduler as NL

torch = pytest.importorskip("torch")
TL = torch.optim.lr_scheduler


def two_groups(lib, opt_name):
    if lib is newch:
        with newch.persistent():
            ps = [newch.zeros(2, requires_grad=True), newch.zeros(3, requires_grad=True)]
    else:
        ps = [torch.zeros(2, requires_grad=True), torch.zeros(3, requires_grad=True)]
    kw = dict(momentum=0.9) if opt_name == "SGD" else {}
    groups = [{"params": [ps[0]]}, {"params": [ps[1]], "lr": 0.03}]
    return getattr(lib.optim, opt_name)(groups, lr=0.1, **kw)


class Halver:
    """A callable object: its __dict__ goes into LambdaLR's state_dict."""

    def __init__(self):
        self.rate = 0.5

    def __call__(self, epoch):
        return self.rate ** (epoch // 10)


SCHEDULES = {
    "StepLR": lambda L, o: L.StepLR(o, step_size=7, gamma=0.5),
    "MultiStepLR": lambda L, o: L.MultiStepLR(o, milestones=[10, 30, 30, 60], gamma=0.3),
    "ExponentialLR": lambda L, o: L.ExponentialLR(o, gamma=0.97),
    "CosineAnnealingLR": lambda L, o: L.CosineAnnealingLR(o, T_max=30, eta_min=1e-3),
    "CosineAnnealingWarmRestarts": lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=7,
                                                                              T_mult=2,
                                                                              eta_min=1e-4),
    "CAWR-mult1": lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=9),
    "LambdaLR": lambda L, o: L.LambdaLR(o, [lambda e: 1 / (1 + e), Halver()]),
    "MultiplicativeLR": lambda L, o: L.MultiplicativeLR(o, lambda e: 0.99 if e % 3 else 0.9),
    "LinearLR": lambda L, o: L.LinearLR(o, start_factor=0.2, end_factor=0.9, total_iters=40),
    "ConstantLR": lambda L, o: L.ConstantLR(o, factor=0.25, total_iters=12),
    "PolynomialLR": lambda L, o: L.PolynomialLR(o, total_iters=60, power=1.7),
    "OneCycleLR": lambda L, o: L.OneCycleLR(o, max_lr=[1.0, 0.5], total_steps=101),
    "OneCycleLR-3phase-linear": lambda L, o: L.OneCycleLR(
        o, max_lr=0.8, epochs=10, steps_per_epoch=11, pct_start=0.25, anneal_strategy="linear",
        three_phase=True, div_factor=10.0),
    "SequentialLR": lambda L, o: L.SequentialLR(
        o, [L.LinearLR(o, start_factor=0.1, total_iters=10), L.ExponentialLR(o, gamma=0.95),
            L.CosineAnnealingLR(o, T_max=20)], milestones=[10, 50]),
    "ChainedScheduler": lambda L, o: L.ChainedScheduler(
        [L.ConstantLR(o, factor=0.5, total_iters=20), L.ExponentialLR(o, gamma=0.98)]),
}


def both(name, opt_name="SGD"):
    o1, o2 = two_groups(newch, opt_name), two_groups(torch, opt_name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return o1, SCHEDULES[name](NL, o1), o2, SCHEDULES[name](TL, o2)


def momenta(opt):
    return [g.get("momentum", g.get("betas", (None,))[0]) for g in opt.param_groups]


def assert_same(ours, theirs, o1, o2, label):
    np.testing.assert_allclose(ours.get_last_lr(), theirs.get_last_lr(), rtol=1e-13,
                               atol=1e-300, err_msg=label)
    np.testing.assert_allclose([g["lr"] for g in o1.param_groups],
                               [g["lr"] for g in o2.param_groups], rtol=1e-13, err_msg=label)
    np.testing.assert_allclose(momenta(o1), momenta(o2), rtol=1e-13, err_msg=label)


def run(o1, s1, o2, s2, steps, label, start=0):
    for i in range(start, start + steps):
        o1.step()
        o2.step()
        s1.step()
        s2.step()
        assert_same(s1, s2, o1, o2, f"{label} step {i}")


@pytest.mark.parametrize("opt_name", ["SGD", "Adam"])
@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_lr_sequence_matches_torch_over_100_steps(name, opt_name):
    o1, s1, o2, s2 = both(name, opt_name)
    assert_same(s1, s2, o1, o2, "after construction")
    assert [g.get("initial_lr") for g in o1.param_groups] == \
        [g.get("initial_lr") for g in o2.param_groups]
    run(o1, s1, o2, s2, 100, name)
    assert getattr(s1, "last_epoch", None) == getattr(s2, "last_epoch", None)


def plain(sd):
    """A scheduler state_dict with nested tensors or Counters made comparable."""
    return {k: (dict(v) if k == "milestones" else
                [plain(s) for s in v] if k == "_schedulers" else v) for k, v in sd.items()}


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_state_dict_is_torchs_and_resumes_either_way(name):
    o1, s1, o2, s2 = both(name)
    run(o1, s1, o2, s2, 23, name)
    sd1, sd2 = s1.state_dict(), s2.state_dict()
    assert plain(sd1).keys() == plain(sd2).keys()
    for k in sd2:
        if k not in ("_last_lr",):
            assert plain(sd1)[k] == plain(sd2)[k], k
    # a fresh scheduler of each library takes the other's state and carries on
    n1, t1, n2, t2 = both(name)
    for a, b in ((n1, o2), (n2, o1)):
        for ga, gb in zip(a.param_groups, b.param_groups):
            ga.update({k: v for k, v in gb.items() if k != "params"})
    t1.load_state_dict(s2.state_dict())
    t2.load_state_dict(s1.state_dict())
    run(n1, t1, o2, s2, 30, name + " resumed in newch", 23)
    run(o1, s1, n2, t2, 30, name + " resumed in torch", 53)


@pytest.mark.parametrize("mode,threshold_mode", [("min", "rel"), ("min", "abs"), ("max", "rel"),
                                                 ("max", "abs")])
def test_reduce_on_plateau_matches_torch(mode, threshold_mode):
    o1, o2 = two_groups(newch, "SGD"), two_groups(torch, "SGD")
    kw = dict(mode=mode, factor=0.5, patience=2, threshold=0.05, threshold_mode=threshold_mode,
              cooldown=1, min_lr=[0.01, 0.002])
    s1, s2 = NL.ReduceLROnPlateau(o1, **kw), TL.ReduceLROnPlateau(o2, **kw)
    rng = np.random.default_rng(0)
    metric = 10.0
    for i in range(100):
        metric += rng.normal(0, 0.3) - (0.05 if i < 30 else 0.0)
        s1.step(newch.tensor(metric, dtype=newch.float64) if i % 2 else metric)
        s2.step(torch.tensor(metric, dtype=torch.float64))
        assert s1.get_last_lr() == s2.get_last_lr(), i
    sd1, sd2 = s1.state_dict(), s2.state_dict()
    assert sd1 == sd2
    s3 = NL.ReduceLROnPlateau(two_groups(newch, "SGD"))
    s3.load_state_dict(sd2)
    assert s3.state_dict() == sd2


@pytest.mark.parametrize("make", [
    lambda L, o: L.ConstantLR(o, factor=1.5),
    lambda L, o: L.LinearLR(o, start_factor=0.0),
    lambda L, o: L.LinearLR(o, end_factor=2.0),
    lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=0),
    lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=5, T_mult=0),
    lambda L, o: L.OneCycleLR(o, max_lr=1.0),
    lambda L, o: L.OneCycleLR(o, max_lr=1.0, total_steps=10, pct_start=1),
    lambda L, o: L.OneCycleLR(o, max_lr=1.0, total_steps=10, anneal_strategy="exp"),
    lambda L, o: L.OneCycleLR(o, max_lr=[1.0], total_steps=10),
    lambda L, o: L.ReduceLROnPlateau(o, factor=1.0),
    lambda L, o: L.ReduceLROnPlateau(o, mode="best"),
    lambda L, o: L.SequentialLR(o, [L.ExponentialLR(o, 0.9)], milestones=[3]),
    lambda L, o: L.LambdaLR(o, [lambda e: 1.0]),
])
def test_bad_arguments_fail_as_in_torch(make):
    with pytest.raises(ValueError) as theirs:
        make(TL, two_groups(torch, "SGD"))
    with pytest.raises(ValueError) as ours:
        make(NL, two_groups(newch, "SGD"))
    assert str(ours.value) == str(theirs.value)


def test_step_with_epoch_uses_the_closed_form_as_torch():
    for name in ("StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR", "LinearLR",
                 "ConstantLR", "PolynomialLR"):
        o1, s1, o2, s2 = both(name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for epoch in (5, 17, 3, 40, 12):
                s1.step(epoch)
                s2.step(epoch)
                assert_same(s1, s2, o1, o2, f"{name} epoch {epoch}")


def test_warm_restarts_with_fractional_epochs_match_torch():
    o1, s1, o2, s2 = both("CosineAnnealingWarmRestarts")
    for k in range(60):
        e = k * 0.37
        s1.step(e)
        s2.step(e)
        assert_same(s1, s2, o1, o2, f"epoch {e}")
