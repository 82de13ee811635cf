"""Sequential, ModuleList and ModuleDict behave like PyTorch's."""
from collections import OrderedDict

import numpy as np
import pytest

import newch
import newch.nn as nn


def test_sequential_forward_chains():
    a, b = nn.Linear(3, 4), nn.Linear(4, 2)
    seq = nn.Sequential(a, nn.ReLU(), b)
    x = newch.randn(5, 3)
    np.testing.assert_array_equal(seq(x).detach().numpy(), b(a(x).relu()).detach().numpy())


def test_sequential_indexing_len_iteration():
    mods = [nn.Linear(2, 2), nn.ReLU(), nn.Tanh()]
    seq = nn.Sequential(*mods)
    assert len(seq) == 3 and list(seq) == mods
    assert seq[0] is mods[0] and seq[-1] is mods[2]
    sub = seq[1:]
    assert isinstance(sub, nn.Sequential) and list(sub) == mods[1:]
    assert list(sub._modules) == ["1", "2"]          # slices keep the names, as in PyTorch
    with pytest.raises(IndexError, match="out of range"):
        seq[3]


def test_sequential_append_insert_delete_setitem():
    seq = nn.Sequential(nn.ReLU())
    assert seq.append(nn.Tanh()) is seq
    assert [type(m).__name__ for m in seq] == ["ReLU", "Tanh"]
    seq.insert(0, nn.Identity())
    assert [type(m).__name__ for m in seq] == ["Identity", "ReLU", "Tanh"]
    del seq[1]
    assert list(seq._modules) == ["0", "1"] and isinstance(seq[1], nn.Tanh)
    seq[0] = nn.Sigmoid()
    assert isinstance(seq[0], nn.Sigmoid)
    seq.extend([nn.ReLU()])
    assert isinstance(seq.pop(), nn.ReLU) and len(seq) == 2
    both = seq + nn.Sequential(nn.ReLU())
    assert len(both) == 3
    with pytest.raises(TypeError, match="Module"):
        seq.append(3)


def test_sequential_from_ordered_dict():
    seq = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 3)), ("act", nn.ReLU())]))
    assert isinstance(seq.fc, nn.Linear) and seq[1] is seq.act
    assert [n for n, _ in seq.named_parameters()] == ["fc.weight", "fc.bias"]


def test_module_list():
    ml = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    assert len(ml) == 3 and len(list(ml.parameters())) == 6
    ml.append(nn.ReLU())
    ml += [nn.Tanh()]
    ml.insert(1, nn.Identity())
    assert [type(m).__name__ for m in ml] == ["Linear", "Identity", "Linear", "Linear", "ReLU",
                                              "Tanh"]
    assert isinstance(ml[1:3], nn.ModuleList) and len(ml[1:3]) == 2
    del ml[0]
    assert list(ml._modules) == [str(i) for i in range(5)]
    with pytest.raises(NotImplementedError):
        ml(newch.zeros(1))


def test_module_dict():
    md = nn.ModuleDict({"a": nn.Linear(2, 1), "b": nn.ReLU()})
    assert list(md) == ["a", "b"] and len(md) == 2 and "a" in md
    md["c"] = nn.Tanh()
    assert list(md.keys()) == ["a", "b", "c"]
    assert isinstance(md.pop("b"), nn.ReLU) and "b" not in md
    md.update([("d", nn.Identity())])
    assert [k for k, _ in md.items()] == ["a", "c", "d"]
    assert [n for n, _ in md.named_parameters()] == ["a.weight", "a.bias"]
    md.clear()
    assert len(md) == 0


def test_plain_list_hides_parameters_but_module_list_does_not():
    class Hidden(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = [nn.Linear(2, 2)]

    class Seen(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([nn.Linear(2, 2)])
    assert len(list(Hidden().parameters())) == 0
    assert len(list(Seen().parameters())) == 2
