"""Files cross between newch and PyTorch both ways (needs torch; skipped without it)."""
import collections
import io

import numpy as np
import pytest

import newch

torch = pytest.importorskip("torch")


def to_torch(obj, weights_only=True):
    buf = io.BytesIO()
    newch.save(obj, buf)
    buf.seek(0)
    return torch.load(buf, weights_only=weights_only)


def to_newch(obj, weights_only=True):
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return newch.load(buf, weights_only=weights_only)


def test_newch_state_dict_loads_in_torch_weights_only():
    with newch.persistent():
        base = newch.arange(12, dtype=newch.float32).reshape(3, 4) / 7
    sd = collections.OrderedDict(
        base=base, col=base[:, 2], t=base.t(), f64=newch.tensor([1.5, -2.0], dtype=newch.float64),
        i64=newch.tensor([2 ** 40, -3]), i32=newch.tensor([5], dtype=newch.int32),
        u8=newch.tensor([0, 255], dtype=newch.uint8), b=newch.tensor([True, False]),
        scalar=newch.tensor(0.25), empty=newch.zeros(2, 0, dtype=newch.int64),
        p=newch.nn.Parameter(newch.ones(2)),
        meta={"size": newch.Size([3, 4]), "dtype": newch.int32, "tags": {"x"}, "b": b"\x01"})
    out = to_torch(sd)
    assert isinstance(out, collections.OrderedDict) and list(out) == list(sd)
    for k, v in sd.items():
        if k == "meta":
            continue
        assert str(out[k].dtype) == f"torch.{v.dtype.name}", k
        np.testing.assert_array_equal(out[k].detach().numpy(), v.detach().numpy(), err_msg=k)
    assert out["t"].stride() == (1, 4) and out["col"].storage_offset() == 2
    assert out["col"].untyped_storage().data_ptr() == out["base"].untyped_storage().data_ptr()
    assert isinstance(out["p"], torch.nn.Parameter) and out["p"].requires_grad
    assert out["meta"] == {"size": torch.Size([3, 4]), "dtype": torch.int32, "tags": {"x"},
                           "b": b"\x01"}


def test_torch_state_dict_loads_in_newch():
    g = torch.Generator().manual_seed(0)
    a = torch.randn(5, 6, generator=g, dtype=torch.float64)
    sd = {"a": a, "slice": a[1:4, ::2], "t": a.t(), "ints": torch.randint(-9, 9, (7,), generator=g),
          "expanded": torch.ones(3).expand(4, 3), "param": torch.nn.Parameter(torch.zeros(2))}
    out = to_newch(sd)
    for k, v in sd.items():
        np.testing.assert_array_equal(out[k].detach().numpy(), v.detach().numpy(), err_msg=k)
        assert out[k].is_persistent
    out["a"].numpy()[1, 0] = 42.0
    assert out["slice"][0, 0].item() == 42.0 and out["t"][0, 1].item() == 42.0


def newch_model():
    return newch.nn.Sequential(newch.nn.Flatten(), newch.nn.Linear(6, 5), newch.nn.Tanh(),
                               newch.nn.Linear(5, 4), newch.nn.GELU(), newch.nn.Linear(4, 2),
                               newch.nn.LogSoftmax(dim=1))


def test_state_dict_crosses_to_the_same_torch_model():
    model = newch_model()
    twin = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(6, 5), torch.nn.Tanh(),
                               torch.nn.Linear(5, 4), torch.nn.GELU(), torch.nn.Linear(4, 2),
                               torch.nn.LogSoftmax(dim=1))
    twin.load_state_dict(to_torch(model.state_dict()))
    x = np.random.default_rng(0).standard_normal((3, 2, 3)).astype(np.float32)
    want = model(newch.tensor(x)).detach().numpy()
    np.testing.assert_allclose(twin(torch.from_numpy(x)).detach().numpy(), want, rtol=1e-5,
                               atol=1e-6)
    back = newch_model()
    back.load_state_dict(to_newch(twin.state_dict()))
    np.testing.assert_allclose(back(newch.tensor(x)).detach().numpy(), want, rtol=1e-6)


def test_whole_module_crosses_both_ways():
    model = newch_model()
    x = np.random.default_rng(1).standard_normal((4, 6)).astype(np.float32)
    want = model(newch.tensor(x)).detach().numpy()
    in_torch = to_torch(model, weights_only=False)
    assert type(in_torch) is torch.nn.Sequential and type(in_torch[1]) is torch.nn.Linear
    np.testing.assert_allclose(in_torch(torch.from_numpy(x)).detach().numpy(), want, rtol=1e-5,
                               atol=1e-6)
    in_torch.train(False)
    back = to_newch(in_torch, weights_only=False)
    assert type(back) is newch.nn.Sequential and not back.training
    np.testing.assert_allclose(back(newch.tensor(x)).detach().numpy(), want, rtol=1e-6)
    assert set(back[1].__dict__) == set(model[1].__dict__)


class Scaled(torch.nn.Module):
    """A torch module keeping functions as attributes (pickled by name)."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(3, 3)
        self.act = torch.nn.functional.relu


def test_whole_module_with_function_attributes():
    m = Scaled()
    back = to_newch(m, weights_only=False)
    assert back.act is newch.nn.functional.relu     # torch.nn.functional.relu, by name
    assert isinstance(back.fc, newch.nn.Linear)


def test_torch_files_with_dtypes_newch_lacks():
    with pytest.warns(UserWarning, match=r"1 tensor\(s\).*'w'") as rec:
        out = to_newch({"w": torch.tensor([0.5, 1.25], dtype=torch.float16), "i": torch.ones(2)})
    assert len(rec) == 1 and out["w"].dtype is newch.float32 and out["w"].tolist() == [0.5, 1.25]
    with pytest.raises(TypeError, match=r"'layer.q' is int8"):
        to_newch({"layer.q": torch.ones(2, dtype=torch.int8)})
    with pytest.raises(TypeError, match=r"'c' is complex64"):
        to_newch({"c": torch.ones(2, dtype=torch.complex64)})
    with pytest.raises(TypeError, match=r"'u' is uint16"):
        to_newch({"u": torch.ones(2, dtype=torch.uint16)})      # torch's _rebuild_tensor_v3


# -- optimizers -----------------------------------------------------------------
# options beyond the defaults, so the state carries every buffer (used when both libraries have
# the class; the test covers every optimizer class newch.optim and torch.optim share)
OPTIONS = {
    "SGD": dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01),
    "Adam": dict(lr=0.05, amsgrad=True, weight_decay=0.01),
    "AdamW": dict(lr=0.05, amsgrad=True),
    "RMSprop": dict(lr=0.01, momentum=0.5, centered=True),
    "Adagrad": dict(lr=0.1, lr_decay=0.01),
    "Adadelta": dict(lr=1.0),
    "Adamax": dict(lr=0.05),
    "NAdam": dict(lr=0.05),
    "RAdam": dict(lr=0.05),
}
SHARED = sorted(n for n in dir(newch.optim) if n[0].isupper() and n != "Optimizer"
                and isinstance(getattr(newch.optim, n), type)
                and issubclass(getattr(newch.optim, n), newch.optim.Optimizer)
                and hasattr(torch.optim, n)
                and n != "LBFGS")     # NOTE: steps only with a closure; tests/optim/test_lbfgs.py


def _loss(lib, p, w):
    coef = lib.tensor([0.5, 1.0, 2.0, 3.0], dtype=lib.float64)
    return 0.5 * (coef * p * p).sum() + 0.25 * (w * w * w * w).sum()


class Run:
    """One optimizer over two float64 parameters, in newch or in torch."""

    def __init__(self, lib, name, values):
        self.lib = lib
        persist = newch.persistent() if lib is newch else torch.no_grad()
        with persist:
            self.params = [lib.nn.Parameter(lib.tensor(v, dtype=lib.float64)) for v in values]
        self.opt = getattr(lib.optim, name)(self.params, **OPTIONS.get(name, {}))

    def step(self):
        self.opt.zero_grad()
        _loss(self.lib, *self.params).backward()
        self.opt.step()
        if self.lib is newch:
            newch.step_end()

    def values(self):
        return [p.detach().numpy().copy() for p in self.params]


START = [[0.3, -0.7, 1.1, 0.2], [[0.5, -0.25, 0.8], [-0.6, 0.1, 0.9]]]


def _same(a, b):
    for x, y in zip(a.values(), b.values()):
        np.testing.assert_allclose(x, y, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", SHARED)
def test_optimizer_state_from_torch_resumes_in_newch(name):
    theirs = Run(torch, name, START)
    for _ in range(3):
        theirs.step()
    ours = Run(newch, name, [v.tolist() for v in theirs.values()])
    ours.opt.load_state_dict(to_newch(theirs.opt.state_dict()))
    # NOTE: the reference resumes from a loaded state too: loading casts some state to the
    # parameters' dtype (NAdam's mu_product), which changes the last bits of what follows.
    resumed = Run(torch, name, theirs.values())
    resumed.opt.load_state_dict(theirs.opt.state_dict())
    theirs = resumed
    for _ in range(4):
        theirs.step()
        ours.step()
        _same(ours, theirs)
    mine = to_torch(ours.opt.state_dict())["state"][0]
    for key, value in theirs.opt.state_dict()["state"][0].items():   # e.g. Adam's float32 step
        if isinstance(value, torch.Tensor):
            assert mine[key].dtype == value.dtype and mine[key].shape == value.shape, key


@pytest.mark.parametrize("name", SHARED)
def test_optimizer_state_from_newch_resumes_in_torch(name):
    ours = Run(newch, name, START)
    for _ in range(3):
        ours.step()
    theirs = Run(torch, name, ours.values())
    saved = to_torch(ours.opt.state_dict())
    theirs.opt.load_state_dict(saved)
    resumed = Run(newch, name, [v.tolist() for v in ours.values()])   # both sides resume from a load
    resumed.opt.load_state_dict(ours.opt.state_dict())
    ours = resumed
    assert set(saved["state"]) == set(theirs.opt.state_dict()["state"]) == {0, 1}
    for _ in range(4):
        theirs.step()
        ours.step()
        _same(ours, theirs)
    mine = to_torch(ours.opt.state_dict())["state"][0]
    assert set(mine) == set(theirs.opt.state_dict()["state"][0])   # same state entries
    for key, value in theirs.opt.state_dict()["state"][0].items():
        if isinstance(value, torch.Tensor):
            assert mine[key].dtype == value.dtype and mine[key].shape == value.shape, key


def test_legacy_format_files_load():
    a = torch.arange(20, dtype=torch.float64).reshape(4, 5)
    sd = {"a": a, "view": a[1:, 2], "i": torch.tensor([3, -4]), "p": torch.nn.Parameter(a[0])}
    buf = io.BytesIO()
    torch.save(sd, buf, _use_new_zipfile_serialization=False)
    buf.seek(0)
    out = newch.load(buf)
    for k, v in sd.items():
        np.testing.assert_array_equal(out[k].detach().numpy(), v.detach().numpy(), err_msg=k)
    out["a"].numpy()[2, 2] = -1.0
    assert out["view"][1].item() == -1.0
    model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Sigmoid())
    buf = io.BytesIO()
    torch.save(model, buf, _use_new_zipfile_serialization=False)
    buf.seek(0)
    back = newch.load(buf, weights_only=False)
    x = np.ones((2, 3), np.float32)
    np.testing.assert_allclose(back(newch.tensor(x)).detach().numpy(),
                               model(torch.from_numpy(x)).detach().numpy(), rtol=1e-6)


def test_scheduler_state_dicts_cross_with_weights_only():
    for make in (lambda lib, o: lib.optim.lr_scheduler.MultiStepLR(o, [1, 3], gamma=0.5),
                 lambda lib, o: lib.optim.lr_scheduler.StepLR(o, 2)):
        opt = torch.optim.SGD(torch.nn.Linear(2, 2).parameters(), lr=0.1)
        sched = make(torch, opt)
        opt.step()
        sched.step()
        buf = io.BytesIO()
        torch.save(sched.state_dict(), buf)
        buf.seek(0)
        mine = newch.load(buf)            # weights_only=True
        ours = make(newch, newch.optim.SGD(newch.nn.Linear(2, 2).parameters(), lr=0.1))
        ours.load_state_dict(mine)
        assert ours.get_last_lr() == sched.get_last_lr()
        buf = io.BytesIO()
        newch.save(ours.state_dict(), buf)
        buf.seek(0)
        assert torch.load(buf, weights_only=True) == sched.state_dict()
