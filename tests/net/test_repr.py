"""Module reprs follow PyTorch's layout exactly (checked literally and against torch)."""
import pytest

import newch.nn as nn


def test_sequential_repr_literal():
    net = nn.Sequential(nn.Linear(4, 2), nn.ReLU())
    assert repr(net) == ("Sequential(\n  (0): Linear(in_features=4, out_features=2, bias=True)\n"
                         "  (1): ReLU()\n)")


def test_nested_repr_literal():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(2, 2, bias=False), nn.Tanh())
            self.head = nn.Identity()

    assert repr(Net()) == (
        "Net(\n"
        "  (body): Sequential(\n"
        "    (0): Linear(in_features=2, out_features=2, bias=False)\n"
        "    (1): Tanh()\n"
        "  )\n"
        "  (head): Identity()\n"
        ")")
    assert repr(nn.Sequential()) == "Sequential()"
    assert repr(nn.Module()) == "Module()"


def _layers(mod):
    """The same layers built from ``mod`` (newch.nn or torch.nn) with the same arguments."""
    return [
        mod.Linear(4, 2), mod.Linear(3, 1, bias=False), mod.Identity(), mod.ReLU(),
        mod.ReLU(inplace=True), mod.LeakyReLU(), mod.LeakyReLU(0.2, True), mod.ELU(),
        mod.ELU(alpha=0.5, inplace=True), mod.GELU(), mod.GELU("tanh"), mod.SiLU(), mod.SiLU(True),
        mod.Sigmoid(), mod.Tanh(), mod.Softmax(dim=1), mod.Softmax(), mod.LogSoftmax(dim=-1),
        mod.Flatten(), mod.Flatten(0, 2), mod.Unflatten(1, (2, 5)), mod.Unflatten(1, [2, 5]),
        mod.MSELoss(), mod.L1Loss(reduction="sum"), mod.SmoothL1Loss(beta=2.0),
        mod.HuberLoss(delta=0.5),
    ]


def test_layer_reprs_match_torch(torch):
    for ours, theirs in zip(_layers(nn), _layers(torch.nn)):
        assert repr(ours) == repr(theirs)


def _tree(mod):
    class Net(mod.Module):
        def __init__(self):
            super().__init__()
            self.features = mod.Sequential(mod.Flatten(), mod.Linear(6, 4), mod.GELU())
            self.blocks = mod.ModuleList([mod.Linear(4, 4), mod.Linear(4, 4), mod.ReLU(),
                                          mod.Linear(4, 4)])
            self.heads = mod.ModuleDict({"a": mod.Linear(4, 1), "b": mod.Sequential(mod.Tanh())})
            self.empty = mod.ModuleList()
            self.register_module("none", None)
    return Net()


def test_tree_repr_matches_torch(torch):
    assert repr(_tree(nn)) == repr(_tree(torch.nn))


def test_module_list_repr_groups_repeats():
    ml = nn.ModuleList([nn.ReLU(), nn.ReLU(), nn.ReLU(), nn.Tanh()])
    assert repr(ml) == "ModuleList(\n  (0-2): 3 x ReLU()\n  (3): Tanh()\n)"


def test_extra_repr_multiline_goes_inside():
    class Custom(nn.Module):
        def extra_repr(self):
            return "a=1\nb=2"
    assert repr(Custom()) == "Custom(\n  a=1\n  b=2\n)"


@pytest.mark.parametrize("extra", ["", "k=3"])
def test_extra_repr_with_children(extra):
    class Custom(nn.Module):
        def __init__(self):
            super().__init__()
            self.act = nn.ReLU()

        def extra_repr(self):
            return extra
    head = "Custom(\n  " + (extra + "\n  " if extra else "")
    assert repr(Custom()) == head + "(act): ReLU()\n)"
