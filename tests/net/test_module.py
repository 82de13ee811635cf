"""Module: registration by attribute, tree walking, modes, grads, dtype conversion, hooks."""
import pytest

import newch
import newch.nn as nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.scale = nn.Parameter(newch.ones(2))
        self.register_buffer("steps", newch.zeros(1))
        self.act = nn.Tanh()

    def forward(self, x):
        return self.act(self.fc(x)) * self.scale


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = Block()
        self.head = nn.Linear(2, 1, bias=False)

    def forward(self, x):
        return self.head(self.first(x))


def test_attribute_assignment_registers_parameters_modules_buffers():
    b = Block()
    assert list(b._parameters) == ["scale"]
    assert list(b._modules) == ["fc", "act"]
    assert list(b._buffers) == ["steps"]
    assert "scale" not in b.__dict__ and "fc" not in b.__dict__
    assert b.scale is b._parameters["scale"]
    assert b.steps.is_persistent


def test_named_parameters_order_and_prefixes():
    net = Net()
    assert [n for n, _ in net.named_parameters()] == [
        "first.scale", "first.fc.weight", "first.fc.bias", "head.weight"]
    assert [n for n, _ in net.named_parameters(prefix="m")] == [
        "m.first.scale", "m.first.fc.weight", "m.first.fc.bias", "m.head.weight"]
    assert [n for n, _ in net.first.named_parameters(recurse=False)] == ["scale"]
    assert len(list(net.parameters())) == 4


def test_named_modules_children_buffers():
    net = Net()
    assert [n for n, _ in net.named_modules()] == ["", "first", "first.fc", "first.act", "head"]
    assert [n for n, _ in net.named_children()] == ["first", "head"]
    assert list(net.children()) == [net.first, net.head]
    assert list(net.modules())[0] is net
    assert [n for n, _ in net.named_buffers()] == ["first.steps"]
    assert list(net.buffers())[0] is net.first.steps


def test_shared_parameters_and_modules_listed_once():
    lin = nn.Linear(2, 2)
    seq = nn.Sequential(lin, nn.ReLU(), lin)
    assert len(list(seq.parameters())) == 2
    assert [n for n, _ in seq.named_modules()] == ["", "0", "1"]
    assert len(list(seq.named_modules(remove_duplicate=False))) == 4


def test_reassigning_and_deleting():
    b = Block()
    b.scale = None                                    # a parameter slot can be emptied
    assert b.scale is None and "scale" in b._parameters
    with pytest.raises(TypeError, match="parameter 'scale'"):
        b.scale = newch.ones(2)                       # a plain tensor is not a Parameter
    b.fc = nn.Linear(3, 4)
    assert b.fc.out_features == 4
    with pytest.raises(TypeError, match="child module 'fc'"):
        b.fc = 3
    b.steps = newch.ones(1)                           # buffers accept tensors, kept persistent
    assert b.steps.is_persistent and b.steps.tolist() == [1.0]
    del b.fc
    assert "fc" not in b._modules
    with pytest.raises(AttributeError, match="'Block' object has no attribute 'fc'"):
        b.fc
    b.plain = 3
    assert b.plain == 3 and "plain" in b.__dict__
    del b.plain
    assert not hasattr(b, "plain")


def test_parameter_replaces_plain_attribute():
    m = nn.Module()
    m.w = 1
    m.w = nn.Parameter(newch.ones(1))
    assert "w" not in m.__dict__ and "w" in m._parameters


def test_registration_errors():
    m = nn.Module()
    with pytest.raises(KeyError, match="attribute 'training' already exists"):
        m.register_buffer("training", newch.zeros(1))
    with pytest.raises(KeyError, match=r'contain "\."'):
        m.register_parameter("a.b", nn.Parameter(newch.zeros(1)))
    with pytest.raises(TypeError, match="buffer 'x'"):
        m.register_buffer("x", [1.0])
    with pytest.raises(TypeError, match="not a Module subclass"):
        m.add_module("x", 5)

    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(newch.zeros(1))
    with pytest.raises(AttributeError, match="before Module.__init__"):
        Early()


def test_forward_missing_and_call():
    with pytest.raises(NotImplementedError, match=r"Module \[Module\] is missing"):
        nn.Module()(newch.zeros(1))
    net = Net()
    assert net(newch.randn(5, 3)).shape == (5, 1)


def test_train_eval_flags_propagate():
    net = Net()
    assert all(m.training for m in net.modules())
    assert net.eval() is net
    assert not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())
    with pytest.raises(ValueError, match="bool"):
        net.train("yes")


def test_zero_grad_to_none_and_to_zero():
    net = Net()
    net(newch.randn(4, 3)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad(set_to_none=False)
    assert all(p.grad is not None and p.grad.abs().sum().item() == 0 for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())


def test_requires_grad_and_apply():
    net = Net()
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())
    seen = []
    assert net.apply(lambda m: seen.append(type(m).__name__)) is net
    assert seen == ["Linear", "Tanh", "Block", "Linear", "Net"]


def test_to_double_keeps_parameter_identity():
    net = Net()
    w = net.first.fc.weight
    before = w.tolist()
    net(newch.randn(2, 3)).sum().backward()
    assert net.double() is net
    assert net.first.fc.weight is w and w.dtype is newch.float64 and w.is_persistent
    assert w.grad.dtype is newch.float64
    assert net.first.steps.dtype is newch.float64
    assert w.tolist() == before                     # float32 -> float64 is exact
    assert net(newch.randn(2, 3, dtype=newch.float64)).dtype is newch.float64
    net.float()
    assert w.dtype is newch.float32
    assert net.to("cpu") is net and net.cpu() is net
    with pytest.raises(ValueError, match="cuda"):
        net.to("cuda")
    with pytest.raises(TypeError, match="floating point"):
        net.to(newch.int64)


def test_dir_lists_registered_names():
    b = Block()
    names = dir(b)
    for n in ("fc", "scale", "steps", "act", "forward", "training"):
        assert n in names


def test_forward_hooks():
    lin = nn.Linear(2, 2)
    calls = []
    h1 = lin.register_forward_pre_hook(lambda m, args: calls.append("pre"))
    h2 = lin.register_forward_hook(lambda m, args, out: out * 0)
    out = lin(newch.ones(1, 2))
    assert calls == ["pre"] and out.abs().sum().item() == 0
    h1.remove()
    h2.remove()
    assert lin(newch.ones(1, 2)).abs().sum().item() > 0


def test_get_submodule_parameter_buffer():
    net = Net()
    assert net.get_submodule("first.fc") is net.first.fc
    assert net.get_parameter("first.fc.bias") is net.first.fc.bias
    assert net.get_buffer("first.steps") is net.first.steps
    with pytest.raises(AttributeError, match="nope"):
        net.get_submodule("first.nope")
