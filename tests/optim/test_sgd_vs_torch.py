"""SGD against torch.optim.SGD: same start, same gradients, every option, several steps."""
import itertools

import numpy as np
import pytest

import newch
from newch.optim import SGD

torch = pytest.importorskip("torch")

OPTIONS = [o for o in itertools.product((0.0, 0.9), (0.0, 0.3), (0.0, 0.05), (False, True),
                                        (False, True))
           if not (o[3] and (o[0] == 0.0 or o[1] != 0.0))]
SHAPES = [(4, 5), (7,), (), (3, 1, 2)]
TOL = {np.float32: dict(rtol=1e-6, atol=1e-7), np.float64: dict(rtol=1e-13, atol=1e-15)}


def pair(shapes, dtype, seed=0):
    rng = np.random.default_rng(seed)
    start = [rng.standard_normal(s).astype(dtype) for s in shapes]
    with newch.persistent():
        ours = [newch.tensor(a, requires_grad=True) for a in start]
    theirs = [torch.tensor(a, requires_grad=True) for a in start]
    return ours, theirs


def feed(ours, theirs, grads):
    for p, q, g in zip(ours, theirs, grads):
        with newch.persistent():
            p.grad = newch.tensor(g)
        q.grad = torch.tensor(g)


def assert_close(ours, theirs, dtype, msg=""):
    for p, q in zip(ours, theirs):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), err_msg=msg,
                                   **TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("opts", OPTIONS, ids=lambda o: "m{}_d{}_wd{}_n{:d}_max{:d}".format(*o))
def test_sgd_follows_torch_over_several_steps(dtype, opts):
    mom, damp, wd, nest, maxi = opts
    kw = dict(lr=0.05, momentum=mom, dampening=damp, weight_decay=wd, nesterov=nest,
              maximize=maxi)
    ours, theirs = pair(SHAPES, dtype)
    opt, topt = SGD(ours, **kw), torch.optim.SGD(theirs, **kw)
    rng = np.random.default_rng(7)
    for step in range(5):
        feed(ours, theirs, [rng.standard_normal(s).astype(dtype) for s in SHAPES])
        opt.step()
        topt.step()
        assert_close(ours, theirs, dtype, f"step {step}")
    if mom:
        for p, q in zip(ours, theirs):
            np.testing.assert_allclose(opt.state[p]["momentum_buffer"].numpy(),
                                       topt.state[q]["momentum_buffer"].numpy(), **TOL[dtype])


def test_param_groups_and_group_changes_follow_torch():
    ours, theirs = pair([(6,), (2, 3)], np.float32, seed=2)
    groups = lambda ps: [{"params": [ps[0]]},  # noqa: E731
                         {"params": [ps[1]], "lr": 0.01, "momentum": 0.9, "nesterov": True}]
    opt = SGD(groups(ours), lr=0.1, weight_decay=0.01)
    topt = torch.optim.SGD(groups(theirs), lr=0.1, weight_decay=0.01)
    rng = np.random.default_rng(3)
    for step in range(6):
        if step == 3:                          # what a scheduler or a user would do mid-run
            for g in (opt.param_groups, topt.param_groups):
                g[0]["lr"] = 0.02
                g[0]["momentum"] = 0.5
        feed(ours, theirs, [rng.standard_normal(s).astype(np.float32) for s in [(6,), (2, 3)]])
        opt.step()
        topt.step()
        assert_close(ours, theirs, np.float32, f"step {step}")


def test_state_dict_layout_matches_torch():
    ours, theirs = pair([(3,), (2,)], np.float32)
    opt = SGD(ours, lr=0.1, momentum=0.9)
    topt = torch.optim.SGD(theirs, lr=0.1, momentum=0.9)
    feed(ours, theirs, [np.ones(3, np.float32), np.ones(2, np.float32)])
    opt.step()
    topt.step()
    sd, tsd = opt.state_dict(), topt.state_dict()
    assert sd["param_groups"][0]["params"] == tsd["param_groups"][0]["params"] == [0, 1]
    assert set(sd["state"]) == set(tsd["state"]) == {0, 1}
    assert set(sd["state"][0]) == set(tsd["state"][0]) == {"momentum_buffer"}
    for key in ("lr", "momentum", "dampening", "weight_decay", "nesterov", "maximize"):
        assert sd["param_groups"][0][key] == tsd["param_groups"][0][key]


@pytest.mark.parametrize("kwargs", [dict(lr=-1), dict(momentum=-0.5), dict(weight_decay=-1),
                                    dict(nesterov=True), dict(nesterov=True, momentum=0.9,
                                                              dampening=0.5)])
def test_validation_messages_match_torch(kwargs):
    with pytest.raises(ValueError) as theirs:
        torch.optim.SGD([torch.zeros(1, requires_grad=True)], **kwargs)
    with pytest.raises(ValueError) as ours:
        SGD(pair([(1,)], np.float32)[0], **kwargs)
    assert str(ours.value) == str(theirs.value)


def test_without_momentum_no_state_is_kept_as_in_torch():
    ours, theirs = pair([(3,)], np.float32)
    opt, topt = SGD(ours, lr=0.1), torch.optim.SGD(theirs, lr=0.1)
    feed(ours, theirs, [np.ones(3, np.float32)])
    opt.step()
    topt.step()
    assert opt.state_dict()["state"] == topt.state_dict()["state"] == {}
