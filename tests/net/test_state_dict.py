"""state_dict / load_state_dict: keys, sharing, round trip, strict errors, assign."""
import numpy as np
import pytest

import newch
import newch.nn as nn


class WithBuffers(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 2)
        self.register_buffer("running", newch.zeros(2))
        self.register_buffer("scratch", newch.zeros(2), persistent=False)

    def forward(self, x):
        return self.lin(x) + self.running


def model():
    return nn.Sequential(WithBuffers(), nn.ReLU(), nn.Linear(2, 1))


def test_keys_in_torch_order():
    sd = model().state_dict()
    assert list(sd) == ["0.running", "0.lin.weight", "0.lin.bias", "2.weight", "2.bias"]
    assert list(nn.Linear(2, 2, bias=False).state_dict()) == ["weight"]
    assert list(model().state_dict(prefix="net.")) == [
        "net.0.running", "net.0.lin.weight", "net.0.lin.bias", "net.2.weight", "net.2.bias"]


def test_values_are_detached_views_of_the_parameters():
    m = nn.Linear(2, 2)
    sd = m.state_dict()
    w = sd["weight"]
    assert type(w) is newch.Tensor and not w.requires_grad and w.is_persistent
    with newch.no_grad():
        m.weight.fill_(3.0)
    assert w.tolist() == [[3.0, 3.0], [3.0, 3.0]]
    assert m.state_dict(keep_vars=True)["weight"] is m.weight


def test_round_trip_copies_values_and_keeps_identity():
    a, b = model(), model()
    with newch.no_grad():
        a[0].running.fill_(2.5)
    w = b[2].weight
    res = b.load_state_dict(a.state_dict())
    assert res.missing_keys == [] and res.unexpected_keys == []
    assert repr(res) == "<All keys matched successfully>"
    assert b[2].weight is w
    for (ka, va), (kb, vb) in zip(a.state_dict().items(), b.state_dict().items()):
        assert ka == kb
        np.testing.assert_array_equal(va.numpy(), vb.numpy())
    x = newch.randn(4, 3)
    np.testing.assert_array_equal(a(x).detach().numpy(), b(x).detach().numpy())


def test_load_from_temporaries_and_numpy_then_step_end():
    m = nn.Linear(2, 1)
    sd = {"weight": newch.tensor([[1.0, 2.0]]), "bias": np.array([0.5], dtype=np.float32)}
    m.load_state_dict(sd)
    newch.step_end()
    assert m.weight.tolist() == [[1.0, 2.0]] and m.bias.tolist() == [0.5]


def test_strict_errors_list_missing_and_unexpected():
    m = nn.Linear(2, 1)
    sd = {"weight": newch.zeros(1, 2), "extra": newch.zeros(1)}
    with pytest.raises(RuntimeError) as e:
        m.load_state_dict(sd)
    msg = str(e.value)
    assert "Error(s) in loading state_dict for Linear" in msg
    assert 'Missing key(s) in state_dict: "bias".' in msg
    assert 'Unexpected key(s) in state_dict: "extra".' in msg


def test_non_strict_returns_keys():
    m = nn.Linear(2, 1)
    res = m.load_state_dict({"weight": newch.zeros(1, 2), "extra": newch.zeros(1)}, strict=False)
    assert res.missing_keys == ["bias"] and res.unexpected_keys == ["extra"]
    assert m.weight.tolist() == [[0.0, 0.0]]
    assert "missing_keys=['bias']" in repr(res)


def test_size_mismatch_is_an_error_even_when_not_strict():
    m = nn.Linear(2, 1)
    with pytest.raises(RuntimeError, match=r"size mismatch for weight: copying a param with "
                                            r"shape newch.Size\(\[3, 2\]\)"):
        m.load_state_dict({"weight": newch.zeros(3, 2), "bias": newch.zeros(1)}, strict=False)


def test_non_persistent_buffer_not_saved_or_required():
    m = WithBuffers()
    assert "scratch" not in m.state_dict()
    m.load_state_dict(m.state_dict())


def test_assign_replaces_tensors_with_persistent_ones():
    m = nn.Linear(2, 1)
    old = m.weight
    m.load_state_dict({"weight": newch.ones(1, 2), "bias": newch.zeros(1)}, assign=True)
    assert m.weight is not old and isinstance(m.weight, nn.Parameter)
    assert m.weight.is_persistent and m.weight.requires_grad
    newch.step_end()
    assert m.weight.tolist() == [[1.0, 1.0]]


def test_loading_converts_dtype():
    m = nn.Linear(2, 1)
    m.load_state_dict({"weight": newch.tensor([[1.0, 2.0]], dtype=newch.float64),
                       "bias": newch.tensor([3.0], dtype=newch.float64)})
    assert m.weight.dtype is newch.float32 and m.weight.tolist() == [[1.0, 2.0]]


def test_state_dict_loads_into_torch_and_back(torch):
    m = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    tm.load_state_dict({k: torch.tensor(v.numpy()) for k, v in m.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    np.testing.assert_allclose(m(newch.tensor(x)).detach().numpy(),
                               tm(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)
    back = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    back.load_state_dict({k: newch.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    np.testing.assert_array_equal(back[0].weight.detach().numpy(), m[0].weight.detach().numpy())
