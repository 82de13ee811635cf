"""Every optimizer against torch.optim: 50-step float64 trajectories, state_dict layout, resume."""
import itertools

import numpy as np
import pytest

import newch
import newch.optim as O

torch = pytest.importorskip("torch")

SHAPES = [(3, 4), (5,)]
RNG = np.random.default_rng(11)
A = [RNG.standard_normal((int(np.prod(s)), int(np.prod(s)))) / 3 for s in SHAPES]
B = [RNG.standard_normal(int(np.prod(s))) for s in SHAPES]
START = [RNG.standard_normal(s) for s in SHAPES]


def grads_of(params):
    """The gradient of a fixed smooth non-quadratic problem at ``params`` (numpy, float64)."""
    out = []
    for p, a, b in zip(params, A, B):
        x = p.reshape(-1)
        out.append((a.T @ (a @ x - b) + 0.3 * np.sin(3 * x)).reshape(p.shape))
    return out


def product(**axes):
    keys = list(axes)
    return [dict(zip(keys, vals)) for vals in itertools.product(*axes.values())]


CASES = [
    ("Adam", product(lr=[0.01], amsgrad=[False, True], weight_decay=[0, 0.1],
                     maximize=[False, True], decoupled_weight_decay=[False, True])),
    ("AdamW", product(lr=[0.01], amsgrad=[False, True], weight_decay=[0, 0.1],
                      maximize=[False, True], betas=[(0.8, 0.99)])),
    ("Adamax", product(lr=[0.01], weight_decay=[0, 0.1], maximize=[False, True])),
    ("NAdam", product(lr=[0.01], weight_decay=[0, 0.1], decoupled_weight_decay=[False, True],
                      maximize=[False, True], momentum_decay=[4e-3, 0.02])),
    ("RAdam", product(lr=[0.01], weight_decay=[0, 0.1], decoupled_weight_decay=[False, True],
                      maximize=[False, True])),
    ("RMSprop", product(lr=[0.005], centered=[False, True], momentum=[0, 0.9],
                        weight_decay=[0, 0.1], maximize=[False, True])),
    ("Adagrad", product(lr=[0.05], lr_decay=[0, 0.01], initial_accumulator_value=[0, 0.1],
                        weight_decay=[0, 0.1], maximize=[False, True])),
    ("Adadelta", product(lr=[0.5], rho=[0.9, 0.5], weight_decay=[0, 0.1],
                         maximize=[False, True])),
    ("SGD", product(lr=[0.01], momentum=[0, 0.9], nesterov=[False, True], weight_decay=[0, 0.1],
                    maximize=[False, True])),
]
FLAT = [(name, kw) for name, kws in CASES for kw in kws
        if not (kw.get("nesterov") and not kw.get("momentum"))]


def make(name, kw, dtype=np.float64):
    with newch.persistent():
        ours = [newch.tensor(s.astype(dtype), requires_grad=True) for s in START]
    theirs = [torch.tensor(s.astype(dtype), requires_grad=True) for s in START]
    return ours, getattr(O, name)(ours, **kw), theirs, getattr(torch.optim, name)(theirs, **kw)


def feed(ours, theirs):
    for p, g in zip(ours, grads_of([p.detach().numpy() for p in ours])):
        with newch.persistent():
            p.grad = newch.tensor(g.astype(p.detach().numpy().dtype))
    for q, g in zip(theirs, grads_of([q.detach().numpy() for q in theirs])):
        q.grad = torch.tensor(g.astype(q.detach().numpy().dtype))


def rel_err(ours, theirs):
    a = np.concatenate([p.detach().numpy().ravel() for p in ours])
    b = np.concatenate([q.detach().numpy().ravel() for q in theirs])
    return np.max(np.abs(a - b)) / np.max(np.abs(b))


def run(ours, opt, theirs, topt, steps, tol, label):
    for step in range(steps):
        feed(ours, theirs)
        opt.step()
        topt.step()
        err = rel_err(ours, theirs)
        assert err <= tol, f"{label}: step {step}: relative error {err:.3g}"


@pytest.mark.parametrize("name,kw", FLAT, ids=[f"{n}-{i}" for i, (n, _) in enumerate(FLAT)])
def test_trajectory_matches_torch_over_50_float64_steps(name, kw):
    ours, opt, theirs, topt = make(name, kw)
    run(ours, opt, theirs, topt, 50, 1e-10, f"{name}{kw}")
    moved = np.max(np.abs(np.concatenate([p.detach().numpy().ravel() for p in ours])
                          - np.concatenate([s.ravel() for s in START])))
    assert moved > 1e-3, "the problem must actually move the parameters"


@pytest.mark.parametrize("name", [c[0] for c in CASES])
def test_float32_trajectory_stays_close_to_torch(name):
    kw = dict(CASES[[c[0] for c in CASES].index(name)][1][-1])
    ours, opt, theirs, topt = make(name, kw, np.float32)
    run(ours, opt, theirs, topt, 20, 2e-5, name)


def to_newch(sd):
    """A torch optimizer state_dict with its tensors turned into newch tensors (as a load does)."""
    with newch.persistent():
        state = {k: {n: newch.tensor(v.numpy()) if torch.is_tensor(v) else v
                     for n, v in s.items()} for k, s in sd["state"].items()}
    return {"state": state, "param_groups": sd["param_groups"]}


def to_torch(sd):
    state = {k: {n: torch.tensor(v.numpy()) if isinstance(v, newch.Tensor) else v
                 for n, v in s.items()} for k, s in sd["state"].items()}
    return {"state": state, "param_groups": sd["param_groups"]}


@pytest.mark.parametrize("name,kw", [(n, kws[-1]) for n, kws in CASES])
def test_state_dict_layout_is_torchs(name, kw):
    ours, opt, theirs, topt = make(name, kw)
    run(ours, opt, theirs, topt, 2, 1e-12, name)
    sd, tsd = opt.state_dict(), topt.state_dict()
    assert sd["param_groups"] == tsd["param_groups"]
    assert [list(g) for g in sd["param_groups"]] == [list(g) for g in tsd["param_groups"]]
    assert list(sd["state"]) == list(tsd["state"])
    for k in tsd["state"]:
        assert list(sd["state"][k]) == list(tsd["state"][k])
        for n, tv in tsd["state"][k].items():
            v = sd["state"][k][n]
            assert str(v.dtype).split(".")[-1] == str(tv.dtype).split(".")[-1], (k, n)
            assert tuple(v.shape) == tuple(tv.shape), (k, n)
            np.testing.assert_allclose(v.numpy(), tv.numpy(), rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("name,kw", [(n, kws[-1]) for n, kws in CASES])
def test_training_resumes_across_libraries(name, kw):
    ours, opt, theirs, topt = make(name, kw)
    run(ours, opt, theirs, topt, 5, 1e-10, name)
    # swap: each library continues from the other's state_dict
    ours2, opt2, theirs2, topt2 = make(name, kw)
    with newch.no_grad():
        for p, q in zip(ours2, theirs):
            p.copy_(newch.tensor(q.detach().numpy()))
    with torch.no_grad():
        for q, p in zip(theirs2, ours):
            q.copy_(torch.tensor(p.detach().numpy()))
    opt2.load_state_dict(to_newch(topt.state_dict()))
    topt2.load_state_dict(to_torch(opt.state_dict()))
    for o in (opt2, topt2):
        for k, s in o.state_dict()["state"].items():
            if "step" in s:
                assert str(s["step"].dtype).endswith("float32")
    run(ours2, opt2, theirs, topt, 10, 1e-10, name + " resumed in newch")
    run(ours, opt, theirs2, topt2, 10, 1e-10, name + " resumed in torch")


@pytest.mark.parametrize("name,kw", [
    ("Adam", dict(lr=-1)), ("Adam", dict(eps=-1e-3)), ("Adam", dict(betas=(1.0, 0.9))),
    ("Adam", dict(betas=(0.9, -0.1))), ("AdamW", dict(weight_decay=-1)),
    ("Adamax", dict(betas=(0.9, 1.5))), ("NAdam", dict(momentum_decay=-1)),
    ("RAdam", dict(lr=-0.5)), ("RMSprop", dict(alpha=-1)), ("RMSprop", dict(momentum=-1)),
    ("Adagrad", dict(lr_decay=-1)), ("Adagrad", dict(initial_accumulator_value=-1)),
    ("Adadelta", dict(rho=1.5)), ("Adadelta", dict(eps=-1)),
])
def test_validation_messages_match_torch(name, kw):
    with pytest.raises(ValueError) as theirs:
        getattr(torch.optim, name)([torch.zeros(1, requires_grad=True)], **kw)
    with newch.persistent():
        p = newch.zeros(1, requires_grad=True)
    with pytest.raises(ValueError) as ours:
        getattr(O, name)([p], **kw)
    assert str(ours.value) == str(theirs.value)


def test_adagrad_state_exists_before_the_first_step_as_in_torch():
    ours, opt, theirs, topt = make("Adagrad", dict(initial_accumulator_value=0.5))
    sd, tsd = opt.state_dict(), topt.state_dict()
    assert list(sd["state"]) == list(tsd["state"]) == [0, 1]
    np.testing.assert_array_equal(sd["state"][0]["sum"].numpy(), tsd["state"][0]["sum"].numpy())


def _signature(cls):
    import inspect
    params = inspect.signature(cls.__init__).parameters.values()
    return [(p.name, p.kind, p.default) for p in params]


@pytest.mark.parametrize("name", [c[0] for c in CASES])
def test_constructor_signature_is_torchs(name):
    assert _signature(getattr(O, name)) == _signature(getattr(torch.optim, name))


@pytest.mark.parametrize("name", ["StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR",
                                  "CosineAnnealingWarmRestarts", "LambdaLR", "MultiplicativeLR",
                                  "LinearLR", "ConstantLR", "PolynomialLR", "OneCycleLR",
                                  "ReduceLROnPlateau", "SequentialLR", "ChainedScheduler"])
def test_scheduler_signature_is_torchs(name):
    from newch.optim import lr_scheduler as NL
    ours = _signature(getattr(NL, name))
    theirs = _signature(getattr(torch.optim.lr_scheduler, name))
    assert [(n, k) for n, k, _ in ours] == [(n, k) for n, k, _ in theirs]
    assert [d for _, _, d in ours] == [d for _, _, d in theirs]


@pytest.mark.parametrize("name,first,second", [
    ("Adam", dict(amsgrad=True), dict(lr=0.03, betas=(0.5, 0.9), weight_decay=0.2)),
    ("NAdam", dict(), dict(decoupled_weight_decay=True, weight_decay=0.1, momentum_decay=0.01)),
    ("RMSprop", dict(centered=True), dict(momentum=0.5, maximize=True)),
    ("Adagrad", dict(lr_decay=0.1), dict(initial_accumulator_value=1.0, lr=0.2)),
])
def test_groups_with_their_own_options_match_torch(name, first, second):
    with newch.persistent():
        ours = [newch.tensor(s, requires_grad=True) for s in START]
    theirs = [torch.tensor(s, requires_grad=True) for s in START]
    opt = getattr(O, name)([{"params": [ours[0]], **first}, {"params": [ours[1]], **second}],
                           lr=0.01)
    topt = getattr(torch.optim, name)([{"params": [theirs[0]], **first},
                                       {"params": [theirs[1]], **second}], lr=0.01)
    run(ours, opt, theirs, topt, 50, 1e-10, name)
